/* gateway/session/pool.h: a warm pool per template (docs/templates.md
 * "Warm pools"). The operator asks for N members of template T (PATCH
 * /v1/templates/T {"pool": N}); the gateway keeps N sessions restored from
 * T, warmed as any restore is, then paused in memory. A create from T
 * whose spec the members fit takes one (sess_create does, so E2B's
 * creates do too): the member becomes the creator's session, with fresh
 * tokens, its project and timeouts, is resumed (clock set, its URL opened)
 * and the pool refills behind it, one restore at a time, each a job.
 *
 * A member is a session like any other inside session/ (a record that
 * says "pool": T, adopted after a restart, counted against the memory
 * budget) but no one outside sees it: sess_find, sess_first and sess_next
 * pass members by, so no route, listing, metric series or event stream
 * names one before its claim. Its id is kept at the claim (its run dir,
 * supervisor and record are tied to it): nobody saw it before, and its
 * tokens are minted afresh. Members are the first to go when a real
 * create, fork or template build needs the memory (or a create a session slot).
 *
 * The wanted sizes are kept in the state dir (REGISTRY_POOLS_FILE), so a
 * restarted gateway keeps its pools. Loop thread. */
#ifndef VITRINE_GATEWAY_SESSION_POOL_H
#define VITRINE_GATEWAY_SESSION_POOL_H

#include "gateway/core/api_error.h"
#include "gateway/core/gw.h"
#include "gateway/session/session_spec.h"

#include <jansson.h>
#include <stdbool.h>

#define POOL_SIZE_MAX 16 /* members of one template's pool at most */
#define POOL_TEMPLATES_MAX 64 /* templates with a pool at once */
/* A refill that failed (the template broke, no room) is tried again this
 * much later. */
#define POOL_RETRY_MS 15000
/* How often the pools are looked after when nothing tells them to. */
#define POOL_TICK_MS 500

/* Reads the wanted sizes from the state dir (none without a registry) and
 * starts looking after the pools on gw's loop. 0, or -errno with a reason
 * in err (an unreadable file: the gateway does not start, as for the
 * other tables). */
int sess_pool_open(struct gw *gw, char *err, size_t errlen);
/* Stops looking after the pools (the members stay, as sessions do: the
 * gateway's stop says what becomes of them). Accepts a gw never opened. */
void sess_pool_close(struct gw *gw);
/* Template tpl's pool is n members from now on (0: none; members over n
 * go at once, the refills start in the background). Written to the state
 * dir before it returns: 0, or -errno with *e (400 for n out of range, 500
 * when the file cannot be written: nothing changed). */
int sess_pool_set(struct gw *gw, const char *tpl, int n, struct api_error *e);
/* The pool's size wanted (0: none). */
int sess_pool_size(struct gw *gw, const char *tpl);
/* {size, ready, refilling} of tpl's pool, or NULL when it has none and
 * no members. */
json_t *sess_pool_json(struct gw *gw, const char *tpl);
/* Template tpl is being deleted: its pool is dropped, its members with it. */
void sess_pool_forget(struct gw *gw, const char *tpl);
/* Members over all pools: ready (paused, claimable) and refilling. */
void sess_pool_totals(struct gw *gw, int *ready, int *refilling);

/* sess_pool_claim and sess_pool_make_room, the hooks of sess_create and
 * sess_check_resources, are session-internal (session_int.h). */

#endif
