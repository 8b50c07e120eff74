-- Made by scripts/monitoring from monitoring/metrics.toml.
-- pg_procmem_backend_type: the server's processes per backend type, from the sampler's newest sample (a live read without it)
SELECT backend_type, pg_catalog.count(*) AS processes,
       pg_catalog.sum(overhead)::bigint AS overhead_bytes,
       pg_catalog.sum(page_tables)::bigint AS page_tables_bytes,
       pg_catalog.sum(rss)::bigint AS rss_bytes,
       pg_catalog.count(*) FILTER (WHERE state OPERATOR(pg_catalog.=) 'idle') AS idle,
       COALESCE(pg_catalog.sum(overhead) FILTER (WHERE state OPERATOR(pg_catalog.=) 'idle'), 0)::bigint
           AS idle_overhead_bytes,
       COALESCE(pg_catalog.sum(group_dsm) FILTER (WHERE leader_pid IS NULL), 0)::bigint AS group_dsm_bytes
FROM public.pg_procmem_latest
GROUP BY backend_type
