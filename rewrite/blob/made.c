/*
 * made.c - the objects a run makes (replace-text results, split parts,
 * the trees and the commits of the new history), stored by a thread of
 * their own straight into the target's packs, each blob or tree as a
 * delta against the version of the same path stored before it, commits
 * whole (issue 29). Without it they go into the stream, and git
 * fast-import hashes, searches a delta for and deflates every one of them
 * on one core, after the stream has copied them to it.
 *
 * The main thread hands each blob over (made_put: its id, computed
 * already, its path and its bytes) and names it by id in the commit. git
 * fast-import refuses an id it cannot find, so from the first blob on the
 * stream is held back (stream_writer_hold), and goes to fast-import only
 * once the packs holding the blobs it names have their names
 * (made_drain): when the held stream passes MADE_HELD, at a query
 * fast-import answers, and at the end, once the run's own checks passed
 * (a run that fails there leaves fast-import nothing to keep). The blobs
 * handed over since the last pack was named are a segment; it also ends
 * when its pack passes MADE_SEGMENT, or when one of its blobs is read back
 * (made_settle: named, the stream still held). Deltas never cross a
 * segment: a pack holds the bases of its deltas.
 *
 * The writer thread keeps the last version of each path it stored in
 * this segment, and its spine (bytes bounded, least recently used let go
 * first), and stores a version as a delta against the last (chains at
 * most MADE_DEPTH long, as git's) or, after a full chain, the spine;
 * whole when neither pays. Each segment is a packm, named at its end and
 * listed (blob.h made_list): a run that fails, or the next after a
 * killed one, drops what is listed and the temp files.
 *
 * Threads: the job list, the count of segments committed and the error
 * are shared under m->lock; the stream, the ids and the open segment are
 * the main thread's; the bases, the pack and the delta buffer the
 * writer's.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <utlist.h>

#include "way.h"

/* bounds: bytes of the jobs waiting; of the stream held; of a segment's
 * pack as written (its objects' bytes would end a segment of a history's
 * versions of one file, and start its deltas over from a whole copy,
 * every 4 GiB read); of the bases kept; a blob larger than MADE_MAX goes
 * into the stream as before */
#define MADE_QUEUED ((size_t)256 << 20)
#define MADE_HELD ((size_t)32 << 20)
#define MADE_SEGMENT ((uint64_t)4 << 30)
#define MADE_BASES ((size_t)256 << 20)
#define MADE_DEPTH 50
#define MADE_MAX ((uint64_t)64 << 20)
/* a tree's path among the bases starts with this byte, which no path of
 * a file does: a directory's versions are not a file's */
#define TREE_KEY '\001'
/* a directory's versions kept as bases: the one a tree was made from (its
 * parent commit's) is among the last few dozen, branches interleaving
 * (on git's history, 8 found it for a third fewer trees) */
#define TREE_RING 64

struct made_job {
	struct oid id;
	enum obj_type type;	/* OBJ_BLOB, OBJ_TREE or OBJ_COMMIT */
	int estimated;		/* the report has its estimate: its bytes in
				 * the pack are not counted again */
	struct oid from;	/* a tree's: the version it was made from */
	char *path;		/* NULL: the end of a segment; a tree's
				 * starts with TREE_KEY */
	size_t path_len;
	struct buf data;
	struct made_job *next;
};

/* A version stored, with its bytes (a delta base). */
struct made_ver {
	struct oid id;
	struct buf data;
	unsigned depth;		/* of its delta chain; 0: whole */
};

/*
 * The versions of a path stored in the open segment that later ones may
 * be deltas against (writer's): the last, and the spine's. A version is a
 * delta against the last one while that chain is shorter than
 * MADE_DEPTH; the one after a full chain is a delta against the spine
 * (and the spine's next), so that only every MADE_DEPTH-th version
 * carries the changes of MADE_DEPTH versions, and whole copies are rare.
 */
struct made_base {
	char *path;
	size_t path_len;
	struct made_ver last, spine;
	struct made_ver *ring;	/* a directory's: its last TREE_RING */
	unsigned ring_next;
	UT_hash_handle hh;
	struct made_base *prev, *next;	/* least recently used first */
};

