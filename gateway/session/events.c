/* gateway/session/events.c: see events.h. */
#include "gateway/session/events.h"

#include "common/fsutil.h"

#include <time.h>

int64_t events_add(struct event_log *l, const char *type, json_t *data)
{
	int64_t seq = l->next_seq ? l->next_seq : 1;
	json_t *e = data && json_is_object(data) ? data : json_object();

	if (data && e != data)
		json_decref(data);
	if (!e || json_object_set_new(e, "seq", json_integer(seq)) < 0 ||
	    json_object_set_new(e, "type", json_string(type)) < 0 ||
	    json_object_set_new(e, "at_ms", json_integer((json_int_t)fs_unix_ms())) < 0) {
		json_decref(e);
		return 0;
	}
	json_decref(l->ring[seq % EVENTS_KEPT]);
	l->ring[seq % EVENTS_KEPT] = e;
	l->next_seq = seq + 1;
	return seq;
}

json_t *events_since(const struct event_log *l, int64_t after)
{
	json_t *a = json_array();
	int64_t first = l->next_seq - EVENTS_KEPT;

	if (!a)
		return NULL;
	if (after + 1 > first)
		first = after + 1;
	if (first < 1)
		first = 1;
	for (int64_t seq = first; seq < l->next_seq; seq++)
		json_array_append(a, l->ring[seq % EVENTS_KEPT]);
	return a;
}

int64_t events_last(const struct event_log *l)
{
	return l->next_seq ? l->next_seq - 1 : 0;
}

void events_clear(struct event_log *l)
{
	for (int i = 0; i < EVENTS_KEPT; i++) {
		json_decref(l->ring[i]);
		l->ring[i] = NULL;
	}
}
