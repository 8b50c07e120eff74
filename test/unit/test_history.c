/*
 * test_history.c
 *		Unit tests of the memory history's file format and of loading a file
 *		into a ring (TAP; run by `make unit`).
 *
 * A file is built in memory the way history_file.c writes one: a header, a
 * SAMPLE of three entries, a CRASH and a STOP. Every read works on a copy of
 * exactly the bytes handed over, so that ASan sees any read past the end.
 * The loader reads through a source over such a copy into a ring of the
 * test's own, as history_file.c's sink does into shared memory.
 *
 * Fixtures: history/three-samples.history was written by 1.2.0's codec
 * (test/history/histfile), the first release of the file format: every
 * later build must load it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rules/exit_message.h"
#include "rules/history_format.h"
#include "rules/oom_window.h"
#include "procfile.h"
#include "tap.h"

static char *file;
static size_t file_len;
static size_t rec_off[4];		/* where each record starts, then the end */

/* --- building files ------------------------------------------------------ */

typedef struct builder
{
	char	   *buf;
	size_t		len;
	size_t		cap;
} builder;

static void
put(builder *b, const void *p, size_t n)
{
	if (b->len + n > b->cap)
	{
		b->cap = (b->len + n) * 2;
		b->buf = realloc(b->buf, b->cap);
	}
	if (n > 0)
		memcpy(b->buf + b->len, p, n);
	b->len += n;
}

static void
put_header(builder *b)
{
	history_file_header h;

	history_format_header_init(&h);
	put(b, &h, sizeof(h));
}

static void
put_record(builder *b, history_record_kind kind, uint32_t count, const void *payload, size_t len)
{
	history_record r;

	history_record_init(&r, kind, count, history_crc32c(0, payload, len));
	put(b, &r, sizeof(r));
	put(b, payload, len);
}

/*
 * A sample of n entries (n - 1 processes) taken at time at, numbered number,
 * each entry_size bytes (an older build's: the first of this build's)
 */
static void
put_sample_sized(builder *b, int64_t at, uint32_t n, int64_t number, size_t entry_size)
{
	history_entry *e = calloc(n, sizeof(history_entry));
	char	   *packed = calloc(n, entry_size);

	e[0].kind = HISTORY_SYSTEM;
	e[0].sampled_at = at;
	e[0].u.sys.processes = (int32_t) n - 1;
	e[0].u.sys.sample = number;
	for (uint32_t i = 1; i < n; i++)
	{
		e[i].kind = HISTORY_PROCESS;
		e[i].sampled_at = at;
		e[i].pid = 100 + (int32_t) i;
		strcpy(e[i].u.proc.backend_type, "client backend");
		e[i].u.proc.overhead = 1000 * (int64_t) i;
		e[i].u.proc.dsm = 7;
		e[i].u.proc.group_dsm = 8;
	}
	for (uint32_t i = 0; i < n; i++)
		memcpy(packed + i * entry_size, &e[i], entry_size);
	put_record(b, RECORD_SAMPLE, n, packed, n * entry_size);
	free(packed);
	free(e);
}

static void
put_sample(builder *b, int64_t at, uint32_t n, int64_t number)
{
	put_sample_sized(b, at, n, number, sizeof(history_entry));
}

static void
put_crash(builder *b, int64_t at, int32_t pid)
{
	history_crash c;

	memset(&c, 0, sizeof(c));
	c.crashed_at = at;
	c.how = HOW_POSTMASTER_LOG;
	c.killed_pid = pid;
	c.signal = 9;
	c.exit_code = -1;
	c.killed.kind = HISTORY_PROCESS;
	c.killed.pid = pid;
	put_record(b, RECORD_CRASH, 1, &c, sizeof(c));
}

static void
build_file(void)
{
	builder		b = {NULL, 0, 0};

	put_header(&b);
	rec_off[0] = b.len;
	put_sample(&b, 1000, 3, 0);
	rec_off[1] = b.len;
	put_crash(&b, 2000, 102);
	rec_off[2] = b.len;
	put_record(&b, RECORD_STOP, 0, NULL, 0);
	rec_off[3] = b.len;
	file = b.buf;
	file_len = b.len;
}

/* Reads the first len bytes of buf after the header: good records, then what ended them. */
static history_file_result
walk(const char *buf, size_t len, int *good)
{
	char	   *copy = malloc(len ? len : 1);
	size_t		off = sizeof(history_file_header);
	const history_record *rec;
	const char *payload;
	history_file_result r;

	memcpy(copy, buf, len);
	*good = 0;
	while ((r = history_format_next(copy, len, &off, &rec, &payload)) == HF_OK)
		(*good)++;
	free(copy);
	return r;
}

/*
 * A header and one record of this kind and count, with the CRC right for no
 * payload, and zeros after it: HF_OK if that record was read as good.
 */
static history_file_result
one_record(uint32_t kind, uint32_t count)
{
	char		buf[sizeof(history_file_header) + sizeof(history_record) + 64];
	history_file_header h;
	history_record r;
	history_file_result result;
	int			good;

	memset(buf, 0, sizeof(buf));
	history_format_header_init(&h);
	history_record_init(&r, (history_record_kind) kind, count, history_crc32c(0, NULL, 0));
	memcpy(buf, &h, sizeof(h));
	memcpy(buf + sizeof(h), &r, sizeof(r));
	result = walk(buf, sizeof(buf), &good);
	return good > 0 ? HF_OK : result;
}

/* --- a ring and a source for the loader ---------------------------------- */

typedef struct ring
{
	history_entry *slots;
	uint32_t	capacity;
	uint64_t	end;			/* entries committed */
	int			reserved;		/* reserve() called, commit() not yet */
	int			crashes;
	int			checks;
	int64_t		crash_at[8];
	history_crash last_crash;
	int			guards;
	history_guard_action guard[8];
	int			bad;			/* the loader broke the protocol */
} ring;

