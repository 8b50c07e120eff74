/*
 * memory_settings.c
 *		The memory settings this backend runs with, and where each was set.
 *
 * A session can give itself any work_mem (SET needs no privilege), and a
 * role or a database can give one to all of its sessions: what pg_settings
 * shows in that session only. Each backend says its own in its slot
 * (contexts.c), so that the sampler and, when the backend is killed, the
 * postmaster can tell what it ran with.
 */
#include "server/compat.h"

#include "storage/bufmgr.h"

#include "server/memory_settings.h"

static const char *const names[HISTORY_SETTINGS] = {
	[SETTING_WORK_MEM] = "work_mem",
	[SETTING_HASH_MEM_MULTIPLIER] = "hash_mem_multiplier",
	[SETTING_TEMP_BUFFERS] = "temp_buffers",
	[SETTING_MAINTENANCE_WORK_MEM] = "maintenance_work_mem",
};

/* Their records, found once (built-in settings' records never move) */
static struct config_generic *records[HISTORY_SETTINGS];
static bool found = false;

/* GucSource to the file's code (the two name the same sources) */
static uint8
source_code(GucSource s)
{
	switch (s)
	{
		case PGC_S_DEFAULT:
		case PGC_S_DYNAMIC_DEFAULT:
			return SOURCE_DEFAULT;
		case PGC_S_ENV_VAR:
			return SOURCE_ENV_VAR;
		case PGC_S_FILE:
			return SOURCE_FILE;
		case PGC_S_ARGV:
			return SOURCE_ARGV;
		case PGC_S_GLOBAL:
			return SOURCE_GLOBAL;
		case PGC_S_DATABASE:
			return SOURCE_DATABASE;
		case PGC_S_USER:
			return SOURCE_USER;
		case PGC_S_DATABASE_USER:
			return SOURCE_DATABASE_USER;
		case PGC_S_CLIENT:
			return SOURCE_CLIENT;
		case PGC_S_OVERRIDE:
			return SOURCE_OVERRIDE;
		case PGC_S_INTERACTIVE:
			return SOURCE_INTERACTIVE;
		case PGC_S_TEST:
			return SOURCE_TEST;
		case PGC_S_SESSION:
			return SOURCE_SESSION;
	}
	return SOURCE_UNKNOWN;
}

static void
find_records(void)
{
	if (found)
		return;
	for (int i = 0; i < HISTORY_SETTINGS; i++)
		records[i] = procmem_find_setting(names[i]);
	found = true;
}

/* A setting's value as history_settings holds it */
static int64
held(int i, int intval, double realval)
{
	switch (i)
	{
		case SETTING_HASH_MEM_MULTIPLIER:
			return (int64) (realval * 1000.0 + 0.5);
		case SETTING_TEMP_BUFFERS:
			return (int64) intval * BLCKSZ;
		default:
			return (int64) intval * 1024;
	}
}

void
procmem_memory_settings(history_settings *out)
{
	memset(out, 0, sizeof(*out));
	find_records();
	out->value[SETTING_WORK_MEM] = held(SETTING_WORK_MEM, work_mem, 0);
	out->value[SETTING_HASH_MEM_MULTIPLIER] = held(SETTING_HASH_MEM_MULTIPLIER, 0, hash_mem_multiplier);
	out->value[SETTING_TEMP_BUFFERS] = held(SETTING_TEMP_BUFFERS, num_temp_buffers, 0);
	out->value[SETTING_MAINTENANCE_WORK_MEM] = held(SETTING_MAINTENANCE_WORK_MEM, maintenance_work_mem, 0);
	for (int i = 0; i < HISTORY_SETTINGS; i++)
		out->source[i] = records[i] ? source_code(records[i]->source) : SOURCE_UNKNOWN;
}

/*
 * As AtEOXact_GUC() will leave a setting: its transaction-level entry (the
 * bottom of its stack; inner levels are gone by the top level's end) says
 * whether the value set in the transaction stays or the prior one comes
 * back.
 */
bool
procmem_memory_settings_after_xact(history_settings *out, bool commit)
{
	bool		changed = false;

	procmem_memory_settings(out);
	for (int i = 0; i < HISTORY_SETTINGS; i++)
	{
		GucStack   *st = records[i] ? records[i]->stack : NULL;
		const config_var_value *v = NULL;

		if (st == NULL)
			continue;
		changed = true;
		while (st->prev)
			st = st->prev;
		if (!commit || st->state == GUC_SAVE || st->state == GUC_LOCAL)
		{
			v = &st->prior;
			out->source[i] = source_code(st->source);
		}
		else if (st->state == GUC_SET_LOCAL)
		{
			v = &st->masked;
			out->source[i] = SOURCE_SESSION;
		}
		if (v)
			out->value[i] = held(i, v->val.intval, v->val.realval);
	}
	return changed;
}
