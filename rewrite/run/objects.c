/*
 * objects.c - where the new objects go: the side repository fast-import writes, the source's objects borrowed with --to, the packs of files taken back joined.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run.h"

/*
 * The side repository fast-import writes into is made by `git init` and
 * has no config of its own: the source's settings of how objects are
 * stored (core.bigFileThreshold, pack.compression, core.compression) are
 * copied into it. When a rule is unlfs and the source sets none of them,
 * the files it brings back (whole files, big enough to have been in LFS,
 * media mostly) are stored as `git lfs migrate export` stores them: whole,
 * with no delta search against the blob before them in the stream
 * (another file's, as a rule: costly and rarely fruitful; `git gc` finds
 * the deltas later), and deflated at zlib's fastest level, which gives
 * the same size on data that is compressed already. fast-import of the
 * unlfs stream of the assets corpus (1.4 GB): 106 s as it was, 64 s
 * whole, 51 s whole and at level 1; 1.1 GB of objects each time.
 */
static const char *const side_keys[SIDE_KEYS][2] = {
	{ "core.bigFileThreshold", "1m" },
	{ "pack.compression", "1" },
	{ "core.compression", NULL },
};

void run_side_config_prepare(struct run *r)
{
	struct err ignored = ERR_INIT;
	int i, own = 0;

	for (i = 0; i < SIDE_KEYS; i++) {
		char *v = NULL;

		if (run_git_line(&v, r->o.repo, &ignored, "config", "--get",
			     side_keys[i][0], (char *)NULL) == 0 && *v) {
			r->side_config[i] = v;
			own = 1;
		} else {
			free(v);
		}
	}
	r->own_threshold = r->side_config[0] != NULL;
	for (i = 0; !own && r->unlfs && i < SIDE_KEYS; i++)
		if (side_keys[i][1])
			r->side_config[i] = xstrdup(side_keys[i][1]);
}

/* <state>/import.git: a bare repository whose objects directory is the
 * target's, so that fast-import's objects land where they belong and its
 * refs nowhere near the target's. Its HEAD names a branch no stream
 * writes, so that a stream's `commit HEAD` (a detached HEAD) stays apart. */
int run_side_create(struct run *r, struct err *e)
{
	char *objects = NULL, *link = NULL;
	int i, rc = run_git_line(&objects, r->dst, e, "rev-parse", "--path-format=absolute",
			  "--git-path", "objects", (char *)NULL);

	r->side = path_join(r->state, "import.git");
	if (rc == 0)
		rc = gitcmd_runl(NULL, 1, NULL, e, "init", "-q", "--bare", r->side,
				 (char *)NULL);
	link = path_join(r->side, "objects");
	if (rc == 0) {
		/* git init made empty objects/{info,pack}; the link replaces them */
		char *info = path_join(link, "info"), *pack = path_join(link, "pack");
		rmdir(info);
		rmdir(pack);
		free(info);
		free(pack);
		if (rmdir(link) < 0)
			rc = err_errno(e, ERR_IO, "%s: cannot remove", link);
	}
	if (rc == 0 && symlink(objects, link) < 0)
		rc = err_errno(e, ERR_IO, "%s: cannot link to %s", link, objects);
	if (rc == 0)
		rc = gitcmd_runl(r->side, 1, NULL, e, "symbolic-ref", "HEAD",
				 SIDE_HEAD, (char *)NULL);
	if (rc == 0)
		rc = gitcmd_runl(r->side, 1, NULL, e, "config", "gc.auto", "0",
				 (char *)NULL);
	for (i = 0; rc == 0 && i < SIDE_KEYS; i++)
		if (r->side_config[i])
			rc = gitcmd_runl(r->side, 1, NULL, e, "config",
					 side_keys[i][0], r->side_config[i],
					 (char *)NULL);
	r->dst_objects = objects;
	free(link);
	return rc;
}

/* The absolute objects directory of the repository at dir (caller
 * frees). */