static void
ring_reserve(void *arg, uint32_t count, history_entry **a, uint32_t *na, history_entry **b)
{
	ring	   *r = arg;
	uint32_t	at = (uint32_t) (r->end % r->capacity);

	if (count > r->capacity || r->reserved)
		r->bad = 1;
	r->reserved = 1;
	*a = &r->slots[at];
	*na = count < r->capacity - at ? count : r->capacity - at;
	*b = *na < count ? r->slots : NULL;
	/* stale bytes, as a ring has: the loader must overwrite every one */
	memset(*a, 0x5a, *na * sizeof(history_entry));
	if (*b)
		memset(*b, 0x5a, (count - *na) * sizeof(history_entry));
}

static void
ring_commit(void *arg, uint32_t count)
{
	ring	   *r = arg;

	if (!r->reserved)
		r->bad = 1;
	r->reserved = 0;
	r->end += count;
}

static void
ring_crash(void *arg, const history_crash *c)
{
	ring	   *r = arg;

	if (r->crashes < 8)
		r->crash_at[r->crashes] = c->crashed_at;
	r->crashes++;
	r->last_crash = *c;
}

static void
ring_guard(void *arg, const history_guard_action *a)
{
	ring	   *r = arg;

	if (r->guards < 8)
		r->guard[r->guards] = *a;
	r->guards++;
}

static void
ring_check(void *arg)
{
	((ring *) arg)->checks++;
}

/* The samples in the ring, oldest first: whole, in order, their times and numbers */
static int
ring_samples(const ring *r, int64_t *times, int64_t *numbers, int max)
{
	uint64_t	first = r->end > r->capacity ? r->end - r->capacity : 0;
	int			n = 0;

	for (uint64_t p = first; p < r->end; p++)
	{
		const history_entry *e = &r->slots[p % r->capacity];

		if (e->kind == HISTORY_SYSTEM && n < max)
		{
			times[n] = e->sampled_at;
			numbers[n++] = e->u.sys.sample;
		}
	}
	return n;
}

typedef struct memfile
{
	char	   *data;			/* an exact copy */
	size_t		len;
	uint64_t	fail_at;		/* a read reaching this offset fails; 0: none */
	uint64_t	bytes;
} memfile;

static long
mem_read(void *arg, void *buf, size_t len, uint64_t off)
{
	memfile    *m = arg;
	size_t		n;

	if (m->fail_at && off + len > m->fail_at)
	{
		errno = EIO;
		return -1;
	}
	if (off >= m->len)
		return 0;
	n = len < m->len - off ? len : m->len - off;
	memcpy(buf, m->data + off, n);
	m->bytes += n;
	return (long) n;
}

/* Loads the first len bytes of data into a ring of capacity entries */
static history_load_result
load(const char *data, size_t len, uint32_t capacity, ring *r, memfile *m)
{
	history_source src;
	history_sink sink;
	char	   *buf = malloc(HISTORY_LOAD_BUFFER);
	history_load_result res;

	memset(r, 0, sizeof(*r));
	r->capacity = capacity;
	r->slots = calloc(capacity, sizeof(history_entry));
	m->data = malloc(len ? len : 1);
	memcpy(m->data, data, len);
	m->len = len;
	m->bytes = 0;
	src.read = mem_read;
	src.arg = m;
	src.size = len;
	sink.capacity = capacity;
	sink.reserve = ring_reserve;
	sink.commit = ring_commit;
	sink.crash = ring_crash;
	sink.check = ring_check;
	sink.arg = r;
	sink.guard = ring_guard;
	res = history_load(&src, &sink, buf);
	free(buf);
	free(m->data);
	return res;
}

static void
unload(ring *r)
{
	free(r->slots);
}

/* --- the tests ------------------------------------------------------------ */

/* CRC-32C: the standard check values; pieces chain into the one-shot value */
static void
test_crc(void)
{
	const char *s = "123456789";
	unsigned char zeros[32], ones[32], big[1000];
	int			same = 1;

	memset(zeros, 0, sizeof(zeros));
	memset(ones, 0xff, sizeof(ones));
	is_i64(history_crc32c(0, s, 9), 0xE3069283u, "crc: check value of \"123456789\"");
	is_i64(history_crc32c(0, zeros, 32), 0x8A9136AAu, "crc: 32 zero bytes (RFC 3720)");
	is_i64(history_crc32c(0, ones, 32), 0x62A8AB43u, "crc: 32 0xff bytes (RFC 3720)");
	is_i64(history_crc32c(0, s, 0), 0, "crc: nothing");
	is_i64(history_crc32c_sw(0, s, 9), 0xE3069283u, "crc: the tables' check value");
	for (size_t k = 0; k <= 9; k++)
		for (size_t m = k; m <= 9; m++)
			same &= history_crc32c(history_crc32c(history_crc32c(0, s, k), s + k, m - k),
								   s + m, 9 - m) == 0xE3069283u;
	ok(same, "crc: in up to three pieces, split anywhere, as in one");
	srand(7);
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (unsigned char) rand();
	same = 1;
	for (size_t off = 0; off < 9; off++)
		for (size_t len = 0; len + off <= sizeof(big); len += 37)
			same &= history_crc32c(0, big + off, len) == history_crc32c_sw(0, big + off, len);
	ok(same, "crc: the CPU's instruction (where there is one) and the tables agree, any offset and length");
}

