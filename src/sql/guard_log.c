/*
 * guard_log.c
 *		pg_procmem_guard_log(), the guard's actions as rows: what the
 *		pg_procmem_guard_actions view shows, from the store's ring
 *		(guard_store.c).
 */
#include "server/compat.h"

#include "guard/guard.h"
#include "rules/pressure.h"
#include "server/rows.h"
#include "server/shmem.h"

PG_FUNCTION_INFO_V1(pg_procmem_guard_log);

#define GUARD_ACTIONS_NCOLS_V1_3 18
static const int guard_actions_shapes[] = {GUARD_ACTIONS_NCOLS_V1_3};

static const char *
what_name(int32 what)
{
	switch (what)
	{
		case GUARD_CANCEL:
			return "cancel";
		case GUARD_TERMINATE:
			return "terminate";
		case GUARD_WOULD_CANCEL:
			return "would cancel";
		case GUARD_WOULD_TERMINATE:
			return "would terminate";
	}
	return NULL;
}

/*
 * pg_procmem_guard_log(missing_ok) - the guard's actions, oldest first (the
 * last GUARD_ACTIONS_KEPT).
 */
Datum
pg_procmem_guard_log(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = start_result_set(fcinfo, guard_actions_shapes,
											 lengthof(guard_actions_shapes));
	history_guard_action *copy = palloc(sizeof(history_guard_action) * GUARD_ACTIONS_KEPT);
	int			n = guard_copy_actions(copy);

	if (n < 0)
	{
		if (PG_GETARG_BOOL(0))
			return (Datum) 0;
		procmem_shmem_missing();
	}
	for (int k = 0; k < n; k++)
	{
		const history_guard_action *a = &copy[k];
		Datum		values[GUARD_ACTIONS_NCOLS_V1_3];
		bool		nulls[GUARD_ACTIONS_NCOLS_V1_3];
		int			i = 0;

		memset(nulls, 0, sizeof(nulls));
		put_time(values, nulls, i++, a->at);
		put_int8(values, nulls, i++, a->number);
		values[i++] = Int32GetDatum(a->pid);
		put_text(values, nulls, i++, what_name(a->what));
		put_text(values, nulls, i++, a->why == GUARD_SERVER_LIMIT ? "server limit" : "backend limit");
		values[i++] = Int32GetDatum(a->processes);
		put_int8(values, nulls, i++, a->held);
		put_int8(values, nulls, i++, a->limit);
		put_int8(values, nulls, i++, a->used);
		values[i] = Int32GetDatum(a->threshold_pct);
		nulls[i++] = a->threshold_pct == 0;
		put_text(values, nulls, i++, a->why == GUARD_SERVER_LIMIT ? pressure_source_name(a->source) : NULL);
		put_int8(values, nulls, i++, a->given_back);
		put_time(values, nulls, i++, a->backend_start);
		put_time(values, nulls, i++, a->query_start);
		put_field(values, nulls, i++, a->usename, sizeof(a->usename));
		put_field(values, nulls, i++, a->datname, sizeof(a->datname));
		put_field(values, nulls, i++, a->application_name, sizeof(a->application_name));
		put_field(values, nulls, i++, a->query, sizeof(a->query));
		Assert(i == GUARD_ACTIONS_NCOLS_V1_3);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
	}
	return (Datum) 0;
}
