/*
 * rt_texture.c - channel descriptors, texture objects and surface objects of the
 * simulated runtime (cuda_runtime_api.h "Texture Object Management", "Surface Object
 * Management", CUDA 13.0):
 *   cudaCreateChannelDesc      builds the descriptor (no device work)
 *   cudaCreateTextureObject    -> cuTexObjectCreate   cudaDestroyTextureObject -> cuTexObjectDestroy
 *   cudaCreateSurfaceObject    -> cuSurfObjectCreate  cudaDestroySurfaceObject -> cuSurfObjectDestroy
 * The runtime's resource and texture descriptors are converted to the driver's
 * (array handles are the same; linear and pitch-2D channel descriptors become a
 * format and channel count, rt_channel_format). NULL descriptors, a channel
 * descriptor not taken and unknown resource types are cudaErrorInvalidValue.
 */
#include "rt_internal.h"

#include <string.h>

#define RT_CTX_OR_RETURN()               \
    do {                                 \
        cudaError_t e_ = rt_ctx();       \
        if (e_ != cudaSuccess)           \
            return e_;                   \
    } while (0)

struct cudaChannelFormatDesc cudaCreateChannelDesc(int x, int y, int z, int w, enum cudaChannelFormatKind f)
{
    struct cudaChannelFormatDesc d = {x, y, z, w, f};
    return d;
}

/* The driver's resource descriptor of r; -1 when it cannot be converted. */
static int resource(const struct cudaResourceDesc *r, CUDA_RESOURCE_DESC *out)
{
    memset(out, 0, sizeof *out);
    out->flags = r->flags;
    switch (r->resType) {
    case cudaResourceTypeArray:
        out->resType = CU_RESOURCE_TYPE_ARRAY;
        out->res.array.hArray = (CUarray)r->res.array.array;
        return 0;
    case cudaResourceTypeMipmappedArray:
        out->resType = CU_RESOURCE_TYPE_MIPMAPPED_ARRAY;
        out->res.mipmap.hMipmappedArray = (CUmipmappedArray)r->res.mipmap.mipmap;
        return 0;
    case cudaResourceTypeLinear:
        out->resType = CU_RESOURCE_TYPE_LINEAR;
        out->res.linear.devPtr = (CUdeviceptr)(uintptr_t)r->res.linear.devPtr;
        out->res.linear.sizeInBytes = r->res.linear.sizeInBytes;
        return rt_channel_format(&r->res.linear.desc, &out->res.linear.format, &out->res.linear.numChannels);
    case cudaResourceTypePitch2D:
        out->resType = CU_RESOURCE_TYPE_PITCH2D;
        out->res.pitch2D.devPtr = (CUdeviceptr)(uintptr_t)r->res.pitch2D.devPtr;
        out->res.pitch2D.width = r->res.pitch2D.width;
        out->res.pitch2D.height = r->res.pitch2D.height;
        out->res.pitch2D.pitchInBytes = r->res.pitch2D.pitchInBytes;
        return rt_channel_format(&r->res.pitch2D.desc, &out->res.pitch2D.format, &out->res.pitch2D.numChannels);
    default:
        return -1;
    }
}

cudaError_t cudaCreateTextureObject(cudaTextureObject_t *pTexObject, const struct cudaResourceDesc *pResDesc,
                                    const struct cudaTextureDesc *pTexDesc,
                                    const struct cudaResourceViewDesc *pResViewDesc)
{
    CUDA_RESOURCE_DESC res;
    if (!pTexObject || !pResDesc || !pTexDesc || resource(pResDesc, &res) != 0)
        return rt_ret(cudaErrorInvalidValue);
    RT_CTX_OR_RETURN();
    CUDA_TEXTURE_DESC tex;
    memset(&tex, 0, sizeof tex);
    for (int i = 0; i < 3; i++)
        tex.addressMode[i] = (CUaddress_mode)pTexDesc->addressMode[i]; /* same values */
    tex.filterMode = (CUfilter_mode)pTexDesc->filterMode;
    tex.mipmapFilterMode = (CUfilter_mode)pTexDesc->mipmapFilterMode;
    tex.flags = (pTexDesc->readMode == cudaReadModeElementType ? CU_TRSF_READ_AS_INTEGER : 0) |
                (pTexDesc->normalizedCoords ? CU_TRSF_NORMALIZED_COORDINATES : 0) |
                (pTexDesc->sRGB ? CU_TRSF_SRGB : 0) |
                (pTexDesc->seamlessCubemap ? CU_TRSF_SEAMLESS_CUBEMAP : 0);
    tex.maxAnisotropy = pTexDesc->maxAnisotropy;
    tex.mipmapLevelBias = pTexDesc->mipmapLevelBias;
    tex.minMipmapLevelClamp = pTexDesc->minMipmapLevelClamp;
    tex.maxMipmapLevelClamp = pTexDesc->maxMipmapLevelClamp;
    memcpy(tex.borderColor, pTexDesc->borderColor, sizeof tex.borderColor);
    CUDA_RESOURCE_VIEW_DESC view;
    if (pResViewDesc) {
        memset(&view, 0, sizeof view);
        view.format = (CUresourceViewFormat)pResViewDesc->format; /* same values */
        view.width = pResViewDesc->width;
        view.height = pResViewDesc->height;
        view.depth = pResViewDesc->depth;
        view.firstMipmapLevel = pResViewDesc->firstMipmapLevel;
        view.lastMipmapLevel = pResViewDesc->lastMipmapLevel;
        view.firstLayer = pResViewDesc->firstLayer;
        view.lastLayer = pResViewDesc->lastLayer;
    }
    CUtexObject t = 0;
    CUresult r = rt_drv.cuTexObjectCreate(&t, &res, &tex, pResViewDesc ? &view : NULL);
    if (r == CUDA_SUCCESS)
        *pTexObject = t;
    return rt_ret_cu(r);
}

cudaError_t cudaDestroyTextureObject(cudaTextureObject_t texObject)
{
    RT_CTX_OR_RETURN();
    return rt_ret_cu(rt_drv.cuTexObjectDestroy(texObject));
}

cudaError_t cudaCreateSurfaceObject(cudaSurfaceObject_t *pSurfObject, const struct cudaResourceDesc *pResDesc)
{
    CUDA_RESOURCE_DESC res;
    if (!pSurfObject || !pResDesc || resource(pResDesc, &res) != 0)
        return rt_ret(cudaErrorInvalidValue);
    RT_CTX_OR_RETURN();
    CUsurfObject s = 0;
    CUresult r = rt_drv.cuSurfObjectCreate(&s, &res);
    if (r == CUDA_SUCCESS)
        *pSurfObject = s;
    return rt_ret_cu(r);
}

cudaError_t cudaDestroySurfaceObject(cudaSurfaceObject_t surfObject)
{
    RT_CTX_OR_RETURN();
    return rt_ret_cu(rt_drv.cuSurfObjectDestroy(surfObject));
}
