-- Every backend's memory contexts (the main test cluster preloads
-- pg_procmem): a big sort's peak is published, a closed backend's slot is
-- emptied, and readers never see a half-written slot.
BEGIN;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS dblink;
CREATE EXTENSION IF NOT EXISTS pg_procmem;
\ir ../pgtap-lib/helpers.sql
SELECT plan(11);

SELECT dblink_connect('sorter', pg_temp.connstr());
CREATE TEMP TABLE sorter AS
SELECT p AS pid FROM dblink('sorter', 'SELECT pg_backend_pid()') AS t(p integer);

-- 1M rows sorted in memory: tens of MB under ExecutorState and TupleSort
SELECT dblink_exec('sorter', 'SET work_mem = ''256MB''');
SELECT is((SELECT n FROM dblink('sorter',
	'SELECT count(*) FROM (SELECT g FROM generate_series(1, 1000000) g ORDER BY g DESC) s') AS t(n bigint)),
	1000000::bigint, 'the other session sorted 1M rows');

SELECT ok((SELECT context_peak_bytes > 40 * 1024 * 1024 FROM pg_procmem_contexts JOIN sorter USING (pid)),
	'its published peak holds the sort''s memory (> 40 MB)');
SELECT ok((SELECT 'ExecutorState' = ANY (peak_largest_contexts) AND 'TupleSort main' = ANY (peak_largest_contexts)
	       AND peak_largest_bytes[1] > 20 * 1024 * 1024
	       FROM pg_procmem_contexts JOIN sorter USING (pid)),
	'at the peak, the sort''s contexts were the largest');
SELECT ok((SELECT context_bytes < 20 * 1024 * 1024 FROM pg_procmem_contexts JOIN sorter USING (pid)),
	'once its transaction ended, its current total fell back (< 20 MB)');
SELECT ok((SELECT b.context_peak_bytes = p.context_peak_bytes AND b.context_bytes IS NOT NULL
	       FROM pg_procmem_backends b JOIN sorter USING (pid) JOIN pg_procmem_contexts p USING (pid)),
	'pg_procmem_backends shows the same peak for that backend');

-- readers against a writer publishing as fast as it can, its memory
-- swinging between two sizes (a 200,000-row tuplestore or none) so that a
-- slot mixing two publications would break the relations below
SELECT dblink_exec('sorter', 'SET pg_procmem.publish_interval = 0');
SELECT dblink_send_query('sorter',
	'DO $$ BEGIN FOR i IN 1..1000000 LOOP
	   PERFORM count(*) FROM generate_series(1, CASE WHEN i % 2 = 0 THEN 1 ELSE 200000 END);
	 END LOOP; END $$');
-- Reads all slots until the writer has published 300 more times (20 s at
-- most); counts slots whose fields do not belong together.
CREATE FUNCTION pg_temp.torn_reads(OUT bad bigint, OUT reads integer, OUT writes integer)
LANGUAGE plpgsql AS $$
DECLARE n bigint; first integer; last integer; t0 timestamptz := clock_timestamp();
BEGIN
	bad := 0; reads := 0;
	SELECT publications INTO first FROM pg_procmem_backend_contexts() JOIN sorter USING (pid);
	LOOP
		SELECT count(*) INTO n FROM pg_procmem_backend_contexts()
		WHERE NOT (context_free_bytes <= context_bytes
				   AND context_used_bytes = context_bytes - context_free_bytes
				   AND context_peak_bytes >= context_bytes
				   AND contexts > 0
				   AND largest_bytes[1] <= context_bytes
				   AND largest_bytes[1] + coalesce(largest_bytes[2], 0) + coalesce(largest_bytes[3], 0)
					   <= context_bytes
				   AND peak_largest_bytes[1] <= context_peak_bytes
				   AND peak_at <= published_at
				   AND publications > 0);
		bad := bad + n;
		reads := reads + 1;
		SELECT publications INTO last FROM pg_procmem_backend_contexts() JOIN sorter USING (pid);
		EXIT WHEN last - first >= 300 OR clock_timestamp() - t0 > interval '20 seconds';
	END LOOP;
	writes := last - first;
END $$;
CREATE TEMP TABLE torn AS SELECT * FROM pg_temp.torn_reads();
SELECT dblink_cancel_query('sorter');
SELECT is((SELECT bad FROM torn), 0::bigint, 'reads during publications: no inconsistent slot');
SELECT ok((SELECT writes > 0 AND reads > 0 FROM torn),
	'the writer published while the reader read (' ||
	(SELECT reads || ' reads, ' || writes || ' publications' FROM torn) || ')');
SELECT * FROM dblink_get_result('sorter', false) AS t(r text);

-- a closed backend's slot is emptied
SELECT dblink_disconnect('sorter');
-- (a reader shows a slot only if the live PGPROC at its index has its pid;
-- at exit the backend also empties the slot)
SELECT ok(pg_temp.eventually('SELECT NOT EXISTS (SELECT FROM pg_procmem_backend_contexts() JOIN sorter USING (pid))'),
	'after it disconnected, its slot shows nothing');

-- new backends start from nothing, whatever slot they get
SELECT dblink_connect('fresh' || i, pg_temp.connstr()) FROM generate_series(1, 3) i;
SELECT is((SELECT count(*) FROM generate_series(1, 3) i,
	       LATERAL dblink('fresh' || i, 'SELECT 1') AS t(x int)), 3::bigint, 'three new sessions ran a query');
SELECT is((SELECT count(*) FROM pg_procmem_contexts WHERE context_peak_bytes > 40 * 1024 * 1024),
	0::bigint, 'no slot shows the closed backend''s peak');
SELECT ok((SELECT count(*) = 1 FROM pg_procmem_contexts WHERE pid = pg_backend_pid() AND age < '10 seconds'),
	'the caller''s own row is fresh');
SELECT dblink_disconnect('fresh' || i) FROM generate_series(1, 3) i;

SELECT * FROM finish();
ROLLBACK;
