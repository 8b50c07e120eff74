/*
 * fuzz_history.c - libFuzzer target: the memory history's file reader and
 * the postmaster-message parser fed arbitrary bytes. Invariants: no crash,
 * no UB; every record the walk accepts lies inside the buffer, after the
 * previous one, and has the payload its kind and count call for.
 */
#include <stdlib.h>
#include <string.h>

#include "history.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* a copy: the server reads the file into an aligned buffer too */
	char	   *buf = malloc(size + 1);
	size_t		off = sizeof(history_file_header);
	const history_record *rec;
	const char *payload;
	int			pid, number;
	char		field[64];

	memcpy(buf, data, size);
	buf[size] = '\0';
	(void) history_file_check_header(buf, size);
	while (history_file_next(buf, size, &off, &rec, &payload) == HF_OK)
	{
		size_t		len = history_record_payload(rec->kind, rec->count);

		if (payload < buf || payload + len > buf + size || (const char *) rec + sizeof(*rec) != payload ||
			payload + len != buf + off)
			abort();
	}
	if (history_parse_exit(buf, &pid, &number) && pid <= 0)
		abort();
	history_copy_text(field, sizeof(field), buf, size);
	if (field[sizeof(field) - 1] != '\0')
		abort();
	free(buf);
	return 0;
}
