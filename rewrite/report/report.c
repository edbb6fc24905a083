/*
 * report.c - what a run moves and how much history shrinks: the human
 * table (--report) and the JSON document (--report-json). Blob counts and
 * bytes are of distinct blobs (by id). The packed size of a blob the
 * source repository holds is what it takes there on disk (deltas
 * included), read once for all blobs (report_disk_sizes); only blobs the
 * rules make (pointers, split parts, files unlfs brings back), or a
 * stream without a repository, are estimated by deflating them with zlib
 * as git stores objects (a sample of the first 1 MiB, scaled; a split
 * part or a replace-text result as its delta against its path's last
 * one, rewrite/blob/estimate.c). A
 * dry run and the real run compute them the same way.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>
#include <zlib.h>

#include "../../rules/rules.h"
#include "../../stream/stream.h"
#include "report.h"

#define SAMPLE ((size_t)1 << 20)
#define LARGEST 10

struct zest {
	z_stream z;
	uint64_t in, out;
	int off;	/* the blob's size on disk is known: no estimate */
	unsigned char buf[64 << 10];
};

struct id_ent {
	struct oid id;
	UT_hash_handle hh;
};

struct path_ent {
	char *path;
	UT_hash_handle hh;
};

struct rule_stats {
	struct path_ent *paths;
	struct id_ent *blobs;
	uint64_t npaths, nblobs, bytes, packed;
};

struct split_stats_ent {
	char *path;
	uint64_t versions, bytes_before, bytes_after;
	struct path_ent *parts;
	uint64_t nparts;
	UT_hash_handle hh;
};

struct missing_ent {
	char oid[65];
	char *path;
};

struct replace_ent {
	char *what, *file, *text;
	size_t line, len;
	uint64_t replaced, changed;
};

struct disk_size {
	struct oid id;
	uint64_t disk;
};

struct largest {
	struct oid id;
	uint64_t size;
	char *path;
};

struct report {
	const char *txt, *json;	/* where the table and the document go */
	struct zest *z;
	struct id_ent *in, *out;
	uint64_t in_blobs, in_bytes, in_packed, out_bytes, out_packed;
	struct rule_stats *rules;
	size_t nrules;
	struct split_stats_ent *splits;
	struct largest top[LARGEST];
	size_t ntop;
	struct missing_ent *missing;	/* unlfs: LFS objects in no store */
	size_t nmissing, missing_alloc;
	struct replace_ent *repl;	/* replace-text, --replace-message */
	size_t nrepl;
	struct disk_size *disk;	/* sorted by id: the source's blobs */
	size_t ndisk, disk_alloc;
};

/* ---- the zlib estimate ---- */

struct zest *zest_new(void)
{
	struct zest *z = xcalloc(1, sizeof(*z));

	deflateInit(&z->z, Z_DEFAULT_COMPRESSION);
	return z;
}

void zest_free(struct zest *z)
{
	if (!z)
		return;
	deflateEnd(&z->z);
	free(z);
}

void zest_begin(struct zest *z)
{
	deflateReset(&z->z);
	z->in = z->out = 0;
	z->off = 0;
}

static void zest_run(struct zest *z, const void *p, size_t n, int flush)
{
	z->z.next_in = (Bytef *)(uintptr_t)p;
	z->z.avail_in = (uInt)n;
	do {
		z->z.next_out = z->buf;
		z->z.avail_out = sizeof(z->buf);
		deflate(&z->z, flush);
		z->out += sizeof(z->buf) - z->z.avail_out;
	} while (z->z.avail_out == 0);
}

void zest_feed(struct zest *z, const void *p, size_t n)
{
	if (z->off || z->in >= SAMPLE)
		return;
	if (n > SAMPLE - z->in)
		n = (size_t)(SAMPLE - z->in);
	z->in += n;
	zest_run(z, p, n, Z_NO_FLUSH);
}

uint64_t zest_end(struct zest *z, uint64_t size)
{
	if (z->off)
		return 0;	/* its size on disk counts instead */
	zest_run(z, NULL, 0, Z_FINISH);
	if (!z->in)
		return z->out;
	return (uint64_t)((double)z->out * (double)size / (double)z->in);
}

