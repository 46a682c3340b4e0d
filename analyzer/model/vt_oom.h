/* vt_oom.h — OOM forensics (vt_oom in vt_model.h) of a snapshot record that
 * carries an "oom" object.
 *
 * Computed while the record is folded, from its live list ("allocations") when
 * present, else from its site rows, because the live list is not kept: top sites
 * by live bytes on the failing device, free gaps between the process's live
 * blocks (device, async and VMM kinds), and the sites whose blocks split those
 * gaps (the gap freeing one of their blocks would make), and for the first
 * VT_OOM_MAPS OOMs the address map of those blocks (bounded: vt_oom_block).
 * Bytes throughout.
 * Single-threaded.
 */
#ifndef VT_OOM_H
#define VT_OOM_H

#include "vt_record.h"

/* Appends one vt_oom to p->ooms from rec (rec->oom.present must be set).
 * Reorders rec->ae (sorts part of it by address); uses vt_rsite.scratch of the
 * sites it touches (rec->mark). */
void vt_oom_build(vt_process *p, vt_snaprec *rec);

#endif /* VT_OOM_H */
