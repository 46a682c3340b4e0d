/*
 * rt_array.c - CUDA arrays, mipmapped arrays and the copies that reach them, of the
 * simulated runtime (cuda_runtime_api.h "Memory Management", CUDA 13.0).
 *
 * As in the real shared runtime, every call goes through a driver pointer from the
 * resolver (cudaArray_t is a CUarray, cudaMipmappedArray_t a CUmipmappedArray):
 *   cudaMallocArray          -> cuArrayCreate_v2 (flags 0) or cuArray3DCreate_v2
 *   cudaMalloc3DArray        -> cuArray3DCreate_v2
 *   cudaMallocMipmappedArray -> cuMipmappedArrayCreate
 *   cudaFreeArray / cudaFreeMipmappedArray -> cuArrayDestroy / cuMipmappedArrayDestroy
 *                               (NULL: nothing, cudaSuccess)
 *   cudaGetMipmappedArrayLevel -> cuMipmappedArrayGetLevel
 *   cuda[Mipmapped]ArrayGetMemoryRequirements -> cu[Mipmapped]ArrayGetMemoryRequirements
 *   cudaMemcpy2DToArray, cudaMemcpy2DFromArray, cudaMemcpyToArray,
 *   cudaMemcpyFromArray      -> cuMemcpy2D_v2
 *   cudaMemcpy3D             -> cuMemcpy3D_v2 (array positions and extents in elements)
 *   cudaArrayGetInfo         -> cuArray3DGetDescriptor_v2
 * Offsets and widths of the 2D and linear array copies are bytes. The pointer side's
 * memory type comes from the cudaMemcpyKind (cudaMemcpyDefault: unified); a kind that
 * cannot name it is cudaErrorInvalidMemcpyDirection. A channel descriptor the device
 * does not take (3 channels, unequal widths, other kinds) is cudaErrorInvalidValue.
 */
#include "rt_internal.h"

#include <string.h>

#define RT_CTX_OR_RETURN()               \
    do {                                 \
        cudaError_t e_ = rt_ctx();       \
        if (e_ != cudaSuccess)           \
            return e_;                   \
    } while (0)

int rt_channel_format(const struct cudaChannelFormatDesc *d, CUarray_format *fmt, unsigned *channels)
{
    int bits[4] = {d->x, d->y, d->z, d->w};
    unsigned n = 0;
    while (n < 4 && bits[n] > 0)
        n++;
    if (n == 0 || n == 3)
        return -1;
    for (unsigned i = 0; i < 4; i++)
        if (i < n ? bits[i] != bits[0] : bits[i] != 0)
            return -1;
    switch (d->f) {
    case cudaChannelFormatKindSigned:
        *fmt = bits[0] == 8 ? CU_AD_FORMAT_SIGNED_INT8 : bits[0] == 16 ? CU_AD_FORMAT_SIGNED_INT16
             : bits[0] == 32 ? CU_AD_FORMAT_SIGNED_INT32 : (CUarray_format)0;
        break;
    case cudaChannelFormatKindUnsigned:
        *fmt = bits[0] == 8 ? CU_AD_FORMAT_UNSIGNED_INT8 : bits[0] == 16 ? CU_AD_FORMAT_UNSIGNED_INT16
             : bits[0] == 32 ? CU_AD_FORMAT_UNSIGNED_INT32 : (CUarray_format)0;
        break;
    case cudaChannelFormatKindFloat:
        *fmt = bits[0] == 16 ? CU_AD_FORMAT_HALF : bits[0] == 32 ? CU_AD_FORMAT_FLOAT : (CUarray_format)0;
        break;
    default:
        return -1;
    }
    if (*fmt == 0)
        return -1;
    *channels = n;
    return 0;
}

