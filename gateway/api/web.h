/* gateway/api/web.h: the web viewer (the static files of web/) served by the
 * gateway under /web/ through a libwebsockets file mount; / redirects there.
 * The files are found next to the binary (BIN/../web, the source tree's
 * web/ for build/vitrine), else in /usr/share/vitrine/web, unless
 * `vitrine serve --web-dir DIR` says where. */
#ifndef VITRINE_GATEWAY_WEB_H
#define VITRINE_GATEWAY_WEB_H

#include <libwebsockets.h>
#include <stddef.h>

/* Fills *m to serve dir (resolved into dir_out, which must outlive the
 * mount) at /web. override may be NULL. Returns 0, or -ENOENT when no
 * folder with an index.html was found (then nothing is mounted). */
int web_mount(struct lws_http_mount *m, const char *override, char *dir_out, size_t dir_len);

/* The security headers of every file the mount serves (lws asks with
 * LWS_CALLBACK_ADD_HEADERS, args the header buffer): nosniff, no framing,
 * no referrer, and a Content-Security-Policy that lets the viewer load its
 * own scripts and styles and connect to this origin (HTTP and WebSocket)
 * only. Loop thread. Returns 0, or -1 when the buffer is too small. */
int web_add_headers(struct lws *wsi, struct lws_process_html_args *args);

#endif
