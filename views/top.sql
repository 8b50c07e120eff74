-- The headline in 80 columns, for people at a psql prompt: every process,
-- most expensive first. The sizes are pg_procmem_size (views/size.sql),
-- rounded to what they print in at most 7 characters ("1023 kB", "9.9 MB",
-- "1023 MB"; pg_size_pretty's "10239 kB" took 8, and a row 81), and
-- ordered by value (ORDER BY overhead DESC puts 11 MB before 983 kB). Client backends are
-- named user@database, the others by backend type (autovacuum,
-- logical replication and background shortened); long names and states are
-- clipped so that a row stays within 80 characters even with 7-digit pids.
CREATE VIEW pg_procmem_top AS
SELECT b.pid,
	   @extschema@.pg_procmem_clip(b.who, 17) AS process,
	   CASE b.state WHEN 'idle in transaction' THEN 'idletx'
					WHEN 'idle in transaction (aborted)' THEN 'idletx!'
					WHEN 'fastpath function call' THEN 'fastpth'
					WHEN 'disabled' THEN 'disabld'
					ELSE b.state END AS state,
	   @extschema@.pg_procmem_size_rounded(b.overhead) AS overhead,
	   @extschema@.pg_procmem_size_rounded(b.page_tables) AS pagetbl,
	   @extschema@.pg_procmem_size_rounded(b.rss) AS rss,
	   @extschema@.pg_procmem_size_rounded(b.context_bytes) AS context
FROM (SELECT bk.*,
			 CASE WHEN bk.backend_type OPERATOR(pg_catalog.=) 'client backend'
					   AND bk.usename IS NOT NULL
				  THEN (bk.usename::text OPERATOR(pg_catalog.||) '@') OPERATOR(pg_catalog.||) bk.datname::text
				  ELSE pg_catalog.replace(pg_catalog.replace(pg_catalog.replace(bk.backend_type,
						  'autovacuum ', 'autovac '), 'logical replication ', 'logical '),
						  'background ', 'bg ') END AS who
	  FROM @extschema@.pg_procmem_backends AS bk) AS b
ORDER BY b.overhead DESC NULLS LAST, b.pid;

COMMENT ON VIEW pg_procmem_top IS
'every server process, most expensive first, pretty-printed to fit an 80-column terminal; its sizes sort by value';

REVOKE ALL ON pg_procmem_top FROM PUBLIC;
GRANT SELECT ON pg_procmem_top TO pg_read_all_stats;