/* A driver 3D descriptor from the runtime's; -1 for a channel descriptor not taken. */
static int desc3d(const struct cudaChannelFormatDesc *cd, size_t w, size_t h, size_t d, unsigned flags,
                  CUDA_ARRAY3D_DESCRIPTOR *out)
{
    memset(out, 0, sizeof *out);
    out->Width = w;
    out->Height = h;
    out->Depth = d;
    out->Flags = flags; /* cudaArray* flag values are the CUDA_ARRAY3D_* values */
    return rt_channel_format(cd, &out->Format, &out->NumChannels);
}

cudaError_t cudaMallocArray(cudaArray_t *array, const struct cudaChannelFormatDesc *desc, size_t width,
                            size_t height, unsigned int flags)
{
    CUDA_ARRAY3D_DESCRIPTOR d;
    if (!array || !desc || desc3d(desc, width, height, 0, flags, &d) != 0)
        return rt_ret(cudaErrorInvalidValue);
    RT_CTX_OR_RETURN();
    CUarray a = NULL;
    CUresult r;
    if (flags == 0) {
        CUDA_ARRAY_DESCRIPTOR d2 = {width, height, d.Format, d.NumChannels};
        r = rt_drv.cuArrayCreate(&a, &d2);
    } else {
        r = rt_drv.cuArray3DCreate(&a, &d);
    }
    if (r == CUDA_SUCCESS)
        *array = (cudaArray_t)a;
    return rt_ret_cu(r);
}

cudaError_t cudaMalloc3DArray(cudaArray_t *array, const struct cudaChannelFormatDesc *desc,
                              struct cudaExtent extent, unsigned int flags)
{
    CUDA_ARRAY3D_DESCRIPTOR d;
    if (!array || !desc || desc3d(desc, extent.width, extent.height, extent.depth, flags, &d) != 0)
        return rt_ret(cudaErrorInvalidValue);
    RT_CTX_OR_RETURN();
    CUarray a = NULL;
    CUresult r = rt_drv.cuArray3DCreate(&a, &d);
    if (r == CUDA_SUCCESS)
        *array = (cudaArray_t)a;
    return rt_ret_cu(r);
}

cudaError_t cudaMallocMipmappedArray(cudaMipmappedArray_t *mipmappedArray, const struct cudaChannelFormatDesc *desc,
                                     struct cudaExtent extent, unsigned int numLevels, unsigned int flags)
{
    CUDA_ARRAY3D_DESCRIPTOR d;
    if (!mipmappedArray || !desc || desc3d(desc, extent.width, extent.height, extent.depth, flags, &d) != 0)
        return rt_ret(cudaErrorInvalidValue);
    RT_CTX_OR_RETURN();
    CUmipmappedArray m = NULL;
    CUresult r = rt_drv.cuMipmappedArrayCreate(&m, &d, numLevels);
    if (r == CUDA_SUCCESS)
        *mipmappedArray = (cudaMipmappedArray_t)m;
    return rt_ret_cu(r);
}

cudaError_t cudaFreeArray(cudaArray_t array)
{
    RT_CTX_OR_RETURN();
    if (!array)
        return cudaSuccess;
    return rt_ret_cu(rt_drv.cuArrayDestroy((CUarray)array));
}

cudaError_t cudaFreeMipmappedArray(cudaMipmappedArray_t mipmappedArray)
{
    RT_CTX_OR_RETURN();
    if (!mipmappedArray)
        return cudaSuccess;
    return rt_ret_cu(rt_drv.cuMipmappedArrayDestroy((CUmipmappedArray)mipmappedArray));
}

cudaError_t cudaGetMipmappedArrayLevel(cudaArray_t *levelArray, cudaMipmappedArray_const_t mipmappedArray,
                                       unsigned int level)
{
    if (!levelArray)
        return rt_ret(cudaErrorInvalidValue);
    RT_CTX_OR_RETURN();
    CUarray a = NULL;
    CUresult r = rt_drv.cuMipmappedArrayGetLevel(&a, (CUmipmappedArray)mipmappedArray, level);
    if (r == CUDA_SUCCESS)
        *levelArray = (cudaArray_t)a;
    return rt_ret_cu(r);
}

