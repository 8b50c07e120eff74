/*
 * guard_policy.c
 *		The memory guard's policy (guard_policy.h).
 */
#include "rules/guard_policy.h"

#include <stdlib.h>
#include <string.h>

/* a backend not seen at a look for this long is forgotten (it exited) */
#define GUARD_FORGET_MS		10000

int
guard_may_act_on(guard_kind kind)
{
	/* client backends and the parallel workers of one: never autovacuum, WAL senders, other workers */
	return kind == GUARD_KIND_CLIENT || kind == GUARD_KIND_PARALLEL;
}

static int64_t
total_of(const guard_group *g)
{
	return g->held + (g->dsm > 0 ? g->dsm : 0);
}

static int
group_cmp(const void *a, const void *b)
{
	const guard_group *x = a;
	const guard_group *y = b;

	if (total_of(x) != total_of(y))
		return total_of(x) > total_of(y) ? -1 : 1;
	return (x->leader > y->leader) - (x->leader < y->leader);
}

int
guard_group_candidates(const guard_candidate *c, int n, guard_group *out)
{
	int			ngroups = 0;

	/* leaders first: a group exists only where its leader may be acted on (a client backend) */
	for (int i = 0; i < n; i++)
	{
		if (c[i].leader != c[i].pid || c[i].kind == GUARD_KIND_PARALLEL || !guard_may_act_on(c[i].kind))
			continue;
		memset(&out[ngroups], 0, sizeof(guard_group));
		out[ngroups].leader = c[i].pid;
		out[ngroups].members = 1;
		out[ngroups].state = c[i].state;
		out[ngroups].held = c[i].held > 0 ? c[i].held : 0;
		out[ngroups].backend_start = c[i].backend_start;
		out[ngroups].statement = c[i].statement;
		out[ngroups].dsm = c[i].group_dsm > 0 ? c[i].group_dsm : 0;
		out[ngroups].baseline = -1;
		ngroups++;
	}
	for (int i = 0; i < n; i++)
	{
		if (c[i].leader == c[i].pid || !guard_may_act_on(c[i].kind))
			continue;
		for (int g = 0; g < ngroups; g++)
			if (out[g].leader == c[i].leader)
			{
				out[g].members++;
				if (c[i].held > 0)
					out[g].held += c[i].held;
				break;
			}
	}
	qsort(out, (size_t) ngroups, sizeof(guard_group), group_cmp);
	return ngroups;
}

int64_t
guard_statement_part(const guard_group *g)
{
	int64_t		own;

	if (g->state != GUARD_STATE_RUNNING)
		return 0;
	own = g->held - (g->baseline > 0 ? g->baseline : 0);
	return (own > 0 ? own : 0) + (g->dsm > 0 ? g->dsm : 0);
}

int64_t
guard_session_part(const guard_group *g)
{
	if (g->state == GUARD_STATE_RUNNING)
		return g->baseline > 0 ? (g->baseline < g->held ? g->baseline : g->held) : 0;
	return g->held;
}

/* --- what the worker remembers across looks ------------------------------ */

static guard_seen *
seen_of(guard_memory *m, int32_t pid, int64_t backend_start, int add)
{
	for (int i = 0; i < m->n; i++)
		if (m->seen[i].pid == pid)
		{
			if (m->seen[i].backend_start != backend_start)
			{
				/* the pid of a backend gone: another's now */
				memset(&m->seen[i], 0, sizeof(guard_seen));
				m->seen[i].pid = pid;
				m->seen[i].backend_start = backend_start;
				m->seen[i].baseline = -1;
				m->seen[i].statement = -1;
			}
			return &m->seen[i];
		}
	if (!add)
		return NULL;
	if (m->n == m->cap)
	{
		int			cap = m->cap ? m->cap * 2 : 64;
		guard_seen *s = realloc(m->seen, sizeof(guard_seen) * (size_t) cap);

		if (s == NULL)
			return NULL;
		m->seen = s;
		m->cap = cap;
	}
	memset(&m->seen[m->n], 0, sizeof(guard_seen));
	m->seen[m->n].pid = pid;
	m->seen[m->n].backend_start = backend_start;
	m->seen[m->n].baseline = -1;
	m->seen[m->n].statement = -1;
	return &m->seen[m->n++];
}

