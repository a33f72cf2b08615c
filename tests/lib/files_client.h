/* tests/lib/files_client.h: a client of the files routes for tests and
 * benches that move large files (PUT and GET /v1/sessions/{id}/files): the
 * bytes made and hashed as they go, never whole in memory, over a plain
 * HTTP/1.1 socket to 127.0.0.1. */
#ifndef VITRINE_TESTS_FILES_CLIENT_H
#define VITRINE_TESTS_FILES_CLIENT_H

#include <stdint.h>

/* PUTs size bytes of a stream seed picks (the same seed, the same bytes)
 * to the session's path with token, with a Content-Length (or, chunked,
 * without one). Returns the answer's status with the SHA-256 of what was
 * sent in hex[65], or -1 after printing why. */
int files_put(int port, const char *token, const char *id, const char *path, uint64_t size,
	      uint64_t seed, int chunked, char hex[65]);
/* PUTs only a head declaring size bytes and reads the answer without
 * sending them: its status, or -1. */
int files_put_head_only(int port, const char *token, const char *id, const char *path,
			uint64_t size);
/* GETs the session's path: the status, with the body's length and SHA-256
 * (a 200's) in *len and hex[65], or -1 after printing why. */
int files_get(int port, const char *token, const char *id, const char *path, uint64_t *len,
	      char hex[65]);
/* The peak resident memory (VmHWM) of process pid in KiB, or -1. */
long files_vmhwm_kib(int pid);

#endif
