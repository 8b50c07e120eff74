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
