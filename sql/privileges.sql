-- Nothing for PUBLIC; pg_read_all_stats (and so pg_monitor) may read.
CREATE ROLE regress_procmem_nobody;
CREATE ROLE regress_procmem_stats IN ROLE pg_read_all_stats;
CREATE ROLE regress_procmem_monitor IN ROLE pg_monitor;

-- No grant to PUBLIC anywhere in the extension.
SELECT count(*) AS public_grants
FROM (SELECT proacl AS acl FROM pg_catalog.pg_proc WHERE proname LIKE 'pg\_procmem\_%'
      UNION ALL
      SELECT relacl FROM pg_catalog.pg_class WHERE relname LIKE 'pg\_procmem\_%') s,
     LATERAL pg_catalog.aclexplode(s.acl) x
WHERE x.grantee = 0;

SET ROLE regress_procmem_nobody;
SELECT count(*) FROM pg_procmem_backends;
SELECT count(*) FROM pg_procmem_backends_pss;
SELECT count(*) FROM pg_procmem_processes();
SELECT count(*) FROM pg_procmem_process(pg_backend_pid());
RESET ROLE;

SET ROLE regress_procmem_stats;
SELECT count(*) > 1 AS sees_processes FROM pg_procmem_backends;
SELECT count(*) > 1 AS sees_pss FROM pg_procmem_backends_pss;
SELECT count(*) = 1 AS sees_self FROM pg_procmem_process(pg_backend_pid());
SELECT context_bytes > 0 AS own_contexts FROM pg_procmem_backends WHERE pid = pg_backend_pid();
RESET ROLE;

SET ROLE regress_procmem_monitor;
SELECT count(*) > 1 AS sees_processes FROM pg_procmem_backends;
RESET ROLE;

DROP ROLE regress_procmem_nobody;
DROP ROLE regress_procmem_stats;
DROP ROLE regress_procmem_monitor;