/* An id stored by this run (main thread's). */
struct made_id {
	struct oid id;
	uint64_t segment;	/* the segment that holds it */
	UT_hash_handle hh;
};

struct made {
	pthread_t thread;
	int started;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	/* shared, under lock */
	struct made_job *head, *tail;
	size_t queued;
	uint64_t committed;	/* segments whose pack has its name */
	int failed, stop;
	struct err err;
	/* the main thread's */
	struct made_id *ids;
	int open;		/* a segment takes blobs */
	uint64_t sealed;	/* segments ended (the open one is sealed + 1) */
	uint64_t reported;	/* pack bytes the report counts already */
	/* the writer's */
	struct pack_odb *have;	/* the target's objects (NULL: not read) */
	char *objects_dir;
	char *list;		/* blob.h made_list, or NULL */
	int level;
	struct packm *pack;
	struct made_base *bases, *lru;
	size_t base_bytes;
	struct buf delta;
	uint64_t pack_bytes;	/* of the packs committed (shared): their
				 * blobs' bytes, which the report counts */
	uint64_t blob_bytes;	/* the open pack's blobs' (writer's) */
	uint64_t open_bytes;	/* the open pack's bytes so far (shared) */
};

/* ---- the writer thread ---- */

static size_t base_size(const struct made_base *base)
{
	size_t n = base->last.data.len + base->spine.data.len, i;

	for (i = 0; base->ring && i < TREE_RING; i++)
		n += base->ring[i].data.len;
	return n;
}

static void base_drop(struct made *m, struct made_base *base)
{
	size_t i;

	HASH_DEL(m->bases, base);
	DL_DELETE(m->lru, base);
	m->base_bytes -= base_size(base);
	buf_release(&base->last.data);
	buf_release(&base->spine.data);
	for (i = 0; base->ring && i < TREE_RING; i++)
		buf_release(&base->ring[i].data);
	free(base->ring);
	free(base->path);
	free(base);
}

static void bases_clear(struct made *m)
{
	struct made_base *base, *tmp;

	HASH_ITER(hh, m->bases, base, tmp)
		base_drop(m, base);
}

/* A delta of job's blob against v, into m->delta, when v may take one
 * more and the delta is less than half the blob. */
static int try_delta(struct made *m, const struct made_ver *v,
		     const struct made_job *job)
{
	m->delta.len = 0;
	return v->depth < MADE_DEPTH &&
	       (job->type == OBJ_TREE ? delta_create_tree : delta_create)(
			(const unsigned char *)v->data.ptr, v->data.len,
			(const unsigned char *)job->data.ptr, job->data.len,
			job->data.len / 2, &m->delta) == 1;
}

/* A new path's bases (the path taken from job). */
static struct made_base *base_new(struct made *m, struct made_job *job)
{
	struct made_base *base = xcalloc(1, sizeof(*base));
	size_t i;

	base->path = job->path;
	base->path_len = job->path_len;
	job->path = NULL;
	buf_init(&base->last.data, SIZE_MAX / 2);
	buf_init(&base->spine.data, SIZE_MAX / 2);
	if (job->type == OBJ_TREE) {
		base->ring = xcalloc(TREE_RING, sizeof(*base->ring));
		for (i = 0; i < TREE_RING; i++)
			buf_init(&base->ring[i].data, SIZE_MAX / 2);
	}
	HASH_ADD_KEYPTR(hh, m->bases, base->path, base->path_len, base);
	return base;
}

/* base was used: the most recently, and the bases stay in their bound */
static void base_used(struct made *m, struct made_base *base)
{
	m->base_bytes += base_size(base);
	DL_APPEND(m->lru, base);
	while (m->base_bytes > MADE_BASES && m->lru && m->lru != base)
		base_drop(m, m->lru);
}

/*
 * Stores job's tree as a delta against the version of its directory it
 * was made from (its parent commit's) when the ring holds it, else the
 * latest; whole when neither pays. Its bytes join the ring.
 */
