/* pg_procmem--1.2.0--@VERSION@.sql */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION pg_procmem UPDATE TO '@VERSION@'" to load this file. \quit

-- Assembled by "make scripts" from views/ (edit those): this head, then the
-- files whose objects are new or changed since 1.2.0, as a fresh install
-- creates them.
--
-- Views and functions of earlier versions are replaced: dropped by name,
-- what uses another first, and created again (never DROP ... CASCADE: a
-- view of your own over one of them makes this update fail instead of
-- silently dropping it; drop it, update, and create it again).
--
-- new columns: the history's pressure, reused and oom_protected figures
-- (pg_procmem_history_processes, pg_procmem_history_system_samples); the
-- advice reads the history, so it is created again too; the accounting's
-- cgroup make-up (pg_procmem_accounting); the DSM columns of
-- pg_procmem_processes() and pg_procmem_process(), and so every view over
-- them (pg_procmem_backends and the views of backends, oom, headroom and top)
DROP VIEW @extschema@.pg_procmem_top;
DROP VIEW @extschema@.pg_procmem_accounting;
DROP VIEW @extschema@.pg_procmem_advice;
DROP FUNCTION @extschema@.pg_procmem_advice_huge_pages(@extschema@.pg_procmem_advice_facts);
DROP FUNCTION @extschema@.pg_procmem_advice_oom(@extschema@.pg_procmem_advice_facts);
DROP FUNCTION @extschema@.pg_procmem_advice_memory_settings(@extschema@.pg_procmem_advice_facts);
DROP FUNCTION @extschema@.pg_procmem_advice_connections(@extschema@.pg_procmem_advice_facts);
DROP FUNCTION @extschema@.pg_procmem_advice_pressure(@extschema@.pg_procmem_advice_facts);
DROP FUNCTION @extschema@.pg_procmem_advice_crashes(@extschema@.pg_procmem_advice_facts);
DROP FUNCTION @extschema@.pg_procmem_advice_restarts(@extschema@.pg_procmem_advice_facts);
DROP VIEW @extschema@.pg_procmem_advice_facts;
DROP VIEW @extschema@.pg_procmem_connection_rate;
DROP VIEW @extschema@.pg_procmem_headroom;
DROP VIEW @extschema@.pg_procmem_memory_settings;
DROP VIEW @extschema@.pg_procmem_oom;
DROP VIEW @extschema@.pg_procmem_summary;
DROP VIEW @extschema@.pg_procmem_backends_pss;
DROP VIEW @extschema@.pg_procmem_breakdown;
DROP VIEW @extschema@.pg_procmem_backends;
DROP FUNCTION @extschema@.pg_procmem_process(integer, boolean);
DROP FUNCTION @extschema@.pg_procmem_processes(boolean);
DROP VIEW @extschema@.pg_procmem_query_memory;
DROP VIEW @extschema@.pg_procmem_crash_holders;
DROP VIEW @extschema@.pg_procmem_crashes;
DROP VIEW @extschema@.pg_procmem_history_system;
DROP VIEW @extschema@.pg_procmem_history;
DROP FUNCTION @extschema@.pg_procmem_crash_facts(text, text, text, bigint, timestamptz, timestamptz, bigint, bigint,
												 text, text, text);
DROP FUNCTION @extschema@.pg_procmem_held_elsewhere(text, bigint, integer, boolean, integer, integer, bigint, bigint);
DROP FUNCTION @extschema@.pg_procmem_holder_text(text, text, text, integer, bigint, boolean);
DROP FUNCTION @extschema@.pg_procmem_settings_said(bigint, text, double precision, text, bigint, text, bigint, text);
DROP FUNCTION @extschema@.pg_procmem_set_where(text);
DROP FUNCTION @extschema@.pg_procmem_oom_kills_baseline();
DROP FUNCTION @extschema@.pg_procmem_crash_groups(boolean);
DROP FUNCTION @extschema@.pg_procmem_crash_log(boolean);
DROP FUNCTION @extschema@.pg_procmem_history_system_samples(boolean);
DROP FUNCTION @extschema@.pg_procmem_history_processes(boolean);
