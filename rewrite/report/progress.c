/*
 * progress.c - progress on stderr while a run goes (commits done/total,
 * MB read, MB/s, objects converted, files replaced, split or dropped,
 * ETA): on a terminal one line redrawn
 * with CR, to a file or pipe one newline-ended line per update; a summary
 * line at the end. Only when stderr is a terminal or --progress asked;
 * never on stdout, which carries the stream.
 */
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "report.h"

#define PROGRESS_EVERY_NS 250000000LL /* 4 updates a second at most */

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void progress_init(struct progress *p, int quiet, int want, uint64_t total)
{
	p->tty = isatty(2);
	p->on = !quiet && want >= 0 && (want > 0 || p->tty);
	p->total = total;
	p->start = p->last = now_ns();
}

static void progress_line(const struct progress *p, const struct progress_counts *c,
			  int64_t t, int final)
{
	double secs = (double)(t - p->start) / 1e9;
	double mb = (double)c->bytes / 1e6;
	uint64_t total = p->total;

	fprintf(stderr, "%smigrate: %llu", p->tty ? "\r" : "",
		(unsigned long long)c->commits);
	if (total)
		fprintf(stderr, "/%llu", (unsigned long long)total);
	fprintf(stderr, " commits, %.1f MB read, %.1f MB/s", mb,
		secs > 0 ? mb / secs : 0.0);
	/* what the rules did so far: "0 converted" when nothing yet */
	if (c->converted || !(c->replaced || c->split || c->dropped))
		fprintf(stderr, ", %llu converted", (unsigned long long)c->converted);
	if (c->replaced)
		fprintf(stderr, ", %llu replaced", (unsigned long long)c->replaced);
	if (c->split)
		fprintf(stderr, ", %llu split", (unsigned long long)c->split);
	if (c->dropped)
		fprintf(stderr, ", %llu dropped", (unsigned long long)c->dropped);
	/* what the other threads read (--threads), when they read */
	if (final && c->ahead)
		fprintf(stderr, ", %.1f MB read ahead", (double)c->ahead / 1e6);
	if (final)
		fprintf(stderr, ", done in %.1f s.\n", secs);
	else if (total && c->commits && c->commits < total)
		fprintf(stderr, ", ETA %.0f s%s",
			secs * (double)(total - c->commits) /
				(double)c->commits,
			p->tty ? "  " : "\n");
	else
		fputs(p->tty ? "  " : "\n", stderr);
	fflush(stderr);
}

void progress_tick(struct progress *p, const struct progress_counts *c)
{
	int64_t t;

	if (!p->on)
		return;
	t = now_ns();
	if (t - p->last < PROGRESS_EVERY_NS)
		return;
	p->last = t;
	progress_line(p, c, t, 0);
}

void progress_done(struct progress *p, const struct progress_counts *c)
{
	if (p->on)
		progress_line(p, c, now_ns(), 1);
}
