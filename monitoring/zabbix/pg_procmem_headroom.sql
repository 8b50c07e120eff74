-- Made by scripts/monitoring from monitoring/metrics.toml.
-- pg_procmem_headroom: how many more connections fit, and how much work_mem could be asked for
SELECT available AS available_bytes, avg_idle_overhead AS avg_idle_overhead_bytes,
       more_idle_connections_fit, connection_slots_left,
       work_mem_exposure AS work_mem_exposure_bytes, work_mem_exposure_ratio,
       autovacuum_exposure AS autovacuum_exposure_bytes
FROM public.pg_procmem_headroom
