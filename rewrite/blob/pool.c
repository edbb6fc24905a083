/*
 * pool.c - conversion ahead of the stream, on the other cores (docs/DESIGN.md
 * "The second core"). While the engine handles one command, the stream
 * reader's look-ahead (stream_reader_ahead) shows the `M <mode> <id>
 * <path>` lines further on. Those the rules will convert to LFS -- the
 * same decision place() takes, from the same path, mode, size and branch;
 * when in doubt, none -- become jobs for a pool of threads, each reading
 * the blob with a native reader of its own (inflate, SHA-1 check) into a
 * put on the store (SHA-256, a temp file). When the main thread gets to
 * the blob, convert() takes the put (waiting for it if need be) and
 * finishes it as it would finish its own, so the stream, the maps and
 * the store are byte for byte what one thread writes, in the same order.
 *
 * A job the main thread never takes (it passed the M line without
 * converting, or the run failed) is dropped with its temp file, and no
 * object reaches the store for it. A job that failed is dropped too and
 * the main thread reads the blob itself: errors are the ones one thread
 * gives, at the same place.
 *
 * Bounds: at most POOL_JOBS_PER_WORKER jobs per worker alive (each a temp
 * file and at most 64 KiB of write buffer: the blob sizes are skewed, and
 * while one worker reads a 40 MB blob the main thread waits for, the
 * others go through many small ones), AHEAD_BYTES of stream read ahead of the
 * parse; a worker holds a 1 MiB chunk, its reader's base cache (64 MiB)
 * and builds delta results of at most WORKER_DELTA_LIMIT in memory (a
 * larger one is left to the main thread).
 *
 * unlfs (issue 15): an M line of an LFS pointer an unlfs rule takes back
 * is a job too. The worker reads the pointer, finds its object in the
 * stores (lfs_find, lfsobj.c, which unlfs.c uses for the main thread's
 * own reads), and, when the run names an objects directory (`migrate run`:
 * the repository fast-import writes into), stores the file there as a
 * pack of its own (packw.c): the deflate that git fast-import would do on
 * one core is done on all of them, and the stream names the blob by id.
 * The pack gets its name (git sees it) only when the main thread takes
 * the job, before it writes the line that names the blob; until then a
 * done job holds its finished pack under temp names (on disk, not in
 * memory), and a job dropped removes them.
 *
 * replace-text and split (issue 29): an M line of a blob a replace-text
 * or split rule will take is a job too. The worker reads the whole blob
 * into memory (its own reader: inflate, delta chain, SHA-1 check) and the
 * main thread, when scrub_content or the split asks for the content
 * (blob_read_all), takes the bytes instead of reading them itself; the
 * replace and the split themselves stay on the main thread (a replace
 * set has scratch buffers, a split its cache of the last version). Jobs
 * that read hold at most READ_AHEAD_MAX bytes of blobs in all, counted
 * from the queue on: a line whose blob does not fit waits (the look-ahead
 * stops there) until jobs are taken or dropped. Their buffers are reused
 * (SPARES); one grown from a smaller spare may have up to half again the
 * blob's size.
 *
 * Threads: the job list and each job's state and result are shared,
 * under p->lock; the table by id, the look-ahead and the scanner's
 * reader are the main thread's alone.
 */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "way.h"

#define POOL_JOBS_PER_WORKER 16
#define AHEAD_BYTES ((size_t)8 << 20)
#define WORKER_DELTA_LIMIT ((uint64_t)256 << 20)
/* the blobs read whole ahead, in memory, in all */
#define READ_AHEAD_MAX ((uint64_t)256 << 20)
/* buffers of read jobs kept for the next ones (fresh pages for every
 * version of a 5 MB file cost more in page faults than the copy saves):
 * at most SPARES of at most SPARE_CAP_MAX each */
#define SPARES 4
#define SPARE_CAP_MAX ((size_t)32 << 20)

enum job_kind {
	JOB_PUT,	/* into a put on the store (LFS) */
	JOB_UNLFS,	/* a pointer to take back: found, not put */
	JOB_READ	/* read whole into memory (replace-text) */
};

enum job_state { JOB_QUEUED, JOB_RUNNING, JOB_DONE };

