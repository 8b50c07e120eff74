-- Made by scripts/monitoring from monitoring/metrics.toml.
-- pg_procmem_top_process: the 5 processes with the largest overhead (pid is a value, not a label, so that series don't multiply)
SELECT rank::pg_catalog.text AS rank, backend_type, pid, overhead AS overhead_bytes,
       page_tables AS page_tables_bytes, rss AS rss_bytes
FROM (SELECT pg_catalog.row_number() OVER (ORDER BY overhead DESC NULLS LAST, pid) AS rank, *
      FROM public.pg_procmem_latest) AS b
WHERE rank OPERATOR(pg_catalog.<=) 5
