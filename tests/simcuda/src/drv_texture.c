/*
 * drv_texture.c - texture and surface objects of the simulated driver (cuda.h
 * "Texture Object Management", "Surface Object Management", CUDA 13.0):
 * cuTexObjectCreate, cuTexObjectDestroy, cuSurfObjectCreate, cuSurfObjectDestroy.
 *
 * Kernels do nothing on the simulated device, so an object is only a validated
 * handle: a 64-bit id (1, 2, ...) with the context current at creation and the
 * array it reads, kept on sim_drv.texobjs until destroyed or until its context is
 * torn down. Resource checks: an array or mipmapped array that is not live:
 * CUDA_ERROR_INVALID_HANDLE; linear or pitch-2D memory that is not live device
 * memory of that size, a surface over anything but an array created with
 * CUDA_ARRAY3D_SURFACE_LDST, a NULL argument, an unknown resource type:
 * CUDA_ERROR_INVALID_VALUE. Destroying an id that is not live: CUDA_ERROR_INVALID_VALUE.
 * Destroying the array first leaves the object valid to destroy (it reads nothing).
 */
#define _GNU_SOURCE
#include "drv_internal.h"

#include <stdlib.h>

typedef struct sim_texobj {
    uint64_t id;
    int      surface;            /* 1: CUsurfObject, 0: CUtexObject */
    struct CUctx_st *ctx;
    const sim_array *array;      /* the array read, NULL once it is destroyed or none */
    struct sim_texobj *next;
} sim_texobj;

/* Validates res (surface: the stricter surface rules); sets *array. Lock held. */
static CUresult check_resource_locked(const CUDA_RESOURCE_DESC *res, int surface, const sim_array **array)
{
    *array = NULL;
    switch (res->resType) {
    case CU_RESOURCE_TYPE_ARRAY: {
        const sim_array *a = sim_array_find_locked(res->res.array.hArray, 0);
        if (!a)
            return CUDA_ERROR_INVALID_HANDLE;
        if (surface && !(a->desc.Flags & CUDA_ARRAY3D_SURFACE_LDST))
            return CUDA_ERROR_INVALID_VALUE;
        *array = a;
        return CUDA_SUCCESS;
    }
    case CU_RESOURCE_TYPE_MIPMAPPED_ARRAY:
        if (surface)
            return CUDA_ERROR_INVALID_VALUE;
        *array = sim_array_find_locked(res->res.mipmap.hMipmappedArray, 1);
        return *array ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
    case CU_RESOURCE_TYPE_LINEAR:
        if (surface || res->res.linear.sizeInBytes == 0)
            return CUDA_ERROR_INVALID_VALUE;
        return sim_check_device_range_locked((uintptr_t)res->res.linear.devPtr, res->res.linear.sizeInBytes);
    case CU_RESOURCE_TYPE_PITCH2D: {
        size_t w = res->res.pitch2D.width, h = res->res.pitch2D.height, p = res->res.pitch2D.pitchInBytes;
        if (surface || w == 0 || h == 0 || p == 0 || h > SIZE_MAX / p)
            return CUDA_ERROR_INVALID_VALUE;
        return sim_check_device_range_locked((uintptr_t)res->res.pitch2D.devPtr, p * h);
    }
    default:
        return CUDA_ERROR_INVALID_VALUE;
    }
}

static CUresult create(uint64_t *out, const CUDA_RESOURCE_DESC *res, int surface)
{
    SIM_REQUIRE_INIT();
    if (!out || !res)
        return CUDA_ERROR_INVALID_VALUE;
    sim_texobj *t = calloc(1, sizeof *t);
    if (!t)
        return CUDA_ERROR_OUT_OF_MEMORY;
    SIM_LOCK();
    struct CUctx_st *c;
    CUresult r = sim_ctx_require_locked(&c);
    if (r == CUDA_SUCCESS)
        r = check_resource_locked(res, surface, &t->array);
    if (r == CUDA_SUCCESS) {
        t->id = ++sim_drv.next_texobj;
        t->surface = surface;
        t->ctx = c;
        t->next = sim_drv.texobjs;
        sim_drv.texobjs = t;
        *out = t->id;
    }
    SIM_UNLOCK();
    if (r != CUDA_SUCCESS)
        free(t);
    return r;
}

static CUresult destroy(uint64_t id, int surface)
{
    SIM_REQUIRE_INIT();
    CUresult r = CUDA_ERROR_INVALID_VALUE;
    SIM_LOCK();
    for (sim_texobj **p = &sim_drv.texobjs; *p; p = &(*p)->next)
        if ((*p)->id == id && (*p)->surface == surface) {
            sim_texobj *t = *p;
            *p = t->next;
            free(t);
            r = CUDA_SUCCESS;
            break;
        }
    SIM_UNLOCK();
    return r;
}

void sim_texobjs_scrub_locked(struct CUctx_st *c)
{
    for (sim_texobj **p = &sim_drv.texobjs; *p;) {
        sim_texobj *t = *p;
        if (t->ctx == c) {
            *p = t->next;
            free(t);
        } else {
            p = &t->next;
        }
    }
}

void sim_texobjs_forget_array_locked(const sim_array *a)
{
    for (sim_texobj *t = sim_drv.texobjs; t; t = t->next)
        if (t->array == a)
            t->array = NULL;
}

CUresult cuTexObjectCreate(CUtexObject *pTexObject, const CUDA_RESOURCE_DESC *pResDesc,
                           const CUDA_TEXTURE_DESC *pTexDesc, const CUDA_RESOURCE_VIEW_DESC *pResViewDesc)
{
    (void)pResViewDesc;
    if (!pTexDesc)
        return sim_drv.initialized ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_INITIALIZED;
    return create((uint64_t *)pTexObject, pResDesc, 0);
}

CUresult cuTexObjectDestroy(CUtexObject texObject)
{
    return destroy(texObject, 0);
}

CUresult cuSurfObjectCreate(CUsurfObject *pSurfObject, const CUDA_RESOURCE_DESC *pResDesc)
{
    return create((uint64_t *)pSurfObject, pResDesc, 1);
}

CUresult cuSurfObjectDestroy(CUsurfObject surfObject)
{
    return destroy(surfObject, 1);
}
