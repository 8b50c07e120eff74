/*
 * titles.c
 *		The backend type a PostgreSQL process's title names (no PostgreSQL
 *		headers): for a child of the postmaster that has no PGPROC, yet or
 *		any more, its title is all there is to go by.
 */
#include "linux/titles.h"

#include <stdio.h>
#include <string.h>

/*
 * Backend types whose title starts with their name (PostgreSQL 14-19): the
 * auxiliary processes, and the built-in background workers' bgw_name ("parallel
 * worker for PID 123") and pg_procmem's own. Activity may follow ("startup
 * recovering ...").
 */
static const char *const title_types[] = {
	"archiver", "autovacuum launcher", "autovacuum worker", "background writer",
	"checkpointer", "io worker", "logger", "logical replication apply worker",
	"logical replication launcher", "logical replication parallel worker",
	"logical replication sequencesync worker", "logical replication tablesync worker",
	"logical replication worker", "parallel worker", "pg_procmem guard",
	"pg_procmem sampler", "REPACK decoding worker", "slotsync worker", "startup",
	"stats collector", "walreceiver", "walsender", "walsummarizer", "walwriter",
};

/*
 * Titles that name a type otherwise. 19 titles the logger "syslogger" (its
 * process type's name): it stays "logger", as on 14-18 and in the history.
 * A parallel apply worker's bgw_name says "apply", its bgw_type (what
 * pg_stat_activity shows) does not.
 */
static const char *const title_aliases[][2] = {
	{"syslogger", "logger"},
	{"logical replication parallel apply worker", "logical replication parallel worker"},
};

/*
 * Titles whose fixed words are followed by text a user chose: a
 * walsender's, a connection's words; a REPACK worker's, its table's name.
 * Either may look like a client's address, so these come first.
 */
static const char *const user_text_titles[][2] = {
	{"walsender ", "walsender"},
	{"REPACK decoding worker for relation \"", "REPACK decoding worker"},
};

/* Does title t start with the word(s) name? */
static int
title_starts(const char *t, const char *name)
{
	size_t		n = strlen(name);

	return strncmp(t, name, n) == 0 && (t[n] == '\0' || t[n] == ' ');
}

/* "[local]" or "host(port)": the client's address in a connection's title */
static int
is_client_address(const char *tok, size_t len)
{
	const char *open;
	size_t		digits = 0;

	if (len == 7 && memcmp(tok, "[local]", 7) == 0)
		return 1;
	if (len < 4 || tok[len - 1] != ')')
		return 0;
	open = memchr(tok, '(', len);
	if (open == NULL || open == tok)
		return 0;
	for (const char *c = open + 1; c < tok + len - 1; c++, digits++)
		if (*c < '0' || *c > '9')
			return 0;
	return digits > 0;
}

/*
 * A connection's title is "user database address activity"; a child that
 * has left its PGPROC while exiting still shows it, and user and database
 * names don't belong in a backend type. Names may hold spaces, so the
 * address is looked for from the third word on.
 */
static int
is_connection_title(const char *t)
{
	int			word = 0;

	while (*t)
	{
		size_t		len = strcspn(t, " ");

		if (len > 0 && word++ >= 2 && is_client_address(t, len))
			return 1;
		t += len;
		t += strspn(t, " ");
	}
	return 0;
}

/*
 * Only ever a fixed string: a known type's name, "client backend", or
 * TITLES_UNKNOWN_CHILD. Never the title's own text: a title cut short (a
 * postmaster started with a short command line and no environment, a long
 * cluster_name) loses its address word, and what is left is a user's and a
 * database's name.
 */
static const char *
title_backend_type(const char *t, int cut)
{
	for (size_t i = 0; i < sizeof(user_text_titles) / sizeof(user_text_titles[0]); i++)
		if (strncmp(t, user_text_titles[i][0], strlen(user_text_titles[i][0])) == 0)
			return user_text_titles[i][1];
	if (is_connection_title(t))
		return "client backend";
	/*
	 * Past the bytes read, a connection's address may be lost (a client's
	 * long host name, with log_hostname): its first word, the user's name,
	 * is no type's. Every other title is short.
	 */
	if (cut)
		return TITLES_UNKNOWN_CHILD;
	for (size_t i = 0; i < sizeof(title_types) / sizeof(title_types[0]); i++)
		if (title_starts(t, title_types[i]))
			return title_types[i];
	for (size_t i = 0; i < sizeof(title_aliases) / sizeof(title_aliases[0]); i++)
		if (title_starts(t, title_aliases[i][0]))
			return title_aliases[i][1];
	return TITLES_UNKNOWN_CHILD;
}

/* The workers one name covers before 17 (TITLES_ONE_LR_WORKER) */
static const char *const lr_workers[] = {
	"logical replication apply worker", "logical replication tablesync worker",
};

void
titles_to_type(const char *cmdline, size_t len, const char *cluster_name,
			   unsigned flags, char *out, size_t outsz)
{
	const char *type;
	int			cut = 0;
	static const char prefix[] = "postgres: ";
	char		title[256];
	size_t		n = len < sizeof(title) - 1 ? len : sizeof(title) - 1;
	const char *t = title;
	size_t		cl = cluster_name ? strlen(cluster_name) : 0;

	if (outsz == 0)
		return;
	snprintf(out, outsz, "%s", TITLES_UNKNOWN_CHILD);
	/* argv strings are NUL-separated; the ps display pads with NULs */
	for (size_t i = 0; i < n; i++)
		title[i] = (cmdline[i] == '\0' || cmdline[i] == '\n') ? ' ' : cmdline[i];
	/* the title reaches the last byte kept (callers read 255 or more): cut */
	for (size_t i = sizeof(title) - 2; i < len && !cut; i++)
		cut = cmdline[i] != '\0' && cmdline[i] != ' ';
	while (n > 0 && title[n - 1] == ' ')
		n--;
	title[n] = '\0';

	if (strncmp(t, prefix, sizeof(prefix) - 1) != 0)
		return;					/* forked, no PostgreSQL title yet */
	t += sizeof(prefix) - 1;
	if (cl > 0 && strncmp(t, cluster_name, cl) == 0 && t[cl] == ':' && t[cl + 1] == ' ')
		t += cl + 2;
	type = title_backend_type(t, cut);
	if (flags & TITLES_ONE_LR_WORKER)
		for (size_t i = 0; i < sizeof(lr_workers) / sizeof(lr_workers[0]); i++)
			if (strcmp(type, lr_workers[i]) == 0)
				type = "logical replication worker";
	snprintf(out, outsz, "%s", type);
}
