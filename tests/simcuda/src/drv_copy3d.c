/*
 * drv_copy3d.c - the rectangular copies of the simulated driver (cuda.h "Memory
 * Management", CUDA 13.0): cuMemcpy2D_v2, cuMemcpy2DUnaligned_v2,
 * cuMemcpy2DAsync_v2, cuMemcpy3D_v2, cuMemcpy3DAsync_v2, between host memory,
 * device memory, unified pointers and CUDA arrays (levels of mipmaps included).
 *
 * Each side is a (start, row pitch, slice pitch) walk: host and device memory use the
 * descriptor's pitch and height, an array its padded row pitch (drv_array.c), and
 * XInBytes/Y/Z select the first byte. WidthInBytes x Height x Depth bytes are copied
 * row by row (memmove), synchronously, after validation under the driver lock:
 * device and unified sides must be live memory over the whole walk, an array side
 * must fit the array (x + width <= Width x element bytes, y + height <= rows, z + depth
 * <= slices) and have memory (not a deferred-mapping array), a pitch below WidthInBytes (with more than one row), a height below
 * Height (with more than one slice), a LOD other than 0, or an unknown memory type is
 * CUDA_ERROR_INVALID_VALUE; an array handle that is not live CUDA_ERROR_INVALID_HANDLE;
 * no current context CUDA_ERROR_INVALID_CONTEXT. A zero extent copies nothing.
 */
#define _GNU_SOURCE
#include "drv_internal.h"

#include <string.h>

typedef struct side {
    CUmemorytype type;
    uintptr_t    ptr;      /* host or device start of the descriptor */
    CUarray      array;
    size_t       x, y, z, pitch, height;
} side;

typedef struct walk {
    uintptr_t start;
    size_t    pitch, slice;
} walk;

/* Resolves one side of a W x H x D copy into a walk. Lock held. */
static CUresult resolve_locked(const side *s, size_t w, size_t h, size_t d, walk *out)
{
    if (s->type == CU_MEMORYTYPE_ARRAY) {
        const sim_array *a = sim_array_find_locked(s->array, 0);
        if (!a)
            return CUDA_ERROR_INVALID_HANDLE;
        if (a->desc.Flags & CUDA_ARRAY3D_DEFERRED_MAPPING)
            return CUDA_ERROR_INVALID_VALUE; /* no memory mapped into it (not simulated) */
        if (s->x > a->desc.Width * a->elem || w > a->desc.Width * a->elem - s->x || s->y > a->rows ||
            h > a->rows - s->y || s->z > a->slices || d > a->slices - s->z)
            return CUDA_ERROR_INVALID_VALUE;
        out->pitch = a->pitch;
        out->slice = a->pitch * a->rows;
        out->start = a->addr + s->z * out->slice + s->y * a->pitch + s->x;
        return CUDA_SUCCESS;
    }
    size_t pitch = s->pitch ? s->pitch : w;
    if ((h > 1 && pitch < w) || (d > 1 && s->height < h))
        return CUDA_ERROR_INVALID_VALUE;
    out->pitch = pitch;
    out->slice = pitch * s->height;
    out->start = s->ptr + s->z * out->slice + s->y * pitch + s->x;
    size_t len = (d - 1) * out->slice + (h - 1) * pitch + w;
    switch (s->type) {
    case CU_MEMORYTYPE_HOST:
        return s->ptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    case CU_MEMORYTYPE_DEVICE:
        return sim_check_device_range_locked(out->start, len);
    case CU_MEMORYTYPE_UNIFIED:
        return s->ptr ? sim_check_any_range_locked(out->start, len) : CUDA_ERROR_INVALID_VALUE;
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
}

static CUresult copy3d(const side *src, const side *dst, size_t w, size_t h, size_t d)
{
    SIM_REQUIRE_INIT();
    if (w == 0 || h == 0 || d == 0)
        return CUDA_SUCCESS;
    walk ws, wd;
    SIM_LOCK();
    struct CUctx_st *c;
    CUresult r = sim_ctx_require_locked(&c);
    if (r == CUDA_SUCCESS)
        r = resolve_locked(src, w, h, d, &ws);
    if (r == CUDA_SUCCESS)
        r = resolve_locked(dst, w, h, d, &wd);
    SIM_UNLOCK();
    if (r != CUDA_SUCCESS)
        return r;
    for (size_t z = 0; z < d; z++)
        for (size_t y = 0; y < h; y++)
            memmove((void *)(wd.start + z * wd.slice + y * wd.pitch),
                    (const void *)(ws.start + z * ws.slice + y * ws.pitch), w);
    return CUDA_SUCCESS;
}

static CUresult copy2d(const CUDA_MEMCPY2D *p)
{
    if (!p)
        return sim_drv.initialized ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_INITIALIZED;
    side s = {p->srcMemoryType, p->srcMemoryType == CU_MEMORYTYPE_HOST ? (uintptr_t)p->srcHost : (uintptr_t)p->srcDevice,
              p->srcArray, p->srcXInBytes, p->srcY, 0, p->srcPitch, p->Height};
    side t = {p->dstMemoryType, p->dstMemoryType == CU_MEMORYTYPE_HOST ? (uintptr_t)p->dstHost : (uintptr_t)p->dstDevice,
              p->dstArray, p->dstXInBytes, p->dstY, 0, p->dstPitch, p->Height};
    return copy3d(&s, &t, p->WidthInBytes, p->Height, 1);
}

static CUresult copy3d_desc(const CUDA_MEMCPY3D *p)
{
    if (!p)
        return sim_drv.initialized ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_INITIALIZED;
    if (p->srcLOD || p->dstLOD)
        return CUDA_ERROR_INVALID_VALUE;
    side s = {p->srcMemoryType, p->srcMemoryType == CU_MEMORYTYPE_HOST ? (uintptr_t)p->srcHost : (uintptr_t)p->srcDevice,
              p->srcArray, p->srcXInBytes, p->srcY, p->srcZ, p->srcPitch, p->srcHeight};
    side t = {p->dstMemoryType, p->dstMemoryType == CU_MEMORYTYPE_HOST ? (uintptr_t)p->dstHost : (uintptr_t)p->dstDevice,
              p->dstArray, p->dstXInBytes, p->dstY, p->dstZ, p->dstPitch, p->dstHeight};
    return copy3d(&s, &t, p->WidthInBytes, p->Height, p->Depth);
}

CUresult cuMemcpy2D_v2(const CUDA_MEMCPY2D *pCopy) { return copy2d(pCopy); }
CUresult cuMemcpy2DUnaligned_v2(const CUDA_MEMCPY2D *pCopy) { return copy2d(pCopy); }
CUresult cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D *pCopy, CUstream hStream)
{
    (void)hStream;
    return copy2d(pCopy);
}
CUresult cuMemcpy3D_v2(const CUDA_MEMCPY3D *pCopy) { return copy3d_desc(pCopy); }
CUresult cuMemcpy3DAsync_v2(const CUDA_MEMCPY3D *pCopy, CUstream hStream)
{
    (void)hStream;
    return copy3d_desc(pCopy);
}