struct job {
	struct oid id;
	uint64_t size;
	uint64_t off;		/* the stream offset of the M line that asked */
	enum job_kind kind;
	struct ptr_put *put;	/* the worker's while it runs */
	struct buf data;	/* read: the content (the worker's while it runs) */
	struct ptr_oid lfs;	/* unlfs: the pointer's object */
	uint64_t lfs_size;
	struct lfs_found found;	/* unlfs: what the worker found */
	enum job_state state;
	int ok;			/* done, and put holds the whole blob */
	int cancel;		/* the main thread no longer wants it */
	struct job *prev, *next;	/* the list, in stream order */
	UT_hash_handle hh;	/* p->byid */
};

struct worker {
	struct pool *p;
	pthread_t thread;
	struct pack_odb *db;
	struct lfs_check check;	/* unlfs: its own hash, estimate, chunk */
};

struct pool {
	pthread_mutex_t lock;
	pthread_cond_t work;	/* a job was queued, or stop */
	pthread_cond_t done;	/* a job is done */
	struct job *head, *tail;
	int stop;
	struct job *byid;	/* main thread only */
	size_t live, max_live;
	struct worker *w;
	size_t nworkers, started;
	struct pack_odb *scan_db;	/* sizes for the decision (main) */
	struct stream_cmd look;		/* the line looked at */
	struct buf ptr;			/* a pointer read for the decision */
	char *const *dirs;		/* unlfs: the stores, in order */
	size_t ndirs;
	int reads;			/* a rule reads blobs whole */
	uint64_t bytes_read;		/* by the workers (lock held) */
	uint64_t read_held;		/* sizes of the read jobs alive (main) */
	/* a read the look-ahead decided and that did not fit in
	 * READ_AHEAD_MAX yet (main) */
	int waiting;
	struct oid wait_id;
	uint64_t wait_size, wait_off;
	struct buf spare[SPARES];	/* (lock held) */
	size_t nspare;
};

/* Unlinks j from the list (lock held). */
static void list_unlink(struct pool *p, struct job *j)
{
	if (j->prev)
		j->prev->next = j->next;
	else
		p->head = j->next;
	if (j->next)
		j->next->prev = j->prev;
	else
		p->tail = j->prev;
	j->prev = j->next = NULL;
}

/* Reads j's blob into its put; 1 when all of it went in. */
static int job_run(struct worker *w, struct job *j)
{
	struct err e = ERR_INIT;
	struct pack_stream *s = NULL;
	enum obj_type type;
	uint64_t size, total = 0;
	ssize_t n = -1;
	int cancel = 0;

	if (pack_odb_open_stream(w->db, &j->id, &s, &type, &size, &e) != 1 ||
	    type != OBJ_BLOB || size != j->size) {
		pack_stream_close(s);
		return 0;
	}
	while (!cancel && (n = pack_stream_read(s, w->check.chunk, CHUNK, &e)) > 0) {
		if (ptr_put_write(j->put, w->check.chunk, (size_t)n, &e) < 0)
			break;
		total += (uint64_t)n;
		pthread_mutex_lock(&w->p->lock);
		w->p->bytes_read += (uint64_t)n;
		cancel = j->cancel;
		pthread_mutex_unlock(&w->p->lock);
	}
	pack_stream_close(s);
	return n == 0 && !cancel && total == size;
}

/* Keeps the memory of b for a read job to come, or frees it; b is empty
 * after (lock held). */
static void spare_put(struct pool *p, struct buf *b)
{
	if (b->cap && b->cap <= SPARE_CAP_MAX && p->nspare < SPARES) {
		p->spare[p->nspare++] = *b;
		buf_init(b, b->max);
		return;
	}
	buf_release(b);
}

/* Gives b (empty) the memory of a spare: one with room for size bytes,
 * else the largest, which the read grows (by half again: a file that
 * grows at every version finds room in it next time). Lock held. */
