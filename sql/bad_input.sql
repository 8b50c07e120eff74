-- One rule: not a process of this server -> ERROR naming the pid;
-- NULL -> no row; a live process of ours -> one row.
SELECT count(*) FROM pg_procmem_process(NULL);
SELECT * FROM pg_procmem_process(-1);
SELECT * FROM pg_procmem_process(0);
SELECT * FROM pg_procmem_process(1);			-- init: alive, not ours
SELECT * FROM pg_procmem_process(2147483647);	-- above any pid_max
SELECT count(*) FROM pg_procmem_process(pg_backend_pid());

-- The postmaster, found independently in postmaster.pid.
SELECT backend_type, overhead > 0 AS has_overhead
FROM pg_procmem_process(split_part(pg_read_file('postmaster.pid'), E'\n', 1)::integer);

-- Errors change nothing: the session still works.
SELECT count(*) > 0 AS still_fine FROM pg_procmem_processes();
