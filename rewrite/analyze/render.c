/*
 * render.c - what `migrate analyze` found, as a table (sizes as people
 * read them, paths as git ls-files shows them) and as a JSON document
 * (exact numbers, every byte of a path kept: report_json_path).
 */
#include <stdlib.h>
#include <string.h>

#include "../../rules/rules.h"
#include "../../stream/stream.h"
#include "../report/report.h"
#include "walk.h"

/* Extensions by bytes, then name. */
static int by_bytes(const void *x, const void *y)
{
	const struct aext *a = *(const struct aext *const *)x;
	const struct aext *b = *(const struct aext *const *)y;

	if (a->bytes != b->bytes)
		return a->bytes < b->bytes ? 1 : -1;
	return strcmp(a->name, b->name);
}

static const struct aext **sorted_exts(const struct analysis *a, size_t *n)
{
	const struct aext **v;
	const struct aext *x;

	*n = HASH_COUNT(a->exts);
	v = xmalloc((*n + 1) * sizeof(*v));
	*n = 0;
	for (x = a->exts; x; x = x->hh.next)
		v[(*n)++] = x;
	qsort(v, *n, sizeof(*v), by_bytes);
	return v;
}

/* How many of the n blobs the table lists. */
static size_t listed(const struct analysis *a, size_t n)
{
	return a->top && a->top < n ? a->top : n;
}

/* ---- the table ---- */

static const char *shown(struct buf *tmp, const char *s, size_t len)
{
	buf_reset(tmp);
	stream_show_path(tmp, s, len);
	return tmp->ptr;
}

static void text_blob(const struct analysis *a, const struct ablob *b,
		      struct buf *out, struct buf *tmp)
{
	char s[32], d[32], hex[OID_HEX + 1];
	size_t i;

	buf_printf(out, "  %10s %10s  %.12s  %-7s ", report_human(b->size, s, sizeof(s)),
		   report_human(b->disk, d, sizeof(d)), oid_hex(&b->id, hex),
		   b->present ? "present" : "deleted");
	for (i = 0; i < b->npaths; i++) {
		const struct apath *p = a->paths[b->paths[i]];
		buf_printf(out, "%s%s", i ? ", " : " ", shown(tmp, p->s, p->len));
	}
	buf_addch(out, '\n');
}

static void text_exts(const struct analysis *a, struct buf *out,
		      struct buf *tmp)
{
	const struct aext **v;
	char s[4][32];
	size_t i, n;

	v = sorted_exts(a, &n);
	buf_adds(out, "\nby extension (each version of a path once, as git lfs "
		 "migrate info counts; symlinks apart):\n");
	buf_printf(out, "  %-16s %8s %12s %12s %8s %12s %12s\n", "extension",
		   "files", "bytes", "on disk", "at tips", "tip bytes",
		   "history only");
	for (i = 0; i < n; i++)
		buf_printf(out, "  %-16s %8llu %12s %12s %8llu %12s %12s\n",
			   shown(tmp, v[i]->name, strlen(v[i]->name)),
			   (unsigned long long)v[i]->files,
			   report_human(v[i]->bytes, s[0], sizeof(s[0])),
			   report_human(v[i]->disk, s[1], sizeof(s[1])),
			   (unsigned long long)v[i]->tip_files,
			   report_human(v[i]->tip_bytes, s[2], sizeof(s[2])),
			   report_human(v[i]->bytes - v[i]->tip_bytes, s[3],
					sizeof(s[3])));
	free(v);
}

static void text_rules(const struct analysis *a, struct buf *out,
		       struct buf *tmp)
{
	char s[2][32];
	size_t i, plen;

