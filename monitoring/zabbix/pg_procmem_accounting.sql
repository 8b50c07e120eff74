-- Made by scripts/monitoring from monitoring/metrics.toml.
-- pg_procmem_accounting: all of the server's memory added up
SELECT processes_overhead AS processes_overhead_bytes,
       main_segment_size AS main_segment_size_bytes,
       main_segment_resident AS main_segment_resident_bytes,
       dsm_bytes, accounted AS accounted_bytes
FROM public.pg_procmem_accounting