static int objects_dir(char **out, const char *dir, struct err *e)
{
	return run_git_line(out, dir, e, "rev-parse", "--path-format=absolute",
			"--git-path", "objects", (char *)NULL);
}

/*
 * --to: the target borrows the source's objects through
 * objects/info/alternates while fast-import writes into it, since the
 * stream names every blob no rule changed by id (--no-data). What the file
 * held before is kept (without a line of ours an interrupted run left) and
 * put back by unborrow; dissociate makes the target self-contained.
 */
int run_borrow_objects(struct run *r, struct err *e)
{
	struct buf text = BUF_INIT(SIZE_MAX / 2);
	char *dst = NULL, *src = NULL, *info = NULL, *line, *nl;
	int rc = objects_dir(&dst, r->dst, e);

	if (rc == 0)
		rc = objects_dir(&src, r->o.repo, e);
	if (rc == 0) {
		info = path_join(dst, "info");
		if (mkdir(info, 0777) < 0 && errno != EEXIST)
			rc = err_errno(e, ERR_IO, "%s: cannot create", info);
	}
	if (rc == 0) {
		r->alternates = path_join(info, "alternates");
		rc = file_read(r->alternates, &text, e) < 0 ? -1 : 0;
	}
	for (line = text.ptr; rc == 0 && (nl = strchr(line, '\n')); line = nl + 1)
		if ((size_t)(nl - line) != strlen(src) || memcmp(line, src, strlen(src)))
			buf_add(&r->alt_before, line, (size_t)(nl - line + 1));
	r->alt_had = r->alt_before.len > 0;
	buf_reset(&text);
	if (rc == 0) {
		buf_add(&text, r->alt_before.ptr, r->alt_before.len);
		buf_printf(&text, "%s\n", src);
		rc = file_write(r->alternates, &text, e);
	}
	if (rc < 0) {
		free(r->alternates);
		r->alternates = NULL;
	}
	buf_release(&text);
	free(dst);
	free(src);
	free(info);
	return rc;
}

/* The target's alternates as they were before borrow_objects. */
int run_unborrow(struct run *r, struct err *e)
{
	int rc = 0;

	if (!r->alternates)
		return 0;
	if (r->alt_had)
		rc = file_write(r->alternates, &r->alt_before, e);
	else if (unlink(r->alternates) < 0 && errno != ENOENT)
		rc = err_errno(e, ERR_IO, "%s: cannot remove", r->alternates);
	if (rc == 0) {
		free(r->alternates);
		r->alternates = NULL;
	}
	return rc;
}

static void repack_args(struct gitargv *a)
{
	gitargv_push(a, "repack");
	gitargv_push(a, "-a");
	gitargv_push(a, "-d");
	gitargv_push(a, "-q");
}

void run_dissociate_start(void *arg)
{
	struct run *r = arg;
	struct gitargv a = GITARGV_INIT;
	struct err ignored = ERR_INIT;

	if (!r->alternates || r->repack)
		return;
	run_phase(&r->o, "checking out the work tree, beside git repack -a -d "
		  "packing the new repository on its own");
	repack_args(&a);
	/* not started: run_dissociate runs it after the check-out */
	if (gitcmd_spawn(&r->repack, r->dst, &a, -1, -1, &ignored) < 0)
		r->repack = 0;
	gitargv_clear(&a);
}

/*
 * --to, after the refs moved: one `git repack -a -d` copies what the
 * target borrowed into one pack (reusing the source's deltas), then the
 * alternate goes: the result depends on nothing and needs no gc.
 */
