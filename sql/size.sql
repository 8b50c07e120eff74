-- pg_procmem_size: prints in at most 7 characters as pg_procmem_top always
-- did where that is exact, else in bytes; reads its own output back as the
-- same value, and pg_size_bytes' forms; sorts by value.

-- Printing, at every boundary: pg_procmem_size_rounded() rounds to the
-- short form (whole kB below 1 MB, one decimal below 10 of a unit, whole
-- units from 10; half away from zero, as pg_size_pretty rounds, 1024 of a
-- unit being the next one's 1.0; only the largest bigints, which would
-- round past the type, are cut to 8191 PB), which the size then prints; a
-- size the short form would round prints in bytes.
SELECT b AS bytes, b::pg_procmem_size AS size, pg_procmem_size_rounded(b) AS rounded,
       length(pg_procmem_size_rounded(b)::text) AS width
FROM unnest(ARRAY[0, 1, 511, 512, 1023, 1024, 1048063, 1048064, 1048575, 1048576, 1101004, 1101005,
                  10485759, 10485760, 12582911, 1073217535, 1073217536, 1073741823,
                  1073741824, 10737418239, 10737418240, 1099511627775, 1099511627776, 10995116277760,
                  1125899906842623, 1125899906842624, 11258999068426240, 9223372036854775807,
                  -1, -511, -512, -1023, -1024, -1048576, -10485760, -9223372036854775808, NULL]::bigint[])
     WITH ORDINALITY AS v(b, i)
ORDER BY i;

-- From 10 of a unit on, it says what pg_size_pretty says (12582911 bytes:
-- 12 MB; truncated, it said 11 MB), on every major.
SELECT b AS bytes, pg_procmem_size_rounded(b) AS rounded, pg_size_pretty(b) AS pretty,
       pg_procmem_size_rounded(b)::text = pg_size_pretty(b) AS same
FROM unnest(ARRAY[10485759, 12582911, 12058624, 12058623, 15728639, 1072693248, 10737418239,
                  16106127359]::bigint[]) WITH ORDINALITY AS v(b, i)
ORDER BY i;

-- Rounded, at most 7 characters from 0 to the largest bigint: every power
-- of two, one less, and one less than 10 of each unit.
SELECT max(length(pg_procmem_size_rounded(b)::text)) AS widest, count(*) AS values_tried
FROM (SELECT (2::numeric ^ k)::bigint - d AS b FROM generate_series(0, 62) k, generate_series(0, 1) d
      UNION ALL SELECT 9223372036854775807
      UNION ALL SELECT 10 * (1024::numeric ^ k)::bigint - 1 FROM generate_series(1, 5) k) s;

-- NULL stays NULL.
SELECT NULL::pg_procmem_size IS NULL AS null_size, NULL::bigint::pg_procmem_size IS NULL AS null_cast,
       (NULL::pg_procmem_size)::bigint IS NULL AS null_back;

-- Input: a number of bytes, or a number and a unit as pg_size_bytes takes
-- them (any case, spaces or none, a fraction rounded to the byte).
SELECT t AS input, t::pg_procmem_size::bigint AS bytes, t::pg_procmem_size AS size
FROM unnest(ARRAY['0', '1048576', '-1048576', '+17', '983 kB', '11 MB', '9.9 MB', '1.0 GB', '8191 PB',
                  '1 PB', '1 B', '1 bytes', '1kb', '1 Mb', ' 12  GB ', '.5 kB', '5.', '1.5', '0.5 bytes', '-0.5',
                  '9223372036854775807', '-9223372036854775808', '-8192 PB',
                  '0.0000000000000000000000000000000000000000000000000000000000000000001 PB'])
     WITH ORDINALITY AS v(t, i)
ORDER BY i;

