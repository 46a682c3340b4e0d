/*
 * drv_module.c - modules, functions and the JIT linker of the simulated driver
 * (cuda.h "Module Management" and "Execution Control", CUDA 13.0):
 * cuModuleLoadData, cuModuleLoadDataEx, cuModuleUnload, cuModuleGetFunction,
 * cuModuleGetGlobal_v2, cuLinkCreate_v2, cuLinkAddData_v2, cuLinkAddFile_v2,
 * cuLinkComplete, cuLinkDestroy, cuFuncGetAttribute, cuFuncSetCacheConfig, the
 * occupancy calculator (cuOccupancyMaxActiveBlocksPerMultiprocessor[WithFlags],
 * cuOccupancyMaxPotentialBlockSize[WithFlags]), cuLaunchCooperativeKernel[_ptsz], and
 * the deprecated cuDeviceComputeCapability that ctypes clients still look up.
 *
 * Contract: kernels do nothing on the simulated device, so nothing is compiled.
 *   - An image is a cubin (ELF magic), a fatbin (0xBA55ED50 or the 0x466243B1
 *     wrapper magic) or NUL-terminated PTX text (it must contain ".version" and
 *     ".target"; anything else: CUDA_ERROR_INVALID_IMAGE). A module keeps a copy of
 *     PTX text and answers cuModuleGetFunction for the names its ".entry"
 *     directives declare (others: CUDA_ERROR_NOT_FOUND); a binary image cannot be
 *     read, so any name is accepted. Modules own no device memory: global and
 *     constant variables have no storage, cuModuleGetGlobal_v2 returns
 *     CUDA_ERROR_NOT_FOUND.
 *   - A link state gathers its inputs; cuLinkComplete hands back an image that
 *     cuModuleLoadDataEx accepts: the concatenated PTX text when every input was
 *     PTX, an ELF-magic blob otherwise. The image belongs to the state and stays
 *     valid until cuLinkDestroy (cuda.h). CU_JIT_INPUT_NVVM (LTO-IR) is
 *     CUDA_ERROR_NOT_SUPPORTED; a missing file CUDA_ERROR_FILE_NOT_FOUND.
 *   - Modules and link states belong to the context current at creation and
 *     need it (or any live context) current; unknown or unloaded handles return
 *     CUDA_ERROR_INVALID_HANDLE. Function handles are freed with their module.
 *   - Options (CUjit_option arrays) are accepted and ignored; log buffers are
 *     left untouched.
 *   - Every function uses no registers, no static shared, constant or local memory
 *     (cuFuncGetAttribute), so occupancy is bounded by threads and blocks per SM
 *     (2048, 32) and by dynamic shared memory (SIM_SMEM_PER_SM bytes per SM).
 *     A cooperative launch is accepted like cuLaunchKernel when its grid fits
 *     co-resident on the 132 SMs, else CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE.
 * Thread safety: all state is guarded by sim_drv.lock.
 */
#include "drv_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SIM_SMS            132      /* CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT */
#define SIM_THREADS_PER_SM 2048     /* CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR */
#define SIM_BLOCKS_PER_SM  32       /* CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR */
#define SIM_SMEM_PER_SM    233472   /* CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR */
#define SIM_SMEM_PER_BLOCK 232448   /* CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN */

enum { SIM_MAGIC_MODULE = 0x4d4f4431u, SIM_MAGIC_FUNC = 0x464e4331u, SIM_MAGIC_LINK = 0x4c4e4b31u };

struct CUfunc_st {
    uint32_t magic;
    struct CUmod_st *mod;
    char *name;
    struct CUfunc_st *next;   /* the module's functions */
};

struct CUmod_st {
    uint32_t magic;
    struct CUctx_st *ctx;
    char *ptx;                /* copy of PTX text, or NULL for a binary image */
    struct CUfunc_st *funcs;
    struct CUmod_st *next;    /* live modules */
};

struct CUlinkState_st {
    uint32_t magic;
    struct CUctx_st *ctx;
    char  *ptx;               /* concatenated PTX inputs, NUL-terminated */
    size_t ptx_len;
    int    inputs;            /* inputs added */
    int    binary;            /* an input was not PTX */
    struct CUlinkState_st *next;
};

static struct CUmod_st *modules;          /* guarded by sim_drv.lock */
static struct CUlinkState_st *links;      /* guarded by sim_drv.lock */

/* The image cuLinkComplete returns when an input was binary: ELF magic, nothing more. */
static const unsigned char opaque_elf[16] = {0x7f, 'E', 'L', 'F', 2, 1, 1};

