-- The server's memory cgroup, what its usage is made of and what it went
-- through: its peak, the times it hit memory.high and its limit, OOM
-- events and kills (v1: failcnt is max_events; high, oom and oom_group are
-- NULL). kernel is v2's kernel plus sock (before Linux 5.18: slab +
-- kernel_stack + pagetables + percpu + vmalloc + sock), v1's kmem usage;
-- page_cache_dirty is file_dirty + file_writeback. NULL outside a cgroup
-- with the memory controller.
CREATE FUNCTION pg_procmem_cgroup_memory(
	OUT cgroup_version integer,
	OUT usage bigint,
	OUT "limit" bigint,
	OUT effective_limit bigint,
	OUT peak bigint,
	OUT high bigint,
	OUT anon bigint,
	OUT file bigint,
	OUT shmem bigint,
	OUT page_cache_dirty bigint,
	OUT kernel bigint,
	OUT high_events bigint,
	OUT max_events bigint,
	OUT oom_events bigint,
	OUT oom_kills bigint,
	OUT oom_group boolean)
RETURNS record
AS 'MODULE_PATHNAME', 'pg_procmem_cgroup_memory'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

COMMENT ON FUNCTION pg_procmem_cgroup_memory() IS
'the server''s memory cgroup: usage, limits, what the usage is made of, its peak, limit hits and OOM events';

-- Where did the memory go: the server's memory added up, beside what the
-- cgroup and the system say, with the remainder shown. A part that could
-- not be measured stays unknown: the sums it enters are NULL, and unknown
-- names it. unexplained = cgroup_unexplained - cgroup_kernel_other: the
-- cgroup's kernel memory beyond the processes' own (page tables and the
-- kernel part of overhead) is explained too.
CREATE VIEW pg_procmem_accounting AS
WITH p AS (
	SELECT pg_catalog.count(*) AS processes,
		   pg_catalog.count(*) FILTER (WHERE overhead IS NULL) AS overhead_unknown,
		   pg_catalog.sum(overhead)::bigint AS overhead,
		   -- what of overhead the cgroup counts as kernel memory (a process
		   -- whose kernel part is unknown has none in its overhead)
		   pg_catalog.sum(page_tables OPERATOR(pg_catalog.+) COALESCE(kernel, 0))::bigint AS kernel,
		   pg_catalog.count(*) FILTER (WHERE backend_type OPERATOR(pg_catalog.=) 'postmaster') AS postmasters,
		   pg_catalog.sum(cow_shared_anon) FILTER (WHERE backend_type OPERATOR(pg_catalog.=) 'postmaster')::bigint
			   AS cow_shared
	FROM @extschema@.pg_procmem_processes()
), m AS (
	SELECT * FROM @extschema@.pg_procmem_shared_memory(true)
), s AS (
	SELECT * FROM @extschema@.pg_procmem_system_info()
), c AS (
	SELECT * FROM @extschema@.pg_procmem_cgroup_memory()
), a AS (
	SELECT p.processes,
		   CASE WHEN p.overhead_unknown OPERATOR(pg_catalog.=) 0 THEN p.overhead END AS overhead,
		   CASE WHEN p.overhead_unknown OPERATOR(pg_catalog.=) 0 THEN p.kernel END AS processes_kernel,
		   CASE WHEN p.postmasters OPERATOR(pg_catalog.=) 1 THEN p.cow_shared END AS cow_shared,
		   m.main_segment_size, m.main_segment_resident, m.main_segment_hugetlb,
		   m.dsm_segments, m.dsm_bytes, m.main_segment_resident_exact,
		   -- hugetlb pages are not charged to a memory cgroup
		   CASE WHEN m.main_segment_hugetlb THEN 0 ELSE m.main_segment_resident END AS segment_charged,
		   -- the cgroup's figures from one read, so that its parts add up
		   c.usage AS cgroup_usage,
		   c.file OPERATOR(pg_catalog.-) c.shmem AS cgroup_page_cache,
		   s.mem_total OPERATOR(pg_catalog.-) s.mem_available AS system_used,
		   c.*
	FROM p, m, s, c
), t AS (
	SELECT a.*,
		   ((a.overhead OPERATOR(pg_catalog.+) a.cow_shared) OPERATOR(pg_catalog.+) a.dsm_bytes) AS private_and_dsm,
		   a.kernel OPERATOR(pg_catalog.-) a.processes_kernel AS kernel_other,
		   ARRAY(SELECT u.part FROM (VALUES
					 ('processes_overhead', a.overhead IS NULL),
					 ('cow_shared_with_postmaster', a.cow_shared IS NULL),
					 ('main_segment_resident', a.main_segment_resident IS NULL),
					 ('dsm_bytes', a.dsm_bytes IS NULL),
					 ('cgroup_usage', a.cgroup_usage IS NULL),
					 ('cgroup_page_cache', a.cgroup_page_cache IS NULL),
					 ('cgroup_kernel', a.kernel IS NULL)) AS u(part, missing)
				 WHERE u.missing) AS unknown
	FROM a
), r AS (
	SELECT t.*,
		   (t.cgroup_usage OPERATOR(pg_catalog.-) t.cgroup_page_cache)
			   OPERATOR(pg_catalog.-) (t.private_and_dsm OPERATOR(pg_catalog.+) t.segment_charged)
			   AS cgroup_unexplained
	FROM t
)
SELECT r.processes,
	   r.overhead AS processes_overhead,
	   r.cow_shared AS cow_shared_with_postmaster,
	   r.main_segment_size, r.main_segment_resident, r.main_segment_hugetlb,
	   r.dsm_segments, r.dsm_bytes,
	   r.private_and_dsm OPERATOR(pg_catalog.+) r.main_segment_resident AS accounted,
	   r.cgroup_usage, r.cgroup_page_cache, r.cgroup_unexplained,
	   r.system_used,
	   r.main_segment_resident_exact,
	   CASE WHEN pg_catalog.cardinality(r.unknown) OPERATOR(pg_catalog.>) 0 THEN r.unknown END AS unknown,
	   r."limit" AS cgroup_limit, r.effective_limit AS cgroup_effective_limit,
	   r.peak AS cgroup_peak, r.high AS cgroup_high,
	   r.anon AS cgroup_anon, r.shmem AS cgroup_shmem, r.page_cache_dirty AS cgroup_page_cache_dirty,
	   r.kernel AS cgroup_kernel,
	   r.processes_kernel,
	   r.kernel_other AS cgroup_kernel_other,
	   r.cgroup_unexplained OPERATOR(pg_catalog.-) r.kernel_other AS unexplained,
	   r.high_events AS cgroup_high_events, r.max_events AS cgroup_max_events,
	   r.oom_events AS cgroup_oom_events, r.oom_kills AS cgroup_oom_kills,
	   r.oom_group AS cgroup_oom_group
FROM r;

COMMENT ON VIEW pg_procmem_accounting IS
'the server''s memory added up (processes, shared memory, DSM, copy-on-write) beside the cgroup''s usage and make-up, remainder shown';

REVOKE ALL ON FUNCTION pg_procmem_cgroup_memory() FROM PUBLIC;
REVOKE ALL ON pg_procmem_accounting FROM PUBLIC;
GRANT EXECUTE ON FUNCTION pg_procmem_cgroup_memory() TO pg_read_all_stats;
GRANT SELECT ON pg_procmem_accounting TO pg_read_all_stats;
