/* vt_ipc.c — exports, imports and their digests (vt_ipc.h). Two fixed arrays under
 * one lock; linear scans (IPC calls are rare next to allocations). */
#include "vt_ipc.h"

#include <string.h>
#include "vt_lock.h"

typedef struct vt__import {
    uint64_t addr, digest, size;
    uint32_t opens;
    uint8_t  refcounted;
    uint8_t  vmm;         /* addr is a VMM handle (vt_ipc_import_vmm) */
    uint64_t ext;         /* a buffer of this external memory object, else 0 */
} vt__import;

typedef struct vt__extobj { uint64_t ext, digest; } vt__extobj;

static vt_lock_t          vt__ipc_lock = VT_LOCK_INIT;
static vt_ipc_export_row  vt__exports[VT_IPC_MAX];
static size_t             vt__n_exports;
static vt__import         vt__imports[VT_IPC_MAX];
static size_t             vt__n_imports;
static vt__extobj         vt__extobjs[VT_IPC_MAX];
static size_t             vt__n_extobjs;

static void vt__ipc_lock_take(void)
{
    if (!vt_lock_try(&vt__ipc_lock))
        vt_lock_slow(&vt__ipc_lock);
}

/* FNV-1a 64 over the bytes, then a murmur3 finaliser (spreads the low bits). */
uint64_t vt_ipc_digest(const void *bytes, size_t n)
{
    const unsigned char *p = bytes;
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0x100000001b3ull;
    }
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    h ^= h >> 33;
    return h;
}

uint64_t vt_ipc_digest_file(uint64_t st_dev, uint64_t st_ino)
{
    uint64_t b[2] = {st_dev, st_ino};
    return vt_ipc_digest(b, sizeof b);
}

void vt_ipc_export_note(uint64_t addr, uint64_t digest)
{
    vt__ipc_lock_take();
    size_t i;
    for (i = 0; i < vt__n_exports; i++)
        if (vt__exports[i].digest == digest)
            break;
    if (i == vt__n_exports && vt__n_exports < VT_IPC_MAX)
        vt__n_exports++;
    if (i < vt__n_exports) {
        vt__exports[i].addr = addr;
        vt__exports[i].digest = digest;
    }
    vt_unlock(&vt__ipc_lock);
}

static vt__import *vt__find_of(uint64_t addr, int vmm)
{
    for (size_t i = 0; i < vt__n_imports; i++)
        if (vt__imports[i].addr == addr && vt__imports[i].vmm == vmm)
            return &vt__imports[i];
    return NULL;
}

static vt__import *vt__find(uint64_t addr)
{
    return vt__find_of(addr, 0);
}

void vt_ipc_import_vmm(uint64_t handle, uint64_t digest, uint64_t size)
{
    vt__ipc_lock_take();
    vt__import *m = vt__find_of(handle, 1);
    if (!m && vt__n_imports < VT_IPC_MAX)
        m = &vt__imports[vt__n_imports++];
    if (m)
        *m = (vt__import){handle, digest, size, 1, 0, 1, 0};
    vt_unlock(&vt__ipc_lock);
}

static void vt__remove(vt__import *m)
{
    *m = vt__imports[--vt__n_imports];
}

int vt_ipc_import_open(uint64_t addr, uint64_t digest, uint64_t size, int refcounted)
{
    int rc = 1;
    vt__ipc_lock_take();
    vt__import *m = vt__find(addr);
    if (m && refcounted && m->refcounted && m->opens > 0 && m->digest == digest) {
        m->opens++;
        rc = 0;
    } else {
        /* a new import at an address an ended one had (its record is gone) */
        if (!m && vt__n_imports < VT_IPC_MAX)
            m = &vt__imports[vt__n_imports++];
        if (m)
            *m = (vt__import){addr, digest, size, 1, (uint8_t)(refcounted != 0), 0, 0};
        else
            rc = -1;
    }
    vt_unlock(&vt__ipc_lock);
    return rc;
}

void vt_ipc_ext_note(uint64_t ext, uint64_t digest)
{
    vt__ipc_lock_take();
    size_t i = 0;
    while (i < vt__n_extobjs && vt__extobjs[i].ext != ext)
        i++;
    if (i == vt__n_extobjs && vt__n_extobjs < VT_IPC_MAX)
        vt__n_extobjs++;
    if (i < vt__n_extobjs)
        vt__extobjs[i] = (vt__extobj){ext, digest};
    vt_unlock(&vt__ipc_lock);
}

int vt_ipc_import_ext(uint64_t addr, uint64_t ext, uint64_t size)
{
    uint64_t digest = 0;
    vt__ipc_lock_take();
    for (size_t i = 0; i < vt__n_extobjs; i++)
        if (vt__extobjs[i].ext == ext)
            digest = vt__extobjs[i].digest;
    vt_unlock(&vt__ipc_lock);
    int rc = vt_ipc_import_open(addr, digest, size, 0);
    vt__ipc_lock_take();
    vt__import *m = vt__find(addr);
    if (m)
        m->ext = ext;
    vt_unlock(&vt__ipc_lock);
    return rc;
}

