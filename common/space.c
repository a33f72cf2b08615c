/* common/space.c: see space.h. */
#include "common/space.h"

#include "common/test_hook.h"

#include <errno.h>
#include <stdio.h>
#include <sys/statvfs.h>

#define MIB (1024ull * 1024ull)

int space_decide(uint64_t need, uint64_t avail, const char *what, const char *dir, char *err,
		 size_t errlen)
{
	uint64_t want = need + (uint64_t)SPACE_MARGIN_MIB * MIB;

	if (want >= need && avail >= want) /* (want < need: it wrapped) */
		return 0;
	snprintf(err, errlen,
		 "not enough free space: %s needs about %llu MiB in %s (with %d MiB to spare), "
		 "which has %llu MiB free",
		 what, (unsigned long long)((need + MIB - 1) / MIB), dir, SPACE_MARGIN_MIB,
		 (unsigned long long)(avail / MIB));
	return -ENOSPC;
}

int space_free(const char *dir, uint64_t *avail)
{
	struct statvfs st;

	if (statvfs(dir, &st) < 0)
		return -errno;
	*avail = (uint64_t)st.f_bavail * (uint64_t)(st.f_frsize ? st.f_frsize : st.f_bsize);
	return 0;
}

int space_check(const char *dir, uint64_t need, const char *what, char *err, size_t errlen)
{
	long need_mib = (long)((need + MIB - 1) / MIB), hook;
	uint64_t avail = 0;

	if (need_mib > 0 && (hook = test_hook_get("VITRINE_TEST_SPACE_NEED_MIB", need_mib)) > 0)
		need = (uint64_t)hook * MIB;
	if (space_free(dir, &avail) < 0)
		return 0;
	return space_decide(need, avail, what, dir, err, errlen);
}
