/* common/fsutil.h: small file-system helpers (directories, whole files, time). */
#ifndef VITRINE_COMMON_FSUTIL_H
#define VITRINE_COMMON_FSUTIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Creates path and its parents with mode. Returns 0 or -errno. */
int fs_mkdir_p(const char *path, mode_t mode);
/* Opens path (made 0600 when missing; with extra_flags, e.g. O_NOFOLLOW)
 * and takes its flock without waiting: one process at a time holds it,
 * and it goes with the descriptor. Returns the descriptor, -EBUSY when
 * another process holds it (err untouched: the caller says who), or
 * another -errno with err naming path ("open PATH: ...", "lock PATH: ..."). */
int fs_lock_file(const char *path, int extra_flags, char *err, size_t errlen);
/* How deep fs_rm_rf() goes below its top (one descriptor a level). */
#define FS_RM_MAX_DEPTH 128
/* Removes path and everything below it; a missing path is success. By
 * descriptor (common/rmtree.c): no symlink is followed, neither at path
 * nor below it, also when another uid swaps a directory for one during
 * the walk; a link goes as a link. The directories above path are
 * followed as usual: they are the caller's. Any thread. Goes on past a
 * failure; returns 0 or -errno of the first one (-ELOOP: deeper than
 * FS_RM_MAX_DEPTH, which stays; -EINVAL: "/", "." or ".."). */
int fs_rm_rf(const char *path);
/* Reads a whole file into a NUL-terminated heap buffer (*out, owned by the
 * caller), at most max bytes. Returns 0 or -errno (-EFBIG when larger). */
int fs_read_file(const char *path, size_t max, char **out, size_t *len);
/* fs_read_file() for a file in a directory another uid may write (a
 * guest's run dir): see fs_open_regular. */
int fs_read_file_nofollow(const char *path, size_t max, char **out, size_t *len);
/* Opens path (flags as open's, O_CLOEXEC added; mode for O_CREAT) when its
 * last component is a regular file: a symlink there is never followed
 * (-ELOOP), a FIFO never blocks and is refused like a device or a socket
 * (-EINVAL). For files root opens in a directory another uid owns (a
 * guest's run dir), where that uid may plant a link to anything. The
 * directories above path are followed as usual: the caller owns them.
 * Returns the fd (O_NONBLOCK set, which regular files ignore) or -errno. */
int fs_open_regular(const char *path, int flags, mode_t mode);
/* Writes len bytes to path (created 0644, truncated; a symlink at path is
 * refused with -ELOOP, not followed). Returns 0 or -errno. */
int fs_write_file(const char *path, const void *data, size_t len);
/* Writes len bytes to a new file path (0600) in a private directory: the
 * directory of path is made 0700 when missing and must be a real
 * directory (not a symlink) owned by this user that nobody else may
 * write, and path itself must not exist: a file or symlink already there
 * is refused (-EEXIST), never followed or truncated. Returns 0 or -errno
 * (-EPERM: the directory is not private; a partial file is removed). */
int fs_write_file_private(const char *path, const void *data, size_t len);
/* Replaces path with len bytes atomically and durably: a temp file in the
 * same directory (created with mode), written, fsynced, renamed over path,
 * then the directory fsynced. A reader sees the old or the new content,
 * never a part, also after a crash. Returns 0 or -errno (the temp file is
 * removed; path is untouched). */
/* The directory path names an entry of ("." for a bare name, "/" for
 * one in the root) into out. Returns 0 or -ENAMETOOLONG. */
int fs_parent_dir(const char *path, char *out, size_t len);

int fs_write_file_atomic(const char *path, const void *data, size_t len, mode_t mode);
/* Copies from to to (created with mode, truncated) with copy_file_range,
 * then fsyncs it. Neither end is followed when it is a symlink, and both
 * must be regular files (fs_open_regular). Returns 0 or -errno (a partial
 * to is removed). */
int fs_copy_file(const char *from, const char *to, mode_t mode);
/* Copies in's bytes (from its start, as far as its size at the call) to
 * out's offset, then fsyncs out. Returns 0 or -errno. */
int fs_copy_fd(int in, int out);
/* Renames from to to, or, across file systems, copies and unlinks from.
 * Returns 0 or -errno. */
int fs_move_file(const char *from, const char *to);
/* fs_move_file() of a regular file out of a directory another uid may
 * write into one of ours: what arrives at to is checked there (a symlink,
 * FIFO or anything but a regular file planted at from is removed from to
 * and refused with -EINVAL, never followed by a later chmod or open).
 * Returns 0 or -errno. */
int fs_move_regular(const char *from, const char *to);
/* Milliseconds of CLOCK_MONOTONIC: the project's one clock for deadlines,
 * ages and frame times (display_frame::changed_ms, the mirror's freshness),
 * so times taken in display/, vmm-qemu/ and the gateway compare directly.
 * Any thread. This function can't fail. */
int64_t fs_now_ms(void);
/* Milliseconds since the Unix epoch (CLOCK_REALTIME): for times shown to
 * people or kept on disk (created_at, records, logs), never for deadlines.
 * Any thread. This function can't fail. */
int64_t fs_unix_ms(void);
/* unix_ms as RFC 3339 UTC with milliseconds ("2026-12-01T20:07:30.123Z")
 * into out (at least 25 bytes): the audit log's times, E2B's. Pure. */
void fs_utc_time(int64_t unix_ms, char *out, size_t outlen);

#endif
