-- pg_procmem_system's /proc/meminfo figures, each between two independent
-- reads of /proc/meminfo made just before and just after it: tight enough
-- that a key read from the wrong line (MemAvailable from MemFree,
-- PageTables from KernelStack) fails. The machine is shared, so a figure may
-- move between the reads: each check takes up to 50 windows.
BEGIN;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS pg_procmem;
\ir ../pgtap-lib/helpers.sql
SELECT plan(6);

-- (pg_temp.around_reads: a window counts when the two reads agree within
-- the slack, and the figure must lie in one such window.)
SELECT pg_temp.around_reads(
	$$SELECT pg_temp.meminfo('MemAvailable') AS mem_available, pg_temp.meminfo('PageTables') AS page_tables,
	         pg_temp.meminfo('KernelStack') AS kernel_stack, pg_temp.meminfo('Shmem') AS shmem,
	         pg_temp.meminfo('Committed_AS') AS committed_as, pg_temp.meminfo('SwapFree') AS swap_free$$,
	'SELECT * FROM pg_procmem_system', ARRAY[
	ARRAY['MemAvailable, within 4 MB of two reads around it', 'v.mem_available', 'r.mem_available', '4194304'],
	ARRAY['PageTables, within 64 kB of two reads around it', 'v.page_tables', 'r.page_tables', '65536'],
	ARRAY['KernelStack, within 64 kB of two reads around it', 'v.kernel_stack', 'r.kernel_stack', '65536'],
	ARRAY['Shmem, within 4 MB of two reads around it', 'v.shmem', 'r.shmem', '4194304'],
	ARRAY['Committed_AS, within 4 MB of two reads around it', 'v.committed_as', 'r.committed_as', '4194304'],
	ARRAY['SwapFree, within 4 MB of two reads around it', 'v.swap_free', 'r.swap_free', '4194304']]);
SELECT diag(format('MemAvailable - MemFree on this machine: %s MB (the check tells them apart above 4 MB)',
	(pg_temp.meminfo('MemAvailable') - pg_temp.meminfo('MemFree')) / 1048576));
SELECT diag(format('PageTables %s kB, KernelStack %s kB, SecPageTables %s kB',
	pg_temp.meminfo('PageTables') / 1024, pg_temp.meminfo('KernelStack') / 1024,
	pg_temp.meminfo('SecPageTables') / 1024));

SELECT * FROM finish();
ROLLBACK;