static cudaError_t requirements(struct cudaArrayMemoryRequirements *req, const void *h, int mip, int device)
{
    if (!req)
        return rt_ret(cudaErrorInvalidValue);
    RT_CTX_OR_RETURN();
    CUDA_ARRAY_MEMORY_REQUIREMENTS q;
    CUresult r = mip ? rt_drv.cuMipmappedArrayGetMemoryRequirements(&q, (CUmipmappedArray)h, device)
                     : rt_drv.cuArrayGetMemoryRequirements(&q, (CUarray)h, device);
    if (r == CUDA_SUCCESS) {
        memset(req, 0, sizeof *req);
        req->size = q.size;
        req->alignment = q.alignment;
    }
    return rt_ret_cu(r);
}

cudaError_t cudaArrayGetMemoryRequirements(struct cudaArrayMemoryRequirements *memoryRequirements,
                                           cudaArray_t array, int device)
{
    return requirements(memoryRequirements, array, 0, device);
}

cudaError_t cudaMipmappedArrayGetMemoryRequirements(struct cudaArrayMemoryRequirements *memoryRequirements,
                                                    cudaMipmappedArray_t mipmap, int device)
{
    return requirements(memoryRequirements, mipmap, 1, device);
}

/* ---- copies ---- */

/* The memory type of the pointer side of a copy: the source (src = 1) or the
 * destination of kind. 0 when kind cannot name it. */
static CUmemorytype ptr_type(enum cudaMemcpyKind kind, int src)
{
    switch (kind) {
    case cudaMemcpyHostToHost: return CU_MEMORYTYPE_HOST;
    case cudaMemcpyHostToDevice: return src ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
    case cudaMemcpyDeviceToHost: return src ? CU_MEMORYTYPE_DEVICE : CU_MEMORYTYPE_HOST;
    case cudaMemcpyDeviceToDevice: return CU_MEMORYTYPE_DEVICE;
    case cudaMemcpyDefault: return CU_MEMORYTYPE_UNIFIED;
    default: return (CUmemorytype)0;
    }
}

/* The pointer side of a copy descriptor: host memory in *host, anything else as a
 * device (or unified) address in *dev. */
#define SET_PTR(t, p, host, dev)                     \
    do {                                             \
        if ((t) == CU_MEMORYTYPE_HOST)               \
            (host) = (void *)(uintptr_t)(p);         \
        else                                         \
            (dev) = (CUdeviceptr)(uintptr_t)(p);     \
    } while (0)

/* width x height bytes between an array (at wOffset bytes, hOffset rows) and memory
 * at p with pitch; to_array says which way. */
static cudaError_t array2d(CUarray a, size_t wOffset, size_t hOffset, const void *p, size_t pitch, size_t width,
                           size_t height, enum cudaMemcpyKind kind, int to_array)
{
    RT_CTX_OR_RETURN();
    CUmemorytype t = ptr_type(kind, to_array);
    if (!t || (to_array ? kind == cudaMemcpyDeviceToHost : kind == cudaMemcpyHostToDevice))
        return rt_ret(cudaErrorInvalidMemcpyDirection);
    CUDA_MEMCPY2D c;
    memset(&c, 0, sizeof c);
    c.WidthInBytes = width;
    c.Height = height;
    if (to_array) {
        c.srcMemoryType = t;
        SET_PTR(t, p, c.srcHost, c.srcDevice);
        c.srcPitch = pitch;
        c.dstMemoryType = CU_MEMORYTYPE_ARRAY;
        c.dstArray = a;
        c.dstXInBytes = wOffset;
        c.dstY = hOffset;
    } else {
        c.dstMemoryType = t;
        SET_PTR(t, p, c.dstHost, c.dstDevice);
        c.dstPitch = pitch;
        c.srcMemoryType = CU_MEMORYTYPE_ARRAY;
        c.srcArray = a;
        c.srcXInBytes = wOffset;
        c.srcY = hOffset;
    }
    return rt_ret_cu(rt_drv.cuMemcpy2D(&c));
}

