-- Made by scripts/monitoring from monitoring/metrics.toml.
-- pg_procmem_history: the memory history: its samples, the sampler's cost, the crash restarts it saw
SELECT m.samples,
       m.span_seconds,
       m.last_sample_seconds,
       m.crash_restarts_total,
       m.last_crash_time_seconds,
       m.crashes_last_hour
FROM (
SELECT pg_catalog.count(*) AS samples,
       COALESCE(pg_catalog.date_part('epoch', (pg_catalog.array_agg(s.sampled_at ORDER BY s.sample DESC))[1]
                OPERATOR(pg_catalog.-) (pg_catalog.array_agg(s.sampled_at ORDER BY s.sample))[1]), 0) AS span_seconds,
       (pg_catalog.array_agg(s.sample_ms ORDER BY s.sample DESC))[1] AS last_sample_ms,
       (pg_catalog.array_agg(s.sample_ms ORDER BY s.sample DESC))[1] OPERATOR(pg_catalog./) 1000 AS last_sample_seconds,
       (SELECT COALESCE(pg_catalog.max(c.number), 0)
        FROM public.pg_procmem_crash_log(true) AS c) AS crash_restarts,
       (SELECT COALESCE(pg_catalog.max(c.number), 0)
        FROM public.pg_procmem_crash_log(true) AS c) AS crash_restarts_total,
       (SELECT pg_catalog.date_part('epoch', pg_catalog.max(c.crashed_at))
        FROM public.pg_procmem_crash_log(true) AS c) AS last_crash_time_seconds,
       (SELECT pg_catalog.count(*) FROM public.pg_procmem_crash_log(true) AS c
        WHERE c.crashed_at OPERATOR(pg_catalog.>) (pg_catalog.now() OPERATOR(pg_catalog.-) '1 hour'::interval))
           AS crashes_last_hour
FROM public.pg_procmem_history_system_samples(true) AS s
) AS m