static int store_tree(struct made *m, struct made_job *job, struct err *e)
{
	struct made_base *base;
	struct made_ver *against = NULL, *slot;
	struct err ignored = ERR_INIT;
	enum obj_type type;
	uint64_t size;
	unsigned depth, i, k;

	/* a tree the target has (a directory as the history had it), as
	 * git fast-import, is not stored again */
	if (m->have && pack_odb_info(m->have, &job->id, &type, &size,
				     &ignored) == 1)
		return 0;
	HASH_FIND(hh, m->bases, job->path, job->path_len, base);
	for (i = 0; base && i < TREE_RING && !against; i++) {
		k = (base->ring_next + TREE_RING - 1 - i) % TREE_RING;
		if (base->ring[k].data.len && oid_eq(&base->ring[k].id, &job->from))
			against = &base->ring[k];
	}
	if (!against && base)
		against = &base->ring[(base->ring_next + TREE_RING - 1) % TREE_RING];
	/* a full chain: the spine, as for blobs */
	if (against && against->depth >= MADE_DEPTH)
		against = base->spine.data.len ? &base->spine : NULL;
	if (against && !try_delta(m, against, job))
		against = NULL;
	if (against ? packm_add_delta(m->pack, &job->id, &against->id,
				      m->delta.ptr, m->delta.len, e) :
		      packm_add(m->pack, OBJ_TREE, &job->id, job->data.ptr,
				job->data.len, e))
		return -1;
	depth = against ? against->depth + 1 : 0;
	if (!base) {
		base = base_new(m, job);
	} else {
		DL_DELETE(m->lru, base);
	}
	m->base_bytes -= base_size(base);
	if (!against || against == &base->spine) {
		base->spine.id = job->id;
		base->spine.depth = depth;
		base->spine.data.len = 0;
		buf_add(&base->spine.data, job->data.ptr, job->data.len);
	}
	slot = &base->ring[base->ring_next++ % TREE_RING];
	buf_release(&slot->data);
	slot->data = job->data;	/* taken */
	buf_init(&job->data, SIZE_MAX / 2);
	slot->id = job->id;
	slot->depth = depth;
	base_used(m, base);
	return 0;
}

/* A commit, whole (as git fast-import stores one); not one the target
 * has already (a commit as the history had it), as fast-import skips it
 * too. */
static int store_commit(struct made *m, struct made_job *job, struct err *e)
{
	struct err ignored = ERR_INIT;
	enum obj_type type;
	uint64_t size;

	if (m->have && pack_odb_info(m->have, &job->id, &type, &size,
				     &ignored) == 1)
		return 0;
	return packm_add(m->pack, OBJ_COMMIT, &job->id, job->data.ptr,
			 job->data.len, e);
}

/* Stores job's blob, a delta against its path's last version or spine
 * when that pays, else whole; its bytes become the path's last. */
static int store_job(struct made *m, struct made_job *job, struct err *e)
{
	struct made_base *base;
	struct made_ver *against = NULL;
	uint64_t before;
	int to_spine;

	if (!m->pack && packm_begin(&m->pack, m->objects_dir, m->level, e) < 0)
		return -1;
	if (packm_has(m->pack, &job->id))
		return 0;
	if (job->type == OBJ_TREE)
		return store_tree(m, job, e);
	if (job->type == OBJ_COMMIT)
		return store_commit(m, job, e);
	HASH_FIND(hh, m->bases, job->path, job->path_len, base);
	/* the spine only when the last chain is full: a delta too large
	 * against the last version is larger still against an older one */
	if (base && base->last.depth < MADE_DEPTH) {
		if (try_delta(m, &base->last, job))
			against = &base->last;
	} else if (base && base->spine.data.len && try_delta(m, &base->spine, job)) {
		against = &base->spine;
	}
	before = packm_bytes(m->pack);
	if (against ? packm_add_delta(m->pack, &job->id, &against->id,
				      m->delta.ptr, m->delta.len, e) :
		      packm_add(m->pack, job->type, &job->id, job->data.ptr,
				job->data.len, e))
		return -1;
	if (!job->estimated)
		m->blob_bytes += packm_bytes(m->pack) - before;
	if (!base) {
		base = base_new(m, job);
	} else {
		DL_DELETE(m->lru, base);
	}
	m->base_bytes -= base_size(base);
	/* a whole version, or one against the spine, is the spine next */
	to_spine = !against || against == &base->spine;
	if (to_spine) {
		base->spine.id = job->id;
		base->spine.depth = against ? against->depth + 1 : 0;
		base->spine.data.len = 0;
		buf_add(&base->spine.data, job->data.ptr, job->data.len);
	}
	/* the job's bytes become the last version: no copy */
	base->last.depth = against ? against->depth + 1 : 0;
	buf_release(&base->last.data);
	base->last.data = job->data;
	base->last.id = job->id;
	buf_init(&job->data, SIZE_MAX / 2);
	base_used(m, base);
	return 0;
}

