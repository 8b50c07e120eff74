/*
 * size.c
 *		pg_procmem_size: a byte count that prints short and sorts by value.
 *
 * Stored as an int8 (the comparison, hash, send and receive functions are
 * PostgreSQL's int8 ones, declared in views/size.sql); only the text forms
 * are here. Output: the short form, at most 7 characters for 0 to 8 EB - 1
 * (a sign more below 0), as pg_procmem_top printed its sizes: whole kB
 * below 1 MB, then in each of MB, GB, TB and PB one decimal below 10 and
 * whole units from 10, where it is exact; bytes where it is not. Rounded
 * half away from zero, as pg_size_pretty rounds (12,582,911 bytes: 12 MB,
 * not 11), and a figure that rounds up to 1024 of a unit is the next unit's
 * 1.0 ("1.0 GB", never "1024 MB"). Input: what pg_size_bytes takes without an exponent, on
 * every major: a number of bytes, or a number and a unit (bytes, B, kB, MB,
 * GB, TB, PB; any case, 1024-based), rounded to the nearest byte; so every
 * output reads back as the value printed.
 */
#include "server/compat.h"

#include <ctype.h>

PG_FUNCTION_INFO_V1(pg_procmem_size_in);
PG_FUNCTION_INFO_V1(pg_procmem_size_out);
PG_FUNCTION_INFO_V1(pg_procmem_size_rounded);

static const char *const units[] = {"bytes", "kB", "MB", "GB", "TB", "PB"};
#define N_UNITS lengthof(units)

/* The unit's index (its power of 1024), "B" too; -1 if none matches. */
static int
unit_index(const char *u, size_t len)
{
	if (len == 1 && pg_strncasecmp(u, "B", 1) == 0)
		return 0;
	for (int i = 0; i < (int) N_UNITS; i++)
		if (strlen(units[i]) == len && pg_strncasecmp(u, units[i], len) == 0)
			return i;
	return -1;
}

/*
 * whole + 0.frac (its n digits, most significant first), times 1024^power,
 * rounded half away from zero; false past PG_UINT64_MAX. frac is
 * overwritten: each product by 1024 is done digit by digit, exactly.
 */
static bool
scale(uint64 whole, char *frac, int n, int power, uint64 *result)
{
	uint64		extra = 0;		/* the whole part of the fraction's product */

	for (int p = 0; p < power; p++)
	{
		int			carry = 0;

		if (whole > PG_UINT64_MAX / 1024)
			return false;
		whole *= 1024;
		for (int i = n - 1; i >= 0; i--)
		{
			int			x = frac[i] * 1024 + carry;

			frac[i] = x % 10;
			carry = x / 10;
		}
		extra = extra * 1024 + carry;	/* < 1024^(p+1): cannot overflow */
	}
	if (n > 0 && frac[0] >= 5)
		extra++;
	if (whole > PG_UINT64_MAX - extra)
		return false;
	*result = whole + extra;
	return true;
}

Datum
pg_procmem_size_in(PG_FUNCTION_ARGS)
{
	char	   *str = PG_GETARG_CSTRING(0);
	const char *s = str;
	bool		negative = false;
	uint64		whole = 0,
				magnitude;
	char		frac[64];
	int			n_frac = 0,
				digits = 0,
				power = 0;

	while (isspace((unsigned char) *s))
		s++;
	if (*s == '-' || *s == '+')
		negative = (*s++ == '-');
	for (; isdigit((unsigned char) *s); s++, digits++)
	{
		if (whole > (PG_UINT64_MAX - 9) / 10)
			goto out_of_range;
		whole = whole * 10 + (*s - '0');
	}
	if (*s == '.')
		/* past 64 digits, the rest of a fraction is dropped */
		for (s++; isdigit((unsigned char) *s); s++, digits++)
			if (n_frac < (int) sizeof(frac))
				frac[n_frac++] = *s - '0';
	if (digits == 0)
		goto bad_syntax;
	while (isspace((unsigned char) *s))
		s++;
	if (*s != '\0')
	{
		const char *u = s;

		while (*s != '\0' && !isspace((unsigned char) *s))
			s++;
		power = unit_index(u, s - u);
		if (power < 0)
			goto bad_syntax;
		while (isspace((unsigned char) *s))
			s++;
		if (*s != '\0')
			goto bad_syntax;
	}
	if (!scale(whole, frac, n_frac, power, &magnitude))
		goto out_of_range;
	if (negative && magnitude <= (uint64) PG_INT64_MAX + 1)
		PG_RETURN_INT64(magnitude == 0 ? 0 : -(int64) (magnitude - 1) - 1);
	if (!negative && magnitude <= (uint64) PG_INT64_MAX)
		PG_RETURN_INT64((int64) magnitude);

out_of_range:
	ereturn(fcinfo->context, (Datum) 0,
			(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
			 errmsg("size \"%s\" is out of range for type pg_procmem_size", str),
			 errdetail("A size is a bigint of bytes: from -8192 PB to just under 8192 PB.")));

bad_syntax:
	ereturn(fcinfo->context, (Datum) 0,
			(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
			 errmsg("invalid input syntax for type pg_procmem_size: \"%s\"", str),
			 errhint("A size is a number of bytes, or a number and a unit: bytes, kB, MB, GB, TB or PB.")));
}

