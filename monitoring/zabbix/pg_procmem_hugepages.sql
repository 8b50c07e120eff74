-- Made by scripts/monitoring from monitoring/metrics.toml.
-- pg_procmem_hugepages: huge pages: the machine's pool, whether the server uses it, what page tables it would save
SELECT m.huge_pages,
       m.hugepages_configured,
       m.hugepages_free,
       m.hugepages_rsvd,
       m.in_use,
       m.page_tables_bytes,
       m.page_tables_with_huge_pages_bytes,
       m.huge_pages_needed
FROM (
SELECT huge_pages, hugepages_total, hugepages_total AS hugepages_configured, hugepages_free, hugepages_rsvd,
       in_use::pg_catalog.int4 AS in_use, page_tables AS page_tables_bytes,
       page_tables_with_huge_pages AS page_tables_with_huge_pages_bytes,
       COALESCE(shared_memory_size_in_huge_pages, vm_peak_huge_pages) AS huge_pages_needed
FROM public.pg_procmem_hugepages
) AS m
