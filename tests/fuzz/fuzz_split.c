/*
 * fuzz_split.c - libFuzzer target for split/: the incremental cache must
 * give exactly what a fresh cache gives, for arbitrary bytes.
 *
 * Input: byte 0 picks a spec, bytes 1..8 drive two edits, the rest is the
 * first version. The second and third versions are byte-level edits of the
 * one before (a deleted span and an inserted copy of some other span).
 * Each version is split with a long-lived cache (which copies the version
 * or takes the caller's buffer) and with a fresh one; the
 * parts (paths, bytes, order, head flag), the reassembly verdict and the
 * errors must agree, every byte must land in exactly one part, and each
 * `unchanged` flag must match a byte comparison with the previous result.
 * The list of changes (taken before the full listing is asked for, which
 * is built lazily) must hold exactly the parts whose flag is 0, with the
 * same bytes, and the vanished paths exactly those the previous result
 * had and this one has not. No part path may hold a component git
 * refuses (".git" under case folding, trailing dots and spaces, HFS+
 * ignorable code points, "git~N"; ".gitmodules", ".gitattributes",
 * ".lfsconfig") or one over 255 bytes.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "split/split.h"

static const struct {
	const char *re, *into, *head;
} specs[] = {
	{ "^CVE-(\\d{4})-", "data/CVE/list.{1}", "data/CVE/list.head" },
	{ "^CVE-(\\d{4})-(\\d+)", "data/CVE/{1}/{2}", NULL },
	{ "^(.)", "p/{1}", "h" },		/* every key shape, bad ones too */
	{ "^(?<k>[a-c]*)x?$", "d/{k}.txt", "d/head" },
	{ "^(\\w+) ", "w/{key}", NULL },
	{ "^K (.+)$", "k/{1}/x", "k/head" },	/* any key: reserved names */
};

/* An independent check of a component against git's forbidden names. */
static int forbidden(const char *c, size_t n)
{
	static const char *const names[] = { ".git", ".gitmodules",
					     ".gitattributes", ".lfsconfig" };
	char low[300];
	size_t i, k = 0;

	if (n > 255)
		return 1;
	for (i = 0; i < n; i++) {
		const unsigned char *u = (const unsigned char *)c + i;
		unsigned cp = 0;

		/* a well-formed three-byte UTF-8 sequence only: git's HFS+
		 * check reads nothing else as an ignorable code point */
		if (i + 2 < n && (u[0] & 0xf0) == 0xe0 && (u[1] & 0xc0) == 0x80 &&
		    (u[2] & 0xc0) == 0x80)
			cp = ((u[0] & 0x0fu) << 12) | ((u[1] & 0x3fu) << 6) | (u[2] & 0x3fu);
		if ((cp >= 0x200c && cp <= 0x200f) || (cp >= 0x202a && cp <= 0x202e) ||
		    (cp >= 0x206a && cp <= 0x206f) || cp == 0xfeff) {
			i += 2;
			continue;
		}
		if (u[0] == ':')
			break;
		low[k++] = (char)(u[0] >= 'A' && u[0] <= 'Z' ? u[0] + 32 : u[0]);
	}
	while (k && (low[k - 1] == '.' || low[k - 1] == ' '))
		k--;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (k == strlen(names[i]) && !memcmp(low, names[i], k))
			return 1;
	if (k > 4 && !memcmp(low, "git~", 4)) {
		for (i = 4; i < k && low[i] >= '0' && low[i] <= '9'; i++)
			;
		if (i == k)
			return 1;
	}
	return 0;
}

static void path_allowed(const char *p, size_t len)
{
	size_t i = 0;

	while (i <= len) {
		const char *slash = memchr(p + i, '/', len - i);
		size_t end = slash ? (size_t)(slash - p) : len;

		if (forbidden(p + i, end - i))
			abort();
		i = end + 1;
	}
}

struct copy {
	size_t n;
	char **path;
	struct buf *bytes;
	int *unchanged, *is_head;
	int reassembles;
};

static void copy_free(struct copy *c)
{
	size_t i;

	for (i = 0; i < c->n; i++) {
		free(c->path[i]);
		buf_release(&c->bytes[i]);
	}
	free(c->path);
	free(c->bytes);
	free(c->unchanged);
	free(c->is_head);
	memset(c, 0, sizeof(*c));
}