int run_dissociate(struct run *r, struct err *e)
{
	struct gitargv a = GITARGV_INIT;
	int rc;

	if (!r->alternates)
		return 0;
	if (r->repack) {
		rc = gitcmd_wait(r->repack, e);
		r->repack = 0;
		if (rc > 0)
			rc = err_set(e, ERR_IO, "git -C %s repack -a -d -q failed "
				     "(exit status %d)", r->dst, rc);
	} else {
		run_phase(&r->o, "packing the new repository on its own (git repack -a -d)");
		repack_args(&a);
		rc = gitcmd_ok(r->dst, &a, NULL, NULL, e);
		gitargv_clear(&a);
	}
	if (rc == 0)
		rc = run_unborrow(r, e);
	if (rc < 0) {
		size_t n = strlen(e->msg);
		snprintf(e->msg + n, sizeof(e->msg) - n, "; the new history is "
			 "in %s, but it still borrows objects from the source "
			 "through %s: run `git -C %s repack -a -d` and remove "
			 "that file", r->dst, r->alternates, r->dst);
	}
	return rc;
}

/* 1 when name is a pack's name (40 hex digits) and its .pack and .idx are
 * in the target. */
static int pack_written(const struct run *r, const char *name, size_t len)
{
	struct buf path = BUF_INIT(SIZE_MAX / 2);
	struct oid id;
	int ok;

	if (oid_from_hex(&id, name, len) < 0)
		return 0;
	buf_printf(&path, "%s/pack/pack-%.*s.pack", r->dst_objects, (int)len, name);
	ok = file_exists(path.ptr);
	buf_reset(&path);
	buf_printf(&path, "%s/pack/pack-%.*s.idx", r->dst_objects, (int)len, name);
	ok = ok && file_exists(path.ptr);
	buf_release(&path);
	return ok;
}

/*
 * unlfs: the files taken back went into packs of their own, one each
 * (rewrite/blob/pool.c), while fast-import wrote the rest. One `git
 * pack-objects` now copies them into one pack (their deflated data as it
 * is: no delta search, no second deflate; more than one where the
 * repository's pack.packSizeLimit says so) and the small ones go. With
 * --to, dissociate's `git repack -a -d` then copies that pack as it is:
 * it tries no delta between two whole objects of one pack, while the
 * small packs had it search deltas among all the files (on the assets
 * corpus 31 s of the run's 47 s, for 436 MB instead of 1,147 MB; a cost
 * that grows with the files, which a later `git gc --aggressive` can
 * still pay when wanted). The list then names the joined pack: until the
 * refs move (run_all, or recover finishing a journal) it is what a run
 * that fails or is killed drops (clean_all).
 */
int run_pack_together(struct run *r, struct err *e)
{
	struct buf list = BUF_INIT(SIZE_MAX / 2), ids = BUF_INIT(SIZE_MAX / 2);
	struct buf made = BUF_INIT(BUF_MAX_DEFAULT), joined = BUF_INIT(SIZE_MAX / 2);
	struct gitargv a = GITARGV_INIT;
	char *line, *nl;
	size_t n = 0;
	int rc;

	if (!r->packs_list)
		return 0;
	rc = file_read(r->packs_list, &list, e) < 0 ? -1 : 0;
	for (line = list.ptr; rc == 0 && (nl = strchr(line, '\n')); line = nl + 1) {
		buf_add(&ids, line, OID_HEX);
		buf_addch(&ids, '\n');
		n++;
	}
	if (rc == 0 && n > 1) {
		run_phase(&r->o, "packing the files taken back from LFS together");
		/* small mmap windows: the copy reads each pack once, and
		 * git's defaults would map all of them at once */
		gitargv_push(&a, "-c");
		gitargv_push(&a, "core.packedGitWindowSize=16m");
		gitargv_push(&a, "-c");
		gitargv_push(&a, "core.packedGitLimit=128m");
		gitargv_push(&a, "pack-objects");
		gitargv_push(&a, "-q");
		gitargv_push(&a, "--window=0");
		gitargv_pushf(&a, "%s/pack/pack", r->dst_objects);
		rc = gitcmd_ok(r->dst, &a, &ids, &made, e);
		/* a line per pack it wrote: each is listed before the small
		 * ones go, so that a run killed now drops it too */
		for (line = made.ptr; rc == 0 && *line; line = nl + 1) {
			nl = strchr(line, '\n');
			if (!nl || !pack_written(r, line, (size_t)(nl - line))) {
				rc = err_set(e, ERR_IO, "git pack-objects said "
					     "'%s', not the names of packs it "
					     "wrote in %s/pack", made.ptr,
					     r->dst_objects);
				break;
			}
			buf_printf(&joined, "%.*s %s/pack/pack-%.*s\n",
				   (int)(nl - line), line, r->dst_objects,
				   (int)(nl - line), line);
		}
		if (rc == 0 && !joined.len)
			rc = err_set(e, ERR_IO, "git pack-objects wrote no pack");
		if (rc == 0) {
			buf_add(&list, joined.ptr, joined.len);
			rc = file_write(r->packs_list, &list, e);
		}
		if (rc == 0) {
			run_drop_packs(r->packs_list, &made);
			rc = file_write(r->packs_list, &joined, e);
		}
	}
	gitargv_clear(&a);
	buf_release(&list);
	buf_release(&ids);
	buf_release(&made);
	buf_release(&joined);
	return rc;
}