size_t vt_ipc_ext_destroy(uint64_t ext, uint64_t *addrs, size_t max)
{
    size_t n = 0;
    vt__ipc_lock_take();
    for (size_t i = 0; i < vt__n_extobjs; i++)
        if (vt__extobjs[i].ext == ext) {
            vt__extobjs[i] = vt__extobjs[--vt__n_extobjs];
            break;
        }
    for (size_t i = 0; i < vt__n_imports;) {
        if (vt__imports[i].ext == ext && !vt__imports[i].vmm) {
            if (n < max)
                addrs[n++] = vt__imports[i].addr;
            vt__remove(&vt__imports[i]);
        } else {
            i++;
        }
    }
    vt_unlock(&vt__ipc_lock);
    return n;
}

void vt_ipc_import_restart(uint64_t addr, uint64_t digest, uint64_t size)
{
    vt__ipc_lock_take();
    vt__import *m = vt__find(addr);
    if (m)
        *m = (vt__import){addr, digest, size, 1, m->refcounted, 0, m->ext};
    vt_unlock(&vt__ipc_lock);
}

int vt_ipc_import_close_begin(uint64_t addr)
{
    int rc = -1;
    vt__ipc_lock_take();
    vt__import *m = vt__find(addr);
    if (m && m->refcounted && m->opens > 0)
        rc = (int)--m->opens;
    vt_unlock(&vt__ipc_lock);
    return rc;
}

void vt_ipc_import_close_end(uint64_t addr, int ok)
{
    vt__ipc_lock_take();
    vt__import *m = vt__find(addr);
    if (m && m->refcounted) {
        if (!ok)
            m->opens++;
        else if (m->opens == 0)
            vt__remove(m);
    }
    vt_unlock(&vt__ipc_lock);
}

size_t vt_ipc_exports_copy(vt_ipc_export_row *out, size_t max)
{
    vt__ipc_lock_take();
    size_t n = vt__n_exports < max ? vt__n_exports : max;
    memcpy(out, vt__exports, n * sizeof *out);
    vt_unlock(&vt__ipc_lock);
    return n;
}

size_t vt_ipc_imports_copy(vt_ipc_import_row *out, size_t max, int (*live)(uint64_t addr),
                           int (*vmm_live)(uint64_t handle, uint64_t *va, uint32_t *maps))
{
    /* the liveness answers come from the core, asked without our lock held */
    vt__ipc_lock_take();
    size_t n = vt__n_imports < max ? vt__n_imports : max;
    for (size_t i = 0; i < n; i++)
        out[i] = (vt_ipc_import_row){vt__imports[i].addr, vt__imports[i].digest, vt__imports[i].size,
                                     vt__imports[i].opens};
    uint8_t refc[VT_IPC_MAX], vmm[VT_IPC_MAX];
    for (size_t i = 0; i < n; i++) {
        refc[i] = vt__imports[i].refcounted;
        vmm[i] = vt__imports[i].vmm;
    }
    vt_unlock(&vt__ipc_lock);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (out[i].opens == 0)
            continue;
        if (vmm[i]) {
            uint64_t va = 0;
            uint32_t maps = 0;
            int state = vmm_live ? vmm_live(out[i].addr, &va, &maps) : -1;
            if (state < 0) {      /* not known now: listed unmapped, kept */
                out[i].addr = 0;
                out[k++] = out[i];
                continue;
            }
            if (state > 0) {
                out[i].addr = va;     /* listed at its lowest mapping (0: unmapped) */
                out[i].opens = maps;  /* its mappings: one allocation, counted once */
                out[k++] = out[i];
                continue;
            }
            vt__ipc_lock_take();
            vt__import *m = vt__find_of(out[i].addr, 1);
            if (m && m->digest == out[i].digest)
                vt__remove(m);
            vt_unlock(&vt__ipc_lock);
            continue;
        }
        int alive = live ? live(out[i].addr) : -1;
        if (alive == 0) {
            /* ended with its record (a pool pointer's free, an external memory's
             * destroy, the teardown of the context that opened a legacy handle):
             * forget it unless a new import took the address meanwhile */
            vt__ipc_lock_take();
            vt__import *m = vt__find(out[i].addr);
            if (m && m->refcounted == refc[i] && m->digest == out[i].digest)
                vt__remove(m);
            vt_unlock(&vt__ipc_lock);
            continue;
        }
        out[k++] = out[i];
    }
    return k;
}

void vt_ipc_after_fork_child(void)
{
    vt_lock_init(&vt__ipc_lock);
    vt__n_exports = 0;
    vt__n_imports = 0;
    vt__n_extobjs = 0;
}