static void copy_take(struct copy *c, const struct split_result *r,
		      const char *d, size_t len)
{
	struct err e = ERR_INIT;
	size_t i, total = 0;

	copy_free(c);
	c->n = split_result_count(r);
	c->path = calloc(c->n + 1, sizeof(*c->path));
	c->bytes = calloc(c->n + 1, sizeof(*c->bytes));
	c->unchanged = calloc(c->n + 1, sizeof(int));
	c->is_head = calloc(c->n + 1, sizeof(int));
	for (i = 0; i < c->n; i++) {
		const struct split_part *p = split_result_part(r, i);

		path_allowed(p->path, p->path_len);
		c->path[i] = xmemdup(p->path, p->path_len);
		buf_init(&c->bytes[i], (size_t)1 << 30);
		if (split_part_copy(&c->bytes[i], p, &e) < 0 ||
		    c->bytes[i].len != p->size || p->size == 0)
			abort();
		c->unchanged[i] = p->unchanged;
		c->is_head[i] = p->is_head;
		if (p->is_head && i != 0)
			abort();
		total += p->size;
	}
	c->reassembles = split_result_reassembles(r);
	if (total != len)
		abort();
	if (c->reassembles) {
		size_t at = 0;

		for (i = 0; i < c->n; i++) {
			if (memcmp(d + at, c->bytes[i].ptr, c->bytes[i].len))
				abort();
			at += c->bytes[i].len;
		}
	}
}

static void same(const struct copy *a, const struct copy *b)
{
	size_t i;

	if (a->n != b->n || a->reassembles != b->reassembles)
		abort();
	for (i = 0; i < a->n; i++)
		if (strcmp(a->path[i], b->path[i]) ||
		    a->bytes[i].len != b->bytes[i].len ||
		    memcmp(a->bytes[i].ptr, b->bytes[i].ptr, a->bytes[i].len) ||
		    a->is_head[i] != b->is_head[i])
			abort();
}

static void flags_right(const struct copy *cur, const struct copy *prev)
{
	size_t i, j;

	for (i = 0; i < cur->n; i++) {
		int want = 0;

		for (j = 0; j < prev->n; j++)
			if (!strcmp(cur->path[i], prev->path[j])) {
				want = cur->bytes[i].len == prev->bytes[j].len &&
				       !memcmp(cur->bytes[i].ptr,
					       prev->bytes[j].ptr,
					       cur->bytes[i].len);
				break;
			}
		if (cur->unchanged[i] != want)
			abort();
	}
}

/* The change lists of r, copied (before r's full listing is built). */
static void changes_take(struct copy *c, struct copy *gone,
			 const struct split_result *r)
{
	struct err e = ERR_INIT;
	size_t i, len;

	copy_free(c);
	copy_free(gone);
	c->n = split_result_nchanged(r);
	c->path = calloc(c->n + 1, sizeof(*c->path));
	c->bytes = calloc(c->n + 1, sizeof(*c->bytes));
	for (i = 0; i < c->n; i++) {
		const struct split_part *p = split_result_changed(r, i);

		if (p->unchanged)
			abort();
		c->path[i] = xmemdup(p->path, p->path_len);
		buf_init(&c->bytes[i], (size_t)1 << 30);
		if (split_part_copy(&c->bytes[i], p, &e) < 0 ||
		    c->bytes[i].len != p->size)
			abort();
	}
	gone->n = split_result_nvanished(r);
	gone->path = calloc(gone->n + 1, sizeof(*gone->path));
	gone->bytes = calloc(gone->n + 1, sizeof(*gone->bytes));
	for (i = 0; i < gone->n; i++) {
		const char *path = split_result_vanished(r, i, &len);
		gone->path[i] = xmemdup(path, len);
	}
}

static size_t find_path(const struct copy *c, const char *path)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		if (!strcmp(c->path[i], path))
			return i;
	return (size_t)-1;
}

