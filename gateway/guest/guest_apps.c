/* gateway/guest/guest_apps.c: see guest_apps.h. */
#include "gateway/guest/guest_apps.h"

#include <string.h>

const char *const guest_open_script =
	"vitrine-ready eval 9222 \"$0\" >/dev/null || exit 1; i=0; "
	"while [ \"$(vitrine-ready eval 9222 \"document.readyState === 'complete' && "
	"!window.__vitrineOld\")\" != true ]; do i=$((i+1)); "
	"[ $i -gt 300 ] && { echo 'the page did not load in 30 s' >&2; exit 3; }; sleep 0.1; done; "
	"exec vitrine-ready page 9222 30 \"$1\"";

const char *const guest_launch_script =
	"command -v \"$0\" >/dev/null 2>&1 || { echo \"no such application: $0\" >&2; exit 127; }; "
	"setsid \"$0\" \"$@\" </dev/null >/dev/null 2>&1 & echo $!";

const char *const guest_clipboard_get_argv[] = { "xclip", "-selection",	 "clipboard", "-o",
						 "-t",	  "UTF8_STRING", NULL };

bool guest_clipboard_empty(int exit_code, const char *err)
{
	/* xclip says so when nothing owns the clipboard */
	return exit_code != 0 && err && strstr(err, "not available");
}
