-- Install, and what was installed: functions stay VOLATILE (live OS state),
-- STRICT, never SECURITY DEFINER.
CREATE EXTENSION pg_procmem;

SELECT p.oid::regprocedure AS function, p.provolatile, p.proisstrict, p.prosecdef, p.proparallel, p.prorows
FROM pg_catalog.pg_proc p
     JOIN pg_catalog.pg_depend d ON d.objid = p.oid AND d.deptype = 'e'
     JOIN pg_catalog.pg_extension e ON e.oid = d.refobjid
WHERE e.extname = 'pg_procmem'
ORDER BY p.proname, p.oid::regprocedure::text COLLATE "C";

-- the control file's default version (no version written here: it is
-- opened and released by RELEASING.md)
SELECT e.extversion = a.default_version AS default_version_installed
FROM pg_catalog.pg_extension e JOIN pg_catalog.pg_available_extensions a ON a.name = e.extname
WHERE e.extname = 'pg_procmem';

-- One postmaster, this backend, and the auxiliary processes are rows.
SELECT count(*) FILTER (WHERE backend_type = 'postmaster') AS postmasters,
       count(*) FILTER (WHERE pid = pg_backend_pid()) AS me,
       bool_or(backend_type = 'checkpointer') AS checkpointer,
       bool_or(backend_type = 'background writer') AS bgwriter,
       bool_or(backend_type = 'walwriter') AS walwriter,
       count(*) = count(DISTINCT pid) AS pids_unique
FROM pg_procmem_backends;

-- The calling backend's row: figures present and related as they must be.
SELECT backend_type, datname = current_database() AS my_db,
       rss > 0 AS rss,
       rss_anon + rss_file + rss_shmem = rss AS rss_parts,
       overhead_method,
       overhead = private_anon + page_tables + kernel AS overhead_is_private_anon_pte_kernel,
       overhead BETWEEN 256 * 1024 AND 256 * 1024 * 1024 AS overhead_sane,
       private_anon + cow_shared_anon <= rss_anon + 256 * 1024 AS anon_le_rss_anon,
       context_bytes > 0 AS has_contexts,
       context_free_bytes <= context_bytes AS free_le_total,
       oom_score_adj IS NOT NULL AS oom,
       unreadable IS NULL AS all_read
FROM pg_procmem_backends WHERE pid = pg_backend_pid();

-- Auxiliary processes and the postmaster publish no context totals: NULL, not 0.
SELECT count(*) AS aux_with_contexts
FROM pg_procmem_backends
WHERE backend_type IN ('postmaster', 'checkpointer', 'background writer', 'walwriter')
  AND (context_bytes IS NOT NULL OR context_peak_bytes IS NOT NULL);

-- The default view reads no smaps_rollup: the PSS columns live in
-- pg_procmem_backends_pss, where the own backend's relations hold.
SELECT count(*) FILTER (WHERE pss IS NOT NULL) AS pss_without_asking
FROM pg_procmem_processes();
SELECT pss <= rss AS pss_le_rss, private <= rss AS private_le_rss,
       pss_overhead = pss_anon + page_tables AS pss_overhead,
       overhead_method
FROM pg_procmem_backends_pss WHERE pid = pg_backend_pid();
