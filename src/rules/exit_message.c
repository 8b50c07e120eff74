/*
 * exit_message.c
 *		The postmaster's message about a child's exit, parsed (no PostgreSQL
 *		headers; see exit_message.h).
 */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rules/exit_message.h"

int
exit_message_parse(const char *message, int *pid, int *number)
{
	const char *p = NULL;
	long		v[2];
	int			n = 0;

	/* the last "PID": the process's name, before it, may hold the word too */
	for (const char *q = strstr(message, "PID"); q; q = strstr(q + 1, "PID"))
		p = q;
	if (p == NULL)
		p = message;
	while (*p && n < 2)
	{
		if (isdigit((unsigned char) *p))
		{
			char	   *end;

			v[n++] = strtol(p, &end, 10);
			p = end;
		}
		else
			p++;
	}
	if (n == 0 || v[0] <= 0 || v[0] > INT32_MAX)
		return 0;
	*pid = (int) v[0];
	*number = n == 2 && v[1] >= 0 && v[1] <= INT32_MAX ? (int) v[1] : -1;
	return 1;
}