/* Lists a pack named (blob.h made_list). */
static int list_pack(struct made *m, const struct buf *name, struct err *e)
{
	FILE *f = fopen(m->list, "ae");
	int bad;

	if (!f)
		return err_errno(e, ERR_IO, "cannot write %s", m->list);
	bad = fprintf(f, "made %s\n", name->ptr) < 0;
	if (fclose(f) != 0 || bad)
		return err_errno(e, ERR_IO, "cannot write %s", m->list);
	return 0;
}

/* The segment's pack gets its name: git (and fast-import) see it. */
static int seal(struct made *m, uint64_t *packed, struct err *e)
{
	struct buf name = BUF_INIT(SIZE_MAX / 2);
	int rc = 0;

	bases_clear(m);
	if (!m->pack)
		return 0;
	*packed = m->blob_bytes;
	m->blob_bytes = 0;
	/* 1 named: listed; 0: a pack of these very bytes was there already
	 * (a killed run's), not this run's to list */
	if (packm_count(m->pack))
		rc = packm_commit(m->pack, &name, e);
	if (rc == 1 && m->list)
		rc = list_pack(m, &name, e);
	packm_free(m->pack);
	m->pack = NULL;
	buf_release(&name);
	return rc < 0 ? -1 : 0;
}

static void job_free(struct made_job *job)
{
	buf_release(&job->data);
	free(job->path);
	free(job);
}

static void *writer(void *arg)
{
	struct made *m = arg;
	struct err e = ERR_INIT;

	pthread_mutex_lock(&m->lock);
	for (;;) {
		struct made_job *job;
		size_t len;
		uint64_t packed = 0;
		int rc = 0, failed, is_seal;

		while (!m->head && !m->stop)
			pthread_cond_wait(&m->cond, &m->lock);
		if (!m->head)
			break;
		job = m->head;
		m->head = job->next;
		if (!m->head)
			m->tail = NULL;
		failed = m->failed;
		pthread_mutex_unlock(&m->lock);

		len = job->data.len;
		is_seal = !job->path;
		if (!failed)
			rc = is_seal ? seal(m, &packed, &e) : store_job(m, job, &e);
		job_free(job);

		pthread_mutex_lock(&m->lock);
		m->queued -= len;
		if (rc < 0 && !m->failed) {
			m->failed = 1;
			m->err = e;
		}
		m->open_bytes = m->pack ? packm_bytes(m->pack) : 0;
		if (is_seal && rc >= 0 && !failed) {
			m->committed++;
			m->pack_bytes += packed;
		}
		pthread_cond_broadcast(&m->cond);
	}
	pthread_mutex_unlock(&m->lock);
	return NULL;
}

/* ---- the main thread ---- */

static int writer_failed(struct made *m, struct err *e)
{
	int failed;

	pthread_mutex_lock(&m->lock);
	failed = m->failed;
	if (failed)
		*e = m->err;
	pthread_mutex_unlock(&m->lock);
	return failed ? -1 : 0;
}

static void enqueue(struct made *m, struct made_job *job)
{
	pthread_mutex_lock(&m->lock);
	/* the jobs waiting stay bounded: wait for the writer */
	while (m->queued > MADE_QUEUED && !m->failed)
		pthread_cond_wait(&m->cond, &m->lock);
	if (m->tail)
		m->tail->next = job;
	else
		m->head = job;
	m->tail = job;
	m->queued += job->data.len;
	pthread_cond_broadcast(&m->cond);
	pthread_mutex_unlock(&m->lock);
}