	buf_printf(out, "\nwhat each rule would take (%s):\n", a->rules_path);
	buf_printf(out, "  %-6s %-30s %-7s %8s %8s %12s %12s\n", "line", "pattern",
		   "action", "paths", "blobs", "bytes", "on disk");
	for (i = 0; i < rules_count(a->rules); i++) {
		const struct rule *rule = rules_get(a->rules, i);
		const struct arule *st = &a->rule_stats[i];
		const char *pat = rules_rule_pattern(rule, &plen);

		buf_reset(tmp);
		if (rules_rule_is_regex(rule))
			buf_adds(tmp, "re:");
		stream_show_path(tmp, pat, plen);
		buf_printf(out, "  %-6zu %-30s %-7s %8llu %8llu %12s %12s\n",
			   rules_rule_line(rule), tmp->ptr,
			   rules_action_name(rules_rule_action(rule)),
			   (unsigned long long)st->paths, (unsigned long long)st->blobs,
			   report_human(st->bytes, s[0], sizeof(s[0])),
			   report_human(st->disk, s[1], sizeof(s[1])));
	}
	buf_printf(out, "\nafter the rules: %llu of %llu blobs remain (%s, %s on "
		   "disk)\n", (unsigned long long)a->remain_blobs,
		   (unsigned long long)a->reached,
		   report_human(a->remain_bytes, s[0], sizeof(s[0])),
		   report_human(a->remain_disk, s[1], sizeof(s[1])));
}

void analyze_text(const struct analysis *a, struct buf *out)
{
	struct buf tmp = BUF_INIT(BUF_MAX_DEFAULT);
	const struct ablob **v;
	char s[4][32];
	size_t i, n, k;

	buf_printf(out, "commits: %llu, refs: %llu, objects: %llu, trees read: %llu\n",
		   (unsigned long long)a->commits, (unsigned long long)a->refs,
		   (unsigned long long)a->objects, (unsigned long long)a->trees_read);
	buf_printf(out, "blobs in history: %llu (%s, %s on disk) at %zu paths; "
		   "in the object database: %zu (%s, %s on disk)\n",
		   (unsigned long long)a->reached,
		   report_human(a->reached_bytes, s[0], sizeof(s[0])),
		   report_human(a->reached_disk, s[1], sizeof(s[1])), a->npaths,
		   a->nblobs, report_human(a->all_bytes, s[2], sizeof(s[2])),
		   report_human(a->all_disk, s[3], sizeof(s[3])));
	text_exts(a, out, &tmp);
	v = walk_sorted_blobs(a, &n);
	buf_printf(out, "\nlargest blobs (%zu of %zu; present: at some ref's "
		   "tip):\n", listed(a, n), n);
	buf_printf(out, "  %10s %10s  %-12s  %-7s  %s\n", "bytes", "on disk",
		   "blob", "state", "paths");
	for (i = 0; i < listed(a, n); i++)
		text_blob(a, v[i], out, &tmp);
	if (a->rules) {
		text_rules(a, out, &tmp);
		for (i = k = 0; i < n && k < listed(a, a->remain_blobs); i++)
			if (v[i]->remains) {
				if (!k++)
					buf_adds(out, "largest blobs that remain:\n");
				text_blob(a, v[i], out, &tmp);
			}
	}
	free(v);
	buf_release(&tmp);
}

/* ---- the JSON document ---- */

static void json_blob(const struct analysis *a, const struct ablob *b,
		      struct buf *out)
{
	char hex[OID_HEX + 1];
	size_t i;

	buf_printf(out, "\n {\"blob\":\"%s\",\"bytes\":%llu,\"disk_bytes\":%llu,"
		   "\"present\":%s,\"paths\":[", oid_hex(&b->id, hex),
		   (unsigned long long)b->size, (unsigned long long)b->disk,
		   b->present ? "true" : "false");
	for (i = 0; i < b->npaths; i++) {
		const struct apath *p = a->paths[b->paths[i]];
		buf_adds(out, i ? ",{" : "{");
		report_json_path(out, "path", p->s, p->len);
		buf_addch(out, '}');
	}
	buf_adds(out, "]}");
}

