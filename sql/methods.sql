-- pg_procmem.overhead_method and pg_procmem.pagemap_ioctls: every path on
-- this kernel, each saying how its figure was obtained.
SELECT count(*) > 0 AS loaded FROM pg_procmem_process(pg_backend_pid());
SHOW pg_procmem.overhead_method;
SHOW pg_procmem.pagemap_ioctls;

CREATE TEMP VIEW methods AS
SELECT count(*) AS processes,
       count(*) FILTER (WHERE overhead IS NULL) AS no_overhead,
       array_agg(DISTINCT overhead_method) AS methods,
       bool_and(overhead = private_anon + page_tables + kernel) AS pagemap_sum,
       bool_and(overhead = rss_anon + page_tables) AS rss_anon_sum,
       count(*) FILTER (WHERE private_anon IS NULL) AS no_private_anon
FROM pg_procmem_processes();

-- auto: pagemap here
SELECT processes > 3 AS several, no_overhead, methods, pagemap_sum, no_private_anon FROM methods;
SET pg_procmem.overhead_method = 'pagemap';
SELECT no_overhead, methods, pagemap_sum, no_private_anon FROM methods;
-- rss_anon: pagemap is not read at all
SET pg_procmem.overhead_method = 'rss_anon';
SELECT no_overhead, methods, rss_anon_sum, processes = no_private_anon AS no_private_anon FROM methods;
-- rss_anon over-counts: it includes the pages every child still shares
-- copy-on-write with the postmaster, as the idle postmaster shows best
CREATE TEMP TABLE by_rss_anon AS
SELECT overhead FROM pg_procmem_processes() WHERE backend_type = 'postmaster';
RESET pg_procmem.overhead_method;
SELECT r.overhead > p.overhead AS rss_anon_over_counts
FROM by_rss_anon r, pg_procmem_processes() p WHERE p.backend_type = 'postmaster';

-- without the ioctls: maps text and every page; same method and columns
SET pg_procmem.pagemap_ioctls = off;
SELECT no_overhead, methods, pagemap_sum, no_private_anon FROM methods;
RESET pg_procmem.pagemap_ioctls;

-- a bad value is refused and changes nothing
SET pg_procmem.overhead_method = 'pss';
SHOW pg_procmem.overhead_method;
