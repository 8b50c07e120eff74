/*
 * dsm_groups.c
 *		Whose DSM segments are whose (dsm_groups.h).
 */
#include "rules/dsm_groups.h"

#include <stdlib.h>
#include <string.h>

typedef struct group_sum
{
	int32_t		group;
	int32_t		known;			/* a member's mappings were read */
	int64_t		own;
} group_sum;

static int
by_group(const void *a, const void *b)
{
	int32_t		x = ((const group_sum *) a)->group;
	int32_t		y = ((const group_sum *) b)->group;

	return (x > y) - (x < y);
}

static group_sum *
find_group(group_sum *g, int n, int32_t group)
{
	group_sum	key = {group, 0, 0};

	return bsearch(&key, g, (size_t) n, sizeof(group_sum), by_group);
}

int64_t
dsm_mapped_bytes(const dsm_table *t, const dsm_mapped *m, int *segments)
{
	int64_t		bytes = 0;
	int			n = 0;

	for (int k = 0; k < m->n; k++)
	{
		int			s = dsm_table_find(t, m->id[k]);

		if (s >= 0)
		{
			bytes += t->seg[s].bytes;
			n++;
		}
	}
	if (segments)
		*segments = n;
	return m->n < 0 || m->more ? -1 : bytes;
}

int
dsm_groups_sum(const dsm_table *t, const dsm_member *m, int n, int64_t *mapped,
			   int64_t *group_own, dsm_totals *totals, uint8_t *in_use)
{
	int32_t    *owner = calloc((size_t) (t->n > 0 ? t->n : 1), sizeof(int32_t));
	uint8_t    *multi = calloc((size_t) (t->n > 0 ? t->n : 1), 1);
	group_sum  *g = malloc((size_t) (n > 0 ? n : 1) * sizeof(group_sum));
	int			ng = 0;

	if (owner == NULL || multi == NULL || g == NULL)
	{
		free(owner);
		free(multi);
		free(g);
		return -1;
	}
	memset(totals, 0, sizeof(*totals));
	for (int i = 0; i < n; i++)
	{
		const dsm_mapped *mp = m[i].mapped;

		g[ng].group = m[i].group;
		g[ng].known = mp->n >= 0;
		g[ng].own = 0;
		ng++;
		/* more than it could keep: its own figure unknown, what it kept still tells whose */
		mapped[i] = dsm_mapped_bytes(t, mp, NULL);
		for (int k = 0; k < mp->n; k++)
		{
			int			s = dsm_table_find(t, mp->id[k]);

			if (s < 0)
				continue;
			if (owner[s] == 0)
				owner[s] = m[i].group;
			else if (owner[s] != m[i].group)
				multi[s] = 1;
		}
	}
	/* one entry a group, known if any member's mappings were read */
	qsort(g, (size_t) ng, sizeof(group_sum), by_group);
	if (ng > 0)
	{
		int			w = 0;

		for (int i = 1; i < ng; i++)
		{
			if (g[i].group == g[w].group)
				g[w].known |= g[i].known;
			else
				g[++w] = g[i];
		}
		ng = w + 1;
	}
	for (int s = 0; s < t->n; s++)
	{
		int64_t		b = t->seg[s].bytes;

		if (in_use)
			in_use[s] = owner[s] != 0;
		if (owner[s] == 0)
		{
			totals->unmapped += b;
			totals->unmapped_segments++;
			continue;
		}
		totals->mapped += b;
		totals->segments++;
		if (multi[s])
		{
			totals->shared += b;
			totals->shared_segments++;
		}
		else
		{
			group_sum  *x = find_group(g, ng, owner[s]);

			if (x)
				x->own += b;
		}
	}
	for (int i = 0; i < n; i++)
	{
		group_sum  *x = find_group(g, ng, m[i].group);

		group_own[i] = x && x->known ? x->own : -1;
	}
	free(owner);
	free(multi);
	free(g);
	return 0;
}

static int
by_seen_id(const void *a, const void *b)
{
	uint64_t	x = ((const dsm_seen_segment *) a)->id;
	uint64_t	y = ((const dsm_seen_segment *) b)->id;

	return (x > y) - (x < y);
}

