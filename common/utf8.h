/* common/utf8.h: checks and repairs UTF-8 for text that goes into JSON.
 * Error messages quote what a client sent (a parser's "near '...'", a
 * field's value) and are cut to fixed buffers; JSON strings must be valid
 * UTF-8, so such a message either made jansson refuse the whole answer or
 * was cut in the middle of a character. Pure. */
#ifndef VITRINE_COMMON_UTF8_H
#define VITRINE_COMMON_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* Whether s[0..n) is well-formed UTF-8 (RFC 3629: no overlong forms, no
 * surrogates, nothing past U+10FFFF) with no NUL byte. */
bool utf8_valid(const char *s, size_t n);

/* Replaces, in place, every byte of the NUL-terminated s that is not part
 * of a well-formed sequence with '?' (a sequence cut short at the end
 * included), so the length stays the same. Returns how many were replaced. */
size_t utf8_scrub(char *s);

#endif