/* The packs in objects/pack that git sees (those with an .idx), by name
 * ("pack-<hex>"), a line each. */
static int pack_names(const char *objects, struct buf *out, struct err *e)
{
	char *dir = path_join(objects, "pack");
	DIR *d = opendir(dir);
	struct dirent *de;
	int rc = 0;

	if (!d) {
		if (errno != ENOENT)
			rc = err_errno(e, ERR_IO, "%s: cannot read", dir);
		free(dir);
		return rc;
	}
	while ((de = readdir(d))) {
		size_t n = strlen(de->d_name);

		if (n > 9 && !strncmp(de->d_name, "pack-", 5) &&
		    !strcmp(de->d_name + n - 4, ".idx"))
			buf_printf(out, "%.*s\n", (int)(n - 4), de->d_name);
	}
	closedir(d);
	free(dir);
	return 0;
}

int run_packs_before(struct run *r, struct err *e)
{
	buf_init(&r->packs_before, SIZE_MAX / 2);
	return pack_names(r->dst_objects, &r->packs_before, e);
}

/* Whether the line name (with its LF) is one of text's lines. */
static int has_line(const struct buf *text, const char *name, size_t len)
{
	const char *p = text->ptr, *end = text->ptr + text->len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);

		if (n == len && !memcmp(p, name, len))
			return 1;
		p += n + 1;
	}
	return 0;
}

/* The one pack fast-import wrote (objects/pack/pack-<hex>, without
 * suffix) in *out; 0 when there is not exactly one new pack that is
 * not one of the unlfs packs or the filter writer's. */
static int import_pack(struct run *r, char **out, struct err *e)
{
	struct buf now = BUF_INIT(SIZE_MAX / 2), unlfs = BUF_INIT(SIZE_MAX / 2);
	char *line, *nl, *found = NULL;
	int n = 0, rc = pack_names(r->dst_objects, &now, e);

	if (rc == 0 && r->packs_list &&
	    file_read(r->packs_list, &unlfs, e) < 0)
		rc = -1;
	/* the writer's packs are not fast-import's either */
	if (rc == 0 && r->made_packs && file_read(r->made_packs, &unlfs, e) < 0)
		rc = -1;
	for (line = now.ptr; rc == 0 && (nl = strchr(line, '\n')); line = nl + 1) {
		size_t len = (size_t)(nl - line);

		*nl = '\0';
		if (has_line(&r->packs_before, line, len) ||
		    (unlfs.len && strstr(unlfs.ptr, line)))
			continue;
		n++;
		free(found);
		found = xstrdup(line);
	}
	if (rc == 0 && n == 1) {
		struct buf p = BUF_INIT(PATH_MAX);

		buf_printf(&p, "%s/pack/%s", r->dst_objects, found);
		*out = buf_detach(&p, NULL);
	}
	free(found);
	buf_release(&now);
	buf_release(&unlfs);
	return rc < 0 ? -1 : (n == 1);
}

