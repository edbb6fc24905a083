/*
 * fuzz_index.c - libFuzzer target for the index reader (rewrite/git/
 * index.c), which reads the user's .git/index: every input is written as
 * an index (when its first byte is even, with 'D' there and a true SHA-1
 * trailer, so that the parse is reached) and opened; a malformed one must be an error naming a byte,
 * never a crash or a read outside the file. An index that opens has each
 * entry's path and stat data set; every other one is written back
 * (gitindex_commit), and must then open again with the same entries.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "rewrite/git/git.h"

static char *dir;

static void setup(void)
{
	char tmpl[] = "/tmp/fuzz_index.XXXXXX";

	if (!mkdtemp(tmpl))
		abort();
	dir = strdup(tmpl);
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	struct err e = ERR_INIT;
	struct gitindex *ix;
	struct gitindex_entry x;
	struct stat st;
	char *path;
	unsigned char *copy;
	FILE *f;
	size_t i, count;

	if (!dir)
		setup();
	path = path_join(dir, "index");
	copy = malloc(n ? n : 1);
	if (!copy)
		abort();
	memcpy(copy, d, n);
	/* the first byte's low bit: the trailer made true (else the input's
	 * own, mostly refused as corrupt) */
	if (n > 20 && (d[0] & 1) == 0) {
		unsigned int hl = 0;

		copy[0] = 'D';
		if (!EVP_Digest(copy, n - 20, copy + n - 20, &hl, EVP_sha1(), NULL))
			abort();
	}
	f = fopen(path, "wb");
	if (!f || fwrite(copy, 1, n, f) != n || fclose(f) != 0)
		abort();
	free(copy);
	if (gitindex_open(&ix, dir, &e) < 0) {
		if (!e.msg[0])
			abort();
		free(path);
		return 0;
	}
	if (stat(path, &st) < 0)
		abort();
	count = gitindex_count(ix);
	gitindex_has_ext(ix, "link");
	for (i = 0; i < count; i++) {
		gitindex_entry(ix, i, &x);
		if (strlen(x.path) > n * 2 + 1 || x.stage > 3)
			abort();
		if (i % 2)
			gitindex_set_stat(ix, i, &st);
	}
	if (n % 2) {
		if (gitindex_commit(ix, &e) < 0)
			abort();
		gitindex_free(ix);
		if (gitindex_open(&ix, dir, &e) < 0 || gitindex_count(ix) != count)
			abort();
	}
	gitindex_free(ix);
	free(path);
	return 0;
}
