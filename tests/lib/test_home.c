/* tests/lib/test_home.c: see test_home.h. */
#include "tests/lib/test_home.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define SHARED_TINY "/var/lib/vitrine/images/tiny"

int test_sh(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(cmd)) {
		fprintf(stderr, "test_sh: command too long\n");
		return -1;
	}
	return system(cmd);
}

int test_home_make(char *home, size_t len, const char *tag, bool raw_rootfs)
{
	const char *run = getenv("VITRINE_RUN") ? getenv("VITRINE_RUN") : "/tmp";
	const char *img = raw_rootfs ? "tinyd" : "tiny";
	int n = snprintf(home, len, "%s/%s-home-%d", run, tag, (int)getpid());

	if (n < 0 || (size_t)n >= len)
		return -1;
	if (test_sh("set -e; mkdir -p %s/images/%s %s/templates; chmod 755 %s %s/images "
		    "%s/images/%s %s/templates; for f in vmlinux initrd.img recipe%s; do "
		    "ln %s/$f %s/images/%s/$f 2>/dev/null || cp %s/$f %s/images/%s/$f; done",
		    home, img, home, home, home, home, img, home, raw_rootfs ? "" : " image.json",
		    SHARED_TINY, home, img, SHARED_TINY, home, img) != 0)
		return -1;
	if (!raw_rootfs)
		return 0;
	return test_sh("set -e; d=%s/images/tinyd; "
		       "printf '{\"name\":\"tinyd\",\"kernel\":\"vmlinux\",\"initrd\":\"initrd.img\","
		       "\"rootfs\":\"rootfs.img\",\"append\":\"console=ttyS0 quiet\"}' > $d/image.json; "
		       "head -c 1048576 /dev/urandom > $d/rootfs.img; truncate -s 16M $d/rootfs.img; "
		       "chmod 644 $d/*",
		       home) == 0
		       ? 0
		       : -1;
}
