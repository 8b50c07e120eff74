/* pg_procmem--1.3.0.sql */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION pg_procmem" to load this file. \quit

-- Assembled by "make scripts" from the files in views/ (edit those): one
-- file a concern, in the order the objects need each other.
--
-- Every reference below is schema-qualified: objects are resolved at
-- CREATE EXTENSION time, and the schema being installed into may hold
-- look-alike objects. Nothing is readable by PUBLIC: process lists and
-- queries are sensitive; pg_read_all_stats (so pg_monitor) may read.

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

-- pg_procmem_size: a byte count that prints short and sorts by value, for
-- pg_procmem_top's columns. It is stored as a bigint, and bigint's own
-- functions compare, hash, send and receive it; the library only reads and
-- prints it (src/size.c): at most 7 characters up to 8191 PB ("1023 kB",
-- "9.9 MB", "1023 MB", "1.0 GB"; rounded as pg_size_pretty rounds) where those are exact, and in bytes
-- ("1500 bytes") where they are not, so that every size reads back as
-- itself (pg_dump, COPY, a view's constants: all go through the text).
-- pg_procmem_size_rounded() rounds a bigint to its short form:
-- pg_procmem_top shows that.
--
-- Casts to and from bigint change nothing (binary coercible). To bigint it
-- is implicit: sum(overhead), max(overhead), pg_size_pretty(overhead) and
-- "overhead > 1048576" work on the bytes; from bigint, integer and numeric
-- it is by assignment, so nothing turns into a size unasked. A size
-- literal is a size: "overhead > '10 MB'".
--
-- Privileges: unlike the extension's other functions, these (and the type)
-- are granted to PUBLIC, explicitly (default privileges may have revoked it). They read
-- nothing (a size is what the caller already holds), and without EXECUTE a
-- role given sizes (a table made from pg_procmem_top, say) could print them
-- but not compare, group or cast them: PostgreSQL checks it for operators,
-- DISTINCT, GROUP BY and casts through text.
CREATE TYPE pg_procmem_size;

CREATE FUNCTION pg_procmem_size_in(cstring) RETURNS @extschema@.pg_procmem_size
AS 'MODULE_PATHNAME', 'pg_procmem_size_in'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION pg_procmem_size_out(@extschema@.pg_procmem_size) RETURNS cstring
AS 'MODULE_PATHNAME', 'pg_procmem_size_out'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE FUNCTION pg_procmem_size_recv(internal) RETURNS @extschema@.pg_procmem_size
LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE AS 'int8recv';

CREATE FUNCTION pg_procmem_size_send(@extschema@.pg_procmem_size) RETURNS bytea
LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE AS 'int8send';

CREATE TYPE pg_procmem_size (
	INPUT = @extschema@.pg_procmem_size_in,
	OUTPUT = @extschema@.pg_procmem_size_out,
	RECEIVE = @extschema@.pg_procmem_size_recv,
	SEND = @extschema@.pg_procmem_size_send,
	LIKE = pg_catalog.int8
);

COMMENT ON TYPE pg_procmem_size IS
'a number of bytes, printed in at most 7 characters ("9.9 MB") where exact, else in bytes, and sorted by value';

-- a bigint rounded to what its short form shows: what pg_procmem_top prints
CREATE FUNCTION pg_procmem_size_rounded(bigint) RETURNS @extschema@.pg_procmem_size
AS 'MODULE_PATHNAME', 'pg_procmem_size_rounded'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

CREATE CAST (@extschema@.pg_procmem_size AS bigint) WITHOUT FUNCTION AS IMPLICIT;
CREATE CAST (bigint AS @extschema@.pg_procmem_size) WITHOUT FUNCTION AS ASSIGNMENT;
-- from integer ((512 * 1024)::pg_procmem_size) and numeric (a sum of
-- bigints), as to bigint: bigint's own conversions
CREATE FUNCTION pg_procmem_size(integer) RETURNS @extschema@.pg_procmem_size
LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF AS 'int48';
CREATE FUNCTION pg_procmem_size(numeric) RETURNS @extschema@.pg_procmem_size
LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE AS 'numeric_int8';
CREATE CAST (integer AS @extschema@.pg_procmem_size) WITH FUNCTION @extschema@.pg_procmem_size(integer) AS ASSIGNMENT;
CREATE CAST (numeric AS @extschema@.pg_procmem_size) WITH FUNCTION @extschema@.pg_procmem_size(numeric) AS ASSIGNMENT;

-- bigint's comparisons and hashes, on the same 8 bytes
CREATE FUNCTION pg_procmem_size_eq(@extschema@.pg_procmem_size, @extschema@.pg_procmem_size) RETURNS boolean
LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF AS 'int8eq';
CREATE FUNCTION pg_procmem_size_ne(@extschema@.pg_procmem_size, @extschema@.pg_procmem_size) RETURNS boolean
LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF AS 'int8ne';
CREATE FUNCTION pg_procmem_size_lt(@extschema@.pg_procmem_size, @extschema@.pg_procmem_size) RETURNS boolean
LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF AS 'int8lt';
CREATE FUNCTION pg_procmem_size_le(@extschema@.pg_procmem_size, @extschema@.pg_procmem_size) RETURNS boolean
LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF AS 'int8le';
CREATE FUNCTION pg_procmem_size_gt(@extschema@.pg_procmem_size, @extschema@.pg_procmem_size) RETURNS boolean
LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF AS 'int8gt';
CREATE FUNCTION pg_procmem_size_ge(@extschema@.pg_procmem_size, @extschema@.pg_procmem_size) RETURNS boolean
LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF AS 'int8ge';
CREATE FUNCTION pg_procmem_size_cmp(@extschema@.pg_procmem_size, @extschema@.pg_procmem_size) RETURNS integer
LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF AS 'btint8cmp';
CREATE FUNCTION pg_procmem_size_sortsupport(internal) RETURNS void
LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE AS 'btint8sortsupport';
CREATE FUNCTION pg_procmem_size_hash(@extschema@.pg_procmem_size) RETURNS integer
LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF AS 'hashint8';
CREATE FUNCTION pg_procmem_size_hash_extended(@extschema@.pg_procmem_size, bigint) RETURNS bigint
LANGUAGE internal IMMUTABLE STRICT PARALLEL SAFE LEAKPROOF AS 'hashint8extended';

CREATE OPERATOR = (
	LEFTARG = @extschema@.pg_procmem_size, RIGHTARG = @extschema@.pg_procmem_size,
	FUNCTION = @extschema@.pg_procmem_size_eq,
	COMMUTATOR = OPERATOR(@extschema@.=), NEGATOR = OPERATOR(@extschema@.<>),
	RESTRICT = pg_catalog.eqsel, JOIN = pg_catalog.eqjoinsel, HASHES, MERGES
);
CREATE OPERATOR <> (
	LEFTARG = @extschema@.pg_procmem_size, RIGHTARG = @extschema@.pg_procmem_size,
	FUNCTION = @extschema@.pg_procmem_size_ne,
	COMMUTATOR = OPERATOR(@extschema@.<>), NEGATOR = OPERATOR(@extschema@.=),
	RESTRICT = pg_catalog.neqsel, JOIN = pg_catalog.neqjoinsel
);
CREATE OPERATOR < (
	LEFTARG = @extschema@.pg_procmem_size, RIGHTARG = @extschema@.pg_procmem_size,
	FUNCTION = @extschema@.pg_procmem_size_lt,
	COMMUTATOR = OPERATOR(@extschema@.>), NEGATOR = OPERATOR(@extschema@.>=),
	RESTRICT = pg_catalog.scalarltsel, JOIN = pg_catalog.scalarltjoinsel
);
CREATE OPERATOR <= (
	LEFTARG = @extschema@.pg_procmem_size, RIGHTARG = @extschema@.pg_procmem_size,
	FUNCTION = @extschema@.pg_procmem_size_le,
	COMMUTATOR = OPERATOR(@extschema@.>=), NEGATOR = OPERATOR(@extschema@.>),
	RESTRICT = pg_catalog.scalarlesel, JOIN = pg_catalog.scalarlejoinsel
);
CREATE OPERATOR > (
	LEFTARG = @extschema@.pg_procmem_size, RIGHTARG = @extschema@.pg_procmem_size,
	FUNCTION = @extschema@.pg_procmem_size_gt,
	COMMUTATOR = OPERATOR(@extschema@.<), NEGATOR = OPERATOR(@extschema@.<=),
	RESTRICT = pg_catalog.scalargtsel, JOIN = pg_catalog.scalargtjoinsel
);
CREATE OPERATOR >= (
	LEFTARG = @extschema@.pg_procmem_size, RIGHTARG = @extschema@.pg_procmem_size,
	FUNCTION = @extschema@.pg_procmem_size_ge,
	COMMUTATOR = OPERATOR(@extschema@.<=), NEGATOR = OPERATOR(@extschema@.<),
	RESTRICT = pg_catalog.scalargesel, JOIN = pg_catalog.scalargejoinsel
);

-- the defaults: ORDER BY, indexes, DISTINCT, GROUP BY, merge and hash joins
CREATE OPERATOR CLASS pg_procmem_size_ops DEFAULT FOR TYPE @extschema@.pg_procmem_size USING btree AS
	OPERATOR 1 @extschema@.<,
	OPERATOR 2 @extschema@.<=,
	OPERATOR 3 @extschema@.=,
	OPERATOR 4 @extschema@.>=,
	OPERATOR 5 @extschema@.>,
	FUNCTION 1 @extschema@.pg_procmem_size_cmp(@extschema@.pg_procmem_size, @extschema@.pg_procmem_size),
	FUNCTION 2 @extschema@.pg_procmem_size_sortsupport(internal),
	-- equal means identical: indexes may deduplicate
	FUNCTION 4 pg_catalog.btequalimage(oid);
CREATE OPERATOR CLASS pg_procmem_size_hash_ops DEFAULT FOR TYPE @extschema@.pg_procmem_size USING hash AS
	OPERATOR 1 @extschema@.=,
	FUNCTION 1 @extschema@.pg_procmem_size_hash(@extschema@.pg_procmem_size),
	FUNCTION 2 @extschema@.pg_procmem_size_hash_extended(@extschema@.pg_procmem_size, bigint);

-- Granted, not left to the default: see the head of this file.
GRANT USAGE ON TYPE @extschema@.pg_procmem_size TO PUBLIC;
GRANT EXECUTE ON FUNCTION
	@extschema@.pg_procmem_size_in(cstring), @extschema@.pg_procmem_size_out(@extschema@.pg_procmem_size),
	@extschema@.pg_procmem_size_recv(internal), @extschema@.pg_procmem_size_send(@extschema@.pg_procmem_size),
	@extschema@.pg_procmem_size_rounded(bigint),
	@extschema@.pg_procmem_size(integer), @extschema@.pg_procmem_size(numeric),
	@extschema@.pg_procmem_size_eq(@extschema@.pg_procmem_size, @extschema@.pg_procmem_size),
	@extschema@.pg_procmem_size_ne(@extschema@.pg_procmem_size, @extschema@.pg_procmem_size),
	@extschema@.pg_procmem_size_lt(@extschema@.pg_procmem_size, @extschema@.pg_procmem_size),
	@extschema@.pg_procmem_size_le(@extschema@.pg_procmem_size, @extschema@.pg_procmem_size),
	@extschema@.pg_procmem_size_gt(@extschema@.pg_procmem_size, @extschema@.pg_procmem_size),
	@extschema@.pg_procmem_size_ge(@extschema@.pg_procmem_size, @extschema@.pg_procmem_size),
	@extschema@.pg_procmem_size_cmp(@extschema@.pg_procmem_size, @extschema@.pg_procmem_size),
	@extschema@.pg_procmem_size_sortsupport(internal),
	@extschema@.pg_procmem_size_hash(@extschema@.pg_procmem_size),
	@extschema@.pg_procmem_size_hash_extended(@extschema@.pg_procmem_size, bigint)
TO PUBLIC;

-- Every process of this server, read from /proc: the functions the views
-- are built on. overhead is private_anon + page_tables + kernel (the
-- kernel's own memory for the process: its stack, page-table top and slab
-- objects, counted from its threads, mappings and open files); the columns
-- after unreadable split private_anon by what holds it (1.2.0 appended
-- them, so that the library still serves the 1.1.0 definitions). dsm is
-- what the dynamic shared memory segments the process maps hold, never in
-- overhead (they outlive the process); group_dsm, what the segments only
-- its parallel group maps hold, each counted once (1.3.0; NULL from
-- pg_procmem_process(), which reads one process).

-- with_pss also reads /proc/PID/smaps_rollup (the pss* and private columns
-- are NULL without it): that walks every page-table entry of the process,
-- shared_buffers included, so it costs milliseconds per backend that has
-- touched a large buffer pool without huge pages.
CREATE FUNCTION pg_procmem_processes(
	IN with_pss boolean DEFAULT false,
	OUT pid integer,
	OUT backend_type text,
	OUT overhead bigint,
	OUT overhead_method text,
	OUT private_anon bigint,
	OUT cow_shared_anon bigint,
	OUT page_tables bigint,
	OUT rss bigint,
	OUT rss_anon bigint,
	OUT rss_file bigint,
	OUT rss_shmem bigint,
	OUT pss bigint,
	OUT pss_anon bigint,
	OUT pss_file bigint,
	OUT pss_shmem bigint,
	OUT private bigint,
	OUT swap bigint,
	OUT swap_pss bigint,
	OUT hugetlb bigint,
	OUT peak_rss bigint,
	OUT oom_score integer,
	OUT oom_score_adj integer,
	OUT unreadable text[],
	OUT kernel bigint,
	OUT heap bigint,
	OUT mmap bigint,
	OUT stack bigint,
	OUT postgres_data bigint,
	OUT jit bigint,
	OUT libraries bigint,
	OUT dsm bigint,
	OUT dsm_segments integer,
	OUT group_dsm bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_procmem_processes'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED ROWS 100;

COMMENT ON FUNCTION pg_procmem_processes(boolean) IS
'memory of every live process of this server, read from /proc';

CREATE FUNCTION pg_procmem_process(
	IN pid integer,
	IN with_pss boolean DEFAULT false,
	OUT pid integer,
	OUT backend_type text,
	OUT overhead bigint,
	OUT overhead_method text,
	OUT private_anon bigint,
	OUT cow_shared_anon bigint,
	OUT page_tables bigint,
	OUT rss bigint,
	OUT rss_anon bigint,
	OUT rss_file bigint,
	OUT rss_shmem bigint,
	OUT pss bigint,
	OUT pss_anon bigint,
	OUT pss_file bigint,
	OUT pss_shmem bigint,
	OUT private bigint,
	OUT swap bigint,
	OUT swap_pss bigint,
	OUT hugetlb bigint,
	OUT peak_rss bigint,
	OUT oom_score integer,
	OUT oom_score_adj integer,
	OUT unreadable text[],
	OUT kernel bigint,
	OUT heap bigint,
	OUT mmap bigint,
	OUT stack bigint,
	OUT postgres_data bigint,
	OUT jit bigint,
	OUT libraries bigint,
	OUT dsm bigint,
	OUT dsm_segments integer,
	OUT group_dsm bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_procmem_process'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED ROWS 1;

COMMENT ON FUNCTION pg_procmem_process(integer, boolean) IS
'memory of one process of this server; ERROR for a pid that is not one';

REVOKE ALL ON FUNCTION pg_procmem_processes(boolean) FROM PUBLIC;
REVOKE ALL ON FUNCTION pg_procmem_process(integer, boolean) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION pg_procmem_processes(boolean) TO pg_read_all_stats;
GRANT EXECUTE ON FUNCTION pg_procmem_process(integer, boolean) TO pg_read_all_stats;

-- Every backend's memory-context totals, as the backends published them
-- (needs pg_procmem in shared_preload_libraries; with missing_ok, no rows
-- without it instead of an ERROR).
CREATE FUNCTION pg_procmem_backend_contexts(
	IN missing_ok boolean DEFAULT false,
	OUT pid integer,
	OUT backend_start timestamptz,
	OUT published_at timestamptz,
	OUT publications integer,
	OUT context_bytes bigint,
	OUT context_free_bytes bigint,
	OUT context_used_bytes bigint,
	OUT contexts integer,
	OUT context_peak_bytes bigint,
	OUT peak_at timestamptz,
	OUT largest_contexts text[],
	OUT largest_idents text[],
	OUT largest_bytes bigint[],
	OUT peak_largest_contexts text[],
	OUT peak_largest_bytes bigint[])
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_procmem_backend_contexts'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED ROWS 100;

-- The caller's own memory-context totals, live (the sum
-- pg_backend_memory_contexts shows, which is superuser-only before 15).
CREATE FUNCTION pg_procmem_own_contexts(
	OUT context_bytes bigint,
	OUT context_free_bytes bigint,
	OUT contexts integer)
RETURNS record
AS 'MODULE_PATHNAME', 'pg_procmem_own_contexts'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

-- Every backend's memory contexts: totals, peak, largest contexts, and
-- how old the figures are.
CREATE VIEW pg_procmem_contexts AS
SELECT c.pid,
	   a.backend_type,
	   a.datname,
	   a.usename,
	   a.application_name,
	   a.state,
	   c.context_bytes,
	   c.context_free_bytes,
	   c.context_used_bytes,
	   c.contexts,
	   c.context_peak_bytes,
	   c.peak_at,
	   c.peak_largest_contexts,
	   c.peak_largest_bytes,
	   c.largest_contexts,
	   c.largest_idents,
	   c.largest_bytes,
	   c.published_at,
	   pg_catalog.clock_timestamp() OPERATOR(pg_catalog.-) c.published_at AS age,
	   c.publications,
	   c.backend_start
FROM @extschema@.pg_procmem_backend_contexts(false) AS c
	 LEFT JOIN pg_catalog.pg_stat_activity AS a
	 ON a.pid OPERATOR(pg_catalog.=) c.pid;

COMMENT ON VIEW pg_procmem_contexts IS
'every backend''s memory-context totals and peak, as last published (needs shared_preload_libraries)';

REVOKE ALL ON FUNCTION pg_procmem_backend_contexts(boolean) FROM PUBLIC;
REVOKE ALL ON FUNCTION pg_procmem_own_contexts() FROM PUBLIC;
REVOKE ALL ON pg_procmem_contexts FROM PUBLIC;
GRANT EXECUTE ON FUNCTION pg_procmem_backend_contexts(boolean) TO pg_read_all_stats;
GRANT EXECUTE ON FUNCTION pg_procmem_own_contexts() TO pg_read_all_stats;
GRANT SELECT ON pg_procmem_contexts TO pg_read_all_stats;

-- The headline: one row per live server process, with who it is from
-- pg_stat_activity (LEFT JOIN: the postmaster and the logger have no row
-- there) and, for the calling backend, PostgreSQL's own allocation totals.
-- Cheap whatever shared_buffers is: it never reads smaps_rollup.
CREATE VIEW pg_procmem_backends AS
SELECT p.pid,
	   COALESCE(a.backend_type, p.backend_type) AS backend_type,
	   a.datname,
	   a.usename,
	   a.application_name,
	   a.client_addr,
	   a.state,
	   p.overhead,
	   p.overhead_method,
	   p.private_anon,
	   p.cow_shared_anon,
	   p.page_tables,
	   p.kernel,
	   p.rss,
	   p.rss_anon,
	   p.rss_file,
	   p.rss_shmem,
	   p.swap,
	   p.hugetlb,
	   p.peak_rss,
	   p.oom_score,
	   p.oom_score_adj,
	   COALESCE(own.context_bytes, pub.context_bytes) AS context_bytes,
	   COALESCE(own.context_free_bytes, pub.context_free_bytes) AS context_free_bytes,
	   pub.context_peak_bytes,
	   p.unreadable,
	   a.backend_start,
	   a.state_change,
	   a.wait_event_type,
	   a.wait_event,
	   a.query_start,
	   a.leader_pid,
	   a.query_id,
	   a.query,
	   p.dsm,
	   p.group_dsm
FROM @extschema@.pg_procmem_processes(false) AS p
	 LEFT JOIN pg_catalog.pg_stat_activity AS a
	 ON a.pid OPERATOR(pg_catalog.=) p.pid
	 LEFT JOIN (SELECT pg_catalog.pg_backend_pid() AS pid, o.*
				FROM @extschema@.pg_procmem_own_contexts() AS o) AS own
	 ON own.pid OPERATOR(pg_catalog.=) p.pid
	 LEFT JOIN @extschema@.pg_procmem_backend_contexts(true) AS pub
	 ON pub.pid OPERATOR(pg_catalog.=) p.pid;

COMMENT ON VIEW pg_procmem_backends IS
'every live process of this server: who it is, and what it really costs in memory';

-- What overhead is made of, for every process: its exclusive anonymous
-- memory by the mapping that holds it, its page tables and the kernel's
-- own memory for it. heap .. libraries add up to private_anon, and with
-- page_tables and kernel to overhead (by the pagemap+kernel method). The
-- same walk as pg_procmem_backends: no extra pass over the mappings.
CREATE VIEW pg_procmem_breakdown AS
SELECT p.pid,
	   COALESCE(a.backend_type, p.backend_type) AS backend_type,
	   a.datname,
	   a.usename,
	   a.application_name,
	   a.state,
	   p.overhead,
	   p.overhead_method,
	   p.heap,
	   p.mmap,
	   p.stack,
	   p.postgres_data,
	   p.jit,
	   p.libraries,
	   p.page_tables,
	   p.kernel,
	   p.private_anon,
	   p.unreadable
FROM @extschema@.pg_procmem_processes(false) AS p
	 LEFT JOIN pg_catalog.pg_stat_activity AS a
	 ON a.pid OPERATOR(pg_catalog.=) p.pid;

COMMENT ON VIEW pg_procmem_breakdown IS
'what each process''s overhead is made of: heap, other anonymous mappings, stack, copies of the executable''s data, JIT libraries, other libraries, page tables, kernel';

-- Opt-in: the PSS figures, and the classic Pss_Anon + VmPTE estimate beside
-- the exact overhead. Expensive with huge_pages=off and a large, touched
-- shared_buffers (see pg_procmem_processes above).
CREATE VIEW pg_procmem_backends_pss AS
SELECT p.pid,
	   COALESCE(a.backend_type, p.backend_type) AS backend_type,
	   a.datname,
	   a.usename,
	   a.application_name,
	   a.state,
	   p.overhead,
	   p.overhead_method,
	   p.pss_anon OPERATOR(pg_catalog.+) p.page_tables AS pss_overhead,
	   p.rss,
	   p.pss,
	   p.pss_anon,
	   p.pss_file,
	   p.pss_shmem,
	   p.private,
	   p.swap_pss,
	   p.page_tables,
	   p.unreadable
FROM @extschema@.pg_procmem_processes(true) AS p
	 LEFT JOIN pg_catalog.pg_stat_activity AS a
	 ON a.pid OPERATOR(pg_catalog.=) p.pid;

COMMENT ON VIEW pg_procmem_backends_pss IS
'PSS figures of every live process of this server (expensive without huge pages)';

-- Totals per backend type, database, user and application.
CREATE VIEW pg_procmem_summary AS
SELECT CASE WHEN GROUPING(b.backend_type) OPERATOR(pg_catalog.=) 0 THEN 'backend_type'
			WHEN GROUPING(b.datname) OPERATOR(pg_catalog.=) 0 THEN 'database'
			WHEN GROUPING(b.usename) OPERATOR(pg_catalog.=) 0 THEN 'user'
			ELSE 'application' END AS grouped_by,
	   CASE WHEN GROUPING(b.backend_type) OPERATOR(pg_catalog.=) 0 THEN b.backend_type
			WHEN GROUPING(b.datname) OPERATOR(pg_catalog.=) 0 THEN b.datname::text
			WHEN GROUPING(b.usename) OPERATOR(pg_catalog.=) 0 THEN b.usename::text
			ELSE b.application_name END AS name,
	   pg_catalog.count(*) AS processes,
	   pg_catalog.sum(b.overhead)::bigint AS total_overhead,
	   pg_catalog.avg(b.overhead)::bigint AS avg_overhead,
	   pg_catalog.sum(b.page_tables)::bigint AS total_page_tables,
	   pg_catalog.sum(b.rss)::bigint AS total_rss,
	   pg_catalog.count(*) FILTER (WHERE b.state OPERATOR(pg_catalog.=) 'idle') AS idle,
	   pg_catalog.sum(b.overhead) FILTER (WHERE b.state OPERATOR(pg_catalog.=) 'idle')::bigint
		   AS idle_overhead,
	   pg_catalog.count(*) FILTER (WHERE b.state OPERATOR(pg_catalog.~~) 'idle in transaction%')
		   AS idle_in_transaction,
	   pg_catalog.sum(b.overhead) FILTER (WHERE b.state OPERATOR(pg_catalog.~~) 'idle in transaction%')::bigint
		   AS idle_in_transaction_overhead
FROM (SELECT backend_type, datname, usename, overhead, page_tables, rss, state,
			 NULLIF(application_name, '') AS application_name	-- background processes have ''
	  FROM @extschema@.pg_procmem_backends) AS b
GROUP BY GROUPING SETS ((b.backend_type), (b.datname), (b.usename), (b.application_name));

COMMENT ON VIEW pg_procmem_summary IS
'overhead, page tables and rss totals per backend type, database, user and application';

REVOKE ALL ON pg_procmem_backends FROM PUBLIC;
REVOKE ALL ON pg_procmem_backends_pss FROM PUBLIC;
REVOKE ALL ON pg_procmem_summary FROM PUBLIC;
REVOKE ALL ON pg_procmem_breakdown FROM PUBLIC;
GRANT SELECT ON pg_procmem_backends, pg_procmem_backends_pss, pg_procmem_summary, pg_procmem_breakdown
	TO pg_read_all_stats;

-- The machine and the server's memory cgroup, one row. Bytes, but the
-- hugepages_* counts; NULL where a file is missing or a limit is "max".
CREATE FUNCTION pg_procmem_system_info(
	OUT mem_total bigint,
	OUT mem_available bigint,
	OUT page_tables bigint,
	OUT kernel_stack bigint,
	OUT shmem bigint,
	OUT committed_as bigint,
	OUT commit_limit bigint,
	OUT swap_total bigint,
	OUT swap_free bigint,
	OUT hugepages_total bigint,
	OUT hugepages_free bigint,
	OUT hugepages_rsvd bigint,
	OUT hugepages_surp bigint,
	OUT hugepage_size bigint,
	OUT anon_hugepages bigint,
	OUT overcommit_memory integer,
	OUT transparent_hugepage text,
	OUT kernel_release text,
	OUT kernel_version_num integer,
	OUT cgroup_version integer,
	OUT cgroup_path text,
	OUT cgroup_usage bigint,
	OUT cgroup_limit bigint,
	OUT cgroup_effective_limit bigint,
	OUT cgroup_room bigint,
	OUT cgroup_high bigint,
	OUT cgroup_swap_usage bigint,
	OUT cgroup_anon bigint,
	OUT cgroup_file bigint,
	OUT cgroup_shmem bigint,
	OUT cgroup_pagetables bigint,
	OUT cgroup_kernel_stack bigint,
	OUT cgroup_kernel bigint,
	OUT cgroup_sock bigint,
	OUT cgroup_oom_events bigint,
	OUT cgroup_oom_kills bigint,
	OUT cgroup_failcnt bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'pg_procmem_system_info'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

-- CPUs, the last-level cache, the kernel's writeback, overcommit and swap
-- settings, and the memory cgroup level (the server's or an ancestor) whose
-- room is the smallest share of its limit: what pg_procmem_advice needs
-- beyond pg_procmem_system_info.
CREATE FUNCTION pg_procmem_machine_info(
	OUT cpus integer,
	OUT cpu_cache_bytes bigint,
	OUT cpu_cache_level integer,
	OUT dirty_ratio integer,
	OUT dirty_background_ratio integer,
	OUT dirty_bytes bigint,
	OUT dirty_background_bytes bigint,
	OUT overcommit_ratio integer,
	OUT swappiness integer,
	OUT transparent_hugepage_defrag text,
	OUT cgroup_tightest_limit bigint,
	OUT cgroup_tightest_room bigint)
RETURNS record
AS 'MODULE_PATHNAME', 'pg_procmem_machine_info'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

CREATE VIEW pg_procmem_system AS
SELECT s.*,
	   s.mem_total OPERATOR(pg_catalog.-) s.mem_available AS mem_used,
	   s.swap_total OPERATOR(pg_catalog.-) s.swap_free AS swap_used
FROM @extschema@.pg_procmem_system_info() AS s;

COMMENT ON VIEW pg_procmem_system IS
'the machine''s memory, huge pages, overcommit and THP settings, and the server''s memory cgroup';

REVOKE ALL ON FUNCTION pg_procmem_system_info() FROM PUBLIC;
REVOKE ALL ON FUNCTION pg_procmem_machine_info() FROM PUBLIC;
REVOKE ALL ON pg_procmem_system FROM PUBLIC;
GRANT EXECUTE ON FUNCTION pg_procmem_system_info() TO pg_read_all_stats;
GRANT EXECUTE ON FUNCTION pg_procmem_machine_info() TO pg_read_all_stats;
GRANT SELECT ON pg_procmem_system TO pg_read_all_stats;

-- The main shared memory segment (resident part, whoever touched it), the
-- DSM segments this server's processes map, and the postmaster's VmPeak.
-- with_usage = false skips what costs: the resident part and the DSM
-- segments are NULL then (the huge pages view needs neither). Above 256 MB
-- the resident part is sampled (main_segment_resident_exact = false): at
-- most one 256th of the segment off per boundary between touched and
-- untouched memory, see docs/views.md.
CREATE FUNCTION pg_procmem_shared_memory(
	IN with_usage boolean DEFAULT true,
	OUT main_segment_size bigint,
	OUT main_segment_resident bigint,
	OUT main_segment_hugetlb boolean,
	OUT dsm_segments integer,
	OUT dsm_bytes bigint,
	OUT postmaster_vm_peak bigint,
	OUT main_segment_resident_exact boolean)
RETURNS record
AS 'MODULE_PATHNAME', 'pg_procmem_shared_memory'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

COMMENT ON FUNCTION pg_procmem_shared_memory(boolean) IS
'the main shared memory segment, the DSM segments and the postmaster''s VmPeak';

-- Page tables of every process now, and with the main shared memory segment
-- in huge pages: counted from the address ranges each process uses (exact
-- with PAGEMAP_SCAN, Linux 6.7+), not from the segment's size.
CREATE FUNCTION pg_procmem_page_tables(
	OUT pid integer,
	OUT page_tables bigint,
	OUT page_tables_with_huge_pages bigint,
	OUT exact boolean,
	OUT unreadable text[])
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_procmem_page_tables'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED ROWS 100;

COMMENT ON FUNCTION pg_procmem_page_tables() IS
'page tables of every live process of this server, now and with the main shared memory segment in huge pages';

-- Do I need huge pages? What is reserved, what the page tables cost now,
-- what they would cost with huge pages, and what to do.
CREATE VIEW pg_procmem_hugepages AS
WITH s AS (
	SELECT * FROM @extschema@.pg_procmem_system_info()
), p AS (
	SELECT pg_catalog.sum(t.page_tables)::bigint AS page_tables,
		   -- each process's tables with the main segment in huge pages, counted
		   -- from the ranges it uses (pg_procmem_page_tables()); where they could
		   -- not be read, no saving is assumed
		   pg_catalog.sum(COALESCE(t.page_tables_with_huge_pages, t.page_tables))::bigint
			   AS page_tables_with_huge_pages
	FROM @extschema@.pg_procmem_page_tables() AS t
), m AS (
	SELECT * FROM @extschema@.pg_procmem_shared_memory(false)
), h AS (
	SELECT pg_catalog.current_setting('huge_pages') AS huge_pages,
		   pg_catalog.current_setting('huge_page_size') AS huge_page_size,
		   -- both are computed by PostgreSQL 15 and later; NULL before
		   pg_catalog.pg_size_bytes(pg_catalog.current_setting('shared_memory_size', true)) AS shared_memory_size,
		   NULLIF(pg_catalog.current_setting('shared_memory_size_in_huge_pages', true)::bigint, -1)
			   AS shared_memory_size_in_huge_pages,
		   m.postmaster_vm_peak,
		   ((m.postmaster_vm_peak OPERATOR(pg_catalog.+) s.hugepage_size) OPERATOR(pg_catalog.-) 1)
			   OPERATOR(pg_catalog./) s.hugepage_size AS vm_peak_huge_pages,
		   s.hugepage_size, s.hugepages_total, s.hugepages_free, s.hugepages_rsvd, s.hugepages_surp,
		   m.main_segment_hugetlb AS in_use,
		   p.page_tables, p.page_tables_with_huge_pages,
		   s.mem_total
	FROM p, s, m
)
SELECT h.huge_pages, h.huge_page_size, h.shared_memory_size, h.shared_memory_size_in_huge_pages,
	   h.postmaster_vm_peak, h.vm_peak_huge_pages,
	   h.hugepage_size, h.hugepages_total, h.hugepages_free, h.hugepages_rsvd, h.hugepages_surp,
	   h.in_use,
	   h.page_tables,
	   CASE WHEN h.in_use THEN h.page_tables ELSE h.page_tables_with_huge_pages END
		   AS page_tables_with_huge_pages,
	   CASE v.answer
		   WHEN 'in use, try' THEN
			   'huge pages are in use; set huge_pages = on so that a restart without enough reserved pages fails instead of silently running without them'
		   WHEN 'in use' THEN
			   'huge pages are in use; nothing to do'
		   WHEN 'restart' THEN
			   'enough huge pages are free but the server does not use them: restart it'
		   WHEN 'optional' THEN
			   pg_catalog.format('optional: the page tables of the server''s processes would shrink only from %s to about %s now '
								 '(less than 1%% of RAM); with a larger shared_buffers, set vm.nr_hugepages >= %s and huge_pages = on',
								 pg_catalog.pg_size_pretty(h.page_tables),
								 pg_catalog.pg_size_pretty(h.page_tables_with_huge_pages), v.pages)
		   ELSE
			   pg_catalog.format('set vm.nr_hugepages >= %s (now %s) and huge_pages = on, then restart: '
								 'the page tables of the server''s processes would shrink from %s to about %s',
								 v.pages, h.hugepages_total,
								 pg_catalog.pg_size_pretty(h.page_tables),
								 pg_catalog.pg_size_pretty(h.page_tables_with_huge_pages))
	   END AS recommendation,
	   -- the answer in one terminal line (at most 72 characters)
	   CASE v.answer
		   WHEN 'in use, try' THEN 'already in use; make it huge_pages = on'
		   WHEN 'in use' THEN 'already in use'
		   WHEN 'restart' THEN 'yes, and enough are reserved: restart the server'
		   WHEN 'optional' THEN
			   pg_catalog.format('optional: page tables %s, about %s with them',
								 pg_catalog.pg_size_pretty(h.page_tables),
								 pg_catalog.pg_size_pretty(h.page_tables_with_huge_pages))
		   ELSE pg_catalog.format('yes: page tables %s, about %s with them; see recommendation',
								  pg_catalog.pg_size_pretty(h.page_tables),
								  pg_catalog.pg_size_pretty(h.page_tables_with_huge_pages))
	   END AS summary
FROM h,
	 LATERAL (SELECT CASE
						 WHEN h.in_use AND h.huge_pages OPERATOR(pg_catalog.=) 'try' THEN 'in use, try'
						 WHEN h.in_use THEN 'in use'
						 WHEN h.huge_pages OPERATOR(pg_catalog.<>) 'off'
							  AND (h.hugepages_free OPERATOR(pg_catalog.-) h.hugepages_rsvd) OPERATOR(pg_catalog.>=)
							  COALESCE(h.shared_memory_size_in_huge_pages, h.vm_peak_huge_pages) THEN 'restart'
						 WHEN (h.page_tables OPERATOR(pg_catalog.-) h.page_tables_with_huge_pages)
							  OPERATOR(pg_catalog.<) (h.mem_total OPERATOR(pg_catalog./) 100)
							  AND COALESCE(h.shared_memory_size, 0) OPERATOR(pg_catalog.<) 8589934592 THEN 'optional'
						 ELSE 'yes' END AS answer,
					 COALESCE(h.shared_memory_size_in_huge_pages, h.vm_peak_huge_pages) AS pages) AS v;

COMMENT ON VIEW pg_procmem_hugepages IS
'huge page settings, reservations, page-table cost now and with huge pages, what to do, and the answer in one line';

REVOKE ALL ON FUNCTION pg_procmem_shared_memory(boolean) FROM PUBLIC;
REVOKE ALL ON FUNCTION pg_procmem_page_tables() FROM PUBLIC;
REVOKE ALL ON pg_procmem_hugepages FROM PUBLIC;
GRANT EXECUTE ON FUNCTION pg_procmem_shared_memory(boolean) TO pg_read_all_stats;
GRANT EXECUTE ON FUNCTION pg_procmem_page_tables() TO pg_read_all_stats;
GRANT SELECT ON pg_procmem_hugepages TO pg_read_all_stats;

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

-- Who will the OOM killer take, and what happens then.
CREATE VIEW pg_procmem_oom AS
SELECT pg_catalog.rank() OVER (ORDER BY p.oom_score DESC) AS rank,
	   p.pid,
	   COALESCE(a.backend_type, p.backend_type) AS backend_type,
	   p.oom_score,
	   p.oom_score_adj,
	   -- Linux >= 5.9 shows (1000 + points * 1000 / totalpages) * 2 / 3 in
	   -- integers: a score s comes from 1000 + share (in 0.1%) of at most
	   -- (3s + 2) / 2, so 666 is a share of 0; before 5.9, share / 10
	   pg_catalog.round(CASE WHEN p.oom_score_adj OPERATOR(pg_catalog.=) -1000 THEN NULL
							 WHEN s.kernel_version_num OPERATOR(pg_catalog.>=) 50009
							 THEN ((((p.oom_score OPERATOR(pg_catalog.*) 3) OPERATOR(pg_catalog.+) 2)
									OPERATOR(pg_catalog./) 2) OPERATOR(pg_catalog.-) 1000) OPERATOR(pg_catalog./) 10.0
							 ELSE p.oom_score OPERATOR(pg_catalog./) 10.0 END, 1) AS badness_pct,
	   p.oom_score_adj OPERATOR(pg_catalog.=) -1000 AS protected,
	   p.rss, p.rss_shmem, p.swap, p.page_tables, p.overhead,
	   -- the postmaster restarts these alone; any other child killed by a
	   -- signal, with a PGPROC or not (a connection starting or exiting),
	   -- makes it reinitialize shared memory and end every session (a crash
	   -- restart). Short, so that the README's query fits 80 columns: the
	   -- server without its postmaster stays down until something restarts it.
	   CASE WHEN p.backend_type OPERATOR(pg_catalog.=) 'postmaster'
			THEN 'server stays down'
			WHEN p.backend_type OPERATOR(pg_catalog.=) ANY (ARRAY['logger', 'stats collector'])
			THEN 'restarted alone'
			WHEN pg_catalog.current_setting('restart_after_crash')::boolean
			THEN 'every session ends'
			ELSE 'server shuts down' END AS if_killed
FROM @extschema@.pg_procmem_processes() AS p
	 LEFT JOIN pg_catalog.pg_stat_activity AS a ON a.pid OPERATOR(pg_catalog.=) p.pid,
	 @extschema@.pg_procmem_system_info() AS s;

COMMENT ON VIEW pg_procmem_oom IS
'every server process ranked by oom_score, with what killing it would do';

REVOKE ALL ON pg_procmem_oom FROM PUBLIC;
GRANT SELECT ON pg_procmem_oom TO pg_read_all_stats;

-- The memory settings the headroom and the advice weigh, in bytes, one row
-- (an internal view: the two read the same figures).
CREATE VIEW pg_procmem_memory_settings AS
SELECT pg_catalog.current_setting('max_connections')::integer AS max_connections,
	   pg_catalog.current_setting('superuser_reserved_connections')::integer AS superuser_reserved_connections,
	   -- slots for roles with pg_use_reserved_connections (PostgreSQL 16+)
	   COALESCE(pg_catalog.current_setting('reserved_connections', true)::integer, 0) AS reserved_connections,
	   pg_catalog.pg_size_bytes(pg_catalog.current_setting('work_mem')) AS work_mem,
	   pg_catalog.current_setting('hash_mem_multiplier')::float8 AS hash_mem_multiplier,
	   pg_catalog.pg_size_bytes(pg_catalog.current_setting('maintenance_work_mem')) AS maintenance_work_mem,
	   CASE WHEN pg_catalog.current_setting('autovacuum_work_mem') OPERATOR(pg_catalog.=) '-1'
			THEN pg_catalog.pg_size_bytes(pg_catalog.current_setting('maintenance_work_mem'))
			ELSE pg_catalog.pg_size_bytes(pg_catalog.current_setting('autovacuum_work_mem')) END
		   AS autovacuum_work_mem,
	   pg_catalog.current_setting('autovacuum_max_workers')::integer AS autovacuum_max_workers,
	   -- local buffers for temporary tables: a backend keeps those it filled
	   -- until it exits
	   pg_catalog.pg_size_bytes(pg_catalog.current_setting('temp_buffers')) AS temp_buffers;

COMMENT ON VIEW pg_procmem_memory_settings IS
'internal: the memory settings pg_procmem_headroom and pg_procmem_advice weigh, in bytes';

-- How many more connections fit, and how much work_mem could be asked for.
CREATE VIEW pg_procmem_headroom AS
WITH b AS (
	SELECT pg_catalog.count(*) FILTER (WHERE backend_type OPERATOR(pg_catalog.=) 'client backend') AS client_backends,
		   pg_catalog.count(*) FILTER (WHERE backend_type OPERATOR(pg_catalog.=) 'client backend'
									   AND state OPERATOR(pg_catalog.=) 'idle') AS idle_client_backends,
		   pg_catalog.avg(overhead) FILTER (WHERE backend_type OPERATOR(pg_catalog.=) 'client backend'
											AND state OPERATOR(pg_catalog.=) 'idle')::bigint AS avg_idle_overhead,
		   -- with no idle connection to go by (a fresh server: only the
		   -- caller's, running this query), the smallest client backend: an
		   -- upper bound for an idle one, so the answer errs low
		   pg_catalog.min(overhead) FILTER (WHERE backend_type OPERATOR(pg_catalog.=) 'client backend')
			   AS min_client_overhead
	FROM @extschema@.pg_procmem_backends
), r AS (
	SELECT s.mem_available,
		   s.cgroup_effective_limit,
		   s.cgroup_usage,
		   s.cgroup_file OPERATOR(pg_catalog.-) s.cgroup_shmem AS cgroup_page_cache,
		   s.cgroup_room
	FROM @extschema@.pg_procmem_system_info() AS s
)
SELECT r.mem_available,
	   r.cgroup_effective_limit,
	   r.cgroup_usage,
	   r.cgroup_page_cache,
	   r.cgroup_room,
	   LEAST(r.mem_available, r.cgroup_room) AS available,
	   b.idle_client_backends,
	   b.avg_idle_overhead,
	   GREATEST(LEAST(r.mem_available, r.cgroup_room)
				OPERATOR(pg_catalog./) NULLIF(COALESCE(b.avg_idle_overhead, b.min_client_overhead), 0), 0)::bigint
		   AS more_idle_connections_fit,
	   g.max_connections,
	   b.client_backends,
	   GREATEST(((g.max_connections OPERATOR(pg_catalog.-) g.superuser_reserved_connections)
				 OPERATOR(pg_catalog.-) g.reserved_connections)
				OPERATOR(pg_catalog.-) b.client_backends, 0) AS connection_slots_left,
	   g.work_mem,
	   g.hash_mem_multiplier,
	   ((g.max_connections OPERATOR(pg_catalog.*) g.work_mem) OPERATOR(pg_catalog.*) g.hash_mem_multiplier)::bigint
		   AS work_mem_exposure,
	   g.maintenance_work_mem,
	   g.autovacuum_work_mem,
	   g.autovacuum_max_workers,
	   (g.autovacuum_max_workers OPERATOR(pg_catalog.*) g.autovacuum_work_mem)::bigint AS autovacuum_exposure,
	   pg_catalog.round((((g.max_connections OPERATOR(pg_catalog.*) g.work_mem) OPERATOR(pg_catalog.*) g.hash_mem_multiplier)
				OPERATOR(pg_catalog./) NULLIF(LEAST(r.mem_available, r.cgroup_room), 0))::numeric, 2)
		   AS work_mem_exposure_ratio,
	   g.superuser_reserved_connections,
	   g.reserved_connections,
	   COALESCE(b.avg_idle_overhead, b.min_client_overhead) AS per_connection,
	   CASE WHEN b.avg_idle_overhead IS NOT NULL THEN 'the average idle client backend'
			WHEN b.min_client_overhead IS NOT NULL THEN 'the smallest client backend (none is idle)' END
		   AS per_connection_from,
	   g.temp_buffers,
	   (g.max_connections OPERATOR(pg_catalog.*) g.temp_buffers) AS temp_buffers_exposure
FROM b, r, @extschema@.pg_procmem_memory_settings AS g;

COMMENT ON VIEW pg_procmem_headroom IS
'how many more connections fit in the memory that is left, and the work_mem exposure';

REVOKE ALL ON pg_procmem_memory_settings FROM PUBLIC;
REVOKE ALL ON pg_procmem_headroom FROM PUBLIC;
GRANT SELECT ON pg_procmem_memory_settings, pg_procmem_headroom TO pg_read_all_stats;

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

-- The memory history (needs pg_procmem in shared_preload_libraries): what
-- the sampler saw at every sample, oldest first, kept in shared memory and
-- across restarts in a file in the data directory. sample numbers the
-- samples in the order they were taken (sampled_at is the wall clock's,
-- which can step back). All the reads of one transaction stop at the same
-- sample. missing_ok: no rows, instead of an ERROR, when the library was
-- not preloaded.
CREATE FUNCTION pg_procmem_history_processes(
	IN missing_ok boolean DEFAULT false,
	OUT sample bigint,
	OUT sampled_at timestamptz,
	OUT pid integer,
	OUT backend_type text,
	OUT datname text,
	OUT usename text,
	OUT application_name text,
	OUT state text,
	OUT query_id bigint,
	OUT query text,
	OUT leader_pid integer,
	OUT backend_start timestamptz,
	OUT query_start timestamptz,
	OUT overhead bigint,
	OUT private_anon bigint,
	OUT page_tables bigint,
	OUT rss bigint,
	OUT swap bigint,
	OUT context_bytes bigint,
	OUT oom_score integer,
	OUT work_mem bigint,
	OUT work_mem_source text,
	OUT hash_mem_multiplier double precision,
	OUT hash_mem_multiplier_source text,
	OUT temp_buffers bigint,
	OUT temp_buffers_source text,
	OUT maintenance_work_mem bigint,
	OUT maintenance_work_mem_source text,
	OUT reused boolean,
	OUT oom_protected boolean,
	OUT dsm bigint,
	OUT group_dsm bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_procmem_history_processes'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

COMMENT ON FUNCTION pg_procmem_history_processes(boolean) IS
'the memory history: every process at every sample (what pg_procmem_history shows)';

CREATE FUNCTION pg_procmem_history_system_samples(
	IN missing_ok boolean DEFAULT false,
	OUT sample bigint,
	OUT sampled_at timestamptz,
	OUT run_started timestamptz,
	OUT processes integer,
	OUT mem_total bigint,
	OUT mem_available bigint,
	OUT swap_used bigint,
	OUT page_tables bigint,
	OUT hugepages_total bigint,
	OUT hugepages_free bigint,
	OUT cgroup_usage bigint,
	OUT cgroup_limit bigint,
	OUT cgroup_oom_kills bigint,
	OUT connections bigint,
	OUT sample_ms double precision,
	OUT sample_wall_ms double precision,
	OUT pressure text,
	OUT pressure_source text,
	OUT pressure_used bigint,
	OUT pressure_limit bigint,
	OUT reused integer,
	OUT dsm_segments integer,
	OUT dsm_mapped bigint,
	OUT dsm_shared_segments integer,
	OUT dsm_shared bigint,
	OUT dsm_leftover_segments integer,
	OUT dsm_leftover bigint,
	OUT dsm_leftover_names text[],
	OUT psi_some_avg10 double precision,
	OUT psi_full_avg10 double precision,
	OUT cgroup_psi_some_avg10 double precision,
	OUT cgroup_psi_full_avg10 double precision,
	OUT psi_unavailable text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_procmem_history_system'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

COMMENT ON FUNCTION pg_procmem_history_system_samples(boolean) IS
'the memory history: the machine and the cgroup at every sample (what pg_procmem_history_system shows)';

CREATE FUNCTION pg_procmem_crash_log(
	IN missing_ok boolean DEFAULT false,
	OUT number integer,
	OUT crashed_at timestamptz,
	OUT how_known text,
	OUT killed_pid integer,
	OUT guessed_pid integer,
	OUT signal integer,
	OUT exit_code integer,
	OUT logged text,
	OUT restarted_at timestamptz,
	OUT cgroup_oom_kills bigint,
	OUT cgroup_usage_at_sample bigint,
	OUT cgroup_limit bigint,
	OUT last_sample_at timestamptz,
	OUT seconds_since_sample double precision,
	OUT last_seen_at timestamptz,
	OUT query_id bigint,
	OUT overhead bigint,
	OUT context_bytes bigint,
	OUT page_tables bigint,
	OUT oom_score integer,
	OUT backend_type text,
	OUT usename text,
	OUT datname text,
	OUT application_name text,
	OUT backend_start timestamptz,
	OUT query_start timestamptz,
	OUT query text,
	OUT query_from text,
	OUT query_cut boolean,
	OUT query_folded boolean,
	OUT top_pids integer[],
	OUT top_backend_types text[],
	OUT top_overheads bigint[],
	OUT work_mem bigint,
	OUT work_mem_source text,
	OUT hash_mem_multiplier double precision,
	OUT hash_mem_multiplier_source text,
	OUT temp_buffers bigint,
	OUT temp_buffers_source text,
	OUT maintenance_work_mem bigint,
	OUT maintenance_work_mem_source text,
	OUT exited_at timestamptz,
	OUT killed_after timestamptz,
	OUT oom_killed boolean,
	OUT state text,
	OUT parallel_processes integer,
	OUT parallel_overhead bigint,
	OUT plan_memory text,
	OUT parallel_dsm bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_procmem_crash_log'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

COMMENT ON FUNCTION pg_procmem_crash_log(boolean) IS
'the memory history: every crash restart it saw (what pg_procmem_crashes shows)';

CREATE FUNCTION pg_procmem_crash_groups(
	IN missing_ok boolean DEFAULT false,
	OUT number integer,
	OUT rank integer,
	OUT usename text,
	OUT application_name text,
	OUT backend_type text,
	OUT processes integer,
	OUT overhead bigint,
	OUT largest bigint,
	OUT largest_pid integer,
	OUT work_mem bigint,
	OUT work_mem_source text,
	OUT hash_mem_multiplier double precision,
	OUT hash_mem_multiplier_source text,
	OUT temp_buffers bigint,
	OUT temp_buffers_source text,
	OUT maintenance_work_mem bigint,
	OUT maintenance_work_mem_source text,
	OUT parallel_workers integer,
	OUT largest_state text,
	OUT largest_query text,
	OUT dsm bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_procmem_crash_groups'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

COMMENT ON FUNCTION pg_procmem_crash_groups(boolean) IS
'the memory history: who held the memory at each crash row''s last sample (what pg_procmem_crash_holders shows)';

-- The server's memory cgroup's OOM kill counter when the sampler first ran
-- in this shared memory (the server's start, or its last crash restart,
-- whose crash row counts the kills before it), and when: the kills since
-- are pg_procmem_system_info().cgroup_oom_kills less it. NULLs when unknown.
CREATE FUNCTION pg_procmem_oom_kills_baseline(
	OUT cgroup_oom_kills bigint,
	OUT since timestamptz)
RETURNS record
AS 'MODULE_PATHNAME', 'pg_procmem_oom_kills_baseline'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

COMMENT ON FUNCTION pg_procmem_oom_kills_baseline() IS
'the server''s memory cgroup''s OOM kill counter when the server started or last restarted after a crash';

-- Where a backend's setting was set, in words: 'in its session' for
-- pg_settings' 'session', 'for its role' for 'user', and so on; NULL for
-- what the server itself sets (its default, its files, its command line),
-- which is no backend's own.
CREATE FUNCTION pg_procmem_set_where(source text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE source WHEN 'session' THEN 'in its session'
				   WHEN 'user' THEN 'for its role'
				   WHEN 'database' THEN 'for its database'
				   WHEN 'database user' THEN 'for its role in its database'
				   WHEN 'client' THEN 'by its client at connection'
				   WHEN 'global' THEN 'for all roles'
				   WHEN 'default' THEN NULL
				   WHEN 'configuration file' THEN NULL
				   WHEN 'command line' THEN NULL
				   WHEN 'environment variable' THEN NULL
				   WHEN 'override' THEN NULL
				   ELSE 'as ' OPERATOR(pg_catalog.||) source END;

-- The memory settings a backend ran with that its session, role or
-- database gave it (not the server's own), each as "work_mem = 8GB
-- (session)"; an empty array when none.
CREATE FUNCTION pg_procmem_settings_said(
	work_mem bigint, work_mem_source text, hash_mem_multiplier double precision,
	hash_mem_multiplier_source text, temp_buffers bigint, temp_buffers_source text,
	maintenance_work_mem bigint, maintenance_work_mem_source text)
RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN ARRAY(SELECT pg_catalog.format('%s = %s (%s)', s.name,
					   -- as SET writes it; numeric: a file's figures may be any bigint
					   CASE WHEN s.name OPERATOR(pg_catalog.=) 'hash_mem_multiplier' THEN hash_mem_multiplier::text
							WHEN s.value OPERATOR(pg_catalog.%) 1073741824 OPERATOR(pg_catalog.=) 0
							THEN pg_catalog.div(s.value, 1073741824) OPERATOR(pg_catalog.||) 'GB'
							WHEN s.value OPERATOR(pg_catalog.%) 1048576 OPERATOR(pg_catalog.=) 0
							THEN pg_catalog.div(s.value, 1048576) OPERATOR(pg_catalog.||) 'MB'
							WHEN s.value OPERATOR(pg_catalog.%) 1024 OPERATOR(pg_catalog.=) 0
							THEN pg_catalog.div(s.value, 1024) OPERATOR(pg_catalog.||) 'kB'
							ELSE s.value OPERATOR(pg_catalog.||) 'B' END,
					   s.source)
			 FROM (VALUES (1, 'work_mem', work_mem::numeric, work_mem_source),
						  (2, 'hash_mem_multiplier', hash_mem_multiplier::numeric, hash_mem_multiplier_source),
						  (3, 'temp_buffers', temp_buffers::numeric, temp_buffers_source),
						  (4, 'maintenance_work_mem', maintenance_work_mem::numeric, maintenance_work_mem_source))
				  AS s(i, name, value, source)
			 WHERE s.value IS NOT NULL AND @extschema@.pg_procmem_set_where(s.source) IS NOT NULL
			 ORDER BY s.i);

COMMENT ON FUNCTION pg_procmem_set_where(text) IS
'internal: where a backend''s setting was set, in words';

COMMENT ON FUNCTION pg_procmem_settings_said(bigint, text, double precision, text, bigint, text, bigint, text) IS
'internal: the memory settings a backend''s session, role or database gave it, in words';

-- How the crash rows name a group of processes (pg_procmem_crash_holders):
-- "alice/etl: 11 sessions held 898 MB", "checkpointer: 1 process held 1 MB";
-- terse, "11 alice/etl had 898 MB".
CREATE FUNCTION pg_procmem_holder_text(backend_type text, usename text, application_name text,
									   processes integer, overhead bigint, terse boolean DEFAULT false,
									   workers integer DEFAULT 0)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN pg_catalog.format(CASE WHEN terse THEN '%2$s %1$s%5$s had %4$s' ELSE '%1$s: %2$s%3$s%5$s held %4$s' END,
		   CASE WHEN backend_type OPERATOR(pg_catalog.=) 'client backend'
				THEN COALESCE(NULLIF(pg_catalog.concat_ws('/', usename, application_name), ''), '?')
				ELSE backend_type END,
		   processes OPERATOR(pg_catalog.-) COALESCE(workers, 0),
		   CASE WHEN backend_type OPERATOR(pg_catalog.<>) 'client backend'
				THEN CASE processes OPERATOR(pg_catalog.-) COALESCE(workers, 0) WHEN 1 THEN ' process' ELSE ' processes' END
				WHEN processes OPERATOR(pg_catalog.-) COALESCE(workers, 0) OPERATOR(pg_catalog.=) 1 THEN ' session'
				ELSE ' sessions' END,
		   pg_catalog.pg_size_pretty(overhead),
		   -- a parallel query's workers count with their leader's group
		   CASE WHEN workers OPERATOR(pg_catalog.>) 0
				THEN pg_catalog.format(' +%s workers', workers)
				ELSE '' END);

-- Whether a crash's victim held a small part of the memory, so that the
-- largest group at the last sample (its processes, the largest one's pid,
-- their overhead) is the one to name. The OOM killer takes the process with
-- the largest RSS: an auxiliary process is taken for the shared memory it
-- touched, and the memory was elsewhere; a client backend held the most of
-- any one process, and is the culprit unless it is one of a group of
-- sessions like it (same_group) that together held the memory: the others
-- held at least what it held at the last sample, and each of them, on
-- average, at least a quarter of it (overhead: NULL when no sample saw its
-- query running; a pool's connection running a hog among a hundred idle
-- ones is no session like them), or, when none saw it, half the room the
-- cgroup had left then (room: NULL when unknown, and the victim is named).
CREATE FUNCTION pg_procmem_held_elsewhere(backend_type text, overhead bigint, pid integer, same_group boolean,
										  group_processes integer, group_largest_pid integer,
										  group_overhead bigint, room bigint)
RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN group_processes IS NOT NULL
	   AND NOT (group_processes OPERATOR(pg_catalog.=) 1 AND group_largest_pid OPERATOR(pg_catalog.=) pid)
	   AND COALESCE(backend_type OPERATOR(pg_catalog.<>) ALL (ARRAY['client backend', 'parallel worker'])
					OR (same_group AND group_processes OPERATOR(pg_catalog.>) 1
						-- halves, not doubles: figures from a file may be near the top of bigint
						AND CASE WHEN overhead IS NOT NULL
								 THEN (group_overhead OPERATOR(pg_catalog./) 2) OPERATOR(pg_catalog.>=) overhead
									  AND ((group_overhead OPERATOR(pg_catalog.-) overhead) OPERATOR(pg_catalog./)
										   NULLIF(group_processes OPERATOR(pg_catalog.-) 1, 0))
										  OPERATOR(pg_catalog.>=) (overhead OPERATOR(pg_catalog./) 4)
								 ELSE group_overhead OPERATOR(pg_catalog.>=) (room OPERATOR(pg_catalog./) 2) END),
					false);

-- When a crash's kill happened, in one line of its report: between the
-- two reads of the OOM kill counter on either side of it (and the exit,
-- when it came later), or that the counter did not rise across it; for a
-- server killed whole, the counter's rise since its last sample.
CREATE FUNCTION pg_procmem_crash_when(oom_killed boolean, killed_after timestamptz, crashed_at timestamptz,
									  exited_at timestamptz, signal integer, how_known text, oom_kills bigint,
									  last_sample_at timestamptz)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN oom_killed AND killed_after IS NOT NULL
			THEN pg_catalog.format('OOM kill %s-%s%s', pg_catalog.to_char(killed_after, 'HH24:MI:SS.MS'),
					 pg_catalog.to_char(crashed_at, 'HH24:MI:SS.MS'),
					 CASE WHEN exited_at OPERATOR(pg_catalog.-) crashed_at OPERATOR(pg_catalog.>=) '0.05 s'::interval
						  THEN pg_catalog.format(', exit %s s on', pg_catalog.round(pg_catalog.date_part('epoch',
								   exited_at OPERATOR(pg_catalog.-) crashed_at)::numeric, 1))
						  ELSE ' (its exit)' END)
			-- killed whole: no exit was logged; the counter since its last sample
			WHEN how_known OPERATOR(pg_catalog.=) 'unclean stop'
			THEN CASE WHEN oom_killed THEN pg_catalog.format('OOM kill counter +%s since %s: killed whole?', oom_kills,
															  pg_catalog.to_char(last_sample_at, 'HH24:MI:SS'))
					  WHEN NOT oom_killed THEN pg_catalog.format('no OOM kill counted since %s: cause unknown',
																 pg_catalog.to_char(last_sample_at, 'HH24:MI:SS'))
					  ELSE 'cause unknown; last sample ' OPERATOR(pg_catalog.||)
						   COALESCE(pg_catalog.to_char(last_sample_at, 'HH24:MI:SS'), 'none') END
			WHEN NOT oom_killed AND signal OPERATOR(pg_catalog.=) 9
			THEN 'no OOM kill counted: cause unknown' END;

-- What to change about a crash's victim that held the memory itself, in
-- one line of its report: idle (state: at its last sample, when its
-- statement had started by then; else NULL), its temp_buffers or
-- max_backend_memory (no work_mem of one held it); a statement whose plans
-- had no sort or hash, max_backend_memory; else its work_mem, where set.
CREATE FUNCTION pg_procmem_crash_own_change(state text, plan_memory text, temp_buffers_source text,
											work_mem_source text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN state IN ('idle', 'idle in transaction', 'idle in transaction (aborted)')
			THEN COALESCE('to change: its temp_buffers, set ' OPERATOR(pg_catalog.||)
						  @extschema@.pg_procmem_set_where(temp_buffers_source),
						  'held between statements: see max_backend_memory')
			WHEN plan_memory OPERATOR(pg_catalog.=) 'none'
			THEN 'no sort or hash in it: see max_backend_memory'
			ELSE 'to change: its work_mem, set ' OPERATOR(pg_catalog.||)
				 @extschema@.pg_procmem_set_where(work_mem_source) END;

COMMENT ON FUNCTION pg_procmem_crash_when(boolean, timestamptz, timestamptz, timestamptz, integer, text, bigint,
										   timestamptz) IS
'internal: when a crash''s kill happened, in a line of its report';
COMMENT ON FUNCTION pg_procmem_crash_own_change(text, text, text, text) IS
'internal: what to change about a crash''s victim that held the memory itself, in a line of its report';

-- What the crash rows' words go by: whether the victim is of the largest
-- group's user, application and type; its overhead when a sample saw its
-- query running (an idle session sampled small may have started the query
-- that grew since); the room the cgroup had at the last sample.
CREATE FUNCTION pg_procmem_crash_facts(backend_type text, usename text, application_name text, overhead bigint,
									   last_seen_at timestamptz, query_start timestamptz, cgroup_limit bigint,
									   cgroup_usage_at_sample bigint, group_backend_type text, group_usename text,
									   group_application_name text,
									   OUT same_group boolean, OUT running_overhead bigint, OUT room bigint)
LANGUAGE sql IMMUTABLE PARALLEL SAFE
BEGIN ATOMIC
	SELECT (usename, application_name, backend_type) IS NOT DISTINCT FROM
			   (group_usename, group_application_name, group_backend_type),
		   CASE WHEN query_start IS NULL OR query_start OPERATOR(pg_catalog.<=) last_seen_at THEN overhead END,
		   NULLIF(GREATEST(cgroup_limit OPERATOR(pg_catalog.-) cgroup_usage_at_sample, 0), 0);
END;

COMMENT ON FUNCTION pg_procmem_crash_facts(text, text, text, bigint, timestamptz, timestamptz, bigint, bigint, text,
										   text, text) IS
'internal: what the crash rows'' words go by: the victim''s group, its overhead while running, the cgroup''s room';

COMMENT ON FUNCTION pg_procmem_holder_text(text, text, text, integer, bigint, boolean, integer) IS
'internal: a group of processes of a crash row, in words';
COMMENT ON FUNCTION pg_procmem_held_elsewhere(text, bigint, integer, boolean, integer, integer, bigint, bigint) IS
'internal: whether a crash''s victim held a small part of the memory';

-- One row per process per sample: who it was, what it ran, what it cost.
CREATE VIEW pg_procmem_history AS
SELECT * FROM @extschema@.pg_procmem_history_processes(false);

COMMENT ON VIEW pg_procmem_history IS
'every server process at every sample of the memory history: who, which query, what it cost';

-- One row per sample: the machine and the server's cgroup.
CREATE VIEW pg_procmem_history_system AS
SELECT * FROM @extschema@.pg_procmem_history_system_samples(false);

COMMENT ON VIEW pg_procmem_history_system IS
'the machine and the server''s memory cgroup at every sample of the memory history';

-- One row per crash restart the history saw (and per run that ended
-- without a clean stop): who was killed, how that is known, who it was and
-- what it ran, and what the last sample before it showed. killed_pid is set
-- only when the postmaster logged it; guessed_pid (the highest oom_score at
-- the last sample) is a guess and says so. crashed_at is when it was
-- killed: where the OOM kill counter (the cgroup's, else the machine's)
-- rose, the first of the sampler's reads of it that saw the rise (the kill
-- came after killed_after, by crashed_at), else when the postmaster logged
-- the exit (exited_at; restarted_at when it logged none). The victim dies
-- seconds after an OOM kill under load, and samples taken meanwhile skip
-- it: the figures come from the last sample that ended before the kill,
-- and cgroup_oom_kills is the counter's rise across it. usename ..
-- query and the memory settings are what the process said of itself,
-- copied by the postmaster at its exit, else its last sample; query_from
-- says which. query_id .. oom_score describe it at its last sample
-- (last_seen_at). number counts the rows since the history file was
-- created (for a counter: the highest is how many there were). summary is
-- the row in one terminal line (at most 56 columns); report, in lines of
-- at most 56: who, what it ran and with which settings, what it held, and,
-- when it held a small part of the memory, who held the rest
-- (pg_procmem_crash_holders).
CREATE VIEW pg_procmem_crashes AS
SELECT c.*, @extschema@.pg_procmem_clip(t.line, 56) AS summary, r.report
FROM @extschema@.pg_procmem_crash_log(false) AS c
	 LEFT JOIN LATERAL (SELECT h.*,
							   @extschema@.pg_procmem_holder_text(h.backend_type, h.usename, h.application_name,
									h.processes, h.held, false, h.parallel_workers) AS line,
							   @extschema@.pg_procmem_holder_text(h.backend_type, h.usename, h.application_name,
									h.processes, h.held, true, h.parallel_workers) AS terse
						FROM (SELECT g.*, g.overhead OPERATOR(pg_catalog.+) COALESCE(g.dsm, 0) AS held FROM @extschema@.pg_procmem_crash_groups(false) AS g) AS h
						WHERE h.number OPERATOR(pg_catalog.=) c.number
						ORDER BY h.rank) AS h ON h.rank OPERATOR(pg_catalog.=) 1,
	 LATERAL (SELECT COALESCE(c.killed_pid, c.guessed_pid) AS pid,
					 CASE WHEN c.backend_type OPERATOR(pg_catalog.=) 'client backend'
						  THEN NULLIF(pg_catalog.concat_ws('/', c.usename, c.application_name), '')
						  ELSE c.backend_type END AS who,
					 COALESCE(pg_catalog.pg_size_pretty(c.overhead), 'unsampled') AS held,
					 @extschema@.pg_procmem_held_elsewhere(c.backend_type, g.running_overhead,
						 COALESCE(c.killed_pid, c.guessed_pid), g.same_group,
						 h.processes, h.largest_pid, h.held, g.room) AS elsewhere,
					 g.same_group
			  FROM @extschema@.pg_procmem_crash_facts(c.backend_type, c.usename, c.application_name,
						 COALESCE(c.parallel_overhead, c.overhead) OPERATOR(pg_catalog.+) COALESCE(c.parallel_dsm, 0), c.last_seen_at, c.query_start, c.cgroup_limit,
						 c.cgroup_usage_at_sample, h.backend_type, h.usename, h.application_name) AS g) AS v,
	 LATERAL (SELECT CASE WHEN v.pid IS NULL THEN c.how_known
						  -- one of a group of sessions like it: the group, then which
						  WHEN v.elsewhere AND v.same_group
						  THEN pg_catalog.format('%s; pid %s killed', h.terse, v.pid)
						  WHEN v.elsewhere
						  THEN pg_catalog.format('killed %s %s; %s', COALESCE(v.who, 'pid ' OPERATOR(pg_catalog.||) v.pid),
												 v.held, h.terse)
						  ELSE pg_catalog.concat_ws(', ',
								   CASE WHEN c.killed_pid IS NULL THEN 'guess: pid ' ELSE 'pid ' END
									   OPERATOR(pg_catalog.||) v.pid,
								   v.who, v.held)
							   OPERATOR(pg_catalog.||) COALESCE(': ' OPERATOR(pg_catalog.||) c.query, '') END AS line) AS t,
	 LATERAL (SELECT pg_catalog.string_agg(@extschema@.pg_procmem_clip(l.line, 56), E'\n' ORDER BY l.i) AS report
			  FROM (VALUES
				(1, CASE WHEN v.pid IS NULL THEN c.how_known
						 ELSE pg_catalog.format('%s: pid %s, %s%s',
								  CASE WHEN c.killed_pid IS NULL THEN 'guess' ELSE 'killed' END, v.pid,
								  COALESCE(c.backend_type, 'unknown type'),
								  COALESCE(', signal ' OPERATOR(pg_catalog.||) c.signal,
										   ', exit code ' OPERATOR(pg_catalog.||) c.exit_code, '')) END),
				(1.5, @extschema@.pg_procmem_crash_when(c.oom_killed, c.killed_after, c.crashed_at, c.exited_at,
						  c.signal, c.how_known, c.cgroup_oom_kills, c.last_sample_at)),
				(2, NULLIF(pg_catalog.concat_ws(', ', 'user ' OPERATOR(pg_catalog.||) c.usename,
							 'app ' OPERATOR(pg_catalog.||) c.application_name,
							 'db ' OPERATOR(pg_catalog.||) c.datname), '')),
				(3, 'query: ' OPERATOR(pg_catalog.||) c.query),
				(4, NULLIF(pg_catalog.concat_ws(', ', CASE WHEN c.query_cut THEN 'query cut short' END, CASE WHEN c.query_folded THEN 'non-ASCII shown as ?' END), '')),
				(5, CASE WHEN v.pid IS NULL THEN NULL
						 WHEN c.overhead IS NOT NULL
						 THEN pg_catalog.format('held %s at its last sample, %s s before', v.held,
								  pg_catalog.round(pg_catalog.date_part('epoch', c.crashed_at OPERATOR(pg_catalog.-)
																		c.last_seen_at)::numeric, 1))
						 ELSE 'no sample saw it' OPERATOR(pg_catalog.||)
							  COALESCE(' (query started ' OPERATOR(pg_catalog.||) pg_catalog.round(pg_catalog.date_part(
								  'epoch', c.crashed_at OPERATOR(pg_catalog.-) c.query_start)::numeric, 1)
								  OPERATOR(pg_catalog.||) ' s before)', '') END),
				-- not running a statement; a parallel query (leader and workers: one holder); its DSM, from an eighth of that
				(5.1, CASE WHEN c.state IN ('idle', 'idle in transaction', 'idle in transaction (aborted)') THEN 'it was ' OPERATOR(pg_catalog.||) c.state OPERATOR(pg_catalog.||) ' then' END),
				(5.2, 'its parallel query: ' OPERATOR(pg_catalog.||) c.parallel_processes OPERATOR(pg_catalog.||)
					  ' processes held ' OPERATOR(pg_catalog.||) pg_catalog.pg_size_pretty(c.parallel_overhead)),
				(5.3, CASE WHEN (c.parallel_dsm OPERATOR(pg_catalog.*) 8) OPERATOR(pg_catalog.>=) COALESCE(c.parallel_overhead, c.overhead, 0) THEN 'and ' OPERATOR(pg_catalog.||) pg_catalog.pg_size_pretty(NULLIF(c.parallel_dsm, 0)) OPERATOR(pg_catalog.||) ' of shared memory (DSM) of its own' END),
				-- about what one no sample saw grew by: the room it grew into
				(5.5, CASE WHEN c.overhead IS NULL AND v.pid IS NOT NULL
						   AND c.cgroup_limit OPERATOR(pg_catalog.>) c.cgroup_usage_at_sample
						   THEN pg_catalog.format('the cgroup had %s of room at the last sample',
								pg_catalog.pg_size_pretty(c.cgroup_limit OPERATOR(pg_catalog.-) c.cgroup_usage_at_sample)) END),
				-- the largest group at the last sample, when it held the memory: sessions
				-- like it, or others when it held little (then the culprit, beside the victim)
				(7, CASE WHEN v.elsewhere AND NOT v.same_group
						 THEN 'culprit: ' OPERATOR(pg_catalog.||) h.line
						 WHEN v.pid IS NULL OR v.elsewhere OR (v.same_group AND h.processes OPERATOR(pg_catalog.>) 1)
						 THEN 'last sample: ' OPERATOR(pg_catalog.||) h.line END),
				-- what to change, where it was set (pg_procmem_advice says more)
				(8.9, CASE WHEN c.signal IS DISTINCT FROM 9 THEN NULL
						   WHEN v.elsewhere AND @extschema@.pg_procmem_set_where(h.temp_buffers_source) IS NOT NULL
						   THEN 'to change: their temp_buffers (' OPERATOR(pg_catalog.||) h.temp_buffers_source OPERATOR(pg_catalog.||) ')'
						   WHEN NOT v.elsewhere
						   THEN @extschema@.pg_procmem_crash_own_change(c.state, c.plan_memory, c.temp_buffers_source,
																	   c.work_mem_source) END),
				(9, CASE WHEN c.cgroup_oom_kills OPERATOR(pg_catalog.>) 1
						 THEN c.cgroup_oom_kills OPERATOR(pg_catalog.||) ' OOM kills: the kernel killed others too' END)
				UNION ALL
				-- what it ran with, a line each; and the largest holder's
				SELECT 6 OPERATOR(pg_catalog.+) (k::float8 OPERATOR(pg_catalog./) 10),
					   CASE k WHEN 1 THEN 'ran with ' ELSE 'and ' END OPERATOR(pg_catalog.||) x
				FROM pg_catalog.unnest(@extschema@.pg_procmem_settings_said(c.work_mem, c.work_mem_source,
						 c.hash_mem_multiplier, c.hash_mem_multiplier_source, c.temp_buffers, c.temp_buffers_source,
						 c.maintenance_work_mem, c.maintenance_work_mem_source)) WITH ORDINALITY AS s(x, k)
				UNION ALL
				SELECT 8 OPERATOR(pg_catalog.+) (k::float8 OPERATOR(pg_catalog./) 10),
					   CASE k WHEN 1 THEN 'its largest ran with ' ELSE 'and ' END OPERATOR(pg_catalog.||) x
				FROM pg_catalog.unnest(@extschema@.pg_procmem_settings_said(h.work_mem, h.work_mem_source,
						 h.hash_mem_multiplier, h.hash_mem_multiplier_source, h.temp_buffers, h.temp_buffers_source,
						 h.maintenance_work_mem, h.maintenance_work_mem_source)) WITH ORDINALITY AS s(x, k)
				WHERE v.elsewhere)
				   AS l(i, line)
			  WHERE l.line IS NOT NULL) AS r;

COMMENT ON VIEW pg_procmem_crashes IS
'crash restarts seen by the memory history: the killed process, who it was, what it ran, and who held the memory';

-- Who held the memory at each crash row's last sample: the processes
-- grouped by user, application and backend type (a parallel worker in its
-- leader's group), the 3 largest groups by total overhead (rank 1 first),
-- with the largest one's memory settings, state and statement.
CREATE VIEW pg_procmem_crash_holders AS
SELECT * FROM @extschema@.pg_procmem_crash_groups(false);

COMMENT ON VIEW pg_procmem_crash_holders IS
'who held the memory before each crash restart: the largest groups of processes by user, application and type';

-- Memory by query, by sampling: what the backends running each query_id
-- held while they ran it (active samples only), largest first; a parallel
-- query's leader and workers together, once a sample, with the DSM
-- segments only they map (max_dsm: a parallel hash join's hash table is
-- there, in no process's overhead; max_held adds both). first_seen
-- and last_seen are the times of its first and last samples, and query the
-- text of the last (by sample number, not by a clock that may have stepped).
-- Its memory is work_mem's, whatever the history holds: the rows are read
-- once into a CTE (a tuplestore), and the first and last of each query_id
-- found by sorts (DISTINCT ON), which spill past work_mem, not by arrays.
CREATE VIEW pg_procmem_query_memory AS
WITH h AS MATERIALIZED (
	SELECT h.query_id, h.sample, h.sampled_at, h.pid, COALESCE(h.leader_pid, h.pid) AS leader, h.overhead,
		   h.context_bytes, h.group_dsm, h.query
	FROM @extschema@.pg_procmem_history AS h
	WHERE h.state OPERATOR(pg_catalog.=) 'active' AND h.query_id IS NOT NULL),
-- each run of it at each sample: a leader and its workers together
e AS (
	SELECT h.query_id, pg_catalog.sum(h.overhead)::bigint AS overhead,
		   pg_catalog.sum(h.context_bytes)::bigint AS context_bytes,
		   -- the same on each of them: the group's segments, once
		   pg_catalog.max(h.group_dsm) AS dsm
	FROM h
	GROUP BY h.query_id, h.sample, h.leader),
a AS (
	SELECT e.query_id,
		   pg_catalog.count(*) AS samples,
		   pg_catalog.max(e.overhead) AS max_overhead,
		   pg_catalog.avg(e.overhead)::bigint AS mean_overhead,
		   pg_catalog.max(e.context_bytes) AS max_context_bytes,
		   pg_catalog.avg(e.context_bytes)::bigint AS mean_context_bytes,
		   pg_catalog.max(e.dsm) AS max_dsm,
		   pg_catalog.max(e.overhead OPERATOR(pg_catalog.+) COALESCE(e.dsm, 0)) AS max_held
	FROM e
	GROUP BY e.query_id),
b AS (
	SELECT h.query_id, pg_catalog.count(DISTINCT h.pid) AS backends
	FROM h
	GROUP BY h.query_id),
f AS (
	SELECT DISTINCT ON (h.query_id) h.query_id, h.sampled_at
	FROM h
	ORDER BY h.query_id, h.sample),
l AS (
	SELECT DISTINCT ON (h.query_id) h.query_id, h.sampled_at, h.query
	FROM h
	ORDER BY h.query_id, h.sample DESC)
SELECT a.query_id, a.samples, b.backends, a.max_overhead, a.mean_overhead, a.max_context_bytes,
	   a.mean_context_bytes, f.sampled_at AS first_seen, l.sampled_at AS last_seen, l.query, a.max_dsm,
	   a.max_held
FROM a
	 JOIN b ON b.query_id OPERATOR(pg_catalog.=) a.query_id
	 JOIN f ON f.query_id OPERATOR(pg_catalog.=) a.query_id
	 JOIN l ON l.query_id OPERATOR(pg_catalog.=) a.query_id
ORDER BY a.max_held DESC NULLS LAST, a.query_id;

COMMENT ON VIEW pg_procmem_query_memory IS
'memory by query_id, from the history''s samples of the backends running it';

REVOKE ALL ON FUNCTION pg_procmem_history_processes(boolean) FROM PUBLIC;
REVOKE ALL ON FUNCTION pg_procmem_history_system_samples(boolean) FROM PUBLIC;
REVOKE ALL ON FUNCTION pg_procmem_crash_log(boolean) FROM PUBLIC;
REVOKE ALL ON FUNCTION pg_procmem_crash_groups(boolean) FROM PUBLIC;
REVOKE ALL ON FUNCTION pg_procmem_oom_kills_baseline() FROM PUBLIC;
REVOKE ALL ON FUNCTION pg_procmem_settings_said(bigint, text, double precision, text, bigint, text, bigint, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION pg_procmem_holder_text(text, text, text, integer, bigint, boolean, integer) FROM PUBLIC;
REVOKE ALL ON FUNCTION pg_procmem_set_where(text) FROM PUBLIC;
REVOKE ALL ON FUNCTION pg_procmem_held_elsewhere(text, bigint, integer, boolean, integer, integer, bigint, bigint) FROM PUBLIC;
REVOKE ALL ON FUNCTION pg_procmem_crash_facts(text, text, text, bigint, timestamptz, timestamptz, bigint, bigint, text, text, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION pg_procmem_crash_when(boolean, timestamptz, timestamptz, timestamptz, integer, text, bigint,
											   timestamptz) FROM PUBLIC;
REVOKE ALL ON FUNCTION pg_procmem_crash_own_change(text, text, text, text) FROM PUBLIC;
REVOKE ALL ON pg_procmem_crash_holders FROM PUBLIC;
REVOKE ALL ON pg_procmem_history FROM PUBLIC;
REVOKE ALL ON pg_procmem_history_system FROM PUBLIC;
REVOKE ALL ON pg_procmem_crashes FROM PUBLIC;
REVOKE ALL ON pg_procmem_query_memory FROM PUBLIC;
GRANT EXECUTE ON FUNCTION pg_procmem_history_processes(boolean) TO pg_read_all_stats;
GRANT EXECUTE ON FUNCTION pg_procmem_history_system_samples(boolean) TO pg_read_all_stats;
GRANT EXECUTE ON FUNCTION pg_procmem_crash_log(boolean) TO pg_read_all_stats;
GRANT EXECUTE ON FUNCTION pg_procmem_crash_groups(boolean), pg_procmem_oom_kills_baseline(),
	pg_procmem_settings_said(bigint, text, double precision, text, bigint, text, bigint, text),
	pg_procmem_holder_text(text, text, text, integer, bigint, boolean, integer), pg_procmem_set_where(text),
	pg_procmem_held_elsewhere(text, bigint, integer, boolean, integer, integer, bigint, bigint),
	pg_procmem_crash_facts(text, text, text, bigint, timestamptz, timestamptz, bigint, bigint, text, text, text),
	pg_procmem_crash_when(boolean, timestamptz, timestamptz, timestamptz, integer, text, bigint, timestamptz),
	pg_procmem_crash_own_change(text, text, text, text) TO pg_read_all_stats;
GRANT SELECT ON pg_procmem_crash_holders TO pg_read_all_stats;
GRANT SELECT ON pg_procmem_history, pg_procmem_history_system, pg_procmem_crashes,
	pg_procmem_query_memory TO pg_read_all_stats;

-- Every server process now, for tools that scrape every few seconds: as the
-- sampler's newest sample saw it where pg_procmem is preloaded (no /proc
-- read at all), else read live. The newest sample's rows come from the
-- history's ring without copying the rest of it.
CREATE FUNCTION pg_procmem_history_latest(
	IN missing_ok boolean DEFAULT false,
	OUT sample bigint,
	OUT sampled_at timestamptz,
	OUT pid integer,
	OUT backend_type text,
	OUT datname text,
	OUT usename text,
	OUT application_name text,
	OUT state text,
	OUT query_id bigint,
	OUT query text,
	OUT leader_pid integer,
	OUT backend_start timestamptz,
	OUT query_start timestamptz,
	OUT overhead bigint,
	OUT private_anon bigint,
	OUT page_tables bigint,
	OUT rss bigint,
	OUT swap bigint,
	OUT context_bytes bigint,
	OUT oom_score integer,
	OUT work_mem bigint,
	OUT work_mem_source text,
	OUT hash_mem_multiplier double precision,
	OUT hash_mem_multiplier_source text,
	OUT temp_buffers bigint,
	OUT temp_buffers_source text,
	OUT maintenance_work_mem bigint,
	OUT maintenance_work_mem_source text,
	OUT reused boolean,
	OUT oom_protected boolean,
	OUT dsm bigint,
	OUT group_dsm bigint)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_procmem_history_latest'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

COMMENT ON FUNCTION pg_procmem_history_latest(boolean) IS
'the memory history''s newest sample, if this run of the server took it and it holds every process (not cut to fit the ring nor overwritten while read): its processes, as pg_procmem_history_processes shows them';

-- Whether a sample taken at sampled_at may stand for the processes at time
-- at: sampling is on (an interval above 0), and the sample is at most two
-- intervals and 5 s old (one sample late, and a slow one), and not from
-- more than 5 s ahead (the wall clock stepped back since: its age is not
-- known). No sample: false.
CREATE FUNCTION pg_procmem_sample_fresh(sampled_at timestamptz, sample_interval interval,
										at timestamptz)
RETURNS boolean
LANGUAGE sql STABLE PARALLEL SAFE
RETURN COALESCE(sample_interval OPERATOR(pg_catalog.>) '0'::interval
				AND sampled_at OPERATOR(pg_catalog.>=)
					(at OPERATOR(pg_catalog.-) ((2 OPERATOR(pg_catalog.*) sample_interval)
												OPERATOR(pg_catalog.+) '5 s'::interval))
				AND sampled_at OPERATOR(pg_catalog.<=) (at OPERATOR(pg_catalog.+) '5 s'::interval),
				false);

COMMENT ON FUNCTION pg_procmem_sample_fresh(timestamptz, interval, timestamptz) IS
'internal: whether a sample of the memory history is recent enough to stand for now (pg_procmem_latest)';

-- The sample's rows where it is fresh, else pg_procmem_backends' (one or
-- the other: each branch is gated by the same one-time test, so the live
-- read does not run when the sample serves, and the sample costs one
-- sample's copy). read_at: the sample's time, or the statement's.
CREATE VIEW pg_procmem_latest AS
WITH newest AS MATERIALIZED (
	SELECT * FROM @extschema@.pg_procmem_history_latest(true)
), fresh AS MATERIALIZED (
	-- after the scan: the setting is the library's own once it is loaded
	SELECT @extschema@.pg_procmem_sample_fresh(pg_catalog.max(n.sampled_at),
			   pg_catalog.current_setting('pg_procmem.sample_interval', true)::interval,
			   pg_catalog.statement_timestamp()) AS fresh
	FROM newest AS n
)
SELECT s.pid,
	   s.backend_type,
	   s.datname,
	   s.usename,
	   s.application_name,
	   s.state,
	   s.leader_pid,
	   s.overhead,
	   s.private_anon,
	   s.page_tables,
	   s.rss,
	   s.swap,
	   s.context_bytes,
	   s.oom_score,
	   s.oom_protected,
	   s.dsm,
	   s.group_dsm,
	   s.sampled_at AS read_at,
	   'sample'::text AS source
FROM newest AS s
WHERE (SELECT f.fresh FROM fresh AS f)
UNION ALL
SELECT b.pid,
	   b.backend_type,
	   -- name's collation is "C": the sample's, as every text's
	   b.datname::text COLLATE pg_catalog."default",
	   b.usename::text COLLATE pg_catalog."default",
	   b.application_name,
	   b.state,
	   b.leader_pid,
	   b.overhead,
	   b.private_anon,
	   b.page_tables,
	   b.rss,
	   b.swap,
	   b.context_bytes,
	   b.oom_score,
	   b.oom_score_adj OPERATOR(pg_catalog.=) -1000,
	   b.dsm,
	   b.group_dsm,
	   pg_catalog.statement_timestamp(),
	   'live'::text
FROM @extschema@.pg_procmem_backends AS b
WHERE NOT (SELECT f.fresh FROM fresh AS f);

COMMENT ON VIEW pg_procmem_latest IS
'every server process as the memory history''s newest sample saw it when that is recent, else read now: the cheap read for monitoring';

REVOKE ALL ON FUNCTION pg_procmem_history_latest(boolean) FROM PUBLIC;
REVOKE ALL ON FUNCTION pg_procmem_sample_fresh(timestamptz, interval, timestamptz) FROM PUBLIC;
REVOKE ALL ON pg_procmem_latest FROM PUBLIC;
GRANT EXECUTE ON FUNCTION pg_procmem_history_latest(boolean),
	pg_procmem_sample_fresh(timestamptz, interval, timestamptz) TO pg_read_all_stats;
GRANT SELECT ON pg_procmem_latest TO pg_read_all_stats;

-- The memory guard's actions (pg_procmem.guard, pg_procmem.max_backend_memory;
-- docs/guard.md), the last 128, oldest first; the history file keeps them
-- through restarts.
-- missing_ok: no rows, instead of an ERROR, when the library was not
-- preloaded.
CREATE FUNCTION pg_procmem_guard_log(
	IN missing_ok boolean DEFAULT false,
	OUT acted_at timestamptz,
	OUT action_number bigint,
	OUT pid integer,
	OUT action text,
	OUT reason text,
	OUT processes integer,
	OUT held bigint,
	OUT limit_bytes bigint,
	OUT used bigint,
	OUT threshold_pct integer,
	OUT source text,
	OUT given_back bigint,
	OUT backend_start timestamptz,
	OUT query_start timestamptz,
	OUT usename text,
	OUT datname text,
	OUT application_name text,
	OUT query text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'pg_procmem_guard_log'
LANGUAGE C VOLATILE STRICT PARALLEL RESTRICTED;

COMMENT ON FUNCTION pg_procmem_guard_log(boolean) IS
'the memory guard''s actions (what pg_procmem_guard_actions shows)';

-- One row per action of the guard: whom it canceled or ended, and why.
CREATE VIEW pg_procmem_guard_actions AS
SELECT * FROM @extschema@.pg_procmem_guard_log(false);

COMMENT ON VIEW pg_procmem_guard_actions IS
'the memory guard''s actions: the statements it canceled and the sessions it ended (or would have, in dry_run), the last 128, kept through restarts';

REVOKE ALL ON FUNCTION pg_procmem_guard_log(boolean) FROM PUBLIC;
REVOKE ALL ON pg_procmem_guard_actions FROM PUBLIC;
GRANT EXECUTE ON FUNCTION pg_procmem_guard_log(boolean) TO pg_read_all_stats;
GRANT SELECT ON pg_procmem_guard_actions TO pg_read_all_stats;

-- New client connections per second over the last five minutes of this run,
-- once the history covers a minute of it (a start's own burst is no rate);
-- no row otherwise. The history counts client connections since shared
-- memory was initialized (pg_stat_database's sessions survive restarts and
-- resets). An internal view of pg_procmem_advice.
CREATE VIEW pg_procmem_connection_rate AS
SELECT pg_catalog.max(y.connections) OPERATOR(pg_catalog.-) pg_catalog.min(y.connections) AS connections,
	   pg_catalog.date_part('epoch', pg_catalog.max(y.sampled_at) OPERATOR(pg_catalog.-) pg_catalog.min(y.sampled_at)) AS seconds,
	   (pg_catalog.max(y.connections) OPERATOR(pg_catalog.-) pg_catalog.min(y.connections))::float8
		   OPERATOR(pg_catalog./) GREATEST(pg_catalog.date_part('epoch', pg_catalog.max(y.sampled_at)
		   OPERATOR(pg_catalog.-) pg_catalog.min(y.sampled_at)), 0.001) AS rate
FROM (SELECT x.*, pg_catalog.max(x.run_started) OVER () AS latest
	  FROM @extschema@.pg_procmem_history_system_samples(true) AS x) AS y
WHERE y.run_started OPERATOR(pg_catalog.=) y.latest
  AND y.sampled_at OPERATOR(pg_catalog.>=) (pg_catalog.now() OPERATOR(pg_catalog.-) '5 minutes'::interval)
HAVING pg_catalog.date_part('epoch', pg_catalog.max(y.sampled_at) OPERATOR(pg_catalog.-)
		   pg_catalog.min(y.sampled_at)) OPERATOR(pg_catalog.>=) 60;

COMMENT ON VIEW pg_procmem_connection_rate IS
'internal: new client connections per second over the last five minutes, from the memory history';

-- Everything pg_procmem_advice weighs, measured once, in one row: each check
-- (advice_checks.sql) is a function of this row alone. Reads status and
-- oom_score, never smaps_rollup.
CREATE VIEW pg_procmem_advice_facts AS
WITH p AS (
	-- own_type is set only for the postmaster and children without a PGPROC
	SELECT pr.pid, COALESCE(a.backend_type, pr.backend_type) AS backend_type, pr.backend_type AS own_type,
		   a.state, a.state_change, pr.overhead, pr.swap, pr.oom_score, pr.oom_score_adj, pr.jit
	FROM @extschema@.pg_procmem_processes(false) AS pr
		 LEFT JOIN pg_catalog.pg_stat_activity AS a ON a.pid OPERATOR(pg_catalog.=) pr.pid
), c AS (
	SELECT pg_catalog.count(*) FILTER (WHERE p.backend_type OPERATOR(pg_catalog.=) 'client backend') AS clients,
		   pg_catalog.count(*) FILTER (WHERE p.backend_type OPERATOR(pg_catalog.=) 'client backend'
									   AND p.state OPERATOR(pg_catalog.=) 'idle') AS idle,
		   pg_catalog.count(*) FILTER (WHERE p.backend_type OPERATOR(pg_catalog.=) 'client backend'
									   AND p.state OPERATOR(pg_catalog.=) 'idle'
									   AND p.state_change OPERATOR(pg_catalog.<)
										   (pg_catalog.now() OPERATOR(pg_catalog.-) '10 min'::interval)) AS idle_10min,
		   pg_catalog.sum(p.overhead) FILTER (WHERE p.backend_type OPERATOR(pg_catalog.=) 'client backend'
											  AND p.state OPERATOR(pg_catalog.=) 'idle')::bigint AS idle_overhead,
		   pg_catalog.max(p.oom_score) FILTER (WHERE p.backend_type OPERATOR(pg_catalog.=) 'client backend')
			   AS client_max_oom_score,
		   pg_catalog.count(*) FILTER (WHERE p.swap OPERATOR(pg_catalog.>) 0) AS swapping,
		   pg_catalog.sum(p.swap)::bigint AS swap,
		   pg_catalog.sum(p.overhead)::bigint AS overhead,
		   pg_catalog.sum(p.jit)::bigint AS jit_bytes,
		   pg_catalog.count(*) FILTER (WHERE p.jit OPERATOR(pg_catalog.>) 0) AS jit_processes
	FROM p
)
SELECT s.mem_total, s.mem_available, s.swap_total, s.committed_as, s.commit_limit, s.overcommit_memory,
	   s.transparent_hugepage, s.anon_hugepages, s.cgroup_path, s.cgroup_usage, s.cgroup_file, s.cgroup_shmem,
	   s.cgroup_oom_events, s.cgroup_oom_kills,
	   k.cpus, k.cpu_cache_bytes, k.cpu_cache_level, k.dirty_ratio, k.dirty_background_ratio, k.dirty_bytes,
	   k.dirty_background_bytes, k.overcommit_ratio, k.transparent_hugepage_defrag,
	   k.cgroup_tightest_limit, k.cgroup_tightest_room,
	   h.huge_pages, h.in_use AS huge_pages_in_use, h.page_tables, h.page_tables_with_huge_pages,
	   h.shared_memory_size, h.hugepages_total, h.hugepages_free, h.recommendation AS huge_pages_recommendation,
	   g.max_connections, g.work_mem, g.hash_mem_multiplier, g.maintenance_work_mem, g.autovacuum_work_mem,
	   g.autovacuum_max_workers, g.temp_buffers,
	   -- the cgroup's OOM kills since the server started or last restarted
	   -- after a crash (NULL without the memory history)
	   GREATEST(s.cgroup_oom_kills OPERATOR(pg_catalog.-) ok.cgroup_oom_kills, 0) AS oom_kills_lately,
	   ok.since AS oom_kills_since,
	   -- memory left: the smaller of MemAvailable and the cgroup's room; short
	   -- under 10% of RAM, or of a cgroup level's limit
	   LEAST(s.mem_available, s.cgroup_room) AS available,
	   ((s.mem_available OPERATOR(pg_catalog.*) 10) OPERATOR(pg_catalog.<) s.mem_total)
		   OR (k.cgroup_tightest_limit OPERATOR(pg_catalog.>) 0
			   AND (k.cgroup_tightest_room OPERATOR(pg_catalog.*) 10) OPERATOR(pg_catalog.<) k.cgroup_tightest_limit)
		   AS memory_short,
	   -- the kernel's dirty-page thresholds, in bytes (ratios are of
	   -- dirtyable memory, which MemAvailable approximates)
	   CASE WHEN k.dirty_bytes OPERATOR(pg_catalog.>) 0 THEN k.dirty_bytes
			ELSE (k.dirty_ratio OPERATOR(pg_catalog.*) s.mem_available) OPERATOR(pg_catalog./) 100 END
		   AS dirty_limit,
	   CASE WHEN k.dirty_background_bytes OPERATOR(pg_catalog.>) 0 THEN k.dirty_background_bytes
			ELSE (k.dirty_background_ratio OPERATOR(pg_catalog.*) s.mem_available) OPERATOR(pg_catalog./) 100 END
		   AS dirty_background_limit,
	   c.clients, c.idle, c.idle_10min, c.idle_overhead, c.client_max_oom_score, c.swapping, c.swap,
	   c.overhead, c.jit_bytes, c.jit_processes,
	   pg_catalog.current_setting('jit') AS jit, pg_catalog.current_setting('jit_above_cost') AS jit_above_cost,
	   pm.pid AS postmaster_pid, pm.oom_score AS postmaster_oom_score, pm.oom_score_adj AS postmaster_oom_score_adj,
	   x.pid AS top_pid, x.backend_type AS top_backend_type, x.own_type AS top_own_type, x.oom_score AS top_oom_score,
	   -- children without a PGPROC (the logger) are restarted alone: not these
	   y.pid AS aux_pid, y.backend_type AS aux_backend_type, y.oom_score AS aux_oom_score,
	   z.pid AS swap_pid, z.backend_type AS swap_backend_type, z.swap AS swap_bytes,
	   cr.connections AS new_connections, cr.seconds AS connection_seconds, cr.rate AS connection_rate,
	   dl.dsm_leftover, dl.dsm_leftover_segments, dl.dsm_leftover_names,
	   (SELECT pg_catalog.sum(d.sessions)::bigint FROM pg_catalog.pg_stat_database AS d) AS sessions
FROM @extschema@.pg_procmem_system_info() AS s,
	 @extschema@.pg_procmem_machine_info() AS k,
	 @extschema@.pg_procmem_hugepages AS h,
	 @extschema@.pg_procmem_memory_settings AS g,
	 @extschema@.pg_procmem_oom_kills_baseline() AS ok,
	 c
	 LEFT JOIN LATERAL (SELECT * FROM p WHERE p.backend_type OPERATOR(pg_catalog.=) 'postmaster'
						ORDER BY p.pid LIMIT 1) AS pm ON true
	 LEFT JOIN LATERAL (SELECT * FROM p ORDER BY p.oom_score DESC NULLS LAST, p.pid LIMIT 1) AS x ON true
	 LEFT JOIN LATERAL (SELECT * FROM p
						WHERE p.own_type IS NULL
						  AND p.backend_type OPERATOR(pg_catalog.<>) ALL (ARRAY['client backend', 'parallel worker'])
						ORDER BY p.oom_score DESC NULLS LAST, p.pid LIMIT 1) AS y ON true
	 LEFT JOIN LATERAL (SELECT * FROM p ORDER BY p.swap DESC NULLS LAST, p.pid LIMIT 1) AS z ON true
	 LEFT JOIN @extschema@.pg_procmem_connection_rate AS cr ON true
	 -- the newest sample's DSM segments left over (NULL without the history)
	 LEFT JOIN LATERAL (SELECT x.dsm_leftover, x.dsm_leftover_segments, x.dsm_leftover_names
						FROM @extschema@.pg_procmem_history_system_samples(true) AS x
						ORDER BY x.sample DESC LIMIT 1) AS dl ON true;

COMMENT ON VIEW pg_procmem_advice_facts IS
'internal: everything pg_procmem_advice weighs, measured once, in one row';

REVOKE ALL ON pg_procmem_connection_rate FROM PUBLIC;
REVOKE ALL ON pg_procmem_advice_facts FROM PUBLIC;
GRANT SELECT ON pg_procmem_connection_rate, pg_procmem_advice_facts TO pg_read_all_stats;

-- The checks of pg_procmem_advice, a function a family: each reads the one
-- row of pg_procmem_advice_facts it is given and returns a row a finding
-- (check_name, severity, summary, evidence, recommendation). summary is
-- the finding in at most 64 characters, worst-case figures included, so
-- that "SELECT severity, summary" fits an 80-column terminal. Thresholds
-- and the figures behind them are in docs/views.md. SQL-standard bodies: parsed once,
-- here, so the caller's search_path cannot change what they call.
-- (OPERATOR() syntax has no precedence: every mix is parenthesized.)

-- Huge pages: the page tables they would save, transparent huge pages.
CREATE FUNCTION pg_procmem_advice_huge_pages(f @extschema@.pg_procmem_advice_facts)
RETURNS TABLE (check_name text, severity text, summary text, evidence text, recommendation text)
LANGUAGE sql STABLE STRICT PARALLEL SAFE
BEGIN ATOMIC
	SELECT 'huge_pages',
		   CASE WHEN f.page_tables OPERATOR(pg_catalog.>=) (f.mem_total OPERATOR(pg_catalog./) 10)
				THEN 'critical' ELSE 'warning' END,
		   pg_catalog.format('page tables %s; about %s with huge pages', pg_catalog.pg_size_pretty(f.page_tables),
							 pg_catalog.pg_size_pretty(f.page_tables_with_huge_pages)),
		   pg_catalog.format('huge_pages = %s, and shared memory is not on huge pages; the page tables of the '
							 'server''s processes take %s (%s%% of RAM), about %s with huge pages; '
							 'shared_memory_size %s; vm.nr_hugepages %s, %s free',
							 f.huge_pages, pg_catalog.pg_size_pretty(f.page_tables),
							 pg_catalog.round((f.page_tables OPERATOR(pg_catalog.*) 100.0) OPERATOR(pg_catalog./) f.mem_total, 1),
							 pg_catalog.pg_size_pretty(f.page_tables_with_huge_pages),
							 COALESCE(pg_catalog.pg_size_pretty(f.shared_memory_size), 'unknown'),
							 f.hugepages_total, f.hugepages_free),
		   f.huge_pages_recommendation OPERATOR(pg_catalog.||)
			   ' (page tables grow with shared memory touched x processes: one server reached 25 GB of them; with huge pages it had 61 MB)'
	WHERE NOT f.huge_pages_in_use
	  AND ((f.page_tables OPERATOR(pg_catalog.-) f.page_tables_with_huge_pages)
			   OPERATOR(pg_catalog.>=) (f.mem_total OPERATOR(pg_catalog./) 100)
		   OR COALESCE(f.shared_memory_size, 0) OPERATOR(pg_catalog.>=) 8589934592
		   OR (f.huge_pages OPERATOR(pg_catalog.=) 'try' AND f.hugepages_total OPERATOR(pg_catalog.>) 0))

	UNION ALL
	SELECT 'transparent_hugepage', 'warning',
		   pg_catalog.format('transparent huge pages always; %s on them', pg_catalog.pg_size_pretty(f.anon_hugepages)),
		   pg_catalog.format('transparent huge pages: enabled = always, defrag = %s; %s of anonymous memory on them now',
							 f.transparent_hugepage_defrag, pg_catalog.pg_size_pretty(f.anon_hugepages)),
		   'set /sys/kernel/mm/transparent_hugepage/enabled to madvise or never (and transparent_hugepage=madvise '
		   'on the kernel command line): with always, backends'' private memory is gathered into 2 MB pages, '
		   'which costs latency (compaction) and memory; PostgreSQL uses huge pages for shared memory through huge_pages'
	WHERE f.transparent_hugepage OPERATOR(pg_catalog.=) 'always';
END;

-- The OOM killer: is the postmaster protected, does it take an auxiliary
-- process before any client backend.
CREATE FUNCTION pg_procmem_advice_oom(f @extschema@.pg_procmem_advice_facts)
RETURNS TABLE (check_name text, severity text, summary text, evidence text, recommendation text)
LANGUAGE sql STABLE STRICT PARALLEL SAFE
BEGIN ATOMIC
	SELECT 'oom_postmaster',
		   -- unprotected is a risk; it is critical when memory is short and
		   -- the killer would take the postmaster or an auxiliary process
		   -- first (on an idle server the postmaster's score is simply the
		   -- highest: that alone pages nobody)
		   CASE WHEN f.memory_short
					 AND (f.top_backend_type OPERATOR(pg_catalog.=) 'postmaster'
						  OR (f.top_own_type IS NULL
							  AND f.top_backend_type OPERATOR(pg_catalog.<>) ALL (ARRAY['client backend', 'parallel worker'])))
				THEN 'critical' ELSE 'warning' END,
		   pg_catalog.format('postmaster not protected from the OOM killer (adj %s)', f.postmaster_oom_score_adj),
		   pg_catalog.format('the postmaster (pid %s) has oom_score_adj %s and oom_score %s; the highest oom_score '
							 'among the server''s processes is %s (the %s, pid %s); memory left: %s%s',
							 f.postmaster_pid, f.postmaster_oom_score_adj, f.postmaster_oom_score, f.top_oom_score,
							 f.top_backend_type, f.top_pid,
							 COALESCE(pg_catalog.pg_size_pretty(f.available), 'unknown'),
							 CASE WHEN f.memory_short THEN ' (short)' ELSE '' END),
		   'protect it: start it with oom_score_adj = -1000 (systemd: OOMScoreAdjust=-1000) and with '
		   'PG_OOM_ADJUST_FILE=/proc/self/oom_score_adj and PG_OOM_ADJUST_VALUE=0 in its environment, so that its '
		   'children go back to 0; if the OOM killer takes the postmaster, the server stays down until something restarts it'
	WHERE f.postmaster_oom_score_adj OPERATOR(pg_catalog.>) -1000

	UNION ALL
	SELECT 'oom_auxiliary_first', 'warning',
		   pg_catalog.format('%s: above every client for the OOM killer',
							 @extschema@.pg_procmem_clip(f.aux_backend_type, 24)),
		   pg_catalog.format('the %s (pid %s) has oom_score %s, above every client backend (highest: %s): the OOM killer '
							 'would take it before any client backend, and killing any child of the postmaster ends every session (crash restart)',
							 f.aux_backend_type, f.aux_pid, f.aux_oom_score, f.client_max_oom_score),
		   'oom_score follows resident memory, and without huge pages that includes the shared memory a process touched: '
		   'the checkpointer and background writer touch most of shared_buffers. With huge_pages = on, shared memory '
		   'leaves RSS and the score follows each process''s own memory; and keep clear of the OOM killer (see headroom)'
	WHERE f.aux_oom_score OPERATOR(pg_catalog.>) f.client_max_oom_score;
END;

-- The kernel's overcommit and writeback, and memory settings set too high
-- for the memory left or for the CPU's cache.
CREATE FUNCTION pg_procmem_advice_memory_settings(f @extschema@.pg_procmem_advice_facts)
RETURNS TABLE (check_name text, severity text, summary text, evidence text, recommendation text)
LANGUAGE sql STABLE STRICT PARALLEL SAFE
BEGIN ATOMIC
	SELECT 'overcommit',
		   CASE WHEN f.overcommit_memory OPERATOR(pg_catalog.=) 2
					 AND f.committed_as OPERATOR(pg_catalog.>=) ((f.commit_limit OPERATOR(pg_catalog.*) 98) OPERATOR(pg_catalog./) 100)
				THEN 'critical'
				WHEN f.overcommit_memory OPERATOR(pg_catalog.=) 1
					 OR (f.overcommit_memory OPERATOR(pg_catalog.=) 2
						 AND f.committed_as OPERATOR(pg_catalog.>=) ((f.commit_limit OPERATOR(pg_catalog.*) 9) OPERATOR(pg_catalog./) 10))
					 OR (f.overcommit_memory OPERATOR(pg_catalog.=) 0
						 AND f.committed_as OPERATOR(pg_catalog.>) (f.mem_total OPERATOR(pg_catalog.+) f.swap_total))
				THEN 'warning' ELSE 'info' END,
		   CASE f.overcommit_memory
				WHEN 2 THEN pg_catalog.format('strict overcommit: %s of %s committed', pg_catalog.pg_size_pretty(f.committed_as),
											  pg_catalog.pg_size_pretty(f.commit_limit))
				WHEN 1 THEN 'vm.overcommit_memory = 1: every allocation is granted'
				ELSE pg_catalog.format('heuristic overcommit: %s committed, RAM + swap %s',
									   pg_catalog.pg_size_pretty(f.committed_as),
									   pg_catalog.pg_size_pretty(f.mem_total OPERATOR(pg_catalog.+) f.swap_total)) END,
		   pg_catalog.format('vm.overcommit_memory = %s, vm.overcommit_ratio = %s; Committed_AS %s, CommitLimit %s, '
							 'RAM %s, swap %s', f.overcommit_memory, f.overcommit_ratio,
							 pg_catalog.pg_size_pretty(f.committed_as), pg_catalog.pg_size_pretty(f.commit_limit),
							 pg_catalog.pg_size_pretty(f.mem_total), pg_catalog.pg_size_pretty(f.swap_total)),
		   CASE WHEN f.overcommit_memory OPERATOR(pg_catalog.=) 2
				THEN 'strict overcommit: allocations past CommitLimit fail with "out of memory" errors instead of '
					 'waking the OOM killer; raise vm.overcommit_ratio or add memory before Committed_AS reaches it'
				WHEN f.overcommit_memory OPERATOR(pg_catalog.=) 1
				THEN 'the kernel grants every allocation, so the OOM killer is the only limit: on a dedicated database '
					 'server set vm.overcommit_memory = 2 (PostgreSQL''s documentation, "Linux Memory Overcommit"), with '
					 'vm.overcommit_ratio so that CommitLimit covers RAM less what the kernel needs'
				ELSE 'heuristic overcommit: only blatant over-allocations fail, and more is promised than can be kept '
					 'once Committed_AS passes RAM + swap; on a dedicated database server PostgreSQL''s documentation '
					 'advises vm.overcommit_memory = 2, so that a backend gets an error instead of the OOM killer ending every session'
		   END

	UNION ALL
	SELECT 'work_mem_exposure', 'warning',
		   pg_catalog.format('work_mem and temp_buffers could take %s; %s left',
							 pg_catalog.pg_size_pretty((e.connections OPERATOR(pg_catalog.+) e.autovacuum)
													   OPERATOR(pg_catalog.+) e.temp),
							 pg_catalog.pg_size_pretty(f.available)),
		   pg_catalog.format('max_connections %s x work_mem %s x hash_mem_multiplier %s = %s, plus autovacuum_max_workers %s x '
							 '%s = %s, plus max_connections x temp_buffers %s = %s (local buffers a session keeps '
							 'until it ends), against %s of memory left (the smaller of MemAvailable and the cgroup''s room)',
							 f.max_connections, pg_catalog.pg_size_pretty(f.work_mem), f.hash_mem_multiplier,
							 pg_catalog.pg_size_pretty(e.connections), f.autovacuum_max_workers,
							 pg_catalog.pg_size_pretty(f.autovacuum_work_mem), pg_catalog.pg_size_pretty(e.autovacuum),
							 pg_catalog.pg_size_pretty(f.temp_buffers), pg_catalog.pg_size_pretty(e.temp),
							 pg_catalog.pg_size_pretty(f.available)),
		   pg_catalog.format('work_mem is per sort or hash node and per backend: lower it globally (about %s fits) and '
							 'raise it per role or per query (SET LOCAL) where a benchmark shows a gain; keep '
							 'temp_buffers small where sessions use temporary tables; or lower '
							 'max_connections and put a pooler in front',
							 pg_catalog.pg_size_pretty(GREATEST(((f.available OPERATOR(pg_catalog.-) e.autovacuum) OPERATOR(pg_catalog.-) e.temp)
										OPERATOR(pg_catalog./) (f.max_connections OPERATOR(pg_catalog.*) f.hash_mem_multiplier), 65536)::bigint))
	FROM (SELECT ((f.max_connections OPERATOR(pg_catalog.*) f.work_mem) OPERATOR(pg_catalog.*) f.hash_mem_multiplier)::bigint
					 AS connections,
				 f.autovacuum_max_workers OPERATOR(pg_catalog.*) f.autovacuum_work_mem AS autovacuum,
				 f.max_connections OPERATOR(pg_catalog.*) f.temp_buffers AS temp) AS e
	WHERE ((e.connections OPERATOR(pg_catalog.+) e.autovacuum) OPERATOR(pg_catalog.+) e.temp) OPERATOR(pg_catalog.>) f.available

	UNION ALL
	SELECT w.setting OPERATOR(pg_catalog.||) '_above_cpu_cache', 'warning',
		   pg_catalog.format('%s %s, %s times the CPU''s cache', w.setting, pg_catalog.pg_size_pretty(w.bytes),
							 pg_catalog.round(w.bytes::numeric OPERATOR(pg_catalog./) f.cpu_cache_bytes)),
		   pg_catalog.format('%s = %s is %s times the CPU''s last-level cache (L%s, %s)', w.setting,
							 pg_catalog.pg_size_pretty(w.bytes),
							 pg_catalog.round(w.bytes::numeric OPERATOR(pg_catalog./) f.cpu_cache_bytes, 1),
							 f.cpu_cache_level, pg_catalog.pg_size_pretty(f.cpu_cache_bytes)),
		   'bigger is not faster: hash tables and sort runs that outgrow the cache wait on main memory (a 16 GB '
		   'maintenance_work_mem built a GIN index about 30% slower than 64 MB); use modest values (64 MB to 1 GB) '
		   'and raise them per session (SET) for the jobs where a benchmark on this machine shows a gain'
	FROM (VALUES ('work_mem', f.work_mem), ('maintenance_work_mem', f.maintenance_work_mem)) AS w(setting, bytes)
	WHERE f.cpu_cache_bytes OPERATOR(pg_catalog.>) 0
	  AND w.bytes OPERATOR(pg_catalog.>=) (16 OPERATOR(pg_catalog.*) f.cpu_cache_bytes)
	  AND w.bytes OPERATOR(pg_catalog.>=) 1073741824

	UNION ALL
	SELECT 'dirty_writeback',
		   CASE WHEN f.maintenance_work_mem OPERATOR(pg_catalog.>) f.dirty_limit THEN 'warning' ELSE 'info' END,
		   pg_catalog.format('maintenance_work_mem %s; writeback starts at %s', pg_catalog.pg_size_pretty(f.maintenance_work_mem),
							 pg_catalog.pg_size_pretty(f.dirty_background_limit)),
		   pg_catalog.format('maintenance_work_mem %s; the kernel starts writeback at %s of dirty pages and throttles '
							 'writers at %s (vm.dirty_background_%s, vm.dirty_%s)',
							 pg_catalog.pg_size_pretty(f.maintenance_work_mem),
							 pg_catalog.pg_size_pretty(f.dirty_background_limit), pg_catalog.pg_size_pretty(f.dirty_limit),
							 CASE WHEN f.dirty_background_bytes OPERATOR(pg_catalog.>) 0
								  THEN 'bytes = ' OPERATOR(pg_catalog.||) f.dirty_background_bytes
								  ELSE ('ratio = ' OPERATOR(pg_catalog.||) f.dirty_background_ratio) OPERATOR(pg_catalog.||) '%' END,
							 CASE WHEN f.dirty_bytes OPERATOR(pg_catalog.>) 0
								  THEN 'bytes = ' OPERATOR(pg_catalog.||) f.dirty_bytes
								  ELSE ('ratio = ' OPERATOR(pg_catalog.||) f.dirty_ratio) OPERATOR(pg_catalog.||) '%' END),
		   'a maintenance job this large writes its temporary files in batches past the dirty thresholds, and then '
		   'stalls while the kernel writes them back; keep maintenance_work_mem modest (64 MB to 1 GB), or set '
		   'vm.dirty_background_bytes (e.g. 256 MB) so that writeback starts early and runs smoothly'
	WHERE f.maintenance_work_mem OPERATOR(pg_catalog.>) f.dirty_background_limit;
END;

-- Connections: how many may come, how many sit idle, how fast they come.
CREATE FUNCTION pg_procmem_advice_connections(f @extschema@.pg_procmem_advice_facts)
RETURNS TABLE (check_name text, severity text, summary text, evidence text, recommendation text)
LANGUAGE sql STABLE STRICT PARALLEL SAFE
BEGIN ATOMIC
	SELECT 'max_connections',
		   CASE WHEN f.clients OPERATOR(pg_catalog.>) (10 OPERATOR(pg_catalog.*) f.cpus) THEN 'warning' ELSE 'info' END,
		   pg_catalog.format('max_connections %s is %s times the %s CPUs', f.max_connections,
							 pg_catalog.round(f.max_connections::numeric OPERATOR(pg_catalog./) f.cpus, 1), f.cpus),
		   pg_catalog.format('max_connections %s is %s times the %s CPUs this server may use; %s now',
							 f.max_connections, pg_catalog.round(f.max_connections::numeric OPERATOR(pg_catalog./) f.cpus, 1),
							 f.cpus, CASE f.clients WHEN 1 THEN '1 client backend'
										ELSE f.clients OPERATOR(pg_catalog.||) ' client backends' END),
		   'more connections than about 10 times the cores rarely add throughput, and each one costs memory; '
		   'cap them and put a pooler (PgBouncer) in front: with one connection per transaction, a pooler '
		   'served about 8 times more transactions than direct connections'
	WHERE f.max_connections OPERATOR(pg_catalog.>) (10 OPERATOR(pg_catalog.*) f.cpus)

	UNION ALL
	SELECT 'idle_connections', 'warning',
		   pg_catalog.format('%s idle connections hold %s', f.idle, pg_catalog.pg_size_pretty(f.idle_overhead)),
		   pg_catalog.format('%s idle client backends (%s CPUs) hold %s, %s each on average; %s of them idle for over 10 minutes',
							 f.idle, f.cpus, pg_catalog.pg_size_pretty(f.idle_overhead),
							 pg_catalog.pg_size_pretty(f.idle_overhead OPERATOR(pg_catalog./) f.idle), f.idle_10min),
		   'a transaction pooler (PgBouncer, pool_mode = transaction) serves them with a few server connections; '
		   'idle_session_timeout closes the forgotten ones'
	WHERE f.idle OPERATOR(pg_catalog.>=) GREATEST(10, 10 OPERATOR(pg_catalog.*) f.cpus)

	UNION ALL
	SELECT 'connection_rate',
		   CASE WHEN f.connection_rate OPERATOR(pg_catalog.>=) 10 THEN 'warning' ELSE 'info' END,
		   pg_catalog.format('%s new connections per second', pg_catalog.round(f.connection_rate::numeric, 1)),
		   pg_catalog.format('%s new client connections per second over the last %s seconds (counted by '
							 'the memory history: %s)', pg_catalog.round(f.connection_rate::numeric, 1),
							 pg_catalog.round(f.connection_seconds::numeric), f.new_connections),
		   'above about 10 per second, a pooler pays off: every connection is a new process, and with one '
		   'connection per transaction a pooler served about 8 times more transactions'
	WHERE f.connection_seconds OPERATOR(pg_catalog.>) 0

	UNION ALL
	SELECT 'connection_rate', 'info',
		   'new connections per second: unknown (no history yet)',
		   -- without the history no window the sessions counter covers can be told
		   pg_catalog.format('new sessions per second: unknown (the memory history has no minute of this run '
							 'in its last 5 minutes: pg_procmem is not in shared_preload_libraries, the server '
							 'just started, or pg_procmem.sample_interval is 0 or above 4 minutes); '
							 'pg_stat_database counts %s sessions, which may include sessions of runs before '
							 'this one (started %s)',
							 f.sessions, pg_catalog.to_char(pg_catalog.pg_postmaster_start_time(), 'YYYY-MM-DD HH24:MI:SS TZ')),
		   'measure it: SELECT sum(sessions) FROM pg_stat_database twice, the difference divided by the seconds '
		   'between; above about 10 per second, a pooler pays off (every connection is a new process, and with one '
		   'connection per transaction a pooler served about 8 times more transactions)'
	WHERE f.sessions OPERATOR(pg_catalog.>=) 1000
	  AND NOT COALESCE(f.connection_seconds OPERATOR(pg_catalog.>) 0, false);
END;

-- Memory running out: swap in use, a cgroup near its limit, OOM kills seen.
CREATE FUNCTION pg_procmem_advice_pressure(f @extschema@.pg_procmem_advice_facts)
RETURNS TABLE (check_name text, severity text, summary text, evidence text, recommendation text)
LANGUAGE sql STABLE STRICT PARALLEL SAFE
BEGIN ATOMIC
	SELECT 'swap', 'warning',
		   pg_catalog.format('%s swapped out, by %s', pg_catalog.pg_size_pretty(f.swap),
							 CASE f.swapping WHEN 1 THEN '1 process' ELSE f.swapping OPERATOR(pg_catalog.||) ' processes' END),
		   pg_catalog.format('%s of the server''s processes %s %s swapped out; the largest: the %s (pid %s), %s',
							 f.swapping, CASE f.swapping WHEN 1 THEN 'has' ELSE 'have' END,
							 pg_catalog.pg_size_pretty(f.swap), f.swap_backend_type, f.swap_pid,
							 pg_catalog.pg_size_pretty(f.swap_bytes)),
		   'memory is short: a backend whose memory was swapped out stalls on page faults when it next runs; '
		   'make room (see pg_procmem_headroom: work_mem, max_connections, shared_buffers) or add memory'
	WHERE f.swap OPERATOR(pg_catalog.>) 0

	UNION ALL
	SELECT 'cgroup_limit',
		   CASE WHEN (f.cgroup_tightest_room OPERATOR(pg_catalog.*) 100)
					 OPERATOR(pg_catalog.<) (f.cgroup_tightest_limit OPERATOR(pg_catalog.*) 3)
				THEN 'critical' ELSE 'warning' END,
		   pg_catalog.format('memory cgroup: %s left of a %s limit', pg_catalog.pg_size_pretty(f.cgroup_tightest_room),
							 pg_catalog.pg_size_pretty(f.cgroup_tightest_limit)),
		   pg_catalog.format('memory cgroup %s (or an ancestor): %s left of a %s limit (%s%%), page cache and '
							 'reclaimable slab not counted; usage of the server''s cgroup %s, of which %s page cache',
							 f.cgroup_path, pg_catalog.pg_size_pretty(f.cgroup_tightest_room),
							 pg_catalog.pg_size_pretty(f.cgroup_tightest_limit),
							 pg_catalog.round((f.cgroup_tightest_room OPERATOR(pg_catalog.*) 100.0)
											  OPERATOR(pg_catalog./) f.cgroup_tightest_limit, 1),
							 pg_catalog.pg_size_pretty(f.cgroup_usage),
							 pg_catalog.pg_size_pretty(f.cgroup_file OPERATOR(pg_catalog.-) f.cgroup_shmem)),
		   'at the limit the kernel OOM-kills inside the cgroup, and a killed backend means a crash restart: raise the '
		   'container''s memory limit, or lower what the server can take (work_mem, max_connections, shared_buffers)'
	WHERE f.cgroup_tightest_limit OPERATOR(pg_catalog.>) 0
	  AND (f.cgroup_tightest_room OPERATOR(pg_catalog.*) 10) OPERATOR(pg_catalog.<) f.cgroup_tightest_limit

	UNION ALL
	-- counted since the server started or last restarted after a crash (a
	-- crash row counts the kills before it): without the memory history,
	-- only the cgroup's lifetime count, which may be old news
	SELECT 'dsm_leftover',
		   -- never critical: it is memory held, not a process about to take more
		   CASE WHEN (f.dsm_leftover OPERATOR(pg_catalog.*) 10) OPERATOR(pg_catalog.>=)
					 COALESCE(NULLIF(f.cgroup_tightest_limit, 0), f.mem_total) THEN 'warning' ELSE 'info' END,
		   pg_catalog.format('%s of shared memory (DSM) left over', pg_catalog.pg_size_pretty(f.dsm_leftover)),
		   pg_catalog.format('dynamic shared memory segments this server mapped: %s, holding %s, not mapped by any of '
							 'its processes for pg_procmem.dsm_leftover_after (%s); in the cgroup''s usage, in no process''s; '
							 'the largest: %s',
							 f.dsm_leftover_segments, pg_catalog.pg_size_pretty(f.dsm_leftover),
							 pg_catalog.current_setting('pg_procmem.dsm_leftover_after', true),
							 pg_catalog.array_to_string(f.dsm_leftover_names, ', ')),
		   'a process killed before it removed its segments leaves them behind (a parallel query''s hash table); '
		   'pg_procmem_history_system.dsm_leftover_names says where they are. PostgreSQL removes those its control '
		   'segment lists at its next start; one it no longer lists stays until removed by hand: first make sure no '
		   'process maps it (lsof, or grep its name in /proc/*/maps), then rm the file (posix, mmap) or ipcrm -m the '
		   'shmid (System V)'
	WHERE f.dsm_leftover OPERATOR(pg_catalog.>) 0

	UNION ALL
	SELECT 'cgroup_oom_kills', CASE WHEN k.lately THEN 'critical' ELSE 'warning' END,
		   pg_catalog.format('%s in the server''s memory cgroup %s',
							 CASE k.kills WHEN 1 THEN '1 OOM kill' ELSE k.kills OPERATOR(pg_catalog.||) ' OOM kills' END,
							 CASE WHEN k.lately THEN 'since ' OPERATOR(pg_catalog.||)
									   pg_catalog.to_char(f.oom_kills_since, 'YYYY-MM-DD HH24:MI')
								  ELSE 'since it was made' END),
		   pg_catalog.format('the memory cgroup %s counted %s OOM kills %s; %s since it was made (%s times at its limit)',
							 f.cgroup_path, k.kills,
							 CASE WHEN k.lately THEN 'since ' OPERATOR(pg_catalog.||) f.oom_kills_since
										OPERATOR(pg_catalog.||) ', when the server started or last restarted after a crash'
								  ELSE 'in its life (without the memory history the server''s share is unknown)' END,
							 f.cgroup_oom_kills, COALESCE(f.cgroup_oom_events::text, 'unknown')),
		   'the kernel killed processes in the server''s cgroup for memory, and a killed backend ends every '
		   'session; pg_procmem_crashes names what was killed and pg_procmem_crash_holders who held the memory '
		   '(with pg_procmem in shared_preload_libraries); raise the limit or lower what the server can take '
		   '(work_mem, temp_buffers, max_connections, shared_buffers)'
	FROM (SELECT f.oom_kills_lately IS NOT NULL AS lately,
				 COALESCE(f.oom_kills_lately, f.cgroup_oom_kills) AS kills) AS k
	WHERE k.kills OPERATOR(pg_catalog.>) 0

	UNION ALL
	SELECT 'jit_memory',
		   CASE WHEN (f.jit_bytes OPERATOR(pg_catalog.*) 4) OPERATOR(pg_catalog.>=) f.overhead THEN 'warning' ELSE 'info' END,
		   pg_catalog.format('JIT libraries hold %s, %s%% of all overhead', pg_catalog.pg_size_pretty(f.jit_bytes),
							 pg_catalog.round((100 OPERATOR(pg_catalog.*) f.jit_bytes)::numeric OPERATOR(pg_catalog./) f.overhead)),
		   pg_catalog.format('%s hold %s in the JIT libraries (LLVM''s data, relocated when a backend first '
							 'JIT-compiles), %s%% of all processes'' overhead; jit = %s, jit_above_cost = %s',
							 CASE f.jit_processes WHEN 1 THEN '1 process'
								  ELSE f.jit_processes OPERATOR(pg_catalog.||) ' processes' END,
							 pg_catalog.pg_size_pretty(f.jit_bytes),
							 pg_catalog.round((100 OPERATOR(pg_catalog.*) f.jit_bytes)::numeric OPERATOR(pg_catalog./) f.overhead),
							 f.jit, f.jit_above_cost),
		   pg_catalog.format('a backend keeps the JIT libraries until it exits: jit = off (in postgresql.conf and for every role '
							 'or database that sets it) would save at least %s now (see '
							 'pg_procmem_breakdown.jit: LLVM''s own data; what compiling grew the heap by comes on top); '
							 'or raise jit_above_cost (%s) so that only long analytic queries '
							 'compile, and let a pooler recycle server connections (server_lifetime)',
							 pg_catalog.pg_size_pretty(f.jit_bytes), f.jit_above_cost)
	WHERE f.jit_bytes OPERATOR(pg_catalog.>=) 33554432
	  AND (f.jit_bytes OPERATOR(pg_catalog.*) 10) OPERATOR(pg_catalog.>=) f.overhead;
END;

-- What to change about a crash's victim that held the memory itself, for
-- the advice: a session not running a statement held it between
-- statements (its temp_buffers, where set; no work_mem); a statement whose
-- plans had no sort or hash held its own memory (max_backend_memory bounds
-- it, no work_mem); else its work_mem, where it was set (said: what it ran
-- with, work_mem first when it said it).
CREATE FUNCTION pg_procmem_crash_own_advice(state text, plan_memory text, said text[], temp_buffers_source text,
											work_mem_source text, usename text, datname text, query text)
RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN state IN ('idle', 'idle in transaction', 'idle in transaction (aborted)')
			THEN pg_catalog.format('It was %s at its last sample: it held the memory between statements, '
								   'which no work_mem bounds (%s). End such sessions sooner '
								   '(idle_in_transaction_session_timeout, idle_session_timeout), and '
								   'pg_procmem.max_backend_memory bounds what one may hold.', state,
								   COALESCE(pg_catalog.split_part((SELECT x FROM pg_catalog.unnest(said) AS x
																   WHERE x LIKE 'temp_buffers =%'), ' (', 1)
											OPERATOR(pg_catalog.||) ' set '
											OPERATOR(pg_catalog.||) @extschema@.pg_procmem_set_where(temp_buffers_source)
											OPERATOR(pg_catalog.||) ': local buffers it keeps until it ends',
											'a temporary table''s buffers, its caches, what a function kept'))
			WHEN plan_memory OPERATOR(pg_catalog.=) 'none'
			THEN 'Its statement had no sort or hash, whose memory work_mem bounds: what grew was its own '
				 '(a function''s variables, an array or a value it built, an aggregate''s state), which no '
				 'work_mem bounds; pg_procmem.max_backend_memory does. Find what grows (EXPLAIN ANALYZE, '
				 'the function''s code) on a copy.'
			WHEN @extschema@.pg_procmem_set_where(work_mem_source) IS NOT NULL
			THEN pg_catalog.format('It ran with %s, set %s: each sort or hash of a query may take '
								   'work_mem (times hash_mem_multiplier for a hash); lower it there%s.',
								   pg_catalog.split_part(said[1], ' (', 1),
								   @extschema@.pg_procmem_set_where(work_mem_source) OPERATOR(pg_catalog.||)
									   CASE work_mem_source WHEN 'session' THEN ' (the application''s SET)'
											WHEN 'client' THEN ' (PGOPTIONS)' ELSE '' END,
								   CASE work_mem_source
										WHEN 'user' THEN pg_catalog.format(' (ALTER ROLE %I RESET work_mem)', usename)
										WHEN 'database' THEN pg_catalog.format(' (ALTER DATABASE %I RESET work_mem)', datname)
										WHEN 'database user' THEN pg_catalog.format(' (ALTER ROLE %I IN DATABASE %I RESET work_mem)',
																					 usename, datname)
										ELSE '' END)
			WHEN query IS NOT NULL
			THEN 'Find what in this query grows (EXPLAIN ANALYZE it on a copy) and lower work_mem for it.' END;

COMMENT ON FUNCTION pg_procmem_crash_own_advice(text, text, text[], text, text, text, text, text) IS
'internal: what to change about a crash''s victim that held the memory itself, for the advice';

-- Kills for memory of the last day, from the memory history (none without
-- pg_procmem in shared_preload_libraries): a crash restart begun by a
-- signal 9 with the cgroup's OOM kill counter rising (or unknown). What was
-- killed, who it was, what it ran and with which settings (what its
-- session, role or database gave it: said, work_mem first when it did; the
-- largest group's: holder_said), who held the memory, what to change. The
-- summary gives the time of day (the evidence has the date).
CREATE FUNCTION pg_procmem_advice_crashes(f @extschema@.pg_procmem_advice_facts)
RETURNS TABLE (check_name text, severity text, summary text, evidence text, recommendation text)
LANGUAGE sql STABLE STRICT PARALLEL RESTRICTED
BEGIN ATOMIC
	SELECT 'crash_restart', 'critical',
		   @extschema@.pg_procmem_clip(pg_catalog.format('crash at %s: %s', v.at,
				CASE WHEN v.elsewhere THEN v.holders
					 ELSE pg_catalog.concat_ws(' ', CASE WHEN c.killed_pid IS NULL THEN 'guess: pid ' ELSE 'pid ' END
												   OPERATOR(pg_catalog.||) v.pid, v.who,
											   pg_catalog.pg_size_pretty(c.overhead))
						  OPERATOR(pg_catalog.||) COALESCE(': ' OPERATOR(pg_catalog.||) c.query, '') END), 64),
		   pg_catalog.concat_ws('; ',
				pg_catalog.format('at %s %s', pg_catalog.to_char(COALESCE(c.exited_at, c.crashed_at), 'YYYY-MM-DD HH24:MI:SS.MS'),
								  COALESCE('the postmaster logged: ' OPERATOR(pg_catalog.||) c.logged,
										   'the postmaster logged nothing: ' OPERATOR(pg_catalog.||) c.how_known)),
				CASE WHEN c.oom_killed AND c.killed_after IS NOT NULL
					 THEN pg_catalog.format('the OOM killer killed it between %s and %s (its kill counter rose by %s); '
											'it exited at %s', pg_catalog.to_char(c.killed_after, 'HH24:MI:SS.MS'),
											pg_catalog.to_char(c.crashed_at, 'HH24:MI:SS.MS'), c.cgroup_oom_kills,
											pg_catalog.to_char(c.exited_at, 'HH24:MI:SS.MS')) END,
				NULLIF(pg_catalog.concat_ws(', ', 'user ' OPERATOR(pg_catalog.||) c.usename,
						   'application ' OPERATOR(pg_catalog.||) c.application_name,
						   'database ' OPERATOR(pg_catalog.||) c.datname), ''),
				'its query: ' OPERATOR(pg_catalog.||) pg_catalog.rtrim(@extschema@.pg_procmem_clip(c.query, 300), '; '),
				CASE WHEN c.overhead IS NOT NULL
					 THEN pg_catalog.format('it held %s at its last sample', pg_catalog.pg_size_pretty(c.overhead))
					 WHEN v.pid IS NOT NULL
					 THEN 'no sample saw it (it grew within one sample interval' OPERATOR(pg_catalog.||)
						  COALESCE(pg_catalog.format('; the cgroup had %s of room at the last sample',
							  pg_catalog.pg_size_pretty(NULLIF(GREATEST(c.cgroup_limit OPERATOR(pg_catalog.-)
																		 c.cgroup_usage_at_sample, 0), 0))), '')
						  OPERATOR(pg_catalog.||) ')' END,
				'it ran with ' OPERATOR(pg_catalog.||) COALESCE(v.settings, 'the server''s memory settings'),
				CASE WHEN v.elsewhere
					 THEN pg_catalog.format('at the last sample %s (the largest %s)%s', v.holders,
											COALESCE(pg_catalog.pg_size_pretty(h.largest), 'unknown'),
											COALESCE(', with ' OPERATOR(pg_catalog.||) v.holder_settings, '')) END,
				CASE WHEN c.cgroup_oom_kills OPERATOR(pg_catalog.>) 1
					 THEN pg_catalog.format('the cgroup counted %s OOM kills: others were killed too', c.cgroup_oom_kills) END),
		   pg_catalog.concat_ws(' ',
				CASE WHEN v.elsewhere AND @extschema@.pg_procmem_set_where(h.temp_buffers_source) IS NOT NULL
					 THEN pg_catalog.format('%s: each may keep %s of local buffers until it ends (set %s): '
											'lower it, or end such sessions sooner (idle_session_timeout, a pooler).',
											v.holders, (SELECT pg_catalog.split_part(x, ' (', 1)
														FROM pg_catalog.unnest(v.holder_said) AS x
														WHERE x LIKE 'temp_buffers =%'), @extschema@.pg_procmem_set_where(h.temp_buffers_source))
					 WHEN v.elsewhere
					 THEN pg_catalog.format('%s: lower what these processes can take (work_mem, temp_buffers) or how '
											'many run at once (a pooler).', v.holders) END,
				CASE WHEN NOT v.elsewhere
					 THEN @extschema@.pg_procmem_crash_own_advice(c.state, c.plan_memory, v.said, c.temp_buffers_source,
							  c.work_mem_source, c.usename, c.datname, c.query) END,
				CASE WHEN c.backend_type OPERATOR(pg_catalog.<>) ALL (ARRAY['client backend', 'parallel worker'])
					 THEN pg_catalog.format('The kernel killed the %s, which held little of its own (see the '
											'oom_auxiliary_first check).', c.backend_type) END,
				'Keep what the server can take within its memory limit (pg_procmem_headroom); '
				'pg_procmem_crashes and pg_procmem_crash_holders have the details.')
	FROM @extschema@.pg_procmem_crash_log(true) AS c
		 LEFT JOIN @extschema@.pg_procmem_crash_groups(true) AS h
			ON h.number OPERATOR(pg_catalog.=) c.number AND h.rank OPERATOR(pg_catalog.=) 1,
		 LATERAL (SELECT @extschema@.pg_procmem_settings_said(c.work_mem, c.work_mem_source, c.hash_mem_multiplier,
						 c.hash_mem_multiplier_source, c.temp_buffers, c.temp_buffers_source,
						 c.maintenance_work_mem, c.maintenance_work_mem_source) AS said,
						 @extschema@.pg_procmem_settings_said(h.work_mem, h.work_mem_source, h.hash_mem_multiplier,
						 h.hash_mem_multiplier_source, h.temp_buffers, h.temp_buffers_source,
						 h.maintenance_work_mem, h.maintenance_work_mem_source) AS holder_said) AS s,
		 @extschema@.pg_procmem_crash_facts(c.backend_type, c.usename, c.application_name,
			 COALESCE(c.parallel_overhead, c.overhead), c.last_seen_at, c.query_start, c.cgroup_limit, c.cgroup_usage_at_sample, h.backend_type, h.usename,
			 h.application_name) AS g,
		 LATERAL (SELECT COALESCE(c.killed_pid, c.guessed_pid) AS pid,
						 CASE WHEN c.backend_type OPERATOR(pg_catalog.=) 'client backend'
							  THEN NULLIF(pg_catalog.concat_ws('/', c.usename, c.application_name), '')
							  ELSE c.backend_type END AS who,
						 @extschema@.pg_procmem_held_elsewhere(c.backend_type, g.running_overhead,
							 COALESCE(c.killed_pid, c.guessed_pid), g.same_group,
							 h.processes, h.largest_pid, h.overhead, g.room) AS elsewhere,
						 @extschema@.pg_procmem_holder_text(h.backend_type, h.usename, h.application_name,
							 h.processes, h.overhead, false, h.parallel_workers) AS holders,
						 NULLIF(pg_catalog.array_to_string(s.said, ', '), '') AS settings, s.said,
						 NULLIF(pg_catalog.array_to_string(s.holder_said, ', '), '') AS holder_settings,
						 s.holder_said,
						 pg_catalog.to_char(c.crashed_at, 'HH24:MI:SS') AS at) AS v
	WHERE c.crashed_at OPERATOR(pg_catalog.>) (pg_catalog.now() OPERATOR(pg_catalog.-) '1 day'::interval)
	  AND c.how_known OPERATOR(pg_catalog.<>) 'unclean stop'
	  AND COALESCE(c.signal, 9) OPERATOR(pg_catalog.=) 9 AND c.exit_code IS NULL
	  AND COALESCE(c.cgroup_oom_kills, 1) OPERATOR(pg_catalog.>) 0;
END;

-- The other crash restarts of the last day (a crash, or a kill -9 the
-- cgroup did not count as an OOM kill), and runs that ended without a clean
-- stop: no memory advice for them.
CREATE FUNCTION pg_procmem_advice_restarts(f @extschema@.pg_procmem_advice_facts)
RETURNS TABLE (check_name text, severity text, summary text, evidence text, recommendation text)
LANGUAGE sql STABLE STRICT PARALLEL RESTRICTED
BEGIN ATOMIC
	SELECT CASE WHEN c.how_known OPERATOR(pg_catalog.=) 'unclean stop' THEN 'unclean_stop' ELSE 'crash_restart' END,
		   CASE WHEN c.how_known OPERATOR(pg_catalog.=) 'unclean stop' THEN 'warning' ELSE 'critical' END,
		   @extschema@.pg_procmem_clip(CASE WHEN c.how_known OPERATOR(pg_catalog.=) 'unclean stop'
				THEN pg_catalog.format('unclean stop before the start at %s', pg_catalog.to_char(c.crashed_at, 'HH24:MI:SS'))
				ELSE pg_catalog.format('crash at %s: pid %s %s, %s', pg_catalog.to_char(c.crashed_at, 'HH24:MI:SS'),
									   COALESCE(c.killed_pid, c.guessed_pid), COALESCE(c.backend_type, '?'), v.how) END, 64),
		   pg_catalog.concat_ws('; ',
				CASE WHEN c.how_known OPERATOR(pg_catalog.=) 'unclean stop'
					 THEN pg_catalog.format('the server started at %s after a run that ended without a clean stop; '
											'its last sample at %s', pg_catalog.to_char(c.crashed_at, 'YYYY-MM-DD HH24:MI:SS'),
											COALESCE(pg_catalog.to_char(c.last_sample_at, 'YYYY-MM-DD HH24:MI:SS'), 'none'))
					 ELSE pg_catalog.format('at %s the postmaster logged: %s', pg_catalog.to_char(c.crashed_at,
											'YYYY-MM-DD HH24:MI:SS.MS'), c.logged) END,
				NULLIF(pg_catalog.concat_ws(', ', 'user ' OPERATOR(pg_catalog.||) c.usename,
						   'application ' OPERATOR(pg_catalog.||) c.application_name), ''),
				'its query: ' OPERATOR(pg_catalog.||) pg_catalog.rtrim(@extschema@.pg_procmem_clip(c.query, 300), '; '),
				CASE WHEN c.cgroup_oom_kills OPERATOR(pg_catalog.=) 0
					 THEN 'the OOM kill counter, read before and after it, did not rise' END),
		   CASE WHEN c.how_known OPERATOR(pg_catalog.=) 'unclean stop' AND c.oom_killed
				THEN pg_catalog.format('The OOM kill counter rose by %s after its last sample: the OOM killer took the '
									   'postmaster, or every process at once (a container''s memory.oom.group = 1, as '
									   'Kubernetes sets it). pg_procmem_crash_holders has who held the memory at the '
									   'last sample; keep what the server can take within its limit (pg_procmem_headroom).',
									   c.cgroup_oom_kills)
				WHEN c.how_known OPERATOR(pg_catalog.=) 'unclean stop'
				THEN 'If nobody stopped it with pg_ctl stop -m immediate, the postmaster was killed (protect it: the '
					 'oom_postmaster check) or the machine went down; pg_procmem_history shows its last samples.'
				WHEN c.signal OPERATOR(pg_catalog.=) 9
				THEN 'Killed by signal 9, cause unknown: no OOM kill was counted across it. An operator''s kill -9, '
					 'or a supervisor (a liveness probe, a watchdog)? A killed server process restarts every session: '
					 'end one session with pg_terminate_backend() instead.'
				ELSE pg_catalog.format('It ended with %s: a crash, not a kill for memory (a bug in PostgreSQL or in an '
									   'extension); every session was restarted. Report it with its query and '
									   'version (SELECT version()).', v.how) END
	FROM @extschema@.pg_procmem_crash_log(true) AS c,
		 LATERAL (SELECT CASE WHEN c.signal IS NOT NULL THEN 'signal ' OPERATOR(pg_catalog.||) c.signal
							  WHEN c.exit_code IS NOT NULL THEN 'exit code ' OPERATOR(pg_catalog.||) c.exit_code
							  ELSE 'no message' END AS how) AS v
	WHERE c.crashed_at OPERATOR(pg_catalog.>) (pg_catalog.now() OPERATOR(pg_catalog.-) '1 day'::interval)
	  AND (c.how_known OPERATOR(pg_catalog.=) 'unclean stop'
		   OR NOT (COALESCE(c.signal, 9) OPERATOR(pg_catalog.=) 9 AND c.exit_code IS NULL
				   AND COALESCE(c.cgroup_oom_kills, 1) OPERATOR(pg_catalog.>) 0));
END;

-- The memory guard's actions of the last day (guard.md): what it canceled
-- or ended, or in dry_run would have, and the largest of them.
CREATE FUNCTION pg_procmem_advice_guard(f @extschema@.pg_procmem_advice_facts)
RETURNS TABLE (check_name text, severity text, summary text, evidence text, recommendation text)
LANGUAGE sql STABLE STRICT PARALLEL RESTRICTED
BEGIN ATOMIC
	SELECT 'memory_guard',
		   CASE WHEN s.server OPERATOR(pg_catalog.>) 0 THEN 'warning' ELSE 'info' END,
		   @extschema@.pg_procmem_clip(CASE
				WHEN s.done OPERATOR(pg_catalog.>) 0
				THEN pg_catalog.format('memory guard: %s canceled, %s ended in the last day', s.canceled, s.ended)
				ELSE pg_catalog.format('memory guard (dry_run): %s said in the last day', s.said) END, 64),
		   pg_catalog.concat_ws('; ',
				pg_catalog.format('in the last day: canceled for the server''s limit %s, for a backend''s own %s; '
								  'sessions ended %s; said in dry_run %s',
								  s.canceled OPERATOR(pg_catalog.-) s.own, s.own, s.ended, s.said),
				pg_catalog.format('the largest: %s of pid %s at %s (%s), which held %s%s', l.action, l.pid,
								  pg_catalog.to_char(l.acted_at, 'YYYY-MM-DD HH24:MI:SS'),
								  pg_catalog.concat_ws(', ', 'user ' OPERATOR(pg_catalog.||) l.usename,
													   'application ' OPERATOR(pg_catalog.||) l.application_name),
								  pg_catalog.pg_size_pretty(l.held),
								  CASE WHEN l.reason OPERATOR(pg_catalog.=) 'server limit'
									   THEN pg_catalog.format(' when the %s''s memory reached %s of its %s limit', l.source,
															  pg_catalog.pg_size_pretty(l.used),
															  pg_catalog.pg_size_pretty(l.limit_bytes))
									   ELSE pg_catalog.format(', over its own limit of %s',
															  pg_catalog.pg_size_pretty(l.limit_bytes)) END),
				'its query: ' OPERATOR(pg_catalog.||) pg_catalog.rtrim(@extschema@.pg_procmem_clip(l.query, 300), '; ')),
		   CASE WHEN s.done OPERATOR(pg_catalog.>) 0
				THEN 'The guard kept the server up by canceling statements (pg_procmem_guard_actions lists them): '
					 'find what grew (the largest above), lower its work_mem or hash_mem_multiplier, give its role '
					 'a pg_procmem.max_backend_memory, or give the server more memory.'
				ELSE 'In dry_run the guard only says what it would do: review the statements it names in '
					 'pg_procmem_guard_actions, then set pg_procmem.guard = on.' END
	FROM (SELECT pg_catalog.count(*) FILTER (WHERE a.action OPERATOR(pg_catalog.=) 'cancel') AS canceled,
				 pg_catalog.count(*) FILTER (WHERE a.action OPERATOR(pg_catalog.=) 'terminate') AS ended,
				 pg_catalog.count(*) FILTER (WHERE a.action OPERATOR(pg_catalog.=) 'cancel'
											   AND a.reason OPERATOR(pg_catalog.=) 'backend limit') AS own,
				 pg_catalog.count(*) FILTER (WHERE a.action OPERATOR(pg_catalog.~~) 'would %') AS said,
				 pg_catalog.count(*) FILTER (WHERE a.action OPERATOR(pg_catalog.!~~) 'would %') AS done,
				 pg_catalog.count(*) FILTER (WHERE a.action OPERATOR(pg_catalog.!~~) 'would %'
											   AND a.reason OPERATOR(pg_catalog.=) 'server limit') AS server
		  FROM @extschema@.pg_procmem_guard_log(true) AS a
		  WHERE a.acted_at OPERATOR(pg_catalog.>) (pg_catalog.now() OPERATOR(pg_catalog.-) '1 day'::interval)) AS s,
		 LATERAL (SELECT a.* FROM @extschema@.pg_procmem_guard_log(true) AS a
				  WHERE a.acted_at OPERATOR(pg_catalog.>) (pg_catalog.now() OPERATOR(pg_catalog.-) '1 day'::interval)
					AND (a.action OPERATOR(pg_catalog.~~) 'would %') OPERATOR(pg_catalog.=) (s.done OPERATOR(pg_catalog.=) 0)
				  ORDER BY a.held DESC, a.acted_at DESC LIMIT 1) AS l
	WHERE s.done OPERATOR(pg_catalog.+) s.said OPERATOR(pg_catalog.>) 0
	UNION ALL
	-- set, where nothing acts on it: in this session (postgresql.conf, SET),
	-- or a backend limit for a role or a database (ALTER ROLE / DATABASE ...
	-- SET), which this session does not see (the guard itself is set for the
	-- server only: reload, not per role)
	SELECT 'memory_guard', 'warning', 'memory guard set, but pg_procmem is not preloaded',
		   pg_catalog.format('pg_procmem.guard = %s, pg_procmem.max_backend_memory = %s%s; pg_procmem is not in '
							 'shared_preload_libraries', COALESCE(g.guard, 'off'), COALESCE(g.own, '0'),
							 CASE WHEN r.set_for IS NOT NULL
								  THEN ' (here), and set for ' OPERATOR(pg_catalog.||) r.set_for ELSE '' END),
		   'Add pg_procmem to shared_preload_libraries and restart the server: until then no guard runs and no '
		   'backend checks its limit.'
	-- (pg_procmem.history_size is defined only where it is preloaded; shared_preload_libraries
	-- itself only a superuser or pg_read_all_settings may read)
	FROM (SELECT pg_catalog.current_setting('pg_procmem.guard', true) AS guard,
				 pg_catalog.current_setting('pg_procmem.max_backend_memory', true) AS own,
				 pg_catalog.current_setting('pg_procmem.history_size', true) AS preloaded) AS g,
		 (SELECT pg_catalog.string_agg(pg_catalog.concat_ws(' in ', COALESCE('role ' OPERATOR(pg_catalog.||) ro.rolname, 'every role'),
															'database ' OPERATOR(pg_catalog.||) d.datname)
									   OPERATOR(pg_catalog.||) ' (' OPERATOR(pg_catalog.||) c.setting OPERATOR(pg_catalog.||) ')',
									   ', ' ORDER BY ro.rolname, d.datname, c.setting) AS set_for
		  FROM pg_catalog.pg_db_role_setting AS s
			   LEFT JOIN pg_catalog.pg_roles AS ro ON ro.oid OPERATOR(pg_catalog.=) s.setrole
			   LEFT JOIN pg_catalog.pg_database AS d ON d.oid OPERATOR(pg_catalog.=) s.setdatabase,
			   LATERAL pg_catalog.unnest(s.setconfig) AS c(setting)
		  WHERE c.setting OPERATOR(pg_catalog.~*) '^pg_procmem\.max_backend_memory='
			AND c.setting OPERATOR(pg_catalog.!~*) '^pg_procmem\.max_backend_memory=0+ *([kmgt]?b)?$') AS r
	WHERE (COALESCE(g.guard, 'off') OPERATOR(pg_catalog.<>) 'off' OR COALESCE(g.own, '0') OPERATOR(pg_catalog.<>) '0'
		   OR r.set_for IS NOT NULL)
	  AND g.preloaded IS NULL;
END;

COMMENT ON FUNCTION pg_procmem_advice_crashes(pg_procmem_advice_facts) IS
'internal: the crash_restart check of pg_procmem_advice for kills for memory (the memory history''s crash rows of the last day)';
COMMENT ON FUNCTION pg_procmem_advice_guard(pg_procmem_advice_facts) IS
'internal: the memory_guard check of pg_procmem_advice (the guard''s actions of the last day)';
COMMENT ON FUNCTION pg_procmem_advice_restarts(pg_procmem_advice_facts) IS
'internal: the crash_restart check for the other crashes, and the unclean_stop check, of pg_procmem_advice';

COMMENT ON FUNCTION pg_procmem_advice_huge_pages(pg_procmem_advice_facts) IS
'internal: the huge_pages and transparent_hugepage checks of pg_procmem_advice';
COMMENT ON FUNCTION pg_procmem_advice_oom(pg_procmem_advice_facts) IS
'internal: the oom_postmaster and oom_auxiliary_first checks of pg_procmem_advice';
COMMENT ON FUNCTION pg_procmem_advice_memory_settings(pg_procmem_advice_facts) IS
'internal: the overcommit, work_mem, CPU cache and writeback checks of pg_procmem_advice';
COMMENT ON FUNCTION pg_procmem_advice_connections(pg_procmem_advice_facts) IS
'internal: the max_connections, idle_connections and connection_rate checks of pg_procmem_advice';
COMMENT ON FUNCTION pg_procmem_advice_pressure(pg_procmem_advice_facts) IS
'internal: the swap, cgroup_limit, cgroup_oom_kills and jit_memory checks of pg_procmem_advice';

REVOKE ALL ON FUNCTION pg_procmem_advice_huge_pages(pg_procmem_advice_facts) FROM PUBLIC;
REVOKE ALL ON FUNCTION pg_procmem_advice_oom(pg_procmem_advice_facts) FROM PUBLIC;
REVOKE ALL ON FUNCTION pg_procmem_advice_memory_settings(pg_procmem_advice_facts) FROM PUBLIC;
REVOKE ALL ON FUNCTION pg_procmem_advice_connections(pg_procmem_advice_facts) FROM PUBLIC;
REVOKE ALL ON FUNCTION pg_procmem_advice_pressure(pg_procmem_advice_facts) FROM PUBLIC;
REVOKE ALL ON FUNCTION pg_procmem_advice_crashes(pg_procmem_advice_facts) FROM PUBLIC;
REVOKE ALL ON FUNCTION pg_procmem_crash_own_advice(text, text, text[], text, text, text, text, text) FROM PUBLIC;
REVOKE ALL ON FUNCTION pg_procmem_advice_restarts(pg_procmem_advice_facts) FROM PUBLIC;
REVOKE ALL ON FUNCTION pg_procmem_advice_guard(pg_procmem_advice_facts) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION pg_procmem_advice_huge_pages(pg_procmem_advice_facts),
	pg_procmem_advice_oom(pg_procmem_advice_facts), pg_procmem_advice_memory_settings(pg_procmem_advice_facts),
	pg_procmem_advice_connections(pg_procmem_advice_facts), pg_procmem_advice_pressure(pg_procmem_advice_facts),
	pg_procmem_advice_crashes(pg_procmem_advice_facts), pg_procmem_advice_restarts(pg_procmem_advice_facts),
	pg_procmem_advice_guard(pg_procmem_advice_facts),
	pg_procmem_crash_own_advice(text, text, text[], text, text, text, text, text)
	TO pg_read_all_stats;

-- Every memory finding as a row: a stable check name, how bad, a summary
-- that fits a terminal line, the measured evidence and what to do. The facts are measured once (advice_facts.sql)
-- and each family of checks (advice_checks.sql) reads them. Reads status and
-- oom_score (never smaps_rollup), so it is cheap enough to poll every
-- minute. Thresholds and the figures behind them are in docs/views.md.
CREATE VIEW pg_procmem_advice AS
SELECT c.check_name, c.severity, c.summary, c.evidence, c.recommendation
FROM @extschema@.pg_procmem_advice_facts AS f,
	 LATERAL (SELECT * FROM @extschema@.pg_procmem_advice_huge_pages(f)
			  UNION ALL SELECT * FROM @extschema@.pg_procmem_advice_oom(f)
			  UNION ALL SELECT * FROM @extschema@.pg_procmem_advice_memory_settings(f)
			  UNION ALL SELECT * FROM @extschema@.pg_procmem_advice_connections(f)
			  UNION ALL SELECT * FROM @extschema@.pg_procmem_advice_pressure(f)
			  UNION ALL SELECT * FROM @extschema@.pg_procmem_advice_crashes(f)
			  UNION ALL SELECT * FROM @extschema@.pg_procmem_advice_restarts(f)
			  UNION ALL SELECT * FROM @extschema@.pg_procmem_advice_guard(f)) AS c
-- rows of one check (a crash restart each) newest first: their evidence begins with the time
ORDER BY CASE c.severity WHEN 'critical' THEN 0 WHEN 'warning' THEN 1 ELSE 2 END, c.check_name, c.evidence DESC;

COMMENT ON VIEW pg_procmem_advice IS
'every memory finding as a row: check, severity, a one-line summary, the measured evidence, and what to do';

REVOKE ALL ON pg_procmem_advice FROM PUBLIC;
GRANT SELECT ON pg_procmem_advice TO pg_read_all_stats;

-- What every column of every view means, for \d+: one line each, with its
-- unit. docs/views.md lists the same columns (test/unit/consistency.sh
-- compares the two). In the upgrade script too, so that the views an update
-- does not create again (pg_procmem_contexts, pg_procmem_system) get theirs.

-- pg_procmem_contexts
COMMENT ON COLUMN @extschema@.pg_procmem_contexts.pid IS 'process id';
COMMENT ON COLUMN @extschema@.pg_procmem_contexts.backend_type IS 'as in pg_stat_activity';
COMMENT ON COLUMN @extschema@.pg_procmem_contexts.datname IS 'as in pg_stat_activity';
COMMENT ON COLUMN @extschema@.pg_procmem_contexts.usename IS 'as in pg_stat_activity';
COMMENT ON COLUMN @extschema@.pg_procmem_contexts.application_name IS 'as in pg_stat_activity';
COMMENT ON COLUMN @extschema@.pg_procmem_contexts.state IS 'as in pg_stat_activity';
COMMENT ON COLUMN @extschema@.pg_procmem_contexts.context_bytes IS
'bytes: all its memory contexts'' blocks, as last published (at a query''s end, a commit, an abort), not now';
COMMENT ON COLUMN @extschema@.pg_procmem_contexts.context_free_bytes IS 'bytes: free space within those blocks, as last published';
COMMENT ON COLUMN @extschema@.pg_procmem_contexts.context_used_bytes IS 'bytes: context_bytes less context_free_bytes';
COMMENT ON COLUMN @extschema@.pg_procmem_contexts.contexts IS 'how many memory contexts it had, as last published';
COMMENT ON COLUMN @extschema@.pg_procmem_contexts.context_peak_bytes IS 'bytes: the largest context_bytes it has published since it started';
COMMENT ON COLUMN @extschema@.pg_procmem_contexts.peak_at IS 'when it published context_peak_bytes';
COMMENT ON COLUMN @extschema@.pg_procmem_contexts.peak_largest_contexts IS 'the names of its three largest memory contexts at the peak';
COMMENT ON COLUMN @extschema@.pg_procmem_contexts.peak_largest_bytes IS 'bytes: the sizes of those three at the peak';
COMMENT ON COLUMN @extschema@.pg_procmem_contexts.largest_contexts IS 'the names of its three largest memory contexts, as last published';
COMMENT ON COLUMN @extschema@.pg_procmem_contexts.largest_idents IS
'their identifiers (a statement''s or a cached plan''s text); NULL with pg_procmem.keep_statement_text off';
COMMENT ON COLUMN @extschema@.pg_procmem_contexts.largest_bytes IS 'bytes: the sizes of those three, as last published';
COMMENT ON COLUMN @extschema@.pg_procmem_contexts.published_at IS 'when it last published (the caller publishes as it reads)';
COMMENT ON COLUMN @extschema@.pg_procmem_contexts.age IS 'interval: how old the figures are, now less published_at';
COMMENT ON COLUMN @extschema@.pg_procmem_contexts.publications IS 'how many times it has published';
COMMENT ON COLUMN @extschema@.pg_procmem_contexts.backend_start IS 'when the backend started';

-- pg_procmem_backends
COMMENT ON COLUMN @extschema@.pg_procmem_backends.pid IS 'process id';
COMMENT ON COLUMN @extschema@.pg_procmem_backends.backend_type IS
'as in pg_stat_activity; postmaster; for a child without a PGPROC a fixed name (logger, postmaster child ...)';
COMMENT ON COLUMN @extschema@.pg_procmem_backends.datname IS 'as in pg_stat_activity';
COMMENT ON COLUMN @extschema@.pg_procmem_backends.usename IS 'as in pg_stat_activity';
COMMENT ON COLUMN @extschema@.pg_procmem_backends.application_name IS 'as in pg_stat_activity';
COMMENT ON COLUMN @extschema@.pg_procmem_backends.client_addr IS 'as in pg_stat_activity';
COMMENT ON COLUMN @extschema@.pg_procmem_backends.state IS 'as in pg_stat_activity';
COMMENT ON COLUMN @extschema@.pg_procmem_backends.overhead IS
'bytes: what the process costs beyond shared memory, private_anon + page_tables + kernel, now';
COMMENT ON COLUMN @extschema@.pg_procmem_backends.overhead_method IS 'how overhead was read: pagemap+kernel, pagemap or rss_anon';
COMMENT ON COLUMN @extschema@.pg_procmem_backends.private_anon IS 'bytes: resident anonymous memory no other process maps';
COMMENT ON COLUMN @extschema@.pg_procmem_backends.cow_shared_anon IS
'bytes: resident anonymous memory other processes map too (still shared copy-on-write with the postmaster)';
COMMENT ON COLUMN @extschema@.pg_procmem_backends.page_tables IS 'bytes: its page tables (status VmPTE)';
COMMENT ON COLUMN @extschema@.pg_procmem_backends.kernel IS 'bytes: the kernel''s own memory for it (stacks, page-table top, slab); NULL unless read by pagemap';
COMMENT ON COLUMN @extschema@.pg_procmem_backends.rss IS 'bytes: resident set, what ps shows (status VmRSS)';
COMMENT ON COLUMN @extschema@.pg_procmem_backends.rss_anon IS 'bytes: resident anonymous memory, copy-on-write pages included (status RssAnon)';
COMMENT ON COLUMN @extschema@.pg_procmem_backends.rss_file IS 'bytes: resident file mappings, the binary and libraries (status RssFile)';
COMMENT ON COLUMN @extschema@.pg_procmem_backends.rss_shmem IS 'bytes: resident shared memory it touched, not hugetlb (status RssShmem)';
COMMENT ON COLUMN @extschema@.pg_procmem_backends.swap IS 'bytes: its anonymous memory in swap (status VmSwap)';
COMMENT ON COLUMN @extschema@.pg_procmem_backends.hugetlb IS 'bytes: hugetlb pages it maps, not in rss (status HugetlbPages)';
COMMENT ON COLUMN @extschema@.pg_procmem_backends.peak_rss IS 'bytes: the highest rss since it started (status VmHWM)';
COMMENT ON COLUMN @extschema@.pg_procmem_backends.oom_score IS 'the OOM killer''s score now: the highest is killed first';
COMMENT ON COLUMN @extschema@.pg_procmem_backends.oom_score_adj IS 'its adjustment, -1000 to 1000 (-1000: never killed)';
COMMENT ON COLUMN @extschema@.pg_procmem_backends.context_bytes IS
'bytes: its memory contexts'' blocks: live for the caller, as last published for others (not during a query)';
COMMENT ON COLUMN @extschema@.pg_procmem_backends.context_free_bytes IS 'bytes: free space within them, live or as last published likewise';
COMMENT ON COLUMN @extschema@.pg_procmem_backends.context_peak_bytes IS 'bytes: the largest context total it has published since it started';
COMMENT ON COLUMN @extschema@.pg_procmem_backends.unreadable IS 'the /proc files that could not be read (their columns are NULL), or NULL when every file was read';
COMMENT ON COLUMN @extschema@.pg_procmem_backends.backend_start IS 'as in pg_stat_activity';
COMMENT ON COLUMN @extschema@.pg_procmem_backends.state_change IS 'as in pg_stat_activity';
COMMENT ON COLUMN @extschema@.pg_procmem_backends.wait_event_type IS 'as in pg_stat_activity';
COMMENT ON COLUMN @extschema@.pg_procmem_backends.wait_event IS 'as in pg_stat_activity';
COMMENT ON COLUMN @extschema@.pg_procmem_backends.query_start IS 'as in pg_stat_activity';
COMMENT ON COLUMN @extschema@.pg_procmem_backends.leader_pid IS 'as in pg_stat_activity: a parallel worker''s leader';
COMMENT ON COLUMN @extschema@.pg_procmem_backends.query_id IS 'as in pg_stat_activity';
COMMENT ON COLUMN @extschema@.pg_procmem_backends.query IS 'as in pg_stat_activity';
COMMENT ON COLUMN @extschema@.pg_procmem_backends.dsm IS 'bytes: what the dynamic shared memory segments it maps hold (not in overhead: they outlive it)';
COMMENT ON COLUMN @extschema@.pg_procmem_backends.group_dsm IS 'bytes: what the segments only its parallel group maps hold (hash tables, sorts), each counted once; the same on every member';

-- pg_procmem_breakdown
COMMENT ON COLUMN @extschema@.pg_procmem_breakdown.pid IS 'process id';
COMMENT ON COLUMN @extschema@.pg_procmem_breakdown.backend_type IS 'as in pg_procmem_backends';
COMMENT ON COLUMN @extschema@.pg_procmem_breakdown.datname IS 'as in pg_stat_activity';
COMMENT ON COLUMN @extschema@.pg_procmem_breakdown.usename IS 'as in pg_stat_activity';
COMMENT ON COLUMN @extschema@.pg_procmem_breakdown.application_name IS 'as in pg_stat_activity';
COMMENT ON COLUMN @extschema@.pg_procmem_breakdown.state IS 'as in pg_stat_activity';
COMMENT ON COLUMN @extschema@.pg_procmem_breakdown.overhead IS 'bytes: private_anon + page_tables + kernel, as in pg_procmem_backends';
COMMENT ON COLUMN @extschema@.pg_procmem_breakdown.overhead_method IS 'how overhead was read; the parts are NULL unless pagemap';
COMMENT ON COLUMN @extschema@.pg_procmem_breakdown.heap IS 'bytes of private_anon in malloc''s main arena: most memory contexts';
COMMENT ON COLUMN @extschema@.pg_procmem_breakdown.mmap IS 'bytes of private_anon in other anonymous mappings: large allocations, JIT code';
COMMENT ON COLUMN @extschema@.pg_procmem_breakdown.stack IS 'bytes of private_anon in its stack';
COMMENT ON COLUMN @extschema@.pg_procmem_breakdown.postgres_data IS 'bytes of private_anon in the executable''s data and bss (copied from the postmaster)';
COMMENT ON COLUMN @extschema@.pg_procmem_breakdown.jit IS 'bytes of private_anon in libLLVM''s and llvmjit.so''s data';
COMMENT ON COLUMN @extschema@.pg_procmem_breakdown.libraries IS 'bytes of private_anon in every other library''s data';
COMMENT ON COLUMN @extschema@.pg_procmem_breakdown.page_tables IS 'bytes: its page tables (status VmPTE)';
COMMENT ON COLUMN @extschema@.pg_procmem_breakdown.kernel IS 'bytes: the kernel''s own memory for it';
COMMENT ON COLUMN @extschema@.pg_procmem_breakdown.private_anon IS 'bytes: heap + mmap + stack + postgres_data + jit + libraries';
COMMENT ON COLUMN @extschema@.pg_procmem_breakdown.unreadable IS 'the /proc files that could not be read, or NULL when every file was read';

-- pg_procmem_backends_pss
COMMENT ON COLUMN @extschema@.pg_procmem_backends_pss.pid IS 'process id';
COMMENT ON COLUMN @extschema@.pg_procmem_backends_pss.backend_type IS 'as in pg_procmem_backends';
COMMENT ON COLUMN @extschema@.pg_procmem_backends_pss.datname IS 'as in pg_stat_activity';
COMMENT ON COLUMN @extschema@.pg_procmem_backends_pss.usename IS 'as in pg_stat_activity';
COMMENT ON COLUMN @extschema@.pg_procmem_backends_pss.application_name IS 'as in pg_stat_activity';
COMMENT ON COLUMN @extschema@.pg_procmem_backends_pss.state IS 'as in pg_stat_activity';
COMMENT ON COLUMN @extschema@.pg_procmem_backends_pss.overhead IS 'bytes: as in pg_procmem_backends';
COMMENT ON COLUMN @extschema@.pg_procmem_backends_pss.overhead_method IS 'as in pg_procmem_backends';
COMMENT ON COLUMN @extschema@.pg_procmem_backends_pss.pss_overhead IS 'bytes: pss_anon + page_tables, the classic estimate';
COMMENT ON COLUMN @extschema@.pg_procmem_backends_pss.rss IS 'bytes: resident set (status VmRSS)';
COMMENT ON COLUMN @extschema@.pg_procmem_backends_pss.pss IS 'bytes: proportional set, each shared page divided among its mappers (smaps_rollup Pss)';
COMMENT ON COLUMN @extschema@.pg_procmem_backends_pss.pss_anon IS 'bytes: PSS of anonymous memory (smaps_rollup Pss_Anon)';
COMMENT ON COLUMN @extschema@.pg_procmem_backends_pss.pss_file IS 'bytes: PSS of file mappings (smaps_rollup Pss_File)';
COMMENT ON COLUMN @extschema@.pg_procmem_backends_pss.pss_shmem IS 'bytes: PSS of shared memory (smaps_rollup Pss_Shmem)';
COMMENT ON COLUMN @extschema@.pg_procmem_backends_pss.private IS 'bytes: pages it alone maps, shared memory included (Private_Clean + Private_Dirty)';
COMMENT ON COLUMN @extschema@.pg_procmem_backends_pss.swap_pss IS 'bytes: swap, shared pages divided (smaps_rollup SwapPss)';
COMMENT ON COLUMN @extschema@.pg_procmem_backends_pss.page_tables IS 'bytes: its page tables (status VmPTE)';
COMMENT ON COLUMN @extschema@.pg_procmem_backends_pss.unreadable IS 'the /proc files that could not be read, or NULL when every file was read';

-- pg_procmem_summary
COMMENT ON COLUMN @extschema@.pg_procmem_summary.grouped_by IS 'what the row groups by: backend_type, database, user or application';
COMMENT ON COLUMN @extschema@.pg_procmem_summary.name IS 'the backend type, database, user or application; NULL for processes without one';
COMMENT ON COLUMN @extschema@.pg_procmem_summary.processes IS 'how many processes';
COMMENT ON COLUMN @extschema@.pg_procmem_summary.total_overhead IS 'bytes: the sum of their overhead';
COMMENT ON COLUMN @extschema@.pg_procmem_summary.avg_overhead IS 'bytes: the average of their overhead';
COMMENT ON COLUMN @extschema@.pg_procmem_summary.total_page_tables IS 'bytes: the sum of their page tables';
COMMENT ON COLUMN @extschema@.pg_procmem_summary.total_rss IS 'bytes: the sum of their rss (shared pages counted in each)';
COMMENT ON COLUMN @extschema@.pg_procmem_summary.idle IS 'how many of them are idle';
COMMENT ON COLUMN @extschema@.pg_procmem_summary.idle_overhead IS 'bytes: the overhead of the idle ones';
COMMENT ON COLUMN @extschema@.pg_procmem_summary.idle_in_transaction IS 'how many are idle in transaction (aborted or not)';
COMMENT ON COLUMN @extschema@.pg_procmem_summary.idle_in_transaction_overhead IS 'bytes: the overhead of those idle in transaction';

-- pg_procmem_system
COMMENT ON COLUMN @extschema@.pg_procmem_system.mem_total IS 'bytes: RAM (meminfo MemTotal)';
COMMENT ON COLUMN @extschema@.pg_procmem_system.mem_available IS 'bytes: memory available without swapping (meminfo MemAvailable)';
COMMENT ON COLUMN @extschema@.pg_procmem_system.page_tables IS 'bytes: every process''s page tables (meminfo PageTables)';
COMMENT ON COLUMN @extschema@.pg_procmem_system.kernel_stack IS 'bytes: kernel stacks (meminfo KernelStack)';
COMMENT ON COLUMN @extschema@.pg_procmem_system.shmem IS 'bytes: shared memory and tmpfs (meminfo Shmem)';
COMMENT ON COLUMN @extschema@.pg_procmem_system.committed_as IS 'bytes: memory committed (meminfo Committed_AS)';
COMMENT ON COLUMN @extschema@.pg_procmem_system.commit_limit IS 'bytes: the commit limit under strict overcommit (meminfo CommitLimit)';
COMMENT ON COLUMN @extschema@.pg_procmem_system.swap_total IS 'bytes: swap (meminfo SwapTotal)';
COMMENT ON COLUMN @extschema@.pg_procmem_system.swap_free IS 'bytes: free swap (meminfo SwapFree)';
COMMENT ON COLUMN @extschema@.pg_procmem_system.hugepages_total IS 'pages: huge pages reserved (meminfo HugePages_Total)';
COMMENT ON COLUMN @extschema@.pg_procmem_system.hugepages_free IS 'pages: huge pages free (meminfo HugePages_Free)';
COMMENT ON COLUMN @extschema@.pg_procmem_system.hugepages_rsvd IS 'pages: free huge pages promised to a mapping (meminfo HugePages_Rsvd)';
COMMENT ON COLUMN @extschema@.pg_procmem_system.hugepages_surp IS 'pages: surplus huge pages (meminfo HugePages_Surp)';
COMMENT ON COLUMN @extschema@.pg_procmem_system.hugepage_size IS 'bytes: the default huge page size (meminfo Hugepagesize)';
COMMENT ON COLUMN @extschema@.pg_procmem_system.anon_hugepages IS 'bytes: transparent huge pages in anonymous memory (meminfo AnonHugePages)';
COMMENT ON COLUMN @extschema@.pg_procmem_system.overcommit_memory IS 'vm.overcommit_memory: 0 heuristic, 1 always, 2 strict';
COMMENT ON COLUMN @extschema@.pg_procmem_system.transparent_hugepage IS 'the THP mode: always, madvise or never';
COMMENT ON COLUMN @extschema@.pg_procmem_system.kernel_release IS 'the kernel''s release (uname -r)';
COMMENT ON COLUMN @extschema@.pg_procmem_system.kernel_version_num IS 'the kernel''s version, major * 10000 + minor';
COMMENT ON COLUMN @extschema@.pg_procmem_system.cgroup_version IS 'the server''s memory cgroup''s version: 1 or 2';
COMMENT ON COLUMN @extschema@.pg_procmem_system.cgroup_path IS 'the server''s memory cgroup';
COMMENT ON COLUMN @extschema@.pg_procmem_system.cgroup_usage IS 'bytes: its usage, page cache included (memory.current, v1 memory.usage_in_bytes)';
COMMENT ON COLUMN @extschema@.pg_procmem_system.cgroup_limit IS 'bytes: its own limit (memory.max, v1 memory.limit_in_bytes); NULL: none';
COMMENT ON COLUMN @extschema@.pg_procmem_system.cgroup_effective_limit IS 'bytes: the smallest limit of it and its ancestors; NULL: none';
COMMENT ON COLUMN @extschema@.pg_procmem_system.cgroup_room IS 'bytes: the least room, limit less what the kernel cannot reclaim (usage but page cache and reclaimable slab), over it and its ancestors';
COMMENT ON COLUMN @extschema@.pg_procmem_system.cgroup_high IS 'bytes: its throttling threshold (memory.high); NULL: none';
COMMENT ON COLUMN @extschema@.pg_procmem_system.cgroup_swap_usage IS 'bytes: its swap usage';
COMMENT ON COLUMN @extschema@.pg_procmem_system.cgroup_anon IS 'bytes: its anonymous memory (memory.stat)';
COMMENT ON COLUMN @extschema@.pg_procmem_system.cgroup_file IS 'bytes: its page cache, shmem included (memory.stat)';
COMMENT ON COLUMN @extschema@.pg_procmem_system.cgroup_shmem IS 'bytes: its shared memory (memory.stat)';
COMMENT ON COLUMN @extschema@.pg_procmem_system.cgroup_pagetables IS 'bytes: its page tables (memory.stat)';
COMMENT ON COLUMN @extschema@.pg_procmem_system.cgroup_kernel_stack IS 'bytes: its kernel stacks (memory.stat)';
COMMENT ON COLUMN @extschema@.pg_procmem_system.cgroup_kernel IS 'bytes: its kernel memory (memory.stat)';
COMMENT ON COLUMN @extschema@.pg_procmem_system.cgroup_sock IS 'bytes: its socket buffers (memory.stat)';
COMMENT ON COLUMN @extschema@.pg_procmem_system.cgroup_oom_events IS 'times it hit its limit and the OOM killer was called (memory.events oom)';
COMMENT ON COLUMN @extschema@.pg_procmem_system.cgroup_oom_kills IS 'processes the OOM killer took in it (memory.events oom_kill)';
COMMENT ON COLUMN @extschema@.pg_procmem_system.cgroup_failcnt IS 'v1 only: times usage hit the limit (memory.failcnt)';
COMMENT ON COLUMN @extschema@.pg_procmem_system.mem_used IS 'bytes: mem_total less mem_available';
COMMENT ON COLUMN @extschema@.pg_procmem_system.swap_used IS 'bytes: swap_total less swap_free';

-- pg_procmem_accounting
COMMENT ON COLUMN @extschema@.pg_procmem_accounting.processes IS 'how many server processes';
COMMENT ON COLUMN @extschema@.pg_procmem_accounting.processes_overhead IS 'bytes: the sum of their overhead; NULL when any is unknown';
COMMENT ON COLUMN @extschema@.pg_procmem_accounting.cow_shared_with_postmaster IS
'bytes: the postmaster''s anonymous pages still shared copy-on-write with its children, counted once';
COMMENT ON COLUMN @extschema@.pg_procmem_accounting.main_segment_size IS 'bytes: the main shared memory segment''s size';
COMMENT ON COLUMN @extschema@.pg_procmem_accounting.main_segment_resident IS 'bytes: its part any process has touched (sampled above 256 MB)';
COMMENT ON COLUMN @extschema@.pg_procmem_accounting.main_segment_hugetlb IS 'the segment is in huge pages (hugetlb)';
COMMENT ON COLUMN @extschema@.pg_procmem_accounting.dsm_segments IS 'how many dynamic shared memory segments the server''s processes map';
COMMENT ON COLUMN @extschema@.pg_procmem_accounting.dsm_bytes IS 'bytes: what they hold (allocated blocks; System V: resident pages); with dynamic_shared_memory_type = mmap every file of pg_dynshmem';
COMMENT ON COLUMN @extschema@.pg_procmem_accounting.accounted IS 'bytes: processes_overhead + cow_shared_with_postmaster + dsm_bytes + main_segment_resident';
COMMENT ON COLUMN @extschema@.pg_procmem_accounting.cgroup_usage IS 'bytes: the server''s memory cgroup''s usage';
COMMENT ON COLUMN @extschema@.pg_procmem_accounting.cgroup_page_cache IS 'bytes: its page cache, shmem aside (reclaimable)';
COMMENT ON COLUMN @extschema@.pg_procmem_accounting.cgroup_unexplained IS 'bytes: cgroup_usage less cgroup_page_cache less accounted (hugetlb left out)';
COMMENT ON COLUMN @extschema@.pg_procmem_accounting.system_used IS 'bytes: MemTotal less MemAvailable';
COMMENT ON COLUMN @extschema@.pg_procmem_accounting.main_segment_resident_exact IS 'main_segment_resident counted page by page, not sampled';
COMMENT ON COLUMN @extschema@.pg_procmem_accounting.unknown IS 'the parts that could not be measured (the sums they enter are NULL); NULL: none';
COMMENT ON COLUMN @extschema@.pg_procmem_accounting.cgroup_limit IS 'bytes: the cgroup''s limit (memory.max, v1 memory.limit_in_bytes); NULL: none';
COMMENT ON COLUMN @extschema@.pg_procmem_accounting.cgroup_effective_limit IS 'bytes: the smallest limit of the cgroup and its ancestors; NULL: none';
COMMENT ON COLUMN @extschema@.pg_procmem_accounting.cgroup_peak IS 'bytes: its highest usage (memory.peak, v1 memory.max_usage_in_bytes)';
COMMENT ON COLUMN @extschema@.pg_procmem_accounting.cgroup_high IS 'bytes: memory.high, above which it is throttled (v2); NULL: none';
COMMENT ON COLUMN @extschema@.pg_procmem_accounting.cgroup_anon IS 'bytes: its anonymous memory (memory.stat anon, v1 total_rss)';
COMMENT ON COLUMN @extschema@.pg_procmem_accounting.cgroup_shmem IS 'bytes: its shared memory (shmem): page cache that cannot be dropped, only swapped';
COMMENT ON COLUMN @extschema@.pg_procmem_accounting.cgroup_page_cache_dirty IS 'bytes: the part of cgroup_page_cache to write before it can be reclaimed (dirty + writeback)';
COMMENT ON COLUMN @extschema@.pg_procmem_accounting.cgroup_kernel IS 'bytes: its kernel memory (v2 kernel + sock, v1 kmem usage)';
COMMENT ON COLUMN @extschema@.pg_procmem_accounting.processes_kernel IS 'bytes: the part of processes_overhead the cgroup counts as kernel memory (page tables, kernel)';
COMMENT ON COLUMN @extschema@.pg_procmem_accounting.cgroup_kernel_other IS 'bytes: cgroup_kernel less processes_kernel; negative when the cgroup is not charged kernel memory';
COMMENT ON COLUMN @extschema@.pg_procmem_accounting.unexplained IS 'bytes: cgroup_unexplained less cgroup_kernel_other: what neither the processes nor the page cache and kernel memory explain';
COMMENT ON COLUMN @extschema@.pg_procmem_accounting.cgroup_high_events IS 'times usage went over memory.high (v2)';
COMMENT ON COLUMN @extschema@.pg_procmem_accounting.cgroup_max_events IS 'times usage reached the limit (memory.events max, v1 memory.failcnt)';
COMMENT ON COLUMN @extschema@.pg_procmem_accounting.cgroup_oom_events IS 'times the limit was hit with nothing left to reclaim (memory.events oom, v2)';
COMMENT ON COLUMN @extschema@.pg_procmem_accounting.cgroup_oom_kills IS 'processes the OOM killer killed in the cgroup (memory.events oom_kill, v1 memory.oom_control)';
COMMENT ON COLUMN @extschema@.pg_procmem_accounting.cgroup_oom_group IS 'an OOM kill takes every process of the cgroup (memory.oom.group, v2)';

-- pg_procmem_hugepages
COMMENT ON COLUMN @extschema@.pg_procmem_hugepages.huge_pages IS 'the huge_pages setting';
COMMENT ON COLUMN @extschema@.pg_procmem_hugepages.huge_page_size IS 'the huge_page_size setting';
COMMENT ON COLUMN @extschema@.pg_procmem_hugepages.shared_memory_size IS 'bytes: the shared_memory_size PostgreSQL computes (15+; NULL before)';
COMMENT ON COLUMN @extschema@.pg_procmem_hugepages.shared_memory_size_in_huge_pages IS 'pages: the huge pages it needs (15+; NULL before)';
COMMENT ON COLUMN @extschema@.pg_procmem_hugepages.postmaster_vm_peak IS 'bytes: the postmaster''s VmPeak';
COMMENT ON COLUMN @extschema@.pg_procmem_hugepages.vm_peak_huge_pages IS 'pages: postmaster_vm_peak / hugepage_size, rounded up (the classic recipe)';
COMMENT ON COLUMN @extschema@.pg_procmem_hugepages.hugepage_size IS 'bytes: the default huge page size (meminfo Hugepagesize)';
COMMENT ON COLUMN @extschema@.pg_procmem_hugepages.hugepages_total IS 'pages: huge pages reserved (meminfo HugePages_Total)';
COMMENT ON COLUMN @extschema@.pg_procmem_hugepages.hugepages_free IS 'pages: huge pages free (meminfo HugePages_Free)';
COMMENT ON COLUMN @extschema@.pg_procmem_hugepages.hugepages_rsvd IS 'pages: free huge pages promised to a mapping (meminfo HugePages_Rsvd)';
COMMENT ON COLUMN @extschema@.pg_procmem_hugepages.hugepages_surp IS 'pages: surplus huge pages (meminfo HugePages_Surp)';
COMMENT ON COLUMN @extschema@.pg_procmem_hugepages.in_use IS 'the main shared memory segment is in huge pages';
COMMENT ON COLUMN @extschema@.pg_procmem_hugepages.page_tables IS 'bytes: the page tables of every server process now';
COMMENT ON COLUMN @extschema@.pg_procmem_hugepages.page_tables_with_huge_pages IS 'bytes: what they would be with the main segment in huge pages';
COMMENT ON COLUMN @extschema@.pg_procmem_hugepages.recommendation IS 'what to do, in a sentence';
COMMENT ON COLUMN @extschema@.pg_procmem_hugepages.summary IS 'the answer in one terminal line';

-- pg_procmem_oom
COMMENT ON COLUMN @extschema@.pg_procmem_oom.rank IS 'the order the OOM killer would take them in, 1 first (ties share a rank)';
COMMENT ON COLUMN @extschema@.pg_procmem_oom.pid IS 'process id';
COMMENT ON COLUMN @extschema@.pg_procmem_oom.backend_type IS 'as in pg_procmem_backends';
COMMENT ON COLUMN @extschema@.pg_procmem_oom.oom_score IS 'the OOM killer''s score now (/proc/PID/oom_score)';
COMMENT ON COLUMN @extschema@.pg_procmem_oom.oom_score_adj IS 'its adjustment, -1000 to 1000 (-1000: never killed)';
COMMENT ON COLUMN @extschema@.pg_procmem_oom.badness_pct IS 'percent: its share of RAM + swap as the killer sees it, adjusted; NULL when protected';
COMMENT ON COLUMN @extschema@.pg_procmem_oom.protected IS 'oom_score_adj is -1000';
COMMENT ON COLUMN @extschema@.pg_procmem_oom.rss IS 'bytes: resident set (status VmRSS)';
COMMENT ON COLUMN @extschema@.pg_procmem_oom.rss_shmem IS 'bytes: resident shared memory it touched (status RssShmem)';
COMMENT ON COLUMN @extschema@.pg_procmem_oom.swap IS 'bytes: its memory in swap (status VmSwap)';
COMMENT ON COLUMN @extschema@.pg_procmem_oom.page_tables IS 'bytes: its page tables (status VmPTE)';
COMMENT ON COLUMN @extschema@.pg_procmem_oom.overhead IS 'bytes: what it really costs, as in pg_procmem_backends';
COMMENT ON COLUMN @extschema@.pg_procmem_oom.if_killed IS
'what killing it does: every session ends, server shuts down, restarted alone, server stays down';

-- pg_procmem_memory_settings
COMMENT ON COLUMN @extschema@.pg_procmem_memory_settings.max_connections IS 'the max_connections setting';
COMMENT ON COLUMN @extschema@.pg_procmem_memory_settings.superuser_reserved_connections IS 'the superuser_reserved_connections setting';
COMMENT ON COLUMN @extschema@.pg_procmem_memory_settings.reserved_connections IS 'the reserved_connections setting (16+; 0 before)';
COMMENT ON COLUMN @extschema@.pg_procmem_memory_settings.work_mem IS 'bytes: the work_mem setting';
COMMENT ON COLUMN @extschema@.pg_procmem_memory_settings.hash_mem_multiplier IS 'the hash_mem_multiplier setting';
COMMENT ON COLUMN @extschema@.pg_procmem_memory_settings.maintenance_work_mem IS 'bytes: the maintenance_work_mem setting';
COMMENT ON COLUMN @extschema@.pg_procmem_memory_settings.autovacuum_work_mem IS 'bytes: autovacuum_work_mem, or maintenance_work_mem when it is -1';
COMMENT ON COLUMN @extschema@.pg_procmem_memory_settings.autovacuum_max_workers IS 'the autovacuum_max_workers setting';
COMMENT ON COLUMN @extschema@.pg_procmem_memory_settings.temp_buffers IS 'bytes: the temp_buffers setting';

-- pg_procmem_headroom
COMMENT ON COLUMN @extschema@.pg_procmem_headroom.mem_available IS 'bytes: meminfo MemAvailable';
COMMENT ON COLUMN @extschema@.pg_procmem_headroom.cgroup_effective_limit IS 'bytes: the smallest limit of the server''s cgroup and its ancestors; NULL: none';
COMMENT ON COLUMN @extschema@.pg_procmem_headroom.cgroup_usage IS 'bytes: the server''s cgroup''s usage';
COMMENT ON COLUMN @extschema@.pg_procmem_headroom.cgroup_page_cache IS 'bytes: its page cache, shmem aside (reclaimable)';
COMMENT ON COLUMN @extschema@.pg_procmem_headroom.cgroup_room IS 'bytes: the least room, limit less what the kernel cannot reclaim (usage but page cache and reclaimable slab), over the cgroup and its ancestors';
COMMENT ON COLUMN @extschema@.pg_procmem_headroom.available IS 'bytes: the smaller of mem_available and cgroup_room';
COMMENT ON COLUMN @extschema@.pg_procmem_headroom.idle_client_backends IS 'how many client backends are idle';
COMMENT ON COLUMN @extschema@.pg_procmem_headroom.avg_idle_overhead IS 'bytes: their average overhead';
COMMENT ON COLUMN @extschema@.pg_procmem_headroom.more_idle_connections_fit IS 'available / per_connection, never below 0';
COMMENT ON COLUMN @extschema@.pg_procmem_headroom.max_connections IS 'the max_connections setting';
COMMENT ON COLUMN @extschema@.pg_procmem_headroom.client_backends IS 'how many client backends there are';
COMMENT ON COLUMN @extschema@.pg_procmem_headroom.connection_slots_left IS 'connections an ordinary role can still open';
COMMENT ON COLUMN @extschema@.pg_procmem_headroom.work_mem IS 'bytes: the work_mem setting';
COMMENT ON COLUMN @extschema@.pg_procmem_headroom.hash_mem_multiplier IS 'the hash_mem_multiplier setting';
COMMENT ON COLUMN @extschema@.pg_procmem_headroom.work_mem_exposure IS 'bytes: max_connections x work_mem x hash_mem_multiplier';
COMMENT ON COLUMN @extschema@.pg_procmem_headroom.maintenance_work_mem IS 'bytes: the maintenance_work_mem setting';
COMMENT ON COLUMN @extschema@.pg_procmem_headroom.autovacuum_work_mem IS 'bytes: autovacuum_work_mem, or maintenance_work_mem when it is -1';
COMMENT ON COLUMN @extschema@.pg_procmem_headroom.autovacuum_max_workers IS 'the autovacuum_max_workers setting';
COMMENT ON COLUMN @extschema@.pg_procmem_headroom.autovacuum_exposure IS 'bytes: autovacuum_max_workers x autovacuum_work_mem';
COMMENT ON COLUMN @extschema@.pg_procmem_headroom.work_mem_exposure_ratio IS 'work_mem_exposure / available';
COMMENT ON COLUMN @extschema@.pg_procmem_headroom.superuser_reserved_connections IS 'the superuser_reserved_connections setting';
COMMENT ON COLUMN @extschema@.pg_procmem_headroom.reserved_connections IS 'the reserved_connections setting (16+; 0 before)';
COMMENT ON COLUMN @extschema@.pg_procmem_headroom.per_connection IS 'bytes: what a connection is taken to cost (see per_connection_from)';
COMMENT ON COLUMN @extschema@.pg_procmem_headroom.per_connection_from IS 'which backends per_connection comes from';
COMMENT ON COLUMN @extschema@.pg_procmem_headroom.temp_buffers IS 'bytes: the temp_buffers setting';
COMMENT ON COLUMN @extschema@.pg_procmem_headroom.temp_buffers_exposure IS 'bytes: max_connections x temp_buffers';

-- pg_procmem_top
COMMENT ON COLUMN @extschema@.pg_procmem_top.pid IS 'process id';
COMMENT ON COLUMN @extschema@.pg_procmem_top.process IS 'user@database for a client backend, else the backend type, shortened; at most 17 columns';
COMMENT ON COLUMN @extschema@.pg_procmem_top.state IS 'as in pg_stat_activity, shortened (idletx: idle in transaction)';
COMMENT ON COLUMN @extschema@.pg_procmem_top.overhead IS 'what it costs (pg_procmem_backends.overhead), as a pg_procmem_size';
COMMENT ON COLUMN @extschema@.pg_procmem_top.pagetbl IS 'its page tables, part of overhead, as a pg_procmem_size';
COMMENT ON COLUMN @extschema@.pg_procmem_top.rss IS 'its resident set, what ps shows, as a pg_procmem_size';
COMMENT ON COLUMN @extschema@.pg_procmem_top.context IS 'its memory contexts (pg_procmem_backends.context_bytes), as a pg_procmem_size';

-- pg_procmem_history
COMMENT ON COLUMN @extschema@.pg_procmem_history.sample IS 'the sample''s number, in the order samples were taken';
COMMENT ON COLUMN @extschema@.pg_procmem_history.sampled_at IS 'when the sample was taken, by the wall clock';
COMMENT ON COLUMN @extschema@.pg_procmem_history.pid IS 'process id';
COMMENT ON COLUMN @extschema@.pg_procmem_history.backend_type IS 'as in pg_procmem_backends, at the sample';
COMMENT ON COLUMN @extschema@.pg_procmem_history.datname IS 'as in pg_stat_activity, at the sample';
COMMENT ON COLUMN @extschema@.pg_procmem_history.usename IS 'as in pg_stat_activity, at the sample';
COMMENT ON COLUMN @extschema@.pg_procmem_history.application_name IS 'as in pg_stat_activity, at the sample';
COMMENT ON COLUMN @extschema@.pg_procmem_history.state IS 'as in pg_stat_activity, at the sample';
COMMENT ON COLUMN @extschema@.pg_procmem_history.query_id IS 'as in pg_stat_activity, at the sample';
COMMENT ON COLUMN @extschema@.pg_procmem_history.query IS 'its statement at the sample; NULL when pg_procmem.keep_statement_text is off (its or the reader''s)';
COMMENT ON COLUMN @extschema@.pg_procmem_history.leader_pid IS 'as in pg_stat_activity: a parallel worker''s leader';
COMMENT ON COLUMN @extschema@.pg_procmem_history.backend_start IS 'as in pg_stat_activity';
COMMENT ON COLUMN @extschema@.pg_procmem_history.query_start IS 'as in pg_stat_activity, at the sample';
COMMENT ON COLUMN @extschema@.pg_procmem_history.overhead IS 'bytes: as in pg_procmem_backends, at the sample';
COMMENT ON COLUMN @extschema@.pg_procmem_history.private_anon IS 'bytes: as in pg_procmem_backends, at the sample';
COMMENT ON COLUMN @extschema@.pg_procmem_history.page_tables IS 'bytes: its page tables at the sample';
COMMENT ON COLUMN @extschema@.pg_procmem_history.rss IS 'bytes: its resident set at the sample';
COMMENT ON COLUMN @extschema@.pg_procmem_history.swap IS 'bytes: its memory in swap at the sample';
COMMENT ON COLUMN @extschema@.pg_procmem_history.context_bytes IS 'bytes: its memory contexts as last published before the sample';
COMMENT ON COLUMN @extschema@.pg_procmem_history.oom_score IS 'the OOM killer''s score at the sample';
COMMENT ON COLUMN @extschema@.pg_procmem_history.work_mem IS 'bytes: the work_mem it ran with; NULL if it ran no statement yet';
COMMENT ON COLUMN @extschema@.pg_procmem_history.work_mem_source IS 'where work_mem was set, as pg_settings.source names it';
COMMENT ON COLUMN @extschema@.pg_procmem_history.hash_mem_multiplier IS 'the hash_mem_multiplier it ran with';
COMMENT ON COLUMN @extschema@.pg_procmem_history.hash_mem_multiplier_source IS 'where hash_mem_multiplier was set, as pg_settings.source names it';
COMMENT ON COLUMN @extschema@.pg_procmem_history.temp_buffers IS 'bytes: the temp_buffers it ran with';
COMMENT ON COLUMN @extschema@.pg_procmem_history.temp_buffers_source IS 'where temp_buffers was set, as pg_settings.source names it';
COMMENT ON COLUMN @extschema@.pg_procmem_history.maintenance_work_mem IS 'bytes: the maintenance_work_mem it ran with';
COMMENT ON COLUMN @extschema@.pg_procmem_history.maintenance_work_mem_source IS 'where maintenance_work_mem was set, as pg_settings.source names it';
COMMENT ON COLUMN @extschema@.pg_procmem_history.reused IS
'true: overhead, private_anon, page_tables and swap are those of an earlier read of the same process (at most 2 minutes old) that nothing can have changed since, and rss too unless page cache was reclaimed meanwhile (then read again); oom_score is read afresh; false otherwise, and in samples of older builds';
COMMENT ON COLUMN @extschema@.pg_procmem_history.oom_protected IS
'true: its oom_score_adj was -1000 at the sample (the OOM killer never takes it); NULL when unread, and in samples of older builds';
COMMENT ON COLUMN @extschema@.pg_procmem_history.dsm IS 'bytes: what the dynamic shared memory segments it mapped held at the sample; NULL: unknown, and in samples of 1.2.0';
COMMENT ON COLUMN @extschema@.pg_procmem_history.group_dsm IS 'bytes: what the segments only its parallel group mapped held, each counted once; NULL: unknown, and in samples of 1.2.0';

-- pg_procmem_latest
COMMENT ON COLUMN @extschema@.pg_procmem_latest.pid IS 'process id';
COMMENT ON COLUMN @extschema@.pg_procmem_latest.backend_type IS 'as in pg_procmem_backends';
COMMENT ON COLUMN @extschema@.pg_procmem_latest.datname IS 'as in pg_stat_activity';
COMMENT ON COLUMN @extschema@.pg_procmem_latest.usename IS 'as in pg_stat_activity';
COMMENT ON COLUMN @extschema@.pg_procmem_latest.application_name IS 'as in pg_stat_activity';
COMMENT ON COLUMN @extschema@.pg_procmem_latest.state IS 'as in pg_stat_activity';
COMMENT ON COLUMN @extschema@.pg_procmem_latest.leader_pid IS 'as in pg_stat_activity: a parallel worker''s leader';
COMMENT ON COLUMN @extschema@.pg_procmem_latest.overhead IS 'bytes: as in pg_procmem_backends, at read_at';
COMMENT ON COLUMN @extschema@.pg_procmem_latest.private_anon IS 'bytes: as in pg_procmem_backends, at read_at';
COMMENT ON COLUMN @extschema@.pg_procmem_latest.page_tables IS 'bytes: its page tables at read_at';
COMMENT ON COLUMN @extschema@.pg_procmem_latest.rss IS 'bytes: its resident set at read_at';
COMMENT ON COLUMN @extschema@.pg_procmem_latest.swap IS 'bytes: its memory in swap at read_at';
COMMENT ON COLUMN @extschema@.pg_procmem_latest.context_bytes IS 'bytes: its memory contexts as last published before read_at';
COMMENT ON COLUMN @extschema@.pg_procmem_latest.oom_score IS 'the OOM killer''s score at read_at';
COMMENT ON COLUMN @extschema@.pg_procmem_latest.oom_protected IS 'true: its oom_score_adj is -1000 (the OOM killer never takes it); NULL when unreadable';
COMMENT ON COLUMN @extschema@.pg_procmem_latest.dsm IS 'as in pg_procmem_backends';
COMMENT ON COLUMN @extschema@.pg_procmem_latest.group_dsm IS 'as in pg_procmem_backends';
COMMENT ON COLUMN @extschema@.pg_procmem_latest.read_at IS 'when the figures were read: the sample''s time, or the statement''s for a live read';
COMMENT ON COLUMN @extschema@.pg_procmem_latest.source IS 'sample: the memory history''s newest sample; live: read now from /proc';

-- pg_procmem_guard_actions
COMMENT ON COLUMN @extschema@.pg_procmem_guard_actions.acted_at IS 'when the guard signalled the backend, or when the backend passed its own limit';
COMMENT ON COLUMN @extschema@.pg_procmem_guard_actions.action_number IS '1, 2, ...: the order of the actions since the history began';
COMMENT ON COLUMN @extschema@.pg_procmem_guard_actions.pid IS 'the backend acted on (a parallel query''s leader)';
COMMENT ON COLUMN @extschema@.pg_procmem_guard_actions.action IS 'cancel, terminate, or in dry_run would cancel, would terminate';
COMMENT ON COLUMN @extschema@.pg_procmem_guard_actions.reason IS 'server limit: the memory passed pg_procmem.guard_threshold of its limit; backend limit: the backend passed pg_procmem.max_backend_memory';
COMMENT ON COLUMN @extschema@.pg_procmem_guard_actions.processes IS 'how many processes it counted as one: the leader and its parallel workers';
COMMENT ON COLUMN @extschema@.pg_procmem_guard_actions.held IS 'bytes: what was compared: a cancel''s statement (its private memory beyond what its session held between statements, plus its parallel group''s own DSM), a terminate''s session (what it held between statements), or for a backend limit the backend''s anonymous resident memory (RssAnon)';
COMMENT ON COLUMN @extschema@.pg_procmem_guard_actions.limit_bytes IS 'bytes: the limit passed: the cgroup''s or the machine''s (or pg_procmem.guard_limit), or pg_procmem.max_backend_memory';
COMMENT ON COLUMN @extschema@.pg_procmem_guard_actions.used IS 'bytes: the memory of that source the kernel cannot reclaim, when the guard acted; NULL for a backend limit';
COMMENT ON COLUMN @extschema@.pg_procmem_guard_actions.threshold_pct IS 'pg_procmem.guard_threshold when the guard acted; NULL for a backend limit';
COMMENT ON COLUMN @extschema@.pg_procmem_guard_actions.source IS 'cgroup or machine: whose limit was near; NULL for a backend limit';
COMMENT ON COLUMN @extschema@.pg_procmem_guard_actions.given_back IS 'bytes: how far what its group held (private memory and own DSM) fell after it (a cancel: over pg_procmem.guard_terminate_wait, 2 seconds at least, while its processes exit; a terminate: until the session exits, 30 seconds at most), or until the guard''s next action on that backend (all of it when the process ended); NULL until measured, and for would ... actions';
COMMENT ON COLUMN @extschema@.pg_procmem_guard_actions.backend_start IS 'when the backend started';
COMMENT ON COLUMN @extschema@.pg_procmem_guard_actions.query_start IS 'when its statement started';
COMMENT ON COLUMN @extschema@.pg_procmem_guard_actions.usename IS 'its user';
COMMENT ON COLUMN @extschema@.pg_procmem_guard_actions.datname IS 'its database';
COMMENT ON COLUMN @extschema@.pg_procmem_guard_actions.application_name IS 'its application_name';
COMMENT ON COLUMN @extschema@.pg_procmem_guard_actions.query IS 'the first 255 bytes of its statement; NULL where pg_procmem.keep_statement_text is off for it';

-- pg_procmem_history_system
COMMENT ON COLUMN @extschema@.pg_procmem_history_system.sample IS 'the sample''s number, in the order samples were taken';
COMMENT ON COLUMN @extschema@.pg_procmem_history_system.sampled_at IS 'when the sample was taken, by the wall clock';
COMMENT ON COLUMN @extschema@.pg_procmem_history_system.run_started IS 'when shared memory was last initialized (the server''s start or crash restart)';
COMMENT ON COLUMN @extschema@.pg_procmem_history_system.processes IS 'how many server processes the sample holds';
COMMENT ON COLUMN @extschema@.pg_procmem_history_system.mem_total IS 'bytes: meminfo MemTotal';
COMMENT ON COLUMN @extschema@.pg_procmem_history_system.mem_available IS 'bytes: meminfo MemAvailable';
COMMENT ON COLUMN @extschema@.pg_procmem_history_system.swap_used IS 'bytes: swap in use';
COMMENT ON COLUMN @extschema@.pg_procmem_history_system.page_tables IS 'bytes: the machine''s page tables (meminfo PageTables)';
COMMENT ON COLUMN @extschema@.pg_procmem_history_system.hugepages_total IS 'pages: huge pages reserved';
COMMENT ON COLUMN @extschema@.pg_procmem_history_system.hugepages_free IS 'pages: huge pages free';
COMMENT ON COLUMN @extschema@.pg_procmem_history_system.cgroup_usage IS 'bytes: the server''s memory cgroup''s usage';
COMMENT ON COLUMN @extschema@.pg_procmem_history_system.cgroup_limit IS 'bytes: its own limit; NULL: none';
COMMENT ON COLUMN @extschema@.pg_procmem_history_system.cgroup_oom_kills IS 'its OOM kill counter';
COMMENT ON COLUMN @extschema@.pg_procmem_history_system.connections IS 'client connections since run_started';
COMMENT ON COLUMN @extschema@.pg_procmem_history_system.sample_ms IS 'ms: the sampler''s CPU time for the sample';
COMMENT ON COLUMN @extschema@.pg_procmem_history_system.sample_wall_ms IS 'ms: the wall time the sample took';
COMMENT ON COLUMN @extschema@.pg_procmem_history_system.pressure IS
'the pressure watch''s level when the sample was taken: high (sampling every pg_procmem.pressure_sample_interval), critical (four times as often); NULL: none, or a sample of an older build';
COMMENT ON COLUMN @extschema@.pg_procmem_history_system.pressure_source IS
'the source nearest its limit, and the one that raised pressure when there is some: machine (all its memory), cgroup (a memory cgroup''s limit) or cgroup stall (the server''s cgroup stalled on memory: cgroup_psi_full_avg10 of 10 or more); NULL: unknown, or a sample of an older build';
COMMENT ON COLUMN @extschema@.pg_procmem_history_system.pressure_used IS
'bytes: the memory the kernel cannot reclaim (page cache and reclaimable slab aside) in use in pressure_source; NULL: unknown';
COMMENT ON COLUMN @extschema@.pg_procmem_history_system.pressure_limit IS 'bytes: that source''s limit; NULL: unknown';
COMMENT ON COLUMN @extschema@.pg_procmem_history_system.reused IS
'how many of the sample''s processes kept the figures of an earlier read (pg_procmem_history.reused); 0 in samples of older builds';
COMMENT ON COLUMN @extschema@.pg_procmem_history_system.dsm_segments IS 'dynamic shared memory segments the server''s processes mapped; NULL: not read (and in samples of older builds)';
COMMENT ON COLUMN @extschema@.pg_procmem_history_system.dsm_mapped IS 'bytes: what they held, each counted once';
COMMENT ON COLUMN @extschema@.pg_procmem_history_system.dsm_shared_segments IS 'those mapped by processes of several groups (the control segment, the statistics'' shared area, the DSM registry): charged to no query';
COMMENT ON COLUMN @extschema@.pg_procmem_history_system.dsm_shared IS 'bytes: what they held';
COMMENT ON COLUMN @extschema@.pg_procmem_history_system.dsm_leftover_segments IS 'segments the server was seen mapping that nobody has mapped for pg_procmem.dsm_leftover_after (a process killed before it removed them)';
COMMENT ON COLUMN @extschema@.pg_procmem_history_system.dsm_leftover IS 'bytes: what they hold (in the cgroup''s usage, in no process''s)';
COMMENT ON COLUMN @extschema@.pg_procmem_history_system.dsm_leftover_names IS 'the largest of them (at most 4), where to find them: /dev/shm/PostgreSQL.<handle>, pg_dynshmem/mmap.<handle>, or a System V shmid; NULL: none';
COMMENT ON COLUMN @extschema@.pg_procmem_history_system.psi_some_avg10 IS 'percent of the last 10 s in which some task of the machine stalled waiting for memory (/proc/pressure/memory); NULL: see psi_unavailable';
COMMENT ON COLUMN @extschema@.pg_procmem_history_system.psi_full_avg10 IS 'percent of the last 10 s in which every non-idle task of the machine stalled on memory at once: shown, never acted on (other tenants cause it)';
COMMENT ON COLUMN @extschema@.pg_procmem_history_system.cgroup_psi_some_avg10 IS 'the same of the server''s own cgroup (cgroup v2 memory.pressure); NULL: see psi_unavailable';
COMMENT ON COLUMN @extschema@.pg_procmem_history_system.cgroup_psi_full_avg10 IS 'the same, every task of the server''s cgroup at once; from 10 the pressure watch is high (pressure_source cgroup stall)';
COMMENT ON COLUMN @extschema@.pg_procmem_history_system.psi_unavailable IS 'why a stall figure is NULL (PSI off, cgroup v1, unreadable); NULL: all were read';

-- pg_procmem_crashes
COMMENT ON COLUMN @extschema@.pg_procmem_crashes.number IS '1, 2, ... since the history file was created';
COMMENT ON COLUMN @extschema@.pg_procmem_crashes.crashed_at IS 'when it was killed: where the OOM kill counter rose, the first read that saw it (the kill came after killed_after, by this); else when the postmaster logged the exit (exited_at); else restarted_at';
COMMENT ON COLUMN @extschema@.pg_procmem_crashes.how_known IS 'postmaster log, guess: highest oom_score at the last sample, or unclean stop';
COMMENT ON COLUMN @extschema@.pg_procmem_crashes.killed_pid IS 'the process whose exit the postmaster logged; NULL when it logged none';
COMMENT ON COLUMN @extschema@.pg_procmem_crashes.guessed_pid IS 'a guess: the highest oom_score at the last sample';
COMMENT ON COLUMN @extschema@.pg_procmem_crashes.signal IS 'the signal that ended it, as the postmaster logged';
COMMENT ON COLUMN @extschema@.pg_procmem_crashes.exit_code IS 'its exit code, as the postmaster logged';
COMMENT ON COLUMN @extschema@.pg_procmem_crashes.logged IS 'the postmaster''s message';
COMMENT ON COLUMN @extschema@.pg_procmem_crashes.restarted_at IS 'when the postmaster initialized shared memory again';
COMMENT ON COLUMN @extschema@.pg_procmem_crashes.cgroup_oom_kills IS 'how much the OOM kill counter (the cgroup''s; without a memory cgroup, the machine''s) rose across the kill: 0, it was read before and after and did not rise; NULL, unknown';
COMMENT ON COLUMN @extschema@.pg_procmem_crashes.cgroup_usage_at_sample IS 'bytes: the cgroup''s usage at the last sample';
COMMENT ON COLUMN @extschema@.pg_procmem_crashes.cgroup_limit IS 'bytes: its effective limit when the row was made; NULL: none';
COMMENT ON COLUMN @extschema@.pg_procmem_crashes.last_sample_at IS 'when the run''s last sample before the kill was taken (one that ended before killed_after, where the counter placed the kill)';
COMMENT ON COLUMN @extschema@.pg_procmem_crashes.seconds_since_sample IS 'seconds from the last sample to crashed_at';
COMMENT ON COLUMN @extschema@.pg_procmem_crashes.last_seen_at IS 'the last sample that saw the process; NULL: none did';
COMMENT ON COLUMN @extschema@.pg_procmem_crashes.query_id IS 'its query_id at last_seen_at';
COMMENT ON COLUMN @extschema@.pg_procmem_crashes.overhead IS 'bytes: its overhead at last_seen_at';
COMMENT ON COLUMN @extschema@.pg_procmem_crashes.context_bytes IS 'bytes: its published memory contexts at last_seen_at';
COMMENT ON COLUMN @extschema@.pg_procmem_crashes.page_tables IS 'bytes: its page tables at last_seen_at';
COMMENT ON COLUMN @extschema@.pg_procmem_crashes.oom_score IS 'its oom_score at last_seen_at';
COMMENT ON COLUMN @extschema@.pg_procmem_crashes.backend_type IS 'what the process was';
COMMENT ON COLUMN @extschema@.pg_procmem_crashes.usename IS 'its user';
COMMENT ON COLUMN @extschema@.pg_procmem_crashes.datname IS 'its database';
COMMENT ON COLUMN @extschema@.pg_procmem_crashes.application_name IS 'its application_name';
COMMENT ON COLUMN @extschema@.pg_procmem_crashes.backend_start IS 'when it started';
COMMENT ON COLUMN @extschema@.pg_procmem_crashes.query_start IS 'when its last statement started';
COMMENT ON COLUMN @extschema@.pg_procmem_crashes.query IS 'its last statement';
COMMENT ON COLUMN @extschema@.pg_procmem_crashes.query_from IS 'where query comes from: exit (the postmaster''s copy) or last sample';
COMMENT ON COLUMN @extschema@.pg_procmem_crashes.query_cut IS 'the statement was longer than query';
COMMENT ON COLUMN @extschema@.pg_procmem_crashes.query_folded IS 'non-ASCII bytes and control characters in query are shown as ?';
COMMENT ON COLUMN @extschema@.pg_procmem_crashes.top_pids IS 'the three processes with the largest overhead at the last sample';
COMMENT ON COLUMN @extschema@.pg_procmem_crashes.top_backend_types IS 'their backend types';
COMMENT ON COLUMN @extschema@.pg_procmem_crashes.top_overheads IS 'bytes: their overhead';
COMMENT ON COLUMN @extschema@.pg_procmem_crashes.work_mem IS 'bytes: the work_mem it ran with';
COMMENT ON COLUMN @extschema@.pg_procmem_crashes.work_mem_source IS 'where work_mem was set, as pg_settings.source names it';
COMMENT ON COLUMN @extschema@.pg_procmem_crashes.hash_mem_multiplier IS 'the hash_mem_multiplier it ran with';
COMMENT ON COLUMN @extschema@.pg_procmem_crashes.hash_mem_multiplier_source IS 'where hash_mem_multiplier was set';
COMMENT ON COLUMN @extschema@.pg_procmem_crashes.temp_buffers IS 'bytes: the temp_buffers it ran with';
COMMENT ON COLUMN @extschema@.pg_procmem_crashes.temp_buffers_source IS 'where temp_buffers was set';
COMMENT ON COLUMN @extschema@.pg_procmem_crashes.maintenance_work_mem IS 'bytes: the maintenance_work_mem it ran with';
COMMENT ON COLUMN @extschema@.pg_procmem_crashes.maintenance_work_mem_source IS 'where maintenance_work_mem was set';
COMMENT ON COLUMN @extschema@.pg_procmem_crashes.exited_at IS 'when the postmaster logged the killed process''s exit; NULL when it logged none';
COMMENT ON COLUMN @extschema@.pg_procmem_crashes.killed_after IS 'the OOM kill counter''s last read before it rose: the kill came after it (and by crashed_at); NULL when the counter placed no kill';
COMMENT ON COLUMN @extschema@.pg_procmem_crashes.state IS 'its state at last_seen_at (active, idle in transaction, ...): with a state but active, query is the statement it ran last';
COMMENT ON COLUMN @extschema@.pg_procmem_crashes.parallel_processes IS 'its parallel query at last_seen_at: the leader and its workers; NULL when it ran none';
COMMENT ON COLUMN @extschema@.pg_procmem_crashes.parallel_overhead IS 'bytes: their overhead together';
COMMENT ON COLUMN @extschema@.pg_procmem_crashes.plan_memory IS 'what its statement''s plans (its functions'' queries too) had that work_mem bounds: a list of sort, hash, tuplestore; none; NULL: not said (a utility, or killed before its statement reached the executor)';
COMMENT ON COLUMN @extschema@.pg_procmem_crashes.parallel_dsm IS 'bytes: what the dynamic shared memory segments only its parallel group mapped held at that sample (a parallel hash join''s hash table); NULL: unknown';
COMMENT ON COLUMN @extschema@.pg_procmem_crashes.oom_killed IS 'the OOM kill counter rose across the kill (true), was read before and after and did not (false: signal 9 from someone else), or is unknown (NULL)';
COMMENT ON COLUMN @extschema@.pg_procmem_crashes.summary IS 'the row in one line of at most 56 columns';
COMMENT ON COLUMN @extschema@.pg_procmem_crashes.report IS 'the post-mortem, in lines of at most 56 columns';

-- pg_procmem_crash_holders
COMMENT ON COLUMN @extschema@.pg_procmem_crash_holders.number IS 'the crash row''s number';
COMMENT ON COLUMN @extschema@.pg_procmem_crash_holders.rank IS '1 to 3: the groups by total overhead at the last sample, largest first';
COMMENT ON COLUMN @extschema@.pg_procmem_crash_holders.usename IS 'the group''s user';
COMMENT ON COLUMN @extschema@.pg_procmem_crash_holders.application_name IS 'the group''s application_name';
COMMENT ON COLUMN @extschema@.pg_procmem_crash_holders.backend_type IS 'the group''s backend type';
COMMENT ON COLUMN @extschema@.pg_procmem_crash_holders.processes IS 'how many processes the group had (a parallel worker counts in its leader''s group)';
COMMENT ON COLUMN @extschema@.pg_procmem_crash_holders.overhead IS 'bytes: their total overhead';
COMMENT ON COLUMN @extschema@.pg_procmem_crash_holders.largest IS 'bytes: the largest one''s overhead';
COMMENT ON COLUMN @extschema@.pg_procmem_crash_holders.largest_pid IS 'the largest one''s pid';
COMMENT ON COLUMN @extschema@.pg_procmem_crash_holders.work_mem IS 'bytes: the work_mem the largest one ran with';
COMMENT ON COLUMN @extschema@.pg_procmem_crash_holders.work_mem_source IS 'where it was set, as pg_settings.source names it';
COMMENT ON COLUMN @extschema@.pg_procmem_crash_holders.hash_mem_multiplier IS 'the hash_mem_multiplier the largest one ran with';
COMMENT ON COLUMN @extschema@.pg_procmem_crash_holders.hash_mem_multiplier_source IS 'where it was set';
COMMENT ON COLUMN @extschema@.pg_procmem_crash_holders.temp_buffers IS 'bytes: the temp_buffers the largest one ran with';
COMMENT ON COLUMN @extschema@.pg_procmem_crash_holders.temp_buffers_source IS 'where it was set';
COMMENT ON COLUMN @extschema@.pg_procmem_crash_holders.maintenance_work_mem IS 'bytes: the maintenance_work_mem the largest one ran with';
COMMENT ON COLUMN @extschema@.pg_procmem_crash_holders.maintenance_work_mem_source IS 'where it was set';
COMMENT ON COLUMN @extschema@.pg_procmem_crash_holders.parallel_workers IS 'how many of its processes were parallel workers of its sessions';
COMMENT ON COLUMN @extschema@.pg_procmem_crash_holders.largest_state IS 'the largest one''s state (active, idle in transaction, ...)';
COMMENT ON COLUMN @extschema@.pg_procmem_crash_holders.largest_query IS 'the largest one''s statement (its last, when not active); NULL where keep_statement_text is off';
COMMENT ON COLUMN @extschema@.pg_procmem_crash_holders.dsm IS 'bytes: what the segments only their parallel queries mapped held, each counted once (ranked with overhead); NULL: unknown';

-- pg_procmem_query_memory
COMMENT ON COLUMN @extschema@.pg_procmem_query_memory.query_id IS 'the query_id';
COMMENT ON COLUMN @extschema@.pg_procmem_query_memory.samples IS 'how many times a sample saw it running: once a sample for each session running it (a parallel query''s leader and workers together)';
COMMENT ON COLUMN @extschema@.pg_procmem_query_memory.backends IS 'how many backends ran it (a parallel query''s workers count)';
COMMENT ON COLUMN @extschema@.pg_procmem_query_memory.max_overhead IS 'bytes: the most a sample saw a session running it hold (a parallel query: its leader and workers together)';
COMMENT ON COLUMN @extschema@.pg_procmem_query_memory.mean_overhead IS 'bytes: the mean of those samples'' overhead';
COMMENT ON COLUMN @extschema@.pg_procmem_query_memory.max_context_bytes IS 'bytes: the largest published context total in those samples (lags: see docs)';
COMMENT ON COLUMN @extschema@.pg_procmem_query_memory.mean_context_bytes IS 'bytes: the mean of those samples'' published context totals';
COMMENT ON COLUMN @extschema@.pg_procmem_query_memory.first_seen IS 'when its first sample was taken';
COMMENT ON COLUMN @extschema@.pg_procmem_query_memory.last_seen IS 'when its last sample was taken';
COMMENT ON COLUMN @extschema@.pg_procmem_query_memory.query IS 'its text at its last sample';
COMMENT ON COLUMN @extschema@.pg_procmem_query_memory.max_dsm IS 'bytes: the most the dynamic shared memory segments only its processes mapped held at a sample (hash tables and sorts of a parallel query), each counted once';
COMMENT ON COLUMN @extschema@.pg_procmem_query_memory.max_held IS 'bytes: the most its processes'' overhead and those segments held together at a sample; the rows are ordered by it';

-- pg_procmem_connection_rate
COMMENT ON COLUMN @extschema@.pg_procmem_connection_rate.connections IS 'new client connections over the window';
COMMENT ON COLUMN @extschema@.pg_procmem_connection_rate.seconds IS 'seconds: the window, at most the last 5 minutes of this run';
COMMENT ON COLUMN @extschema@.pg_procmem_connection_rate.rate IS 'new client connections per second';

-- pg_procmem_advice_facts
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.mem_total IS 'bytes: meminfo MemTotal';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.mem_available IS 'bytes: meminfo MemAvailable';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.swap_total IS 'bytes: meminfo SwapTotal';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.committed_as IS 'bytes: meminfo Committed_AS';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.commit_limit IS 'bytes: meminfo CommitLimit';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.overcommit_memory IS 'vm.overcommit_memory';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.transparent_hugepage IS 'the THP mode';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.anon_hugepages IS 'bytes: meminfo AnonHugePages';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.cgroup_path IS 'the server''s memory cgroup';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.cgroup_usage IS 'bytes: its usage';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.cgroup_file IS 'bytes: its page cache, shmem included';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.cgroup_shmem IS 'bytes: its shared memory';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.cgroup_oom_events IS 'its OOM event counter';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.cgroup_oom_kills IS 'its OOM kill counter, over its life';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.cpus IS 'CPUs the server may use (its affinity mask)';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.cpu_cache_bytes IS 'bytes: the CPU''s last-level cache';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.cpu_cache_level IS 'that cache''s level';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.dirty_ratio IS 'percent: vm.dirty_ratio';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.dirty_background_ratio IS 'percent: vm.dirty_background_ratio';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.dirty_bytes IS 'bytes: vm.dirty_bytes (0: the ratio applies)';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.dirty_background_bytes IS 'bytes: vm.dirty_background_bytes (0: the ratio applies)';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.overcommit_ratio IS 'percent: vm.overcommit_ratio';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.transparent_hugepage_defrag IS 'the THP defrag mode';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.cgroup_tightest_limit IS 'bytes: the limit of the cgroup level with the smallest share of room';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.cgroup_tightest_room IS 'bytes: that level''s room, page cache and reclaimable slab not counted';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.huge_pages IS 'the huge_pages setting';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.huge_pages_in_use IS 'the main shared memory segment is in huge pages';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.page_tables IS 'bytes: every server process''s page tables now';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.page_tables_with_huge_pages IS 'bytes: what they would be with huge pages';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.shared_memory_size IS 'bytes: shared_memory_size (15+)';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.hugepages_total IS 'pages: huge pages reserved';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.hugepages_free IS 'pages: huge pages free';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.huge_pages_recommendation IS 'pg_procmem_hugepages.recommendation';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.max_connections IS 'the max_connections setting';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.work_mem IS 'bytes: the work_mem setting';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.hash_mem_multiplier IS 'the hash_mem_multiplier setting';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.maintenance_work_mem IS 'bytes: the maintenance_work_mem setting';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.autovacuum_work_mem IS 'bytes: autovacuum_work_mem, or maintenance_work_mem when it is -1';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.autovacuum_max_workers IS 'the autovacuum_max_workers setting';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.temp_buffers IS 'bytes: the temp_buffers setting';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.oom_kills_lately IS 'the cgroup''s OOM kills since oom_kills_since; NULL without the history';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.oom_kills_since IS 'the server''s start or last crash restart';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.available IS 'bytes: the smaller of mem_available and the cgroup''s room';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.memory_short IS 'MemAvailable under 10% of RAM, or a cgroup level''s room under 10% of its limit';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.dirty_limit IS 'bytes: the kernel''s dirty-page limit';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.dirty_background_limit IS 'bytes: the kernel''s dirty background threshold';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.clients IS 'how many client backends';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.idle IS 'how many of them are idle';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.idle_10min IS 'how many have been idle for over 10 minutes';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.idle_overhead IS 'bytes: the idle ones'' overhead';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.client_max_oom_score IS 'the highest oom_score of a client backend';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.swapping IS 'how many server processes have pages in swap';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.swap IS 'bytes: the server processes'' memory in swap';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.overhead IS 'bytes: the server processes'' overhead';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.jit_bytes IS 'bytes: their memory in the JIT libraries';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.jit_processes IS 'how many processes hold memory in the JIT libraries';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.jit IS 'the jit setting';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.jit_above_cost IS 'the jit_above_cost setting';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.postmaster_pid IS 'the postmaster''s pid';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.postmaster_oom_score IS 'the postmaster''s oom_score';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.postmaster_oom_score_adj IS 'the postmaster''s oom_score_adj';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.top_pid IS 'the server process with the highest oom_score';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.top_backend_type IS 'its backend type';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.top_own_type IS 'its type from /proc: set only for the postmaster and children without a PGPROC';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.top_oom_score IS 'its oom_score';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.aux_pid IS 'the process with a PGPROC, not a client backend or parallel worker, with the highest oom_score';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.aux_backend_type IS 'its backend type';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.aux_oom_score IS 'its oom_score';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.swap_pid IS 'the server process with the most memory in swap';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.swap_backend_type IS 'its backend type';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.swap_bytes IS 'bytes: its memory in swap';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.new_connections IS 'pg_procmem_connection_rate.connections';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.connection_seconds IS 'pg_procmem_connection_rate.seconds';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.connection_rate IS 'pg_procmem_connection_rate.rate: new client connections per second';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.sessions IS 'pg_stat_database''s sessions, summed';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.dsm_leftover IS 'bytes: the newest sample''s pg_procmem_history_system.dsm_leftover';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.dsm_leftover_segments IS 'the newest sample''s pg_procmem_history_system.dsm_leftover_segments';
COMMENT ON COLUMN @extschema@.pg_procmem_advice_facts.dsm_leftover_names IS 'the newest sample''s pg_procmem_history_system.dsm_leftover_names';

-- pg_procmem_advice
COMMENT ON COLUMN @extschema@.pg_procmem_advice.check_name IS 'the check that spoke up: a stable name';
COMMENT ON COLUMN @extschema@.pg_procmem_advice.severity IS 'info, warning or critical';
COMMENT ON COLUMN @extschema@.pg_procmem_advice.summary IS 'the finding in at most 64 characters';
COMMENT ON COLUMN @extschema@.pg_procmem_advice.evidence IS 'the figures and settings it measured, now';
COMMENT ON COLUMN @extschema@.pg_procmem_advice.recommendation IS 'what to do';
