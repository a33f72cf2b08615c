/* gateway/api.h: the REST handlers: authorise, validate, act, answer. */
#ifndef VITRINE_GATEWAY_API_H
#define VITRINE_GATEWAY_API_H

#include "gateway/http.h"

/* Handles the request in r (route, token and body are set); answers through
 * http_reply_*, now or, for ?wait=ready, once the session's state changes. */
void api_handle(struct http_req *r);
/* Called when a waiting request is woken: answers if there is news. */
void api_resume_wait(struct http_req *r);

#endif
