/*
 * history_format.c
 *		The memory history's file format: CRC, headers, records, and a file
 *		loaded into a ring record by record (no PostgreSQL headers; see
 *		history_format.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>

#include "rules/history_format.h"

/* --- CRC-32C (Castagnoli, reflected) ------------------------------------ */

/* crc_table[k][b]: the CRC of byte b followed by k zero bytes */
static uint32_t crc_table[8][256];
static int	crc_ready = 0;
static int	crc_hw = 0;

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define CRC_HW_POSSIBLE 1

__attribute__((target("sse4.2")))
static uint32_t
crc_instruction(uint32_t crc, const unsigned char *p, size_t len)
{
	uint64_t	c = crc;

	for (; len >= 8; p += 8, len -= 8)
	{
		uint64_t	v;

		memcpy(&v, p, 8);
		c = __builtin_ia32_crc32di(c, v);
	}
	while (len--)
		c = __builtin_ia32_crc32qi((uint32_t) c, *p++);
	return (uint32_t) c;
}
#endif

static void
crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++)
	{
		uint32_t	c = i;

		for (int k = 0; k < 8; k++)
			c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
		crc_table[0][i] = c;
	}
	for (int k = 1; k < 8; k++)
		for (int i = 0; i < 256; i++)
			crc_table[k][i] = (crc_table[k - 1][i] >> 8) ^ crc_table[0][crc_table[k - 1][i] & 0xff];
#ifdef CRC_HW_POSSIBLE
	__builtin_cpu_init();
	crc_hw = __builtin_cpu_supports("sse4.2");
#endif
	crc_ready = 1;
}

/* Eight bytes a step (little-endian loads, as the reflected CRC wants) */
static uint32_t
crc_tables(uint32_t c, const unsigned char *p, size_t len)
{
	for (; len >= 8; p += 8, len -= 8)
	{
		uint32_t	lo = c ^ ((uint32_t) p[0] | (uint32_t) p[1] << 8 |
							  (uint32_t) p[2] << 16 | (uint32_t) p[3] << 24);

		c = crc_table[7][lo & 0xff] ^ crc_table[6][(lo >> 8) & 0xff] ^
			crc_table[5][(lo >> 16) & 0xff] ^ crc_table[4][lo >> 24] ^
			crc_table[3][p[4]] ^ crc_table[2][p[5]] ^ crc_table[1][p[6]] ^ crc_table[0][p[7]];
	}
	while (len--)
		c = crc_table[0][(c ^ *p++) & 0xff] ^ (c >> 8);
	return c;
}

uint32_t
history_crc32c_sw(uint32_t crc, const void *data, size_t len)
{
	if (!crc_ready)
		crc_init();
	return ~crc_tables(~crc, data, len);
}

uint32_t
history_crc32c(uint32_t crc, const void *data, size_t len)
{
	if (!crc_ready)
		crc_init();
#ifdef CRC_HW_POSSIBLE
	if (crc_hw)
		return ~crc_instruction(~crc, data, len);
#endif
	return ~crc_tables(~crc, data, len);
}

/* --- headers and records ------------------------------------------------ */

/*
 * 1.2.0's entries end where the fields 1.3.0 added begin, and so do its
 * crash rows, but for the entry they hold (killed): they load widened
 */
/* a system entry's fields fit where a process entry's are */
typedef char system_entry_fits[sizeof(history_system) <= sizeof(history_process) ? 1 : -1];
typedef char entries_of_1_2_are_a_prefix[offsetof(history_entry, u.proc.dsm) == HISTORY_ENTRY_SIZE_1_2 ? 1 : -1];
typedef char crash_rows_of_1_2_are_a_prefix[offsetof(history_crash, killed_after) ==
											 HISTORY_CRASH_SIZE_1_2 + sizeof(history_entry) - HISTORY_ENTRY_SIZE_1_2 ? 1 : -1];

void
history_format_widen_entry(const void *old, uint32_t old_size, history_entry *e)
{
	memset(e, 0, sizeof(*e));
	memcpy(e, old, old_size < sizeof(*e) ? old_size : sizeof(*e));
	if (old_size < sizeof(*e) && e->kind == HISTORY_PROCESS)
		e->u.proc.dsm = e->u.proc.group_dsm = -1;	/* not known then */
}