/* Magic checks compare byte by byte and stop at the first mismatch, so a short
 * NUL-terminated PTX string is never read past its end. */
static int has_magic(const void *p, const unsigned char *m, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        if (b[i] != m[i])
            return 0;
    return 1;
}

static int is_elf(const void *p)
{
    static const unsigned char m[4] = {0x7f, 'E', 'L', 'F'};
    return has_magic(p, m, 4);
}

static int is_fatbin(const void *p)   /* 0xBA55ED50 or 0x466243B1, little-endian */
{
    static const unsigned char fat[4] = {0x50, 0xED, 0x55, 0xBA}, wrap[4] = {0xB1, 0x43, 0x62, 0x46};
    return has_magic(p, fat, 4) || has_magic(p, wrap, 4);
}

static int is_ptx(const char *s) { return strstr(s, ".version") && strstr(s, ".target"); }

/* Does PTX text declare ".entry <name>" (followed by a blank or '(')? */
static int ptx_has_entry(const char *ptx, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = strstr(ptx, ".entry"); p; p = strstr(p + 6, ".entry")) {
        const char *q = p + 6;
        while (*q == ' ' || *q == '\t')
            q++;
        if (strncmp(q, name, n) == 0 && (q[n] == '(' || q[n] == ' ' || q[n] == '\t' ||
                                         q[n] == '\n' || q[n] == '\r'))
            return 1;
    }
    return 0;
}

static struct CUmod_st *module_find_locked(CUmodule m)
{
    for (struct CUmod_st *x = modules; x; x = x->next)
        if (x == m && x->magic == SIM_MAGIC_MODULE)
            return x;
    return NULL;
}

static struct CUfunc_st *func_find_locked(CUfunction f)
{
    for (struct CUmod_st *x = modules; x; x = x->next)
        for (struct CUfunc_st *g = x->funcs; g; g = g->next)
            if (g == f)
                return g;
    return NULL;
}

static struct CUlinkState_st *link_find_locked(CUlinkState s)
{
    for (struct CUlinkState_st *x = links; x; x = x->next)
        if (x == s)
            return x;
    return NULL;
}

CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int numOptions,
                            CUjit_option *options, void **optionValues)
{
    SIM_REQUIRE_INIT();
    if (!module || !image || (numOptions && (!options || !optionValues)))
        return CUDA_ERROR_INVALID_VALUE;
    int binary = is_elf(image) || is_fatbin(image);
    if (!binary && !is_ptx(image))
        return CUDA_ERROR_INVALID_IMAGE;
    SIM_LOCK();
    struct CUctx_st *c;
    CUresult r = sim_ctx_require_locked(&c);
    if (r == CUDA_SUCCESS) {
        struct CUmod_st *m = calloc(1, sizeof *m);
        char *ptx = binary ? NULL : strdup(image);
        if (!m || (!binary && !ptx)) {
            free(m);
            free(ptx);
            r = CUDA_ERROR_OUT_OF_MEMORY;
        } else {
            m->magic = SIM_MAGIC_MODULE;
            m->ctx = c;
            m->ptx = ptx;
            m->next = modules;
            modules = m;
            *module = m;
        }
    }
    SIM_UNLOCK();
    return r;
}

CUresult cuModuleLoadData(CUmodule *module, const void *image)
{
    return cuModuleLoadDataEx(module, image, 0, NULL, NULL);
}

CUresult cuModuleUnload(CUmodule hmod)
{
    SIM_REQUIRE_INIT();
    SIM_LOCK();
    CUresult r = CUDA_ERROR_INVALID_HANDLE;
    for (struct CUmod_st **pp = &modules; *pp; pp = &(*pp)->next)
        if (*pp == hmod) {
            struct CUmod_st *m = *pp;
            *pp = m->next;
            while (m->funcs) {
                struct CUfunc_st *f = m->funcs;
                m->funcs = f->next;
                free(f->name);
                free(f);
            }
            free(m->ptx);
            m->magic = 0;
            free(m);
            r = CUDA_SUCCESS;
            break;
        }
    SIM_UNLOCK();
    return r;
}

CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
{
    SIM_REQUIRE_INIT();
    if (!hfunc || !name)
        return CUDA_ERROR_INVALID_VALUE;
    SIM_LOCK();
    struct CUmod_st *m = module_find_locked(hmod);
    CUresult r = CUDA_ERROR_INVALID_HANDLE;
    if (m) {
        r = CUDA_SUCCESS;
        struct CUfunc_st *f = NULL;
        for (f = m->funcs; f && strcmp(f->name, name) != 0; f = f->next)
            ;
        if (!f && m->ptx && !ptx_has_entry(m->ptx, name))
            r = CUDA_ERROR_NOT_FOUND;
        else if (!f) {
            f = calloc(1, sizeof *f);
            char *nm = strdup(name);
            if (!f || !nm) {
                free(f);
                free(nm);
                r = CUDA_ERROR_OUT_OF_MEMORY;
                f = NULL;
            } else {
                f->magic = SIM_MAGIC_FUNC;
                f->mod = m;
                f->name = nm;
                f->next = m->funcs;
                m->funcs = f;
            }
        }
        if (f)
            *hfunc = f;
    }
    SIM_UNLOCK();
    return r;
}

CUresult cuModuleGetGlobal_v2(CUdeviceptr *dptr, size_t *bytes, CUmodule hmod, const char *name)
{
    (void)dptr; (void)bytes;
    SIM_REQUIRE_INIT();
    if (!name)
        return CUDA_ERROR_INVALID_VALUE;
    SIM_LOCK();
    CUresult r = module_find_locked(hmod) ? CUDA_ERROR_NOT_FOUND : CUDA_ERROR_INVALID_HANDLE;
    SIM_UNLOCK();
    return r;
}

CUresult cuFuncGetAttribute(int *pi, CUfunction_attribute attrib, CUfunction hfunc)
{
    SIM_REQUIRE_INIT();
    if (!pi || attrib < 0 || attrib >= CU_FUNC_ATTRIBUTE_MAX)
        return CUDA_ERROR_INVALID_VALUE;
    SIM_LOCK();
    CUresult r = func_find_locked(hfunc) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
    SIM_UNLOCK();
    if (r != CUDA_SUCCESS)
        return r;
    switch (attrib) {                 /* a kernel with no registers, memory or limits of its own */
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *pi = 1024; break;
    case CU_FUNC_ATTRIBUTE_PTX_VERSION:
    case CU_FUNC_ATTRIBUTE_BINARY_VERSION: *pi = 90; break;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: *pi = 49152; break;
    case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: *pi = -1; break;
    default: *pi = 0; break;
    }
    return CUDA_SUCCESS;
}

CUresult cuFuncSetCacheConfig(CUfunction hfunc, CUfunc_cache config)
{
    SIM_REQUIRE_INIT();
    if (config < CU_FUNC_CACHE_PREFER_NONE || config > CU_FUNC_CACHE_PREFER_EQUAL)
        return CUDA_ERROR_INVALID_VALUE;
    SIM_LOCK();
    CUresult r = func_find_locked(hfunc) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
    SIM_UNLOCK();
    return r;
}

CUresult cuLinkCreate_v2(unsigned int numOptions, CUjit_option *options, void **optionValues,
                         CUlinkState *stateOut)
{
    SIM_REQUIRE_INIT();
    if (!stateOut || (numOptions && (!options || !optionValues)))
        return CUDA_ERROR_INVALID_VALUE;
    SIM_LOCK();
    struct CUctx_st *c;
    CUresult r = sim_ctx_require_locked(&c);
    if (r == CUDA_SUCCESS) {
        struct CUlinkState_st *s = calloc(1, sizeof *s);
        if (!s) {
            r = CUDA_ERROR_OUT_OF_MEMORY;
        } else {
            s->magic = SIM_MAGIC_LINK;
            s->ctx = c;
            s->next = links;
            links = s;
            *stateOut = s;
        }
    }
    SIM_UNLOCK();
    return r;
}

/* Adds one input of `size` bytes to s. Lock held. */
static CUresult link_add_locked(struct CUlinkState_st *s, CUjitInputType type, const void *data, size_t size)
{
    if (type == CU_JIT_INPUT_NVVM)
        return CUDA_ERROR_NOT_SUPPORTED;
    if (type == CU_JIT_INPUT_PTX) {
        size_t n = strnlen(data, size);
        char *p = realloc(s->ptx, s->ptx_len + n + 2);
        if (!p)
            return CUDA_ERROR_OUT_OF_MEMORY;
        s->ptx = p;
        memcpy(p + s->ptx_len, data, n);
        p[s->ptx_len + n] = '\0';
        if (!is_ptx(p + s->ptx_len)) {
            p[s->ptx_len] = '\0';
            return CUDA_ERROR_INVALID_PTX;
        }
        s->ptx_len += n;
        p[s->ptx_len++] = '\n';
        p[s->ptx_len] = '\0';
    } else {
        if (type == CU_JIT_INPUT_CUBIN && (size < 4 || !is_elf(data)))
            return CUDA_ERROR_INVALID_IMAGE;
        s->binary = 1;
    }
    s->inputs++;
    return CUDA_SUCCESS;
}

