/* gateway/e2b/e2b_fs.h: envd's filesystem.Filesystem (Stat, ListDir,
 * MakeDir, Move, Remove) as shell commands run in the guest: the
 * request's paths, the command for each call, and the guest's answer (one
 * line of stat output per entry) into proto3-JSON EntryInfo. Pure;
 * unit-tested (tests/unit/test_e2b.c) and fuzzed (tests/fuzz/fuzz_e2b.c). */
#ifndef VITRINE_GATEWAY_E2B_FS_H
#define VITRINE_GATEWAY_E2B_FS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

enum e2b_fs_call { E2B_FS_STAT, E2B_FS_LIST_DIR, E2B_FS_MAKE_DIR, E2B_FS_MOVE, E2B_FS_REMOVE };

/* What the guest's command exits with when the path is missing, or (make
 * dir) already there. */
#define E2B_FS_EXIT_MISSING 2
#define E2B_FS_EXIT_EXISTS 17

struct e2b_fs_req {
	enum e2b_fs_call call;
	char path[1024]; /* absolute: relative ones start in home */
	char dest[1024]; /* MOVE's destination */
	int depth; /* LIST_DIR: 1.. (default 1) */
};

/* The path a message's string v names into out (cap bytes): absolute as
 * given, relative under home. -EINVAL for anything but a non-empty
 * string without NULs that fits. */
int e2b_fs_path(const json_t *v, const char *home, char *out, size_t cap);
/* The call named "filesystem.Filesystem/Method", or -ENOENT. */
int e2b_fs_call_of(const char *rpc, enum e2b_fs_call *call);
/* Parses call's message ({path}, {path, depth}, {source, destination}),
 * relative paths made absolute under home. Returns 0, or -EINVAL with err. */
int e2b_fs_req_parse(enum e2b_fs_call call, const char *msg, size_t len, const char *home,
		     struct e2b_fs_req *out, char *err, size_t errlen);
/* The shell script for q (run as /bin/sh -c SCRIPT sh PATH DEST DEPTH). */
const char *e2b_fs_script(enum e2b_fs_call call);
/* The EntryInfo of one line the scripts print (type, size, octal
 * permissions, symbolic permissions, owner, group, mtime, path, tab
 * separated), or NULL for a malformed line. */
json_t *e2b_fs_entry(const char *line, size_t len);
/* A symlink's entry (type FILE_TYPE_SYMLINK) given what its target's line
 * says ("\tL\t" type, octal permissions, absolute resolved path, tab
 * separated; "none\t0" when it resolves to nothing), as envd reports
 * one: symlinkTarget, and the target's type (FILE_TYPE_UNSPECIFIED when
 * none) and mode. 0, or -EINVAL (entry untouched) for a malformed line
 * or an entry that is not a symlink's. */
int e2b_fs_link_amend(json_t *entry, const char *line, size_t len);
/* The answer of q from the guest's output: {entry} (STAT, MAKE_DIR, MOVE:
 * the first entry), {entries: [...]} (LIST_DIR, malformed lines
 * skipped), {} (REMOVE); a symlink's line is amended by the target's
 * line that follows it. NULL when out of memory. */
json_t *e2b_fs_answer(enum e2b_fs_call call, const char *out, size_t len);

#endif