static void spare_get(struct pool *p, struct buf *b, uint64_t size)
{
	size_t i, best = SPARES, max = b->max;

	for (i = 0; i < p->nspare; i++) {
		if (p->spare[i].cap > size) {
			best = i;
			break;
		}
		if (best == SPARES || p->spare[i].cap > p->spare[best].cap)
			best = i;
	}
	if (best == SPARES)
		return;
	*b = p->spare[best];
	buf_reset(b);
	b->max = max;
	p->spare[best] = p->spare[--p->nspare];
}

/* Reads j's blob whole into j->data; 1 when it is all there (the reader
 * checked its SHA-1). */
static int read_job_run(struct worker *w, struct job *j)
{
	struct err e = ERR_INIT;
	enum obj_type type;
	int ok;

	pthread_mutex_lock(&w->p->lock);
	spare_get(w->p, &j->data, j->size);
	pthread_mutex_unlock(&w->p->lock);
	ok = pack_odb_read(w->db, &j->id, &type, &j->data, &e) == 1 &&
	     type == OBJ_BLOB && j->data.len == j->size;
	pthread_mutex_lock(&w->p->lock);
	w->p->bytes_read += j->data.len;
	if (!ok)
		spare_put(w->p, &j->data);
	pthread_mutex_unlock(&w->p->lock);
	return ok;
}

struct running {
	struct pool *p;
	struct job *j;
};

/* 1 when the main thread no longer wants the job. */
static int cancelled(void *arg)
{
	struct running *run = arg;
	int c;

	pthread_mutex_lock(&run->p->lock);
	c = run->j->cancel;
	pthread_mutex_unlock(&run->p->lock);
	return c;
}

/* unlfs: finds j's object in the first store that has it; 1 found. A
 * read error is 0 too: the main thread meets it again itself. */
