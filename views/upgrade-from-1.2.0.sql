/* pg_procmem--1.2.0--@VERSION@.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION pg_procmem UPDATE TO '@VERSION@'" to load this file. \quit
