/* pg_procmem--1.2.0--1.3.0.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION pg_procmem UPDATE TO '1.3.0'" to load this file. \quit
