-- Nothing for PUBLIC; pg_read_all_stats (and so pg_monitor) may read.
CREATE ROLE regress_procmem_nobody;
CREATE ROLE regress_procmem_stats IN ROLE pg_read_all_stats;
CREATE ROLE regress_procmem_monitor IN ROLE pg_monitor;

-- No grant to PUBLIC anywhere in the extension (a default ACL counted as
-- what it grants), but EXECUTE on the functions of the type pg_procmem_size:
-- they read nothing, and a role given sizes needs them to compare, group
-- or cast them.
SELECT s.object AS public_may, x.privilege_type
FROM (SELECT oid::regprocedure::text AS object, coalesce(proacl, pg_catalog.acldefault('f', proowner)) AS acl
      FROM pg_catalog.pg_proc WHERE proname LIKE 'pg\_procmem\_%'
      UNION ALL
      SELECT relname::text, coalesce(relacl, pg_catalog.acldefault('r', relowner))
      FROM pg_catalog.pg_class WHERE relname LIKE 'pg\_procmem\_%') s,
     LATERAL pg_catalog.aclexplode(s.acl) x
WHERE x.grantee = 0
ORDER BY 1;

-- ... so a role without pg_read_all_stats may use sizes it is given, and
-- still reads none.
CREATE TEMP TABLE given (s pg_procmem_size);
INSERT INTO given VALUES ('11 MB'), ('983 kB'), ('983 kB');
GRANT SELECT ON given TO regress_procmem_nobody;
SET ROLE regress_procmem_nobody;
SELECT string_agg(s::text, ', ' ORDER BY s) AS sizes, count(DISTINCT s) AS distinct_sizes,
       count(*) FILTER (WHERE s > '1 MB') AS over_1_mb, max(s::bigint)::pg_procmem_size AS largest
FROM given;
RESET ROLE;
DROP TABLE given;

SET ROLE regress_procmem_nobody;
SELECT count(*) FROM pg_procmem_backends;
SELECT count(*) FROM pg_procmem_processes();
SELECT count(*) FROM pg_procmem_process(pg_backend_pid());
RESET ROLE;

-- Every view and function of the extension, whatever later versions add:
-- denied without pg_read_all_stats, readable with it.
CREATE FUNCTION pg_temp.try_all(role name) RETURNS TABLE (object text, outcome text)
LANGUAGE plpgsql AS $$
DECLARE
	r record;
BEGIN
	FOR r IN
		SELECT c.oid::regclass::text AS obj, 'SELECT count(*) FROM ' || c.oid::regclass AS q
		FROM pg_class c JOIN pg_depend d ON d.objid = c.oid AND d.deptype = 'e'
		JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'pg_procmem'
		UNION ALL
		SELECT p.oid::regprocedure::text,
			   'SELECT count(*) FROM ' || p.proname || '(' ||
			   CASE WHEN p.proargtypes[0] = 'int4'::regtype THEN 'pg_backend_pid()'
					-- the advice's checks take a row of facts: none will do
					WHEN p.pronargs > p.pronargdefaults
					-- (a NULL for a STRICT scalar function is folded away
					-- before its privilege is checked: text and integer get
					-- values)
					THEN (SELECT string_agg(CASE a.t WHEN 'text'::regtype THEN '''x''' WHEN 'int4'::regtype THEN '1'
												 ELSE 'NULL::' || a.t::regtype::text END, ', ' ORDER BY a.o)
						  FROM unnest(p.proargtypes::oid[]) WITH ORDINALITY AS a(t, o)
						  WHERE a.o <= p.pronargs - p.pronargdefaults)
					ELSE '' END || ')'
		FROM pg_proc p JOIN pg_depend d ON d.objid = p.oid AND d.deptype = 'e'
		JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'pg_procmem'
		-- (but the type pg_procmem_size's, PUBLIC's: above)
		WHERE p.proname NOT LIKE 'pg\_procmem\_size%'
		ORDER BY 1
	LOOP
		object := r.obj;
		BEGIN
			EXECUTE format('SET LOCAL ROLE %I', role);
			EXECUTE r.q;
			outcome := 'allowed';
		EXCEPTION WHEN insufficient_privilege THEN
			outcome := 'denied';
		END;
		RESET ROLE;
		RETURN NEXT;
	END LOOP;
END $$;
SELECT * FROM pg_temp.try_all('regress_procmem_nobody');
SELECT outcome, count(*) FROM pg_temp.try_all('regress_procmem_stats') GROUP BY 1;
SELECT outcome, count(*) FROM pg_temp.try_all('regress_procmem_monitor') GROUP BY 1;

SET ROLE regress_procmem_stats;
SELECT count(*) > 1 AS sees_processes FROM pg_procmem_backends;
SELECT count(*) = 1 AS sees_self FROM pg_procmem_process(pg_backend_pid());
SELECT context_bytes > 0 AS own_contexts FROM pg_procmem_backends WHERE pid = pg_backend_pid();
RESET ROLE;

SET ROLE regress_procmem_monitor;
SELECT count(*) > 1 AS sees_processes FROM pg_procmem_backends;
RESET ROLE;

DROP ROLE regress_procmem_nobody;
DROP ROLE regress_procmem_stats;
DROP ROLE regress_procmem_monitor;
