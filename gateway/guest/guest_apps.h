/* gateway/guest/guest_apps.h: the guest commands that open a URL in the
 * guest's Chromium and start an installed program, shared by the native
 * POST /open and /launch (api/api_guest.c) and by E2B's xdg-open and
 * gtk-launch (e2b/desktop_serve.c), and the one that reads the desktop's
 * clipboard, shared by GET .../clipboard and the live view's clipboard
 * message (api/stream.c), so the paths cannot drift. */
#ifndef VITRINE_GATEWAY_GUEST_APPS_H
#define VITRINE_GATEWAY_GUEST_APPS_H

#include <stdbool.h>

#define GUEST_OPEN_TIMEOUT_S 45
#define GUEST_LAUNCH_TIMEOUT_S 15

/* Run as /bin/sh -c SCRIPT JS URL: navigates Chromium's tab with JS (from
 * guest_prep_nav_js) and waits up to 30 s for the page to load. */
extern const char *const guest_open_script;
/* Run as /bin/sh -c SCRIPT PROGRAM ARGS...: starts PROGRAM detached and
 * prints its pid; exit 127 when it is not installed. */
extern const char *const guest_launch_script;

#define GUEST_CLIPBOARD_TIMEOUT_S 15
/* argv (NULL-terminated) that prints the CLIPBOARD selection as UTF-8. */
extern const char *const guest_clipboard_get_argv[];
/* Whether a failed guest_clipboard_get_argv (exit_code, its stderr err, may
 * be NULL) only says that nobody owns the clipboard: empty, not an error. */
bool guest_clipboard_empty(int exit_code, const char *err);

#endif
