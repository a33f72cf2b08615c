/* vmm-qemu/snapshot.h: templates: a ready guest's state saved once, and new
 * guests started from it in about a second instead of booting.
 *
 * A template guest runs with its RAM in a file (spec.ram_path, shared). Saving
 * stops it and migrates only its device state (x-ignore-shared: the RAM is
 * already in the file) to <dir>/state through an fd handed over with getfd,
 * keeps its disk overlay as the frozen <dir>/disk.qcow2 and quits it. A clone
 * maps <dir>/ram private (copy-on-write: clones share the pages they have not
 * written), gets its own overlay on the frozen disk, starts with -incoming
 * defer, loads <dir>/state from an inherited fd and continues. Clones never
 * write a template file, so one template serves any number of them.
 *
 * Template dir ($VITRINE_HOME/templates/NAME):
 *   ram            guest RAM (file-backed, the template guest's memory)
 *   state          device state (QEMU migration stream)
 *   disk.qcow2     frozen disk (images with a rootfs)
 *   page.html      the page the guest was given, when there was one
 *   screen.ppm     the screen when it was saved
 *   template.json  what it was made from (image, screen, vcpus, memory, ...,
 *                  and for one saved from a session its lineage: parent,
 *                  backing, depth; template_from.h) */
#ifndef VITRINE_VMM_SNAPSHOT_H
#define VITRINE_VMM_SNAPSHOT_H

#include "vmm-qemu/vm.h"

#include <limits.h>
#include <stdint.h>

#define VMM_TEMPLATE_NAME_MAX 63

struct vmm_template {
	char dir[PATH_MAX];
	char image[64]; /* image name */
	char image_dir[PATH_MAX]; /* where the image was when the template was made */
	char image_recipe[64]; /* which build of it */
	int width, height, vcpus, memory_mib, tb_size_mib;
	enum vmm_accel accel; /* a clone must use the template's accelerator */
	char url[VMM_MAX_URL + 1]; /* "" when none */
	bool has_disk, has_page;
	int64_t created_at; /* Unix seconds */
	/* Lineage (template_from.h). parent: the template the saved session
	 * came from, "" for one built from an image; backing: the template
	 * whose disk.qcow2 is this disk's backing file, "" when it is the
	 * image's rootfs (none saved from a session yet, or flattened);
	 * depth: qcow2 layers from disk.qcow2 down to the rootfs (1 for a
	 * built template, 0 without a disk); from_session: the session saved,
	 * "" for a built one. */
	char parent[VMM_TEMPLATE_NAME_MAX + 1];
	char backing[VMM_TEMPLATE_NAME_MAX + 1];
	int depth;
	char from_session[64];
	/* the layout its guest's X was saved with (template.json's
	 * "keyboard_layout", canonical; "us" when it names none) */
	char keyboard_layout[64];
};

/* What vmm_template_save_as() records of where a template came from
 * (struct vmm_template's fields of the same names; NULL strings for ""). */
struct vmm_template_lineage {
	const char *parent, *backing, *from_session;
	int depth;
};

/* Host-side milliseconds of a restore, from its start. */
struct vmm_restore_times {
	int64_t started_ms; /* QEMU up, QMP connected, waiting for the stream */
	int64_t loaded_ms; /* the device state is loaded */
	int64_t running_ms; /* cont returned: the guest runs */
};

/* Directory templates live in: $VITRINE_HOME/templates (default
 * /var/lib/vitrine/templates); the text is the calling thread's, good until
 * its next call. This function can't fail. */
const char *vmm_templates_dir(void);

/* True when name can name a template: [a-z0-9_-], 1..VMM_TEMPLATE_NAME_MAX
 * bytes, the names a session can be created from. Pure. */
bool vmm_template_name_ok(const char *name);

/* Creates dir (0755, parents too) and an empty RAM file <dir>/ram of
 * memory_mib MiB for a template guest, and points spec at it (ram_path in
 * ram_path_buf, shared). Returns 0, -EEXIST when dir already holds a
 * template, or -errno with a reason in err. */
int vmm_template_prepare(const char *dir, struct vmm_spec *spec, char *ram_path_buf, size_t buflen,
			 char *err, size_t errlen);

/* Saves the running guest vm (started from a spec vmm_template_prepare()
 * filled for template_dir, typically once it reported "ready") as a template
 * in template_dir: screen, device state, disk, template.json; then quits QEMU
 * (the caller still destroys vm). Returns 0, or -errno with a reason in err;
 * on failure the files written so far stay and the guest may be stopped. */
int vmm_template_save(struct vmm_vm *vm, const char *template_dir, char *err, size_t errlen);
/* The same, recording lin (NULL: a template built from its image, depth 1
 * with a disk) in template.json. */
int vmm_template_save_as(struct vmm_vm *vm, const char *template_dir,
			 const struct vmm_template_lineage *lin, char *err, size_t errlen);

/* Loads the template called name from vmm_templates_dir(), or from name
 * itself when it contains a '/'. Returns 0, -ENOENT when there is none,
 * -EINVAL for a broken template.json, or -ESTALE (t filled) when its image
 * is gone or was rebuilt since; err says which. */
int vmm_template_load(const char *name, struct vmm_template *t, char *err, size_t errlen);

/* The disk space the files of the template in dir take (blocks
 * allocated: its RAM file has holes where the guest's memory was zero). A
 * handful of stat calls; 0 for what is not there. */
long long vmm_template_bytes(const char *dir);

/* Removes the template called name (clones running from it keep their
 * mappings and open files: that is safe). Returns 0, -ENOENT when there is
 * none, or -errno with a reason in err. */
int vmm_template_remove(const char *name, char *err, size_t errlen);

/* Starts a new guest from template t (opts as for vmm_vm_start; its page
 * and inherited fds are the restore's own) and waits until it runs. times
 * may be NULL. Returns 0 with *out owning the guest, or -errno with a reason
 * in err (nothing is left behind). The guest clock shows the template's
 * time until guest_prep_run() (guest_prep.h) or the guest corrects it. */
int vmm_template_restore(const struct vmm_template *t, const struct vmm_vm_opts *opts,
			 struct vmm_vm **out, struct vmm_restore_times *times, char *err,
			 size_t errlen);

#endif
