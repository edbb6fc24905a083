/*
 * fuzz_filter.c - libFuzzer target for the whole filter, rw_filter(), with
 * a rule file: the rules, the stream reader, lfs/annex/drop/split, tree and
 * commit ids, the maps and the report together.
 *
 * Input: the rule file text, a NUL byte, then the fast-export stream (no
 * NUL: the whole input is the stream and there are no rules). Each input
 * runs twice, as dry runs (nothing stored): plainly, then with
 * --commit-map, --ref-map, --export-marks and --report-json, against a
 * throwaway repository made once per process with `git init` in a temp
 * dir (removed at exit), which serves as source, target and the place of
 * the LFS store. The stream is read from a temp file and written to
 * another.
 *
 * Checked, besides no crash, leak or hang (libFuzzer's -timeout):
 *  - a failure has a kind (usage, stream, I/O) and a message;
 *  - the output starts with "feature done"; it holds a `done` command,
 *    as its last, if and only if the run succeeded: read back with the
 *    stream reader, a successful output parses to its end, and a failed
 *    one has no `done` among the commands that parse;
 *  - the dry run stores nothing: the store directories (LFS and
 *    git-annex) are never created;
 *  - the maps and the report are there after a success (the commit map
 *    loads with cmap_load) and absent after a failure, and nothing else
 *    appears in the temp dir (no temp file left behind);
 *  - asking for the maps changes no byte of the stream: if the run with
 *    maps succeeds, the plain one does too, with the same output; and
 *    for a stream that gives every object itself (no from, merge or
 *    dataref by id or by name), the plain run succeeding means the run
 *    with maps succeeds. (Without maps an object that cannot be read
 *    only makes the filter pass the rest through unchanged; with them it
 *    is an error. In a self-contained stream no such object exists.)
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rewrite/engine/engine.h"
#include "rewrite/git/git.h"
#include "stream/stream.h"

static char dir[4096];
static struct buf repo, store, annex_dir, rules, in, out, cmap, refmap, marks, json;

/* Removes dir and everything below it. */
static void remove_tree(const char *d)
{
	DIR *dd = opendir(d);
	struct dirent *de;
	struct buf p = BUF_INIT(BUF_MAX_DEFAULT);
	struct stat st;

	while (dd && (de = readdir(dd))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		buf_reset(&p);
		buf_printf(&p, "%s/%s", d, de->d_name);
		if (lstat(p.ptr, &st) == 0 && S_ISDIR(st.st_mode))
			remove_tree(p.ptr);
		else
			unlink(p.ptr);
	}
	if (dd)
		closedir(dd);
	rmdir(d);
	buf_release(&p);
}

static void cleanup(void)
{
	remove_tree(dir);
}

static void path_in(struct buf *b, const char *name)
{
	buf_init(b, BUF_MAX_DEFAULT);
	if (buf_printf(b, "%s/%s", dir, name) < 0)
		abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *t = getenv("TMPDIR");
	struct err e = ERR_INIT;

	(void)argc;
	(void)argv;
	snprintf(dir, sizeof(dir), "%s/fuzz_filter.XXXXXX", t && *t ? t : "/tmp");
	if (!mkdtemp(dir))
		abort();
	atexit(cleanup);
	path_in(&repo, "repo");
	path_in(&store, "store");
	path_in(&annex_dir, "annex");
	path_in(&rules, "rules");
	path_in(&in, "in");
	path_in(&out, "out");
	path_in(&cmap, "commit-map");
	path_in(&refmap, "ref-map");
	path_in(&marks, "marks");
	path_in(&json, "report.json");
	if (gitcmd_runl(NULL, 1, NULL, &e, "init", "-q", repo.ptr, NULL) < 0) {
		fprintf(stderr, "fuzz_filter: %s\n", e.msg);
		abort();
	}
	return 0;
}

static void write_file(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "w");

	if (!f || fwrite(p, 1, n, f) != n || fclose(f) != 0)
		abort();
}

static void read_file(const char *path, struct buf *b)
{
	char chunk[65536];
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		abort();
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		if (buf_add(b, chunk, n) < 0)
			abort();
	fclose(f);
}

static int exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

/* The temp dir holds the files of this run, and nothing else. */
static void only_ours(int ids, int ok)
{
	const char *const always[] = { "repo", "rules", "in", "out" };
	const char *const maps[] = { "commit-map", "ref-map", "marks",
				     "report.json" };
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t i, seen = 0, want = 4 + (ids && ok ? 4 : 0);

	if (!d)
		abort();
	while ((de = readdir(d))) {
		int known = 0;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		for (i = 0; i < 4; i++)
			known |= !strcmp(de->d_name, always[i]) ||
				 (ids && ok && !strcmp(de->d_name, maps[i]));
		if (!known) {
			fprintf(stderr, "fuzz_filter: unexpected %s/%s\n", dir,
				de->d_name);
			abort();
		}
		seen++;
	}
	closedir(d);
	if (seen != want)
		abort();
}

/*
 * Reads the output back: 1 if it parses to its end with one `done`, the
 * last command; 0 if parsing stopped (an error, or a failed run's cut)
 * before any `done`. A `done` anywhere else aborts.
 */
