/*
 * test_history.c
 *		Unit tests of the memory history's file format (TAP; run by `make unit`).
 *
 * A file is built in memory the way history.c writes one: a header, a
 * SAMPLE of three entries, a CRASH and a STOP. Every read works on a copy of
 * exactly the bytes handed over, so that ASan sees any read past the end.
 */
#include <stdlib.h>
#include <string.h>

#include "history.h"
#include "tap.h"

static char *file;
static size_t file_len;
static size_t rec_off[4];		/* where each record starts, then the end */

static void
append(const void *p, size_t n)
{
	if (n > 0)
		memcpy(file + file_len, p, n);
	file_len += n;
}

static void
build_file(void)
{
	history_file_header h;
	history_record r;
	history_entry e[3];
	history_crash c;

	memset(e, 0, sizeof(e));
	e[0].kind = HISTORY_SYSTEM;
	e[0].sampled_at = 1000;
	e[0].u.sys.processes = 2;
	for (int i = 1; i < 3; i++)
	{
		e[i].kind = HISTORY_PROCESS;
		e[i].sampled_at = 1000;
		e[i].pid = 100 + i;
		strcpy(e[i].u.proc.backend_type, "client backend");
	}
	memset(&c, 0, sizeof(c));
	c.crashed_at = 2000;
	c.how = HOW_POSTMASTER_LOG;
	c.killed_pid = 102;
	c.signal = 9;
	c.exit_code = -1;
	c.killed = e[2];

	file = malloc(sizeof(h) + 3 * sizeof(r) + sizeof(e) + sizeof(c));
	history_file_header_init(&h);
	append(&h, sizeof(h));
	rec_off[0] = file_len;
	history_record_init(&r, RECORD_SAMPLE, 3, e, sizeof(e));
	append(&r, sizeof(r));
	append(e, sizeof(e));
	rec_off[1] = file_len;
	history_record_init(&r, RECORD_CRASH, 1, &c, sizeof(c));
	append(&r, sizeof(r));
	append(&c, sizeof(c));
	rec_off[2] = file_len;
	history_record_init(&r, RECORD_STOP, 0, NULL, 0);
	append(&r, sizeof(r));
	rec_off[3] = file_len;
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
	while ((r = history_file_next(copy, len, &off, &rec, &payload)) == HF_OK)
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
	history_file_header_init(&h);
	history_record_init(&r, (history_record_kind) kind, count, NULL, 0);
	memcpy(buf, &h, sizeof(h));
	memcpy(buf + sizeof(h), &r, sizeof(r));
	result = walk(buf, sizeof(buf), &good);
	return good > 0 ? HF_OK : result;
}

/* CRC-32C: the standard check values; pieces chain into the one-shot value */
static void
test_crc(void)
{
	const char *s = "123456789";
	unsigned char zeros[32], ones[32];
	int			same = 1;

	memset(zeros, 0, sizeof(zeros));
	memset(ones, 0xff, sizeof(ones));
	is_i64(history_crc32c(0, s, 9), 0xE3069283u, "crc: check value of \"123456789\"");
	is_i64(history_crc32c(0, zeros, 32), 0x8A9136AAu, "crc: 32 zero bytes (RFC 3720)");
	is_i64(history_crc32c(0, ones, 32), 0x62A8AB43u, "crc: 32 0xff bytes (RFC 3720)");
	is_i64(history_crc32c(0, s, 0), 0, "crc: nothing");
	for (size_t k = 0; k <= 9; k++)
		for (size_t m = k; m <= 9; m++)
			same &= history_crc32c(history_crc32c(history_crc32c(0, s, k), s + k, m - k),
								   s + m, 9 - m) == 0xE3069283u;
	ok(same, "crc: in up to three pieces, split anywhere, as in one");
}

