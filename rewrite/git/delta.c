/*
 * delta.c - a delta in git's pack format (docs/FORMATS.md 9: the base's
 * size and the target's, then copy and insert instructions) for two
 * versions of one text, made without an index of the base: the two are
 * walked side by side, equal stretches become copies, and at a mismatch
 * the walk finds its way back by looking for a short anchor (a line's
 * first bytes) of one side in a window of the other with memmem(3),
 * nearest first, windows growing. What both ends share is taken first,
 * whole. This finds what successive versions of a record file share
 * (records inserted or removed, lines changed here and there) at the speed
 * of memcmp and memmem, where git's diff_delta indexes every 16 bytes of
 * the base first; it finds less in text moved far or reordered, and where
 * edits come every line or two (an anchor then spans one), which become
 * inserts.
 *
 * Time stays linear in the input whatever it holds: windows are bounded,
 * the bytes searches scan are paid out of a budget (the inputs' size, and
 * more for each byte copied), and a run of failed searches skips further
 * ahead each time.
 */
#include "git.h"

#define ANCHOR 32		/* bytes an anchor is long */
#define LINE_SCAN 256		/* how far an anchor looks for a line start */
#define WIN_FIRST 4096		/* the first window searched */
#define WIN_GROW 8		/* each next window is this much larger */
#define WIN_MAX ((size_t)4 << 20)
#define WIN_MANY ((size_t)32 << 10)	/* up to here, TRIES anchors a side */
#define TRIES 4
/* what memmem may scan: the two inputs' size, then CREDIT bytes for each
 * byte copied; a search costs RESYNC_COST besides. Past it, searches look
 * in the first window only, for sure places only. */
#define CREDIT 4
#define RESYNC_COST 256
#define SKIP_MAX ((size_t)64 << 10)	/* the longest skip after failures */
#define COPY_MAX 0xffffffu	/* a copy's size has 3 bytes */
#define INSERT_MAX 127		/* an insert's size is its opcode */

struct delta {
	const unsigned char *b, *t;
	size_t bn, tn;		/* bn: the base copies may reach (32-bit) */
	struct buf *out;
	size_t start, limit;	/* out->len at the start; the most bytes */
	size_t ins;		/* where the target's bytes not yet said start */
	uint64_t credit;	/* bytes memmem may still scan */
	int over;		/* the delta passed limit (or out's max) */
	int local_ok;		/* a near or close place is sure (see place) */
};

static void emit(struct delta *d, const void *p, size_t n)
{
	if (d->over)
		return;
	if (d->out->len - d->start + n > d->limit || buf_add(d->out, p, n) < 0)
		d->over = 1;
}

/* The size varint of the delta's header: 7 bits a byte, low first. */
static void emit_size(struct delta *d, uint64_t v)
{
	unsigned char c[10];
	size_t n = 0;

	do {
		c[n] = (unsigned char)(v & 0x7f);
		v >>= 7;
		if (v)
			c[n] |= 0x80;
		n++;
	} while (v);
	emit(d, c, n);
}

/* The target's bytes from d->ins up to end as inserts. */
static void flush_inserts(struct delta *d, size_t end)
{
	while (d->ins < end && !d->over) {
		size_t k = end - d->ins < INSERT_MAX ? end - d->ins : INSERT_MAX;
		unsigned char op = (unsigned char)k;

		emit(d, &op, 1);
		emit(d, d->t + d->ins, k);
		d->ins += k;
	}
}

/* One copy instruction: the opcode, then the offset's and the size's
 * non-zero bytes (absent bytes are 0 to the decoder). Its length. */
static size_t copy_op(unsigned char *c, uint64_t off, size_t len)
{
	size_t n = 1;
	int i;

	c[0] = 0x80;
	for (i = 0; i < 4; i++)
		if ((off >> (8 * i)) & 0xff) {
			c[0] |= (unsigned char)(1u << i);
			c[n++] = (unsigned char)(off >> (8 * i));
		}
	for (i = 0; i < 3; i++)
		if ((len >> (8 * i)) & 0xff) {
			c[0] |= (unsigned char)(0x10u << i);
			c[n++] = (unsigned char)(len >> (8 * i));
		}
	return n;
}

/*
 * Target bytes [to, to + len) are base bytes [from, from + len): a copy,
 * in pieces of at most COPY_MAX (never of size 0, which the decoder takes
 * for 0x10000), after the inserts pending before it. A copy that would
 * cost as many bytes as it says is left to the inserts.
 */
