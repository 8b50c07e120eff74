/* pg_procmem--@VERSION@.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION pg_procmem" to load this file. \quit

-- Assembled by "make scripts" from the files in views/ (edit those): one
-- file a concern, in the order the objects need each other.
--
-- Every reference below is schema-qualified: objects are resolved at
-- CREATE EXTENSION time, and the schema being installed into may hold
-- look-alike objects. Nothing is readable by PUBLIC: process lists and
-- queries are sensitive; pg_read_all_stats (so pg_monitor) may read.
