-- What overhead is made of (pg_procmem_breakdown, and the columns of
-- pg_procmem_processes after unreadable): parts that add up, agree with an
-- independent read of smaps and maps, and the JIT libraries seen.
BEGIN;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS pg_procmem;
\ir ../pgtap-lib/helpers.sql
SELECT plan(11);

-- The Anonymous kB of the mappings named `name` in /proc/PID/smaps, in bytes.
CREATE FUNCTION pg_temp.named_anon(p integer, name text) RETURNS bigint LANGUAGE sql AS $$
	SELECT COALESCE(sum(m[1]::bigint * 1024), 0)::bigint
	FROM regexp_matches(pg_read_file('/proc/' || p || '/smaps'),
						'\s' || name || '\n(?:[^\n]*\n)*?Anonymous:\s+(\d+) kB', 'g') AS m $$;
-- How many mappings /proc/PID/maps lists.
CREATE FUNCTION pg_temp.mappings(p integer) RETURNS bigint LANGUAGE sql AS $$
	SELECT count(*) FROM regexp_split_to_table(rtrim(pg_read_file('/proc/' || p || '/maps'), E'\n'), E'\n') $$;

CREATE TEMP TABLE every AS SELECT * FROM pg_procmem_processes();
CREATE TEMP TABLE me AS SELECT * FROM pg_procmem_breakdown WHERE pid = pg_backend_pid();

SELECT is((SELECT array_agg(backend_type) FROM every
		   WHERE heap + mmap + stack + postgres_data + jit + libraries IS DISTINCT FROM private_anon),
	NULL, 'every process: heap + mmap + stack + postgres_data + jit + libraries = private_anon');
SELECT is((SELECT array_agg(backend_type) FROM every
		   WHERE overhead_method IS DISTINCT FROM 'pagemap+kernel'
			  OR overhead IS DISTINCT FROM private_anon + page_tables + kernel),
	NULL, 'every process: overhead = private_anon + page_tables + kernel, by pagemap+kernel');
SELECT is((SELECT array_agg(pid ORDER BY pid) FROM pg_procmem_breakdown),
	(SELECT array_agg(pid ORDER BY pid) FROM pg_procmem_backends),
	'pg_procmem_breakdown has a row for every process pg_procmem_backends shows');

-- The kernel's share: at least a 16 kB stack, a 4 kB PGD and 128 bytes a
-- mapping; at most 1 MB and 1 kB a mapping (no kernel's objects are larger).
SELECT is((SELECT array_agg(backend_type) FROM every
		   WHERE kernel NOT BETWEEN 16384 + 4096 + 128 * pg_temp.mappings(pid)
							    AND 1048576 + 1024 * pg_temp.mappings(pid)),
	NULL, 'every process: kernel between 20 kB + 128 B and 1 MB + 1 kB a mapping of /proc/PID/maps');

-- The parts against the named mappings of smaps (read just after): a part
-- holds only the exclusive pages of its mappings, so at most their Anonymous.
SELECT ok((SELECT heap > 0 AND heap <= pg_temp.named_anon(pid, '\[heap\]') + 65536 FROM me),
	'own backend: heap > 0, at most the Anonymous of its [heap] mappings in smaps');
SELECT ok((SELECT stack > 0 AND stack <= pg_temp.named_anon(pid, '\[stack\]') + 65536 FROM me),
	'own backend: stack > 0, at most the Anonymous of [stack]');
SELECT ok((SELECT postgres_data > 0 FROM me),
	'own backend: some of the executable''s data is copied from the postmaster');
SELECT ok((SELECT libraries > 0 FROM me), 'own backend: libraries'' data is there too');
SELECT is((SELECT jit FROM me), 0::bigint, 'own backend, before any JIT: jit = 0');

-- One JIT-compiled query loads LLVM: megabytes of relocated library data.
SET LOCAL jit = on;
SET LOCAL jit_above_cost = 0;
SET LOCAL jit_inline_above_cost = -1;
SET LOCAL jit_optimize_above_cost = -1;
CREATE TEMP TABLE jitted AS SELECT sum(i * 2) AS s FROM generate_series(1, 1000) AS i;
CREATE TEMP TABLE after_jit AS SELECT * FROM pg_procmem_breakdown WHERE pid = pg_backend_pid();
SELECT CASE WHEN pg_jit_available() THEN
	ok((SELECT jit > 1048576 FROM after_jit), 'own backend, after a JIT-compiled query: jit > 1 MB')
	ELSE skip('this server has no JIT provider') END;
SELECT CASE WHEN pg_jit_available() THEN
	ok((SELECT a.overhead - m.overhead >= a.jit FROM after_jit a, me m),
	   'own backend: overhead grew by at least what jit holds')
	ELSE skip('this server has no JIT provider') END;
SELECT * FROM finish();
ROLLBACK;