void
history_format_widen_crash(const void *old, uint32_t old_size, uint32_t old_entry_size,
						   history_crash *c)
{
	const char *o = old;
	size_t		head = offsetof(history_crash, killed);
	size_t		rest = old_size >= head + old_entry_size ? old_size - head - old_entry_size : 0;

	memset(c, 0, sizeof(*c));
	if (rest == 0 || old_entry_size > sizeof(history_entry) ||
		head + sizeof(history_entry) + rest > sizeof(*c))
		return;					/* not a layout this build wrote: nothing read */
	memcpy(c, o, head);
	history_format_widen_entry(o + head, old_entry_size, &c->killed);
	memcpy((char *) c + head + sizeof(history_entry), o + head + old_entry_size, rest);
	c->killed_group_dsm = -1;
	for (int k = 0; k < HISTORY_GROUPS; k++)
		c->group_dsm[k] = -1;
}

void
history_format_header_init(history_file_header *h)
{
	memset(h, 0, sizeof(*h));
	h->magic = HISTORY_FILE_MAGIC;
	h->version = HISTORY_FILE_VERSION;
	h->entry_size = sizeof(history_entry);
	h->crash_size = sizeof(history_crash);
}

history_file_result
history_format_check_header(const char *buf, size_t len)
{
	history_file_header h, want;

	history_format_header_init(&want);
	if (len < sizeof(h))
		return memcmp(buf, &want.magic, len < sizeof(h.magic) ? len : sizeof(h.magic)) != 0 ?
			HF_NOT_OURS : HF_SHORT;
	memcpy(&h, buf, sizeof(h));
	if (h.magic != want.magic)
		return HF_NOT_OURS;
	/* 1.2.0's entries and crash rows were shorter: they load widened */
	if (h.entry_size == HISTORY_ENTRY_SIZE_1_2 && h.crash_size == HISTORY_CRASH_SIZE_1_2)
	{
		h.entry_size = want.entry_size;
		h.crash_size = want.crash_size;
	}
	if (memcmp(&h, &want, sizeof(h)) != 0)
		return HF_FOREIGN;
	return HF_OK;
}

uint32_t
history_format_crash_size(const char *buf, size_t len)
{
	history_file_header h;

	if (history_format_check_header(buf, len) != HF_OK)
		return sizeof(history_crash);
	memcpy(&h, buf, sizeof(h));
	return h.crash_size;
}

uint32_t
history_format_entry_size(const char *buf, size_t len)
{
	history_file_header h;

	if (history_format_check_header(buf, len) != HF_OK)
		return sizeof(history_entry);
	memcpy(&h, buf, sizeof(h));
	return h.entry_size;
}

/* The CRC of a record: its payload's, then its kind and count */
static uint32_t
record_crc(uint32_t payload_crc, uint32_t kind, uint32_t count)
{
	return history_crc32c(history_crc32c(payload_crc, &kind, sizeof(kind)), &count, sizeof(count));
}

/* A record's payload bytes in a file whose entries and crash rows are of these sizes */
static size_t
payload_in(uint32_t kind, uint32_t count, uint32_t entry_size, uint32_t crash_size)
{
	switch (kind)
	{
		case RECORD_SAMPLE:
			/* a system entry at least */
			return count >= 1 && count <= HISTORY_MAX_SAMPLE ? (size_t) count * entry_size : 0;
		case RECORD_CRASH:
			return count == 1 ? crash_size : 0;
		case RECORD_GUARD:
			return count == 1 ? sizeof(history_guard_action) : 0;
		default:
			return 0;
	}
}

size_t
history_record_payload(uint32_t kind, uint32_t count)
{
	return payload_in(kind, count, sizeof(history_entry), sizeof(history_crash));
}

/* Whether a record's kind and count make sense (a STOP has no payload) */
static int
record_sane(uint32_t kind, uint32_t count, uint32_t entry_size, uint32_t crash_size)
{
	return payload_in(kind, count, entry_size, crash_size) > 0 || (kind == RECORD_STOP && count == 0);
}

void
history_record_init(history_record *r, history_record_kind kind, uint32_t count,
					uint32_t payload_crc)
{
	memset(r, 0, sizeof(*r));
	r->kind = kind;
	r->count = count;
	r->crc = record_crc(payload_crc, kind, count);
}