cudaError_t cudaMemcpy2DToArray(cudaArray_t dst, size_t wOffset, size_t hOffset, const void *src, size_t spitch,
                                size_t width, size_t height, enum cudaMemcpyKind kind)
{
    return array2d((CUarray)dst, wOffset, hOffset, src, spitch, width, height, kind, 1);
}

cudaError_t cudaMemcpy2DFromArray(void *dst, size_t dpitch, cudaArray_const_t src, size_t wOffset, size_t hOffset,
                                  size_t width, size_t height, enum cudaMemcpyKind kind)
{
    return array2d((CUarray)src, wOffset, hOffset, dst, dpitch, width, height, kind, 0);
}

/* Bytes per element and row bytes of array a; -1 when it is not a live array. */
static CUresult array_row(CUarray a, size_t *elem, size_t *row)
{
    CUDA_ARRAY3D_DESCRIPTOR d;
    CUresult r = rt_drv.cuArray3DGetDescriptor(&d, a);
    if (r != CUDA_SUCCESS)
        return r;
    size_t fb = (d.Format == CU_AD_FORMAT_UNSIGNED_INT8 || d.Format == CU_AD_FORMAT_SIGNED_INT8) ? 1
              : (d.Format == CU_AD_FORMAT_UNSIGNED_INT16 || d.Format == CU_AD_FORMAT_SIGNED_INT16 ||
                 d.Format == CU_AD_FORMAT_HALF) ? 2 : 4;
    *elem = fb * d.NumChannels;
    *row = d.Width * *elem;
    return CUDA_SUCCESS;
}

/* count bytes laid out row after row from (wOffset, hOffset) of array a: a partial
 * first row, whole rows, a partial last row. */
static cudaError_t array_linear(CUarray a, size_t wOffset, size_t hOffset, const void *p, size_t count,
                                enum cudaMemcpyKind kind, int to_array)
{
    RT_CTX_OR_RETURN();
    size_t elem, row;
    CUresult r = array_row(a, &elem, &row);
    if (r != CUDA_SUCCESS)
        return rt_ret_cu(r);
    if (wOffset > row)
        return rt_ret(cudaErrorInvalidValue);
    const char *q = p;
    while (count) {
        size_t w = row - wOffset < count ? row - wOffset : count;
        size_t h = 1;
        if (wOffset == 0 && count >= 2 * row) {
            h = count / row;
            w = row;
        }
        cudaError_t e = array2d(a, wOffset, hOffset, q, w, w, h, kind, to_array);
        if (e != cudaSuccess)
            return e;
        q += w * h;
        count -= w * h;
        wOffset = 0;
        hOffset += h;
    }
    return cudaSuccess;
}

cudaError_t cudaMemcpyToArray(cudaArray_t dst, size_t wOffset, size_t hOffset, const void *src, size_t count,
                              enum cudaMemcpyKind kind)
{
    return array_linear((CUarray)dst, wOffset, hOffset, src, count, kind, 1);
}

cudaError_t cudaMemcpyFromArray(void *dst, cudaArray_const_t src, size_t wOffset, size_t hOffset, size_t count,
                                enum cudaMemcpyKind kind)
{
    return array_linear((CUarray)src, wOffset, hOffset, dst, count, kind, 0);
}

