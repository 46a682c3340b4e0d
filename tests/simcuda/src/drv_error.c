/*
 * drv_error.c - cuGetErrorName / cuGetErrorString (cuda.h "Error Handling").
 * Names come from the CUDA 13.0 enum (sim_errors.h); descriptions for the
 * common codes match the real driver's wording, the rest fall back to the name.
 */
#include "drv_internal.h"
#include "sim_errors.h"

#include <stddef.h>

static const struct { int code; const char *name; } names[] = {
#define X(n, v) {v, #n},
    SIM_CU_RESULTS(X)
#undef X
};

static const struct { int code; const char *text; } texts[] = {
    {CUDA_SUCCESS, "no error"},
    {CUDA_ERROR_INVALID_VALUE, "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "initialization error"},
    {CUDA_ERROR_DEINITIALIZED, "driver shutting down"},
    {CUDA_ERROR_NO_DEVICE, "no CUDA-capable device is detected"},
    {CUDA_ERROR_INVALID_DEVICE, "invalid device ordinal"},
    {CUDA_ERROR_INVALID_CONTEXT, "invalid device context"},
    {CUDA_ERROR_CONTEXT_IS_DESTROYED, "context is destroyed"},
    {CUDA_ERROR_INVALID_HANDLE, "invalid resource handle"},
    {CUDA_ERROR_NOT_FOUND, "named symbol not found"},
    {CUDA_ERROR_NOT_READY, "device not ready"},
    {CUDA_ERROR_ILLEGAL_ADDRESS, "an illegal memory access was encountered"},
    {CUDA_ERROR_NOT_SUPPORTED, "operation not supported"},
    {CUDA_ERROR_NOT_PERMITTED, "operation not permitted"},
    {CUDA_ERROR_UNKNOWN, "unknown error"},
};

CUresult cuGetErrorName(CUresult error, const char **pStr)
{
    if (!pStr)
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].code == (int)error) {
            *pStr = names[i].name;
            return CUDA_SUCCESS;
        }
    *pStr = NULL;
    return CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGetErrorString(CUresult error, const char **pStr)
{
    if (!pStr)
        return CUDA_ERROR_INVALID_VALUE;
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
        if (texts[i].code == (int)error) {
            *pStr = texts[i].text;
            return CUDA_SUCCESS;
        }
    return cuGetErrorName(error, pStr);
}