static void copy(struct delta *d, size_t from, size_t to, size_t len)
{
	unsigned char c[8];

	if (len == 0 || copy_op(c, from, len) >= len)
		return;
	flush_inserts(d, to);
	d->ins = to + len;
	while (len) {
		size_t k = len < COPY_MAX ? len : COPY_MAX;

		emit(d, c, copy_op(c, from, k));
		from += k;
		len -= k;
	}
}

/* How many bytes a and b have in common from their start (up to n):
 * eight at a time, then the last few. */
static size_t same_fwd(const unsigned char *a, const unsigned char *b,
		       size_t n)
{
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint64_t x, y;

		memcpy(&x, a + i, 8);
		memcpy(&y, b + i, 8);
		if (x != y)
			break;
	}
	while (i < n && a[i] == b[i])
		i++;
	return i;
}

/* How many bytes a and b have in common before their ends (up to n). */
static size_t same_back(const unsigned char *a_end, const unsigned char *b_end,
			size_t n)
{
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint64_t x, y;

		memcpy(&x, a_end - i - 8, 8);
		memcpy(&y, b_end - i - 8, 8);
		if (x != y)
			break;
	}
	while (i < n && a_end[-1 - (ptrdiff_t)i] == b_end[-1 - (ptrdiff_t)i])
		i++;
	return i;
}

/*
 * The anchor at or after from in p[0..end): the next line's start within
 * LINE_SCAN bytes (lines are what versions of a text share), else from
 * itself (text without lines, or binary). SIZE_MAX when no whole anchor
 * fits before end.
 */
static size_t anchor_at(const unsigned char *p, size_t from, size_t end)
{
	size_t a = from;

	if (from > 0 && from < end && p[from - 1] != '\n') {
		size_t n = end - from < LINE_SCAN ? end - from : LINE_SCAN;
		const unsigned char *nl = memchr(p + from, '\n', n);

		if (nl)
			a = (size_t)(nl - p) + 1;
	}
	return a < end && end - a >= ANCHOR ? a : SIZE_MAX;
}

/* The anchor after the one at a (SIZE_MAX when none). */
static size_t anchor_next(const unsigned char *p, size_t a, size_t end)
{
	size_t n;

	if (a == SIZE_MAX)
		return SIZE_MAX;
	n = anchor_at(p, a + 1, end);
	/* no line start near: the next anchor a whole anchor further */
	if (n == a + 1 && p[a] != '\n')
		n = a + ANCHOR < end ? anchor_at(p, a + ANCHOR, end) : SIZE_MAX;
	return n;
}

/*
 * A place found by resync: base nb and target nt are equal for ANCHOR
 * bytes at least. It is taken at once when it is sure: its match goes on
 * for STRONG bytes (or to the end), or it is near and not too short (NEAR
 * bytes of the target before it and within NEAR of home in the base,
 * NEAR_LEN long: a local edit), or close (CLOSE in both, whatever its
 * length: an edit every line or two). But in records that look alike,
 * near and close places are found everywhere, and following them would
 * lose the base's thread for good: so after a few short copies in a row,
 * one search takes long ones only (the next such search comes as soon
 * again when it found one, twice as late when not). Any other place (a
 * line or two that recur all over a record file, "\tNOT-FOR-US: ...", in
 * records new to the target) is taken only when no window finds better.
 */
#define STRONG 256
#define NEAR 1024
#define NEAR_LEN 64
#define CLOSE 256

struct place {
	size_t nb, nt;
	size_t score;		/* the match (up to STRONG) less the inserts */
	int sure;
};

static int consider(struct delta *d, size_t home, size_t ti, size_t tend,
		     size_t nb, size_t nt, struct place *best)
{
	size_t avail = d->bn - nb < tend - nt ? d->bn - nb : tend - nt;
	size_t len = same_fwd(d->b + nb, d->t + nt, avail < STRONG ? avail : STRONG);
	size_t dist = nb > home ? nb - home : home - nb;
	int sure = len >= STRONG || len == avail ||
		   (d->local_ok &&
		    ((len >= NEAR_LEN && nt - ti <= NEAR && dist <= NEAR) ||
		     (nt - ti <= CLOSE && dist <= CLOSE)));
	size_t score = len + STRONG > nt - ti ? len + STRONG - (nt - ti) : 0;

	if (sure > best->sure ||
	    (sure == best->sure &&
	     (sure ? nt < best->nt : score > best->score))) {
		best->nb = nb;
		best->nt = nt;
		best->score = score;
		best->sure = sure;
	}
	return sure;
}

#define HITS 8	/* the places a search looks at past a weak one */

