/*
 * rows.h
 *		Building result rows from figures: a negative figure (not read, or no
 *		limit) is NULL, never 0. Shared by the SQL-callable functions.
 */
#ifndef PROCMEM_ROWS_H
#define PROCMEM_ROWS_H

#include "server/compat.h"

#include "access/htup_details.h"	/* heap_form_tuple: funcapi.h no longer brings it on 19 */
#include "mb/pg_wchar.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"

/* A bigint figure, NULL when negative. */
static inline void
put_int8(Datum *values, bool *nulls, int i, int64 v)
{
	values[i] = Int64GetDatum(v);
	nulls[i] = v < 0;
}

/* A fixed text field, NULL when empty; cut to what is valid in this database */
static inline void
put_field(Datum *values, bool *nulls, int i, const char *s, size_t sz)
{
	size_t		len = strnlen(s, sz);

	len = pg_encoding_verifymbstr(GetDatabaseEncoding(), s, len);
	nulls[i] = len == 0;
	values[i] = nulls[i] ? (Datum) 0 : PointerGetDatum(cstring_to_text_with_len(s, len));
}

/* A time, NULL when unknown (0) or not a timestamp (a file can hold anything) */
static inline void
put_time(Datum *values, bool *nulls, int i, int64 t)
{
	values[i] = TimestampTzGetDatum((TimestampTz) t);
	nulls[i] = t == 0 || !IS_VALID_TIMESTAMP(t);
}

/*
 * An integer figure, NULL when unread or out of range. Negative values can
 * be real (oom_score_adj = -1), so unreadability is said separately.
 */
static inline void
put_int4(Datum *values, bool *nulls, int i, int64 v, bool unread)
{
	nulls[i] = unread || v < PG_INT32_MIN || v > PG_INT32_MAX;
	values[i] = Int32GetDatum(nulls[i] ? 0 : (int32) v);
}

/* A text, NULL when missing or empty. */
static inline void
put_text(Datum *values, bool *nulls, int i, const char *s)
{
	nulls[i] = s == NULL || s[0] == '\0';
	values[i] = nulls[i] ? (Datum) 0 : CStringGetTextDatum(s);
}

/* A one-dimensional array of n elements of a built-in type (int4, int8, text). */
static inline Datum
build_array(Datum *elems, int n, Oid type)
{
	int16		len;
	bool		byval;
	char		align;

	get_typlenbyvalalign(type, &len, &byval, &align);
	return PointerGetDatum(construct_array(elems, n, type, len, byval, align));
}

/*
 * Versioned result shapes. The newest library serves the SQL definitions of
 * every released version of the extension, and a version only ever appends
 * columns: a C function fills all of its newest columns, and the tuple it
 * forms takes the first natts, as many as the definition it was called
 * through declares. shapes lists every column count a released definition
 * has; any other is an ERROR rather than a misread tuple. A function's counts
 * are named <FUNCTION>_NCOLS_V1_<minor>, after the version that declared them.
 */
static inline void
check_result_shape(TupleDesc tupdesc, const int *shapes, int nshapes)
{
	for (int i = 0; i < nshapes; i++)
		if (tupdesc->natts == shapes[i])
			return;
	ereport(ERROR,
			(errcode(ERRCODE_DATATYPE_MISMATCH),
			 errmsg("pg_procmem function called with %d result columns, which no version of pg_procmem declares",
					tupdesc->natts),
			 errhint("Run ALTER EXTENSION pg_procmem UPDATE, or install the library that matches the SQL objects.")));
}

/*
 * Starts a materialized set-returning function whose result has one of the
 * released shapes; returns where the rows go.
 */
static inline ReturnSetInfo *
start_result_set(FunctionCallInfo fcinfo, const int *shapes, int nshapes)
{
	ReturnSetInfo *rsinfo;

	procmem_init_srf(fcinfo);
	rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	check_result_shape(rsinfo->setDesc, shapes, nshapes);
	return rsinfo;
}

/* The one-row result of a function with OUT parameters, of a known shape. */
static inline Datum
one_row(FunctionCallInfo fcinfo, const int *shapes, int nshapes, Datum *values, bool *nulls)
{
	TupleDesc	tupdesc;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	check_result_shape(tupdesc, shapes, nshapes);
	return HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(tupdesc), values, nulls));
}

#endif							/* PROCMEM_ROWS_H */
