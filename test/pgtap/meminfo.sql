-- pg_procmem_system's /proc/meminfo figures, each between two independent
-- reads of /proc/meminfo made just before and just after it: tight enough
-- that a key read from the wrong line (MemAvailable from MemFree,
-- PageTables from KernelStack) fails. The machine is shared, so a figure may
-- move between the reads: each check takes up to 50 tries, and passes on the
-- first whose window holds the figure.
BEGIN;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS pg_procmem;
\ir ../pgtap-lib/helpers.sql
SELECT plan(6);

-- NULL when pg_procmem_system's column col lies within slack bytes of the
-- window of two reads of meminfo key around it; else the last try's figures.
CREATE FUNCTION pg_temp.outside(col text, k text, slack bigint) RETURNS text LANGUAGE plpgsql AS $$
DECLARE before bigint; got bigint; after bigint;
BEGIN
	FOR i IN 1..50 LOOP
		before := pg_temp.meminfo(k);
		EXECUTE format('SELECT %I FROM pg_procmem_system', col) INTO got;
		after := pg_temp.meminfo(k);
		IF got BETWEEN least(before, after) - slack AND greatest(before, after) + slack THEN
			RETURN NULL;
		END IF;
	END LOOP;
	RETURN format('%s: %s, outside %s .. %s (%s before, %s after, slack %s)',
		col, got, least(before, after) - slack, greatest(before, after) + slack, before, after, slack);
END $$;

SELECT is(pg_temp.outside('mem_available', 'MemAvailable', 4194304), NULL,
	'MemAvailable, within 4 MB of two reads around it');
SELECT diag(format('MemAvailable - MemFree on this machine: %s MB (the check tells them apart above 4 MB)',
	(pg_temp.meminfo('MemAvailable') - pg_temp.meminfo('MemFree')) / 1048576));
SELECT is(pg_temp.outside('page_tables', 'PageTables', 65536), NULL,
	'PageTables, within 64 kB of two reads around it');
SELECT diag(format('PageTables %s kB, KernelStack %s kB, SecPageTables %s kB',
	pg_temp.meminfo('PageTables') / 1024, pg_temp.meminfo('KernelStack') / 1024,
	pg_temp.meminfo('SecPageTables') / 1024));
SELECT is(pg_temp.outside('kernel_stack', 'KernelStack', 65536), NULL,
	'KernelStack, within 64 kB of two reads around it');
SELECT is(pg_temp.outside('shmem', 'Shmem', 4194304), NULL, 'Shmem, within 4 MB of two reads around it');
SELECT is(pg_temp.outside('committed_as', 'Committed_AS', 4194304), NULL,
	'Committed_AS, within 4 MB of two reads around it');
SELECT is(pg_temp.outside('swap_free', 'SwapFree', 4194304), NULL, 'SwapFree, within 4 MB of two reads around it');

SELECT * FROM finish();
ROLLBACK;
