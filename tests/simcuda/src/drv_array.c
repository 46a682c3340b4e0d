/*
 * drv_array.c - CUDA arrays and mipmapped arrays of the simulated driver (cuda.h
 * "Memory Management": cuArrayCreate_v2, cuArray3DCreate_v2, cuArrayDestroy,
 * cuArrayGetDescriptor_v2, cuArray3DGetDescriptor_v2, cuArrayGetMemoryRequirements;
 * "Mipmapped arrays": cuMipmappedArrayCreate, cuMipmappedArrayDestroy,
 * cuMipmappedArrayGetLevel, cuMipmappedArrayGetMemoryRequirements; CUDA 13.0).
 *
 * Layout (docs/simcuda.md "Arrays"): an element is format size x NumChannels bytes
 * (1, 2 or 4 channels); a row is padded to SIM_ARRAY_ROW_ALIGN (512) bytes; a slice
 * is max(Height, 1) rows; an array has max(Depth, 1) slices (layers; 6 per cubemap).
 * A mipmap's level l has extent max(1, dim >> l) in each dimension the array has
 * (layers are not reduced), levels placed one after another at 512-byte offsets.
 * The total is placed in the device arena with the rule of ordinary allocations
 * (sim_span_for: 256 B below 1 MiB, 2 MiB above), and that span is the driver-chosen
 * size: cuMemGetInfo_v2's free drops by it and the memory requirements report it.
 *
 * Errors: NULL out-parameter or descriptor, Width 0, Height 0 with Depth > 0 (but for
 * a 1D layered array),
 * channels other than 1/2/4, an unknown format or flag, a cubemap that is not
 * square with a depth of 6 (a multiple of 6 when layered): CUDA_ERROR_INVALID_VALUE;
 * CUDA_ARRAY3D_SPARSE: CUDA_ERROR_NOT_SUPPORTED (the device does not report it); no room: CUDA_ERROR_OUT_OF_MEMORY; an unknown or
 * destroyed handle: CUDA_ERROR_INVALID_HANDLE; a mipmap's level array given to
 * cuArrayDestroy: CUDA_ERROR_INVALID_VALUE. Creating counts for SIMCUDA_FAIL_AT.
 *
 * Deferred mapping (CUDA_ARRAY3D_DEFERRED_MAPPING; the device reports
 * CU_DEVICE_ATTRIBUTE_DEFERRED_MAPPING_CUDA_ARRAY_SUPPORTED): the array gets its
 * layout but no memory (addr 0, nothing placed or charged); its memory would be
 * mapped into it with cuMemMapArrayAsync, which is not simulated, so copies to it
 * fail with CUDA_ERROR_INVALID_VALUE.
 *
 * Memory requirements: the real driver answers only for arrays created with
 * CUDA_ARRAY3D_DEFERRED_MAPPING (CUDA_ERROR_INVALID_VALUE otherwise). The simulated
 * one answers for every array (size = span, alignment = the placement alignment),
 * unless SIMCUDA_ARRAY_REQUIREMENTS=strict, which answers as the real driver does:
 * for deferred-mapping arrays only.
 */
#define _GNU_SOURCE
#include "drv_internal.h"

#include <stdlib.h>
#include <string.h>

#define KNOWN_FLAGS (CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_SURFACE_LDST | CUDA_ARRAY3D_CUBEMAP | \
                     CUDA_ARRAY3D_TEXTURE_GATHER | CUDA_ARRAY3D_DEPTH_TEXTURE |              \
                     CUDA_ARRAY3D_COLOR_ATTACHMENT | CUDA_ARRAY3D_VIDEO_ENCODE_DECODE |      \
                     CUDA_ARRAY3D_DEFERRED_MAPPING)
#define DEFERRED(a) (((a)->desc.Flags & CUDA_ARRAY3D_DEFERRED_MAPPING) != 0)

/* Bytes of one channel of format f, 0 for a format not simulated. */
static size_t format_bytes(CUarray_format f)
{
    switch (f) {
    case CU_AD_FORMAT_UNSIGNED_INT8: case CU_AD_FORMAT_SIGNED_INT8: return 1;
    case CU_AD_FORMAT_UNSIGNED_INT16: case CU_AD_FORMAT_SIGNED_INT16: case CU_AD_FORMAT_HALF: return 2;
    case CU_AD_FORMAT_UNSIGNED_INT32: case CU_AD_FORMAT_SIGNED_INT32: case CU_AD_FORMAT_FLOAT: return 4;
    default: return 0;
    }
}

static size_t round_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

