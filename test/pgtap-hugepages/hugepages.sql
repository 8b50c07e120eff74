-- Run by scripts/test against a cluster started with huge_pages = on, after
-- reserving vm.nr_hugepages: the hugetlb figures and the advice.
BEGIN;
CREATE EXTENSION IF NOT EXISTS pgtap;
CREATE EXTENSION IF NOT EXISTS pg_procmem;
\ir ../pgtap-lib/helpers.sql
SELECT plan(11);

SELECT is(current_setting('huge_pages'), 'on', 'the cluster runs with huge_pages = on');
SELECT ok((SELECT in_use FROM pg_procmem_hugepages), 'the main segment is in huge pages');
SELECT is((SELECT hugepages_total FROM pg_procmem_system), pg_temp.meminfo('HugePages_Total'),
	'HugePages_Total agrees with /proc/meminfo');
SELECT ok((SELECT hugepages_total >= shared_memory_size_in_huge_pages FROM pg_procmem_hugepages),
	'reserved >= shared_memory_size_in_huge_pages');
SELECT alike((SELECT recommendation FROM pg_procmem_hugepages), 'huge pages are in use%',
	'the advice says they are in use');
SELECT ok((SELECT hugetlb > 0 FROM pg_procmem_process(pg_backend_pid())),
	'this backend maps hugetlb pages (HugetlbPages)');
SELECT ok((SELECT rss_shmem < main_segment_size FROM pg_procmem_process(pg_backend_pid()), pg_procmem_accounting),
	'hugetlb pages are not in RssShmem');
SELECT ok((SELECT main_segment_resident = main_segment_size FROM pg_procmem_accounting),
	'a hugetlb segment is accounted whole: its pages are reserved');
SELECT ok((SELECT page_tables_with_huge_pages = page_tables FROM pg_procmem_hugepages),
	'with huge pages in use, the estimate is the present');
-- the model behind the estimate, where it can be checked: with the segment
-- in huge pages, the tables it counts are all there is
SELECT is((SELECT count(*) FROM pg_procmem_page_tables()
		   WHERE pid <> pg_backend_pid()
			 AND abs(page_tables_with_huge_pages - page_tables) > 2 * 4096),
		  0::bigint,
	'pg_procmem_page_tables(): counted from the ranges in use, every process''s tables are its VmPTE (within 2 pages)');
SELECT is((SELECT count(*) FROM pg_procmem_advice WHERE check_name = 'huge_pages'), 0::bigint,
	'pg_procmem_advice: no huge_pages finding while they are in use');

SELECT * FROM finish();
ROLLBACK;
