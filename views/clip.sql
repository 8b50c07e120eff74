-- One terminal line of at most n columns, for the short columns that must
-- fit 80 (pg_procmem_top's names, the crash summary, README's queries):
-- runs of white space and control characters (a query's newlines and
-- tabs, which psql would draw as 8 columns) become one space, and a text
-- too long is cut with '~'. A non-ASCII character counts as two columns,
-- as wide CJK ones are drawn (others then cut a little early). The result
-- never takes more than n columns: with n <= 0 it is empty, and a first
-- character wider than n leaves only the '~'.
CREATE FUNCTION pg_procmem_clip(t text, n integer) RETURNS text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
BEGIN ATOMIC
	SELECT CASE
			   -- first: no arithmetic on n below can overflow
			   WHEN n OPERATOR(pg_catalog.<=) 0 THEN ''
			   WHEN pg_catalog.octet_length(x.s) OPERATOR(pg_catalog.=) pg_catalog.length(x.s)
					AND pg_catalog.length(x.s) OPERATOR(pg_catalog.<=) n THEN x.s
			   WHEN pg_catalog.octet_length(x.s) OPERATOR(pg_catalog.=) pg_catalog.length(x.s)
			   THEN pg_catalog.left(x.s, n OPERATOR(pg_catalog.-) 1) OPERATOR(pg_catalog.||) '~'
			   -- non-ASCII: each character's width, added up in order
			   ELSE (SELECT CASE WHEN pg_catalog.max(w.upto) OPERATOR(pg_catalog.<=) n THEN x.s
								 ELSE COALESCE(pg_catalog.string_agg(w.c, '' ORDER BY w.i)
												   FILTER (WHERE w.upto OPERATOR(pg_catalog.<) n), '')
									  OPERATOR(pg_catalog.||) '~' END
					 FROM (SELECT c.c, c.i,
								  pg_catalog.sum(CASE WHEN pg_catalog.octet_length(c.c) OPERATOR(pg_catalog.=) 1
													  THEN 1 ELSE 2 END) OVER (ORDER BY c.i) AS upto
						   FROM pg_catalog.regexp_split_to_table(x.s, '') WITH ORDINALITY AS c(c, i)) AS w)
		   END
	FROM (SELECT pg_catalog.regexp_replace(t, '[[:space:][:cntrl:]]+', ' ', 'g') AS s) AS x;
END;

COMMENT ON FUNCTION pg_procmem_clip(text, integer) IS
'a text as one terminal line of at most n columns: white space and control characters as one space, cut with ~';

REVOKE ALL ON FUNCTION pg_procmem_clip(text, integer) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION pg_procmem_clip(text, integer) TO pg_read_all_stats;