CUresult cuLinkAddData_v2(CUlinkState state, CUjitInputType type, void *data, size_t size,
                          const char *name, unsigned int numOptions, CUjit_option *options,
                          void **optionValues)
{
    (void)name;
    SIM_REQUIRE_INIT();
    if (!data || size == 0 || (unsigned)type >= CU_JIT_NUM_INPUT_TYPES ||
        (numOptions && (!options || !optionValues)))
        return CUDA_ERROR_INVALID_VALUE;
    SIM_LOCK();
    struct CUlinkState_st *s = link_find_locked(state);
    CUresult r = s ? link_add_locked(s, type, data, size) : CUDA_ERROR_INVALID_HANDLE;
    SIM_UNLOCK();
    return r;
}

CUresult cuLinkAddFile_v2(CUlinkState state, CUjitInputType type, const char *path,
                          unsigned int numOptions, CUjit_option *options, void **optionValues)
{
    SIM_REQUIRE_INIT();
    if (!path || (unsigned)type >= CU_JIT_NUM_INPUT_TYPES || (numOptions && (!options || !optionValues)))
        return CUDA_ERROR_INVALID_VALUE;
    FILE *f = fopen(path, "rb");
    if (!f)
        return CUDA_ERROR_FILE_NOT_FOUND;
    char *buf = NULL;
    size_t len = 0, cap = 0, n;
    CUresult r = CUDA_SUCCESS;
    do {
        if (len + 65536 + 1 > cap) {
            char *b = realloc(buf, cap = len + 65536 + 1);
            if (!b) { r = CUDA_ERROR_OUT_OF_MEMORY; break; }
            buf = b;
        }
        n = fread(buf + len, 1, 65536, f);
        len += n;
    } while (n > 0);
    fclose(f);
    if (r == CUDA_SUCCESS && len == 0)
        r = CUDA_ERROR_INVALID_IMAGE;
    if (r == CUDA_SUCCESS) {
        buf[len] = '\0';
        SIM_LOCK();
        struct CUlinkState_st *s = link_find_locked(state);
        r = s ? link_add_locked(s, type, buf, len + 1) : CUDA_ERROR_INVALID_HANDLE;
        SIM_UNLOCK();
    }
    free(buf);
    return r;
}

CUresult cuLinkComplete(CUlinkState state, void **cubinOut, size_t *sizeOut)
{
    SIM_REQUIRE_INIT();
    if (!cubinOut || !sizeOut)
        return CUDA_ERROR_INVALID_VALUE;
    SIM_LOCK();
    struct CUlinkState_st *s = link_find_locked(state);
    CUresult r = CUDA_SUCCESS;
    if (!s)
        r = CUDA_ERROR_INVALID_HANDLE;
    else if (s->inputs == 0)
        r = CUDA_ERROR_INVALID_VALUE;     /* nothing to link */
    else if (s->binary) {
        *cubinOut = (void *)opaque_elf;
        *sizeOut = sizeof opaque_elf;
    } else {
        *cubinOut = s->ptx;
        *sizeOut = s->ptx_len + 1;
    }
    SIM_UNLOCK();
    return r;
}

CUresult cuLinkDestroy(CUlinkState state)
{
    SIM_REQUIRE_INIT();
    SIM_LOCK();
    CUresult r = CUDA_ERROR_INVALID_HANDLE;
    for (struct CUlinkState_st **pp = &links; *pp; pp = &(*pp)->next)
        if (*pp == state) {
            struct CUlinkState_st *s = *pp;
            *pp = s->next;
            free(s->ptx);
            s->magic = 0;
            free(s);
            r = CUDA_SUCCESS;
            break;
        }
    SIM_UNLOCK();
    return r;
}

