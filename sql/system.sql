-- The system views: one query per operator question. Figures vary by
-- machine, so these are the relations that must hold on any.

-- pg_procmem_system: one row, NULL rather than 0 or a huge number
SELECT count(*) AS rows,
       bool_and(mem_total > 0) AS mem_total,
       bool_and(mem_available BETWEEN 0 AND mem_total) AS mem_available,
       bool_and(mem_used = mem_total - mem_available) AS mem_used,
       bool_and(hugepage_size > 0 AND hugepages_free <= hugepages_total) AS hugepages,
       bool_and(overcommit_memory IN (0, 1, 2)) AS overcommit,
       bool_and(transparent_hugepage IS NULL OR transparent_hugepage IN ('always', 'madvise', 'never')) AS thp,
       bool_and(kernel_version_num >= 40000) AS kernel,
       bool_and(cgroup_version IS NULL OR cgroup_version IN (1, 2)) AS cgroup_version,
       bool_and(cgroup_limit IS NULL OR cgroup_limit BETWEEN 1 AND 4611686018427387904) AS limit_is_null_or_real,
       bool_and(cgroup_effective_limit IS NULL OR cgroup_effective_limit <= coalesce(cgroup_limit, cgroup_effective_limit)) AS effective_le_own
FROM pg_procmem_system;

-- pg_procmem_summary: every grouping, each adding up to all processes
SELECT grouped_by, sum(processes) = (SELECT count(*) FROM pg_procmem_processes()) AS all_processes,
       bool_and(total_rss >= total_overhead) AS rss_ge_overhead
FROM pg_procmem_summary GROUP BY grouped_by ORDER BY grouped_by;
SELECT processes = 1 AS one_postmaster
FROM pg_procmem_summary WHERE grouped_by = 'backend_type' AND name = 'postmaster';

-- pg_procmem_accounting: the parts and the whole
SELECT processes > 3 AS processes, processes_overhead > 0 AS overhead,
       cow_shared_with_postmaster > 0 AS cow_shared,
       main_segment_resident BETWEEN 1 AND main_segment_size AS main_segment,
       main_segment_size >= pg_size_bytes(current_setting('shared_buffers')) AS holds_shared_buffers,
       dsm_segments >= 1 AS dsm_control_segment,
       accounted >= processes_overhead + cow_shared_with_postmaster + main_segment_resident AS adds_up,
       cgroup_unexplained IS NOT DISTINCT FROM
           cgroup_usage - cgroup_page_cache - (accounted - CASE WHEN main_segment_hugetlb THEN main_segment_resident ELSE 0 END)
           AS remainder_shown,
       processes_kernel BETWEEN 0 AND processes_overhead AS processes_kernel_in_overhead,
       cgroup_kernel_other IS NOT DISTINCT FROM cgroup_kernel - processes_kernel AS kernel_other,
       unexplained IS NOT DISTINCT FROM cgroup_unexplained - cgroup_kernel_other AS kernel_explained
FROM pg_procmem_accounting;

-- pg_procmem_hugepages: the settings it reports, and advice that matches them
SELECT huge_pages = current_setting('huge_pages') AS huge_pages,
       shared_memory_size_in_huge_pages IS NOT DISTINCT FROM
           NULLIF(current_setting('shared_memory_size_in_huge_pages', true)::bigint, -1) AS in_huge_pages,
       vm_peak_huge_pages * hugepage_size >= postmaster_vm_peak AS vm_peak_recipe,
       page_tables_with_huge_pages <= page_tables AS estimate_le_now,
       recommendation IS NOT NULL AS advice,
       in_use OR recommendation LIKE '%vm.nr_hugepages >= ' ||
           coalesce(shared_memory_size_in_huge_pages, vm_peak_huge_pages) || ' %' AS advice_names_the_count
FROM pg_procmem_hugepages;

-- pg_procmem_oom: a ranking of every process, and what killing each does
SELECT count(*) = (SELECT count(*) FROM pg_procmem_processes()) AS every_process,
       min(rank) = 1 AS ranked,
       bool_and(protected = (oom_score_adj = -1000)) AS protected,
       count(*) FILTER (WHERE if_killed = 'server stays down') AS postmaster_rows,
       bool_and(if_killed IS NOT NULL) AS consequences
FROM pg_procmem_oom;

-- pg_procmem_headroom: derived figures shown beside their inputs
SELECT available <= mem_available AS available_le_mem_available,
       cgroup_room IS NULL OR cgroup_effective_limit IS NOT NULL AS room_only_with_a_limit,
       cgroup_room IS NULL OR cgroup_room <= cgroup_effective_limit AS room_le_limit,
       more_idle_connections_fit = GREATEST(div(available, per_connection), 0)
         AND per_connection = COALESCE(avg_idle_overhead, per_connection) AND per_connection_from IS NOT NULL AS fit,
       connection_slots_left <= max_connections AS slots,
       work_mem_exposure = (max_connections * work_mem * hash_mem_multiplier)::bigint AS work_mem_exposure,
       autovacuum_exposure = autovacuum_max_workers * autovacuum_work_mem AS autovacuum_exposure
FROM pg_procmem_headroom;
SET work_mem = '64MB';
SET hash_mem_multiplier = 4;
SELECT work_mem = 64 * 1024 * 1024 AS work_mem,
       work_mem_exposure = max_connections::bigint * 64 * 1024 * 1024 * 4 AS follows_settings
FROM pg_procmem_headroom;
RESET work_mem;
RESET hash_mem_multiplier;
