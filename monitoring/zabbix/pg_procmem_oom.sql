-- Made by scripts/monitoring from monitoring/metrics.toml.
-- pg_procmem_oom: the OOM killer's view of the server's processes, per backend type
SELECT backend_type, pg_catalog.count(*) AS processes,
       pg_catalog.max(oom_score) AS max_oom_score, pg_catalog.min(rank) AS best_rank,
       pg_catalog.count(*) FILTER (WHERE oom_protected) AS protected
FROM (SELECT pg_catalog.rank() OVER (ORDER BY oom_score DESC NULLS LAST) AS rank, *
      FROM public.pg_procmem_latest) AS o
GROUP BY backend_type
