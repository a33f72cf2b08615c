/* gateway/cli/cmd_template.c: `vitrine template create|ls|rm` and `vitrine boot
 * --template`: make a template from a ready guest once, then start guests
 * from it in about a second instead of booting (vmm-qemu/snapshot.h). */
#include "common/fsutil.h"
#include "common/log.h"
#include "gateway/cli/cli.h"
#include "gateway/cli/cmd_opts.h"
#include "vmm-qemu/accel.h"
#include "vmm-qemu/guest_prep.h"
#include "vmm-qemu/snapshot.h"
#include "vmm-qemu/template_create.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void template_usage(FILE *f)
{
	fprintf(f,
		"usage: vitrine template create NAME --image IMAGE [options]   (boots IMAGE here)\n"
		"       vitrine template save ID NAME [--no-wait]   (a session of the gateway)\n"
		"       vitrine template pool NAME N            (of the gateway: N warm sessions)\n"
		"       vitrine template build -f FILE [--name NAME] [--no-wait]   (a recipe, by the gateway)\n"
		"       vitrine template export NAME FILE       (of the gateway: one file)\n"
		"       vitrine template import FILE [--name N] (a file export made)\n"
		"       vitrine template gc --older-than DURATION (unused ones; 30m, 12h, 7d)\n"
		"       vitrine template ls\n"
		"       vitrine template rm NAME\n"
		"Templates live in $VITRINE_HOME/templates/NAME. create boots IMAGE, waits\n"
		"until it is ready (plus --settle seconds, default 2) and saves its state;\n"
		"`vitrine boot --template NAME` then starts a guest from it. --unless-current\n"
		"keeps an existing template made from the current build of IMAGE (and\n"
		"replaces a stale one). `vitrine serve` sessions use {\"template\": NAME}.\n"
		"`vitrine template SUBCOMMAND --help` describes its options.\n");
}

static int template_create(int argc, char **argv)
{
	struct template_create_config cfg;
	struct vmm_template_params p;
	struct cli_spinner *spinner;
	const char *name;
	char err[2048], what[96];
	int64_t t0 = fs_now_ms();
	int rc = cli_template_create_parse(&cfg, argc, argv, err, sizeof(err));
	bool unless_current;

	if ((rc = cli_cmd_answer(&cli_template_create_cmd, rc, err)) >= 0)
		return rc;
	name = cfg.name;
	unless_current = cfg.unless_current;
	p = (struct vmm_template_params){ .image = cfg.image,
					  .url = cfg.url,
					  .page_file = cfg.page,
					  .width = cfg.width,
					  .height = cfg.height,
					  .vcpus = cfg.vcpus,
					  .memory_mib = cfg.memory_mib,
					  .timeout_s = cfg.timeout_s,
					  .settle_s = cfg.settle_s };
	if (p.page_file && access(p.page_file, R_OK) < 0) {
		fprintf(stderr, "vitrine template create: --page %s: %s\n", p.page_file,
			strerror(errno));
		return 2;
	}
	if (unless_current) {
		struct vmm_template t;

		rc = vmm_template_load(name, &t, err, sizeof(err));
		if (rc == 0 && !strcmp(t.image, p.image)) {
			printf("template %s is current\n", name);
			return 0;
		}
		if (rc == 0 || rc == -ESTALE) {
			printf("template %s is %s: making it again\n", name,
			       rc ? "stale" : "of another image");
			if (vmm_template_remove(name, err, sizeof(err)) < 0) {
				fprintf(stderr, "vitrine template create: %s\n", err);
				return 1;
			}
		}
	}
	/* On a terminal, a spinner says which step the making is in. */
	snprintf(what, sizeof(what), "template %s", name);
	spinner = cli_spinner_start(what);
	p.on_step = spinner ? cli_spinner_step : NULL;
	p.step_ud = spinner;
	rc = vmm_template_create(name, &p, &cli_interrupted, err, sizeof(err));
	cli_spinner_stop(spinner);
	if (rc < 0) {
		fprintf(stderr, "vitrine template create: %s: %s\n", name, err);
		return rc == -EINVAL ? 2 : 1;
	}
	printf("template %s made from %s in %.1f s: %s/%s\n", name, p.image,
	       (fs_now_ms() - t0) / 1000.0, vmm_templates_dir(), name);
	return 0;
}

static int template_ls(void)
{
	DIR *d = opendir(vmm_templates_dir());
	struct dirent *e;

	printf("%-24s %-10s %-10s %5s %7s  %s\n", "NAME", "IMAGE", "SCREEN", "VCPUS", "MEMORY",
	       "CREATED");
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		struct vmm_template t;
		char err[512], when[32], screen[24];
		struct tm tm;
		time_t at;

		int rc = e->d_name[0] == '.' ? -ENOENT
					     : vmm_template_load(e->d_name, &t, err, sizeof(err));

		if (rc < 0 && rc != -ESTALE)
			continue;
		at = (time_t)t.created_at;
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", localtime_r(&at, &tm));
		snprintf(screen, sizeof(screen), "%dx%d", t.width, t.height);
		printf("%-24s %-10s %-10s %5d %6dM  %s%s\n", e->d_name, t.image, screen, t.vcpus,
		       t.memory_mib, when, rc ? "  (stale: make it again)" : "");
	}
	closedir(d);
	return 0;
}

