/* gateway/stream/audit.h: the audit log: one JSON line per event that changes who
 * may drive a session (control taken and released by people watching it),
 * appended to the file named by `vitrine serve --audit-log` and echoed to
 * the gateway's log. Never holds a token. */
#ifndef VITRINE_GATEWAY_AUDIT_H
#define VITRINE_GATEWAY_AUDIT_H

#include "gateway/core/gw.h"

#include <jansson.h>

/* Writes {"ts": unix ms, "session": id, "event": event, ...fields} (fields
 * stolen, may be NULL). A failed write is logged, never fatal. */
void audit_event(struct gw *gw, const char *session, const char *event, json_t *fields);

#endif
