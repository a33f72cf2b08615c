/* vmm-qemu/image.c: see image.h. */
#include "vmm-qemu/image.h"

#include "common/fsutil.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *vmm_images_dir(void)
{
	/* The loop and the job threads ask at once: each its own buffer. */
	static _Thread_local char dir[PATH_MAX];
	const char *home = getenv("VITRINE_HOME");

	snprintf(dir, sizeof(dir), "%s/images", home && *home ? home : "/var/lib/vitrine");
	return dir;
}

/* A file name inside the image dir: no separators, no "..". */
static int join_file(char *out, size_t outlen, const char *dir, const char *file)
{
	if (!file || !*file || strchr(file, '/') || !strcmp(file, "..") || !strcmp(file, "."))
		return -EINVAL;
	if ((size_t)snprintf(out, outlen, "%s/%s", dir, file) >= outlen)
		return -EINVAL;
	return 0;
}

int vmm_image_parse(const char *json, const char *dir, struct vmm_image *img, char *err,
		    size_t errlen)
{
	const char *name, *kernel, *initrd, *rootfs, *append = "";
	json_error_t jerr;
	json_t *root, *jrootfs = NULL;
	int rc = -EINVAL;

	memset(img, 0, sizeof(*img));
	root = json_loads(json, 0, &jerr);
	if (!root) {
		snprintf(err, errlen, "image.json: %s (line %d)", jerr.text, jerr.line);
		return -EINVAL;
	}
	if (json_unpack_ex(root, &jerr, 0, "{s:s, s:s, s:s, s?o, s?s}", "name", &name, "kernel",
			   &kernel, "initrd", &initrd, "rootfs", &jrootfs, "append", &append) < 0) {
		snprintf(err, errlen, "image.json: %s", jerr.text);
		goto out;
	}
	if (jrootfs && !json_is_null(jrootfs) && !json_is_string(jrootfs)) {
		snprintf(err, errlen, "image.json: rootfs must be a file name or null");
		goto out;
	}
	rootfs = json_string_value(jrootfs); /* NULL for null or absent */
	if (strlen(name) >= sizeof(img->name) || strlen(append) >= sizeof(img->append) ||
	    strlen(dir) >= sizeof(img->dir)) {
		snprintf(err, errlen, "image.json: name, append or path too long");
		goto out;
	}
	if (join_file(img->kernel, sizeof(img->kernel), dir, kernel) < 0 ||
	    join_file(img->initrd, sizeof(img->initrd), dir, initrd) < 0 ||
	    (rootfs && join_file(img->rootfs, sizeof(img->rootfs), dir, rootfs) < 0)) {
		snprintf(err, errlen, "image.json: kernel, initrd and rootfs must be file names");
		goto out;
	}
	strcpy(img->name, name);
	strcpy(img->dir, dir);
	strcpy(img->append, append);
	rc = 0;
out:
	json_decref(root);
	return rc;
}

int vmm_image_load(const char *name, struct vmm_image *img, char *err, size_t errlen)
{
	char dir[PATH_MAX], path[PATH_MAX + 16];
	char *text = NULL;
	int rc;

	if (strchr(name, '/'))
		rc = snprintf(dir, sizeof(dir), "%s", name);
	else
		rc = snprintf(dir, sizeof(dir), "%s/%s", vmm_images_dir(), name);
	if (rc < 0 || (size_t)rc >= sizeof(dir)) {
		snprintf(err, errlen, "image name too long");
		return -EINVAL;
	}
	snprintf(path, sizeof(path), "%s/image.json", dir);
	rc = fs_read_file(path, 1 << 16, &text, NULL);
	if (rc < 0) {
		snprintf(err, errlen, "image %s is not built (%s: %s); run `make images`", name,
			 path, strerror(-rc));
		return rc == -ENOENT ? -ENOENT : -EINVAL;
	}
	rc = vmm_image_parse(text, dir, img, err, errlen);
	free(text);
	if (rc < 0)
		return rc;
	if (access(img->kernel, R_OK) < 0 || access(img->initrd, R_OK) < 0 ||
	    (img->rootfs[0] && access(img->rootfs, R_OK) < 0)) {
		snprintf(err, errlen,
			 "image %s is incomplete (missing kernel, initrd or rootfs in %s)", name,
			 dir);
		return -ENOENT;
	}
	/* build.sh writes the recipe hash last: templates check it. */
	snprintf(path, sizeof(path), "%s/recipe", dir);
	if (fs_read_file(path, 256, &text, NULL) == 0) {
		snprintf(img->recipe, sizeof(img->recipe), "%.*s", (int)strcspn(text, " \n"), text);
		free(text);
	}
	return 0;
}
