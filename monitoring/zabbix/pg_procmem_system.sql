-- Made by scripts/monitoring from monitoring/metrics.toml.
-- pg_procmem_system: the machine's memory and the server's memory cgroup
SELECT m.mem_total_bytes,
       m.mem_available_bytes,
       m.page_tables_bytes,
       m.committed_as_bytes,
       m.commit_limit_bytes,
       m.swap_used_bytes,
       m.anon_hugepages_bytes,
       m.cgroup_usage_bytes,
       m.cgroup_limit_bytes,
       m.cgroup_room_bytes,
       m.cgroup_oom_kills_total
FROM (
SELECT mem_total AS mem_total_bytes, mem_available AS mem_available_bytes,
       page_tables AS page_tables_bytes, committed_as AS committed_as_bytes,
       commit_limit AS commit_limit_bytes, swap_used AS swap_used_bytes,
       anon_hugepages AS anon_hugepages_bytes,
       cgroup_usage AS cgroup_usage_bytes, cgroup_effective_limit AS cgroup_limit_bytes,
       cgroup_room AS cgroup_room_bytes, cgroup_oom_kills, cgroup_oom_kills AS cgroup_oom_kills_total
FROM public.pg_procmem_system
) AS m
