/* vt_model.c — lifetime and expansion helpers of the analyzer's data model (vt_model.h). */
#include "vt_model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vt_util.h"

void vt_rsite_expand(const vt_rsite *s, size_t nsteps, uint64_t *live, uint64_t *peak, uint32_t *nfree)
{
    size_t i = 0;
    uint64_t cl = 0, cp = 0;
    uint32_t cf = 0;
    for (uint32_t k = 0; k <= s->npts; k++) {
        size_t upto = k < s->npts ? s->pts[k].step : nsteps;
        if (upto > nsteps) upto = nsteps;
        for (; i < upto; i++) {
            if (live) live[i] = cl;
            if (peak) peak[i] = cp;
            if (nfree) nfree[i] = cf;
        }
        if (k < s->npts) {
            cl = s->pts[k].live;
            cp = s->pts[k].peak;
            cf = s->pts[k].nfree;
        }
    }
}

vt_device *vt_process_device(vt_process *p, int dev)
{
    for (size_t i = 0; i < p->ndevices; i++)
        if (p->devices[i].device == dev) return &p->devices[i];
    vt_grow((void **)&p->devices, &p->capdevices, p->ndevices + 1, sizeof *p->devices);
    vt_device *d = &p->devices[p->ndevices++];
    memset(d, 0, sizeof *d);
    d->device = dev;
    return d;
}

vt_rsite *vt_process_site(vt_process *p, const vt_site_key *key, vt_stack *canon)
{
    vt_rsite *s;
    HASH_FIND(hh, p->sites, key, sizeof *key, s);
    if (s) return s;
    s = vt_xcalloc(1, sizeof *s);
    s->key = *key;
    s->canon = canon;
    HASH_ADD(hh, p->sites, key, sizeof s->key, s);
    p->nsites++;
    return s;
}

vt_stack *vt_process_rawstack(const vt_process *p, int64_t id)
{
    vt_rawstack *raw;
    HASH_FIND(hh, p->rawstacks, &id, sizeof id, raw);
    return raw ? raw->canon : NULL;
}

const char *vt_gap_text(const vt_gap *g, char *buf, size_t cap)
{
    const char *err = g->error[0] ? g->error : "unknown error";
    if (g->has_steps)
        snprintf(buf, cap, "%llu record%s lost between step %llu and %llu: %s", (unsigned long long)g->records,
                 g->records == 1 ? "" : "s", (unsigned long long)g->first_step, (unsigned long long)g->last_step, err);
    else
        snprintf(buf, cap, "%llu record%s lost: %s", (unsigned long long)g->records, g->records == 1 ? "" : "s", err);
    return buf;
}

void vt_process_free(vt_process *p)
{
    if (!p) return;
    free(p->peak_comp);
    vt_module *m, *mt;
    HASH_ITER(hh, p->module_by_id, m, mt) {
        HASH_DEL(p->module_by_id, m);
        free(m->path);
        free(m->shown);
        free(m->build_id);
        free(m);
    }
    free(p->modules);
    free(p->gaps);
    free(p->livewarns);
    HASH_CLEAR(hh, p->stack_by_key);
    HASH_CLEAR(hh, p->pyonly_by_key);
    for (size_t i = 0; i < p->nstacks; i++) {
        vt_stack *s = p->stacks[i];
        for (uint32_t k = 0; k < s->nframes; k++) free(s->frames[k].function);
        free(s->frames);
        for (uint32_t k = 0; k < s->npy; k++) {
            free(s->py[k].file);
            free(s->py[k].function);
        }
        free(s->py);
        free(s->view);
        free(s->key);
        free(s);
    }
    free(p->annots);
    for (size_t i = 0; i < p->nlabels; i++) free(p->labels[i].label);
    free(p->labels);
    free(p->exports);
    free(p->imports);
    free(p->hostsig.gpus);
    free(p->stacks);
    vt_rawstack *r, *rt;
    HASH_ITER(hh, p->rawstacks, r, rt) {
        HASH_DEL(p->rawstacks, r);
        free(r);
    }
    vt_rsite *s, *st;
    HASH_ITER(hh, p->sites, s, st) {
        HASH_DEL(p->sites, s);
        free(s->pts);
        free(s);
    }
    free(p->steps);
    free(p->step_total);
    free(p->step_time);
    for (size_t i = 0; i < p->nalists; i++) free(p->alists[i].rows);
    free(p->alists);
    free(p->devices);
    for (size_t i = 0; i < p->nooms; i++) free(p->ooms[i].map);
    free(p->ooms);
    free(p->touched);
    free(p->active);
    free(p->file);
    free(p->host);
    free(p->exe);
    free(p->cmdline);
    free(p->alloc_env);
    free(p->step_range);
    free(p);
}

void vt_runset_free(vt_runset *rs)
{
    for (size_t i = 0; i < rs->n; i++) vt_process_free(rs->procs[i]);
    free(rs->procs);
    rs->procs = NULL;
    rs->n = rs->cap = 0;
}
