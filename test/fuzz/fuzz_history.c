/*
 * fuzz_history.c - libFuzzer target: the memory history's file read whole
 * and loaded into a ring, and the postmaster-message parser, fed arbitrary
 * bytes. Invariants: no crash, no UB; every record the walk accepts lies
 * inside the buffer, after the previous one, and has the payload its kind
 * and count call for; the loader keeps the ring's protocol (reserve, then
 * commit), commits only whole samples that fit (a system entry, then
 * processes, kept set, numbers rising), and never reads past the file.
 */
#include <stdlib.h>
#include <string.h>

#include "rules/exit_message.h"
#include "rules/history_format.h"

typedef struct ring
{
	history_entry slots[64];
	uint32_t	capacity;
	uint64_t	end;
	int			reserved;
	history_entry *a, *b;
	uint32_t	na;
	int64_t		last_number;
} ring;

typedef struct memfile
{
	const char *data;
	size_t		len;
} memfile;

static long
mem_read(void *arg, void *buf, size_t len, uint64_t off)
{
	memfile    *m = arg;
	size_t		n;

	if (off >= m->len)
		return 0;
	n = len < m->len - off ? len : m->len - off;
	memcpy(buf, m->data + off, n);
	return (long) n;
}

static void
ring_reserve(void *arg, uint32_t count, history_entry **a, uint32_t *na, history_entry **b)
{
	ring	   *r = arg;
	uint32_t	at = (uint32_t) (r->end % r->capacity);

	if (count == 0 || count > r->capacity || r->reserved)
		abort();
	r->reserved = 1;
	*a = r->a = &r->slots[at];
	*na = r->na = count < r->capacity - at ? count : r->capacity - at;
	*b = r->b = r->na < count ? r->slots : NULL;
}

static void
ring_commit(void *arg, uint32_t count)
{
	ring	   *r = arg;

	if (!r->reserved)
		abort();
	for (uint32_t i = 0; i < count; i++)
	{
		const history_entry *e = i < r->na ? &r->a[i] : &r->b[i - r->na];

		if (e->kind != (i == 0 ? HISTORY_SYSTEM : HISTORY_PROCESS))
			abort();
	}
	if (r->a[0].u.sys.kept != (int32_t) count - 1 || r->a[0].u.sys.sample <= r->last_number)
		abort();
	r->last_number = r->a[0].u.sys.sample;
	r->reserved = 0;
	r->end += count;
}

static void
ring_crash(void *arg, const history_crash *c)
{
	(void) arg;
	(void) c;
}

static void
ring_check(void *arg)
{
	(void) arg;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* a copy: the server reads the file into an aligned buffer too */
	char	   *buf = malloc(size + 1);
	char	   *window = malloc(HISTORY_LOAD_BUFFER);
	size_t		off = sizeof(history_file_header);
	const history_record *rec;
	const char *payload;
	int			pid, number;
	char		field[64];
	ring	   *r = calloc(1, sizeof(ring));
	memfile		m = {buf, size};
	history_source src = {mem_read, &m, size};
	history_sink sink = {0};
	history_load_result res;

	memcpy(buf, data, size);
	buf[size] = '\0';
	(void) history_format_check_header(buf, size);
	while (history_format_next(buf, size, &off, &rec, &payload) == HF_OK)
	{
		/* a crash row and an entry are as long as the header says (1.2.0's were shorter) */
		size_t		len = rec->kind == RECORD_CRASH && rec->count == 1 ?
			history_format_crash_size(buf, size) :
			rec->kind == RECORD_SAMPLE ? (size_t) rec->count * history_format_entry_size(buf, size) :
			history_record_payload(rec->kind, rec->count);

		if (payload < buf || payload + len > buf + size || (const char *) rec + sizeof(*rec) != payload ||
			payload + len != buf + off)
			abort();
	}

	/* a ring of 1 to 64 entries, from the last byte */
	r->capacity = size > 0 ? 1 + (unsigned char) buf[size - 1] % 64 : 16;
	sink.capacity = r->capacity;
	sink.reserve = ring_reserve;
	sink.commit = ring_commit;
	sink.crash = ring_crash;
	sink.check = ring_check;
	sink.arg = r;
	res = history_load(&src, &sink, window);
	if (r->reserved && res.status == HF_END)
		abort();
	if (res.good_end > size || (res.status == HF_END && res.good_end != size && size >= sizeof(history_file_header)))
		abort();

	if (exit_message_parse(buf, &pid, &number) && pid <= 0)
		abort();
	history_copy_text(field, sizeof(field), buf, size);
	if (field[sizeof(field) - 1] != '\0')
		abort();
	free(r);
	free(window);
	free(buf);
	return 0;
}
