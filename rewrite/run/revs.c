/*
 * revs.c - what a run exports: the revision arguments less the tips an earlier run processed.
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

int run_by_oid(const void *a, const void *b)
{
	return memcmp(a, b, sizeof(struct oid));
}

/* The commits the state's tips file names, sorted and unique, into *ids
 * (caller frees); *n of them. A missing file is no tips. */
int run_tips_load(struct oid **ids, size_t *n, const char *state,
		  struct err *e)
{
	struct buf text = BUF_INIT(SIZE_MAX / 2);
	char *path = path_join(state, "tips"), *line, *nl;
	size_t k = 0, alloc = 16;
	int r = file_read(path, &text, e);

	*ids = xmalloc(alloc * sizeof(**ids));
	for (line = text.ptr; r > 0 && (nl = strchr(line, '\n')); line = nl + 1) {
		if (k == alloc)
			*ids = xrealloc(*ids, (alloc *= 2) * sizeof(**ids));
		if (nl - line < OID_HEX || oid_from_hex(&(*ids)[k++], line, OID_HEX) < 0)
			r = err_set(e, ERR_IO, "%s: malformed line '%.*s'", path,
				    (int)(nl - line), line);
	}
	qsort(*ids, k, sizeof(**ids), run_by_oid);
	*n = 0;
	for (size_t i = 0; i < k; i++)
		if (*n == 0 || !oid_eq(&(*ids)[*n - 1], &(*ids)[i]))
			(*ids)[(*n)++] = (*ids)[i];
	free(path);
	buf_release(&text);
	return r < 0 ? -1 : 0;
}

/*
 * REV-ARGS (default: every ref but refs/migrate/...), minus the tips of the
 * earlier runs. --exclude only acts on the --all/--glob after it, so it is
 * harmless before explicit revisions and keeps the backups of an in-place
 * run out of the export.
 */
/* --restart: the backup under refs/migrate/original/ of every ref there
 * is now, exported under the name it had (export_args adds the refspec);
 * a ref deleted since is not made again. */
static int restart_revs(struct run *r, struct gitrefs *orig)
{
	const struct gitref *g;
	const char *name;
	size_t i;

	for (i = 0; i < orig->n; i++) {
		name = orig->v[i].name + strlen("refs/migrate/original/");
		g = gitrefs_find(&r->dst_before, name);
		/* a symbolic ref (origin/HEAD; an older run backed it up)
		 * comes back with its target */
		if (g && !g->symbolic)
			gitargv_push(&r->revs, orig->v[i].name);
	}
	gitrefs_free(orig);
	return 0;
}

/* 1 when --include-ref names what is converted (else every ref is). */
static int has_include(const struct run_opts *o)
{
	int k;

	for (k = 0; k < o->nrefs; k++)
		if (!o->refs[k].exclude)
			return 1;
	return 0;
}

int run_build_revs(struct run *r, struct err *e)
{
	struct gitrefs refs = GITREFS_INIT;
	char hex[OID_HEX + 1];
	struct oid *tips;
	size_t n, i;
	int k;

	if (r->o.restart)	/* the originals, named as the refs they were */
		return gitrefs_list(&refs, r->dst, "refs/migrate/original/", e) < 0 ?
			-1 : restart_revs(r, &refs);
	if (run_tips_load(&tips, &n, r->state, e) < 0) {
		free(tips);
		return -1;
	}
	gitargv_push(&r->revs, "--exclude=refs/migrate/*");
	for (k = 0; k < r->o.nrevs; k++)
		gitargv_push(&r->revs, r->o.revs[k]);
	/* --include-ref REF and --exclude-ref REF: REF and ^REF */
	for (k = 0; k < r->o.nrefs; k++)
		gitargv_pushf(&r->revs, "%s%s", r->o.refs[k].exclude ? "^" : "",
			      r->o.refs[k].name);
	if (r->o.nrevs == 0 && !has_include(&r->o))
		gitargv_push(&r->revs, "--all");
	for (i = 0; i < n; i++)
		gitargv_pushf(&r->revs, "^%s", oid_hex(&tips[i], hex));
	free(tips);
	return 0;
}

/* The number of commits the export will hold, for the progress ETA; 0
 * when rev-list cannot tell (fast-export then reports the problem). */
uint64_t run_count_commits(const struct run *r)
{
	struct gitargv a = GITARGV_INIT;
	struct buf out = BUF_INIT(4096);
	struct err ignored = ERR_INIT;
	uint64_t n = 0;
	size_t i;

	gitargv_push(&a, "rev-list");
	gitargv_push(&a, "--count");
	for (i = 0; i < r->revs.n; i++)
		gitargv_push(&a, r->revs.v[i]);
	if (gitcmd_run(r->o.repo, &a, NULL, &out, &ignored) == 0) {
		gitcmd_chomp(&out);
		if (parse_u64(out.ptr, out.len, UINT64_MAX, &n) < 0)
			n = 0;
	}
	gitargv_clear(&a);
	buf_release(&out);
	return n;
}
