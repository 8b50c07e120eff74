-- Statement text pg_procmem keeps: the identifiers of the largest memory
-- contexts can hold a session's *older* statements (a prepared statement's
-- text, literals included) while pg_stat_activity shows a later one.
-- pg_procmem.keep_statement_text (superuser-only, on by default) governs it:
-- off, a backend publishes no ident, and a reader shows none.
BEGIN;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS dblink;
CREATE EXTENSION IF NOT EXISTS pg_procmem;
\ir ../pgtap-lib/helpers.sql
SELECT plan(6);

SELECT dblink_connect('keeper', pg_temp.connstr());
CREATE TEMP TABLE keeper AS SELECT p AS pid FROM dblink('keeper', 'SELECT pg_backend_pid()') AS t(p integer);
SELECT dblink_exec('keeper', 'SET pg_procmem.publish_interval = 0');
-- a prepared statement big enough (a 20,000-row VALUES list) that its plan
-- source is among the three largest contexts; its ident is its text
SELECT dblink_exec('keeper', 'PREPARE secret AS SELECT ''api_key=s3cr3t'' AS k, v FROM (VALUES '
	|| string_agg('(' || i || ')', ',') || ') AS t(v)')
FROM generate_series(1, 20000) AS i;
SELECT dblink_exec('keeper', 'SET application_name = ''later statement''');

CREATE FUNCTION pg_temp.secret_shown() RETURNS boolean LANGUAGE sql AS $$
	SELECT EXISTS (SELECT FROM pg_procmem_contexts c JOIN keeper USING (pid), unnest(c.largest_idents) AS i
				   WHERE i LIKE '%api_key=s3cr3t%') $$;

SELECT is(current_setting('pg_procmem.keep_statement_text'), 'on', 'keep_statement_text is on by default');
SELECT ok(pg_temp.secret_shown(),
	'on: the older prepared statement''s text is among the published idents');
SELECT ok((SELECT query NOT LIKE '%api_key%' FROM pg_stat_activity JOIN keeper USING (pid)),
	'... while pg_stat_activity shows a later statement');

-- off in the reader: no ident is shown, NULL rather than empty
SET pg_procmem.keep_statement_text = off;
SELECT is((SELECT count(*) FROM pg_procmem_contexts WHERE largest_idents IS NOT NULL), 0::bigint,
	'off in the reading session: largest_idents is NULL for every backend');
RESET pg_procmem.keep_statement_text;

-- off in the publisher: its next publication carries no ident
SELECT dblink_exec('keeper', 'SET pg_procmem.keep_statement_text = off');
SELECT dblink_exec('keeper', 'SET application_name = ''published again''');
SELECT ok(NOT pg_temp.secret_shown() AND
	(SELECT largest_contexts IS NOT NULL FROM pg_procmem_contexts JOIN keeper USING (pid)),
	'off in the publishing session: its largest contexts are still named, their text is not kept');

-- a superuser-only setting: a pg_monitor role cannot turn it on for itself
CREATE ROLE regress_procmem_reader IN ROLE pg_monitor;
SET ROLE regress_procmem_reader;
SELECT throws_ok('SET pg_procmem.keep_statement_text = on', '42501', NULL,
	'only a superuser may change pg_procmem.keep_statement_text');
RESET ROLE;

SELECT dblink_disconnect('keeper');
SELECT * FROM finish();
ROLLBACK;
