/*
 * ruleset.c - the rule set of a run, built once from what the command
 * line says: the rule file, the blob ids to drop, the peers' options.
 */
#include <stdlib.h>

#include "engine.h"

int rw_rules_wanted(const struct rw_options *opt)
{
	return opt->rules || opt->strip_blobs_with_ids ||
	       rules_peer_given(&opt->peer) || opt->rules_set;
}

int rw_rules_build(struct rules **out, struct buf *peer_text,
		   const struct rw_options *opt, struct err *e)
{
	struct buf text = BUF_INIT(SIZE_MAX / 2);
	struct rules *set = NULL;
	int rc = opt->rules ? rules_load(&set, opt->rules, e) :
		 rules_parse(&set, "", 0, "(no rule file)", e);

	if (rc == 0 && opt->strip_blobs_with_ids)
		rc = rules_load_blob_ids(set, opt->strip_blobs_with_ids, e);
	if (rc == 0 && rules_peer_given(&opt->peer))
		rc = rules_add_peer(set, &opt->peer, &text, e);
	if (rc == 0 && peer_text)
		buf_add(peer_text, text.ptr, text.len);
	buf_release(&text);
	if (rc < 0) {
		rules_free(set);
		set = NULL;
	}
	*out = set;
	return rc;
}
