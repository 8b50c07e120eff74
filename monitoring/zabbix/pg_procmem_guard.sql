-- Made by scripts/monitoring from monitoring/metrics.toml.
-- pg_procmem_guard: the memory guard's actions and pg_procmem.max_backend_memory's cancels
SELECT COALESCE(pg_catalog.max(a.action_number), 0) AS actions_total,
       pg_catalog.count(*) FILTER (WHERE a.action OPERATOR(pg_catalog.=) 'cancel'
                                     AND a.acted_at OPERATOR(pg_catalog.>) (pg_catalog.now() OPERATOR(pg_catalog.-) '1 hour'::interval)) AS canceled_last_hour,
       pg_catalog.count(*) FILTER (WHERE a.action OPERATOR(pg_catalog.=) 'terminate'
                                     AND a.acted_at OPERATOR(pg_catalog.>) (pg_catalog.now() OPERATOR(pg_catalog.-) '1 hour'::interval)) AS terminated_last_hour,
       pg_catalog.count(*) FILTER (WHERE a.action OPERATOR(pg_catalog.~~) 'would %'
                                     AND a.acted_at OPERATOR(pg_catalog.>) (pg_catalog.now() OPERATOR(pg_catalog.-) '1 hour'::interval)) AS dry_run_last_hour,
       pg_catalog.date_part('epoch', pg_catalog.max(a.acted_at)) AS last_action_time_seconds
FROM public.pg_procmem_guard_log(true) AS a