void report_est_begin(struct report *r, const struct oid *known)
{
	if (!r)
		return;
	zest_begin(r->z);
	r->z->off = report_knows(r, known);
}

void report_est_feed(struct report *r, const void *p, size_t n)
{
	if (r)
		zest_feed(r->z, p, n);
}

uint64_t report_est_end(struct report *r, uint64_t size)
{
	return r ? zest_end(r->z, size) : 0;
}

uint64_t report_est_buf(struct report *r, const void *p, size_t n)
{
	report_est_begin(r, NULL);
	report_est_feed(r, p, n);
	return report_est_end(r, n);
}

/* ---- the sizes on disk ---- */

static void disk_add(void *ctx, const struct oid *id, uint64_t disk)
{
	struct report *r = ctx;

	if (r->ndisk == r->disk_alloc) {
		r->disk_alloc = r->disk_alloc ? 2 * r->disk_alloc : 1024;
		r->disk = xrealloc(r->disk, r->disk_alloc * sizeof(*r->disk));
	}
	r->disk[r->ndisk].id = *id;
	r->disk[r->ndisk++].disk = disk;
}

static int by_id(const void *a, const void *b)
{
	return memcmp(a, b, OID_RAW);
}

int report_disk_sizes(struct report *r, const char *repo, struct err *e)
{
	char *gitdir = NULL;
	struct err ignored = ERR_INIT;

	if (!r)
		return 0;
	/* a stream filtered outside any repository: estimates only */
	if (gitcmd_git_dir(repo, &gitdir, &ignored) < 0)
		return 0;
	free(gitdir);
	if (odb_disk_sizes(repo, disk_add, r, e) < 0)
		return -1;
	if (r->ndisk)	/* an empty repository: no array at all */
		qsort(r->disk, r->ndisk, sizeof(*r->disk), by_id);
	return 0;
}

/* The blob's size on disk in the source, or est when it has none. */
static uint64_t packed(const struct report *r, const struct oid *id,
		       uint64_t est)
{
	const struct disk_size *d = r->ndisk ?
		bsearch(id, r->disk, r->ndisk, sizeof(*r->disk), by_id) : NULL;

	return d ? d->disk : est;
}

int report_knows(const struct report *r, const struct oid *id)
{
	return r && id && r->ndisk &&
	       bsearch(id, r->disk, r->ndisk, sizeof(*r->disk), by_id) != NULL;
}

/* ---- collection ---- */

static int id_add(struct id_ent **set, const struct oid *id)
{
	struct id_ent *en;

	HASH_FIND(hh, *set, id->hash, OID_RAW, en);
	if (en)
		return 0;
	en = xcalloc(1, sizeof(*en));
	en->id = *id;
	HASH_ADD(hh, *set, id.hash, OID_RAW, en);
	return 1;
}

static int path_add(struct path_ent **set, const char *path, size_t len)
{
	struct path_ent *en;

	HASH_FIND(hh, *set, path, len, en);
	if (en)
		return 0;
	en = xcalloc(1, sizeof(*en));
	en->path = xmemdup(path, len);
	HASH_ADD_KEYPTR(hh, *set, en->path, len, en);
	return 1;
}

struct report *report_new(const char *txt, const char *json)
{
	struct report *r;

	if (!txt && !json)
		return NULL;
	r = xcalloc(1, sizeof(*r));
	r->txt = txt;
	r->json = json;
	r->z = zest_new();
	return r;
}

void report_input_blob(struct report *r, const struct oid *id, uint64_t size,
		       uint64_t est)
{

	if (r && id_add(&r->in, id)) {
		r->in_blobs++;
		r->in_bytes += size;
		r->in_packed += packed(r, id, est);
	}
}

void report_output_blob(struct report *r, const struct oid *id, uint64_t size,
			uint64_t est)
{

	if (r && id_add(&r->out, id)) {
		r->out_bytes += size;
		r->out_packed += packed(r, id, est);
	}
}

void report_output_stored(struct report *r, uint64_t bytes)
{
	if (r)
		r->out_packed += bytes;
}