int
guard_memory_apply(guard_memory *m, guard_group *g, int n, int64_t now_ms)
{
	int			failed = 0;
	/* the look before was recent: a backend not seen then is new since */
	int			recent = m->last_look_ms != 0 && now_ms - m->last_look_ms <= GUARD_GROWTH_WINDOW_MS;

	for (int k = 0; k < n; k++)
	{
		guard_seen *s = seen_of(m, g[k].leader, g[k].backend_start, 1);
		int			new_since = s != NULL && s->seen_ms == 0 && recent;
		int64_t		total;

		/* its DSM not read at this look: as last read */
		if (g[k].dsm < 0)
			g[k].dsm = s != NULL ? s->dsm : 0;
		else if (s != NULL)
			s->dsm = g[k].dsm;
		total = total_of(&g[k]);

		g[k].grew = 0;
		g[k].growth_known = 0;
		if (s == NULL)
		{
			failed = 1;
			continue;
		}
		/* not seen for long (no look between two incidents): what was known is stale */
		if (s->seen_ms != 0 && now_ms - s->seen_ms > GUARD_FORGET_MS)
		{
			s->baseline = -1;
			s->statement = -1;
		}
		s->seen_ms = now_ms;
		if (g[k].state == GUARD_STATE_IDLE || g[k].state == GUARD_STATE_IDLE_IN_XACT)
		{
			/* between statements: all it holds is the session's */
			s->baseline = g[k].held;
			s->statement = -1;
		}
		else if (g[k].state == GUARD_STATE_RUNNING)
		{
			/*
			 * holding less than the baseline: the statement freed what the
			 * session held (a cursor closed); what it holds now is the most
			 * the session still can
			 */
			if (s->baseline > g[k].held)
				s->baseline = g[k].held;
			if (s->statement != g[k].statement)
			{
				/*
				 * A statement not seen before: it started from the session's
				 * baseline, when that is known; else from now
				 */
				s->statement = g[k].statement;
				s->ref_is_baseline = s->baseline >= 0 || new_since;
				s->ref_ms = s->mid_ms = now_ms;
				s->ref_total = s->mid_total = s->baseline >= 0 ? s->baseline : new_since ? 0 : total;
			}
			else if (now_ms - s->mid_ms >= GUARD_GROWTH_WINDOW_MS / 2)
			{
				/* the window slides by half of it: ref about a second back */
				s->ref_ms = s->mid_ms;
				s->ref_total = s->mid_total;
				s->ref_is_baseline = 0;
				s->mid_ms = now_ms;
				s->mid_total = total;
			}
			g[k].grew = total - s->ref_total;
			g[k].growth_known = s->ref_is_baseline || now_ms - s->ref_ms >= GUARD_GROWTH_MIN_MS;
		}
		g[k].baseline = s->baseline;
		g[k].cancels = s->cancels;
	}
	m->last_look_ms = now_ms;
	/* forget those gone */
	for (int i = 0; i < m->n;)
		if (now_ms - m->seen[i].seen_ms > GUARD_FORGET_MS)
			m->seen[i] = m->seen[--m->n];
		else
			i++;
	return failed ? -1 : 0;
}

void
guard_memory_note_cancel(guard_memory *m, int32_t pid, int64_t backend_start)
{
	guard_seen *s = seen_of(m, pid, backend_start, 0);

	if (s)
		s->cancels++;
}

void
guard_memory_set_baseline(guard_memory *m, int32_t pid, int64_t backend_start, int64_t held)
{
	guard_seen *s = seen_of(m, pid, backend_start, 0);

	if (s && held >= 0)
		s->baseline = held;
}

void
guard_memory_free(guard_memory *m)
{
	free(m->seen);
	memset(m, 0, sizeof(*m));
}

/* --- the decision ---------------------------------------------------------- */

int
guard_critical_pct(int threshold_pct)
{
	return threshold_pct + (100 - threshold_pct + 1) / 2;
}

