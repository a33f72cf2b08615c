/* gateway/action/batch.c: see batch.h. */
#include "gateway/action/batch.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Fields a batch may give once for all its actions (an action's own win).
 * The coordinate space and its size go together: an action that names any
 * of them takes none of the batch's. */
static const char *const inherited[] = { "dialect", "coordinate_space", "screenshot_width",
					 "screenshot_height", NULL };
#define SPACE_FIRST 1 /* inherited[SPACE_FIRST..] are the coordinate space's */

void batch_destroy(struct action_batch *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->n; i++)
		actions_destroy(b->actions[i]);
	free(b->actions);
	json_decref(b->id);
	json_decref(b->screenshot_opts);
	json_decref(b->refused_id);
	toolset_turn_destroy(b->turn);
	json_decref(b->call_id);
	free(b);
}

/* The batch's own fields: known ones, of the right type. Returns 0 or -1. */
static int check_fields(const json_t *obj, struct action_batch *b, struct actions_error *err)
{
	static const char *const openai_call[] = { "call_id", "status", "pending_safety_checks",
						   NULL };
	const char *key;
	json_t *v;
	const json_t *type = json_object_get(obj, "type");
	bool call = json_is_string(type) && !strcmp(json_string_value(type), "computer_call");

	json_object_foreach((json_t *)obj, key, v)
	{
		bool known = !strcmp(key, "actions") || !strcmp(key, "id") ||
			     !strcmp(key, "screenshot") ||
			     (call && (!strcmp(key, "type") || !strcmp(key, "action")));

		for (size_t i = 0; !known && inherited[i]; i++)
			known = !strcmp(key, inherited[i]);

		for (size_t i = 0; call && !known && openai_call[i]; i++)
			known = !strcmp(key, openai_call[i]);
		if (!known && !json_is_null(v)) {
			actions_fail(
				err, ACTIONS_E_INVALID_ARGUMENT, key,
				"field \"%s\" is not allowed in a batch (each action carries its "
				"own)",
				key);
			return -1;
		}
	}
	v = json_object_get(obj, "id");
	if (v && !json_is_null(v) && !json_is_string(v) && !json_is_integer(v)) {
		actions_fail(err, ACTIONS_E_INVALID_ARGUMENT, "id",
			     "field \"id\" must be a string or an integer");
		return -1;
	}
	if (v && !json_is_null(v))
		b->id = json_incref(v);
	v = json_object_get(obj, "screenshot");
	if (json_is_object(v)) {
		b->want_screenshot = true;
		b->screenshot_opts = json_incref(v);
	} else if (json_is_boolean(v)) {
		b->want_screenshot = json_is_true(v);
	} else if (v && !json_is_null(v)) {
		actions_fail(err, ACTIONS_E_INVALID_ARGUMENT, "screenshot",
			     "field \"screenshot\" must be true, false or an object of options");
		return -1;
	}
	return 0;
}

/* e with the batch's inherited fields it does not set itself: a new
 * reference (e itself when it lacks none), NULL when out of memory. */
static json_t *with_inherited(const json_t *batch, const json_t *e)
{
	json_t *copy = NULL;
	bool own_space = false;

	for (size_t i = SPACE_FIRST; inherited[i]; i++)
		own_space = own_space || json_object_get(e, inherited[i]);
	for (size_t i = 0; inherited[i]; i++) {
		json_t *v = json_object_get(batch, inherited[i]);

		if (!v || json_is_null(v) || json_object_get(e, inherited[i]) ||
		    (i >= SPACE_FIRST && own_space))
			continue;
		if (!copy && !(copy = json_copy((json_t *)e)))
			return NULL;
		if (json_object_set(copy, inherited[i], v) < 0) {
			json_decref(copy);
			return NULL;
		}
	}
	return copy ? copy : json_incref((json_t *)e);
}

/* Element i of the batch (with what it inherits from batch), or a refusal
 * in *err. */
static struct action *element(const json_t *batch, const json_t *e, size_t i,
			      const struct actions_ctx *ctx, struct actions_error *err)
{
	struct action *a;
	json_t *full;

	if (!json_is_object(e)) {
		actions_fail(err, ACTIONS_E_INVALID_ARGUMENT, "actions",
			     "actions[%zu] must be an action object", i);
		return NULL;
	}
	if (!(full = with_inherited(batch, e))) {
		actions_fail(err, ACTIONS_E_NO_MEMORY, "", "out of memory");
		return NULL;
	}
	a = actions_parse(full, ctx, err);
	json_decref(full);
	if (!a)
		return NULL;
	if (a->want_screenshot || a->screenshot_opts) {
		actions_destroy(a);
		actions_fail(err, ACTIONS_E_INVALID_ARGUMENT, "screenshot",
			     "an action in a batch takes no \"screenshot\": the batch's own comes "
			     "after its last action");
		return NULL;
	}
	return a;
}

static struct action_batch *one_action(const json_t *obj, const struct actions_ctx *ctx,
				       struct actions_error *err)
{
	struct action_batch *b = calloc(1, sizeof(*b));
	struct action *a;

	if (!b || !(b->actions = calloc(1, sizeof(*b->actions)))) {
		free(b);
		actions_fail(err, ACTIONS_E_NO_MEMORY, "", "out of memory");
		return NULL;
	}
	if (!(a = actions_parse(obj, ctx, err))) {
		batch_destroy(b);
		return NULL;
	}
	b->actions[0] = a;
	b->n = 1;
	b->want_screenshot = a->want_screenshot;
	b->screenshot_opts = json_incref(a->screenshot_opts);
	b->id = json_incref(a->id);
	return b;
}