/* Headers: ours, cut short, not ours, another version's or build's */
static void
test_header(void)
{
	history_file_header h, good;

	history_format_header_init(&good);
	ok(good.magic == HISTORY_FILE_MAGIC && good.version == HISTORY_FILE_VERSION &&
	   good.entry_size == sizeof(history_entry) && good.crash_size == sizeof(history_crash),
	   "header: init fills in magic, version and sizes");
	is_i64(sizeof(history_entry), 664, "header: an entry is 664 bytes (the format; history_format.h; 1.2.0's: 648)");
	is_i64(sizeof(history_crash), 4056, "header: a crash row is 4056 bytes (1.2.0's: 3096)");
	h = good;
	h.crash_size = HISTORY_CRASH_SIZE_1_2;
	h.entry_size = HISTORY_ENTRY_SIZE_1_2;
	ok(history_format_check_header((char *) &h, sizeof(h)) == HF_OK &&
	   history_format_crash_size((char *) &h, sizeof(h)) == HISTORY_CRASH_SIZE_1_2 &&
	   history_format_entry_size((char *) &h, sizeof(h)) == HISTORY_ENTRY_SIZE_1_2 &&
	   history_format_crash_size((char *) &good, sizeof(good)) == sizeof(history_crash) &&
	   history_format_entry_size((char *) &good, sizeof(good)) == sizeof(history_entry),
	   "header: 1.2.0's, with its shorter entries and crash rows, is good too, and says their sizes");
	h.entry_size = sizeof(history_entry);
	ok(history_format_check_header((char *) &h, sizeof(h)) == HF_FOREIGN,
	   "header: 1.2.0's crash rows with this build's entries: no build wrote that");
	ok(history_setting_source_name(SOURCE_SESSION) && strcmp(history_setting_source_name(SOURCE_SESSION), "session") == 0 &&
	   strcmp(history_setting_source_name(SOURCE_USER), "user") == 0 &&
	   strcmp(history_setting_source_name(SOURCE_DATABASE_USER), "database user") == 0 &&
	   strcmp(history_setting_source_name(SOURCE_FILE), "configuration file") == 0,
	   "settings: sources named as pg_settings.source names them");
	ok(history_setting_source_name(SOURCE_UNKNOWN) == NULL && history_setting_source_name(HISTORY_SOURCES) == NULL &&
	   history_setting_source_name(-1) == NULL && history_setting_source_name(255) == NULL,
	   "settings: an unknown source, or one a file made up, has no name");
	is_i64(history_format_check_header((char *) &good, sizeof(good)), HF_OK, "header: good");
	is_i64(history_format_check_header((char *) &good, sizeof(good) - 1), HF_SHORT,
		   "header: one byte short, right magic: cut short");
	is_i64(history_format_check_header((char *) &good, sizeof(good.magic)), HF_SHORT,
		   "header: the magic alone: cut short");
	is_i64(history_format_check_header((char *) &good, 0), HF_SHORT, "header: empty: cut short");
	is_i64(history_format_check_header("hi\n", 3), HF_NOT_OURS, "header: 3 bytes of something else: not ours");
	h = good;
	h.magic = 0x504d4853;		/* the other byte order */
	is_i64(history_format_check_header((char *) &h, sizeof(h)), HF_NOT_OURS, "header: wrong magic");
	is_i64(history_format_check_header((char *) &h, 8), HF_NOT_OURS,
		   "header: wrong magic, cut short: not ours");
	h = good;
	h.version = HISTORY_FILE_VERSION + 1;
	is_i64(history_format_check_header((char *) &h, sizeof(h)), HF_FOREIGN, "header: another version");
	h = good;
	h.entry_size += 8;
	is_i64(history_format_check_header((char *) &h, sizeof(h)), HF_FOREIGN, "header: another entry_size");
	h = good;
	h.crash_size -= 8;
	is_i64(history_format_check_header((char *) &h, sizeof(h)), HF_FOREIGN, "header: another crash_size");
}

/* Payload sizes: a SAMPLE has 1 to 2^20 entries, a CRASH one, a STOP none */
static void
test_payload(void)
{
	is_i64(history_record_payload(RECORD_SAMPLE, 1), sizeof(history_entry), "payload: SAMPLE of 1");
	is_i64(history_record_payload(RECORD_SAMPLE, 3), 3 * sizeof(history_entry), "payload: SAMPLE of 3");
	is_i64(history_record_payload(RECORD_SAMPLE, 1u << 20), (1ull << 20) * sizeof(history_entry),
		   "payload: SAMPLE of 2^20");
	ok(history_record_payload(RECORD_SAMPLE, 0) == 0 &&
	   history_record_payload(RECORD_SAMPLE, (1u << 20) + 1) == 0 &&
	   history_record_payload(RECORD_SAMPLE, UINT32_MAX) == 0,
	   "payload: SAMPLE of 0, 2^20 + 1, 2^32 - 1: none");
	is_i64(history_record_payload(RECORD_CRASH, 1), sizeof(history_crash), "payload: CRASH");
	ok(history_record_payload(RECORD_CRASH, 0) == 0 && history_record_payload(RECORD_CRASH, 2) == 0,
	   "payload: CRASH of 0 or 2: none");
	is_i64(history_record_payload(RECORD_STOP, 0), 0, "payload: STOP");
	ok(history_record_payload(0, 1) == 0 && history_record_payload(5, 1) == 0,
	   "payload: unknown kinds: none");
}

/* Walking a good file held whole: each record in turn, its payload, then the end */
static void
test_walk(void)
{
	size_t		off = sizeof(history_file_header);
	const history_record *rec = NULL;
	const char *payload = NULL;
	const history_entry *e;
	const history_crash *c;
	uint32_t	crc;
	int			good;

	is_i64(history_format_check_header(file, file_len), HF_OK, "walk: the built file's header");
	is_i64(history_format_next(file, file_len, &off, &rec, &payload), HF_OK, "walk: SAMPLE read");
	e = (const history_entry *) payload;
	ok(rec->kind == RECORD_SAMPLE && rec->count == 3 && payload == file + rec_off[0] + sizeof(*rec) &&
	   off == rec_off[1], "walk: SAMPLE of 3, payload after it, offset past it");
	ok(e[0].kind == HISTORY_SYSTEM && e[0].u.sys.processes == 2 && e[2].pid == 102 &&
	   strcmp(e[2].u.proc.backend_type, "client backend") == 0, "walk: SAMPLE entries");
	crc = history_crc32c(0, payload, 3 * sizeof(history_entry));
	crc = history_crc32c(history_crc32c(crc, &rec->kind, 4), &rec->count, 4);
	is_i64(rec->crc, crc, "walk: the CRC is of the payload, then kind, then count (the file format)");
	is_i64(history_format_next(file, file_len, &off, &rec, &payload), HF_OK, "walk: CRASH read");
	c = (const history_crash *) payload;
	ok(rec->kind == RECORD_CRASH && rec->count == 1 && off == rec_off[2] &&
	   c->killed_pid == 102 && c->signal == 9 && c->killed.pid == 102, "walk: CRASH and its payload");
	is_i64(history_format_next(file, file_len, &off, &rec, &payload), HF_OK, "walk: STOP read");
	ok(rec->kind == RECORD_STOP && rec->count == 0 && off == rec_off[3], "walk: STOP, no payload");
	is_i64(history_format_next(file, file_len, &off, &rec, &payload), HF_END, "walk: then the end");
	is_i64(history_format_next(file, file_len, &off, &rec, &payload), HF_END, "walk: and the end again");
	off = file_len + 1;
	is_i64(history_format_next(file, file_len, &off, &rec, &payload), HF_SHORT, "walk: offset past the end");
	ok(walk(file, file_len, &good) == HF_END && good == 3, "walk: on an exact copy, 3 records");
	ok(walk(file, sizeof(history_file_header), &good) == HF_END && good == 0,
	   "walk: a header alone is an empty history");
}