-- Every size reads back as itself (what pg_dump, COPY and a view's
-- constants rely on); a rounded one prints short, reads back as itself,
-- rounds to itself, and is within the precision printed of the bytes (half
-- a tenth of the unit, or a whole unit).
SELECT count(*) AS values_tried,
       count(*) FILTER (WHERE b::pg_procmem_size::text::pg_procmem_size::bigint <> b) AS not_read_back,
       count(*) FILTER (WHERE s::text::pg_procmem_size <> s OR pg_procmem_size_rounded(s) <> s
                              OR length(ltrim(s::text, '-')) > 7) AS rounded_not_short_or_back,
       count(*) FILTER (WHERE abs(s::text::pg_procmem_size::bigint::numeric - b) >
                              CASE WHEN s::text ~ '\.' THEN 0.05 ELSE 1 END
                              * 1024::numeric ^ CASE split_part(s::text, ' ', 2)
                                WHEN 'kB' THEN 1 WHEN 'MB' THEN 2 WHEN 'GB' THEN 3 WHEN 'TB' THEN 4 ELSE 5 END)
           AS read_back_too_far
FROM (SELECT b, pg_procmem_size_rounded(b) AS s
      FROM (SELECT (2::numeric ^ k)::bigint - d AS b FROM generate_series(0, 62) k, generate_series(0, 1) d
            UNION ALL SELECT (1.37 * 3::numeric ^ k)::bigint FROM generate_series(0, 39) k
            UNION ALL SELECT -(1.37 * 3::numeric ^ k)::bigint FROM generate_series(0, 39) k
            UNION ALL SELECT -9223372036854775808 UNION ALL SELECT 9223372036854775807) x) y;

-- Bad input names the text; out of range says so.
SELECT ''::pg_procmem_size;
SELECT '   '::pg_procmem_size;
SELECT 'abc'::pg_procmem_size;
SELECT '1 XB'::pg_procmem_size;
SELECT '1 EB'::pg_procmem_size;
SELECT '1 k B'::pg_procmem_size;
SELECT '1 MB x'::pg_procmem_size;
SELECT '1e3'::pg_procmem_size;
SELECT '--1'::pg_procmem_size;
SELECT '-'::pg_procmem_size;
SELECT '.'::pg_procmem_size;
SELECT '1,5 MB'::pg_procmem_size;
SELECT 'MB'::pg_procmem_size;
SELECT '9223372036854775808'::pg_procmem_size;
SELECT '-9223372036854775809'::pg_procmem_size;
SELECT '8192 PB'::pg_procmem_size;
SELECT '99999999999999999999999999 bytes'::pg_procmem_size;
-- ... and soft errors, where PostgreSQL has them (16+): pg_input_is_valid
-- answers instead of failing
DO $$
BEGIN
	IF current_setting('server_version_num')::integer >= 160000 THEN
		IF (SELECT pg_input_is_valid('1 XB', 'pg_procmem_size') OR pg_input_is_valid('8192 PB', 'pg_procmem_size')
				   OR NOT pg_input_is_valid('8191 PB', 'pg_procmem_size')) THEN
			RAISE EXCEPTION 'pg_input_is_valid is wrong';
		END IF;
	END IF;
END $$;

-- Sorted by value, not as text ('983 kB' > '11 MB' as text); max through
-- bigint; DISTINCT and GROUP BY, sorted and hashed, see equal sizes as one.
CREATE TEMP TABLE sizes (name text, s pg_procmem_size);
INSERT INTO sizes VALUES ('backend', '11 MB'), ('checkpointer', '983 kB'), ('walwriter', 1006592::bigint),
	('small', '12'), ('big', '1.5 GB'), ('none', NULL), ('negative', '-2 MB');
SELECT name, s FROM sizes ORDER BY s DESC NULLS LAST, name;
SELECT string_agg(s::text, ', ' ORDER BY s) AS ascending FROM sizes;
SELECT max(s::bigint)::pg_procmem_size AS largest, min(s::bigint)::pg_procmem_size AS smallest,
       sum(s::bigint)::pg_procmem_size AS total FROM sizes;