/*
 * Looks for the ANCHOR bytes at needle in hay[lo, hi) (clamped to hay's n
 * bytes and to the budget, which pays for the bytes scanned), and weighs
 * each place found (base_side: hay is the base) until a sure one, or HITS
 * of them.
 */
static void find(struct delta *d, int base_side, size_t lo, size_t hi,
		 const unsigned char *needle, size_t other, size_t home,
		 size_t ti, size_t tend, struct place *best)
{
	const unsigned char *hay = base_side ? d->b : d->t;
	size_t n = base_side ? d->bn : tend;
	int hits;

	if (hi > n)
		hi = n;
	if (lo >= hi || hi - lo < ANCHOR)
		return;
	/* past the budget, the first window still (a search must not stop
	 * finding the next line when the budget is gone: all the rest would
	 * become inserts) */
	if (hi - lo > d->credit && hi - lo > WIN_FIRST + ANCHOR)
		hi = lo + (d->credit > WIN_FIRST + ANCHOR ? (size_t)d->credit :
			   WIN_FIRST + ANCHOR);
	for (hits = 0; hits < HITS && hi - lo >= ANCHOR; hits++) {
		const unsigned char *f = memmem(hay + lo, hi - lo, needle, ANCHOR);
		size_t x = f ? (size_t)(f - hay) : hi;

		/* the bytes scanned */
		d->credit -= d->credit < x - lo ? d->credit : x - lo;
		if (!f)
			return;
		if (base_side ? consider(d, home, ti, tend, x, other, best) :
		    consider(d, home, ti, tend, other, x, best))
			return;
		lo = x + 1;
	}
}

/*
 * After a mismatch at target ti (target bytes up to tend to be made), home
 * being where the base's thread is: a place to go on from, found by
 * looking for the target's next anchors in the base around home (ahead,
 * then behind) and the base's next anchors (from home) in the target ahead
 * of ti, in windows growing from WIN_FIRST to wmax, nearest band first.
 * 1 with *p, 0 when nothing was found (past the budget: nothing sure).
 */
static int resync(struct delta *d, size_t home, size_t thread, size_t ti,
		  size_t tend, size_t wmax, struct place *p)
{
	size_t ta[TRIES], ba[TRIES], th, w, prev = 0;
	int j, broke = 0;

	memset(p, 0, sizeof(*p));
	p->nt = SIZE_MAX;
	d->credit -= d->credit < RESYNC_COST ? d->credit : RESYNC_COST;
	ta[0] = anchor_at(d->t, ti, tend);
	ba[0] = anchor_at(d->b, home, d->bn);
	for (j = 1; j < TRIES; j++) {
		ta[j] = anchor_next(d->t, ta[j - 1], tend);
		ba[j] = anchor_next(d->b, ba[j - 1], d->bn);
	}
	th = thread != home ? anchor_at(d->b, thread, d->bn) : SIZE_MAX;
	if (d->credit < WIN_FIRST) {
		wmax = WIN_FIRST;	/* past the budget: the first window */
		broke = 1;
	}
	for (w = WIN_FIRST;; prev = w, w *= WIN_GROW) {
		int tries = w <= WIN_MANY && d->credit >= WIN_FIRST ? TRIES : 1;

		for (j = 0; j < tries; j++) {
			/* the target's anchor in the base: ahead of home,
			 * then behind it */
			if (ta[j] != SIZE_MAX && !(p->sure && ta[j] >= p->nt)) {
				find(d, 1, home + (prev ? prev - ANCHOR : 0),
				     home + w + ANCHOR, d->t + ta[j], ta[j],
				     home, ti, tend, p);
				if (!p->sure && home > prev)
					find(d, 1, home > w ? home - w : 0,
					     home - prev + ANCHOR, d->t + ta[j],
					     ta[j], home, ti, tend, p);
			}
			/* the base's anchor in the target ahead of ti */
			if (ba[j] != SIZE_MAX) {
				size_t hi = ti + w + ANCHOR;

				if (p->sure && p->nt + ANCHOR < hi)
					hi = p->nt + ANCHOR;
				find(d, 0, ti + (prev ? prev - ANCHOR : 0), hi,
				     d->b + ba[j], ba[j], home, ti, tend, p);
			}
		}
		/* the base's anchor where its last long copy ended, in the
		 * target ahead: the way back after records new to the target */
		if (th != SIZE_MAX) {
			size_t hi = ti + w + ANCHOR;

			if (p->sure && p->nt + ANCHOR < hi)
				hi = p->nt + ANCHOR;
			find(d, 0, ti + (prev ? prev - ANCHOR : 0), hi,
			     d->b + th, th, home, ti, tend, p);
		}
		if (p->sure)
			return 1;
		/* a weak place: wider windows are not worth their cost */
		if (w >= wmax ||
		    (p->nt != SIZE_MAX && w >= WIN_MANY && d->local_ok))
			return p->nt != SIZE_MAX && !broke;
	}
}