/* A blob seen at a path: the largest ones are listed with a path. */
void report_path(struct report *r, const char *path, size_t len,
		 const struct oid *id, uint64_t size)
{
	size_t i, at;

	if (!r)
		return;
	for (i = 0; i < r->ntop; i++)
		if (oid_eq(&r->top[i].id, id))
			return;
	if (r->ntop == LARGEST && size <= r->top[LARGEST - 1].size)
		return;
	if (r->ntop == LARGEST)
		free(r->top[--r->ntop].path);
	for (at = r->ntop; at > 0 && r->top[at - 1].size < size; at--)
		r->top[at] = r->top[at - 1];
	r->top[at].id = *id;
	r->top[at].size = size;
	r->top[at].path = xmemdup(path, len);
	r->ntop++;
}

void report_rule(struct report *r, size_t index, const char *path, size_t len,
		 const struct oid *id, uint64_t size, uint64_t est)
{
	struct rule_stats *st;

	if (!r)
		return;
	if (index >= r->nrules) {
		r->rules = xrealloc(r->rules, (index + 1) * sizeof(*r->rules));
		memset(r->rules + r->nrules, 0, (index + 1 - r->nrules) * sizeof(*r->rules));
		r->nrules = index + 1;
	}
	st = &r->rules[index];
	st->npaths += path_add(&st->paths, path, len);
	if (id_add(&st->blobs, id)) {
		st->nblobs++;
		st->bytes += size;
		st->packed += packed(r, id, est);
	}
}

void report_split(struct report *r, const char *path, size_t len,
		  uint64_t version_bytes, const char *part, size_t plen,
		  uint64_t part_bytes)
{
	struct split_stats_ent *s;

	if (!r)
		return;
	HASH_FIND(hh, r->splits, path, len, s);
	if (!s) {
		s = xcalloc(1, sizeof(*s));
		s->path = xmemdup(path, len);
		HASH_ADD_KEYPTR(hh, r->splits, s->path, len, s);
	}
	if (!part) {
		s->versions++;
		s->bytes_before += version_bytes;
		return;
	}
	s->nparts += path_add(&s->parts, part, plen);
	s->bytes_after += part_bytes;
}

void report_sizes(const struct report *r, uint64_t *bytes_before,
		  uint64_t *bytes_after, uint64_t *packed_before,
		  uint64_t *packed_after)
{
	*bytes_before = r ? r->in_bytes : 0;
	*bytes_after = r ? r->out_bytes : 0;
	*packed_before = r ? r->in_packed : 0;
	*packed_after = r ? r->out_packed : 0;
}

/* ---- writing ---- */

/*
 * Length of the valid UTF-8 sequence at s (1 to 4), or 0: the shortest
 * form only, no surrogate, nothing above U+10FFFF (what a JSON reader
 * decodes, RFC 3629).
 */
void report_lfs_missing(struct report *r, const char *oid, const char *path,
			size_t len)
{
	struct missing_ent *m;

	if (!r)
		return;
	if (r->nmissing == r->missing_alloc) {
		r->missing_alloc = r->missing_alloc ? 2 * r->missing_alloc : 16;
		r->missing = xrealloc(r->missing,
				      r->missing_alloc * sizeof(*r->missing));
	}
	m = &r->missing[r->nmissing++];
	snprintf(m->oid, sizeof(m->oid), "%s", oid);
	m->path = xmemdup(path, len);
}

void report_replace(struct report *r, const char *what, const char *file,
		    size_t line, const char *text, size_t len,
		    uint64_t replaced, uint64_t changed)
{
	struct replace_ent *x;

	if (!r)
		return;
	r->repl = xrealloc(r->repl, (r->nrepl + 1) * sizeof(*r->repl));
	x = &r->repl[r->nrepl++];
	x->what = xstrdup(what);
	x->file = xstrdup(file);
	x->text = xmemdup(text, len);
	x->line = line;
	x->len = len;
	x->replaced = replaced;
	x->changed = changed;
}

static size_t utf8_len(const unsigned char *s, size_t left)
{
	size_t n, i;

	if (s[0] < 0xc2 || s[0] > 0xf4)
		return 0;
	n = s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : 2;
	if (n > left)
		return 0;
	for (i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] > 0x9f) ||
	    (s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] > 0x8f))
		return 0;
	return n;
}

