/*
 * messages.c - --replace-message: the expressions of one file (git
 * filter-repo's --replace-message format, replace/replace.h) replaced in
 * every commit and tag message, after the old ids in it were rewritten
 * (msgids.c), in that order as git filter-repo does. A message that
 * changes changes its commit's id, and so those of its descendants.
 */
#include <string.h>

#include "../../replace/replace.h"
#include "state.h"

int msg_replace(struct rw *rw, struct buf *message, struct err *e)
{
	int r;

	if (!rw->msg_replace || !message->len)
		return 0;
	r = replace_apply(rw->msg_replace, message->ptr, message->len,
			  &rw->msg_out, e);
	if (r <= 0)
		return r;
	if (buf_set(message, rw->msg_out.ptr, rw->msg_out.len) < 0)
		return err_set(e, ERR_STREAM, "a message with its replacements "
			       "is longer than %zu bytes", message->max);
	return 0;
}

void msg_report_replace(struct rw *rw)
{
	struct replace_info info;
	size_t k;

	for (k = 0; k < replace_count(rw->msg_replace); k++) {
		replace_info(rw->msg_replace, k, &info);
		report_replace(rw->report, "messages",
			       replace_name(rw->msg_replace), info.line,
			       info.text, info.len, info.replaced, info.changed);
	}
}
