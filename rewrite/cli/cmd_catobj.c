/*
 * cmd_catobj.c - `migrate cat-object`, a hidden command for the tests: what
 * `git cat-file --batch` prints for each object id on standard input,
 * read through migrate's own object reader (rewrite/git/odb.c), so that
 * git can judge it byte for byte (tests/integration/odb_native.sh).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char cat_usage[] =
"usage: migrate cat-object [--repo DIR] [--object-reader=auto|git|native]\n"
"                          < IDS\n";

/* One object: "<id> <type> <size>\n<content>\n", or "<name> missing\n". */
static int cat_one(struct odb *db, const char *name, char *chunk, size_t cap,
		   struct err *e)
{
	char hex[OID_HEX + 1];
	enum obj_type type;
	struct oid id;
	uint64_t size, total = 0;
	ssize_t n;
	int r = odb_open_stream(db, name, &type, &id, &size, e);

	if (r < 0)
		return -1;
	if (r == 0) {
		printf("%s missing\n", name);
		return 0;
	}
	printf("%s %s %llu\n", oid_hex(&id, hex), obj_type_name(type),
	       (unsigned long long)size);
	while ((n = odb_stream_read(db, chunk, cap, e)) > 0) {
		fwrite(chunk, 1, (size_t)n, stdout);
		total += (uint64_t)n;
	}
	if (n < 0)
		return -1;
	if (total != size)
		return err_set(e, ERR_IO, "object %s: %llu bytes of %llu", hex,
			       (unsigned long long)total,
			       (unsigned long long)size);
	putchar('\n');
	return 0;
}

int rw_cmd_cat_object(int argc, char **argv, struct err *e)
{
	enum odb_reader reader = ODB_READER_AUTO;
	const char *repo = NULL;
	char *line = NULL, *chunk;
	size_t cap = 0;
	ssize_t len;
	struct odb *db;
	int i, rc = 0;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--repo") && i + 1 < argc) {
			repo = argv[++i];
		} else if (!strncmp(argv[i], "--object-reader=", 16)) {
			if (odb_reader_parse(argv[i] + 16, &reader) < 0)
				return err_set(e, ERR_USAGE, "--object-reader: "
					       "expected auto, git or native");
		} else {
			fputs(cat_usage, stderr);
			return err_set(e, ERR_USAGE, "unexpected argument '%s'",
				       argv[i]);
		}
	}
	db = odb_new(repo);
	odb_set_reader(db, reader, 0);
	chunk = xmalloc(1 << 16);
	while (rc == 0 && (len = getline(&line, &cap, stdin)) > 0) {
		if (line[len - 1] == '\n')
			line[--len] = '\0';
		rc = cat_one(db, line, chunk, 1 << 16, e);
	}
	if (fflush(stdout) != 0 && rc == 0)
		rc = err_errno(e, ERR_IO, "standard output");
	free(line);
	free(chunk);
	odb_free(db);
	return rc;
}