cudaError_t cudaMemcpy3D(const struct cudaMemcpy3DParms *p)
{
    if (!p)
        return rt_ret(cudaErrorInvalidValue);
    RT_CTX_OR_RETURN();
    size_t elem = 1, row;
    if (p->srcArray || p->dstArray) {
        CUresult r = array_row((CUarray)(p->srcArray ? p->srcArray : p->dstArray), &elem, &row);
        if (r != CUDA_SUCCESS)
            return rt_ret_cu(r);
    }
    CUDA_MEMCPY3D c;
    memset(&c, 0, sizeof c);
    c.WidthInBytes = p->extent.width * elem;
    c.Height = p->extent.height;
    c.Depth = p->extent.depth;
    if (p->srcArray) {
        c.srcMemoryType = CU_MEMORYTYPE_ARRAY;
        c.srcArray = (CUarray)p->srcArray;
        c.srcXInBytes = p->srcPos.x * elem;
    } else {
        c.srcMemoryType = ptr_type(p->kind, 1);
        SET_PTR(c.srcMemoryType, p->srcPtr.ptr, c.srcHost, c.srcDevice);
        c.srcPitch = p->srcPtr.pitch;
        c.srcHeight = p->srcPtr.ysize;
        c.srcXInBytes = p->srcPos.x;
    }
    c.srcY = p->srcPos.y;
    c.srcZ = p->srcPos.z;
    if (p->dstArray) {
        c.dstMemoryType = CU_MEMORYTYPE_ARRAY;
        c.dstArray = (CUarray)p->dstArray;
        c.dstXInBytes = p->dstPos.x * elem;
    } else {
        c.dstMemoryType = ptr_type(p->kind, 0);
        SET_PTR(c.dstMemoryType, p->dstPtr.ptr, c.dstHost, c.dstDevice);
        c.dstPitch = p->dstPtr.pitch;
        c.dstHeight = p->dstPtr.ysize;
        c.dstXInBytes = p->dstPos.x;
    }
    c.dstY = p->dstPos.y;
    c.dstZ = p->dstPos.z;
    if ((!p->srcArray && !c.srcMemoryType) || (!p->dstArray && !c.dstMemoryType))
        return rt_ret(cudaErrorInvalidMemcpyDirection);
    return rt_ret_cu(rt_drv.cuMemcpy3D(&c));
}

/* cudaArrayGetInfo -> cuArray3DGetDescriptor_v2: the channel descriptor, extent (0
 * for dimensions the array does not have) and flags it was created with; any
 * out-parameter may be NULL. */
cudaError_t cudaArrayGetInfo(struct cudaChannelFormatDesc *desc, struct cudaExtent *extent, unsigned int *flags,
                             cudaArray_t array)
{
    RT_CTX_OR_RETURN();
    CUDA_ARRAY3D_DESCRIPTOR d;
    CUresult r = rt_drv.cuArray3DGetDescriptor(&d, (CUarray)array);
    if (r != CUDA_SUCCESS)
        return rt_ret_cu(r);
    if (desc) {
        int bits = 32;
        enum cudaChannelFormatKind k = cudaChannelFormatKindFloat;
        switch (d.Format) {
        case CU_AD_FORMAT_UNSIGNED_INT8: bits = 8; k = cudaChannelFormatKindUnsigned; break;
        case CU_AD_FORMAT_UNSIGNED_INT16: bits = 16; k = cudaChannelFormatKindUnsigned; break;
        case CU_AD_FORMAT_UNSIGNED_INT32: bits = 32; k = cudaChannelFormatKindUnsigned; break;
        case CU_AD_FORMAT_SIGNED_INT8: bits = 8; k = cudaChannelFormatKindSigned; break;
        case CU_AD_FORMAT_SIGNED_INT16: bits = 16; k = cudaChannelFormatKindSigned; break;
        case CU_AD_FORMAT_SIGNED_INT32: bits = 32; k = cudaChannelFormatKindSigned; break;
        case CU_AD_FORMAT_HALF: bits = 16; break;
        default: break;
        }
        desc->x = bits;
        desc->y = d.NumChannels > 1 ? bits : 0;
        desc->z = d.NumChannels > 2 ? bits : 0;
        desc->w = d.NumChannels > 3 ? bits : 0;
        desc->f = k;
    }
    if (extent) {
        extent->width = d.Width;
        extent->height = d.Height;
        extent->depth = d.Depth;
    }
    if (flags)
        *flags = d.Flags;
    return cudaSuccess;
}