/* A file cut anywhere: the whole records before the cut, then cut short */
static void
test_cut(void)
{
	static const char *name[] = {"SAMPLE", "CRASH", "STOP"};

	for (int i = 0; i < 3; i++)
	{
		size_t		bad = 0;
		int			good;

		for (size_t len = rec_off[i] + 1; len < rec_off[i + 1] && !bad; len++)
			if (walk(file, len, &good) != HF_SHORT || good != i)
				bad = len;
		ok(!bad, "cut: at every length inside the %s, %d good records, then cut short", name[i], i);
		if (bad)
			printf("#   cut at %zu: %d good records, %s\n", bad, good,
				   history_format_result_text(walk(file, bad, &good)));
	}
}

/* Damage: any byte of a payload or a CRC flipped; absurd kinds and counts */
static void
test_damage(void)
{
	static const char *name[] = {"SAMPLE", "CRASH", "STOP"};
	char	   *copy = malloc(file_len);
	int			good;

	for (int i = 0; i < 3; i++)
	{
		size_t		bad = 0;
		history_file_result r = HF_OK;

		for (size_t at = rec_off[i]; at < rec_off[i + 1] && !bad; at++)
		{
			size_t		in = at - rec_off[i];

			if (in >= offsetof(history_record, pad) && in < sizeof(history_record))
				continue;		/* the pad is not covered */
			memcpy(copy, file, file_len);
			copy[at] ^= 0xff;
			r = walk(copy, file_len, &good);
			/* a count made larger can look like a record cut short */
			if (good != i || !(r == HF_CORRUPT ||
							   (r == HF_SHORT && in >= offsetof(history_record, count) &&
								in < offsetof(history_record, crc))))
				bad = at;
		}
		ok(!bad, "damage: any byte of the %s flipped (but its pad): %d good records, then damaged",
		   name[i], i);
		if (bad)
			printf("#   flipped byte %zu: %d good records, %s\n", bad, good, history_format_result_text(r));
	}
	memcpy(copy, file, file_len);
	copy[rec_off[0] + sizeof(history_record) + 3 * sizeof(history_entry) - 1] ^= 1;
	ok(walk(copy, file_len, &good) == HF_CORRUPT && good == 0,
	   "damage: the last byte of the SAMPLE's last entry");
	free(copy);

	is_i64(one_record(RECORD_SAMPLE, 0), HF_CORRUPT, "absurd: SAMPLE of 0 entries");
	is_i64(one_record(RECORD_SAMPLE, (1u << 20) + 1), HF_CORRUPT, "absurd: SAMPLE of 2^20 + 1 entries");
	is_i64(one_record(RECORD_SAMPLE, UINT32_MAX), HF_CORRUPT, "absurd: SAMPLE of 2^32 - 1 entries");
	is_i64(one_record(RECORD_SAMPLE, 1u << 20), HF_SHORT, "a SAMPLE of 2^20 entries is not absurd, just cut short");
	is_i64(one_record(RECORD_CRASH, 0), HF_CORRUPT, "absurd: CRASH of 0");
	is_i64(one_record(RECORD_CRASH, 2), HF_CORRUPT, "absurd: CRASH of 2");
	is_i64(one_record(RECORD_STOP, 1), HF_CORRUPT, "absurd: STOP of 1");
	is_i64(one_record(0, 0), HF_CORRUPT, "absurd: kind 0 (zeros)");
	is_i64(one_record(5, 1), HF_CORRUPT, "absurd: kind 5");
	is_i64(one_record(0xffffffffu, 1), HF_CORRUPT, "absurd: kind 2^32 - 1");
}

/* Loading the good file: its sample, its crash row, how it ended */
static void
test_load(void)
{
	ring		r;
	memfile		m = {0};
	history_load_result res;
	const history_entry *e;

	res = load(file, file_len, 16, &r, &m);
	e = &r.slots[0];
	ok(res.status == HF_END && res.records == 3 && res.samples_loaded == 1 && res.crashes == 1 &&
	   res.samples_dropped == 0 && res.good_end == file_len && !r.bad,
	   "load: the good file, whole: 1 sample, 1 crash row, read to its end");
	ok(r.end == 3 && e[0].kind == HISTORY_SYSTEM && e[2].pid == 102 && e[0].u.sys.kept == 2 &&
	   e[0].u.sys.sample == 1 && r.crashes == 1 && r.crash_at[0] == 2000,
	   "load: the sample's 3 entries in the ring, kept 2, numbered 1 (its file said 0); the crash row handed over");
	ok(res.tail_open == 0, "load: it ended with a clean stop: nothing untold");
	ok(r.checks >= 3 && res.bytes_read <= 2 * file_len && m.bytes == res.bytes_read,
	   "load: the sink checked once a record at least; it read %llu bytes of %zu",
	   (unsigned long long) res.bytes_read, file_len);
	unload(&r);

	res = load(file, rec_off[1], 16, &r, &m);
	ok(res.status == HF_END && res.tail_open == 1 && res.samples_loaded == 1,
	   "load: a file whose last record is a sample: its run's end is untold (tail open)");
	unload(&r);
	res = load(file, rec_off[2], 16, &r, &m);
	ok(res.status == HF_END && res.tail_open == 0, "load: a crash row after the last sample: told");
	unload(&r);
	res = load(file, rec_off[2] - 10, 16, &r, &m);
	ok(res.status == HF_SHORT && res.tail_open == 0 && res.samples_loaded == 1,
	   "load: cut inside the crash row after a sample: the sample loaded, its run's end not claimed");
	unload(&r);

	res = load(file, 0, 16, &r, &m);
	ok(res.status == HF_SHORT && r.end == 0 && res.bytes_read == 0, "load: an empty file: cut short, nothing read");
	unload(&r);
	res = load("not a history file, not at all", 30, 16, &r, &m);
	ok(res.status == HF_NOT_OURS && r.end == 0 && r.crashes == 0, "load: something else: not ours, nothing loaded");
	unload(&r);
}