/* bytes at pct of limit, in doubles: the product overflows */
static int64_t
share_of(int64_t limit, int pct)
{
	return (int64_t) ((double) limit * (double) pct / 100.0);
}

void
guard_decide(const guard_situation *s, const guard_group *g, int n, guard_decision *d)
{
	int64_t		threshold = share_of(s->limit, s->threshold_pct);
	int64_t		effective = s->used - (s->pending > 0 ? s->pending : 0);
	int			relieved = effective < threshold;
	int64_t		largest = 0;
	int64_t		best_gives = 0;
	int			best_growing = 0;

	memset(d, 0, sizeof(*d));
	d->group = d->largest_running = d->largest_session = -1;
	if (s->limit <= 0 || s->used < threshold)
	{
		d->verdict = GUARD_UNDER;
		return;
	}
	for (int k = 0; k < n; k++)
		if (total_of(&g[k]) > largest)
			largest = total_of(&g[k]);
	/* below the critical level, not a statement far smaller than the largest holder */
	d->worth = GUARD_MIN_HELD;
	if (!s->critical && largest / GUARD_SMALLER > d->worth)
		d->worth = largest / GUARD_SMALLER;

	for (int k = 0; k < n; k++)
	{
		int64_t		stmt = guard_statement_part(&g[k]);
		int64_t		sess = guard_session_part(&g[k]);
		int			running = g[k].state == GUARD_STATE_RUNNING;
		int			growing = g[k].growth_known && g[k].grew >= GUARD_GROWING_BYTES;
		int64_t		gives = 0;
		int			cancel = 0;

		if (running && (d->largest_running < 0 || stmt > guard_statement_part(&g[d->largest_running])))
			d->largest_running = k;
		if (sess >= GUARD_MIN_HELD && !g[k].ended)
		{
			d->sessions += sess;
			if (d->largest_session < 0 || sess > guard_session_part(&g[d->largest_session]))
				d->largest_session = k;
		}
		if (g[k].settling)
			continue;
		if (running && g[k].defied && !g[k].ended && stmt >= GUARD_MIN_HELD)
		{
			/* it caught its cancel and grew on: again, or at the critical level its end */
			gives = stmt;
			cancel = !s->critical;
			if (d->group < 0 || gives > best_gives)
			{
				d->group = k;
				best_gives = gives;
				best_growing = 1;
				d->verdict = cancel ? GUARD_DO_CANCEL : GUARD_DO_TERMINATE;
			}
			continue;
		}
		if (running && !g[k].canceled &&
			(stmt >= d->worth ||
			 (s->critical && growing && g[k].cancels == 0 && stmt >= GUARD_CRITICAL_FLOOR)))
		{
			/* innocent: not growing, and its cancel would leave the use over the threshold */
			int			innocent = !growing && effective - stmt >= threshold;

			/* a growth not known yet: innocent if not growing, until the next look tells */
			cancel = !innocent;
			if (innocent && !g[k].growth_known)
				d->growth_unknown = 1;
			/* with enough being given back, only a statement still growing */
			if (relieved && !growing)
				cancel = 0;
			if (cancel)
				gives = stmt;
		}
		/* a session: where allowed, and not one whose statement a cancel would stop */
		if (!cancel && s->terminate && !relieved && !g[k].ended && sess >= GUARD_MIN_HELD &&
			(!running || stmt < GUARD_MIN_HELD))
			gives = sess;
		/* the most given back; of two as large, a growing statement */
		if (gives > 0 && (d->group < 0 || gives > best_gives ||
						  (gives == best_gives && cancel && growing && !best_growing)))
		{
			d->group = k;
			best_gives = gives;
			best_growing = cancel && growing;
			d->verdict = cancel ? GUARD_DO_CANCEL : GUARD_DO_TERMINATE;
		}
	}
	if (d->group >= 0 && relieved && !s->critical)
	{
		d->group = -1;
		d->verdict = GUARD_WAIT;
	}
	else if (d->group < 0)
		d->verdict = relieved ? GUARD_WAIT : GUARD_NOTHING_WORTH;
}
