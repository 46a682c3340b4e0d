/*
 * rt_entry.c - cudaGetDriverEntryPoint / cudaGetDriverEntryPointByVersion and
 * their _ptsz exports (cuda_runtime_api.h "Driver Entry Point Access").
 *
 * Like the real runtime these are served by the cuGetProcAddress pointer the
 * runtime obtained from the resolver's self-lookup (an interposer that wraps
 * that self-lookup therefore sees these requests too). cudaGetDriverEntryPoint
 * asks for CUDART_VERSION (13000). cudaEnableDefault maps to the legacy stream
 * in the plain exports and to the per-thread stream in the _ptsz exports.
 * An unknown symbol returns cudaSuccess with *funcPtr = NULL and
 * *driverStatus = cudaDriverEntryPointSymbolNotFound.
 */
#include "rt_internal.h"

static cudaError_t entry(const char *symbol, void **funcPtr, unsigned int version, unsigned long long flags,
                         enum cudaDriverEntryPointQueryResult *status, int ptsz)
{
    if (!symbol || !funcPtr)
        return rt_ret(cudaErrorInvalidValue);
    cudaError_t e = rt_begin();
    if (e != cudaSuccess)
        return e;
    cuuint64_t f;
    if (flags == cudaEnableDefault)
        f = ptsz ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM : CU_GET_PROC_ADDRESS_DEFAULT;
    else if (flags == cudaEnableLegacyStream)
        f = CU_GET_PROC_ADDRESS_LEGACY_STREAM;
    else if (flags == cudaEnablePerThreadDefaultStream)
        f = CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
    else
        return rt_ret(cudaErrorInvalidValue);
    CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    CUresult r = rt_drv.cuGetProcAddress(symbol, funcPtr, (int)version, f, &st);
    if (status)
        *status = (enum cudaDriverEntryPointQueryResult)st; /* same values */
    return rt_ret_cu(r);
}

cudaError_t cudaGetDriverEntryPoint(const char *symbol, void **funcPtr, unsigned long long flags,
                                    enum cudaDriverEntryPointQueryResult *driverStatus)
{
    return entry(symbol, funcPtr, CUDART_VERSION, flags, driverStatus, 0);
}
cudaError_t cudaGetDriverEntryPoint_ptsz(const char *symbol, void **funcPtr, unsigned long long flags,
                                         enum cudaDriverEntryPointQueryResult *driverStatus)
{
    return entry(symbol, funcPtr, CUDART_VERSION, flags, driverStatus, 1);
}
cudaError_t cudaGetDriverEntryPointByVersion(const char *symbol, void **funcPtr, unsigned int cudaVersion,
                                             unsigned long long flags,
                                             enum cudaDriverEntryPointQueryResult *driverStatus)
{
    return entry(symbol, funcPtr, cudaVersion, flags, driverStatus, 0);
}
cudaError_t cudaGetDriverEntryPointByVersion_ptsz(const char *symbol, void **funcPtr, unsigned int cudaVersion,
                                                  unsigned long long flags,
                                                  enum cudaDriverEntryPointQueryResult *driverStatus)
{
    return entry(symbol, funcPtr, cudaVersion, flags, driverStatus, 1);
}