static void
put_guard(builder *b, int64_t at, int32_t pid, int64_t given_back, const char *query)
{
	history_guard_action a;

	memset(&a, 0, sizeof(a));
	a.at = at;
	a.pid = pid;
	a.what = GUARD_CANCEL;
	a.why = GUARD_SERVER_LIMIT;
	a.held = 1 << 30;
	a.given_back = given_back;
	/* a field without its NUL: the loader ends it */
	memset(a.query, 'q', sizeof(a.query));
	memcpy(a.query, query, strlen(query));
	put_record(b, RECORD_GUARD, 1, &a, sizeof(a));
}

/*
 * The guard's actions: each record handed over as it is, the second of an
 * action (what it gave back, measured) after its first; a damaged one ends
 * the file there, as any record does; they say nothing of how the run ended.
 */
static void
test_load_guard(void)
{
	builder		b = {NULL, 0, 0};
	ring		r;
	memfile		m = {0};
	history_load_result res;
	size_t		good;

	is_i64(history_record_payload(RECORD_GUARD, 1), sizeof(history_guard_action), "guard: payload of one action");
	ok(history_record_payload(RECORD_GUARD, 0) == 0 && history_record_payload(RECORD_GUARD, 2) == 0,
	   "guard: a record of 0 or 2 actions is absurd");
	put_header(&b);
	put_sample(&b, 1000, 3, 0);
	put_guard(&b, 1500, 4242, -1, "SELECT 1");
	put_guard(&b, 1500, 4242, 900 << 20, "SELECT 1");
	good = b.len;
	res = load(b.buf, b.len, 16, &r, &m);
	ok(res.status == HF_END && res.guard_actions == 2 && r.guards == 2 && res.samples_loaded == 1 &&
	   res.tail_open == 1,
	   "guard: a sample then an action twice: both handed over, the run's end still untold");
	ok(r.guard[0].pid == 4242 && r.guard[0].given_back == -1 && r.guard[1].given_back == 900 << 20,
	   "guard: in the file's order, the measured one last");
	ok(strncmp(r.guard[1].query, "SELECT 1", 8) == 0 && r.guard[1].query[sizeof(r.guard[1].query) - 1] == '\0',
	   "guard: a text field the file left unended comes ended");
	unload(&r);
	put_guard(&b, 1600, 4343, -1, "SELECT 2");
	b.buf[b.len - 5] ^= 0x40;
	put_record(&b, RECORD_STOP, 0, NULL, 0);
	res = load(b.buf, b.len, 16, &r, &m);
	ok(res.status == HF_CORRUPT && r.guards == 2 && res.good_end == good,
	   "guard: a damaged action ends what can be read, at its start");
	unload(&r);
	free(b.buf);
}

/*
 * A file larger than the ring: the newest samples that fit, in order,
 * numbered on; an older file's numbers (0) and a later one's kept when they
 * rise; a sample larger than the ring left out.
 */
static void
test_load_fit(void)
{
	builder		b = {NULL, 0, 0};
	ring		r;
	memfile		m = {0};
	history_load_result res;
	int64_t		t[16], num[16];
	int			n;

	put_header(&b);
	for (int i = 0; i < 10; i++)
		put_sample(&b, 1000 + i, 4, 0); /* numbers as an older build wrote them: 0 */
	put_crash(&b, 5000, 7);
	put_sample(&b, 2000, 30, 0);	/* larger than the ring below */
	put_sample(&b, 2001, 4, 500);
	put_sample(&b, 2002, 4, 7);	/* lower than the one before: renumbered */
	res = load(b.buf, b.len, 20, &r, &m);
	n = ring_samples(&r, t, num, 16);
	ok(res.status == HF_END && res.samples_loaded == 5 && res.samples_dropped == 8 && r.crashes == 1 && !r.bad,
	   "fit: 13 samples into a ring of 20 entries: the newest 5 that fit loaded, 8 left out (one too large)");
	ok(n == 5 && t[0] == 1007 && t[1] == 1008 && t[2] == 1009 && t[3] == 2001 && t[4] == 2002,
	   "fit: oldest first, the newest kept, the too large one left out");
	ok(num[0] == 1 && num[1] == 2 && num[2] == 3 && num[3] == 500 && num[4] == 501,
	   "fit: numbered 1, 2, 3 (their files said 0), 500 kept, then 501 (not 7)");
	unload(&r);

	/* a ring of exactly one sample */
	res = load(b.buf, b.len, 4, &r, &m);
	n = ring_samples(&r, t, num, 16);
	ok(res.samples_loaded == 1 && n == 1 && t[0] == 2002 && r.end == 4, "fit: a ring of 4 entries: the last sample");
	unload(&r);
	free(b.buf);
}