static void changes_right(const struct copy *chg, const struct copy *gone,
			  const struct copy *cur, const struct copy *prev)
{
	size_t i, j, want = 0;

	for (i = 0; i < cur->n; i++) {
		if (cur->unchanged[i])
			continue;
		want++;
		j = find_path(chg, cur->path[i]);
		if (j == (size_t)-1 || chg->bytes[j].len != cur->bytes[i].len ||
		    memcmp(chg->bytes[j].ptr, cur->bytes[i].ptr, cur->bytes[i].len))
			abort();
	}
	if (chg->n != want)
		abort();
	want = 0;
	for (i = 0; prev && i < prev->n; i++) {
		if (find_path(cur, prev->path[i]) != (size_t)-1)
			continue;
		want++;
		if (find_path(gone, prev->path[i]) == (size_t)-1)
			abort();
	}
	if (gone->n != want)
		abort();
}

/* v = v[0..at) + v[src..src+ins) + v[at+del..), all clamped. */
static void edit(struct buf *v, const uint8_t *k)
{
	struct buf t = BUF_INIT((size_t)1 << 30);
	size_t len = v->len;
	size_t at = len ? (k[0] | (size_t)k[1] << 8) % (len + 1) : 0;
	size_t del = k[2] % 8, src = len ? (k[3] * 131u) % len : 0;
	size_t ins = k[3] & 1 ? 0 : 1 + (k[3] >> 1) % 40;

	if (del > len - at)
		del = len - at;
	if (ins > len - src)
		ins = len - src;
	buf_add(&t, v->ptr, at);
	buf_add(&t, v->ptr + src, ins);
	buf_add(&t, v->ptr + at + del, len - at - del);
	buf_set(v, t.ptr, t.len);
	buf_release(&t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct split_spec *sp[sizeof(specs) / sizeof(specs[0])];
	struct split_cache *inc;
	struct copy prev = { 0 }, a = { 0 }, b = { 0 }, chg = { 0 }, gone = { 0 };
	struct buf v = BUF_INIT((size_t)1 << 30);
	size_t which, round;
	int had_prev = 0;

	if (size < 9)
		return 0;
	which = data[0] % (sizeof(specs) / sizeof(specs[0]));
	if (!sp[which]) {
		struct err e = ERR_INIT;
		if (split_spec_new(&sp[which], specs[which].re, specs[which].into,
				   specs[which].head, &e) < 0)
			abort();
	}
	inc = split_cache_new(sp[which]);
	buf_add(&v, data + 9, size - 9);
	for (round = 0; round < 3; round++) {
		struct split_cache *fresh = split_cache_new(sp[which]);
		const struct split_result *ri = NULL, *rf = NULL;
		struct err ei = ERR_INIT, ef = ERR_INIT;
		struct buf t = BUF_INIT((size_t)1 << 30);
		int xi;

		/* the incremental cache copies or takes the version (bit 7 of
		 * byte 0 and the round decide), the fresh one always copies */
		if ((data[0] >> 7 ^ round) & 1) {
			buf_add(&t, v.ptr, v.len);
			xi = split_run_take(inc, &t, &ri, &ei);
		} else {
			xi = split_run(inc, v.ptr, v.len, &ri, &ei);
		}
		int xf = split_run(fresh, v.ptr, v.len, &rf, &ef);

		if (xi != xf || (xi < 0 && strcmp(ei.msg, ef.msg)))
			abort();
		if (xi == 0) {
			changes_take(&chg, &gone, ri);
			copy_take(&a, ri, v.ptr, v.len);
			changes_right(&chg, &gone, &a, had_prev ? &prev : NULL);
			copy_take(&b, rf, v.ptr, v.len);
			same(&a, &b);
			if (had_prev)
				flags_right(&a, &prev);
			copy_take(&prev, ri, v.ptr, v.len);
		}
		had_prev = xi == 0;
		buf_release(&t);	/* the cache's previous buffer, or ours */
		split_cache_free(fresh);
		if (round < 2)
			edit(&v, data + 1 + round * 4);
	}
	copy_free(&prev);
	copy_free(&chg);
	copy_free(&gone);
	copy_free(&a);
	copy_free(&b);
	buf_release(&v);
	split_cache_free(inc);
	return 0;
}