history_file_result
history_format_next(const char *buf, size_t len, size_t *off, const history_record **rec,
				  const char **payload)
{
	const history_record *r;
	size_t		need;
	uint32_t	crash_size = history_format_crash_size(buf, len);
	uint32_t	entry_size = history_format_entry_size(buf, len);

	if (*off == len)
		return HF_END;
	if (*off > len || len - *off < sizeof(history_record))
		return HF_SHORT;
	r = (const history_record *) (buf + *off);
	if (!record_sane(r->kind, r->count, entry_size, crash_size))
		return HF_CORRUPT;
	need = payload_in(r->kind, r->count, entry_size, crash_size);
	if (len - *off - sizeof(history_record) < need)
		return HF_SHORT;
	if (record_crc(history_crc32c(0, buf + *off + sizeof(history_record), need),
				   r->kind, r->count) != r->crc)
		return HF_CORRUPT;
	*rec = r;
	*payload = buf + *off + sizeof(history_record);
	*off += sizeof(history_record) + need;
	return HF_OK;
}

const char *
history_format_result_text(history_file_result r)
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
		case HF_READ_ERROR:
			return "unreadable";
	}
	return "unknown";
}

void
history_copy_cstr(char *dst, size_t dstsz, const char *src)
{
	history_copy_text(dst, dstsz, src ? src : "", src ? strlen(src) : 0);
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

const char *
history_setting_source_name(int source)
{
	/* pg_settings.source's words (GucSource_Names) */
	static const char *const names[HISTORY_SOURCES] = {
		[SOURCE_DEFAULT] = "default", [SOURCE_ENV_VAR] = "environment variable",
		[SOURCE_FILE] = "configuration file", [SOURCE_ARGV] = "command line",
		[SOURCE_GLOBAL] = "global", [SOURCE_DATABASE] = "database", [SOURCE_USER] = "user",
		[SOURCE_DATABASE_USER] = "database user", [SOURCE_CLIENT] = "client",
		[SOURCE_OVERRIDE] = "override", [SOURCE_INTERACTIVE] = "interactive",
		[SOURCE_TEST] = "test", [SOURCE_SESSION] = "session"
	};

	return source > 0 && source < HISTORY_SOURCES ? names[source] : NULL;
}

/* --- loading ------------------------------------------------------------- */

/*
 * A window on the file through the caller's buffer: small reads (record
 * headers, crash rows) are served from it, large ones (a sample's payload)
 * go straight to where they belong.
 */
typedef struct window
{
	const history_source *src;
	char	   *buf;
	uint64_t	at;				/* the file offset of buf[0] */
	size_t		len;			/* valid bytes in buf */
	uint64_t	bytes_read;
	int			read_errno;
	uint32_t	crash_size;		/* the file's crash rows' size (its header's) */
	uint32_t	entry_size;		/* ... and its entries' */
} window;

/* Reads len bytes at off: 0 when all came, 1 when the file ends first, -1 on error */
static int
window_read(window *w, uint64_t off, void *dst, size_t len)
{
	long		got;

	if (off >= w->at && off - w->at <= w->len && w->len - (off - w->at) >= len)
	{
		memcpy(dst, w->buf + (off - w->at), len);
		return 0;
	}
	if (len <= HISTORY_LOAD_BUFFER / 2)
	{
		got = w->src->read(w->src->arg, w->buf, HISTORY_LOAD_BUFFER, off);
		if (got < 0)
			goto error;
		w->bytes_read += got;
		w->at = off;
		w->len = (size_t) got;
		if (w->len < len)
			return 1;
		memcpy(dst, w->buf, len);
		return 0;
	}
	got = w->src->read(w->src->arg, dst, len, off);
	if (got < 0)
		goto error;
	w->bytes_read += got;
	return (size_t) got < len ? 1 : 0;
error:
	w->read_errno = errno;
	return -1;
}

/* The header of the record at off, checked: HF_OK, or why it cannot be one */
static history_file_result
read_record(window *w, uint64_t off, history_record *r, size_t *payload)
{
	int			rc;

	if (w->src->size - off < sizeof(*r))
		return HF_SHORT;
	rc = window_read(w, off, r, sizeof(*r));
	if (rc != 0)
		return rc < 0 ? HF_READ_ERROR : HF_SHORT;
	if (!record_sane(r->kind, r->count, w->entry_size, w->crash_size))
		return HF_CORRUPT;
	*payload = payload_in(r->kind, r->count, w->entry_size, w->crash_size);
	if (w->src->size - off - sizeof(*r) < *payload)
		return HF_SHORT;
	return HF_OK;
}

/* The one-struct payload of the record r at off (a crash row, a guard action), its CRC checked */
static history_file_result
read_payload(window *w, uint64_t off, const history_record *r, void *dst, size_t len)
{
	int			rc = window_read(w, off + sizeof(*r), dst, len);

	if (rc != 0)
		return rc < 0 ? HF_READ_ERROR : HF_SHORT;
	if (record_crc(history_crc32c(0, dst, len), r->kind, r->count) != r->crc)
		return HF_CORRUPT;
	return HF_OK;
}

/* A sample's entries as stored: its system entry first, then processes */
static int
sample_sane(const history_entry *a, uint32_t na, const history_entry *b, uint32_t count)
{
	for (uint32_t i = 0; i < count; i++)
	{
		const history_entry *e = i < na ? &a[i] : &b[i - na];

		if (e->kind != (i == 0 ? HISTORY_SYSTEM : HISTORY_PROCESS))
			return 0;
	}
	return 1;
}

static history_file_result commit_sample(const history_sink *sink, const history_record *r,
										 history_entry *a, int64_t *last);

/*
 * A sample of an older build's shorter entries (HISTORY_ENTRY_SIZE_1_2):
 * read one by one through the window, each widened into its slot.
 */
static history_file_result
load_old_entries(window *w, const history_sink *sink, uint64_t off, const history_record *r,
				 history_entry *a, uint32_t na, history_entry *b, int64_t *last)
{
	char		old[sizeof(history_entry)];
	uint32_t	crc = 0;

	for (uint32_t i = 0; i < r->count; i++)
	{
		int			rc = window_read(w, off + sizeof(*r) + (uint64_t) i * w->entry_size, old,
									 w->entry_size);

		if (rc != 0)
			return rc < 0 ? HF_READ_ERROR : HF_SHORT;
		crc = history_crc32c(crc, old, w->entry_size);
		history_format_widen_entry(old, w->entry_size, i < na ? &a[i] : &b[i - na]);
	}
	if (record_crc(crc, r->kind, r->count) != r->crc || !sample_sane(a, na, b, r->count))
		return HF_CORRUPT;
	return commit_sample(sink, r, a, last);
}

/*
 * One sample record's payload, read into the ring's slots and checked: the
 * CRC, and the kinds of its entries. The system entry's kept is set from the
 * record, and its number made to follow *last (older files hold 0 in both).
 */
static history_file_result
load_sample(window *w, const history_sink *sink, uint64_t off, const history_record *r,
			int64_t *last)
{
	history_entry *a, *b = NULL;
	uint32_t	na = r->count;
	uint32_t	crc;
	int			rc;

	sink->reserve(sink->arg, r->count, &a, &na, &b);
	if (w->entry_size != sizeof(history_entry))
		return load_old_entries(w, sink, off, r, a, na, b, last);
	rc = window_read(w, off + sizeof(*r), a, (size_t) na * sizeof(history_entry));
	if (rc == 0 && b != NULL)
		rc = window_read(w, off + sizeof(*r) + (uint64_t) na * sizeof(history_entry), b,
						 (size_t) (r->count - na) * sizeof(history_entry));
	if (rc != 0)
		return rc < 0 ? HF_READ_ERROR : HF_SHORT;
	crc = history_crc32c(0, a, (size_t) na * sizeof(history_entry));
	if (b != NULL)
		crc = history_crc32c(crc, b, (size_t) (r->count - na) * sizeof(history_entry));
	if (record_crc(crc, r->kind, r->count) != r->crc || !sample_sane(a, na, b, r->count))
		return HF_CORRUPT;
	return commit_sample(sink, r, a, last);
}

/*
 * The system entry's kept from the record, and its number made to follow
 * *last (older files hold 0 in both); then the sample is the ring's.
 */
static history_file_result
commit_sample(const history_sink *sink, const history_record *r, history_entry *a, int64_t *last)
{
	a[0].u.sys.kept = (int32_t) (r->count - 1);
	/* its own number if it follows, and leaves room to count on; else the next */
	if (a[0].u.sys.sample <= *last || a[0].u.sys.sample - *last > HISTORY_MAX_NUMBER_STEP)
		a[0].u.sys.sample = *last + 1;
	*last = a[0].u.sys.sample;
	sink->commit(sink->arg, r->count);
	return HF_OK;
}

history_load_result
history_load(const history_source *src, const history_sink *sink, char *buf)
{
	history_load_result res;
	window		w = {src, buf, 0, 0, 0, 0, sizeof(history_crash), sizeof(history_entry)};
	char		head[sizeof(history_file_header)];
	size_t		head_len = src->size < sizeof(head) ? (size_t) src->size : sizeof(head);
	uint64_t	off = sizeof(history_file_header);
	uint64_t	fit = 0;		/* entries of the samples that could fit */
	int64_t		last = 0;		/* the last loaded sample's number */

	memset(&res, 0, sizeof(res));
	memset(head, 0, sizeof(head));
	if (head_len > 0 && window_read(&w, 0, head, head_len) < 0)
		res.status = HF_READ_ERROR;
	else
		res.status = history_format_check_header(head, head_len);
	if (res.status != HF_OK)
		goto out;
	w.crash_size = history_format_crash_size(head, head_len);
	w.entry_size = history_format_entry_size(head, head_len);
	res.crash_size = w.crash_size;

	/* first pass: every record's header; crash rows checked and kept */
	for (;;)
	{
		history_record r;
		size_t		payload;

		if (off == src->size)
		{
			res.status = HF_END;
			break;
		}
		sink->check(sink->arg);
		res.status = read_record(&w, off, &r, &payload);
		if (res.status != HF_OK)
			break;
		if (r.kind == RECORD_CRASH)
		{
			history_crash c;
			char		old[sizeof(history_crash)];

			/* a shorter row (1.2.0's) loads widened, its new fields 0 */
			if ((res.status = read_payload(&w, off, &r, old, w.crash_size)) != HF_OK)
				break;
			if (w.crash_size == sizeof(c))
				memcpy(&c, old, sizeof(c));
			else
				history_format_widen_crash(old, w.crash_size, w.entry_size, &c);
			sink->crash(sink->arg, &c);
			res.crashes++;
			res.tail_open = 0;
		}
		else if (r.kind == RECORD_GUARD)
		{
			history_guard_action a;

			/* says nothing of how the run ended: tail_open stays */
			if ((res.status = read_payload(&w, off, &r, &a, sizeof(a))) != HF_OK)
				break;
			/* its text fields as the reader expects them: NUL-terminated */
			a.usename[sizeof(a.usename) - 1] = '\0';
			a.datname[sizeof(a.datname) - 1] = '\0';
			a.application_name[sizeof(a.application_name) - 1] = '\0';
			a.query[sizeof(a.query) - 1] = '\0';
			if (sink->guard)
				sink->guard(sink->arg, &a);
			res.guard_actions++;
		}
		else if (r.kind == RECORD_SAMPLE)
		{
			if (r.count <= sink->capacity)
				fit += r.count;
			res.tail_open = 1;
		}
		else
			res.tail_open = 0;
		res.records++;
		off += sizeof(r) + payload;
	}
	res.good_end = off;
	/* how the last run ended is in the part that could not be read */
	if (res.status != HF_END)
		res.tail_open = 0;

	/* second pass: the newest samples that fit, into the ring */
	for (off = sizeof(history_file_header); off < res.good_end;)
	{
		history_record r;
		size_t		payload;
		history_file_result lr;

		sink->check(sink->arg);
		lr = read_record(&w, off, &r, &payload);
		if (lr != HF_OK)
		{
			/* the file changed under us: keep what was loaded */
			res.status = lr;
			res.good_end = off;
			res.tail_open = 0;
			break;
		}
		if (r.kind == RECORD_SAMPLE)
		{
			if (r.count > sink->capacity || fit > sink->capacity)
			{
				if (r.count <= sink->capacity)
					fit -= r.count;
				res.samples_dropped++;
			}
			else if ((lr = load_sample(&w, sink, off, &r, &last)) == HF_OK)
				res.samples_loaded++;
			else
			{
				/* what follows a damaged sample is not known */
				res.status = lr;
				res.good_end = off;
				res.tail_open = 0;
				break;
			}
		}
		off += sizeof(r) + payload;
	}
out:
	res.read_errno = w.read_errno;
	res.bytes_read = w.bytes_read;
	return res;
}
