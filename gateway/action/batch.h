/* gateway/action/batch.h: a batch of actions, {"actions": [...]}, -> the
 * validated actions (actions.h) to run in order on one session.
 *
 * OpenAI's computer tool sends several actions in one computer call
 * ({"type": "computer_call", "call_id": ..., "actions": [...]}); agents of
 * any dialect save round trips the same way. Parsing is pure, here, so the
 * bound and the index of a refusal are unit-tested and fuzzed; the run
 * (run.h) carries the list out and settles once, at the end.
 *
 * The body is a batch when it has an "actions" field; else it is one action
 * object, parsed by actions_parse into a batch of one (is_batch false), so
 * callers handle both the same way. A batch takes:
 *   "actions":    1..ACTIONS_MAX_BATCH objects, each an action in any
 *                 dialect exactly as a single body would be, but without
 *                 its own "screenshot" (the batch's is at the end)
 *   "id":         string or integer, echoed back
 *   "screenshot": true or screenshot options: one settled screenshot once
 *                 every action has run
 *   "type": "computer_call" with OpenAI's "call_id", "status" and
 *                 "pending_safety_checks", ignored, so a computer call item
 *                 is taken verbatim
 *   "dialect", "coordinate_space", "screenshot_width", "screenshot_height":
 *                 given once for every action that does not give its own
 *                 (the space and its size as one: an action naming any of
 *                 the three takes none of the batch's); checked as each
 *                 action's own, so a bad one refuses the first action
 * Elements are parsed in order; the first that is refused stops the parse:
 * the ones before it run, and the answer names its index and error. */
#ifndef VITRINE_GATEWAY_BATCH_H
#define VITRINE_GATEWAY_BATCH_H

#include "gateway/action/actions.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define ACTIONS_MAX_BATCH 64

struct action_batch {
	bool is_batch; /* {"actions": [...]}; false: one action object (n == 1) */
	struct action **actions; /* owned: the n actions to run, in order */
	size_t n;
	json_t *id; /* owned reference, the batch's "id"; NULL when absent */
	bool want_screenshot;
	json_t *screenshot_opts; /* owned reference, object, NULL when absent */
	/* Element n was refused (the ones before it run, none after it). */
	bool refused;
	struct actions_error refusal;
	json_t *refused_id; /* owned reference: the refused element's "id" */
};

/* Parses obj (borrowed) against ctx. Returns the batch (batch_destroy), or
 * NULL when nothing can run, with *err and *index: the element refused
 * first (0..), or -1 when the batch itself is wrong (not an array, empty,
 * over ACTIONS_MAX_BATCH, a field it does not take) or it was one action
 * object that was refused, or when out of memory. */
struct action_batch *batch_parse(const json_t *obj, const struct actions_ctx *ctx,
				 struct actions_error *err, long *index);

/* Frees a batch and everything it owns. Accepts NULL. */
void batch_destroy(struct action_batch *b);

#endif
