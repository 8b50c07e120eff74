-- Every process of this server, read from /proc: the functions the views
-- are built on. overhead is private_anon + page_tables + kernel (the
-- kernel's own memory for the process: its stack, page-table top and slab
-- objects, counted from its threads, mappings and open files); the columns
-- after unreadable split private_anon by what holds it (1.2.0 appended
-- them, so that the library still serves the 1.1.0 definitions). dsm is
-- what the dynamic shared memory segments the process maps hold, never in
-- overhead (they outlive the process); group_dsm, what the segments only
-- its parallel group maps hold, each counted once (1.3.0; NULL from
-- pg_procmem_process(), which reads one process).

-- with_pss also reads /proc/PID/smaps_rollup (the pss* and private columns
-- are NULL without it): that walks every page-table entry of the process,
-- shared_buffers included, so it costs milliseconds per backend that has
-- touched a large buffer pool without huge pages.
CREATE FUNCTION pg_procmem_processes(
	IN with_pss boolean DEFAULT false,
	OUT pid integer,
	OUT backend_type text,
	OUT overhead bigint,
	OUT overhead_method text,
	OUT private_anon bigint,
	OUT cow_shared_anon bigint,
	OUT page_tables bigint,
	OUT rss bigint,
	OUT rss_anon bigint,
	OUT rss_file bigint,
	OUT rss_shmem bigint,
	OUT pss bigint,
	OUT pss_anon bigint,
	OUT pss_file bigint,
	OUT pss_shmem bigint,
	OUT private bigint,
	OUT swap bigint,
	OUT swap_pss bigint,
	OUT hugetlb bigint,
	OUT peak_rss bigint,
	OUT oom_score integer,
	OUT oom_score_adj integer,
	OUT unreadable text[],
	OUT kernel bigint,
	OUT heap bigint,
	OUT mmap bigint,
	OUT stack bigint,
	OUT postgres_data bigint,
	OUT jit bigint,
	OUT libraries bigint,
	OUT dsm bigint,
	OUT dsm_segments integer,
	OUT group_dsm bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_procmem_processes'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED ROWS 100;

COMMENT ON FUNCTION pg_procmem_processes(boolean) IS
'memory of every live process of this server, read from /proc';

CREATE FUNCTION pg_procmem_process(
	IN pid integer,
	IN with_pss boolean DEFAULT false,
	OUT pid integer,
	OUT backend_type text,
	OUT overhead bigint,
	OUT overhead_method text,
	OUT private_anon bigint,
	OUT cow_shared_anon bigint,
	OUT page_tables bigint,
	OUT rss bigint,
	OUT rss_anon bigint,
	OUT rss_file bigint,
	OUT rss_shmem bigint,
	OUT pss bigint,
	OUT pss_anon bigint,
	OUT pss_file bigint,
	OUT pss_shmem bigint,
	OUT private bigint,
	OUT swap bigint,
	OUT swap_pss bigint,
	OUT hugetlb bigint,
	OUT peak_rss bigint,
	OUT oom_score integer,
	OUT oom_score_adj integer,
	OUT unreadable text[],
	OUT kernel bigint,
	OUT heap bigint,
	OUT mmap bigint,
	OUT stack bigint,
	OUT postgres_data bigint,
	OUT jit bigint,
	OUT libraries bigint,
	OUT dsm bigint,
	OUT dsm_segments integer,
	OUT group_dsm bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_procmem_process'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED ROWS 1;

COMMENT ON FUNCTION pg_procmem_process(integer, boolean) IS
'memory of one process of this server; ERROR for a pid that is not one';

REVOKE ALL ON FUNCTION pg_procmem_processes(boolean) FROM PUBLIC;
REVOKE ALL ON FUNCTION pg_procmem_process(integer, boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION pg_procmem_processes(boolean) TO pg_read_all_stats;
GRANT EXECUTE ON FUNCTION pg_procmem_process(integer, boolean) TO pg_read_all_stats;
