/* vmm-qemu/image.h: a built guest image, as described by its image.json
 * (written by guest-images/build.sh; format in docs/images.md). */
#ifndef VITRINE_VMM_IMAGE_H
#define VITRINE_VMM_IMAGE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

struct vmm_image {
	char name[64];
	char dir[PATH_MAX];
	char kernel[PATH_MAX]; /* absolute */
	char initrd[PATH_MAX]; /* absolute */
	char rootfs[PATH_MAX]; /* absolute, or "" when the image has no disk */
	char append[1024]; /* the image's own kernel command line */
	char recipe[64]; /* which build of the image (its recipe hash), "" when unknown */
};

/* Directory images live in: $VITRINE_HOME/images (default /var/lib/vitrine).
 * The text is the calling thread's, good until its next call. */
const char *vmm_images_dir(void);

/* Loads the image called name from vmm_images_dir(), or from name itself when
 * it contains a '/'. Returns 0, -ENOENT when it is not built, or -EINVAL for
 * a broken image.json; err says which. */
int vmm_image_load(const char *name, struct vmm_image *img, char *err, size_t errlen);

/* Parses image.json text for an image in dir. Pure: checks no files.
 * Returns 0 or -EINVAL with a reason in err. */
int vmm_image_parse(const char *json, const char *dir, struct vmm_image *img, char *err,
		    size_t errlen);

#endif
