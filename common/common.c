/* common.c - allocation, numbers, struct buf and struct err. */
#include "common.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char buf_empty[1];

static void (*die_routine)(const char *msg);

void set_die_routine(void (*fn)(const char *msg))
{
	die_routine = fn;
}

void die(const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (die_routine)
		die_routine(msg);
	abort();
}

static void (*warning_routine)(const char *line);

void set_warning_routine(void (*fn)(const char *line))
{
	warning_routine = fn;
}

void warning(const char *fmt, ...)
{
	char line[2048];
	va_list ap;

	if (!warning_routine)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	warning_routine(line);
}

static void oom(size_t n)
{
	die("out of memory allocating %zu bytes", n);
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom(n);
	return p;
}

void *xcalloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);
	if (!p)
		oom(nmemb * size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		oom(n);
	return q;
}

char *xstrdup(const char *s)
{
	return xmemdup(s, strlen(s));
}

char *xmemdup(const void *p, size_t n)
{
	size_t total;
	char *r;

	if (size_add(n, 1, &total) < 0)
		oom(n);
	r = xmalloc(total);
	if (n)
		memcpy(r, p, n);
	r[n] = '\0';
	return r;
}

int parse_u64(const char *s, size_t len, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;
	size_t i;

	if (len == 0)
		return -1;
	for (i = 0; i < len; i++) {
		unsigned d;
		if (s[i] < '0' || s[i] > '9')
			return -1;
		d = (unsigned)(s[i] - '0');
		if (v > (max - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

void hex_encode(const unsigned char *in, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[in[i] >> 4];
		out[2 * i + 1] = digits[in[i] & 15];
	}
	out[2 * n] = '\0';
}

static int hex_value(unsigned char c)
{
	if ((unsigned)(c - '0') < 10)
		return c - '0';
	c |= 0x20;	/* 'A'..'F' to 'a'..'f' */
	if ((unsigned)(c - 'a') < 6)
		return c - 'a' + 10;
	return -1;
}

int hex_decode(const char *in, size_t n, unsigned char *out)
{
	size_t i;

	for (i = 0; i < n; i++) {
		int hi = hex_value((unsigned char)in[2 * i]);
		int lo = hex_value((unsigned char)in[2 * i + 1]);

		if ((hi | lo) < 0)
			return -1;
		out[i] = (unsigned char)(hi << 4 | lo);
	}
	return 0;
}

void buf_init(struct buf *b, size_t max)
{
	b->ptr = buf_empty;
	b->len = b->cap = 0;
	b->max = max;
}

void buf_release(struct buf *b)
{
	if (!b)
		return;
	if (b->cap)
		free(b->ptr);
	b->ptr = buf_empty;
	b->len = b->cap = 0;
}

int buf_grow(struct buf *b, size_t extra)
{
	size_t need, ncap;

	if (size_add(b->len, extra, &need) < 0 || need > b->max)
		return -1;
	if (need < b->cap)
		return 0;
	/* room for the NUL; grow by half again to amortise */
	ncap = b->cap + b->cap / 2;
	if (ncap < need + 1)
		ncap = need + 1;
	if (ncap < 64)
		ncap = 64;
	if (b->cap == 0) {
		b->ptr = xmalloc(ncap);
		b->ptr[0] = '\0';
	} else {
		b->ptr = xrealloc(b->ptr, ncap);
	}
	b->cap = ncap;
	return 0;
}

int buf_add(struct buf *b, const void *p, size_t n)
{
	if (buf_grow(b, n) < 0)
		return -1;
	if (n)
		memcpy(b->ptr + b->len, p, n);
	b->len += n;
	b->ptr[b->len] = '\0';
	return 0;
}

int buf_adds(struct buf *b, const char *s)
{
	return buf_add(b, s, strlen(s));
}

int buf_addch(struct buf *b, int c)
{
	char ch = (char)c;
	return buf_add(b, &ch, 1);
}

int buf_vprintf(struct buf *b, const char *fmt, va_list ap)
{
	va_list cp;
	int n;

	va_copy(cp, ap);
	n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0 || buf_grow(b, (size_t)n) < 0)
		return -1;
	vsnprintf(b->ptr + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
	return 0;
}

int buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = buf_vprintf(b, fmt, ap);
	va_end(ap);
	return r;
}

int buf_set(struct buf *b, const void *p, size_t n)
{
	size_t old = b->len;

	b->len = 0;
	if (buf_add(b, p, n) < 0) {
		b->len = old;
		return -1;
	}
	return 0;
}

char *buf_detach(struct buf *b, size_t *len)
{
	char *r;

	if (len)
		*len = b->len;
	r = b->cap ? b->ptr : xmemdup("", 0);
	b->ptr = buf_empty;
	b->len = b->cap = 0;
	return r;
}

int buf_eq(const struct buf *b, const char *s)
{
	size_t n = strlen(s);
	return b->len == n && memcmp(b->ptr, s, n) == 0;
}

int buf_starts(const struct buf *b, const char *prefix)
{
	size_t n = strlen(prefix);
	return b->len >= n && memcmp(b->ptr, prefix, n) == 0;
}

static int err_vset(struct err *e, enum err_kind kind, int with_errno,
		    const char *fmt, va_list ap)
{
	int saved = errno;
	size_t n;

	e->kind = kind;
	e->at_input = 0;
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	if (with_errno) {
		n = strlen(e->msg);
		snprintf(e->msg + n, sizeof(e->msg) - n, ": %s", strerror(saved));
	}
	return -1;
}

int err_set(struct err *e, enum err_kind kind, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	err_vset(e, kind, 0, fmt, ap);
	va_end(ap);
	return -1;
}

int err_errno(struct err *e, enum err_kind kind, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	err_vset(e, kind, 1, fmt, ap);
	va_end(ap);
	return -1;
}

int err_prefix(struct err *e, const char *fmt, ...)
{
	char msg[sizeof(e->msg)];
	va_list ap;
	int n;

	memcpy(msg, e->msg, sizeof(msg));
	va_start(ap, fmt);
	n = vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n < sizeof(e->msg))
		snprintf(e->msg + n, sizeof(e->msg) - (size_t)n, "%s", msg);
	return -1;
}

int err_at_input(struct err *e)
{
	e->at_input = 1;
	return -1;
}

void pipe_widen(int fd)
{
#ifdef F_SETPIPE_SZ
	int have = fcntl(fd, F_GETPIPE_SZ);

	if (have > 0 && have < (1 << 20))
		(void)fcntl(fd, F_SETPIPE_SZ, 1 << 20);
#else
	(void)fd;
#endif
}

int write_full(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t w = write(fd, c, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			if (w == 0)
				errno = EIO;
			return -1;
		}
		c += w;
		n -= (size_t)w;
	}
	return 0;
}