static int template_rm(const char *name)
{
	char err[512];
	int rc = vmm_template_remove(name, err, sizeof(err));

	if (rc < 0)
		fprintf(stderr, "vitrine template rm: %s\n", err);
	return rc == -EINVAL ? 2 : rc < 0 ? 1 : 0;
}

int cmd_template(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help")) {
		template_usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "create"))
		return template_create(argc - 1, argv + 1);
	if (!strcmp(argv[1], "save"))
		return cmd_template_save(argc - 1, argv + 1);
	if (!strcmp(argv[1], "pool"))
		return cmd_template_pool(argc - 1, argv + 1);
	if (!strcmp(argv[1], "build"))
		return cmd_template_build(argc - 1, argv + 1);
	if (!strcmp(argv[1], "export"))
		return cmd_template_export(argc - 1, argv + 1);
	if (!strcmp(argv[1], "import"))
		return cmd_template_import(argc - 1, argv + 1);
	if (!strcmp(argv[1], "gc"))
		return cmd_template_gc(argc - 1, argv + 1);
	if (!strcmp(argv[1], "ls") && argc == 2)
		return template_ls();
	if (!strcmp(argv[1], "rm") && argc == 3)
		return template_rm(argv[2]);
	fprintf(stderr, "vitrine template: unknown or malformed subcommand '%s'\n", argv[1]);
	template_usage(stderr);
	return 2;
}

/* `vitrine boot --template NAME [--screenshot FILE] [--hold S] [--json]`. */
static int boot_from_template(int argc, char **argv)
{
	struct vmm_vm_opts vopts = { 0 };
	struct vmm_restore_times tm;
	struct vmm_template t;
	struct vmm_vm *vm = NULL;
	struct boot_config o;
	const char *name, *shot;
	char err[2048];
	int hold_s, rc = cli_boot_template_parse(&o, argc, argv, err, sizeof(err));
	bool json;
	int64_t t0 = fs_now_ms(), shot_ms = 0;

	if ((rc = cli_cmd_answer(&cli_boot_template_cmd, rc, err)) >= 0)
		return rc;
	name = o.template_name;
	shot = o.screenshot;
	hold_s = o.hold_s;
	json = o.json;
	if (vmm_template_load(name, &t, err, sizeof(err)) < 0) {
		fprintf(stderr, "vitrine boot: %s\n", err);
		return 1;
	}
	if (t.accel == VMM_ACCEL_TCG)
		log_warn("boot", "running under TCG: software emulation is slower and, per QEMU's "
				 "security docs, not a security boundary");
	rc = vmm_template_restore(&t, &vopts, &vm, &tm, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "vitrine boot: cannot restore template %s: %s\n", name, err);
		return 1;
	}
	/* As the gateway does: clock, warm-up (only guests with an agent can
	 * have their clock set). */
	{
		struct guest_prep prep = { .has_agent = t.has_disk,
					   .set_clock = t.has_disk,
					   .warm = true };

		struct guest_prep_report rep;

		if (guest_prep_run(vm, &prep, &rep, err, sizeof(err)) < 0)
			log_warn("boot",
				 "guest not prepared (its clock shows the template's time): %s",
				 err);
		if (rep.notes[0])
			log_warn("boot", "%s", rep.notes);
	}
	if (shot) {
		rc = vmm_vm_screendump(vm, shot, strrchr(shot, '.') + 1, err, sizeof(err));
		shot_ms = fs_now_ms() - t0;
	}
	if (rc == 0 && hold_s) {
		int64_t until = fs_now_ms() + (int64_t)hold_s * 1000;

		log_info("boot", "holding for %d s (run dir %s)", hold_s, vmm_vm_run_dir(vm));
		while (rc == 0 && !cli_interrupted && fs_now_ms() < until)
			rc = vmm_vm_service(vm, 200, err, sizeof(err));
	}
	if (json) {
		json_t *j = json_pack("{s:s, s:I, s:I, s:I, s:I, s:b}", "template", name,
				      "started_ms", (json_int_t)tm.started_ms, "loaded_ms",
				      (json_int_t)tm.loaded_ms, "running_ms",
				      (json_int_t)tm.running_ms, "screenshot_ms",
				      (json_int_t)shot_ms, "ok", rc == 0);
		char *text = j ? json_dumps(j, JSON_COMPACT) : NULL;

		if (text)
			puts(text);
		free(text);
		json_decref(j);
	} else
		printf("restored %s: QEMU up %lld ms, state loaded %lld ms, running %lld ms\n",
		       name, (long long)tm.started_ms, (long long)tm.loaded_ms,
		       (long long)tm.running_ms);
	if (rc < 0)
		fprintf(stderr, "vitrine boot: %s: %s\n", name, err);
	vmm_vm_destroy(vm);
	return rc < 0 ? 1 : 0;
}

int cmd_boot_any(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--template") || !strncmp(argv[i], "--template=", 11))
			return boot_from_template(argc, argv);
	return cmd_boot(argc, argv);
}
