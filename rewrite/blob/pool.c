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

enum job_state { JOB_QUEUED, JOB_RUNNING, JOB_DONE };

struct job {
	struct oid id;
	uint64_t size;
	uint64_t off;		/* the stream offset of the M line that asked */
	struct ptr_put *put;	/* the worker's while it runs */
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
	char *chunk;
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
	while (!cancel && (n = pack_stream_read(s, w->chunk, CHUNK, &e)) > 0) {
		if (ptr_put_write(j->put, w->chunk, (size_t)n, &e) < 0)
			break;
		total += (uint64_t)n;
		pthread_mutex_lock(&w->p->lock);
		cancel = j->cancel;
		pthread_mutex_unlock(&w->p->lock);
	}
	pack_stream_close(s);
	return n == 0 && !cancel && total == size;
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
		ok = job_run(w, j);
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

/*
 * The pool, when it can serve: rules that convert to LFS, more than one
 * thread, a source repository the native reader reads, a stream reader
 * to look ahead in. Else (and on any failure to start) none, and convert()
 * reads every blob itself.
 */
static struct pool *pool_start(struct blobs *b)
{
	size_t i, n = pool_size(b->opt.threads);
	struct err ignored = ERR_INIT;
	struct pack_odb *scan_db;
	struct pool *p;

	if (!b->has_lfs || !n || !b->in ||
	    odb_native_fork(b->src, &scan_db, &ignored) != 1)
		return NULL;
	p = xcalloc(1, sizeof(*p));
	p->scan_db = scan_db;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->work, NULL);
	pthread_cond_init(&p->done, NULL);
	stream_cmd_init(&p->look);
	p->w = xcalloc(n, sizeof(*p->w));
	p->nworkers = n;
	p->max_live = n * POOL_JOBS_PER_WORKER;
	for (i = 0; i < n; i++) {
		struct worker *w = &p->w[i];

		w->p = p;
		if (odb_native_fork(b->src, &w->db, &ignored) != 1)
			break;
		pack_odb_set_limit(w->db, WORKER_DELTA_LIMIT);
		w->chunk = xmalloc(CHUNK);
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
	pthread_mutex_unlock(&p->lock);
	HASH_DEL(p->byid, j);
	ptr_put_abort(j->put);
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

/* 1 when the parse, at the M line l of a commit on branch l->ref, will
 * convert the blob to LFS (and it is worth a job); 0 when it will not,
 * or may not. */
static int will_convert(struct blobs *b, struct pool *p,
			const struct stream_cmd *l, struct oid *id,
			uint64_t *size)
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
	if (bi && bi->converted)
		return 0;
	if (rules_blob_count(b->rules) && rules_match_blob(b->rules, id->hash))
		return 0;
	/* an empty blob, or one small enough to be a pointer already, is
	 * the main thread's (place() reads it to know) */
	if (pack_odb_info(p->scan_db, id, &type, size, &ignored) != 1 ||
	    type != OBJ_BLOB || *size < PTR_LFS_POINTER_MAX)
		return 0;
	if (blob_decide(b->rules, l->path.ptr, l->path.len, mode, *size, 0,
			&rule, &action, &ignored) < 0)
		return 0;
	return action == BLOB_LFS;
}

static void queue(struct blobs *b, struct pool *p, const struct oid *id,
		  uint64_t size, uint64_t off)
{
	struct err ignored = ERR_INIT;
	struct job *j = xcalloc(1, sizeof(*j));

	j->id = *id;
	j->size = size;
	j->off = off;
	if (ptr_put_begin(b->store, &j->put, &ignored) < 0) {
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

void blobs_ahead(struct blobs *b, uint64_t before)
{
	struct pool *p = b->pool;
	struct oid id;
	uint64_t size, off;

	if (!p) {
		if (b->pool_tried)
			return;
		b->pool_tried = 1;
		p = pool_start(b);
		if (!p)
			return;
	}
	expire(p, before);
	while (p->live < p->max_live &&
	       stream_reader_ahead(b->in, AHEAD_BYTES, &p->look, &off) > 0)
		if (will_convert(b, p, &p->look, &id, &size))
			queue(b, p, &id, size, off);
}

struct ptr_put *pool_take(struct blobs *b, const struct oid *id)
{
	struct pool *p = b->pool;
	struct ptr_put *put = NULL;
	struct job *j;

	if (!p)
		return NULL;
	HASH_FIND(hh, p->byid, id->hash, OID_RAW, j);
	if (!j)
		return NULL;
	pthread_mutex_lock(&p->lock);
	job_settle(p, j);	/* not started: the caller reads it itself */
	if (j->ok) {
		put = j->put;
		j->put = NULL;
	}
	pthread_mutex_unlock(&p->lock);
	job_drop(p, j);
	return put;
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
		free(p->w[i].chunk);
	}
	free(p->w);
	pack_odb_free(p->scan_db);
	stream_cmd_release(&p->look);
	pthread_cond_destroy(&p->work);
	pthread_cond_destroy(&p->done);
	pthread_mutex_destroy(&p->lock);
	free(p);
	b->pool = NULL;
}