/* Makes target [ti, tend) from base, starting where both are at bi, ti. */
static void walk(struct delta *d, size_t bi, size_t ti, size_t tend)
{
	size_t skip = ANCHOR, home = bi, thread = bi;
	unsigned lost = 0;	/* searches in a row that found nothing sure */
	unsigned streak = 0;	/* searches since the last long copy */
	unsigned check = 4;	/* the streak at which only long ones count */

	while (ti < tend && !d->over) {
		struct place p;
		size_t n, k;

		if (bi < d->bn) {
			n = d->bn - bi < tend - ti ? d->bn - bi : tend - ti;
			k = same_fwd(d->b + bi, d->t + ti, n);
			if (k) {
				copy(d, bi, ti, k);
				d->credit += CREDIT * k;
				bi += k;
				ti += k;
				if (k >= STRONG) {
					home = thread = bi;
					streak = 0;
				}
				continue;
			}
		}
		/* text new to the target: while nothing sure is found, the
		 * windows shrink, down to the first (the budget is for edits) */
		n = lost * 3 < 10 ? WIN_MAX >> (lost * 3) : WIN_FIRST;
		d->local_ok = streak < check;
		if (!d->local_ok)
			streak = 0;
		streak++;
		if (resync(d, home, thread, ti, tend, n, &p)) {
			/* the equal bytes just before the place found */
			k = same_back(d->b + p.nb, d->t + p.nt,
				      p.nb < p.nt - ti ? p.nb : p.nt - ti);
			bi = p.nb - k;
			ti = p.nt - k;
			k = same_fwd(d->b + bi, d->t + ti,
				     d->bn - bi < tend - ti ? d->bn - bi : tend - ti);
			copy(d, bi, ti, k);
			d->credit += CREDIT * k;
			bi += k;
			ti += k;
			if (p.sure)
				home = bi;
			lost = p.sure ? 0 : lost + 1;
			if (k >= STRONG) {
				thread = bi;
				streak = 0;
			}
			/* a search for long copies only: as often again when it
			 * found one, half as often when not */
			if (!d->local_ok)
				check = k >= STRONG ? 4 : check < 4096 ? check * 2 : check;
			if (p.sure)
				skip = ANCHOR;
			continue;
		}
		/* nothing near: these bytes become inserts, and the next try
		 * is further on each time nothing is found again */
		n = anchor_next(d->t, anchor_at(d->t, ti, tend), tend);
		if (n == SIZE_MAX || n - ti < skip)
			n = tend - ti < skip ? tend : ti + skip;
		bi = d->bn - bi > n - ti ? bi + (n - ti) : d->bn;
		home = bi;	/* the base's thread, as best guessed */
		ti = n;
		if (!d->local_ok)
			check = check < 4096 ? check * 2 : check;
		if (skip < SKIP_MAX)
			skip *= 2;
		lost++;
	}
}

/* d set up for a delta from base to target appended to out (at most
 * max_len bytes), the two sizes said. */
static void delta_begin(struct delta *d, const unsigned char *base,
			size_t base_len, const unsigned char *target,
			size_t target_len, size_t max_len, struct buf *out)
{
	memset(d, 0, sizeof(*d));
	d->b = base;
	d->t = target;
	/* a copy's offset has 4 bytes: a base past 4 GiB is read up to there */
	d->bn = (uint64_t)base_len > UINT32_MAX ? (size_t)UINT32_MAX : base_len;
	d->tn = target_len;
	d->out = out;
	d->start = out->len;
	d->limit = max_len;
	emit_size(d, base_len);
	emit_size(d, target_len);
}

/* The target's bytes not said yet inserted: 1, or 0 (out as it was) when
 * the delta passed its limit. */
static int delta_end(struct delta *d)
{
	flush_inserts(d, d->tn);
	if (d->over) {
		d->out->len = d->start;
		if (d->out->cap)
			d->out->ptr[d->out->len] = '\0';
		return 0;
	}
	return 1;
}

