/*
 * oid.h - object ids and git's object hashing (docs/FORMATS.md 6.1), for the
 * rewrite engine only. SHA-1 comes from OpenSSL's libcrypto.
 */
#ifndef MIGRATE_RW_OID_H
#define MIGRATE_RW_OID_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define OID_RAW 20
#define OID_HEX 40

struct oid {
	unsigned char hash[OID_RAW];
};

extern const struct oid oid_null;
extern const struct oid oid_empty_tree;

static inline int oid_eq(const struct oid *a, const struct oid *b)
{
	return memcmp(a->hash, b->hash, OID_RAW) == 0;
}

static inline int oid_is_null(const struct oid *a)
{
	return oid_eq(a, &oid_null);
}

/* Writes 40 lowercase hex digits and a NUL into out[41]; returns out. */
char *oid_hex(const struct oid *o, char *out);
/* Parses exactly 40 hex digits (either case). 0 or -1. */
int oid_from_hex(struct oid *o, const char *hex, size_t len);

enum obj_type { OBJ_NONE = 0, OBJ_BLOB, OBJ_TREE, OBJ_COMMIT, OBJ_TAG };

const char *obj_type_name(enum obj_type t);
enum obj_type obj_type_parse(const char *s, size_t len);

/*
 * Incremental object hashing: sha1("<type> <len>\0" + body). The body
 * must then be fed exactly len bytes before obj_hash_final.
 */
struct obj_hash;
struct obj_hash *obj_hash_new(void);
void obj_hash_free(struct obj_hash *h);
void obj_hash_begin(struct obj_hash *h, enum obj_type t, uint64_t len);
void obj_hash_update(struct obj_hash *h, const void *p, size_t n);
void obj_hash_final(struct obj_hash *h, struct oid *out);

/* One-shot: the id of an object with this body. */
void obj_hash_buf(struct obj_hash *h, enum obj_type t, const void *body,
		  size_t len, struct oid *out);

#endif