/* Cut anywhere, damaged anywhere, unreadable: what was good before it, never garbage */
static void
test_load_hostile(void)
{
	builder		b = {NULL, 0, 0};
	ring		r;
	memfile		m = {0};
	history_load_result res;
	size_t		ends[8];
	int			nrec = 0;
	int			bad_cut = 0, bad_flip = 0;
	int64_t		t[16], num[16];

	put_header(&b);
	for (int i = 0; i < 4; i++)
	{
		put_sample(&b, 1000 + i, 3, 0);
		ends[nrec++] = b.len;
	}
	put_crash(&b, 3000, 5);
	ends[nrec++] = b.len;
	put_sample(&b, 1004, 3, 0);
	ends[nrec++] = b.len;

	for (size_t len = sizeof(history_file_header); len < b.len && !bad_cut; len++)
	{
		int			whole = 0, n;
		int			boundary;

		while (whole < nrec && ends[whole] <= len)
			whole++;
		boundary = len == sizeof(history_file_header) || (whole > 0 && ends[whole - 1] == len);
		res = load(b.buf, len, 64, &r, &m);
		n = ring_samples(&r, t, num, 16);
		/* the whole records before the cut: samples all but the fifth */
		if (res.status != (boundary ? HF_END : HF_SHORT) || n != (whole > 4 ? whole - 1 : whole) ||
			r.bad || res.good_end > len)
			bad_cut = (int) len;
		unload(&r);
	}
	ok(!bad_cut, "hostile: cut at every length: the whole records before the cut, nothing else");
	if (bad_cut)
		printf("#   cut at %d\n", bad_cut);

	for (size_t at = sizeof(history_file_header); at < b.len && !bad_flip; at += 7)
	{
		char	   *copy = malloc(b.len);
		int			n;

		memcpy(copy, b.buf, b.len);
		copy[at] ^= 0x41;
		res = load(copy, b.len, 64, &r, &m);
		n = ring_samples(&r, t, num, 16);
		/* a flipped pad byte is harmless; anything else ends the good part */
		for (int i = 0; i < n; i++)
			if (t[i] != 1000 + i)
				bad_flip = (int) at;
		if (r.bad || n != (int) res.samples_loaded || (res.status == HF_END && n != 5))
			bad_flip = (int) at;
		unload(&r);
		free(copy);
	}
	ok(!bad_flip, "hostile: a byte flipped every 7: only samples that were written, in order");
	if (bad_flip)
		printf("#   flipped at %d\n", bad_flip);

	m.fail_at = ends[2] + 10;
	res = load(b.buf, b.len, 64, &r, &m);
	ok(res.status == HF_READ_ERROR && res.read_errno == EIO && !r.bad,
	   "hostile: a read error: unreadable, with its errno");
	unload(&r);
	m.fail_at = 0;
	free(b.buf);
}

/* A damaged sample in the second pass: the samples before it, and nothing untold claimed */
static void
test_load_damaged_sample(void)
{
	builder		b = {NULL, 0, 0};
	ring		r;
	memfile		m = {0};
	history_load_result res;
	size_t		second;

	put_header(&b);
	put_sample(&b, 1000, 3, 0);
	second = b.len;
	put_sample(&b, 1001, 3, 0);
	put_sample(&b, 1002, 3, 0);
	b.buf[second + sizeof(history_record) + 100] ^= 1;
	res = load(b.buf, b.len, 64, &r, &m);
	ok(res.status == HF_CORRUPT && res.samples_loaded == 1 && r.end == 3 && res.good_end == second &&
	   res.tail_open == 0 && !r.bad,
	   "damaged sample: the one before it loaded, the file ends there, and how its run ended is not claimed");
	unload(&r);
	free(b.buf);
}

/* The postmaster's message about a child: pid, then signal or exit code */
static int
parsed(const char *message, int want_pid, int want_number)
{
	int			pid = -5, number = -5;
	int			found = exit_message_parse(message, &pid, &number);

	if (!found && want_pid == 0)
		return pid == -5 && number == -5;	/* nothing set */
	if (!found || pid != want_pid || number != want_number)
		printf("#   got %d: %d, %d\n", found, pid, number);
	return found && pid == want_pid && number == want_number;
}

/* A file of the released format, as 1.2.0 wrote it: loaded whole */
static void
test_load_released(void)
{
	size_t		len;
	char	   *data = slurp("history/three-samples.history", &len);
	ring		r;
	memfile		m = {0};
	history_load_result res;
	int64_t		t[4], num[4];
	int			n;

	res = load(data, len, 64, &r, &m);
	n = ring_samples(&r, t, num, 4);
	ok(res.status == HF_END && res.samples_loaded == 3 && res.samples_dropped == 0 && res.good_end == len &&
	   r.end == 9 && !r.bad,
	   "released: 1.2.0's file of three samples loads whole (9 entries), read to its end");
	ok(n == 3 && num[0] == 1 && num[1] == 2 && num[2] == 3 && t[0] < t[1] && t[1] < t[2],
	   "released: its samples in order, numbered 1, 2, 3");
	{
		int			stall_unknown = 0;

		for (uint64_t p = 0; p < r.end; p++)
			if (r.slots[p].kind == HISTORY_SYSTEM && r.slots[p].u.sys.psi_read == 0)
				stall_unknown++;
		ok(stall_unknown == 3, "released: its system entries load with the pressure stall not read (psi_read 0)");
	}
	unload(&r);
	free(data);
}

/*
 * 1.2.0's crash rows, 3096 bytes, beside its samples of 648-byte entries:
 * they load widened, with the fields 1.3.0 added 0 (the DSM figures -1),
 * and the walk steps over them
 */