static int utf8_valid(const char *s, size_t len)
{
	size_t i, n;

	for (i = 0; i < len; i += n) {
		n = (unsigned char)s[i] < 0x80 ? 1 :
		    utf8_len((const unsigned char *)s + i, len - i);
		if (!n)
			return 0;
	}
	return 1;
}

/* A JSON string of s, which must be valid UTF-8 (utf8_valid). */
static void json_str(struct buf *out, const char *s, size_t len)
{
	size_t i;

	buf_addch(out, '"');
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\')
			buf_printf(out, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			buf_printf(out, "\\u%04x", c);
		else
			buf_addch(out, (char)c);
	}
	buf_addch(out, '"');
}

/*
 * "key":VALUE for a path (or pattern), which is bytes. Valid UTF-8 is a
 * JSON string; anything else is "key":null,"key_hex":"<each byte as two
 * lowercase hex digits>", so no byte is lost and caf\xe9 never reads as
 * the UTF-8 café (migrate(1): DRY RUNS, REPORTS, PROGRESS).
 */
void report_json_path(struct buf *out, const char *key, const char *s, size_t len)
{
	size_t i;

	buf_printf(out, "\"%s\":", key);
	if (utf8_valid(s, len)) {
		json_str(out, s, len);
		return;
	}
	buf_printf(out, "null,\"%s_hex\":\"", key);
	for (i = 0; i < len; i++)
		buf_printf(out, "%02x", (unsigned char)s[i]);
	buf_addch(out, '"');
}

/* The path as `git ls-files` shows it (core.quotePath=true), in tmp. */
static const char *shown(struct buf *tmp, const char *prefix, const char *s,
			 size_t len)
{
	buf_reset(tmp);
	buf_adds(tmp, prefix);
	stream_show_path(tmp, s, len);
	return tmp->ptr;
}

/* 1 when rule i placed no file path in the run. */
int report_rule_unmatched(const struct report *r, size_t i)
{
	return i >= r->nrules || r->rules[i].npaths == 0;
}

uint64_t report_rule_blobs(const struct report *r, size_t i)
{
	return i < r->nrules ? r->rules[i].nblobs : 0;
}

/* "pattern":VALUE for a rule (json_path), re: in front of a regex. */
void report_json_pattern(struct buf *out, const struct rule *rule)
{
	size_t plen;
	const char *pat = rules_rule_pattern(rule, &plen);

	if (rules_rule_is_regex(rule)) {
		struct buf re = BUF_INIT(BUF_MAX_DEFAULT);
		buf_printf(&re, "re:%.*s", (int)plen, pat);
		report_json_path(out, "pattern", re.ptr, re.len);
		buf_release(&re);
	} else {
		report_json_path(out, "pattern", pat, plen);
	}
}

/* A rule's size condition as bytes, " size>=N", " size<=N" or
 * " size N..M" (nothing without one): the table's rows of two rules of
 * one pattern differ by it. */
static void size_condition(struct buf *out, const struct rule *rule)
{
	uint64_t lo = 0, hi = UINT64_MAX;

	if (!rules_rule_size(rule, &lo, &hi))
		return;
	if (hi == UINT64_MAX)
		buf_printf(out, " size>=%llu", (unsigned long long)lo);
	else if (lo == 0)
		buf_printf(out, " size<=%llu", (unsigned long long)hi);
	else
		buf_printf(out, " size %llu..%llu", (unsigned long long)lo,
			   (unsigned long long)hi);
}

