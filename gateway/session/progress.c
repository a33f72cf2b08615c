/* gateway/session/progress.c: see progress.h. */
#include "gateway/session/progress.h"

#include <string.h>

static const struct {
	const char *name, *says;
} phases[] = {
	[PROGRESS_QUEUED] = { "queued", "waiting for a worker" },
	[PROGRESS_PREPARING] = { "preparing", "preparing the disk" },
	[PROGRESS_SAVING] = { "saving_state", "saving the state" },
	[PROGRESS_SPAWNING] = { "spawning", "starting QEMU" },
	[PROGRESS_MONITOR] = { "connecting_monitor", "connecting to QEMU" },
	[PROGRESS_LOADING] = { "loading_state", "loading the saved state" },
	[PROGRESS_BOOTING] = { "booting_guest", "waiting for the guest" },
	[PROGRESS_GUEST_PREP] = { "preparing_guest", "preparing the guest" },
	[PROGRESS_SETTLING] = { "settling", "letting the guest settle" },
	[PROGRESS_SCREEN] = { "connecting_screen", "connecting to the screen" },
	[PROGRESS_READY] = { "ready", "ready" },
	[PROGRESS_FAILED] = { "failed", "failed" },
};

const char *progress_phase_name(enum progress_phase p)
{
	if ((unsigned)p >= sizeof(phases) / sizeof(phases[0]))
		return "unknown";
	return phases[p].name;
}

enum progress_phase progress_of_step(enum vmm_step step)
{
	switch (step) {
	case VMM_STEP_RUN_DIR:
		return PROGRESS_PREPARING;
	case VMM_STEP_SPAWN:
		return PROGRESS_SPAWNING;
	case VMM_STEP_MONITOR:
		return PROGRESS_MONITOR;
	case VMM_STEP_LOAD:
		return PROGRESS_LOADING;
	case VMM_STEP_BOOT:
		return PROGRESS_BOOTING;
	case VMM_STEP_SETTLE:
		return PROGRESS_SETTLING;
	case VMM_STEP_SAVE:
		return PROGRESS_SAVING;
	}
	return PROGRESS_PREPARING;
}

const char *progress_describe(const char *name)
{
	for (size_t i = 0; i < sizeof(phases) / sizeof(phases[0]); i++)
		if (!strcmp(phases[i].name, name))
			return phases[i].says;
	return name;
}

void progress_begin(struct progress *p, enum progress_phase first, int64_t t0)
{
	memset(p, 0, sizeof(*p));
	p->t0_ms = t0 > 0 ? t0 : 1; /* 0 means never begun */
	p->n = 1;
	p->phase[0] = first;
	p->start_ms[0] = p->t0_ms;
}

bool progress_begun(const struct progress *p)
{
	return p->t0_ms != 0;
}

void progress_enter(struct progress *p, enum progress_phase ph, int64_t now)
{
	if (!p->t0_ms || p->end_ms || p->phase[p->n - 1] == ph || p->n >= PROGRESS_MAX_STEPS)
		return;
	if (now < p->start_ms[p->n - 1])
		now = p->start_ms[p->n - 1]; /* never a negative step */
	p->phase[p->n] = ph;
	p->start_ms[p->n] = now;
	p->n++;
}

void progress_end(struct progress *p, bool ok, int64_t now)
{
	if (!p->t0_ms || p->end_ms)
		return;
	p->end_ms = now < p->start_ms[p->n - 1] ? p->start_ms[p->n - 1] : now;
	p->outcome = ok ? PROGRESS_READY : PROGRESS_FAILED;
}

json_t *progress_json(const struct progress *p, int64_t now)
{
	int64_t until = p->end_ms ? p->end_ms : now;
	int last = p->n - 1, shown;
	json_t *j, *list;

	if (!p->t0_ms)
		return NULL;
	if (until < p->start_ms[last])
		until = p->start_ms[last];
	list = json_array();
	shown = p->end_ms ? p->n : last; /* under way: the current one is not done */
	for (int i = 0; list && i < shown; i++) {
		int64_t end = i < last ? p->start_ms[i + 1] : until;

		json_array_append_new(list, json_pack("{s:s, s:I}", "phase",
						      progress_phase_name(p->phase[i]), "ms",
						      (json_int_t)(end - p->start_ms[i])));
	}
	if (p->end_ms)
		j = json_pack("{s:s, s:I, s:o*}", "phase", progress_phase_name(p->outcome),
			      "elapsed_ms", (json_int_t)(until - p->t0_ms), "phases", list);
	else
		j = json_pack("{s:s, s:I, s:I, s:o*}", "phase", progress_phase_name(p->phase[last]),
			      "phase_ms", (json_int_t)(until - p->start_ms[last]), "elapsed_ms",
			      (json_int_t)(until - p->t0_ms), "phases", list);
	if (j && p->end_ms && p->outcome == PROGRESS_FAILED)
		json_object_set_new(j, "failed_in",
				    json_string(progress_phase_name(p->phase[last])));
	return j;
}