-- bigint's aggregates take a size as it is (an implicit cast): bytes
SELECT max(s) AS largest, min(s) AS smallest, sum(s) AS total, pg_size_pretty(max(s)) AS pretty FROM sizes;
SELECT greatest('983 kB'::pg_procmem_size, '11 MB') AS greatest, least('983 kB'::pg_procmem_size, '11 MB') AS least;
SET enable_hashagg = off;
SELECT s, count(*) FROM sizes GROUP BY s ORDER BY s;
SELECT count(DISTINCT s) AS distinct_sorted FROM sizes;
RESET enable_hashagg;
SET enable_sort = off;
SELECT s, count(*) FROM sizes GROUP BY s ORDER BY s::bigint;
RESET enable_sort;
-- the operators, each against its negation
SELECT a, b, a = b AS eq, a <> b AS ne, a < b AS lt, a <= b AS le, a > b AS gt, a >= b AS ge
FROM (VALUES ('983 kB'::pg_procmem_size, '11 MB'::pg_procmem_size), ('11 MB', '983 kB'),
             ('1006592', '983 kB'), ('-1 kB', '0')) AS v(a, b);
-- a btree index, and a hash join
CREATE INDEX ON sizes (s);
SET enable_seqscan = off;
SELECT name FROM sizes WHERE s >= '1 MB' ORDER BY s;
RESET enable_seqscan;
SET enable_mergejoin = off;
SET enable_nestloop = off;
SELECT a.name, b.name FROM sizes a JOIN sizes b ON a.s = b.s AND a.name < b.name;
RESET enable_mergejoin;
RESET enable_nestloop;

-- Casts: to and from bigint without a change, from integer and numeric;
-- to bigint implicit, so a size compares with a number as bytes and a
-- size literal stays a size; nothing becomes a size unasked.
SELECT (-9223372036854775808)::bigint::pg_procmem_size::bigint = -9223372036854775808 AS smallest_back,
       9223372036854775807::bigint::pg_procmem_size::bigint = 9223372036854775807 AS largest_back,
       (512 * 1024)::pg_procmem_size AS from_integer, 1536.4::pg_procmem_size::bigint AS from_numeric,
       '11 MB'::pg_procmem_size::text AS to_text;
SELECT 9223372036854775808::pg_procmem_size;
SELECT '11 MB'::pg_procmem_size > 1048576;
SELECT '11 MB'::pg_procmem_size = 11534336::bigint;
SELECT '11 MB'::pg_procmem_size + 1;
SELECT '11 MB'::pg_procmem_size > '1 MB' AS with_a_size, '11 MB'::pg_procmem_size::bigint > 1048576 AS with_a_cast;
-- terse: 19 words the hint that follows otherwise
\set VERBOSITY terse
SELECT pg_procmem_size_out(1048576::bigint);
\set VERBOSITY default
-- a view keeps its constants exactly: a size's text is the size
CREATE TEMP VIEW over_1500 AS SELECT 1 AS one WHERE '1500'::pg_procmem_size > '1 kB';
SELECT pg_get_viewdef('over_1500') LIKE '%''1500 bytes''::pg_procmem_size%' AS kept_exactly;
DROP VIEW over_1500;
-- assignment both ways
CREATE TEMP TABLE counts (b bigint, s pg_procmem_size);
INSERT INTO counts SELECT s, 1048576 FROM sizes WHERE name = 'backend';
INSERT INTO counts SELECT s::bigint, 7::bigint FROM sizes WHERE name = 'small';
SELECT * FROM counts ORDER BY b;
DROP TABLE counts, sizes;

-- pg_procmem_top's sizes are of the type, and sort by value.
SELECT attname, pg_catalog.format_type(atttypid, atttypmod) AS type
FROM pg_catalog.pg_attribute
WHERE attrelid = 'pg_procmem_top'::regclass AND attnum > 0
ORDER BY attnum;
SELECT count(*) AS misordered
FROM (SELECT overhead::bigint AS b, lead(overhead::bigint) OVER (ORDER BY overhead DESC, pid) AS next
      FROM pg_procmem_top) t
WHERE next > b;