static void write_json(struct report *r, const struct report_totals *t,
		       const struct rules *rules, struct buf *out)
{
	struct split_stats_ent *s, *st;
	char hex[OID_HEX + 1];
	size_t i, n;

	buf_printf(out, "{\"version\":1,\n\"input\":{\"commits\":%llu,\"blobs\":%llu,"
		   "\"blob_bytes\":%llu,\"refs\":%llu},\n\"rules\":[",
		   (unsigned long long)t->commits, (unsigned long long)r->in_blobs,
		   (unsigned long long)r->in_bytes, (unsigned long long)t->refs);
	for (i = 0; rules && i < rules_count(rules); i++) {
		const struct rule *rule = rules_get(rules, i);
		struct rule_stats none = { 0 }, *st = i < r->nrules ? &r->rules[i] : &none;
		buf_printf(out, "%s\n {\"line\":%zu,", i ? "," : "",
			   rules_rule_line(rule));
		report_json_pattern(out, rule);
		if (rules_rule_size(rule, NULL, NULL)) {
			uint64_t lo = 0, hi = UINT64_MAX;

			rules_rule_size(rule, &lo, &hi);
			buf_printf(out, ",\"size_min\":%llu", (unsigned long long)lo);
			if (hi != UINT64_MAX)
				buf_printf(out, ",\"size_max\":%llu",
					   (unsigned long long)hi);
		}
		buf_printf(out, ",\"action\":\"%s\",\"paths\":%llu,\"blobs\":%llu,"
			   "\"bytes\":%llu,\"packed_bytes_estimate\":%llu}",
			   rules_action_name(rules_rule_action(rule)),
			   (unsigned long long)st->npaths, (unsigned long long)st->nblobs,
			   (unsigned long long)st->bytes, (unsigned long long)st->packed);
	}
	buf_adds(out, "],\n\"splits\":[");
	i = 0;
	HASH_ITER(hh, r->splits, s, st) {
		buf_adds(out, i++ ? ",\n {" : "\n {");
		report_json_path(out, "path", s->path, strlen(s->path));
		buf_printf(out, ",\"versions\":%llu,\"parts\":%llu,\"bytes_before\":%llu,"
			   "\"bytes_after\":%llu}", (unsigned long long)s->versions,
			   (unsigned long long)s->nparts,
			   (unsigned long long)s->bytes_before,
			   (unsigned long long)s->bytes_after);
	}
	buf_printf(out, "],\n\"history\":{\"blob_bytes_before\":%llu,\"blob_bytes_after\":%llu,"
		   "\"packed_estimate_before\":%llu,\"packed_estimate_after\":%llu,"
		   "\"estimate_note\":\"size on disk in the source (deltas included) "
		   "of the blobs it has; zlib deflate of the first 1 MiB, scaled, of "
		   "the others (a split part or a replace-text result: the delta "
		   "against its path's previous one, deflated, when less than half "
		   "of it; what migrate run stored itself: its packs' bytes)\"},\n"
		   "\"commits_rewritten\":%llu,\"refs_changed\":%llu,\n\"largest\":[",
		   (unsigned long long)r->in_bytes, (unsigned long long)r->out_bytes,
		   (unsigned long long)r->in_packed, (unsigned long long)r->out_packed,
		   (unsigned long long)t->rewritten, (unsigned long long)t->refs_changed);
	for (i = 0; i < r->ntop; i++) {
		buf_adds(out, i ? ",\n {" : "\n {");
		report_json_path(out, "path", r->top[i].path, strlen(r->top[i].path));
		buf_printf(out, ",\"bytes\":%llu,\"blob\":\"%s\"}",
			   (unsigned long long)r->top[i].size, oid_hex(&r->top[i].id, hex));
	}
	buf_adds(out, "],\n\"unmatched_rules\":[");
	for (i = 0, n = 0; rules && i < rules_count(rules); i++) {
		const struct rule *rule = rules_get(rules, i);

		if (!report_rule_unmatched(r, i))
			continue;
		buf_printf(out, "%s\n {\"line\":%zu,", n++ ? "," : "",
			   rules_rule_line(rule));
		report_json_path(out, "file", rules_rule_file(rule),
				 strlen(rules_rule_file(rule)));
		buf_addch(out, ',');
		report_json_pattern(out, rule);
		buf_printf(out, ",\"action\":\"%s\"}",
			   rules_action_name(rules_rule_action(rule)));
	}
	buf_adds(out, "],\n\"replacements\":[");
	for (i = 0; i < r->nrepl; i++) {
		const struct replace_ent *x = &r->repl[i];

		buf_printf(out, "%s\n {\"in\":\"%s\",", i ? "," : "", x->what);
		report_json_path(out, "file", x->file, strlen(x->file));
		buf_printf(out, ",\"line\":%zu,", x->line);
		report_json_path(out, "expression", x->text, x->len);
		buf_printf(out, ",\"replaced\":%llu,\"changed\":%llu}",
			   (unsigned long long)x->replaced,
			   (unsigned long long)x->changed);
	}
	buf_adds(out, "],\n\"lfs_missing\":[");
	for (i = 0; i < r->nmissing; i++) {
		buf_printf(out, "%s\n {\"oid\":\"%s\",", i ? "," : "",
			   r->missing[i].oid);
		report_json_path(out, "path", r->missing[i].path, strlen(r->missing[i].path));
		buf_addch(out, '}');
	}
	buf_adds(out, "]}\n");
}