static void
test_load_released_crash(void)
{
	builder		b = {NULL, 0, 0};
	history_file_header h;
	history_crash c;
	ring		r;
	memfile		m = {0};
	history_load_result res;
	size_t		off = sizeof(h);
	const history_record *rec;
	const char *payload;
	int			walked = 0;

	char		old[HISTORY_CRASH_SIZE_1_2];
	size_t		head = offsetof(history_crash, killed);
	const history_entry *e;

	history_format_header_init(&h);
	h.crash_size = HISTORY_CRASH_SIZE_1_2;
	h.entry_size = HISTORY_ENTRY_SIZE_1_2;
	put(&b, &h, sizeof(h));
	put_sample_sized(&b, 1000, 3, 1, HISTORY_ENTRY_SIZE_1_2);
	memset(&c, 0, sizeof(c));
	c.crashed_at = 2000;
	c.killed_pid = 4242;
	c.oom_kills_before = 3;
	c.killed.kind = HISTORY_PROCESS;
	c.killed.pid = 4242;
	c.killed.u.proc.settings.value[SETTING_WORK_MEM] = 65536;	/* the entry's last field in 1.2.0 */
	c.top_pid[0] = 77;			/* the first after the entry */
	c.cgroup_limit_after = 99;	/* 1.2.0's last */
	/* 1.2.0's layout: its entry was 16 bytes shorter */
	memcpy(old, &c, head);
	memcpy(old + head, &c.killed, HISTORY_ENTRY_SIZE_1_2);
	memcpy(old + head + HISTORY_ENTRY_SIZE_1_2, (char *) &c + head + sizeof(history_entry),
		   HISTORY_CRASH_SIZE_1_2 - head - HISTORY_ENTRY_SIZE_1_2);
	put_record(&b, RECORD_CRASH, 1, old, HISTORY_CRASH_SIZE_1_2);
	put_sample_sized(&b, 3000, 2, 2, HISTORY_ENTRY_SIZE_1_2);
	res = load(b.buf, b.len, 16, &r, &m);
	ok(res.status == HF_END && res.crash_size == HISTORY_CRASH_SIZE_1_2 && res.samples_loaded == 2 &&
	   r.crashes == 1 && r.last_crash.crashed_at == 2000 && r.last_crash.killed_pid == 4242 &&
	   r.last_crash.oom_kills_before == 3 && r.last_crash.killed_after == 0 &&
	   r.last_crash.killed_by == 0 && r.last_crash.oom == CRASH_OOM_UNKNOWN,
	   "released: 1.2.0's crash row (3096 bytes) loads between its samples, the fields 1.3.0 added 0");
	ok(r.last_crash.killed.pid == 4242 && r.last_crash.killed.u.proc.settings.value[SETTING_WORK_MEM] == 65536 &&
	   r.last_crash.killed.u.proc.dsm == -1 && r.last_crash.killed.u.proc.group_dsm == -1 &&
	   r.last_crash.top_pid[0] == 77 && r.last_crash.cgroup_limit_after == 99 &&
	   r.last_crash.killed_group_dsm == -1 && r.last_crash.group_dsm[0] == -1,
	   "released: its killed entry widened, the fields after it where this build has them, DSM unknown");
	e = &r.slots[1];
	ok(r.end == 5 && e->kind == HISTORY_PROCESS && e->pid == 101 && e->u.proc.overhead == 1000 &&
	   e->u.proc.dsm == -1 && e->u.proc.group_dsm == -1 && r.slots[0].kind == HISTORY_SYSTEM &&
	   r.slots[3].kind == HISTORY_SYSTEM && r.slots[4].u.proc.overhead == 1000,
	   "released: its 648-byte entries load widened, their DSM figures unknown (not 0)");
	unload(&r);
	while (history_format_next(b.buf, b.len, &off, &rec, &payload) == HF_OK)
		walked++;
	ok(walked == 3 && off == b.len, "released: the walk steps over its crash row to the end");
	free(b.buf);
}

/* The sampler's reads of the OOM kill counter, then an exit at exited_at */
static oom_window
placed(const int64_t *kills, const int64_t *at, int n, int64_t exited_at, int64_t kills_now)
{
	oom_reads	r;

	oom_reads_init(&r, 0);
	for (int i = 0; i < n; i++)
		oom_reads_note(&r, kills[i], at[i]);
	return oom_window_place(&r, exited_at, kills_now);
}

/* When the OOM kill happened: between which two reads, and whether at all */
static void
test_oom_window(void)
{
	int64_t		s = 1000000;
	oom_window	w;

	w = placed(NULL, NULL, 0, 10 * s, 4);
	ok(w.oom == CRASH_OOM_UNKNOWN && w.kills_before == -1, "oom: never read: unknown");
	w = placed((int64_t[]) {3, 3}, (int64_t[]) {1 * s, 2 * s}, 2, 3 * s, 4);
	ok(w.oom == CRASH_OOM_COUNTED && w.after == 2 * s && w.by == 3 * s && w.kills_before == 3 && w.kills_after == 4,
	   "oom: it rose after the last read: the kill between that read and the exit");
	w = placed((int64_t[]) {3, 4, 4, 4}, (int64_t[]) {1 * s, 2 * s, 3 * s, 4 * s}, 4, 5 * s, 4);
	ok(w.oom == CRASH_OOM_COUNTED && w.after == 1 * s && w.by == 2 * s && w.kills_before == 3 && w.kills_after == 4,
	   "oom: a rise seen 3 s before the exit (the victim slow to die): between the reads on either side of it");
	w = placed((int64_t[]) {3, 4, 5}, (int64_t[]) {1 * s, 2 * s, 3 * s}, 3, 4 * s, 5);
	ok(w.oom == CRASH_OOM_COUNTED && w.after == 1 * s && w.by == 3 * s && w.kills_before == 3 && w.kills_after == 5,
	   "oom: two rises a second apart: one window, from the read before the first to the read after the last "
	   "(the first victim may exit last)");
	w = placed((int64_t[]) {3, 4, 4, 5}, (int64_t[]) {1 * s, 2 * s, 70 * s, 71 * s}, 4, 72 * s, 5);
	ok(w.oom == CRASH_OOM_COUNTED && w.after == 70 * s && w.by == 71 * s && w.kills_before == 4,
	   "oom: two rises more than 60 s apart: the latest alone");
	w = placed((int64_t[]) {3, 4, 4}, (int64_t[]) {1 * s, 2 * s, 3 * s}, 3, 4 * s, 5);
	ok(w.oom == CRASH_OOM_COUNTED && w.after == 1 * s && w.by == 4 * s && w.kills_before == 3 && w.kills_after == 5,
	   "oom: a rise seen, then another after the last read: the window opens before the first");
	w = placed((int64_t[]) {3, 4, 5, 6, 7}, (int64_t[]) {0, 10 * s, 50 * s, 100 * s, 140 * s}, 5, 141 * s, 7);
	ok(w.oom == CRASH_OOM_COUNTED && w.after == 50 * s && w.by == 140 * s && w.kills_before == 5,
	   "oom: rises every 40 s do not chain past 60 s from the first of a window: a new one from the read "
	   "before the rise at 100 s (50 s), not from 0");
	w = placed((int64_t[]) {3, 4, 4}, (int64_t[]) {1 * s, 2 * s, 62 * s}, 3, 62 * s + 1, 4);
	ok(w.oom == CRASH_OOM_NOT_COUNTED && w.kills_before == 4 && w.kills_after == 4,
	   "oom: a rise 60 s and more before the exit, none since: not counted");
	w = placed((int64_t[]) {3, 3}, (int64_t[]) {1 * s, 2 * s}, 2, 3 * s, 3);
	ok(w.oom == CRASH_OOM_NOT_COUNTED, "oom: read before and after, no rise: not counted");
	w = placed((int64_t[]) {3, 3}, (int64_t[]) {1 * s, 2 * s}, 2, 3 * s, -1);
	ok(w.oom == CRASH_OOM_UNKNOWN && w.kills_before == -1, "oom: not read after the exit: unknown");
	w = placed((int64_t[]) {5, 0}, (int64_t[]) {1 * s, 2 * s}, 2, 3 * s, 0);
	ok(w.oom == CRASH_OOM_NOT_COUNTED, "oom: the counter went back (a cgroup made again): its past forgotten");
	w = placed((int64_t[]) {5, 0, 1}, (int64_t[]) {1 * s, 2 * s, 3 * s}, 3, 4 * s, 1);
	ok(w.oom == CRASH_OOM_COUNTED && w.after == 2 * s && w.by == 3 * s && w.kills_before == 0,
	   "oom: ... and a rise of the new one counts");
	w = placed((int64_t[]) {3, 3}, (int64_t[]) {1 * s, 2 * s}, 2, 3 * s, 2);
	ok(w.oom == CRASH_OOM_UNKNOWN, "oom: lower after the exit (another counter): unknown");
	w = placed((int64_t[]) {3, -1, 3}, (int64_t[]) {1 * s, 2 * s, 3 * s}, 3, 4 * s, 3);
	ok(w.oom == CRASH_OOM_NOT_COUNTED, "oom: an unreadable read changes nothing");
}