static int read_back(const struct buf *o)
{
	struct stream_reader *r = stream_reader_new_mem(o->ptr, o->len, "out");
	struct stream_cmd c;
	struct err e = ERR_INIT;
	const char *p;
	size_t n;
	int rc, done = 0;

	stream_cmd_init(&c);
	while ((rc = stream_reader_next(r, &c, &e)) > 0) {
		if (done)
			abort();
		done = c.kind == STREAM_DONE;
		while (c.has_data && (rc = stream_reader_data(r, &p, &n, &e)) > 0)
			;
		if (rc < 0)
			break;
	}
	if (rc == 0 && done && stream_reader_offset(r) != o->len)
		abort();
	stream_cmd_release(&c);
	stream_reader_free(r);
	return rc == 0 && done;
}

/*
 * Whether the stream parses to its end and gives every object itself:
 * every from, merge and dataref is a mark, inline or absent (none by id
 * or by name, which would need the repository).
 */
static int self_contained(const char *p, size_t n)
{
	struct stream_reader *r = stream_reader_new_mem(p, n, "in");
	struct stream_cmd c;
	struct err e = ERR_INIT;
	const char *chunk;
	size_t i, len;
	int rc, ok = 1;

	stream_cmd_init(&c);
	while (ok && (rc = stream_reader_next(r, &c, &e)) > 0) {
		ok = c.from.kind != STREAM_REF_OID && c.from.kind != STREAM_REF_NAME &&
		     c.dataref.kind != STREAM_REF_OID &&
		     c.dataref.kind != STREAM_REF_NAME;
		for (i = 0; i < c.nmerges; i++)
			ok &= c.merges[i].kind != STREAM_REF_OID &&
			      c.merges[i].kind != STREAM_REF_NAME;
		while (c.has_data && (rc = stream_reader_data(r, &chunk, &len, &e)) > 0)
			;
		if (rc < 0)
			break;
	}
	stream_cmd_release(&c);
	stream_reader_free(r);
	return ok && rc == 0;
}

/* One dry run of rw_filter, with the maps and report (ids) or without;
 * the output in o. Returns what rw_filter returned. */
static int run(int has_rules, int ids, struct buf *o)
{
	struct rw_options opt = { 0 };
	struct err e = ERR_INIT;
	int fin, fout, r;

	fin = open(in.ptr, O_RDONLY | O_CLOEXEC);
	fout = open(out.ptr, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fin < 0 || fout < 0)
		abort();
	opt.rules = has_rules ? rules.ptr : NULL;
	opt.store = store.ptr;
	opt.annex_dir = annex_dir.ptr;	/* never made: a dry run */
	/* annex rules: the same UUID for both runs (else a new one each) */
	opt.annex_uuid = "01234567-89ab-4cde-8f01-23456789abcd";
	opt.source_repo = repo.ptr;
	opt.target_repo = repo.ptr;
	opt.input_name = "fuzz";
	opt.quiet = 1;
	opt.progress = -1;
	opt.dry_run = 1;
	opt.rewrite_message_ids = has_rules;
	if (ids) {
		opt.commit_map = cmap.ptr;
		opt.ref_map = refmap.ptr;
		opt.export_marks = marks.ptr;
		opt.report_json = json.ptr;
	}
	r = rw_filter(&opt, fin, fout, &e);
	close(fin);
	close(fout);

	if (r != 0 && r != -1)
		abort();
	if (r < 0 && (e.kind < ERR_USAGE || e.kind > ERR_IO || !e.msg[0]))
		abort();
	buf_reset(o);
	read_file(out.ptr, o);
	if (o->len && !buf_starts(o, "feature done\n"))
		abort();
	if (read_back(o) != (r == 0))
		abort();
	if (exists(store.ptr) || exists(annex_dir.ptr))
		abort();
	only_ours(ids, r == 0);
	if (ids && r == 0) {
		struct cmap *m = cmap_new();

		if (cmap_load(m, cmap.ptr, &e) < 0)
			abort();
		cmap_free(m);
		unlink(cmap.ptr);
		unlink(refmap.ptr);
		unlink(marks.ptr);
		unlink(json.ptr);
	}
	return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *nul = memchr(data, '\0', size);
	const char *stream = nul ? nul + 1 : (const char *)data;
	size_t tlen = nul ? (size_t)(nul - (const char *)data) : 0;
	size_t slen = nul ? size - tlen - 1 : size;
	struct buf plain = BUF_INIT(SIZE_MAX / 2), with = BUF_INIT(SIZE_MAX / 2);
	int r0, r1;

	write_file(rules.ptr, data, tlen);
	write_file(in.ptr, stream, slen);
	r0 = run(nul != NULL, 0, &plain);
	r1 = run(nul != NULL, 1, &with);
	/* the maps only add files: the same stream, and where nothing
	 * needs the repository, the same verdict */
	if (r1 == 0 && (r0 != 0 || plain.len != with.len ||
			memcmp(plain.ptr, with.ptr, plain.len)))
		abort();
	if (r0 == 0 && r1 != 0 && self_contained(stream, slen))
		abort();
	buf_release(&plain);
	buf_release(&with);
	return 0;
}
