/* oid.c - object ids and object hashing through libcrypto's EVP SHA-1. */
#include "git.h"

#include <inttypes.h>
#include <openssl/evp.h>
#include <stdio.h>

#include "../../common/common.h"

const struct oid oid_null;
const struct oid oid_empty_tree = { {
	0x4b, 0x82, 0x5d, 0xc6, 0x42, 0xcb, 0x6e, 0xb9, 0xa0, 0x60,
	0xe5, 0x4b, 0xf8, 0xd6, 0x92, 0x88, 0xfb, 0xee, 0x49, 0x04 } };

char *oid_hex(const struct oid *o, char *out)
{
	hex_encode(o->hash, OID_RAW, out);
	return out;
}

int oid_from_hex(struct oid *o, const char *hex, size_t len)
{
	struct oid tmp;

	if (len != OID_HEX || hex_decode(hex, OID_RAW, tmp.hash) < 0)
		return -1;
	*o = tmp;	/* untouched on failure */
	return 0;
}

const char *obj_type_name(enum obj_type t)
{
	switch (t) {
	case OBJ_BLOB: return "blob";
	case OBJ_TREE: return "tree";
	case OBJ_COMMIT: return "commit";
	case OBJ_TAG: return "tag";
	default: return "none";
	}
}

enum obj_type obj_type_parse(const char *s, size_t len)
{
	static const enum obj_type all[] = { OBJ_BLOB, OBJ_TREE, OBJ_COMMIT,
					     OBJ_TAG };
	size_t i;

	for (i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		const char *n = obj_type_name(all[i]);
		if (strlen(n) == len && memcmp(n, s, len) == 0)
			return all[i];
	}
	return OBJ_NONE;
}

struct obj_hash {
	EVP_MD_CTX *ctx;
};

struct obj_hash *obj_hash_new(void)
{
	struct obj_hash *h = xmalloc(sizeof(*h));

	h->ctx = EVP_MD_CTX_new();
	if (!h->ctx)
		die("cannot create a SHA-1 context");
	return h;
}

void obj_hash_free(struct obj_hash *h)
{
	if (!h)
		return;
	EVP_MD_CTX_free(h->ctx);
	free(h);
}

void obj_hash_begin(struct obj_hash *h, enum obj_type t, uint64_t len)
{
	char hdr[64];
	int n = snprintf(hdr, sizeof(hdr), "%s %" PRIu64, obj_type_name(t), len);

	/* EVP calls only fail on a broken library; nothing to recover. */
	EVP_DigestInit_ex(h->ctx, EVP_sha1(), NULL);
	EVP_DigestUpdate(h->ctx, hdr, (size_t)n + 1); /* with the NUL */
}

void obj_hash_update(struct obj_hash *h, const void *p, size_t n)
{
	if (n)
		EVP_DigestUpdate(h->ctx, p, n);
}

void obj_hash_final(struct obj_hash *h, struct oid *out)
{
	unsigned int n = OID_RAW;

	EVP_DigestFinal_ex(h->ctx, out->hash, &n);
}

void obj_hash_buf(struct obj_hash *h, enum obj_type t, const void *body,
		  size_t len, struct oid *out)
{
	obj_hash_begin(h, t, len);
	obj_hash_update(h, body, len);
	obj_hash_final(h, out);
}