int delta_create(const unsigned char *base, size_t base_len,
		 const unsigned char *target, size_t target_len,
		 size_t max_len, struct buf *out)
{
	struct delta d;
	size_t p, s, n;

	delta_begin(&d, base, base_len, target, target_len, max_len, out);
	d.credit = (uint64_t)d.bn + target_len + WIN_MAX;
	/* what the two share at their start and at their end */
	n = d.bn < d.tn ? d.bn : d.tn;
	p = same_fwd(base, target, n);
	s = d.bn == base_len ? same_back(base + d.bn, target + d.tn, n - p) : 0;
	copy(&d, 0, 0, p);
	/* when the two ends hold the whole base, what is between them in the
	 * target is new (inserted text), or there is nothing */
	if (p + s < d.bn)
		walk(&d, p, p, d.tn - s);
	copy(&d, d.bn - s, d.tn - s, s);
	return delta_end(&d);
}

/* ---- trees ---- */

/* The entry of a raw tree at p (before end): its length, its name (*name,
 * *nlen) and whether it is a directory; 0 when p holds no whole entry. */
static size_t tree_entry(const unsigned char *p, const unsigned char *end,
			 const unsigned char **name, size_t *nlen, int *dir)
{
	const unsigned char *sp = memchr(p, ' ', (size_t)(end - p)), *nul;

	if (!sp || !(nul = memchr(sp, '\0', (size_t)(end - sp))) ||
	    (size_t)(end - nul) < 1 + OID_RAW)
		return 0;
	*dir = sp - p == 5 && !memcmp(p, "40000", 5);
	*name = sp + 1;
	*nlen = (size_t)(nul - sp - 1);
	return (size_t)(nul + 1 + OID_RAW - p);
}

/* git's tree order: names compared bytewise, a directory's as if it
 * ended in '/'. */
static int tree_order(const unsigned char *a, size_t an, int adir,
		      const unsigned char *b, size_t bn, int bdir)
{
	size_t n = an < bn ? an : bn;
	int c = memcmp(a, b, n), ca, cb;

	if (c || an == bn)
		return c ? c : adir - bdir;
	ca = an > n ? a[n] : adir ? '/' : 0;
	cb = bn > n ? b[n] : bdir ? '/' : 0;
	return ca - cb;
}

/* Bytes the base and the target share, copied as one: a run, extended
 * while it goes on in both. */
struct span {
	size_t b, t, n;
};

/* n bytes at bo in the base are the target's at to: the span grows, or
 * the last one is copied and this one starts. */
static void span_add(struct delta *d, struct span *sp, size_t bo, size_t to,
		     size_t n)
{
	if (!sp->n || sp->b + sp->n != bo || sp->t + sp->n != to) {
		copy(d, sp->b, sp->t, sp->n);
		sp->b = bo;
		sp->t = to;
		sp->n = 0;
	}
	sp->n += n;
}

int delta_create_tree(const unsigned char *base, size_t base_len,
		      const unsigned char *target, size_t target_len,
		      size_t max_len, struct buf *out)
{
	const unsigned char *be = base + base_len, *te = target + target_len;
	struct span sp = { 0, 0, 0 };
	size_t bo = 0, to = 0;
	struct delta d;

	if (base_len > UINT32_MAX)
		return delta_create(base, base_len, target, target_len,
				    max_len, out);
	delta_begin(&d, base, base_len, target, target_len, max_len, out);
	/* the two lists side by side in tree order: an entry both hold, byte
	 * for byte, is copied (runs of them at once); the target's others
	 * are inserted */
	while (bo < base_len && to < target_len && !d.over) {
		/* set by tree_entry when it finds an entry (a Release build's
		 * -O3 cannot see it: -Werror=maybe-uninitialized) */
		const unsigned char *bname = NULL, *tname = NULL;
		size_t bl, tl, bnl = 0, tnl = 0;
		int bdir = 0, tdir = 0, c;

		bl = tree_entry(base + bo, be, &bname, &bnl, &bdir);
		tl = tree_entry(target + to, te, &tname, &tnl, &tdir);
		if (!bl || !tl)
			break;
		if (bl == tl && !memcmp(base + bo, target + to, bl)) {
			span_add(&d, &sp, bo, to, bl);
			bo += bl;
			to += tl;
			continue;
		}
		c = tree_order(bname, bnl, bdir, tname, tnl, tdir);
		/* the same entry, another id: its mode and name are copied
		 * (with what came before), the id inserted */
		if (c == 0 && bl == tl &&
		    !memcmp(base + bo, target + to, bl - OID_RAW))
			span_add(&d, &sp, bo, to, bl - OID_RAW);
		if (c <= 0)
			bo += bl;	/* gone, or changed: the base's is passed */
		if (c >= 0)
			to += tl;	/* new, or changed: inserted */
	}
	copy(&d, sp.b, sp.t, sp.n);
	return delta_end(&d);
}