const char *report_human(uint64_t n, char *buf, size_t size)
{
	if (n >= 1000000)
		snprintf(buf, size, "%.1f MB", (double)n / 1e6);
	else if (n >= 10000)
		snprintf(buf, size, "%.1f kB", (double)n / 1e3);
	else
		snprintf(buf, size, "%llu B", (unsigned long long)n);
	return buf;
}

static void write_table(struct report *r, const struct report_totals *t,
			const struct rules *rules, const char *rules_path,
			struct buf *out)
{
	struct split_stats_ent *s, *st;
	struct buf tmp = BUF_INIT(BUF_MAX_DEFAULT);
	char a[32], b[32];
	size_t i, n, plen;

	buf_printf(out, "input: %llu commits, %llu blobs (%s), %llu refs\n\n",
		   (unsigned long long)t->commits, (unsigned long long)r->in_blobs,
		   report_human(r->in_bytes, a, sizeof(a)), (unsigned long long)t->refs);
	if (rules) {
		buf_printf(out, "%-6s %-30s %-6s %8s %8s %12s %12s\n", "line", "pattern",
			   "action", "paths", "blobs", "bytes", "packed est.");
		for (i = 0; i < rules_count(rules); i++) {
			const struct rule *rule = rules_get(rules, i);
			struct rule_stats none = { 0 }, *rs = i < r->nrules ? &r->rules[i] : &none;
			const char *pat = rules_rule_pattern(rule, &plen);

			shown(&tmp, rules_rule_is_regex(rule) ? "re:" : "", pat, plen);
			size_condition(&tmp, rule);
			buf_printf(out, "%-6zu %-30s %-6s %8llu %8llu %12s %12s\n",
				   rules_rule_line(rule), tmp.ptr,
				   rules_action_name(rules_rule_action(rule)),
				   (unsigned long long)rs->npaths, (unsigned long long)rs->nblobs,
				   report_human(rs->bytes, a, sizeof(a)), report_human(rs->packed, b, sizeof(b)));
		}
		buf_addch(out, '\n');
		for (i = 0, n = 0; i < rules_count(rules); i++) {
			const struct rule *rule = rules_get(rules, i);
			const char *pat = rules_rule_pattern(rule, &plen);

			if (!report_rule_unmatched(r, i))
				continue;
			if (!n++)
				buf_adds(out, "rules that matched nothing:\n");
			buf_printf(out, "  %s:%zu %s\n",
				   rules_rule_file(rule) ? rules_rule_file(rule) : rules_path,
				   rules_rule_line(rule),
				   shown(&tmp, rules_rule_is_regex(rule) ? "re:" : "", pat, plen));
		}
		if (n)
			buf_addch(out, '\n');
	}
	HASH_ITER(hh, r->splits, s, st) {
		char c[32];
		buf_printf(out, "split %s: %llu versions (%s) into %llu parts (%s written)\n",
			   shown(&tmp, "", s->path, strlen(s->path)),
			   (unsigned long long)s->versions,
			   report_human(s->bytes_before, a, sizeof(a)), (unsigned long long)s->nparts,
			   report_human(s->bytes_after, c, sizeof(c)));
	}
	for (i = 0; i < r->nrepl; i++) {
		const struct replace_ent *x = &r->repl[i];

		if (!i || strcmp(x->file, r->repl[i - 1].file) ||
		    strcmp(x->what, r->repl[i - 1].what))
			buf_printf(out, "%sreplacements in %s (%s):\n%6s %10s %10s  %s\n",
				   i ? "\n" : "", x->what, x->file, "line",
				   "replaced", !strcmp(x->what, "blobs") ? "blobs" :
				   "messages", "expression");
		buf_printf(out, "%6zu %10llu %10llu  %s\n", x->line,
			   (unsigned long long)x->replaced,
			   (unsigned long long)x->changed,
			   shown(&tmp, "", x->text, x->len));
		if (i + 1 == r->nrepl)
			buf_addch(out, '\n');
	}
	buf_printf(out, "history blobs: %s -> %s; packed %s -> %s "
		   "(on disk in the source; new blobs as written, or estimated)\n",
		   report_human(r->in_bytes, a, sizeof(a)), report_human(r->out_bytes, b, sizeof(b)),
		   report_human(r->in_packed, a + 16, 16), report_human(r->out_packed, b + 16, 16));
	buf_printf(out, "commits rewritten: %llu of %llu; refs changed: %llu of %llu\n",
		   (unsigned long long)t->rewritten, (unsigned long long)t->commits,
		   (unsigned long long)t->refs_changed, (unsigned long long)t->refs);
	if (r->nmissing)
		buf_printf(out, "\nLFS objects in no store (pointers kept): %zu\n",
			   r->nmissing);
	for (i = 0; i < r->nmissing; i++)
		buf_printf(out, "  %s  %s\n", r->missing[i].oid,
			   shown(&tmp, "", r->missing[i].path, strlen(r->missing[i].path)));
	if (r->ntop)
		buf_adds(out, "\nlargest blobs that remain:\n");
	for (i = 0; i < r->ntop; i++)
		buf_printf(out, "  %12s  %s\n", report_human(r->top[i].size, a, sizeof(a)),
			   shown(&tmp, "", r->top[i].path, strlen(r->top[i].path)));
	buf_release(&tmp);
}

