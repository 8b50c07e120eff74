/*
 * psi.c
 *		Memory pressure stall information (psi.h).
 */
#include "linux/psi.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* "1.16" as 116; -1 unless digits, at most two decimals, and at most 100.00 */
static int32_t
hundredths(const char *p, const char *end)
{
	int64_t		v = 0;
	int			decimals = -1;

	if (p >= end || *p < '0' || *p > '9')
		return -1;
	for (; p < end && *p != ' ' && *p != '\t'; p++)
	{
		if (*p == '.' && decimals < 0)
			decimals = 0;
		else if (*p >= '0' && *p <= '9' && decimals < 2 && v <= 10000)
		{
			v = v * 10 + (*p - '0');
			if (decimals >= 0)
				decimals++;
		}
		else
			return -1;
	}
	for (; decimals < 2; decimals = decimals < 0 ? 1 : decimals + 1)
		v *= 10;
	return v <= 10000 ? (int32_t) v : -1;
}

/* The avg10 of one line of the file, after its "some " or "full " */
static int32_t
line_avg10(const char *p, const char *end)
{
	static const char key[] = "avg10=";

	while (p < end)
	{
		const char *word = p;

		while (p < end && *p != ' ')
			p++;
		if ((size_t) (p - word) > sizeof(key) - 1 && memcmp(word, key, sizeof(key) - 1) == 0)
			return hundredths(word + sizeof(key) - 1, p);
		while (p < end && *p == ' ')
			p++;
	}
	return -1;
}

int
psi_parse(const char *buf, size_t len, psi_memory *out)
{
	const char *p = buf;
	const char *line;
	size_t		llen;

	out->some_avg10 = out->full_avg10 = -1;
	while ((line = procfs_next_line(&p, buf + len, &llen)) != NULL)
	{
		if (llen > 5 && memcmp(line, "some ", 5) == 0 && out->some_avg10 < 0)
			out->some_avg10 = line_avg10(line + 5, line + llen);
		else if (llen > 5 && memcmp(line, "full ", 5) == 0 && out->full_avg10 < 0)
			out->full_avg10 = line_avg10(line + 5, line + llen);
	}
	return out->some_avg10 >= 0 && out->full_avg10 >= 0 ? 0 : -1;
}

/*
 * One pressure file: PSI_MISSING_* of its kind when it could not be read.
 * PSI off is a file missing (psi=0 at boot; a cgroup's cgroup.pressure = 0,
 * 6.1 and later) or, on older kernels, a read refused with EOPNOTSUPP.
 */
static int
read_one(const char *path, psi_memory *out, int off, int unreadable)
{
	char		buf[512];
	size_t		len;
	procfs_result res;

	errno = 0;
	res = procfs_read_path(path, buf, sizeof(buf), &len);
	out->some_avg10 = out->full_avg10 = -1;
	if (res == PROCFS_GONE || (res == PROCFS_UNREADABLE && errno == EOPNOTSUPP))
		return off;
	if (res != PROCFS_OK || psi_parse(buf, len, out) != 0)
	{
		out->some_avg10 = out->full_avg10 = -1;
		return unreadable;
	}
	return 0;
}

int
psi_read_cgroup(const sysmem_cgroup *cg, psi_memory *out)
{
	char		path[sizeof(cg->dir) + 32];

	out->some_avg10 = out->full_avg10 = -1;
	if (cg == NULL || cg->version == 0)
		return PSI_MISSING_CGROUP_NONE;
	if (cg->version != 2)
		return PSI_MISSING_CGROUP_V1;
	/*
	 * at its hierarchy's mount too: a container's own cgroup (its cgroup
	 * namespace shows it there), or on a host the root, whose stall is the
	 * machine's
	 */
	snprintf(path, sizeof(path), "%s/memory.pressure", cg->dir);
	return read_one(path, out, PSI_MISSING_CGROUP_OFF, PSI_MISSING_CGROUP_UNREADABLE);
}

void
psi_read_server(const sysmem_cgroup *cg, psi_server *out)
{
	out->missing = read_one(PSI_MACHINE_PATH, &out->machine, PSI_MISSING_MACHINE_OFF,
							PSI_MISSING_MACHINE_UNREADABLE) |
		psi_read_cgroup(cg, &out->cgroup);
}

const char *
psi_missing_reason(int bit)
{
	switch (bit)
	{
		case PSI_MISSING_MACHINE_OFF:
			return "PSI is off on this machine: no /proc/pressure/memory (boot with psi=1)";
		case PSI_MISSING_MACHINE_UNREADABLE:
			return "/proc/pressure/memory could not be read";
		case PSI_MISSING_CGROUP_NONE:
			return "the server is in no memory cgroup found";
		case PSI_MISSING_CGROUP_V1:
			return "the server's cgroup is v1: memory.pressure is cgroup v2's";
		case PSI_MISSING_CGROUP_OFF:
			return "its cgroup's memory.pressure is off (psi=0 at boot, or its cgroup.pressure set to 0)";
		case PSI_MISSING_CGROUP_UNREADABLE:
			return "its cgroup's memory.pressure could not be read";
		default:
			return NULL;
	}
}