static int oid_cmp(const void *a, const void *b)
{
	return memcmp(a, b, OID_RAW);
}

/* One `git pack-objects` of the objects listed in in (a line each, an id
 * and maybe a path) into the target's objects/pack; its name checked. */
static int pack_list(struct run *r, const struct buf *in, int search,
		     struct err *e)
{
	struct gitargv a = GITARGV_INIT;
	struct buf made = BUF_INIT(BUF_MAX_DEFAULT);
	int rc;

	gitargv_push(&a, "pack-objects");
	gitargv_push(&a, "-q");
	if (search) {
		/* one candidate each (git's window counts the object
		 * itself): sorted by path hint, type and size, the one next
		 * to a version is the version of the same path just larger,
		 * which is all a record file's deltas need */
		gitargv_push(&a, "--no-reuse-delta");
		gitargv_push(&a, "--window=2");
	}
	gitargv_pushf(&a, "%s/pack/pack", r->dst_objects);
	rc = gitcmd_ok(r->dst, &a, in, &made, e);
	gitcmd_chomp(&made);
	if (rc == 0 && !pack_written(r, made.ptr, made.len))
		rc = err_set(e, ERR_IO, "git pack-objects said '%s', not the "
			     "name of a pack it wrote in %s/pack", made.ptr,
			     r->dst_objects);
	gitargv_clear(&a);
	buf_release(&made);
	return rc;
}

/* The ids of pack's index (its path without suffix): into idx, *ids
 * pointing at its sorted table of *n. */
static int pack_ids(const char *pack, struct buf *idx,
		    const unsigned char **ids, uint32_t *n, struct err *e)
{
	char *path = xmalloc(strlen(pack) + sizeof(".idx"));
	int rc;

	sprintf(path, "%s.idx", pack);
	buf_reset(idx);
	rc = file_read(path, idx, e) < 0 ||
	     pack_idx_parse((const unsigned char *)idx->ptr, idx->len, n, e) < 0 ?
	     -1 : 0;
	*ids = (const unsigned char *)idx->ptr + 8 + 1024;
	free(path);
	return rc;
}

/* Removes a pack (its path without suffix), its .idx first: a pack
 * without one is not git's. */
static int pack_remove(const char *pack, struct err *e)
{
	static const char *const ext[] = { ".idx", ".pack", ".rev" };
	char *path = xmalloc(strlen(pack) + sizeof(".pack"));
	size_t k;
	int rc = 0;

	for (k = 0; rc == 0 && k < sizeof(ext) / sizeof(ext[0]); k++) {
		sprintf(path, "%s%s", pack, ext[k]);
		if (unlink(path) < 0 && errno != ENOENT)
			rc = err_errno(e, ERR_IO, "%s: cannot remove", path);
	}
	free(path);
	return rc;
}

/* The n ids of a pack's table not among the sorted mine, a line each
 * into out. */
static void not_mine(const unsigned char *ids, uint32_t n,
		     const unsigned char *mine, size_t nmine, struct buf *out)
{
	char hex[OID_HEX + 1];
	uint32_t i;

	for (i = 0; i < n; i++) {
		struct oid o;

		if (bsearch(ids + (size_t)i * OID_RAW, mine, nmine, OID_RAW, oid_cmp))
			continue;
		memcpy(o.hash, ids + (size_t)i * OID_RAW, OID_RAW);
		buf_printf(out, "%s\n", oid_hex(&o, hex));
	}
}

