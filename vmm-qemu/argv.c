/* vmm-qemu/argv.c: see argv.h.
 *
 * The machine is q35 with virtio devices only (-nodefaults): the prototype
 * found it the fastest and most reliable under TCG; microvm kernels hung on
 * PIT calibration in 3 of 5 boots. Nothing listens on the network: QMP, VNC
 * and the guest agent are unix sockets in the session's 0700 run dir. */
#include "vmm-qemu/argv.h"

#include "common/agent_proto.h"
#include "vmm-qemu/run_dir.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int vmm_url_encode_cmdline(const char *url, char *out, size_t outlen)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t o = 0;

	for (const unsigned char *p = (const unsigned char *)url; *p; p++) {
		bool esc = *p <= 0x20 || *p >= 0x7f || strchr("\"'\\`<>", *p);

		if (o + (esc ? 3 : 1) >= outlen)
			return -ENOSPC;
		if (esc) {
			out[o++] = '%';
			out[o++] = hex[*p >> 4];
			out[o++] = hex[*p & 15];
		} else {
			out[o++] = (char)*p;
		}
	}
	if (o >= outlen)
		return -ENOSPC;
	out[o] = '\0';
	return 0;
}

int vmm_argv_build(const struct vmm_spec *spec, const char *qemu_bin, const char *run_dir,
		   struct strv *out, char *err, size_t errlen)
{
	const struct vmm_image *img = spec->image;
	char url[VMM_MAX_URL * 3 + 1];
	char qmp[108], vnc[108], qga[108], agent[108];
	int rc;

	memset(out, 0, sizeof(*out));
	rc = vmm_spec_check(spec, err, errlen);
	if (rc < 0)
		return rc;
	if (spec->url && vmm_url_encode_cmdline(spec->url, url, sizeof(url)) < 0) {
		snprintf(err, errlen, "url too long once encoded");
		return -EINVAL;
	}
	if (strchr(run_dir, ',')) {
		snprintf(err, errlen, "run dir must not contain ',': %s", run_dir);
		return -EINVAL;
	}
	if (vmm_run_dir_socket(run_dir, VMM_SOCKET_QMP, qmp, sizeof(qmp)) < 0 ||
	    vmm_run_dir_socket(run_dir, VMM_SOCKET_VNC, vnc, sizeof(vnc)) < 0 ||
	    vmm_run_dir_socket(run_dir, VMM_SOCKET_QGA, qga, sizeof(qga)) < 0 ||
	    vmm_run_dir_socket(run_dir, VMM_SOCKET_AGENT, agent, sizeof(agent)) < 0) {
		snprintf(err, errlen, "run dir too long for unix socket names: %s", run_dir);
		return -ENAMETOOLONG;
	}
	if (spec->ram_path && strchr(spec->ram_path, ',')) {
		snprintf(err, errlen, "ram path must not contain ',': %s", spec->ram_path);
		return -EINVAL;
	}