/* Headers: ours, cut short, not ours, another version's or build's */
static void
test_header(void)
{
	history_file_header h, good;

	history_file_header_init(&good);
	ok(good.magic == HISTORY_FILE_MAGIC && good.version == HISTORY_FILE_VERSION &&
	   good.entry_size == sizeof(history_entry) && good.crash_size == sizeof(history_crash),
	   "header: init fills in magic, version and sizes");
	is_i64(history_file_check_header((char *) &good, sizeof(good)), HF_OK, "header: good");
	is_i64(history_file_check_header((char *) &good, sizeof(good) - 1), HF_SHORT,
		   "header: one byte short, right magic: cut short");
	is_i64(history_file_check_header((char *) &good, sizeof(good.magic)), HF_SHORT,
		   "header: the magic alone: cut short");
	is_i64(history_file_check_header((char *) &good, 0), HF_SHORT, "header: empty: cut short");
	is_i64(history_file_check_header("hi\n", 3), HF_NOT_OURS, "header: 3 bytes of something else: not ours");
	h = good;
	h.magic = 0x504d4853;		/* the other byte order */
	is_i64(history_file_check_header((char *) &h, sizeof(h)), HF_NOT_OURS, "header: wrong magic");
	is_i64(history_file_check_header((char *) &h, 8), HF_NOT_OURS,
		   "header: wrong magic, cut short: not ours");
	h = good;
	h.version = HISTORY_FILE_VERSION + 1;
	is_i64(history_file_check_header((char *) &h, sizeof(h)), HF_FOREIGN, "header: another version");
	h = good;
	h.entry_size += 8;
	is_i64(history_file_check_header((char *) &h, sizeof(h)), HF_FOREIGN, "header: another entry_size");
	h = good;
	h.crash_size -= 8;
	is_i64(history_file_check_header((char *) &h, sizeof(h)), HF_FOREIGN, "header: another crash_size");
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
	ok(history_record_payload(0, 1) == 0 && history_record_payload(4, 1) == 0,
	   "payload: unknown kinds: none");
}

/* Walking a good file: each record in turn, its payload, then the end */
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

	is_i64(history_file_check_header(file, file_len), HF_OK, "walk: the built file's header");
	is_i64(history_file_next(file, file_len, &off, &rec, &payload), HF_OK, "walk: SAMPLE read");
	e = (const history_entry *) payload;
	ok(rec->kind == RECORD_SAMPLE && rec->count == 3 && payload == file + rec_off[0] + sizeof(*rec) &&
	   off == rec_off[1], "walk: SAMPLE of 3, payload after it, offset past it");
	ok(e[0].kind == HISTORY_SYSTEM && e[0].u.sys.processes == 2 && e[2].pid == 102 &&
	   strcmp(e[2].u.proc.backend_type, "client backend") == 0, "walk: SAMPLE entries");
	crc = history_crc32c(0, payload, 3 * sizeof(history_entry));
	crc = history_crc32c(history_crc32c(crc, &rec->kind, 4), &rec->count, 4);
	is_i64(rec->crc, crc, "walk: the CRC is of the payload, then kind, then count (the file format)");
	is_i64(history_file_next(file, file_len, &off, &rec, &payload), HF_OK, "walk: CRASH read");
	c = (const history_crash *) payload;
	ok(rec->kind == RECORD_CRASH && rec->count == 1 && off == rec_off[2] &&
	   c->killed_pid == 102 && c->signal == 9 && c->killed.pid == 102, "walk: CRASH and its payload");
	is_i64(history_file_next(file, file_len, &off, &rec, &payload), HF_OK, "walk: STOP read");
	ok(rec->kind == RECORD_STOP && rec->count == 0 && off == rec_off[3], "walk: STOP, no payload");
	is_i64(history_file_next(file, file_len, &off, &rec, &payload), HF_END, "walk: then the end");
	is_i64(history_file_next(file, file_len, &off, &rec, &payload), HF_END, "walk: and the end again");
	off = file_len + 1;
	is_i64(history_file_next(file, file_len, &off, &rec, &payload), HF_SHORT, "walk: offset past the end");
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
				   history_file_result_text(walk(file, bad, &good)));
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
			printf("#   flipped byte %zu: %d good records, %s\n", bad, good, history_file_result_text(r));
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
	is_i64(one_record(4, 1), HF_CORRUPT, "absurd: kind 4");
	is_i64(one_record(0xffffffffu, 1), HF_CORRUPT, "absurd: kind 2^32 - 1");
}

/* The postmaster's message about a child: pid, then signal or exit code */
static int
parsed(const char *message, int want_pid, int want_number)
{
	int			pid = -5, number = -5;
	int			found = history_parse_exit(message, &pid, &number);

	if (!found && want_pid == 0)
		return pid == -5 && number == -5;	/* nothing set */
	if (!found || pid != want_pid || number != want_number)
		printf("#   got %d: %d, %d\n", found, pid, number);
	return found && pid == want_pid && number == want_number;
}

static void
test_parse_exit(void)
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
main(void)
{
	build_file();
	test_crc();
	test_header();
	test_payload();
	test_walk();
	test_cut();
	test_damage();
	test_parse_exit();
	test_copy_text();
	free(file);
	return tap_done();
}
