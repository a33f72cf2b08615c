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
 * the ones before it run, and the answer names its index and error.
 *
 * An OpenAI computer call with the preview's single "action" object is a
 * batch of that one; a computer call's answer carries the
 * computer_call_output item (call_id kept, a screenshot always taken).
 *
 * A turn of Claude's computer toolset (toolset.h) is a batch too: its
 * envelope is checked here, and its calls are parsed at the run's start
 * (batch_resolve_toolset), against the session's fixed screenshot size. */
#ifndef VITRINE_GATEWAY_BATCH_H
#define VITRINE_GATEWAY_BATCH_H

#include "gateway/action/actions.h"
#include "gateway/action/toolset.h"

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
	/* Owned: a toolset turn; actions[] (room for its n calls) is filled by
	 * batch_resolve_toolset, n counting the calls parsed. */
	struct toolset_turn *turn;
	json_t *call_id; /* owned reference: an OpenAI computer call's "call_id" */
};

/* Parses obj (borrowed) against ctx. Returns the batch (batch_destroy), or
 * NULL when nothing can run, with *err and *index: the element refused
 * first (0..), or -1 when the batch itself is wrong (not an array, empty,
 * over ACTIONS_MAX_BATCH, a field it does not take) or it was one action
 * object that was refused, or when out of memory. */
struct action_batch *batch_parse(const json_t *obj, const struct actions_ctx *ctx,
				 struct actions_error *err, long *index);

/* Parses the calls of b's toolset turn not parsed yet, in order, against
 * ctx (its default space the turn's screenshot), members in disabled
 * refused: the first refused sets b->refused (those before it run). Returns
 * 0, or -1 when out of memory (b->refused set too). */
int batch_resolve_toolset(struct action_batch *b, const struct actions_ctx *ctx, uint32_t disabled);

/* Frees a batch and everything it owns. Accepts NULL. */
void batch_destroy(struct action_batch *b);

#endif
