/* pg_procmem--1.1.0--@VERSION@.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION pg_procmem UPDATE TO '@VERSION@'" to load this file. \quit

-- Assembled by "make scripts" from views/ (edit those): this head, then the
-- files whose objects are new or changed since 1.1.0, as a fresh install
-- creates them.
--
-- Views and a function of earlier versions are replaced: dropped by name,
-- the views that use another first, and created again (never DROP ...
-- CASCADE: a view of your own over one of them makes this update fail
-- instead of silently dropping it; drop it, update, and create it again).
DROP VIEW @extschema@.pg_procmem_top;
DROP VIEW @extschema@.pg_procmem_advice;
DROP VIEW @extschema@.pg_procmem_hugepages;
DROP VIEW @extschema@.pg_procmem_accounting;
DROP VIEW @extschema@.pg_procmem_oom;
DROP VIEW @extschema@.pg_procmem_headroom;
DROP VIEW @extschema@.pg_procmem_summary;
DROP VIEW @extschema@.pg_procmem_backends_pss;
DROP VIEW @extschema@.pg_procmem_backends;
DROP FUNCTION @extschema@.pg_procmem_shared_memory();
-- new columns: kernel and the parts of private_anon
DROP FUNCTION @extschema@.pg_procmem_processes(boolean);
DROP FUNCTION @extschema@.pg_procmem_process(integer, boolean);
