/* vt_cuda_arrays.c — the allocation shims of CUDA arrays and mipmapped arrays, runtime
 * and driver (vt_hook_table.h rows of kind ARRAY, shape HAND). Follows
 * cuda_runtime_api.h and cuda.h of CUDA 13 ("Memory Management").
 *
 * Why by hand: the kind is decided at run time. An array's record is keyed by its
 * handle (cudaArray_t and CUarray are one type, as are cudaMipmappedArray_t and
 * CUmipmappedArray, so the runtime's and the driver's frees find the same record);
 * its size is the driver's own answer (sys/vt_driver.h
 * vt_driver_array_requirements, asked once the array exists) with kind array, or,
 * when the driver gives none (a real driver answers only for arrays created with
 * CUDA_ARRAY3D_DEFERRED_MAPPING), the logical size with the flag logical_size:
 * width x max(height, 1) x max(depth, 1) x element bytes, mipmap levels summed
 * (each dimension halved per level down to 1, layers and cubemap faces not; levels
 * past the last 1x1x1 one are not counted, as the driver clamps them). A failed
 * call is counted with its code at the logical size it asked for. An array created
 * with CUDA_ARRAY3D_DEFERRED_MAPPING (cudaArrayDeferredMapping) holds no memory of its
 * own (the VMM memory mapped into it is counted as vmm): it is recorded with 0 bytes.
 *
 * The runtime's shared library creates arrays through the driver (cudaMallocArray ->
 * cuArrayCreate_v2, ...): that nested call only forwards, so one record is made
 * whichever layer the program called. The frees are FREE rows of the table. Every
 * shim returns the real result unchanged and preserves errno; when the real function
 * cannot be found it returns the family's "not initialised" code without doing
 * anything.
 */
#define _GNU_SOURCE
#include "vt_hook_table.h"
#include "vt_hooks.h"

/* Bytes of a width x height x depth array of elem-byte elements with levels levels
 * (layered: depth is layers, not halved). 0 dimensions count as 1. */
static uint64_t vt__logical_bytes(uint64_t w, uint64_t h, uint64_t d, uint64_t elem, unsigned levels,
                                  int layered)
{
    uint64_t total = 0;
    w = w ? w : 1;
    h = h ? h : 1;
    d = d ? d : 1;
    for (unsigned l = 0; l < (levels ? levels : 1) && l < 64; l++) {
        uint64_t lw = w >> l ? w >> l : 1, lh = h >> l ? h >> l : 1;
        uint64_t ld = layered ? d : (d >> l ? d >> l : 1);
        total += lw * lh * ld * elem;
        if (lw == 1 && lh == 1 && (layered || ld == 1))
            break;
    }
    return total;
}

/* Element bytes of a runtime channel descriptor: the channels' bits summed / 8. */
static uint64_t vt__elem_rt(const struct cudaChannelFormatDesc *desc)
{
    if (!desc)
        return 0;
    int bits = (desc->x > 0 ? desc->x : 0) + (desc->y > 0 ? desc->y : 0) + (desc->z > 0 ? desc->z : 0) +
               (desc->w > 0 ? desc->w : 0);
    return (uint64_t)bits / 8;
}

/* Element bytes of a driver format and channel count (formats whose channel width
 * cuda.h does not fix, such as the block-compressed ones, count 1 byte a channel). */
static uint64_t vt__elem_drv(CUarray_format f, unsigned channels)
{
    uint64_t b;
    switch (f) {
    case CU_AD_FORMAT_UNSIGNED_INT16: case CU_AD_FORMAT_SIGNED_INT16: case CU_AD_FORMAT_HALF:
        b = 2;
        break;
    case CU_AD_FORMAT_UNSIGNED_INT32: case CU_AD_FORMAT_SIGNED_INT32: case CU_AD_FORMAT_FLOAT:
        b = 4;
        break;
    default:
        b = 1;
    }
    return b * channels;
}

#define VT__LAYERED(flags) (((flags) & (CUDA_ARRAY3D_LAYERED | CUDA_ARRAY3D_CUBEMAP)) != 0)

/* After the real call of an outermost array allocation (c->rec): records handle with
 * the driver's size, or logical with the flag logical_size (0 bytes for a
 * deferred-mapping array: flags has CUDA_ARRAY3D_DEFERRED_MAPPING), or counts the
 * failure. */
static void vt__array_done(const vt_call *c, const char *api, int ok, int result, int oom, uint64_t handle,
                           int mipmapped, unsigned flags, uint64_t logical)
{
    uint64_t size = logical, req = 0, ctx;
    int kind = VT_KIND_ARRAY_LOGICAL_SIZE;
    if (ok && (flags & CUDA_ARRAY3D_DEFERRED_MAPPING)) {
        size = 0;
        kind = VT_KIND_ARRAY;
    } else if (ok && vt_driver_array_requirements(handle, mipmapped, vt_driver_device_current(&ctx), &req) == 1) {
        size = req;
        kind = VT_KIND_ARRAY;
    }
    vt_hook_alloc_done(c, api, kind, ok, result, oom, ok ? handle : 0, size, 0, VT_DEVICE_CURRENT);
}

/* The body of an array allocation shim: CALL under the depth guard with the stack
 * captured in the hook's frame; HANDLE (evaluated after a successful CALL), FLAGS
 * (the creation flags) and LOGICAL (bytes) feed vt__array_done. Result and errno are
 * CALL's. */
