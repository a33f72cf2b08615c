/* gateway/e2b/desktop_held.h: the screenshots a served `scrot` "wrote",
 * held by their path until the SDK reads the file and removes it (its
 * screenshot() is scrot, files.read, files.remove). The PNG never exists in
 * the guest: the files endpoint and the remove ask this table first
 * (desktop_serve.h: desktop_held_take, desktop_held_remove).
 *
 * Bounded (DESKTOP_HELD_MAX files; a new one pushes out the oldest) and
 * each file expires DESKTOP_HELD_TTL_MS after it was written, so an SDK
 * that never reads or removes leaks nothing. Pure: the caller gives the
 * time. The table owns one reference to each image. Loop thread. */
#ifndef VITRINE_GATEWAY_E2B_DESKTOP_HELD_H
#define VITRINE_GATEWAY_E2B_DESKTOP_HELD_H

#include "gateway/e2b/desktop_cmd.h"

#include <stdbool.h>
#include <stdint.h>

#define DESKTOP_HELD_MAX 8
#define DESKTOP_HELD_TTL_MS 60000

struct display_image;

struct desktop_held_file {
	char path[DESKTOP_MAX_PATH + 1]; /* "" for a free slot */
	struct display_image *image; /* owned reference */
	int64_t written_ms;
};

struct desktop_held {
	struct desktop_held_file f[DESKTOP_HELD_MAX];
};

/* Holds img (the reference is taken over) as path, written at now_ms: a
 * file of the same path is replaced, expired ones are let go first, and
 * when all slots are taken the oldest goes. path longer than
 * DESKTOP_MAX_PATH is refused (img let go). Can't fail otherwise. */
void desktop_held_put(struct desktop_held *h, const char *path, struct display_image *img,
		      int64_t now_ms);
/* The image held as path (borrowed), or NULL when none or expired. */
struct display_image *desktop_held_get(struct desktop_held *h, const char *path, int64_t now_ms);
/* Lets path go. Returns true when it was held (and not expired). */
bool desktop_held_drop(struct desktop_held *h, const char *path, int64_t now_ms);
/* How many files are held (not expired). */
int desktop_held_count(struct desktop_held *h, int64_t now_ms);
/* Lets every file go. */
void desktop_held_clear(struct desktop_held *h);

#endif
