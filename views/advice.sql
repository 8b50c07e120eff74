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
