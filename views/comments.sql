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
