/* tests/unit/test_door.c: the front door's door interface
 * (gateway/api/door.c) with a door of the test's own, no gateway: without
 * a door the front door's calls do nothing and claim nothing; a door is
 * registered once (its name becomes R_DOOR's, the same door again is
 * fine, another is refused); a request it takes is R_DOOR with the door's
 * state, zeroed, released through the row when the request goes; and
 * R_DOOR's row calls the door. */
#include "gateway/api/door.h"
#include "gateway/api/routes.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

struct fake_state {
	char bytes[300];
};

static int claims, handled, resumed, refused, poked, released;

static void fake_claim(struct http_req *r)
{
	struct fake_state *st;

	claims++;
	if (strcmp(r->path, "/fake"))
		return;
	st = api_door_take(r);
	assert_non_null(st);
	for (size_t i = 0; i < sizeof(st->bytes); i++)
		assert_int_equal(st->bytes[i], 0);
	st->bytes[0] = 'x';
}

static void fake_refuse_early(struct http_req *r)
{
	(void)r;
	refused++;
}

static size_t fake_body_max(const struct http_req *r)
{
	(void)r;
	return 12345;
}

static void fake_handle(struct http_req *r)
{
	(void)r;
	handled++;
}

static void fake_resume(struct http_req *r, struct sess *s, bool timed_out)
{
	(void)r;
	(void)s;
	assert_true(timed_out);
	resumed++;
}

static const char *fake_audit(const struct http_req *r)
{
	(void)r;
	return "fake_event";
}

static void fake_release(void *state)
{
	struct fake_state *st = state;

	assert_int_equal(st->bytes[0], 'x');
	released++;
}

static void fake_poke(struct gw *gw)
{
	(void)gw;
	poked++;
}

static bool fake_ws_claim(struct lws *wsi)
{
	(void)wsi;
	return true;
}

static int fake_ws_confirm(struct gw *gw, struct lws *wsi)
{
	(void)gw;
	(void)wsi;
	return 1;
}

static int fake_ws_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in,
			    size_t len)
{
	(void)wsi;
	(void)reason;
	(void)in;
	(void)len;
	*(void **)user = &poked; /* the connection's own pointer */
	return 7;
}

static int fake_raw(struct lws *wsi, enum lws_callback_reasons reason, void *in, size_t len)
{
	(void)wsi;
	(void)reason;
	(void)in;
	(void)len;
	return 9;
}

static bool fake_owns_port(int port)
{
	return port == 7;
}

static const struct api_door_ops fake = {
	.name = "fake",
	.claim = fake_claim,
	.refuse_early = fake_refuse_early,
	.body_max_of = fake_body_max,
	.handle = fake_handle,
	.resume = fake_resume,
	.audit_of = fake_audit,
	.state_size = sizeof(struct fake_state),
	.state_release = fake_release,
	.poke_all = fake_poke,
	.ws_claim = fake_ws_claim,
	.ws_confirm = fake_ws_confirm,
	.ws_callback = fake_ws_callback,
	.raw_callback = fake_raw,
	.owns_port = fake_owns_port,
};

static const struct api_door_ops other = { .name = "other" };

/* Runs first: nothing is registered yet. */
static void test_no_door(void **state)
{
	struct http_req r;

	(void)state;
	memset(&r, 0, sizeof(r));
	snprintf(r.path, sizeof(r.path), "/fake");
	api_door_claim(&r);
	assert_int_equal(r.route.kind, R_NOT_FOUND);
	assert_null(r.route_state);
	api_door_poke_all(NULL);
	assert_false(api_door_ws_claim(NULL));
	assert_int_equal(api_door_ws_confirm(NULL, NULL), 0);
	assert_int_equal(api_door_raw_callback(NULL, LWS_CALLBACK_RAW_RX, NULL, 0), 0);
	assert_string_equal(route_kind_names[R_DOOR], "door");
	assert_int_equal(claims + poked, 0);
}

static void test_register_once(void **state)
{
	(void)state;
	assert_int_equal(api_door_register(&fake), 0);
	assert_string_equal(route_kind_names[R_DOOR], "fake");
	assert_int_equal(api_door_register(&fake), 0);
	assert_int_equal(api_door_register(&other), -EBUSY);
	assert_string_equal(route_kind_names[R_DOOR], "fake");
}

static void test_take_and_release(void **state)
{
	struct http_req r;

	(void)state;
	memset(&r, 0, sizeof(r));
	snprintf(r.path, sizeof(r.path), "/native");
	api_door_claim(&r);
	assert_int_equal(claims, 1);
	assert_int_equal(r.route.kind, R_NOT_FOUND); /* not the door's: left as it was */
	assert_null(r.route_state);

	snprintf(r.path, sizeof(r.path), "/fake");
	api_door_claim(&r);
	assert_int_equal(claims, 2);
	assert_int_equal(r.route.kind, R_DOOR);
	assert_non_null(r.route_state);
	assert_ptr_equal(http_route_state(&r), r.route_state); /* made once */
	http_release(&r);
	assert_int_equal(released, 1);
	assert_null(r.route_state);
}

static void test_row_calls_the_door(void **state)
{
	const struct route_def *d = &route_table[R_DOOR];
	struct http_req r;
	void *conn = NULL;

	(void)state;
	memset(&r, 0, sizeof(r));
	r.route.kind = R_DOOR;
	assert_null(d->pattern);
	assert_int_equal(d->right, ROUTE_OWN_AUTH);
	d->refuse_early(&r);
	d->handle(&r);
	d->resume(&r, NULL, true);
	assert_int_equal(refused, 1);
	assert_int_equal(handled, 1);
	assert_int_equal(resumed, 1);
	assert_int_equal(d->body_max_of(&r), 12345);
	assert_string_equal(d->audit_of(&r), "fake_event");
	assert_int_equal(d->state_size_of(), sizeof(struct fake_state));

	api_door_poke_all(NULL);
	assert_int_equal(poked, 1);
	assert_true(api_door_ws_claim(NULL));
	assert_int_equal(api_door_ws_confirm(NULL, NULL), 1);
	assert_int_equal(api_door_ws_callback(NULL, LWS_CALLBACK_ESTABLISHED, &conn, NULL, 0), 7);
	assert_ptr_equal(conn, &poked);
	assert_int_equal(api_door_raw_callback(NULL, LWS_CALLBACK_RAW_RX, NULL, 0), 9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_door),
		cmocka_unit_test(test_register_once),
		cmocka_unit_test(test_take_and_release),
		cmocka_unit_test(test_row_calls_the_door),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
