/* tests/fuzz/fuzz_proxy_req.c: libFuzzer target for the head of a proxy
 * request (gateway/proxy_req.c), which the guest writes byte for byte: any
 * input must give a head, "more bytes", "too big" or "malformed", never a
 * crash, a leak or a head longer than the input; and a head that parses
 * must parse the same when it is all there is, and not before. */
#include "gateway/egress/proxy_req.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *buf = (const char *)data;
	struct proxy_req r, again;
	int rc = proxy_req_parse(buf, size, &r);

	if (rc != 0) {
		if ((rc != -EAGAIN && rc != -EMSGSIZE && rc != -EINVAL) || r.forward)
			__builtin_trap();
		return 0;
	}
	if (r.head_len < 4 || r.head_len > size || r.head_len > PROXY_REQ_MAX_HEAD || r.port < 1 ||
	    r.port > 65535 || !r.host[0] || strlen(r.host) >= sizeof(r.host) ||
	    r.connect != !r.forward || (r.forward && strlen(r.forward) != r.forward_len))
		__builtin_trap();
	if (proxy_req_parse(buf, r.head_len, &again) != 0 || again.head_len != r.head_len ||
	    again.port != r.port || strcmp(again.host, r.host))
		__builtin_trap();
	proxy_req_free(&again);
	if (proxy_req_parse(buf, r.head_len - 1, &again) != -EAGAIN)
		__builtin_trap();
	proxy_req_free(&r);
	return 0;
}