int run_pack_new_blobs(struct run *r, struct err *e)
{
	struct buf list = BUF_INIT(SIZE_MAX / 2), idx = BUF_INIT(SIZE_MAX / 2);
	struct buf blobs = BUF_INIT(SIZE_MAX / 2), rest = BUF_INIT(SIZE_MAX / 2);
	struct buf made = BUF_INIT(SIZE_MAX / 2);
	struct buf *midx = NULL;	/* the index of each made pack */
	unsigned char *mine = NULL;	/* the ids of blobs, sorted */
	const unsigned char *ids;
	char *pack = NULL, *line, *nl, **mpack = NULL;
	uint32_t n = 0, *mn = NULL;
	size_t nmine = 0, nmade = 0, k;
	int rc, imported;

	if (!r->new_blobs || (rc = file_read(r->new_blobs, &list, e)) < 0)
		return r->new_blobs ? -1 : 0;
	if (!list.len)
		goto done;
	/* the parts are in fast-import's pack, or in the writer's */
	if (r->made_packs && (rc = file_read(r->made_packs, &made, e)) < 0)
		goto done;
	for (line = made.ptr; (nl = strchr(line, '\n')); line = nl + 1) {
		char *sp = memchr(line, ' ', (size_t)(nl - line));

		*nl = '\0';
		if (!sp)
			continue;
		mpack = xrealloc(mpack, (nmade + 1) * sizeof(*mpack));
		midx = xrealloc(midx, (nmade + 1) * sizeof(*midx));
		mn = xrealloc(mn, (nmade + 1) * sizeof(*mn));
		mpack[nmade] = sp + 1;
		buf_init(&midx[nmade], SIZE_MAX / 2);
		rc = pack_ids(sp + 1, &midx[nmade], &ids, &mn[nmade], e);
		nmade++;
		if (rc < 0)
			goto done;
	}
	if ((rc = imported = import_pack(r, &pack, e)) < 0)
		goto done;
	if (imported && (rc = pack_ids(pack, &idx, &ids, &n, e)) < 0)
		goto done;
	/* the listed blobs written (a blob the source had is not; a name
	 * given twice, pack-objects takes once) */
	mine = xmalloc(list.len / OID_HEX * OID_RAW + OID_RAW);
	for (line = list.ptr; (nl = strchr(line, '\n')); line = nl + 1) {
		struct oid id;
		int in = 0;

		if (oid_from_hex(&id, line, OID_HEX) < 0)
			continue;
		in = imported && bsearch(id.hash, ids, n, OID_RAW, oid_cmp);
		for (k = 0; !in && k < nmade; k++)
			in = !!bsearch(id.hash, midx[k].ptr + 8 + 1024, mn[k],
				       OID_RAW, oid_cmp);
		if (!in)
			continue;
		buf_add(&blobs, line, (size_t)(nl - line + 1));
		memcpy(mine + nmine++ * OID_RAW, id.hash, OID_RAW);
	}
	if (!blobs.len)
		goto done;
	qsort(mine, nmine, OID_RAW, oid_cmp);
	run_phase(&r->o, "packing the split parts again, with deltas between the versions of each");
	if ((rc = pack_list(r, &blobs, 1, e)) < 0)
		goto done;
	/* fast-import's pack and the writer's: the rest (commits, trees,
	 * other blobs) packed as it is, its deltas kept, then they go */
	if (imported)
		not_mine(ids, n, mine, nmine, &rest);
	for (k = 0; k < nmade; k++)
		not_mine((const unsigned char *)midx[k].ptr + 8 + 1024, mn[k],
			 mine, nmine, &rest);
	if (rest.len && (rc = pack_list(r, &rest, 0, e)) < 0)
		goto done;
	if (imported && (rc = pack_remove(pack, e)) < 0)
		goto done;
	for (k = 0; k < nmade; k++)
		if ((rc = pack_remove(mpack[k], e)) < 0)
			goto done;
done:
	for (k = 0; k < nmade; k++)
		buf_release(&midx[k]);
	free(midx);
	free(mpack);
	free(mn);
	free(mine);
	free(pack);
	buf_release(&list);
	buf_release(&idx);
	buf_release(&made);
	buf_release(&blobs);
	buf_release(&rest);
	return rc < 0 ? -1 : 0;
}

