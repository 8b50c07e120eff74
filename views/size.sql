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