/* Validates d; sets the element size. CUDA_SUCCESS or the error of the header. */
static CUresult check_desc(const CUDA_ARRAY3D_DESCRIPTOR *d, size_t *elem)
{
    if (!d || d->Width == 0 || (d->Height == 0 && d->Depth != 0 && !(d->Flags & CUDA_ARRAY3D_LAYERED)))
        return CUDA_ERROR_INVALID_VALUE; /* Height 0 with a depth: only a 1D layered array */
    if (d->Flags & CUDA_ARRAY3D_SPARSE)
        return CUDA_ERROR_NOT_SUPPORTED;
    if (d->Flags & ~(unsigned)KNOWN_FLAGS)
        return CUDA_ERROR_INVALID_VALUE;
    size_t fb = format_bytes(d->Format);
    if (!fb || (d->NumChannels != 1 && d->NumChannels != 2 && d->NumChannels != 4))
        return CUDA_ERROR_INVALID_VALUE;
    if (d->Flags & CUDA_ARRAY3D_CUBEMAP) {
        int layered = (d->Flags & CUDA_ARRAY3D_LAYERED) != 0;
        if (d->Width != d->Height || d->Depth == 0 || (layered ? d->Depth % 6 : d->Depth != 6))
            return CUDA_ERROR_INVALID_VALUE;
    }
    if ((d->Flags & CUDA_ARRAY3D_LAYERED) && d->Depth == 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (d->Width > ((size_t)1 << 20) || d->Height > ((size_t)1 << 20) || d->Depth > ((size_t)1 << 20))
        return CUDA_ERROR_INVALID_VALUE; /* beyond any texture limit; keeps sizes in range */
    *elem = fb * d->NumChannels;
    return CUDA_SUCCESS;
}

/* Fills a's geometry from its desc and elem; returns its bytes (unpadded to span). */
static size_t geometry(sim_array *a)
{
    a->pitch = round_up(a->desc.Width * a->elem, SIM_ARRAY_ROW_ALIGN);
    a->rows = a->desc.Height ? a->desc.Height : 1;
    a->slices = a->desc.Depth ? a->desc.Depth : 1;
    return a->pitch * a->rows * a->slices;
}

/* The extent of level l of a mipmap described by d. */
static CUDA_ARRAY3D_DESCRIPTOR level_desc(const CUDA_ARRAY3D_DESCRIPTOR *d, unsigned l)
{
    CUDA_ARRAY3D_DESCRIPTOR e = *d;
    int layered = (d->Flags & (CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_CUBEMAP)) != 0;
    e.Width = d->Width >> l ? d->Width >> l : 1;
    if (d->Height)
        e.Height = d->Height >> l ? d->Height >> l : 1;
    if (d->Depth && !layered)
        e.Depth = d->Depth >> l ? d->Depth >> l : 1;
    return e;
}

static void list_add_locked(sim_array *a)
{
    a->next = sim_drv.arrays;
    sim_drv.arrays = a;
}

static void list_del_locked(sim_array *a)
{
    for (sim_array **p = &sim_drv.arrays; *p; p = &(*p)->next)
        if (*p == a) {
            *p = a->next;
            return;
        }
}

sim_array *sim_array_find_locked(const void *h, int mip)
{
    if (!h)
        return NULL;
    uint32_t magic = mip ? SIM_MAGIC_MIPMAP : SIM_MAGIC_ARRAY;
    for (sim_array *a = sim_drv.arrays; a; a = a->next)
        if (a == h)
            return a->magic == magic ? a : NULL;
    return NULL;
}

/* Places `bytes` for a new array or mipmap on the current context's device (a
 * deferred-mapping one: only sizes them). Lock held. */
static CUresult place_locked(sim_array *a, size_t bytes)
{
    struct CUctx_st *c;
    CUresult r = sim_ctx_require_locked(&c);
    if (r != CUDA_SUCCESS)
        return r;
    if (sim_fail_next_locked())
        return CUDA_ERROR_OUT_OF_MEMORY;
    a->span = sim_span_for(bytes, &a->align);
    if (!DEFERRED(a) && sim_device_place_locked(c->device, a->span, a->align, &a->addr) != 0)
        return CUDA_ERROR_OUT_OF_MEMORY;
    a->device = c->device;
    a->ctx = c;
    return CUDA_SUCCESS;
}

static CUresult create(CUarray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *d)
{
    SIM_REQUIRE_INIT();
    size_t elem = 0;
    CUresult r = pHandle ? check_desc(d, &elem) : CUDA_ERROR_INVALID_VALUE;
    if (r != CUDA_SUCCESS)
        return r;
    sim_array *a = calloc(1, sizeof *a);
    if (!a)
        return CUDA_ERROR_OUT_OF_MEMORY;
    a->magic = SIM_MAGIC_ARRAY;
    a->desc = *d;
    a->levels = 1;
    a->elem = elem;
    SIM_LOCK();
    r = place_locked(a, geometry(a));
    if (r == CUDA_SUCCESS) {
        list_add_locked(a);
        *pHandle = (CUarray)a;
    }
    SIM_UNLOCK();
    if (r != CUDA_SUCCESS)
        free(a);
    return r;
}

CUresult cuArrayCreate_v2(CUarray *pHandle, const CUDA_ARRAY_DESCRIPTOR *pAllocateArray)
{
    if (!pAllocateArray)
        return sim_drv.initialized ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_INITIALIZED;
    CUDA_ARRAY3D_DESCRIPTOR d = {pAllocateArray->Width, pAllocateArray->Height, 0,
                                 pAllocateArray->Format, pAllocateArray->NumChannels, 0};
    return create(pHandle, &d);
}

CUresult cuArray3DCreate_v2(CUarray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *pAllocateArray)
{
    return create(pHandle, pAllocateArray);
}

CUresult cuMipmappedArrayCreate(CUmipmappedArray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *pMipmappedArrayDesc,
                                unsigned int numMipmapLevels)
{
    SIM_REQUIRE_INIT();
    size_t elem = 0;
    CUresult r = pHandle ? check_desc(pMipmappedArrayDesc, &elem) : CUDA_ERROR_INVALID_VALUE;
    if (r != CUDA_SUCCESS)
        return r;
    const CUDA_ARRAY3D_DESCRIPTOR *d = pMipmappedArrayDesc;
    /* clamped to [1, 1 + floor(log2(max extent))], as the header says */
    size_t mx = d->Width;
    int layered = (d->Flags & (CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_CUBEMAP)) != 0;
    if (d->Height > mx)
        mx = d->Height;
    if (!layered && d->Depth > mx)
        mx = d->Depth;
    unsigned most = 1;
    while (mx >>= 1)
        most++;
    unsigned n = numMipmapLevels < 1 ? 1 : numMipmapLevels > most ? most : numMipmapLevels;
    sim_array *m = calloc(1, sizeof *m);
    sim_array **lv = calloc(n, sizeof *lv);
    int ok = m && lv;
    for (unsigned l = 0; ok && l < n; l++)
        ok = (lv[l] = calloc(1, sizeof **lv)) != NULL;
    if (!ok) {
        for (unsigned l = 0; lv && l < n; l++)
            free(lv[l]);
        free(lv);
        free(m);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    m->magic = SIM_MAGIC_MIPMAP;
    m->desc = *d;
    m->levels = n;
    m->elem = elem;
    m->level = lv;
    size_t bytes = 0;
    for (unsigned l = 0; l < n; l++) {
        lv[l]->magic = SIM_MAGIC_ARRAY;
        lv[l]->desc = level_desc(d, l);
        lv[l]->levels = 1;
        lv[l]->elem = elem;
        lv[l]->parent = m;
        lv[l]->span = geometry(lv[l]);
        lv[l]->addr = bytes; /* offset until placed */
        bytes = round_up(bytes + lv[l]->span, SIM_ARRAY_ROW_ALIGN);
    }
    SIM_LOCK();
    r = place_locked(m, bytes);
    if (r == CUDA_SUCCESS) {
        for (unsigned l = 0; l < n; l++) {
            lv[l]->addr += m->addr;
            lv[l]->device = m->device;
            lv[l]->ctx = m->ctx;
            list_add_locked(lv[l]);
        }
        list_add_locked(m);
        *pHandle = (CUmipmappedArray)m;
    }
    SIM_UNLOCK();
    if (r != CUDA_SUCCESS) {
        for (unsigned l = 0; l < n; l++)
            free(lv[l]);
        free(lv);
        free(m);
    }
    return r;
}

/* Unlinks a plain array or a mipmap (with its levels), gives its extent back and
 * frees it. Lock held. */
static void release_locked(sim_array *a)
{
    sim_texobjs_forget_array_locked(a);
    for (unsigned l = 0; a->level && l < a->levels; l++) {
        sim_texobjs_forget_array_locked(a->level[l]);
        list_del_locked(a->level[l]);
        free(a->level[l]);
    }
    list_del_locked(a);
    if (!DEFERRED(a))
        sim_device_unplace_locked(a->device, a->addr, a->span);
    a->magic = 0;
    free(a->level);
    free(a);
}

void sim_arrays_scrub_locked(struct CUctx_st *c)
{
    for (sim_array **p = &sim_drv.arrays; *p;) {
        sim_array *a = *p;
        if (a->ctx == c && !a->parent) {
            release_locked(a); /* may unlink *p and level arrays after it */
            p = &sim_drv.arrays;
        } else {
            p = &a->next;
        }
    }
}

static CUresult destroy(const void *h, int mip)
{
    SIM_REQUIRE_INIT();
    SIM_LOCK();
    sim_array *a = sim_array_find_locked(h, mip);
    CUresult r = !a ? CUDA_ERROR_INVALID_HANDLE : a->parent ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
    if (r == CUDA_SUCCESS)
        release_locked(a);
    SIM_UNLOCK();
    return r;
}

CUresult cuArrayDestroy(CUarray hArray)
{
    return destroy(hArray, 0);
}

CUresult cuMipmappedArrayDestroy(CUmipmappedArray hMipmappedArray)
{
    return destroy(hMipmappedArray, 1);
}

CUresult cuArray3DGetDescriptor_v2(CUDA_ARRAY3D_DESCRIPTOR *pArrayDescriptor, CUarray hArray)
{
    SIM_REQUIRE_INIT();
    if (!pArrayDescriptor)
        return CUDA_ERROR_INVALID_VALUE;
    SIM_LOCK();
    sim_array *a = sim_array_find_locked(hArray, 0);
    if (a)
        *pArrayDescriptor = a->desc;
    SIM_UNLOCK();
    return a ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

CUresult cuArrayGetDescriptor_v2(CUDA_ARRAY_DESCRIPTOR *pArrayDescriptor, CUarray hArray)
{
    SIM_REQUIRE_INIT();
    if (!pArrayDescriptor)
        return CUDA_ERROR_INVALID_VALUE;
    CUDA_ARRAY3D_DESCRIPTOR d;
    CUresult r = cuArray3DGetDescriptor_v2(&d, hArray);
    if (r == CUDA_SUCCESS) {
        if (d.Depth != 0)
            return CUDA_ERROR_INVALID_VALUE; /* a 3D or layered array: the header's rule */
        pArrayDescriptor->Width = d.Width;
        pArrayDescriptor->Height = d.Height;
        pArrayDescriptor->Format = d.Format;
        pArrayDescriptor->NumChannels = d.NumChannels;
    }
    return r;
}

CUresult cuMipmappedArrayGetLevel(CUarray *pLevelArray, CUmipmappedArray hMipmappedArray, unsigned int level)
{
    SIM_REQUIRE_INIT();
    if (!pLevelArray)
        return CUDA_ERROR_INVALID_VALUE;
    SIM_LOCK();
    sim_array *m = sim_array_find_locked(hMipmappedArray, 1);
    CUresult r = !m ? CUDA_ERROR_INVALID_HANDLE : level >= m->levels ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
    if (r == CUDA_SUCCESS)
        *pLevelArray = (CUarray)m->level[level];
    SIM_UNLOCK();
    return r;
}

static CUresult requirements(CUDA_ARRAY_MEMORY_REQUIREMENTS *req, const void *h, int mip, CUdevice device)
{
    SIM_REQUIRE_INIT();
    if (!req)
        return CUDA_ERROR_INVALID_VALUE;
    if (device < 0 || device >= sim_drv.ndev)
        return CUDA_ERROR_INVALID_DEVICE;
    const char *strict = getenv("SIMCUDA_ARRAY_REQUIREMENTS");
    SIM_LOCK();
    sim_array *a = sim_array_find_locked(h, mip);
    CUresult r = !a ? CUDA_ERROR_INVALID_HANDLE
               : (strict && strcmp(strict, "strict") == 0 && !DEFERRED(a)) || a->parent ? CUDA_ERROR_INVALID_VALUE
               : CUDA_SUCCESS;
    if (r == CUDA_SUCCESS) {
        memset(req, 0, sizeof *req);
        req->size = a->span;
        req->alignment = a->align;
    }
    SIM_UNLOCK();
    return r;
}

CUresult cuArrayGetMemoryRequirements(CUDA_ARRAY_MEMORY_REQUIREMENTS *memoryRequirements, CUarray array,
                                      CUdevice device)
{
    return requirements(memoryRequirements, array, 0, device);
}

CUresult cuMipmappedArrayGetMemoryRequirements(CUDA_ARRAY_MEMORY_REQUIREMENTS *memoryRequirements,
                                               CUmipmappedArray mipmap, CUdevice device)
{
    return requirements(memoryRequirements, mipmap, 1, device);
}