static struct action_batch *batch_of(const json_t *obj, const json_t *list,
				     const struct actions_ctx *ctx, struct actions_error *err,
				     long *index);

/* A toolset turn: its envelope now, its calls at the run's start. */
static struct action_batch *toolset_turn(const json_t *obj, struct actions_error *err, long *index)
{
	struct toolset_turn *t = toolset_parse_turn(obj, err, index);
	struct action_batch *b;
	const json_t *shot = json_object_get(obj, "screenshot");

	if (!t)
		return NULL;
	if (!(b = calloc(1, sizeof(*b))) || !(b->actions = calloc(t->n, sizeof(*b->actions)))) {
		free(b);
		toolset_turn_destroy(t);
		actions_fail(err, ACTIONS_E_NO_MEMORY, "", "out of memory");
		return NULL;
	}
	b->is_batch = true;
	b->turn = t;
	/* One call alone: its id is the turn's too. */
	if (json_object_get(obj, "id") && !json_is_null(json_object_get(obj, "id")))
		b->id = json_incref(json_object_get(obj, "id"));
	/* The images of the turn are its results: options pick their format. */
	if (json_is_object(shot)) {
		b->screenshot_opts = json_incref((json_t *)shot);
	} else if (shot && !json_is_null(shot) && !json_is_boolean(shot)) {
		batch_destroy(b);
		actions_fail(err, ACTIONS_E_INVALID_ARGUMENT, "screenshot",
			     "field \"screenshot\" must be an object of options");
		return NULL;
	}
	return b;
}

int batch_resolve_toolset(struct action_batch *b, const struct actions_ctx *ctx, uint32_t disabled)
{
	for (size_t i = b->n; b->turn && !b->refused && i < b->turn->n; i++) {
		const struct toolset_call *c = &b->turn->calls[i];
		struct action *a = toolset_call_parse(c, ctx, disabled, &b->refusal);

		if (!a) {
			b->refused = true;
			if (c->id)
				b->refused_id = json_incref(c->id);
			return b->refusal.code == ACTIONS_E_NO_MEMORY ? -1 : 0;
		}
		b->actions[b->n++] = a;
	}
	return 0;
}

struct action_batch *batch_parse(const json_t *obj, const struct actions_ctx *ctx,
				 struct actions_error *err, long *index)
{
	const json_t *list = json_object_get(obj, "actions"),
		     *single = json_object_get(obj, "action");
	const json_t *type = json_object_get(obj, "type"),
		     *call_id = json_object_get(obj, "call_id");
	bool call = json_is_string(type) && !strcmp(json_string_value(type), "computer_call");
	json_t *one = NULL;
	struct action_batch *b;

	*index = -1;
	if (!json_is_object(obj)) {
		actions_fail(err, ACTIONS_E_INVALID_ARGUMENT, "",
			     "an action must be a JSON object");
		return NULL;
	}
	if (toolset_is_turn(obj))
		return toolset_turn(obj, err, index);
	/* The computer call of OpenAI's preview: one "action" object. */
	if (call && json_is_object(single) && (!list || json_is_null(list))) {
		if (!(one = json_pack("[O]", single))) {
			actions_fail(err, ACTIONS_E_NO_MEMORY, "", "out of memory");
			return NULL;
		}
		list = one;
	}
	if (!list || json_is_null(list))
		return one_action(obj, ctx, err);
	b = batch_of(obj, list, ctx, err, index);
	json_decref(one);
	if (b && call && json_is_string(call_id)) {
		b->call_id = json_incref((json_t *)call_id);
		b->want_screenshot = true; /* computer_call_output is a screenshot */
	}
	return b;
}

/* obj's list of actions (the batch's fields in obj) as a batch. */
static struct action_batch *batch_of(const json_t *obj, const json_t *list,
				     const struct actions_ctx *ctx, struct actions_error *err,
				     long *index)
{
	struct action_batch *b;
	size_t n;

	n = json_is_array(list) ? json_array_size(list) : 0;
	if (!json_is_array(list) || n == 0) {
		actions_fail(err, ACTIONS_E_INVALID_ARGUMENT, "actions",
			     "field \"actions\" must be an array of 1..%d action objects",
			     ACTIONS_MAX_BATCH);
		return NULL;
	}
	if (n > ACTIONS_MAX_BATCH) {
		actions_fail(err, ACTIONS_E_TOO_LONG, "actions",
			     "a batch has at most %d actions (this one has %zu)", ACTIONS_MAX_BATCH,
			     n);
		return NULL;
	}
	if (!(b = calloc(1, sizeof(*b))) || !(b->actions = calloc(n, sizeof(*b->actions)))) {
		free(b);
		actions_fail(err, ACTIONS_E_NO_MEMORY, "", "out of memory");
		return NULL;
	}
	b->is_batch = true;
	if (check_fields(obj, b, err) < 0) {
		batch_destroy(b);
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		const json_t *e = json_array_get(list, i);
		struct action *a = element(obj, e, i, ctx, err);

		if (!a && (err->code == ACTIONS_E_NO_MEMORY || i == 0)) {
			*index = err->code == ACTIONS_E_NO_MEMORY ? -1 : (long)i;
			batch_destroy(b);
			return NULL;
		}
		if (!a) { /* the ones before it run */
			b->refused = true;
			b->refusal = *err;
			if (json_is_object(e) && json_object_get(e, "id") &&
			    !json_is_null(json_object_get(e, "id")))
				b->refused_id = json_incref(json_object_get(e, "id"));
			break;
		}
		b->actions[b->n++] = a;
	}
	return b;
}
