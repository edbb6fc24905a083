/*
 * policy.c - what the rules decide for a file: a pure function of its
 * path, mode and size and the rule set, and whether its branch is one
 * no rule applies to (notes, git-annex). Knows nothing of the stream.
 */
#include <string.h>

#include "way.h"

/* Files git-lfs (and git) must always see as they are, at any depth. */
int blob_is_protected(const char *path, size_t len)
{
	static const char *const names[] = { ".gitattributes", ".gitignore",
					     ".gitmodules", ".lfsconfig" };
	const char *base = memrchr(path, '/', len);
	size_t i, blen;

	base = base ? base + 1 : path;
	blen = len - (size_t)(base - path);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strlen(names[i]) == blen && !memcmp(base, names[i], blen))
			return 1;
	return 0;
}

int blob_convertible(const char *path, size_t len, uint32_t mode)
{
	mode = tree_mode_normalize(mode);
	return (mode == TREE_MODE_FILE || mode == TREE_MODE_EXEC) &&
	       !blob_is_protected(path, len);
}

int branch_is_meta(const char *name, size_t len)
{
	/* git-annex's own branch is metadata too: it passes as it is */
	return (len >= 11 && !memcmp(name, "refs/notes/", 11)) ||
	       (len == 20 && !memcmp(name, "refs/heads/git-annex", 20));
}

int blob_in_notes(const struct blobs *b)
{
	return branch_is_meta(b->cur->branch_name, strlen(b->cur->branch_name));
}

int blob_decide(const struct rules *rules, const char *path, size_t len,
		uint32_t mode, uint64_t size, int in_notes,
		const struct rule **rule, enum blob_action *action,
		struct err *e)
{
	uint32_t m = tree_mode_normalize(mode);
	int whole = blob_convertible(path, len, mode);

	*rule = NULL;
	*action = BLOB_KEEP;
	/* a symlink, or a file git must see as it is, may only have its text
	 * replaced (a token in a .gitmodules URL, a link's target), as git
	 * filter-repo --replace-text does in every blob */
	if (in_notes || (!whole && m != TREE_MODE_LINK &&
			 !((m == TREE_MODE_FILE || m == TREE_MODE_EXEC) &&
			   blob_is_protected(path, len))))
		return 0;
	if (rules_match(rule, rules, path, len, size, e) < 0)
		return -1;
	if (!*rule)
		return 0;
	if (!whole && rules_rule_action(*rule) != RULES_REPLACE_TEXT) {
		*rule = NULL;
		return 0;
	}
	switch (rules_rule_action(*rule)) {
	case RULES_LFS: *action = BLOB_LFS; break;
	case RULES_DROP: *action = BLOB_DROP; break;
	case RULES_SPLIT: *action = BLOB_SPLIT; break;
	case RULES_ANNEX: *action = BLOB_ANNEX; break;
	case RULES_UNLFS: *action = BLOB_UNLFS; break;
	case RULES_REPLACE_TEXT: *action = BLOB_REPLACE_TEXT; break;
	default: break;
	}
	return 0;
}
