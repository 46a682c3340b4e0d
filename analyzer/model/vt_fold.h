/* vt_fold.h — folds decoded records into a vt_process (vt_model.h).
 *
 * Contract: the decoder (read/) validates a record completely, then calls one
 * fold function; folding cannot fail, so a record that fails to decode changes
 * nothing but new empty sites. Memory grows with what is distinct (stacks,
 * sites, series changes), not with the number of records or steps: steps go into
 * a bounded number of slots (vt_slots.h).
 * Series: a snapshot updates each site's step state; when the step number
 * changes the previous step is closed: every site touched in it, and every site
 * whose current slot is non-zero, gets its value for that step put into its
 * slot of its run-length series (absent from the step's last snapshot = 0 live
 * bytes, docs/snapshot-format.md "sites"). The exit record is not a step: it
 * gives unfreed bytes.
 * Single-threaded; the caller owns p.
 */
#ifndef VT_FOLD_H
#define VT_FOLD_H

#include "vt_record.h"

/* Stack record id of the file: trims fr (frames of libvramtrace/libcudart/libcuda
 * anywhere, then a leading run of CUDA API functions: common/vt_frames.h; all kept if nothing is
 * left), moves each Python frame's native_index with the trimming, interns the
 * result by (module, offset) of each frame and the Python frames, and maps id to
 * it (vt_process.rawstacks). Takes ownership of fr (nfr entries; functions are
 * copied) and py (npy entries; file and function copied into display form). The
 * caller has checked that id is new. */
void vt_fold_stack(vt_process *p, int64_t id, vt_frame *fr, size_t nfr, vt_pyframe *py, size_t npy);

/* Applies a decoded, validated snapshot record: annotations, devices, the live
 * list (kept when keep_allocs), OOM forensics (vt_oom.h), unfreed bytes of an
 * exit record, or the step series. Reorders rec->ae and reuses rec->se. */
void vt_fold_snapshot(vt_process *p, vt_snaprec *rec, int keep_allocs);

/* After the file's last record: closes the last step, computes
 * vt_process.peak_bytes, frees the loading scratch and shrinks p's arrays to what
 * they hold. */
void vt_fold_finish(vt_process *p);

#endif /* VT_FOLD_H */