int run_join_made_start(struct run *r, struct err *e)
{
	struct buf list = BUF_INIT(SIZE_MAX / 2), ids = BUF_INIT(SIZE_MAX / 2);
	struct buf idx = BUF_INIT(SIZE_MAX / 2), parts = BUF_INIT(SIZE_MAX / 2);
	struct gitargv a = GITARGV_INIT;
	const unsigned char *tab;
	char hex[OID_HEX + 1], *line, *nl, *in = NULL, *out = NULL;
	uint32_t n, i;
	size_t packs = 0;
	int rc = 0, fdin = -1, fdout = -1;

	if (!r->made_packs || r->o.to || r->o.f.dry_run)
		return 0;
	/* split parts: run_pack_new_blobs packs the writer's packs again */
	if (r->new_blobs && file_read(r->new_blobs, &parts, e) < 0)
		rc = -1;
	/* the writer's packs: "made <path>" lines (blob.h made_list) */
	if (rc < 0 || parts.len || file_read(r->made_packs, &list, e) < 0) {
		rc = parts.len ? 0 : -1;
		goto done;
	}
	for (line = list.ptr; rc == 0 && (nl = strchr(line, '\n')); line = nl + 1) {
		char *pack = strchr(line, ' ');

		if (!pack || pack > nl)
			continue;
		*nl = '\0';
		rc = pack_ids(pack + 1, &idx, &tab, &n, e);
		*nl = '\n';
		for (i = 0; rc == 0 && i < n; i++) {
			struct oid o;

			memcpy(o.hash, tab + (size_t)i * OID_RAW, OID_RAW);
			buf_printf(&ids, "%s\n", oid_hex(&o, hex));
		}
		packs++;
	}
	/* one pack, or none: nothing to join */
	if (rc < 0 || packs < 2)
		goto done;
	in = path_join(r->state, "made-join.new");
	out = path_join(r->state, "made-joined.new");
	rc = file_write(in, &ids, e);
	if (rc == 0 && (fdin = open(in, O_RDONLY | O_CLOEXEC)) < 0)
		rc = err_errno(e, ERR_IO, "%s: cannot open", in);
	if (rc == 0 && (fdout = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
				     0666)) < 0)
		rc = err_errno(e, ERR_IO, "%s: cannot create", out);
	gitargv_push(&a, "pack-objects");
	gitargv_push(&a, "-q");
	/* a name of ours until the run keeps it (run_join_made): a run
	 * killed before leaves it to the next one to remove */
	gitargv_pushf(&a, "%s/pack/" RUN_JOIN_BASE, r->dst_objects);
	if (rc == 0)
		rc = gitcmd_spawn(&r->join, r->dst, &a, fdin, fdout, e);
	if (rc == 0) {
		r->join_list = list;
		buf_init(&list, SIZE_MAX / 2);
	}
done:
	if (fdin >= 0)
		close(fdin);
	if (fdout >= 0)
		close(fdout);
	if (in)
		unlink(in);
	free(in);
	free(out);
	gitargv_clear(&a);
	buf_release(&list);
	buf_release(&ids);
	buf_release(&idx);
	buf_release(&parts);
	return rc;
}

/* The joined pack's .pack and .idx are there (base: their path without
 * the suffix). */
static int joined_named(const char *base)
{
	struct buf p = BUF_INIT(PATH_MAX);
	int ok;

	buf_printf(&p, "%s.pack", base);
	ok = file_exists(p.ptr);
	buf_reset(&p);
	buf_printf(&p, "%s.idx", base);
	ok = ok && file_exists(p.ptr);
	buf_release(&p);
	return ok;
}

/* RUN_JOIN_BASE-<name>.{pack,rev,idx} -> pack-<name>.*, the index last
 * (git takes a pack by its index). */
