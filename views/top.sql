-- The headline in 80 columns, for people at a psql prompt: every process,
-- most expensive first, sizes in at most 7 characters ("1023 kB", "9.9 MB",
-- "1023 MB"; pg_size_pretty's "10239 kB" took 8, and a row 81). Client
-- backends are named user@database, the others by backend type (autovacuum,
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
	   z.sizes[1] AS overhead,
	   z.sizes[2] AS pagetbl,
	   z.sizes[3] AS rss,
	   z.sizes[4] AS context
FROM (SELECT bk.*,
			 CASE WHEN bk.backend_type OPERATOR(pg_catalog.=) 'client backend'
					   AND bk.usename IS NOT NULL
				  THEN (bk.usename::text OPERATOR(pg_catalog.||) '@') OPERATOR(pg_catalog.||) bk.datname::text
				  ELSE pg_catalog.replace(pg_catalog.replace(pg_catalog.replace(bk.backend_type,
						  'autovacuum ', 'autovac '), 'logical replication ', 'logical '),
						  'background ', 'bg ') END AS who
	  FROM @extschema@.pg_procmem_backends AS bk) AS b,
	 LATERAL (SELECT pg_catalog.array_agg(
				CASE WHEN v.x OPERATOR(pg_catalog.<) 1048576
					 THEN (v.x OPERATOR(pg_catalog./) 1024)::pg_catalog.text OPERATOR(pg_catalog.||) ' kB'
					 WHEN v.x OPERATOR(pg_catalog.<) 10485760
					 THEN pg_catalog.round(v.x::numeric OPERATOR(pg_catalog./) 1048576, 1)::pg_catalog.text
						  OPERATOR(pg_catalog.||) ' MB'
					 WHEN v.x OPERATOR(pg_catalog.<) 1073741824
					 THEN (v.x OPERATOR(pg_catalog./) 1048576)::pg_catalog.text OPERATOR(pg_catalog.||) ' MB'
					 WHEN v.x OPERATOR(pg_catalog.<) 10737418240
					 THEN pg_catalog.round(v.x::numeric OPERATOR(pg_catalog./) 1073741824, 1)::pg_catalog.text
						  OPERATOR(pg_catalog.||) ' GB'
					 WHEN v.x OPERATOR(pg_catalog.<) 1099511627776
					 THEN (v.x OPERATOR(pg_catalog./) 1073741824)::pg_catalog.text OPERATOR(pg_catalog.||) ' GB'
					 ELSE pg_catalog.round(v.x::numeric OPERATOR(pg_catalog./) 1099511627776, 1)::pg_catalog.text
						  OPERATOR(pg_catalog.||) ' TB' END ORDER BY v.i) AS sizes
			  FROM (VALUES (1, b.overhead), (2, b.page_tables), (3, b.rss), (4, b.context_bytes)) AS v(i, x)) AS z
ORDER BY b.overhead DESC NULLS LAST, b.pid;

COMMENT ON VIEW pg_procmem_top IS
'every server process, most expensive first, pretty-printed to fit an 80-column terminal';

REVOKE ALL ON pg_procmem_top FROM PUBLIC;
GRANT SELECT ON pg_procmem_top TO pg_read_all_stats;