	strv_push(out, qemu_bin);
	strv_push(out, "-name");
	strv_pushf(out, "vitrine-%s,debug-threads=on", img->name);
	if (spec->accel == VMM_ACCEL_KVM) {
		strv_push(out, "-accel");
		strv_push(out, "kvm");
		strv_push(out, "-cpu");
		strv_push(out, "host");
	} else {
		strv_push(out, "-accel");
		strv_pushf(out, "tcg,thread=multi,tb-size=%d",
			   spec->tb_size_mib ? spec->tb_size_mib : 256);
		strv_push(out, "-cpu");
		strv_push(out, "max");
	}
	if (spec->ram_path) {
		/* Template RAM: shared with the file (the template guest) or a private
		 * copy-on-write mapping of it (a clone). Named pc.ram like the RAM
		 * -m makes on q35, so either kind of guest loads the other's
		 * checkpoints (checkpoint.h). */
		strv_push(out, "-object");
		strv_pushf(out, "memory-backend-file,id=pc.ram,size=%dM,mem-path=%s,share=%s",
			   spec->memory_mib, spec->ram_path, spec->ram_share ? "on" : "off");
		strv_push(out, "-M");
		strv_push(out, "q35,memory-backend=pc.ram");
	} else {
		strv_push(out, "-M");
		strv_push(out, "q35");
	}
	strv_push(out, "-smp");
	strv_pushf(out, "%d", spec->vcpus);
	strv_push(out, "-m");
	strv_pushf(out, "%d", spec->memory_mib);
	strv_push(out, "-nodefaults");
	strv_push(out, "-no-user-config");
	/* A guest reboot (or a panic, with panic=1) ends the process: supervised. */
	strv_push(out, "-no-reboot");
	strv_push(out, "-kernel");
	strv_push(out, img->kernel);
	strv_push(out, "-initrd");
	strv_push(out, img->initrd);
	strv_push(out, "-append");
	strv_pushf(out, "%s%spanic=1 vitrine.width=%d vitrine.height=%d%s%s", img->append,
		   img->append[0] ? " " : "", spec->width, spec->height,
		   spec->url ? " vitrine.url=" : "", spec->url ? url : "");
	if (img->rootfs[0]) {
		strv_push(out, "-drive");
		strv_pushf(out, "file=%s/disk.qcow2,if=none,id=disk0,format=qcow2,discard=unmap",
			   run_dir);
		strv_push(out, "-device");
		strv_push(out, "virtio-blk-pci,drive=disk0");
	}
	strv_push(out, "-device");
	strv_pushf(out, "virtio-gpu-pci,xres=%d,yres=%d", spec->width, spec->height);
	strv_push(out, "-device");
	strv_push(out, "virtio-tablet-pci");
	strv_push(out, "-device");
	strv_push(out, "virtio-keyboard-pci");
	strv_push(out, "-object");
	strv_push(out, "rng-random,id=rng0,filename=/dev/urandom");
	strv_push(out, "-device");
	strv_push(out, "virtio-rng-pci,rng=rng0");
	/* A new generation id on every start and restore: the guest kernel
	 * reseeds its RNG when it changes (clones never share random state). */
	strv_push(out, "-device");
	strv_push(out, "vmgenid,guid=auto");
	strv_push(out, "-device");
	strv_push(out, "virtio-serial-pci");
	strv_push(out, "-chardev");
	strv_pushf(out, "socket,id=qga0,path=%s,server=on,wait=off", qga);
	strv_push(out, "-device");
	strv_push(out, "virtserialport,chardev=qga0,name=org.qemu.guest_agent.0");
	/* vitrine-agent (guest-images/agent): commands, DevTools, egress. */
	strv_push(out, "-chardev");
	strv_pushf(out, "socket,id=agent0,path=%s,server=on,wait=off", agent);
	strv_push(out, "-device");
	strv_push(out, "virtserialport,chardev=agent0,name=" AGENT_PORT_NAME);
	if (spec->has_page) {
		strv_push(out, "-fw_cfg");
		strv_pushf(out, "name=opt/vitrine/page,file=%s/page.html", run_dir);
	}
	/* Appended (O_APPEND), so that a shim that rotates the log (shim.h)
	 * can truncate it under QEMU's open descriptor. */
	strv_push(out, "-chardev");
	strv_pushf(out, "file,id=serial0,path=%s/serial.log,append=on", run_dir);
	strv_push(out, "-serial");
	strv_push(out, "chardev:serial0");
	strv_push(out, "-display");
	strv_push(out, "none");
	strv_push(out, "-vnc");
	strv_pushf(out, "unix:%s", vnc);
	strv_push(out, "-qmp");
	strv_pushf(out, "unix:%s,server=on,wait=off", qmp);
	if (spec->incoming) {
		/* Not -incoming fd:N: 7.2 cannot load an x-ignore-shared stream
		 * that way (the capability must be set first, over QMP). */
		strv_push(out, "-incoming");
		strv_push(out, "defer");
	}
	if (spec->sandbox) {
		strv_push(out, "-sandbox");
		strv_push(out, "on,obsolete=deny,elevateprivileges=deny,spawn=deny,"
			       "resourcecontrol=deny");
	}
	if (out->oom) {
		strv_free(out);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	return 0;
}
