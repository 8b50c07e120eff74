-- The machine and the server's memory cgroup, one row. Bytes, but the
-- hugepages_* counts; NULL where a file is missing or a limit is "max".
CREATE FUNCTION pg_procmem_system_info(
	OUT mem_total bigint,
	OUT mem_available bigint,
	OUT page_tables bigint,
	OUT kernel_stack bigint,
	OUT shmem bigint,
	OUT committed_as bigint,
	OUT commit_limit bigint,
	OUT swap_total bigint,
	OUT swap_free bigint,
	OUT hugepages_total bigint,
	OUT hugepages_free bigint,
	OUT hugepages_rsvd bigint,
	OUT hugepages_surp bigint,
	OUT hugepage_size bigint,
	OUT anon_hugepages bigint,
	OUT overcommit_memory integer,
	OUT transparent_hugepage text,
	OUT kernel_release text,
	OUT kernel_version_num integer,
	OUT cgroup_version integer,
	OUT cgroup_path text,
	OUT cgroup_usage bigint,
	OUT cgroup_limit bigint,
	OUT cgroup_effective_limit bigint,
	OUT cgroup_room bigint,
	OUT cgroup_high bigint,
	OUT cgroup_swap_usage bigint,
	OUT cgroup_anon bigint,
	OUT cgroup_file bigint,
	OUT cgroup_shmem bigint,
	OUT cgroup_pagetables bigint,
	OUT cgroup_kernel_stack bigint,
	OUT cgroup_kernel bigint,
	OUT cgroup_sock bigint,
	OUT cgroup_oom_events bigint,
	OUT cgroup_oom_kills bigint,
	OUT cgroup_failcnt bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'pg_procmem_system_info'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

-- CPUs, the last-level cache, the kernel's writeback, overcommit and swap
-- settings, and the memory cgroup level (the server's or an ancestor) whose
-- room is the smallest share of its limit: what pg_procmem_advice needs
-- beyond pg_procmem_system_info.
CREATE FUNCTION pg_procmem_machine_info(
	OUT cpus integer,
	OUT cpu_cache_bytes bigint,
	OUT cpu_cache_level integer,
	OUT dirty_ratio integer,
	OUT dirty_background_ratio integer,
	OUT dirty_bytes bigint,
	OUT dirty_background_bytes bigint,
	OUT overcommit_ratio integer,
	OUT swappiness integer,
	OUT transparent_hugepage_defrag text,
	OUT cgroup_tightest_limit bigint,
	OUT cgroup_tightest_room bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'pg_procmem_machine_info'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

CREATE VIEW pg_procmem_system AS
SELECT s.*,
	   s.mem_total OPERATOR(pg_catalog.-) s.mem_available AS mem_used,
	   s.swap_total OPERATOR(pg_catalog.-) s.swap_free AS swap_used
FROM @extschema@.pg_procmem_system_info() AS s;

COMMENT ON VIEW pg_procmem_system IS
'the machine''s memory, huge pages, overcommit and THP settings, and the server''s memory cgroup';

REVOKE ALL ON FUNCTION pg_procmem_system_info() FROM PUBLIC;
REVOKE ALL ON FUNCTION pg_procmem_machine_info() FROM PUBLIC;
REVOKE ALL ON pg_procmem_system FROM PUBLIC;
GRANT EXECUTE ON FUNCTION pg_procmem_system_info() TO pg_read_all_stats;
GRANT EXECUTE ON FUNCTION pg_procmem_machine_info() TO pg_read_all_stats;
GRANT SELECT ON pg_procmem_system TO pg_read_all_stats;