int report_write(struct report *r, const struct report_totals *t,
		 const struct rules *rules, const char *rules_path,
		 char **tmp_txt, char **tmp_json, struct err *e)
{
	struct buf out = BUF_INIT(SIZE_MAX / 2);
	int rc = 0;

	*tmp_txt = *tmp_json = NULL;
	if (!r)
		return 0;
	if (r->txt) {
		write_table(r, t, rules, rules_path, &out);
		if (!strcmp(r->txt, "-"))
			fwrite(out.ptr, 1, out.len, stderr);
		else
			rc = file_write_prepare(r->txt, &out, tmp_txt, e);
	}
	if (rc == 0 && r->json) {
		buf_reset(&out);
		write_json(r, t, rules, &out);
		rc = file_write_prepare(r->json, &out, tmp_json, e);
	}
	buf_release(&out);
	return rc;
}

static void paths_free(struct path_ent **set)
{
	struct path_ent *p, *t;

	HASH_ITER(hh, *set, p, t) {
		HASH_DEL(*set, p);
		free(p->path);
		free(p);
	}
}

static void ids_free(struct id_ent **set)
{
	struct id_ent *p, *t;

	HASH_ITER(hh, *set, p, t) {
		HASH_DEL(*set, p);
		free(p);
	}
}

void report_free(struct report *r)
{
	struct split_stats_ent *s, *st;
	size_t i;

	if (!r)
		return;
	zest_free(r->z);
	ids_free(&r->in);
	ids_free(&r->out);
	for (i = 0; i < r->nrules; i++) {
		paths_free(&r->rules[i].paths);
		ids_free(&r->rules[i].blobs);
	}
	free(r->rules);
	HASH_ITER(hh, r->splits, s, st) {
		HASH_DEL(r->splits, s);
		paths_free(&s->parts);
		free(s->path);
		free(s);
	}
	for (i = 0; i < r->ntop; i++)
		free(r->top[i].path);
	for (i = 0; i < r->nmissing; i++)
		free(r->missing[i].path);
	free(r->missing);
	for (i = 0; i < r->nrepl; i++) {
		free(r->repl[i].what);
		free(r->repl[i].file);
		free(r->repl[i].text);
	}
	free(r->repl);
	free(r->disk);
	free(r);
}
