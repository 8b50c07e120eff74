/*
 * contexts_sql.c
 *		SQL-callable functions: the caller's own memory-context totals, and
 *		those every backend published (server/contexts.c).
 */
#include "server/compat.h"

#include "catalog/pg_type.h"
#include "utils/builtins.h"

#include "server/contexts.h"
#include "server/rows.h"
#include "server/shmem.h"

PG_FUNCTION_INFO_V1(pg_procmem_own_contexts);
PG_FUNCTION_INFO_V1(pg_procmem_backend_contexts);

/* Result columns, in every released shape (see rows.h) */
#define OWN_CONTEXTS_NCOLS_V1_0 3	/* 1.0.0 to 1.2.0 */
static const int own_contexts_shapes[] = {OWN_CONTEXTS_NCOLS_V1_0};
#define BACKEND_CONTEXTS_NCOLS_V1_0 15	/* 1.0.0 to 1.2.0 */
static const int backend_contexts_shapes[] = {BACKEND_CONTEXTS_NCOLS_V1_0};

/*
 * pg_procmem_own_contexts() - the caller's own totals, live, preloaded or
 * not: what pg_backend_memory_contexts sums to, without needing it (it is
 * superuser-only before PostgreSQL 15).
 */
Datum
pg_procmem_own_contexts(PG_FUNCTION_ARGS)
{
	Datum		values[OWN_CONTEXTS_NCOLS_V1_0];
	bool		nulls[OWN_CONTEXTS_NCOLS_V1_0] = {false, false, false};
	int64		total, freebytes;
	int32		count;
	context_entry top[TOP_CONTEXTS];

	procmem_contexts_measure(&total, &freebytes, &count, top);
	values[0] = Int64GetDatum(total);
	values[1] = Int64GetDatum(freebytes);
	values[2] = Int32GetDatum(count);
	PG_RETURN_DATUM(one_row(fcinfo, own_contexts_shapes, lengthof(own_contexts_shapes), values, nulls));
}

/* One of the arrays of the largest contexts: names (0), idents (1) or bytes (2). */
static Datum
top_array(const context_entry *top, int what)
{
	Datum		d[TOP_CONTEXTS];
	int			n = 0;

	for (int i = 0; i < TOP_CONTEXTS && top[i].bytes > 0; i++)
		d[n++] = what == 0 ? CStringGetTextDatum(top[i].name) :
			what == 1 ? CStringGetTextDatum(top[i].ident) : Int64GetDatum(top[i].bytes);
	return build_array(d, n, what == 2 ? INT8OID : TEXTOID);
}

/*
 * pg_procmem_backend_contexts(missing_ok) - the published totals of every
 * live process that has published. The caller publishes first, so its own
 * row is current. Without the shared memory: no rows if missing_ok, else
 * an ERROR saying how to get it.
 */
Datum
pg_procmem_backend_contexts(PG_FUNCTION_ARGS)
{
	bool		missing_ok = PG_GETARG_BOOL(0);
	ReturnSetInfo *rsinfo;

	int			nslots = procmem_contexts_slots();

	rsinfo = start_result_set(fcinfo, backend_contexts_shapes, lengthof(backend_contexts_shapes));
	if (nslots < 0)
	{
		if (!missing_ok)
			procmem_shmem_missing();
		return (Datum) 0;
	}
	procmem_contexts_publish();

	for (int i = 0; i < nslots; i++)
	{
		context_slot s;
		Datum		values[BACKEND_CONTEXTS_NCOLS_V1_0];
		bool		nulls[BACKEND_CONTEXTS_NCOLS_V1_0];
		int			c = 0;

		CHECK_FOR_INTERRUPTS();
		/* the live process at this slot's PGPROC, with this pid: nobody else's */
		if (!procmem_contexts_read(i, &s) || s.publications == 0)
			continue;

		memset(nulls, 0, sizeof(nulls));
		values[c++] = Int32GetDatum(s.pid);
		values[c++] = TimestampTzGetDatum(s.backend_start);
		values[c++] = TimestampTzGetDatum(s.published_at);
		values[c++] = Int32GetDatum(s.publications);
		values[c++] = Int64GetDatum(s.total_bytes);
		values[c++] = Int64GetDatum(s.free_bytes);
		values[c++] = Int64GetDatum(s.total_bytes - s.free_bytes);
		values[c++] = Int32GetDatum(s.contexts);
		values[c++] = Int64GetDatum(s.peak_bytes);
		values[c++] = TimestampTzGetDatum(s.peak_at);
		values[c++] = top_array(s.top, 0);
		/* statement text kept back: unknown, not empty */
		if (procmem_keep_statement_text)
			values[c++] = top_array(s.top, 1);
		else
			nulls[c++] = true;
		values[c++] = top_array(s.top, 2);
		values[c++] = top_array(s.peak_top, 0);
		values[c++] = top_array(s.peak_top, 2);
		Assert(c == BACKEND_CONTEXTS_NCOLS_V1_0);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
