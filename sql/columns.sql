-- The columns users and dashboards depend on, with their types.
SELECT attnum, attname, pg_catalog.format_type(atttypid, atttypmod) AS type
FROM pg_catalog.pg_attribute
WHERE attrelid = 'pg_procmem_backends'::regclass AND attnum > 0
ORDER BY attnum;

SELECT attnum, attname, pg_catalog.format_type(atttypid, atttypmod) AS type
FROM pg_catalog.pg_attribute
WHERE attrelid = 'pg_procmem_backends_pss'::regclass AND attnum > 0
ORDER BY attnum;

SELECT attnum, attname, pg_catalog.format_type(atttypid, atttypmod) AS type
FROM pg_catalog.pg_attribute
WHERE attrelid = 'pg_procmem_contexts'::regclass AND attnum > 0
ORDER BY attnum;

SELECT a.n, a.name, a.type::regtype
FROM pg_catalog.pg_proc p,
     LATERAL unnest(p.proargnames, p.proallargtypes::oid[], p.proargmodes::text[])
             WITH ORDINALITY AS a(name, type, mode, n)
WHERE p.oid = 'pg_procmem_processes(boolean)'::regprocedure
ORDER BY a.n;
-- pg_procmem_process(pid) returns the same columns.
SELECT pg_catalog.pg_get_function_arguments('pg_procmem_process(integer, boolean)'::regprocedure)
     = 'pid integer, ' || pg_catalog.pg_get_function_arguments('pg_procmem_processes(boolean)'::regprocedure)
     AS same_columns;
