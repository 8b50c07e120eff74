-- Versioned result shapes: the C functions serve the SQL definitions of
-- every released version (a version only appends columns), and refuse a
-- definition whose column count no version declares instead of forming a
-- row from values that were never written.
CREATE FUNCTION pg_temp.processes_wrong(IN with_pss boolean, OUT pid integer, OUT backend_type text)
RETURNS SETOF record AS '$libdir/pg_procmem', 'pg_procmem_processes' LANGUAGE C STRICT;
SELECT count(*) FROM pg_temp.processes_wrong(false);

CREATE FUNCTION pg_temp.shared_memory_wrong(OUT a bigint, OUT b bigint, OUT c boolean, OUT d integer,
	OUT e bigint, OUT f bigint, OUT g boolean, OUT h bigint)
RETURNS record AS '$libdir/pg_procmem', 'pg_procmem_shared_memory' LANGUAGE C STRICT;
SELECT * FROM pg_temp.shared_memory_wrong();

-- 1.0.0's definition of pg_procmem_shared_memory(): no argument, six columns
CREATE FUNCTION pg_temp.shared_memory_1_0(OUT main_segment_size bigint, OUT main_segment_resident bigint,
	OUT main_segment_hugetlb boolean, OUT dsm_segments integer, OUT dsm_bytes bigint,
	OUT postmaster_vm_peak bigint)
RETURNS record AS '$libdir/pg_procmem', 'pg_procmem_shared_memory' LANGUAGE C STRICT;
SELECT main_segment_size > 0 AS size, main_segment_resident > 0 AS resident, postmaster_vm_peak > 0 AS vm_peak
FROM pg_temp.shared_memory_1_0();
-- and 1.2.0's, without the costly parts
SELECT main_segment_size > 0 AS size, main_segment_resident IS NULL AS no_resident, dsm_bytes IS NULL AS no_dsm,
	main_segment_resident_exact IS NULL AS no_exact
FROM pg_procmem_shared_memory(false);

CREATE FUNCTION pg_temp.own_wrong(OUT a bigint, OUT b bigint) RETURNS record
AS '$libdir/pg_procmem', 'pg_procmem_own_contexts' LANGUAGE C STRICT;
SELECT * FROM pg_temp.own_wrong();
CREATE FUNCTION pg_temp.contexts_wrong(IN missing_ok boolean, OUT pid integer, OUT b timestamptz)
RETURNS SETOF record
AS '$libdir/pg_procmem', 'pg_procmem_backend_contexts' LANGUAGE C STRICT;
SELECT * FROM pg_temp.contexts_wrong(true);
CREATE FUNCTION pg_temp.system_wrong(OUT a bigint, OUT b bigint) RETURNS record
AS '$libdir/pg_procmem', 'pg_procmem_system_info' LANGUAGE C STRICT;
SELECT * FROM pg_temp.system_wrong();
CREATE FUNCTION pg_temp.machine_wrong(OUT a integer, OUT b bigint) RETURNS record
AS '$libdir/pg_procmem', 'pg_procmem_machine_info' LANGUAGE C STRICT;
SELECT * FROM pg_temp.machine_wrong();

-- the history's system entries: 1.2.0's 16 columns still answer, and one
-- column short of 1.3.0's 21 is refused
CREATE FUNCTION pg_temp.history_system(boolean) RETURNS SETOF record
AS '$libdir/pg_procmem', 'pg_procmem_history_system' LANGUAGE C STRICT;
SELECT count(*) >= 0 AS answers
FROM pg_temp.history_system(true) AS h(sample bigint, sampled_at timestamptz, run_started timestamptz,
	processes integer, mem_total bigint, mem_available bigint, swap_used bigint, page_tables bigint,
	hugepages_total bigint, hugepages_free bigint, cgroup_usage bigint, cgroup_limit bigint,
	cgroup_oom_kills bigint, connections bigint, sample_ms float8, sample_wall_ms float8);
SELECT count(*)
FROM pg_temp.history_system(true) AS h(sample bigint, sampled_at timestamptz, run_started timestamptz,
	processes integer, mem_total bigint, mem_available bigint, swap_used bigint, page_tables bigint,
	hugepages_total bigint, hugepages_free bigint, cgroup_usage bigint, cgroup_limit bigint,
	cgroup_oom_kills bigint, connections bigint, sample_ms float8, sample_wall_ms float8,
	pressure text, pressure_source text, pressure_used bigint, pressure_limit bigint);