/* Deprecated since CUDA 5.0 but still exported: the device attributes' answer. */
CUresult cuDeviceComputeCapability(int *major, int *minor, CUdevice dev)
{
    if (!major || !minor)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = cuDeviceGetAttribute(major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
    if (r == CUDA_SUCCESS)
        r = cuDeviceGetAttribute(minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
    return r;
}

/* Resident blocks of blockSize threads per SM with dynamic shared memory smem. */
static int blocks_per_sm(int blockSize, size_t smem)
{
    int warps = (blockSize + 31) / 32;
    int n = SIM_THREADS_PER_SM / (warps * 32);
    if (n > SIM_BLOCKS_PER_SM)
        n = SIM_BLOCKS_PER_SM;
    if (smem > SIM_SMEM_PER_BLOCK)
        return 0;
    if (smem && (size_t)n * smem > SIM_SMEM_PER_SM)
        n = (int)(SIM_SMEM_PER_SM / smem);
    return n;
}

static CUresult func_known(CUfunction f)
{
    SIM_LOCK();
    CUresult r = func_find_locked(f) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
    SIM_UNLOCK();
    return r;
}

CUresult cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int *numBlocks, CUfunction func, int blockSize,
                                                             size_t dynamicSMemSize, unsigned int flags)
{
    SIM_REQUIRE_INIT();
    if (!numBlocks || blockSize <= 0 || blockSize > 1024 || (flags & ~(unsigned)CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE))
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = func_known(func);
    if (r == CUDA_SUCCESS)
        *numBlocks = blocks_per_sm(blockSize, dynamicSMemSize);
    return r;
}

CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *numBlocks, CUfunction func, int blockSize,
                                                     size_t dynamicSMemSize)
{
    return cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(numBlocks, func, blockSize, dynamicSMemSize,
                                                               CU_OCCUPANCY_DEFAULT);
}

/* The block size (a multiple of 32, at most blockSizeLimit or 1024) with the most
 * resident threads per SM, the largest such on ties; minGridSize fills every SM. */
CUresult cuOccupancyMaxPotentialBlockSizeWithFlags(int *minGridSize, int *blockSize, CUfunction func,
                                                   CUoccupancyB2DSize blockSizeToDynamicSMemSize,
                                                   size_t dynamicSMemSize, int blockSizeLimit,
                                                   unsigned int flags)
{
    SIM_REQUIRE_INIT();
    if (!minGridSize || !blockSize || blockSizeLimit < 0 ||
        (flags & ~(unsigned)CU_OCCUPANCY_DISABLE_CACHING_OVERRIDE))
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = func_known(func);
    if (r != CUDA_SUCCESS)
        return r;
    int limit = blockSizeLimit == 0 || blockSizeLimit > 1024 ? 1024 : blockSizeLimit;
    int best = 0, best_blocks = 0, best_threads = -1;
    for (int b = (limit / 32) * 32; b >= 32; b -= 32) {
        size_t smem = blockSizeToDynamicSMemSize ? blockSizeToDynamicSMemSize(b) : dynamicSMemSize;
        int n = blocks_per_sm(b, smem);
        if (n * b > best_threads) {
            best_threads = n * b;
            best = b;
            best_blocks = n;
        }
    }
    *blockSize = best_threads > 0 ? best : 0;
    *minGridSize = best_threads > 0 ? best_blocks * SIM_SMS : 0;
    return CUDA_SUCCESS;
}

CUresult cuOccupancyMaxPotentialBlockSize(int *minGridSize, int *blockSize, CUfunction func,
                                          CUoccupancyB2DSize blockSizeToDynamicSMemSize,
                                          size_t dynamicSMemSize, int blockSizeLimit)
{
    return cuOccupancyMaxPotentialBlockSizeWithFlags(minGridSize, blockSize, func, blockSizeToDynamicSMemSize,
                                                     dynamicSMemSize, blockSizeLimit, CU_OCCUPANCY_DEFAULT);
}

/* Kernels do nothing; the launch is validated and accepted (as cuLaunchKernel). */
static CUresult cooperative(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                            unsigned bz, unsigned smem, CUstream s)
{
    SIM_REQUIRE_INIT();
    if (!f)
        return CUDA_ERROR_INVALID_HANDLE;
    unsigned long long threads = (unsigned long long)bx * by * bz;
    if (!gx || !gy || !gz || !threads || threads > 1024 || smem > SIM_SMEM_PER_BLOCK)
        return CUDA_ERROR_INVALID_VALUE;
    SIM_LOCK();
    struct CUctx_st *c;
    CUresult r = sim_stream_ctx_locked(s, &c);
    SIM_UNLOCK();
    if (r == CUDA_SUCCESS &&
        (unsigned long long)gx * gy * gz > (unsigned long long)blocks_per_sm((int)threads, smem) * SIM_SMS)
        r = CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE;
    return r;
}

CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                   unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                                   unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                                   void **kernelParams)
{
    (void)kernelParams;
    return cooperative(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream);
}

CUresult cuLaunchCooperativeKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
                                        unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
                                        unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
                                        void **kernelParams)
{
    (void)kernelParams;
    return cooperative(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes, hStream);
}
