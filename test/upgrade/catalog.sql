-- The extension's catalog rows that describe() in check.sh does not spell
-- out (it has each function's signature, volatility, strictness,
-- parallelism, source and ACL), one line each: what else a function is
-- (security definer, settings, leakproof, cost, support), a type's I/O and
-- storage, a view's options (security_barrier, security_invoker), an
-- operator's flags and estimators, a cast's context and method, the
-- operator classes' members and the initial privileges (pg_init_privs). An
-- update must leave them exactly as a fresh install.
WITH m AS (
	SELECT classid, objid FROM pg_catalog.pg_depend
	WHERE refclassid = 'pg_catalog.pg_extension'::pg_catalog.regclass AND deptype = 'e'
	  AND refobjid = (SELECT oid FROM pg_catalog.pg_extension WHERE extname = 'pg_procmem'))
SELECT 'proc ' || p.oid::pg_catalog.regprocedure::text || ' ' || row(l.lanname, p.procost, p.prorows,
	p.prosupport, p.prokind, p.prosecdef, p.proleakproof, p.proretset, p.probin, p.proconfig)::text
FROM m JOIN pg_catalog.pg_proc p ON m.classid = 'pg_catalog.pg_proc'::pg_catalog.regclass AND p.oid = m.objid
	JOIN pg_catalog.pg_language l ON l.oid = p.prolang
UNION ALL
SELECT 'type ' || t.typname || ' ' || row(t.typlen, t.typbyval, t.typtype, t.typcategory, t.typispreferred,
	t.typdelim, t.typinput, t.typoutput, t.typreceive, t.typsend, t.typmodin, t.typanalyze, t.typalign,
	t.typstorage, t.typnotnull, t.typcollation, t.typacl)::text
FROM m JOIN pg_catalog.pg_type t ON m.classid = 'pg_catalog.pg_type'::pg_catalog.regclass AND t.oid = m.objid
UNION ALL
SELECT 'operator ' || o.oid::pg_catalog.regoperator::text || ' ' || row(o.oprcanmerge, o.oprcanhash,
	o.oprcom::pg_catalog.regoperator, o.oprnegate::pg_catalog.regoperator, o.oprcode, o.oprrest, o.oprjoin)::text
FROM m JOIN pg_catalog.pg_operator o ON m.classid = 'pg_catalog.pg_operator'::pg_catalog.regclass AND o.oid = m.objid
UNION ALL
SELECT 'cast ' || c.castsource::pg_catalog.regtype || ' -> ' || c.casttarget::pg_catalog.regtype || ' '
	|| row(c.castfunc::pg_catalog.regprocedure, c.castcontext, c.castmethod)::text
FROM m JOIN pg_catalog.pg_cast c ON m.classid = 'pg_catalog.pg_cast'::pg_catalog.regclass AND c.oid = m.objid
UNION ALL
SELECT 'opclass ' || oc.opcname || ' ' || row(am.amname, f.opfname, oc.opcintype::pg_catalog.regtype,
	oc.opcdefault, oc.opckeytype)::text
FROM m JOIN pg_catalog.pg_opclass oc ON m.classid = 'pg_catalog.pg_opclass'::pg_catalog.regclass AND oc.oid = m.objid
	JOIN pg_catalog.pg_am am ON am.oid = oc.opcmethod JOIN pg_catalog.pg_opfamily f ON f.oid = oc.opcfamily
UNION ALL
SELECT 'amop ' || f.opfname || ' ' || row(a.amoplefttype::pg_catalog.regtype, a.amoprighttype::pg_catalog.regtype,
	a.amopstrategy, a.amoppurpose, a.amopopr::pg_catalog.regoperator, a.amopsortfamily)::text
FROM m JOIN pg_catalog.pg_opfamily f ON m.classid = 'pg_catalog.pg_opfamily'::pg_catalog.regclass AND f.oid = m.objid
	JOIN pg_catalog.pg_amop a ON a.amopfamily = f.oid
UNION ALL
SELECT 'amproc ' || f.opfname || ' ' || row(a.amproclefttype::pg_catalog.regtype,
	a.amprocrighttype::pg_catalog.regtype, a.amprocnum, a.amproc::pg_catalog.regprocedure)::text
FROM m JOIN pg_catalog.pg_opfamily f ON m.classid = 'pg_catalog.pg_opfamily'::pg_catalog.regclass AND f.oid = m.objid
	JOIN pg_catalog.pg_amproc a ON a.amprocfamily = f.oid
UNION ALL
SELECT 'relation ' || c.relname || ' ' || row(c.relkind, c.reloptions, c.relpersistence)::text
FROM m JOIN pg_catalog.pg_class c ON m.classid = 'pg_catalog.pg_class'::pg_catalog.regclass AND c.oid = m.objid
UNION ALL
SELECT 'initprivs ' || pg_catalog.pg_describe_object(i.classoid, i.objoid, i.objsubid) || ' '
	|| i.privtype::text || ' ' || i.initprivs::text
FROM pg_catalog.pg_init_privs i JOIN m ON m.classid = i.classoid AND m.objid = i.objoid
ORDER BY 1;