int made_init(struct blobs *b, struct err *e)
{
	struct made *m;

	if (!b->opt.made_dir || b->opt.dry_run)
		return 0;
	m = xcalloc(1, sizeof(*m));
	pthread_mutex_init(&m->lock, NULL);
	pthread_cond_init(&m->cond, NULL);
	m->objects_dir = xstrdup(b->opt.made_dir);
	m->list = b->opt.made_list ? xstrdup(b->opt.made_list) : NULL;
	m->level = b->opt.made_level;
	buf_init(&m->delta, SIZE_MAX / 2);
	b->made = m;
	(void)e;
	return 0;
}

int made_wants(const struct blobs *b, uint64_t size)
{
	return b->made && size <= MADE_MAX;
}


/* The open segment ends: the writer gives its pack a name. */
static void seal_open(struct made *m)
{
	struct made_job *job;

	if (!m->open)
		return;
	job = xcalloc(1, sizeof(*job));
	buf_init(&job->data, SIZE_MAX / 2);
	m->open = 0;
	m->sealed++;
	enqueue(m, job);
}

/* Hands id's bytes (taken from data) to the writer, with the key of its
 * delta bases (the path, for a tree after TREE_KEY). */
static int put(struct blobs *b, enum obj_type type, const struct oid *id,
	       const struct oid *from, const char *path, size_t len,
	       struct buf *data, int estimated, struct err *e)
{
	struct made *m = b->made;
	struct made_job *job;
	struct made_id *known;

	HASH_FIND(hh, m->ids, id->hash, OID_RAW, known);
	if (known)
		return 0;
	if (writer_failed(m, e) < 0)
		return -1;
	/* the thread starts with the first object: most runs make none */
	if (!m->started) {
		struct err ignored = ERR_INIT;

		if (b->dst && odb_native_fork(b->dst, &m->have, &ignored) != 1)
			m->have = NULL;
		if (pthread_create(&m->thread, NULL, writer, m) != 0)
			return err_set(e, ERR_IO, "cannot start a thread");
		m->started = 1;
	}
	if (!m->open) {
		stream_writer_hold(b->out);
		m->open = 1;
	}
	known = xcalloc(1, sizeof(*known));
	known->id = *id;
	known->segment = m->sealed + 1;
	HASH_ADD(hh, m->ids, id.hash, OID_RAW, known);
	job = xcalloc(1, sizeof(*job));
	job->id = *id;
	job->type = type;
	job->estimated = estimated;
	if (from)
		job->from = *from;
	job->path_len = len + (type == OBJ_TREE);
	job->path = xmalloc(job->path_len);
	if (type == OBJ_TREE)
		job->path[0] = TREE_KEY;
	memcpy(job->path + (type == OBJ_TREE), path, len);
	job->data = *data;	/* taken */
	buf_init(data, data->max);
	enqueue(m, job);
	return 0;
}

int made_put(struct blobs *b, const struct oid *id, const char *path,
	     size_t len, struct buf *data, struct err *e)
{
	return put(b, OBJ_BLOB, id, NULL, path, len, data, 0, e);
}

/* made_put_tree and made_put_commit: body copied. */
static int put_copy(struct blobs *b, enum obj_type type, const struct oid *id,
		    const struct oid *from, const char *path, size_t len,
		    const struct buf *body, struct err *e)
{
	struct buf data = BUF_INIT(SIZE_MAX / 2);

	if (buf_add(&data, body->ptr, body->len) < 0)
		return err_set(e, ERR_IO, "out of memory");
	if (put(b, type, id, from, path, len, &data, 0, e) < 0) {
		buf_release(&data);
		return -1;
	}
	buf_release(&data);
	return 0;
}

int made_put_tree(struct blobs *b, const struct oid *id,
		  const struct oid *from, const char *path, size_t len,
		  const struct buf *body, struct err *e)
{
	return put_copy(b, OBJ_TREE, id, from, path, len, body, e);
}

int made_put_commit(struct blobs *b, const struct oid *id,
		    const struct buf *body, struct err *e)
{
	return put_copy(b, OBJ_COMMIT, id, NULL, "", 0, body, e);
}

int made_write_text(struct blobs *b, struct stream_cmd *c,
		    const struct oid *id, const char *data, size_t len,
		    struct err *e)
{
	char hex[OID_HEX + 1];