void
dsm_leftover_update(dsm_leftover *l, const dsm_table *t, const uint8_t *in_use,
					int64_t now_ms, int64_t after_ms, int64_t *bytes, int32_t *segments,
					uint64_t *ids, uint32_t *handles, int n)
{
	dsm_seen_segment *next;
	uint8_t    *left;
	int			nn = 0;

	*bytes = 0;
	*segments = 0;
	memset(ids, 0, sizeof(uint64_t) * n);
	memset(handles, 0, sizeof(uint32_t) * n);
	next = malloc((size_t) (t->n > 0 ? t->n : 1) * sizeof(dsm_seen_segment));
	left = calloc((size_t) (t->n > 0 ? t->n : 1), 1);
	if (next == NULL || left == NULL)
	{
		free(next);
		free(left);
		return;					/* keeps what it had: the next sample tries again */
	}
	/* the table is sorted by id, and so is what was seen */
	for (int s = 0; s < t->n; s++)
	{
		dsm_seen_segment key = {t->seg[s].id, 0, 0};
		dsm_seen_segment *was = l->n > 0 ?
			bsearch(&key, l->seen, (size_t) l->n, sizeof(*was), by_seen_id) : NULL;

		if (was && was->handle != t->seg[s].handle)
			was = NULL;			/* the inode is another file's now */
		if (in_use[s])
		{
			next[nn].id = t->seg[s].id;
			next[nn].handle = t->seg[s].handle;
			next[nn].last_mapped_ms = now_ms;
			nn++;
		}
		else if (was)
		{
			next[nn++] = *was;
			if (now_ms - was->last_mapped_ms >= after_ms)
			{
				*bytes += t->seg[s].bytes;
				(*segments)++;
				left[s] = 1;
			}
		}
	}
	free(l->seen);
	l->seen = next;
	l->n = nn;
	l->cap = t->n;
	(void) dsm_largest_in_use(t, left, ids, handles, n);
	free(left);
}

void
dsm_leftover_seed(dsm_leftover *l, const uint64_t *ids, const uint32_t *handles, int n,
				  int64_t now_ms)
{
	dsm_seen_segment *grown = realloc(l->seen, (size_t) (l->n + n + 1) * sizeof(dsm_seen_segment));

	if (grown == NULL)
		return;
	l->seen = grown;
	for (int i = 0; i < n; i++)
		if (ids[i] != 0)
		{
			l->seen[l->n].id = ids[i];
			l->seen[l->n].handle = handles[i];
			l->seen[l->n].last_mapped_ms = now_ms;
			l->n++;
		}
	l->cap = l->n;
	qsort(l->seen, (size_t) l->n, sizeof(dsm_seen_segment), by_seen_id);
}

int
dsm_largest_in_use(const dsm_table *t, const uint8_t *in_use, uint64_t *ids, uint32_t *handles,
				   int n)
{
	int			k = 0;

	memset(ids, 0, sizeof(uint64_t) * n);
	memset(handles, 0, sizeof(uint32_t) * n);
	/* insertion into the n largest so far: n is small */
	for (int s = 0; s < t->n; s++)
	{
		int			j;

		if (!in_use[s])
			continue;
		j = k < n ? k++ : n;
		while (j > 0 && t->seg[dsm_table_find(t, ids[j - 1])].bytes < t->seg[s].bytes)
		{
			if (j < n)
			{
				ids[j] = ids[j - 1];
				handles[j] = handles[j - 1];
			}
			j--;
		}
		if (j < n)
		{
			ids[j] = t->seg[s].id;
			handles[j] = t->seg[s].handle;
		}
	}
	return k;
}

void
dsm_leftover_recall(const dsm_leftover *l, dsm_table *t)
{
	for (int i = 0; i < l->n; i++)
		(void) dsm_table_recall(t, l->seen[i].id, l->seen[i].handle);
}

void
dsm_leftover_free(dsm_leftover *l)
{
	free(l->seen);
	memset(l, 0, sizeof(*l));
}

/* A segment a member maps, and the member's group */
typedef struct id_group
{
	uint64_t	id;
	int32_t		group;
} id_group;

static int
id_group_cmp(const void *a, const void *b)
{
	const id_group *x = a;
	const id_group *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return (x->group > y->group) - (x->group < y->group);
}

int
dsm_shared_ids(const dsm_member *m, int n, uint64_t *ids, int max)
{
	size_t		total = 0, k = 0;
	id_group   *pairs;
	int			found = 0;

	for (int i = 0; i < n; i++)
		if (m[i].mapped && m[i].mapped->n > 0)
			total += (size_t) m[i].mapped->n;
	if (total == 0)
		return 0;
	pairs = malloc(sizeof(id_group) * total);
	if (pairs == NULL)
		return -1;
	for (int i = 0; i < n; i++)
		for (int j = 0; m[i].mapped && j < m[i].mapped->n; j++)
		{
			pairs[k].id = m[i].mapped->id[j];
			pairs[k].group = m[i].group;
			k++;
		}
	qsort(pairs, total, sizeof(id_group), id_group_cmp);
	for (size_t i = 0; i < total && found < max;)
	{
		size_t		j = i + 1;
		int			shared = 0;

		for (; j < total && pairs[j].id == pairs[i].id; j++)
			if (pairs[j].group != pairs[i].group)
				shared = 1;
		if (shared)
			ids[found++] = pairs[i].id;
		i = j;
	}
	free(pairs);
	return found;
}
