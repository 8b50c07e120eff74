/*
 * history_file.c
 *		The memory history's file format: CRC, headers, records (no
 *		PostgreSQL headers; see history.h).
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "history.h"

/* CRC-32C (Castagnoli), reflected, one table lookup per byte */
static uint32_t crc_table[256];
static int	crc_table_ready = 0;

static void
crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++)
	{
		uint32_t	c = i;

		for (int k = 0; k < 8; k++)
			c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
		crc_table[i] = c;
	}
	crc_table_ready = 1;
}

uint32_t
history_crc32c(uint32_t crc, const void *data, size_t len)
{
	const unsigned char *p = data;

	if (!crc_table_ready)
		crc_init();
	crc = ~crc;
	while (len--)
		crc = crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}

void
history_file_header_init(history_file_header *h)
{
	memset(h, 0, sizeof(*h));
	h->magic = HISTORY_FILE_MAGIC;
	h->version = HISTORY_FILE_VERSION;
	h->entry_size = sizeof(history_entry);
	h->crash_size = sizeof(history_crash);
}

history_file_result
history_file_check_header(const char *buf, size_t len)
{
	history_file_header h, want;

	history_file_header_init(&want);
	if (len < sizeof(h))
		return memcmp(buf, &want.magic, len < sizeof(h.magic) ? len : sizeof(h.magic)) != 0 ?
			HF_NOT_OURS : HF_SHORT;
	memcpy(&h, buf, sizeof(h));
	if (h.magic != want.magic)
		return HF_NOT_OURS;
	if (memcmp(&h, &want, sizeof(h)) != 0)
		return HF_FOREIGN;
	return HF_OK;
}

static uint32_t
record_crc(const history_record *r, const void *payload, size_t len)
{
	uint32_t	crc = history_crc32c(0, payload, len);

	crc = history_crc32c(crc, &r->kind, sizeof(r->kind));
	return history_crc32c(crc, &r->count, sizeof(r->count));
}

size_t
history_record_payload(uint32_t kind, uint32_t count)
{
	switch (kind)
	{
		case RECORD_SAMPLE:
			/* a system entry at least; at most 2^20 (under 1 GB, even in 32 bits) */
			return count >= 1 && count <= (1u << 20) ? count * sizeof(history_entry) : 0;
		case RECORD_CRASH:
			return count == 1 ? sizeof(history_crash) : 0;
		case RECORD_STOP:
			return count == 0 ? (size_t) 0 : 0;
		default:
			return 0;
	}
}

void
history_record_init(history_record *r, history_record_kind kind, uint32_t count,
					const void *payload, size_t len)
{
	memset(r, 0, sizeof(*r));
	r->kind = kind;
	r->count = count;
	r->crc = record_crc(r, payload, len);
}

history_file_result
history_file_next(const char *buf, size_t len, size_t *off, const history_record **rec,
				  const char **payload)
{
	const history_record *r;
	size_t		need;

	if (*off == len)
		return HF_END;
	if (*off > len || len - *off < sizeof(history_record))
		return HF_SHORT;
	r = (const history_record *) (buf + *off);
	need = history_record_payload(r->kind, r->count);
	if (need == 0 && !(r->kind == RECORD_STOP && r->count == 0))
		return HF_CORRUPT;
	if (len - *off - sizeof(history_record) < need)
		return HF_SHORT;
	if (record_crc(r, buf + *off + sizeof(history_record), need) != r->crc)
		return HF_CORRUPT;
	*rec = r;
	*payload = buf + *off + sizeof(history_record);
	*off += sizeof(history_record) + need;
	return HF_OK;
}

const char *
history_file_result_text(history_file_result r)
{
	switch (r)
	{
		case HF_OK:
			return "valid";
		case HF_END:
			return "complete";
		case HF_SHORT:
			return "cut short";
		case HF_NOT_OURS:
			return "not a pg_procmem history file";
		case HF_FOREIGN:
			return "written by another version of pg_procmem";
		case HF_CORRUPT:
			return "damaged";
	}
	return "unknown";
}

int
history_parse_exit(const char *message, int *pid, int *number)
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

void
history_copy_text(char *dst, size_t dstsz, const char *src, size_t srclen)
{
	size_t		n = srclen < dstsz - 1 ? srclen : dstsz - 1;

	/*
	 * cut short: back off to the start of a UTF-8 character (at most 3
	 * bytes: in another encoding such bytes are characters of their own)
	 */
	if (n < srclen)
		for (int k = 0; k < 3 && n > 0 && ((unsigned char) src[n] & 0xC0) == 0x80; k++)
			n--;
	memcpy(dst, src, n);
	memset(dst + n, 0, dstsz - n);
}
