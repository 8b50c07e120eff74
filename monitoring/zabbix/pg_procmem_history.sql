-- Made by scripts/monitoring from monitoring/metrics.toml.
-- pg_procmem_history: the memory history: its samples, the sampler's cost, the crash restarts it saw
SELECT m.samples,
       m.span_seconds,
       m.last_sample_seconds,
       m.crash_restarts_total,
       m.last_crash_time_seconds,
       m.crashes_last_hour,
       m.unclean_stops_last_hour,
       m.dsm_bytes,
       m.dsm_leftover_bytes
FROM (
SELECT s.samples, s.span_seconds, s.last_sample_ms,
       s.last_sample_ms OPERATOR(pg_catalog./) 1000 AS last_sample_seconds,
       c.crash_restarts, c.crash_restarts AS crash_restarts_total,
       c.last_crash_time_seconds, c.crashes_last_hour, c.unclean_stops_last_hour, s.dsm_bytes, s.dsm_leftover_bytes
FROM (SELECT pg_catalog.count(*) AS samples,
             COALESCE(pg_catalog.date_part('epoch', (pg_catalog.array_agg(h.sampled_at ORDER BY h.sample DESC))[1]
                      OPERATOR(pg_catalog.-) (pg_catalog.array_agg(h.sampled_at ORDER BY h.sample))[1]), 0) AS span_seconds,
             (pg_catalog.array_agg(h.sample_ms ORDER BY h.sample DESC))[1] AS last_sample_ms,
             (pg_catalog.array_agg(h.dsm_mapped ORDER BY h.sample DESC))[1] AS dsm_bytes,
             (pg_catalog.array_agg(h.dsm_leftover ORDER BY h.sample DESC))[1] AS dsm_leftover_bytes
      FROM public.pg_procmem_history_system_samples(true) AS h) AS s,
     (SELECT COALESCE(pg_catalog.max(k.number), 0) AS crash_restarts,
             pg_catalog.date_part('epoch', pg_catalog.max(k.crashed_at)) AS last_crash_time_seconds,
             pg_catalog.count(*) FILTER (WHERE k.crashed_at OPERATOR(pg_catalog.>)
                                                 (pg_catalog.now() OPERATOR(pg_catalog.-) '1 hour'::interval)
                                         AND (k.how_known OPERATOR(pg_catalog.<>) 'unclean stop'
                                              OR k.cgroup_oom_kills OPERATOR(pg_catalog.>) 0)) AS crashes_last_hour,
             pg_catalog.count(*) FILTER (WHERE k.crashed_at OPERATOR(pg_catalog.>)
                                                 (pg_catalog.now() OPERATOR(pg_catalog.-) '1 hour'::interval)
                                         AND k.how_known OPERATOR(pg_catalog.=) 'unclean stop'
                                         AND NOT COALESCE(k.cgroup_oom_kills OPERATOR(pg_catalog.>) 0, false)) AS unclean_stops_last_hour
      FROM public.pg_procmem_crash_log(true) AS k) AS c
) AS m
