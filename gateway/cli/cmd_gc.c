/* gateway/cli/cmd_gc.c: `vitrine gc`: removes from the run base what no
 * session record knows (docs/durability.md): held checkpoints of sessions
 * whose record is gone, run dirs of guests that died, and guests whose
 * supervisor still runs but that no record names (a boot the gateway never
 * finished); and from the state dir the recordings a killed gateway left
 * (a recording never outlives its gateway, docs/api.md). Only while no
 * gateway uses the state dir: a running gateway keeps its own house. */
#include "common/fsutil.h"
#include "gateway/cli/cli.h"
#include "gateway/cli/cmd_opts.h"
#include "gateway/session/registry.h"
#include "vmm-qemu/run_lock.h"
#include "vmm-qemu/run_owner.h"
#include "vmm-qemu/sweep.h"
#include "vmm-qemu/vm.h"
#include "vmm-qemu/vm_find.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_REFS 4096

/* What the records refer to: run dirs and checkpoints. */
struct refs {
	char *paths[MAX_REFS];
	int n;
	int unreadable;
};

static void add_ref(struct refs *r, const char *path)
{
	if (path && *path && r->n < MAX_REFS)
		r->paths[r->n++] = strdup(path);
}

static bool referenced(const struct refs *r, const char *path)
{
	for (int i = 0; i < r->n; i++)
		if (r->paths[i] && !strcmp(r->paths[i], path))
			return true;
	return false;
}

static void on_record(void *ud, const char *id, json_t *rec, const char *why)
{
	struct refs *r = ud;

	(void)id;
	if (!rec) {
		r->unreadable++;
		fprintf(stderr, "vitrine gc: %s (kept)\n", why);
		return;
	}
	add_ref(r, json_string_value(json_object_get(json_object_get(rec, "guest"), "run_dir")));
	add_ref(r, json_string_value(json_object_get(rec, "checkpoint")));
}

struct gc {
	const struct refs *refs;
	bool dry_run;
	int checkpoints, guests;
};

static void on_entry(void *ud, const struct vmm_sweep_entry *e)
{
	struct gc *g = ud;
	char err[512];

	if (e->kind == VMM_SWEEP_CHECKPOINT && e->held_by && !referenced(g->refs, e->path)) {
		printf("%s checkpoint %s (held by %s, which no record refers to)\n",
		       g->dry_run ? "would remove" : "removing", e->path, e->held_by);
		if (!g->dry_run && fs_rm_rf(e->path) == 0)
			g->checkpoints++;
	} else if (e->kind == VMM_SWEEP_RUN_DIR && e->owner_alive && e->foreign) {
		printf("leaving guest %s: another gateway's (%s)\n", e->path, e->gateway);
	} else if (e->kind == VMM_SWEEP_RUN_DIR && e->owner_alive &&
		   !referenced(g->refs, e->path)) {
		printf("%s guest %s (its supervisor, pid %d, runs; no record names it)\n",
		       g->dry_run ? "would stop" : "stopping", e->path, (int)e->owner);
		if (g->dry_run)
			return;
		if (vmm_shim_terminate(e->path, 10000, err, sizeof(err)) == 0)
			g->guests++;
		else
			fprintf(stderr, "vitrine gc: %s: %s\n", e->path, err);
	}
}

/* Removes (or with dry_run lists) every recording under state_dir: with no
 * gateway on the state dir, none is live. Returns how many, or -1. */
static int sweep_recordings(const char *state_dir, bool dry_run)
{
	char dir[PATH_MAX], path[PATH_MAX];
	struct dirent *e;
	DIR *d;
	int n = 0;

	if (snprintf(dir, sizeof(dir), "%s/recordings", state_dir) >= (int)sizeof(dir) ||
	    !(d = opendir(dir)))
		return 0; /* none was ever made */
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= (int)sizeof(path))
			continue;
		if (dry_run)
			printf("%s recording %s (its gateway is gone)\n", "would remove", path);
		else if (fs_rm_rf(path) < 0) {
			fprintf(stderr, "vitrine gc: cannot remove %s\n", path);
			continue;
		}
		n++;
	}
	closedir(d);
	return n;
}

int cmd_gc(int argc, char **argv)
{
	const char *home = getenv("VITRINE_HOME"), *base = vmm_run_base(NULL);
	char state_dir[PATH_MAX], real[PATH_MAX], err[512];
	struct registry reg = { 0 };
	struct refs refs = { 0 };
	struct gc g = { .refs = &refs };
	struct gc_config cfg;
	int n, lock, rc = cli_gc_parse(&cfg, argc, argv, err, sizeof(err));

	if (rc == OPT_HELP) {
		cli_cmd_usage(&cli_gc_cmd, stdout);
		printf("Removes what no session record knows from the run base (%s):\n"
		       "checkpoints of deleted sessions, run dirs of dead guests, guests no record\n"
		       "names; and the recordings of a gateway that was killed. Refuses while a\n"
		       "gateway uses the state dir or the run base.\n",
		       base);
		return 0;
	}
	if ((rc = cli_cmd_answer(&cli_gc_cmd, rc, err)) >= 0)
		return rc;
	rc = 0; /* the exit status from here on */
	g.dry_run = cfg.dry_run;
	if (cfg.state_dir)
		snprintf(state_dir, sizeof(state_dir), "%s", cfg.state_dir);
	else
		snprintf(state_dir, sizeof(state_dir), "%s/sessions",
			 home && *home ? home : "/var/lib/vitrine");
	if (registry_open(&reg, state_dir, err, sizeof(err)) < 0) {
		fprintf(stderr, "vitrine gc: %s%s\n", err,
			strstr(err, "another gateway") ? "; it sweeps on its own" : "");
		return 1;
	}
	/* A gateway with another state dir on this run base: its guests are
	 * no orphans. */
	if ((lock = vmm_run_base_lock(base, err, sizeof(err))) < 0) {
		fprintf(stderr, "vitrine gc: %s\n", err);
		registry_close(&reg);
		return 1;
	}
	vmm_run_owner_set_gateway(realpath(state_dir, real) ? real : state_dir);
	n = registry_each(&reg, on_record, &refs);
	if (n < 0) {
		fprintf(stderr, "vitrine gc: cannot read %s\n", state_dir);
		rc = 1;
	} else if (vmm_sweep_list(base, on_entry, &g) < 0) {
		fprintf(stderr, "vitrine gc: cannot read %s\n", base);
		rc = 1;
	} else {
		int swept = g.dry_run ? 0 : vmm_sweep_stale(base);
		int recordings = sweep_recordings(state_dir, g.dry_run);

		printf("%s: %d records; %s %d checkpoints, %d run dirs and %d recordings, stopped "
		       "%d guests\n",
		       base, n, g.dry_run ? "would remove" : "removed", g.checkpoints, swept,
		       recordings, g.guests);
	}
	for (int i = 0; i < refs.n; i++)
		free(refs.paths[i]);
	close(lock);
	registry_close(&reg);
	return rc;
}