static int joined_rename(const struct run *r, const struct buf *base,
			 const char *name, struct err *e)
{
	static const char *const ext[] = { ".pack", ".rev", ".idx" };
	struct buf from = BUF_INIT(PATH_MAX), to = BUF_INIT(PATH_MAX);
	size_t k;
	int rc = 0;

	for (k = 0; rc == 0 && k < sizeof(ext) / sizeof(ext[0]); k++) {
		buf_reset(&from);
		buf_reset(&to);
		buf_printf(&from, "%s%s", base->ptr, ext[k]);
		buf_printf(&to, "%s/pack/pack-%s%s", r->dst_objects, name, ext[k]);
		if (rename(from.ptr, to.ptr) < 0 && errno != ENOENT)
			rc = err_errno(e, ERR_IO, "cannot rename %s", from.ptr);
	}
	buf_release(&from);
	buf_release(&to);
	return rc;
}

int run_join_made(struct run *r, int keep, struct err *e)
{
	struct buf name = BUF_INIT(BUF_MAX_DEFAULT), entry = BUF_INIT(PATH_MAX);
	struct err why = ERR_INIT, ignored = ERR_INIT;
	char *out = path_join(r->state, "made-joined.new");
	char *line, *nl;
	size_t len;
	int rc = 0, status;

	if (!r->join) {
		free(out);
		return 0;
	}
	status = gitcmd_wait(r->join, &why);
	r->join = 0;
	if (status == 0 && file_read(out, &name, &why) < 0)
		status = -1;
	gitcmd_chomp(&name);
	buf_printf(&entry, "%s/pack/" RUN_JOIN_BASE "-%s", r->dst_objects,
		   name.ptr);
	if (status == 0 && (name.len != OID_HEX || !joined_named(entry.ptr))) {
		err_set(&why, ERR_IO, "it said '%s', not the name of a pack it "
			"wrote", name.ptr);
		status = -1;
	} else if (status > 0) {
		err_set(&why, ERR_IO, "exit status %d", status);
	}
	if (status != 0 || !keep) {
		/* the writer's packs stay as they are; what was joined goes
		 * (each pack it named: pack.packSizeLimit may make several) */
		for (line = name.ptr; *line; line = nl ? nl + 1 : line + len) {
			nl = strchr(line, '\n');
			len = nl ? (size_t)(nl - line) : strlen(line);
			if (len != OID_HEX)
				continue;
			buf_reset(&entry);
			buf_printf(&entry, "%s/pack/" RUN_JOIN_BASE "-%.*s",
				   r->dst_objects, (int)len, line);
			(void)pack_remove(entry.ptr, &ignored);
		}
		if (keep)
			fprintf(stderr, "migrate run: warning: the packs of the "
				"writer thread were left as they are (git "
				"pack-objects that joins them: %s)\n", why.msg);
	} else {
		/* listed first: a run killed from here on drops it too; then
		 * named as git names packs, its index last */
		FILE *f = fopen(r->made_packs, "ae");
		int bad = !f || fprintf(f, "made %s/pack/pack-%s\n",
					r->dst_objects, name.ptr) < 0;

		if ((f && fclose(f) != 0) || bad)
			rc = err_errno(e, ERR_IO, "cannot write %s", r->made_packs);
		if (rc == 0)
			rc = joined_rename(r, &entry, name.ptr, e);
		buf_reset(&entry);
		buf_printf(&entry, "%s/pack/pack-%s", r->dst_objects, name.ptr);
		for (line = r->join_list.ptr; rc == 0 && line &&
		     (nl = strchr(line, '\n')); line = nl + 1) {
			char *pack = strchr(line, ' ');

			*nl = '\0';
			if (pack && strcmp(pack + 1, entry.ptr) != 0)
				rc = pack_remove(pack + 1, e);
		}
	}
	unlink(out);
	free(out);
	buf_release(&r->join_list);
	buf_release(&name);
	buf_release(&entry);
	return rc;
}
