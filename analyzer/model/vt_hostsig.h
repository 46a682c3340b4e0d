/* vt_hostsig.h — host and hardware signals of the snapshots (the "host" key of a
 * snapshot, docs/snapshot-format.md "host"): process RSS and swap, the
 * memory cgroup's OOM events, and NVML's per-GPU memory and ECC / retired-page /
 * remapped-row counters.
 *
 * Reading is lenient, unlike the rest of the format: the object is optional, and
 * a value of an unexpected type is treated as null (not known), never as an
 * error, so a report is never refused for its hardware side-data. Counters keep
 * their first and last known values over the run (vt_hcount).
 *
 * The warnings follow the format's reader note: a GPU whose ECC counts
 * (volatile or aggregate, corrected = single-bit or uncorrected = double-bit),
 * retired pages (single- or double-bit) or remapped rows (corrected or
 * uncorrected) rose between the first and the last snapshot that carried them,
 * or whose remapped_rows_pending / _failure became true; and a memory cgroup whose
 * oom / oom_kill events rose. The NVML calls behind the numbers are named in
 * docs/snapshot-format.md (nvmlDeviceGetTotalEccErrors, nvmlDeviceGetRetiredPages,
 * nvmlDeviceGetRemappedRows). Single-threaded; no allocation beyond h->gpus.
 */
#ifndef VT_HOSTSIG_H
#define VT_HOSTSIG_H

#include <jansson.h>
#include <stddef.h>

#include "vt_model.h"

/* Folds one snapshot's "host" value (NULL or null: nothing) into h. Never fails;
 * exits on OOM. */
void vt_hostsig_read(vt_host *h, const json_t *host);

/* Calls line(ctx, text) once per warning (one line each, no newline, e.g.
 * "GPU 0 (GPU-5c9a...): ECC errors rose during the run: volatile double-bit
 * (uncorrected) 0 -> 2"); returns the number of warnings. */
size_t vt_hostsig_warnings(const vt_host *h, void (*line)(void *ctx, const char *text), void *ctx);

/* The JSON name of counter c (VT_HC_*), as in the snapshot ("ecc_volatile_corrected"). */
const char *vt_hc_name(int c);

#endif /* VT_HOSTSIG_H */
