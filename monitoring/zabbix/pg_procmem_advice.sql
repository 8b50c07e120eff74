-- Made by scripts/monitoring from monitoring/metrics.toml.
-- pg_procmem_advice: pg_procmem_advice's findings: one series per finding
SELECT check_name, severity, 1 AS findings
FROM public.pg_procmem_advice
