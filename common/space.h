/* common/space.h: free space, checked before a write that may be large (a
 * pause to disk, a template save, an import) so that it is refused with a
 * clear reason before anything starts, instead of failing half way with
 * ENOSPC: a refusal a caller may retry elsewhere is one made before
 * anything was begun. The decision is pure; the look at the filesystem is
 * one statvfs. */
#ifndef VITRINE_COMMON_SPACE_H
#define VITRINE_COMMON_SPACE_H

#include <stddef.h>
#include <stdint.h>

/* What is kept free beyond an estimate: the estimates leave out what is
 * small (a description, a page, logs), and a filesystem filled to its
 * last block fails its other writers (the guests' logs, the records). */
#define SPACE_MARGIN_MIB 64

/* Whether need bytes fit in avail bytes with SPACE_MARGIN_MIB to spare:
 * 0, or -ENOSPC with err saying what (a sentence's subject: "pausing to
 * disk") needs in dir and what dir has. Pure; can't fail otherwise. */
int space_decide(uint64_t need, uint64_t avail, const char *what, const char *dir, char *err,
		 size_t errlen);

/* The bytes an unprivileged writer may still write in dir's filesystem
 * (statvfs: f_bavail x f_frsize) into *avail. 0 or -errno. */
int space_free(const char *dir, uint64_t *avail);

/* space_decide on dir's free space. The test hook
 * VITRINE_TEST_SPACE_NEED_MIB=N (docs/vmm.md) lowers need to at most N
 * MiB, so that a test can have a check pass and the write fail. A
 * filesystem that cannot be asked is no reason to refuse: 0 then (the
 * write itself says what is wrong). Returns 0 or -ENOSPC with err. */
int space_check(const char *dir, uint64_t need, const char *what, char *err, size_t errlen);

#endif
