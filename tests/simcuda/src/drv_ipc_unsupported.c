/*
 * drv_ipc_unsupported.c - legacy interprocess memory handles of the simulated
 * driver as a device without IPC support answers them (cuda.h "Interprocess
 * communication", CUDA 13.0: cuIpcGetMemHandle, cuIpcOpenMemHandle_v2,
 * cuIpcCloseMemHandle).
 *
 * Contract: the entry points exist with their real signatures (clients such as
 * Numba's ctypes binding look them up when they start) and validate their
 * arguments like the real driver; a valid request returns CUDA_ERROR_NOT_SUPPORTED,
 * which is what the real driver returns where IPC is unavailable (e.g. WSL), and
 * the device reports CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED 0.
 * This file is the placeholder for a full simulation of legacy IPC (shared backing
 * across processes); that implementation replaces it, file for file.
 * Thread safety: takes the driver lock only to find the current context.
 */
#include "drv_internal.h"

/* CUDA_SUCCESS with a live current context; the error a real call would return otherwise. */
static CUresult ipc_ctx(void)
{
    SIM_LOCK();
    struct CUctx_st *c;
    CUresult r = sim_ctx_require_locked(&c);
    SIM_UNLOCK();
    return r;
}

CUresult cuIpcGetMemHandle(CUipcMemHandle *pHandle, CUdeviceptr dptr)
{
    SIM_REQUIRE_INIT();
    if (!pHandle || !dptr)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = ipc_ctx();
    return r != CUDA_SUCCESS ? r : CUDA_ERROR_NOT_SUPPORTED;
}

CUresult cuIpcOpenMemHandle_v2(CUdeviceptr *pdptr, CUipcMemHandle handle, unsigned int Flags)
{
    (void)handle;
    SIM_REQUIRE_INIT();
    if (!pdptr || (Flags & ~(unsigned)CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS))
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = ipc_ctx();
    return r != CUDA_SUCCESS ? r : CUDA_ERROR_NOT_SUPPORTED;
}

/* Nothing can have been opened, so no pointer is an opened handle's. */
CUresult cuIpcCloseMemHandle(CUdeviceptr dptr)
{
    (void)dptr;
    SIM_REQUIRE_INIT();
    CUresult r = ipc_ctx();
    return r != CUDA_SUCCESS ? r : CUDA_ERROR_INVALID_VALUE;
}