static void json_exts(const struct analysis *a, struct buf *out)
{
	const struct aext **v;
	size_t i, n;

	v = sorted_exts(a, &n);
	buf_adds(out, "\"extensions\":[");
	for (i = 0; i < n; i++) {
		buf_adds(out, i ? ",\n {" : "\n {");
		report_json_path(out, "extension", v[i]->name, strlen(v[i]->name));
		buf_printf(out, ",\"files\":%llu,\"bytes\":%llu,\"disk_bytes\":%llu,"
			   "\"tip_files\":%llu,\"tip_bytes\":%llu}",
			   (unsigned long long)v[i]->files,
			   (unsigned long long)v[i]->bytes,
			   (unsigned long long)v[i]->disk,
			   (unsigned long long)v[i]->tip_files,
			   (unsigned long long)v[i]->tip_bytes);
	}
	buf_adds(out, "],\n");
	free(v);
}

static void json_rules(const struct analysis *a, const struct ablob **v,
		       size_t n, struct buf *out)
{
	size_t i, k;

	buf_adds(out, ",\n\"rules\":[");
	for (i = 0; i < rules_count(a->rules); i++) {
		const struct rule *rule = rules_get(a->rules, i);
		const struct arule *st = &a->rule_stats[i];

		buf_printf(out, "%s\n {\"line\":%zu,", i ? "," : "",
			   rules_rule_line(rule));
		report_json_pattern(out, rule);
		buf_printf(out, ",\"action\":\"%s\",\"paths\":%llu,\"blobs\":%llu,"
			   "\"bytes\":%llu,\"disk_bytes\":%llu}",
			   rules_action_name(rules_rule_action(rule)),
			   (unsigned long long)st->paths, (unsigned long long)st->blobs,
			   (unsigned long long)st->bytes, (unsigned long long)st->disk);
	}
	buf_printf(out, "],\n\"remaining\":{\"blobs\":%llu,\"bytes\":%llu,"
		   "\"disk_bytes\":%llu,\"largest\":[",
		   (unsigned long long)a->remain_blobs,
		   (unsigned long long)a->remain_bytes,
		   (unsigned long long)a->remain_disk);
	for (i = k = 0; i < n && k < listed(a, a->remain_blobs); i++)
		if (v[i]->remains) {
			buf_adds(out, k++ ? "," : "");
			json_blob(a, v[i], out);
		}
	buf_adds(out, "]}");
}

void analyze_json(const struct analysis *a, struct buf *out)
{
	const struct ablob **v;
	size_t i, n;

	buf_printf(out, "{\"version\":1,\n\"totals\":{\"commits\":%llu,\"refs\":%llu,"
		   "\"objects\":%llu,\"trees_read\":%llu,\"blobs\":%llu,"
		   "\"blob_bytes\":%llu,\"blob_disk_bytes\":%llu,\"paths\":%zu,"
		   "\"database_blobs\":%zu,\"database_blob_bytes\":%llu,"
		   "\"database_blob_disk_bytes\":%llu},\n",
		   (unsigned long long)a->commits, (unsigned long long)a->refs,
		   (unsigned long long)a->objects, (unsigned long long)a->trees_read,
		   (unsigned long long)a->reached,
		   (unsigned long long)a->reached_bytes,
		   (unsigned long long)a->reached_disk, a->npaths, a->nblobs,
		   (unsigned long long)a->all_bytes, (unsigned long long)a->all_disk);
	json_exts(a, out);
	v = walk_sorted_blobs(a, &n);
	buf_adds(out, "\"blobs\":[");
	for (i = 0; i < listed(a, n); i++) {
		buf_adds(out, i ? "," : "");
		json_blob(a, v[i], out);
	}
	buf_adds(out, "]");
	if (a->rules)
		json_rules(a, v, n, out);
	buf_adds(out, "}\n");
	free(v);
}
