/* vmm-qemu/accel.c: see accel.h. */
#include "vmm-qemu/accel.h"

#include "common/fsutil.h"
#include "vmm-qemu/proc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

static const char *home_dir(void)
{
	const char *h = getenv("VITRINE_HOME");

	return h && *h ? h : "/var/lib/vitrine";
}

/* What the verdict depends on: host kernel, QEMU binary, guest kernel. */
static void probe_key(const struct vmm_image *img, const char *qemu_bin, char *key, size_t len)
{
	struct utsname u;
	struct stat qs = { 0 }, ks = { 0 };
	char path[PATH_MAX];

	uname(&u);
	if (!strchr(qemu_bin, '/'))
		snprintf(path, sizeof(path), "/usr/bin/%s", qemu_bin);
	else
		snprintf(path, sizeof(path), "%s", qemu_bin);
	stat(path, &qs);
	stat(img->kernel, &ks);
	snprintf(key, len, "%s|%lld|%lld|%lld", u.release, (long long)qs.st_mtime,
		 (long long)qs.st_size, (long long)ks.st_size);
}

/* Boots img's kernel under KVM; true when it printed within the bound. */
static bool probe_kvm(const struct vmm_image *img, const char *qemu_bin, char *why, size_t len)
{
	char dir[] = "/tmp/vitrine-kvm-probe-XXXXXX", log[64], serial[80], err[256];
	const char *env = getenv("VITRINE_KVM_PROBE_MS");
	int bound = env ? atoi(env) : VMM_KVM_PROBE_MS;
	struct vmm_proc p;
	bool ok = false;
	int64_t deadline;
	char *argv[32];
	int n = 0;

	if (!mkdtemp(dir)) {
		snprintf(why, len, "mkdtemp: %s", strerror(errno));
		return false;
	}
	snprintf(log, sizeof(log), "%s/qemu.log", dir);
	snprintf(serial, sizeof(serial), "file:%s/serial.log", dir);
	argv[n++] = (char *)qemu_bin;
	argv[n++] = "-accel";
	argv[n++] = "kvm";
	argv[n++] = "-cpu";
	argv[n++] = "host";
	argv[n++] = "-M";
	argv[n++] = "q35";
	argv[n++] = "-m";
	argv[n++] = "128";
	argv[n++] = "-nodefaults";
	argv[n++] = "-no-user-config";
	argv[n++] = "-no-reboot";
	argv[n++] = "-display";
	argv[n++] = "none";
	argv[n++] = "-kernel";
	argv[n++] = (char *)img->kernel;
	argv[n++] = "-append";
	argv[n++] = "console=ttyS0 earlyprintk=serial panic=-1";
	argv[n++] = "-serial";
	argv[n++] = serial;
	argv[n] = NULL;
	if (vmm_proc_spawn(argv, log, NULL, 0, NULL, &p, err, sizeof(err)) < 0) {
		snprintf(why, len, "probe: %s", err);
		goto out;
	}
	deadline = fs_now_ms() + bound;
	snprintf(why, len, "a guest kernel printed nothing within %d ms under KVM", bound);
	while (fs_now_ms() < deadline) {
		char *text = NULL, path[96];

		snprintf(path, sizeof(path), "%s/serial.log", dir);
		if (fs_read_file(path, 1 << 20, &text, NULL) == 0) {
			ok = strstr(text, "Linux version") != NULL;
			free(text);
		}
		if (ok)
			break;
		if (vmm_proc_wait(&p, 100)) {
			char *qlog = NULL;

			if (fs_read_file(log, 4096, &qlog, NULL) == 0)
				qlog[strcspn(qlog, "\n")] = '\0';
			snprintf(why, len, "QEMU failed under KVM: %s",
				 qlog && *qlog ? qlog : "no message");
			free(qlog);
			break;
		}
	}
	vmm_proc_release(&p);
out:
	fs_rm_rf(dir);
	return ok;
}

int vmm_accel_resolve(enum vmm_accel want, const struct vmm_image *img, const char *qemu_bin,
		      enum vmm_accel *out, char *why, size_t whylen)
{
	char key[512], cache[PATH_MAX], *cached = NULL, line[1024];
	bool works;
	int fd;

	snprintf(why, whylen, "asked for");
	*out = want;
	if (want == VMM_ACCEL_TCG)
		return 0;
	fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		snprintf(why, whylen, "/dev/kvm: %s", strerror(errno));
		works = false;
		goto verdict;
	}
	close(fd);
	probe_key(img, qemu_bin, key, sizeof(key));
	snprintf(cache, sizeof(cache), "%s/accel-probe", home_dir());
	if (fs_read_file(cache, 4096, &cached, NULL) == 0) {
		char *nl = strchr(cached, '\n');

		if (nl && (size_t)(nl - cached) == strlen(key) &&
		    !strncmp(cached, key, strlen(key))) {
			works = !strncmp(nl + 1, "kvm", 3);
			snprintf(why, whylen, "cached probe: %s", nl + 1);
			why[strcspn(why, "\n")] = '\0';
			free(cached);
			goto verdict;
		}
		free(cached);
	}
	works = probe_kvm(img, qemu_bin, why, whylen);
	if (works)
		snprintf(why, whylen, "a guest kernel started under KVM");
	snprintf(line, sizeof(line), "%s\n%s: %s\n", key, works ? "kvm" : "tcg", why);
	fs_mkdir_p(home_dir(), 0755);
	fs_write_file(cache, line, strlen(line)); /* a cache: failure only costs a probe */
verdict:
	if (works) {
		*out = VMM_ACCEL_KVM;
		return 0;
	}
	if (want == VMM_ACCEL_KVM)
		return -ENODEV;
	*out = VMM_ACCEL_TCG;
	return 0;
}