/*
 * The short form of v (at most 7 characters, a sign more below -511) into
 * buf; returns the value that text denotes, which input reads back: v
 * itself where the form is exact, else v rounded to what it shows.
 */
static int64
short_form(int64 v, char *buf, size_t len)
{
	/* the magnitude, PG_INT64_MIN's too */
	uint64		a = v < 0 ? (uint64) 0 - (uint64) v : (uint64) v;
	uint64		shown;

	/* no sign on "0 kB" */
	const char *sign = v < 0 && a >= 512 ? "-" : "";

	if ((a + 512) >> 10 < 1024)
	{
		snprintf(buf, len, "%s%llu kB", sign, (unsigned long long) ((a + 512) >> 10));
		shown = (a + 512) >> 10 << 10;
	}
	else
	{
		shown = a;
		for (int i = 2; i < (int) N_UNITS; i++)
		{
			uint64		u = UINT64CONST(1) << (10 * i);

			if (a < 10 * u)
			{
				/* tenths, rounded half up; a < 10 PB: no overflow */
				uint64		t = (a * 10 + u / 2) / u;

				snprintf(buf, len, "%s%llu.%llu %s", sign, (unsigned long long) (t / 10),
						 (unsigned long long) (t % 10), units[i]);
				/* as input rounds t tenths of u: half a byte up */
				shown = (t * u + 5) / 10;
				break;
			}
			/* whole units, rounded; 1024 of them are the next unit's 1.0 */
			if ((a + u / 2) / u < 1024 || i == (int) N_UNITS - 1)
			{
				uint64		n = (a + u / 2) / u;

				/* the largest bigints would round to 8192 PB, past the type: truncated */
				if (v >= 0 && n * u > (uint64) PG_INT64_MAX)
					n = a / u;
				snprintf(buf, len, "%s%llu %s", sign, (unsigned long long) n, units[i]);
				shown = n * u;
				break;
			}
		}
	}
	/* shown <= 2^63, and only for PG_INT64_MIN itself */
	return v < 0 ? (int64) ((uint64) 0 - shown) : (int64) shown;
}

/*
 * The short form where it is exact; any other value in bytes ("1500
 * bytes"), so that every size reads back as itself: pg_dump, COPY and a
 * view's constants go through this text. pg_procmem_top rounds its sizes
 * to the short form first (pg_procmem_size_rounded), so it never prints
 * more than 7 characters.
 */
Datum
pg_procmem_size_out(PG_FUNCTION_ARGS)
{
	int64		v = PG_GETARG_INT64(0);
	char		buf[32];

	if (short_form(v, buf, sizeof(buf)) != v)
		snprintf(buf, sizeof(buf), INT64_FORMAT " bytes", v);
	PG_RETURN_CSTRING(pstrdup(buf));
}

/* v rounded to the value its short form shows */
Datum
pg_procmem_size_rounded(PG_FUNCTION_ARGS)
{
	char		buf[32];

	PG_RETURN_INT64(short_form(PG_GETARG_INT64(0), buf, sizeof(buf)));
}
