/* gateway/e2b/e2b_msg.h: the proto3-JSON of process.Process's events
 * (ProcessEvent in a StartResponse/ConnectResponse), each as one Connect
 * frame appended to a buffer. Pure. */
#ifndef VITRINE_GATEWAY_E2B_MSG_H
#define VITRINE_GATEWAY_E2B_MSG_H

#include "common/bytebuf.h"
#include "gateway/e2b/connect.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/* Appends a frame holding j (stolen; NULL is -ENOMEM). 0 or -ENOMEM. */
int e2b_msg_frame(struct bytebuf *out, uint8_t flags, json_t *j);
json_t *e2b_msg_start(uint32_t pid);
json_t *e2b_msg_data(bool err, const void *data, size_t len);
/* What a process on a pseudo-terminal showed: data {pty}. */
json_t *e2b_msg_pty(const void *data, size_t len);
/* exit_signal 0: exited with exit_code; else killed by that signal. */
json_t *e2b_msg_end(int exit_code, int exit_signal, const char *error);
json_t *e2b_msg_keepalive(void);
/* The end-of-stream frame (CONNECT_OK: no error). 0 or -ENOMEM. */
int e2b_msg_end_stream(struct bytebuf *out, enum connect_code c, const char *message);

#endif