	if (made_wants(b, len)) {
		struct buf copy = BUF_INIT(SIZE_MAX / 2);
		int r;

		if (buf_add(&copy, data, len) < 0)
			return err_set(e, ERR_IO, "out of memory");
		r = put(b, OBJ_BLOB, id, NULL, c->path.ptr, c->path.len, &copy,
			1, e);
		buf_release(&copy);
		if (r < 0)
			return -1;
		c->dataref.kind = STREAM_REF_OID;
		buf_set(&c->dataref.name, oid_hex(id, hex), OID_HEX);
		return stream_write_cmd(b->cbuf, c, e);
	}
	c->dataref.kind = STREAM_REF_INLINE;
	if (stream_write_data_begin(b->cbuf, c, len, e) < 0 ||
	    stream_write_bytes(b->cbuf, data, len, e) < 0)
		return -1;
	return stream_write_data_end(b->cbuf, e);
}

/* The open segment's pack bytes as written so far (0 while the writer
 * still works on sealed ones). */
static uint64_t open_bytes(struct made *m)
{
	uint64_t n;

	pthread_mutex_lock(&m->lock);
	n = m->committed == m->sealed ? m->open_bytes : 0;
	pthread_mutex_unlock(&m->lock);
	return n;
}

int made_tick(struct blobs *b, struct err *e)
{
	struct made *m = b->made;

	if (!m)
		return 0;
	if (m->open && open_bytes(m) >= MADE_SEGMENT)
		seal_open(m);
	/* the stream waits until it must go: a run that fails at its end
	 * (unlfs_finish) leaves fast-import nothing to keep; too much held,
	 * it goes (the writer waited for) rather than grow */
	return stream_writer_held(b->out) < MADE_HELD ? 0 : made_drain(b, e);
}

int made_settle(struct blobs *b, struct err *e)
{
	struct made *m = b->made;
	uint64_t packed;

	if (!m)
		return 0;
	seal_open(m);
	pthread_mutex_lock(&m->lock);
	while (m->committed < m->sealed && !m->failed)
		pthread_cond_wait(&m->cond, &m->lock);
	packed = m->pack_bytes;
	pthread_mutex_unlock(&m->lock);
	if (writer_failed(m, e) < 0)
		return -1;
	/* the report counts the packs as written */
	report_output_stored(b->report, packed - m->reported);
	m->reported = packed;
	return 0;
}

int made_drain(struct blobs *b, struct err *e)
{
	if (!b->made || made_settle(b, e) < 0)
		return b->made ? -1 : 0;
	return stream_writer_release(b->out, stream_writer_pos(b->out), e);
}

int made_pending(const struct blobs *b, const struct oid *id)
{
	struct made *m = b->made;
	struct made_id *known;
	uint64_t committed;

	if (!m)
		return 0;
	HASH_FIND(hh, m->ids, id->hash, OID_RAW, known);
	if (!known)
		return 0;
	pthread_mutex_lock(&m->lock);
	committed = m->committed;
	pthread_mutex_unlock(&m->lock);
	return known->segment > committed;
}

void made_free(struct blobs *b)
{
	struct made *m = b->made;
	struct made_job *job, *next;
	struct made_id *id, *tmp;

	if (!m)
		return;
	if (m->started) {
		pthread_mutex_lock(&m->lock);
		/* jobs not done are dropped, with their temp pack */
		for (job = m->head; job; job = next) {
			next = job->next;
			job_free(job);
		}
		m->head = m->tail = NULL;
		m->stop = 1;
		pthread_cond_broadcast(&m->cond);
		pthread_mutex_unlock(&m->lock);
		pthread_join(m->thread, NULL);
	}
	bases_clear(m);
	packm_free(m->pack);
	pack_odb_free(m->have);
	HASH_ITER(hh, m->ids, id, tmp) {
		HASH_DEL(m->ids, id);
		free(id);
	}
	pthread_mutex_destroy(&m->lock);
	pthread_cond_destroy(&m->cond);
	buf_release(&m->delta);
	free(m->objects_dir);
	free(m->list);
	free(m);
	b->made = NULL;
}