static void
test_exit_message(void)
{
	ok(parsed("server process (PID 1234) was terminated by signal 9: Killed", 1234, 9),
	   "exit: PID and signal");
	ok(parsed("background worker \"w 1\" (PID 77) exited with exit code 2", 77, 2),
	   "exit: a worker's name with a digit before PID");
	ok(parsed("processus serveur 4321 arrêté par le signal 11 : Segmentation fault", 4321, 11),
	   "exit: no \"PID\" (translated): the first integers");
	ok(parsed("server process (PID 55) exited", 55, -1), "exit: a pid but no number: -1");
	ok(parsed("server process was terminated by signal: Killed", 0, 0), "exit: no number: 0, nothing set");
	ok(parsed("", 0, 0), "exit: empty: 0");
	ok(parsed("server process (PID 0) exited with exit code 3", 0, 0), "exit: pid 0: 0");
	ok(parsed("server process (PID 99999999999) exited with exit code 3", 0, 0), "exit: a pid beyond int: 0");
	ok(parsed("background worker \"PID 5 sweeper\" (PID 77) exited with exit code 2", 77, 2),
	   "exit: the last \"PID\": a worker's name may hold the word");
}

/* Copy into a fixed field: cut at a UTF-8 boundary, NUL-padded */
static int
copied(size_t dstsz, const char *src, size_t srclen, const char *want)
{
	char		dst[16];
	char		expect[16];
	char	   *s = malloc(srclen ? srclen : 1);

	memcpy(s, src, srclen);		/* not NUL-terminated */
	memset(dst, 'x', sizeof(dst));
	memset(expect, 'x', sizeof(expect));
	memset(expect, 0, dstsz);
	memcpy(expect, want, strlen(want));
	history_copy_text(dst, dstsz, s, srclen);
	free(s);
	if (memcmp(dst, expect, sizeof(dst)) != 0)
		printf("#   got \"%.*s\"\n", (int) dstsz, dst);
	return memcmp(dst, expect, sizeof(dst)) == 0;
}

static void
test_copy_text(void)
{
	ok(copied(8, "ab", 2, "ab"), "copy: short, NUL-padded to the field's end, not past it");
	ok(copied(8, "abcdefghij", 10, "abcdefg"), "copy: ASCII cut, last byte NUL");
	ok(copied(8, "abcdefg", 7, "abcdefg"), "copy: ASCII exact fit kept");
	ok(copied(8, "abcdef\xc3\xa9", 8, "abcdef"), "copy: a 2-byte char straddling the end dropped whole");
	ok(copied(8, "abcde\xe2\x82\xac", 8, "abcde"), "copy: a 3-byte char, 2 bytes in, dropped whole");
	ok(copied(8, "abcdef\xe2\x82\xac", 9, "abcdef"), "copy: a 3-byte char, 1 byte in, dropped whole");
	ok(copied(8, "abcd\xf0\x9f\x90\x98", 8, "abcd"), "copy: a 4-byte char dropped whole");
	ok(copied(8, "abcde\xc3\xa9", 7, "abcde\xc3\xa9"), "copy: a 2-byte char that fits exactly kept");
	ok(copied(8, "abcd\xe2\x82\xac" "z", 8, "abcd\xe2\x82\xac"),
	   "copy: a 3-byte char that ends at the cut kept");
	ok(copied(8, "abc", 0, ""), "copy: empty source: all NUL");
	ok(copied(1, "abc", 3, ""), "copy: a one-byte field holds only the NUL");
	ok(copied(8, "deg\xb0\xb0\xb0\xb0\xb0\xb0\xb0\xb0", 11, "deg\xb0"),
	   "copy: bytes that look like UTF-8 continuations (LATIN1 degrees): at most 3 dropped");
}

int
main(int argc, char **argv)
{
	fixtures = argc > 1 ? argv[1] : "test/fixtures";
	build_file();
	test_crc();
	test_header();
	test_payload();
	test_walk();
	test_cut();
	test_damage();
	test_load();
	test_load_fit();
	test_load_hostile();
	test_load_damaged_sample();
	test_load_guard();
	test_load_released();
	test_load_released_crash();
	test_oom_window();
	test_exit_message();
	test_copy_text();
	free(file);
	return tap_done();
}
