/*
 * progress.c - progress on stderr while a run goes (commits done/total,
 * MB read, MB/s, objects converted, ETA): on a terminal one line redrawn
 * with CR, to a file or pipe one newline-ended line per update; a summary
 * line at the end. Only when stderr is a terminal or --progress asked;
 * never on stdout, which carries the stream.
 */
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "../engine/state.h"

#define PROGRESS_EVERY_NS 250000000LL /* 4 updates a second at most */

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void progress_init(struct rw *rw)
{
	const struct rw_options *o = rw->opt;

	rw->progress_tty = isatty(2);
	rw->progress_on = !o->quiet && o->progress >= 0 &&
			  (o->progress > 0 || rw->progress_tty);
	rw->progress_start = rw->progress_last = now_ns();
}

static void progress_line(struct rw *rw, int64_t t, int final)
{
	double secs = (double)(t - rw->progress_start) / 1e9;
	double mb = (double)stream_reader_offset(rw->in) / 1e6;
	uint64_t total = rw->opt->progress_total;

	fprintf(stderr, "%smigrate: %llu", rw->progress_tty ? "\r" : "",
		(unsigned long long)rw->commits_seen);
	if (total)
		fprintf(stderr, "/%llu", (unsigned long long)total);
	fprintf(stderr, " commits, %.1f MB read, %.1f MB/s, %llu converted",
		mb, secs > 0 ? mb / secs : 0.0,
		(unsigned long long)rw->objects_converted);
	if (final)
		fprintf(stderr, ", done in %.1f s.\n", secs);
	else if (total && rw->commits_seen && rw->commits_seen < total)
		fprintf(stderr, ", ETA %.0f s%s",
			secs * (double)(total - rw->commits_seen) /
				(double)rw->commits_seen,
			rw->progress_tty ? "  " : "\n");
	else
		fputs(rw->progress_tty ? "  " : "\n", stderr);
	fflush(stderr);
}

void progress_tick(struct rw *rw)
{
	int64_t t;

	if (!rw->progress_on)
		return;
	t = now_ns();
	if (t - rw->progress_last < PROGRESS_EVERY_NS)
		return;
	rw->progress_last = t;
	progress_line(rw, t, 0);
}

void progress_done(struct rw *rw)
{
	if (rw->progress_on)
		progress_line(rw, now_ns(), 1);
}
