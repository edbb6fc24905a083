/*
 * ahead.c - the second core (issue 13, item 2): a thread that inflates
 * and checks (SHA-1 against the id) a large object of the native reader
 * while the caller's thread hashes (SHA-256) and writes the chunks it
 * already has. The chunks arrive in order through a ring of AHEAD_SLOTS
 * buffers, so what the caller reads is byte for byte what pack_stream_read
 * gives on one thread, and only the timing changes.
 *
 * One stream at a time; the thread is started with the first one and
 * waits for the next between them. Only the thread touches the stream
 * while it is being read; it is closed by the caller's thread.
 */
#include "git.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define AHEAD_SLOTS 4
#define AHEAD_CHUNK ((size_t)1 << 20)

struct ahead {
	pthread_t thread;
	int started;
	pthread_mutex_t mu;
	pthread_cond_t more;	/* a chunk, the end or an error is there */
	pthread_cond_t room;	/* a slot is free, a job came, or stop */
	struct pack_stream *s;	/* the job (NULL: none) */
	int running;		/* the thread reads s */
	char *slot[AHEAD_SLOTS];
	size_t len[AHEAD_SLOTS];
	size_t head, count, pos;	/* the oldest full slot, how many, read */
	int done;		/* the stream ended (all slots still count) */
	int failed;
	struct err err;
	int stop;
	int abandon;		/* the caller left the stream: stop reading it */
};

static void *ahead_main(void *arg)
{
	struct ahead *a = arg;
	struct err e = ERR_INIT;
	ssize_t n;
	size_t tail;

	pthread_mutex_lock(&a->mu);
	for (;;) {
		while (!a->stop && (!a->running || a->count == AHEAD_SLOTS))
			pthread_cond_wait(&a->room, &a->mu);
		if (a->stop)
			break;
		if (a->abandon) {
			a->running = 0;
			a->done = 1;
			pthread_cond_signal(&a->more);
			continue;
		}
		tail = (a->head + a->count) % AHEAD_SLOTS;
		pthread_mutex_unlock(&a->mu);
		/* outside the lock: the work the caller's thread does not do */
		n = pack_stream_read(a->s, a->slot[tail], AHEAD_CHUNK, &e);
		pthread_mutex_lock(&a->mu);
		if (n > 0) {
			a->len[tail] = (size_t)n;
			a->count++;
		} else {
			a->running = 0;
			a->done = 1;
			if (n < 0) {
				a->failed = 1;
				a->err = e;
			}
		}
		pthread_cond_signal(&a->more);
	}
	pthread_mutex_unlock(&a->mu);
	return NULL;
}

struct ahead *ahead_new(void)
{
	struct ahead *a = xcalloc(1, sizeof(*a));
	size_t i;

	pthread_mutex_init(&a->mu, NULL);
	pthread_cond_init(&a->more, NULL);
	pthread_cond_init(&a->room, NULL);
	for (i = 0; i < AHEAD_SLOTS; i++)
		a->slot[i] = xmalloc(AHEAD_CHUNK);
	return a;
}

/* Takes the stream back from the thread when the caller left it early
 * (the thread stops after its chunk), and closes it. */
static void ahead_drop(struct ahead *a)
{
	pthread_mutex_lock(&a->mu);
	if (a->running) {
		a->abandon = 1;
		a->count = 0;
		pthread_cond_signal(&a->room);
		while (a->running)
			pthread_cond_wait(&a->more, &a->mu);
	}
	pthread_mutex_unlock(&a->mu);
	pack_stream_close(a->s);
	a->s = NULL;
}

void ahead_free(struct ahead *a)
{
	size_t i;

	if (!a)
		return;
	pthread_mutex_lock(&a->mu);
	a->stop = 1;
	pthread_cond_signal(&a->room);
	pthread_mutex_unlock(&a->mu);
	if (a->started)
		pthread_join(a->thread, NULL);
	pack_stream_close(a->s);
	for (i = 0; i < AHEAD_SLOTS; i++)
		free(a->slot[i]);
	pthread_cond_destroy(&a->more);
	pthread_cond_destroy(&a->room);
	pthread_mutex_destroy(&a->mu);
	free(a);
}

int ahead_start(struct ahead *a, struct pack_stream *s, struct err *e)
{
	int rc;

	if (a->s)
		ahead_drop(a);
	if (!a->started) {
		rc = pthread_create(&a->thread, NULL, ahead_main, a);
		if (rc != 0) {
			pack_stream_close(s);
			return err_set(e, ERR_IO, "cannot start a reader thread: %s",
				       strerror(rc));
		}
		a->started = 1;
	}
	pthread_mutex_lock(&a->mu);
	a->s = s;
	a->head = a->count = a->pos = 0;
	a->done = a->failed = a->abandon = 0;
	a->running = 1;
	pthread_cond_signal(&a->room);
	pthread_mutex_unlock(&a->mu);
	return 0;
}

ssize_t ahead_read(struct ahead *a, void *dst, size_t cap, struct err *e)
{
	size_t n;

	pthread_mutex_lock(&a->mu);
	while (a->count == 0 && !a->done)
		pthread_cond_wait(&a->more, &a->mu);
	if (a->count == 0) {	/* the end, or the error, of the stream */
		int failed = a->failed;

		if (failed)
			*e = a->err;
		pthread_mutex_unlock(&a->mu);
		pack_stream_close(a->s);
		a->s = NULL;
		return failed ? -1 : 0;
	}
	n = a->len[a->head] - a->pos;
	if (n > cap)
		n = cap;
	pthread_mutex_unlock(&a->mu);
	/* the slot is the caller's until it is given back below */
	memcpy(dst, a->slot[a->head] + a->pos, n);
	pthread_mutex_lock(&a->mu);
	a->pos += n;
	if (a->pos == a->len[a->head]) {
		a->head = (a->head + 1) % AHEAD_SLOTS;
		a->count--;
		a->pos = 0;
		pthread_cond_signal(&a->room);
	}
	pthread_mutex_unlock(&a->mu);
	return (ssize_t)n;
}
