-- Made by scripts/monitoring from monitoring/metrics.toml.
-- pg_procmem_advice_severity: pg_procmem_advice's findings counted by severity, 0 included
SELECT v.severity, pg_catalog.count(*) FILTER (WHERE a.check_name IS NOT NULL) AS findings
FROM (VALUES ('critical'), ('warning'), ('info')) AS v(severity)
     LEFT JOIN public.pg_procmem_advice AS a ON a.severity OPERATOR(pg_catalog.=) v.severity
GROUP BY v.severity