#define VT__ARRAY_BODY(fam, name, ret_t, CALL, HANDLE, mipmapped, FLAGS, LOGICAL)                \
    VT_REAL_OR_RETURN(name, VT_NOTREADY_##fam);                                                  \
    VT_NESTED_FORWARD(1, CALL);                                                                  \
    vt_call c;                                                                                   \
    vt_call_begin(&c, 1);                                                                        \
    ret_t r = CALL;                                                                              \
    if (c.rec) {                                                                                 \
        int e = errno;                                                                           \
        int ok = r == VT_OK_##fam;                                                               \
        vt__array_done(&c, #name, ok, (int)r, r == VT_OOM_##fam, ok ? (HANDLE) : 0, mipmapped,   \
                       (FLAGS), (LOGICAL));                                                      \
        errno = e;                                                                               \
    }                                                                                            \
    vt_call_end(&c);                                                                             \
    return r

/* ---- runtime ---- */

cudaError_t vt__h_cudaMallocArray(cudaArray_t *array, const struct cudaChannelFormatDesc *desc, size_t width,
                                  size_t height, unsigned int flags)
{
    VT__ARRAY_BODY(RT, cudaMallocArray, cudaError_t, real_cudaMallocArray(array, desc, width, height, flags),
                   (uint64_t)(uintptr_t)*array, 0, flags,
                   vt__logical_bytes(width, height, 0, vt__elem_rt(desc), 1, VT__LAYERED(flags)));
}
VT_EXPORT_ALIAS(cudaMallocArray);

cudaError_t vt__h_cudaMalloc3DArray(cudaArray_t *array, const struct cudaChannelFormatDesc *desc,
                                    struct cudaExtent extent, unsigned int flags)
{
    VT__ARRAY_BODY(RT, cudaMalloc3DArray, cudaError_t, real_cudaMalloc3DArray(array, desc, extent, flags),
                   (uint64_t)(uintptr_t)*array, 0, flags,
                   vt__logical_bytes(extent.width, extent.height, extent.depth, vt__elem_rt(desc), 1,
                                     VT__LAYERED(flags)));
}
VT_EXPORT_ALIAS(cudaMalloc3DArray);

cudaError_t vt__h_cudaMallocMipmappedArray(cudaMipmappedArray_t *mipmappedArray,
                                           const struct cudaChannelFormatDesc *desc, struct cudaExtent extent,
                                           unsigned int numLevels, unsigned int flags)
{
    VT__ARRAY_BODY(RT, cudaMallocMipmappedArray, cudaError_t,
                   real_cudaMallocMipmappedArray(mipmappedArray, desc, extent, numLevels, flags),
                   (uint64_t)(uintptr_t)*mipmappedArray, 1, flags,
                   vt__logical_bytes(extent.width, extent.height, extent.depth, vt__elem_rt(desc), numLevels,
                                     VT__LAYERED(flags)));
}
VT_EXPORT_ALIAS(cudaMallocMipmappedArray);

/* ---- driver ---- */

CUresult vt__h_cuArrayCreate_v2(CUarray *pHandle, const CUDA_ARRAY_DESCRIPTOR *pAllocateArray)
{
    const CUDA_ARRAY_DESCRIPTOR *d = pAllocateArray;
    VT__ARRAY_BODY(DRV, cuArrayCreate_v2, CUresult, real_cuArrayCreate_v2(pHandle, pAllocateArray),
                   (uint64_t)(uintptr_t)*pHandle, 0, 0,
                   d ? vt__logical_bytes(d->Width, d->Height, 0, vt__elem_drv(d->Format, d->NumChannels), 1, 0)
                     : 0);
}
VT_EXPORT_ALIAS(cuArrayCreate_v2);

CUresult vt__h_cuArray3DCreate_v2(CUarray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *pAllocateArray)
{
    const CUDA_ARRAY3D_DESCRIPTOR *d = pAllocateArray;
    VT__ARRAY_BODY(DRV, cuArray3DCreate_v2, CUresult, real_cuArray3DCreate_v2(pHandle, pAllocateArray),
                   (uint64_t)(uintptr_t)*pHandle, 0, d ? d->Flags : 0,
                   d ? vt__logical_bytes(d->Width, d->Height, d->Depth, vt__elem_drv(d->Format, d->NumChannels),
                                         1, VT__LAYERED(d->Flags))
                     : 0);
}
VT_EXPORT_ALIAS(cuArray3DCreate_v2);

CUresult vt__h_cuMipmappedArrayCreate(CUmipmappedArray *pHandle, const CUDA_ARRAY3D_DESCRIPTOR *pMipmappedArrayDesc,
                                      unsigned int numMipmapLevels)
{
    const CUDA_ARRAY3D_DESCRIPTOR *d = pMipmappedArrayDesc;
    VT__ARRAY_BODY(DRV, cuMipmappedArrayCreate, CUresult,
                   real_cuMipmappedArrayCreate(pHandle, pMipmappedArrayDesc, numMipmapLevels),
                   (uint64_t)(uintptr_t)*pHandle, 1, d ? d->Flags : 0,
                   d ? vt__logical_bytes(d->Width, d->Height, d->Depth, vt__elem_drv(d->Format, d->NumChannels),
                                         numMipmapLevels, VT__LAYERED(d->Flags))
                     : 0);
}
VT_EXPORT_ALIAS(cuMipmappedArrayCreate);
