/* vmm-qemu/run_lock.h: one gateway (or `vitrine gc`) to a run base. The run
 * base holds every guest's run dir and supervisor; a gateway adopts the
 * supervisors it finds there and a gc stops guests no record of its state
 * dir names. Two of them on one run base with different state dirs would
 * stop each other's guests, so whoever manages the run base first holds
 * RUN_BASE/.gateway.lock (an flock, released with the process), and the
 * next one is refused before it touches anything. Guests started directly
 * (`vitrine boot`) take no lock: they only sweep what is dead. */
#ifndef VITRINE_VMM_RUN_LOCK_H
#define VITRINE_VMM_RUN_LOCK_H

#include <stddef.h>

/* Makes run_base (0755) if it is missing and takes its lock without
 * waiting. Returns the lock's descriptor (close it to let go), or -EBUSY
 * when another process holds it (err names the run base and what to do),
 * or another -errno with a reason in err. */
int vmm_run_base_lock(const char *run_base, char *err, size_t errlen);

#endif