static int unlfs_job_run(struct worker *w, struct job *j)
{
	struct running run = { w->p, j };
	struct err e = ERR_INIT;
	int r;

	w->check.stop = cancelled;
	w->check.stop_arg = &run;
	r = lfs_find(&w->check, w->p->dirs, w->p->ndirs, &j->lfs, j->lfs_size,
		     &j->found, &e);
	w->check.stop = NULL;
	return r == 1;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct pool *p = w->p;
	struct job *j;
	int ok;

	pthread_mutex_lock(&p->lock);
	for (;;) {
		for (j = p->head; j && j->state != JOB_QUEUED; j = j->next)
			;
		if (p->stop)
			break;
		if (!j) {
			pthread_cond_wait(&p->work, &p->lock);
			continue;
		}
		j->state = JOB_RUNNING;
		pthread_mutex_unlock(&p->lock);
		ok = j->kind == JOB_UNLFS ? unlfs_job_run(w, j) :
		     j->kind == JOB_READ ? read_job_run(w, j) : job_run(w, j);
		pthread_mutex_lock(&p->lock);
		j->ok = ok;
		j->state = JOB_DONE;
		pthread_cond_broadcast(&p->done);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

static size_t pool_size(int threads)
{
	long n = threads;

	if (n <= 0)
		n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 1 ? (size_t)n : 0;
}

/* A rule reads the blobs it takes whole, on the main thread: a
 * replace-text rule (scrub.c) or a split (splits.c). */
static int rules_read_whole(const struct blobs *b)
{
	size_t i;

	for (i = 0; !b->scrub && i < rules_count(b->rules); i++)
		if (rules_rule_action(rules_get(b->rules, i)) == RULES_SPLIT)
			return 1;
	return b->scrub != NULL;
}

/*
 * The pool, when it can serve: rules that convert to LFS or read blobs
 * whole, more than one thread, a source repository the native reader
 * reads, a stream reader to look ahead in. Else (and on any failure to
 * start) none, and convert() reads every blob itself.
 */
static struct pool *pool_start(struct blobs *b)
{
	size_t i, n = pool_size(b->opt.threads);
	struct err ignored = ERR_INIT;
	struct pack_odb *scan_db;
	struct pool *p;
	int reads = rules_read_whole(b);

	if ((!b->has_lfs && !b->lfs_dirs && !reads) || !n || !b->in ||
	    odb_native_fork(b->src, &scan_db, &ignored) != 1)
		return NULL;
	p = xcalloc(1, sizeof(*p));
	p->scan_db = scan_db;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->work, NULL);
	pthread_cond_init(&p->done, NULL);
	stream_cmd_init(&p->look);
	buf_init(&p->ptr, PTR_LFS_POINTER_MAX);
	p->dirs = b->lfs_dirs;
	p->ndirs = b->n_lfs_dirs;
	p->reads = reads;
	p->w = xcalloc(n, sizeof(*p->w));
	p->nworkers = n;
	p->max_live = n * POOL_JOBS_PER_WORKER;
	for (i = 0; i < n; i++) {
		struct worker *w = &p->w[i];

		w->p = p;
		if (odb_native_fork(b->src, &w->db, &ignored) != 1)
			break;
		pack_odb_set_limit(w->db, WORKER_DELTA_LIMIT);
		lfs_check_init(&w->check, b);
		if (pthread_create(&w->thread, NULL, worker_main, w) != 0)
			break;
		p->started++;
	}
	b->pool = p;
	if (!p->started)
		pool_free(b);
	return b->pool;
}

/* Drops j (not running): its put and temp file go. Main thread. */
static void job_drop(struct pool *p, struct job *j)
{
	pthread_mutex_lock(&p->lock);
	list_unlink(p, j);
	spare_put(p, &j->data);
	pthread_mutex_unlock(&p->lock);
	HASH_DEL(p->byid, j);
	ptr_put_abort(j->put);
	lfs_found_release(&j->found);
	if (j->kind == JOB_READ)
		p->read_held -= j->size;
	free(j);
	p->live--;
}

/* Takes j from the workers (lock held): a job not started is done
 * (failed) at once, a running one is waited for. */
static void job_settle(struct pool *p, struct job *j)
{
	if (j->state == JOB_QUEUED)
		j->state = JOB_DONE;	/* ok stays 0 */
	while (j->state == JOB_RUNNING)
		pthread_cond_wait(&p->done, &p->lock);
}

/* Drops the jobs of M lines before offset `before`, which the main
 * thread passed without taking them. */
static void expire(struct pool *p, uint64_t before)
{
	struct job *j;

	while ((j = p->head) && j->off < before) {
		pthread_mutex_lock(&p->lock);
		j->cancel = 1;
		job_settle(p, j);
		pthread_mutex_unlock(&p->lock);
		job_drop(p, j);
	}
}

/* unlfs: 1 when the blob is an LFS pointer (read with the scanner's
 * reader, decoded into lfs and size); what the main thread does with it
 * is unlfs_content's to say. */
static int unlfs_pointer(struct pool *p, const struct oid *id,
			 struct ptr_oid *lfs, uint64_t *size)
{
	struct err ignored = ERR_INIT;
	enum obj_type type;
	int ext;

	if (pack_odb_read(p->scan_db, id, &type, &p->ptr, &ignored) != 1 ||
	    type != OBJ_BLOB || !ptr_is_lfs_pointer(p->ptr.ptr, p->ptr.len) ||
	    ptr_lfs_decode(p->ptr.ptr, p->ptr.len, lfs, size, &ext) < 0 || ext)
		return 0;
	return 1;
}

/* The job the parse, at the M line l of a commit on branch l->ref, will
 * want: 1 an LFS conversion, 2 an unlfs one (*lfs, *lfs_size set), 3 a
 * read for a replace-text rule (a binary blob is left alone only once
 * read: the read is wasted then); 0 none, or maybe none. */
static int will_convert(struct blobs *b, struct pool *p,
			const struct stream_cmd *l, struct oid *id,
			uint64_t *size, struct ptr_oid *lfs, uint64_t *lfs_size)
{
	uint32_t mode = tree_mode_normalize(l->mode);
	struct err ignored = ERR_INIT;
	const struct rule *rule;
	enum blob_action action;
	enum obj_type type;
	struct blob_info *bi;
	struct job *j;

	if (!l->ref.len || oid_from_hex(id, l->dataref.name.ptr,
					l->dataref.name.len) < 0 ||
	    !blob_convertible(l->path.ptr, l->path.len, mode) ||
	    branch_is_meta(l->ref.ptr, l->ref.len))
		return 0;
	HASH_FIND(hh, p->byid, id->hash, OID_RAW, j);
	if (j)
		return 0;
	HASH_FIND(hh, b->byid, id->hash, OID_RAW, bi);
	if (bi && (bi->converted || bi->unlfs_done))
		return 0;
	if (rules_blob_count(b->rules) && rules_match_blob(b->rules, id->hash))
		return 0;
	/* a small blob can only be an unlfs or a read job: without those
	 * rules no rule is matched for it here (the main thread matches it
	 * anyway) */
	if (pack_odb_info(p->scan_db, id, &type, size, &ignored) != 1 ||
	    type != OBJ_BLOB || *size == 0 ||
	    (*size < PTR_LFS_POINTER_MAX && !p->ndirs && !p->reads))
		return 0;
	if (blob_decide(b->rules, l->path.ptr, l->path.len, mode, *size, 0,
			&rule, &action, &ignored) < 0)
		return 0;
	/* read whole by blob_read_all, unless a copy is at hand or a rule
	 * replaced this content already (a split reads every version it
	 * splits through blob_view) */
	if (action == BLOB_REPLACE_TEXT || action == BLOB_SPLIT)
		return *size <= READ_AHEAD_MAX &&
		       (!bi || (blob_from_repository(b, bi) && !bi->replaced)) ?
		       3 : 0;
	/* a blob small enough to be a pointer already is the main thread's
	 * to convert (place() reads it to know); an unlfs one is a job */
	if (action == BLOB_LFS && *size >= PTR_LFS_POINTER_MAX)
		return 1;
	if (action == BLOB_UNLFS && *size < PTR_LFS_POINTER_MAX &&
	    p->ndirs && unlfs_pointer(p, id, lfs, lfs_size))
		return 2;
	return 0;
}

static void queue(struct blobs *b, struct pool *p, enum job_kind kind,
		  const struct oid *id, uint64_t size, uint64_t off,
		  const struct ptr_oid *lfs, uint64_t lfs_size)
{
	struct err ignored = ERR_INIT;
	struct job *j = xcalloc(1, sizeof(*j));

	j->id = *id;
	j->size = size;
	j->off = off;
	j->kind = kind;
	buf_init(&j->data, 0);
	if (kind == JOB_UNLFS) {
		j->lfs = *lfs;
		j->lfs_size = lfs_size;
	} else if (kind == JOB_READ) {
		j->data.max = (size_t)size;	/* size <= READ_AHEAD_MAX */
		p->read_held += size;
	} else if (ptr_put_begin(b->store, &j->put, &ignored) < 0) {
		free(j);	/* the main thread meets it again itself */
		return;
	}
	HASH_ADD(hh, p->byid, id.hash, OID_RAW, j);
	p->live++;
	pthread_mutex_lock(&p->lock);
	j->prev = p->tail;
	if (p->tail)
		p->tail->next = j;
	else
		p->head = j;
	p->tail = j;
	pthread_cond_signal(&p->work);
	pthread_mutex_unlock(&p->lock);
}

/* 1 when a read of size bytes fits in what read jobs may hold. */
static int read_fits(const struct pool *p, uint64_t size)
{
	return p->read_held + size <= READ_AHEAD_MAX;
}

/* The read that waited for room: dropped when the parse passed its line,
 * queued when it fits now. 1 when it still waits. */
static int read_waiting(struct blobs *b, struct pool *p, uint64_t before)
{
	if (!p->waiting)
		return 0;
	if (p->wait_off < before) {
		p->waiting = 0;
		return 0;
	}
	if (!read_fits(p, p->wait_size) || p->live >= p->max_live)
		return 1;
	p->waiting = 0;
	queue(b, p, JOB_READ, &p->wait_id, p->wait_size, p->wait_off, NULL, 0);
	return 0;
}

void blobs_ahead(struct blobs *b, uint64_t before)
{
	static const enum job_kind kinds[] = { 0, JOB_PUT, JOB_UNLFS, JOB_READ };
	struct pool *p = b->pool;
	struct ptr_oid lfs;
	uint64_t size, off, lfs_size;
	struct oid id;
	int k;

	if (!p) {
		if (b->pool_tried)
			return;
		b->pool_tried = 1;
		p = pool_start(b);
		if (!p)
			return;
	}
	expire(p, before);
	if (read_waiting(b, p, before))
		return;
	while (p->live < p->max_live &&
	       stream_reader_ahead(b->in, AHEAD_BYTES, &p->look, &off) > 0) {
		k = will_convert(b, p, &p->look, &id, &size, &lfs, &lfs_size);
		if (k == 3 && !read_fits(p, size)) {
			/* the look-ahead stops here until there is room */
			p->waiting = 1;
			p->wait_id = id;
			p->wait_size = size;
			p->wait_off = off;
			return;
		}
		if (k)
			queue(b, p, kinds[k], &id, size, off, &lfs, lfs_size);
	}
}

/* The job for id, taken from the workers (waited for if running), or
 * NULL. */
static struct job *take(struct blobs *b, const struct oid *id,
			enum job_kind kind)
{
	struct pool *p = b->pool;
	struct job *j;

	if (!p)
		return NULL;
	HASH_FIND(hh, p->byid, id->hash, OID_RAW, j);
	if (!j || j->kind != kind)
		return NULL;
	pthread_mutex_lock(&p->lock);
	job_settle(p, j);	/* not started: the caller reads it itself */
	pthread_mutex_unlock(&p->lock);
	return j;
}

int pool_take_unlfs(struct blobs *b, const struct oid *id,
		    const struct ptr_oid *lfs, uint64_t size,
		    struct lfs_found *found)
{
	struct job *j = take(b, id, JOB_UNLFS);
	int ok;

	if (!j)
		return 0;
	ok = j->ok && j->lfs_size == size &&
	     !memcmp(j->lfs.sha256, lfs->sha256, sizeof(lfs->sha256));
	if (ok) {
		*found = j->found;
		memset(&j->found, 0, sizeof(j->found));
	}
	job_drop(b->pool, j);
	return ok;
}

struct ptr_put *pool_take(struct blobs *b, const struct oid *id)
{
	struct job *j = take(b, id, JOB_PUT);
	struct ptr_put *put = NULL;

	if (!j)
		return NULL;
	if (j->ok) {
		put = j->put;
		j->put = NULL;
	}
	job_drop(b->pool, j);
	return put;
}

int pool_take_read(struct blobs *b, const struct oid *id, uint64_t size,
		   struct buf *out)
{
	struct job *j = take(b, id, JOB_READ);
	struct buf t;
	int ok;

	if (!j)
		return 0;
	ok = j->ok && j->size == size && j->data.len <= out->max;
	if (ok) {	/* out gets the bytes, the job out's old memory */
		t = *out;
		out->ptr = j->data.ptr;
		out->len = j->data.len;
		out->cap = j->data.cap;
		j->data.ptr = t.ptr;
		j->data.len = t.len;
		j->data.cap = t.cap;
	}
	job_drop(b->pool, j);
	return ok;
}

uint64_t pool_bytes_read(const struct blobs *b)
{
	uint64_t n;

	if (!b->pool)
		return 0;
	pthread_mutex_lock(&b->pool->lock);
	n = b->pool->bytes_read;
	pthread_mutex_unlock(&b->pool->lock);
	return n;
}

void pool_free(struct blobs *b)
{
	struct pool *p = b->pool;
	struct job *j;
	size_t i;

	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = 1;
	for (j = p->head; j; j = j->next)
		j->cancel = 1;
	pthread_cond_broadcast(&p->work);
	pthread_mutex_unlock(&p->lock);
	for (i = 0; i < p->started; i++)
		pthread_join(p->w[i].thread, NULL);
	while (p->head)
		job_drop(p, p->head);
	for (i = 0; i < p->nworkers; i++) {
		pack_odb_free(p->w[i].db);
		lfs_check_release(&p->w[i].check);
	}
	free(p->w);
	for (i = 0; i < p->nspare; i++)
		buf_release(&p->spare[i]);
	pack_odb_free(p->scan_db);
	stream_cmd_release(&p->look);
	buf_release(&p->ptr);
	pthread_cond_destroy(&p->work);
	pthread_cond_destroy(&p->done);
	pthread_mutex_destroy(&p->lock);
	free(p);
	b->pool = NULL;
}
