/* vt_allocators.c — the table of caching-allocator frames (contract in
 * vt_allocators.h; the table is documented, row by row, in docs/allocators.md).
 *
 * Design: a fixed table of name fragments, matched as substrings (a demangled
 * template function carries its return type before the qualified name, so a
 * prefix test would miss it). A fragment is a namespace or class path ending in
 * "::" (or a Cython module's mangled path, or a Python package folder), never a
 * bare word, so a program's own function cannot match by accident.
 */
#include "vt_allocators.h"

#include <string.h>

typedef struct alloc_row {
    const char *name;                 /* the report's words */
    int segments;                     /* 1: hands out blocks inside memory it reserved (a cache or
                                         pool); 0: one CUDA allocation per buffer (a wrapper) */
    const char *const *native;        /* function-name fragments, NULL-terminated */
    const char *const *python;        /* Python file fragments, NULL-terminated */
} alloc_row;

/* PyTorch: c10/cuda/CUDACachingAllocator.cpp (native allocator, expandable
 * segments), c10/cuda/CUDAMallocAsyncAllocator.cpp (namespace
 * c10::cuda::CUDACachingAllocator::CudaMallocAsync), the device-generic
 * c10::CachingDeviceAllocator and pools (c10::cuda::MemPool), the pluggable
 * allocator (torch/csrc/cuda/CUDAPluggableAllocator.cpp) */
static const char *const torch_native[] = {"c10::cuda::CUDACachingAllocator::", "c10::CachingDeviceAllocator::",
                                           "c10::cuda::MemPool::", "torch::cuda::CUDAPluggableAllocator::", NULL};
/* PyTorch's pinned host memory: ATen/core/CachingHostAllocator.h and
 * ATen/cuda/CachingHostAllocator.cpp */
static const char *const torch_host_native[] = {"at::CachingHostAllocatorImpl", "at::cuda::CachingHostAllocator",
                                                "CUDACachingHostAllocatorImpl", NULL};
/* TensorFlow and XLA (JAX): the best-fit-with-coalescing allocator (tsl::, older
 * tensorflow::) and the StreamExecutor sub-allocator and driver calls under it */
static const char *const bfc_native[] = {"tsl::BFCAllocator::", "tensorflow::BFCAllocator::",
                                         "tsl::DeviceMemAllocator::", "stream_executor::DeviceMemAllocator::",
                                         "stream_executor::StreamExecutorMemoryAllocator::",
                                         "stream_executor::gpu::GpuDriver::DeviceAllocate",
                                         "stream_executor::gpu::CudaExecutor::Allocate", NULL};
static const char *const tfasync_native[] = {"stream_executor::GpuCudaMallocAsyncAllocator::",
                                             "tensorflow::GpuCudaMallocAsyncAllocator::", NULL};
/* CuPy's pools are Cython (cupy/cuda/memory.pyx): the C functions Cython makes
 * carry the module path mangled ("__pyx_f_4cupy_4cuda_6memory_...") */
static const char *const cupy_native[] = {"4cupy_4cuda_6memory_", NULL};
/* RMM: the resources that call CUDA once per buffer, then every other resource
 * (pools, arenas, binning: they hide buffers) */
static const char *const rmm_plain_native[] = {"rmm::mr::cuda_memory_resource::", "rmm::mr::cuda_async_memory_resource::",
                                               "rmm::mr::managed_memory_resource::", "rmm::mr::pinned_host_memory_resource::",
                                               NULL};
static const char *const rmm_native[] = {"rmm::mr::", "rmm::device_buffer::", NULL};
/* Numba's memory manager is Python (numba/cuda/cudadrv/driver.py, also inside
 * the numba-cuda package) */
static const char *const numba_python[] = {"/numba/cuda/cudadrv/", NULL};
static const char *const none[] = {NULL};

/* first match wins: a specific row before a general one */
static const alloc_row table[] = {
    {"the PyTorch caching allocator", 1, torch_native, none},
    {"the PyTorch pinned host memory cache", 1, torch_host_native, none},
    {"the TensorFlow/XLA BFC allocator", 1, bfc_native, none},
    {"the TensorFlow cudaMallocAsync allocator", 1, tfasync_native, none},
    {"the CuPy memory pool", 1, cupy_native, none},
    {"RMM's CUDA memory resource", 0, rmm_plain_native, none},
    {"an RMM memory resource", 1, rmm_native, none},
    {"the Numba memory manager", 0, none, numba_python},
};
enum { NROWS = sizeof table / sizeof table[0] };

static int match(const char *s, const char *const *frags)
{
    for (const char *const *f = frags; *f; f++)
        if (strstr(s, *f)) return 1;
    return 0;
}

int vt_allocator_of_function(const char *function)
{
    if (!function) return -1;
    for (int i = 0; i < NROWS; i++)
        if (match(function, table[i].native)) return i;
    return -1;
}

int vt_allocator_of_pyfile(const char *file)
{
    if (!file) return -1;
    for (int i = 0; i < NROWS; i++)
        if (match(file, table[i].python)) return i;
    return -1;
}

const char *vt_allocator_name(int a)
{
    return a >= 0 && a < NROWS ? table[a].name : "";
}

int vt_allocator_segments(int a)
{
    return a >= 0 && a < NROWS ? table[a].segments : 0;
}

/* The allocator of view entry j of st, or -1. */
static int entry_allocator(const vt_stack *st, uint32_t j, vt_symbolizer *sym)
{
    int32_t e = st->view[j];
    if (e < 0) return vt_allocator_of_pyfile(st->py[-1 - e].file);
    return vt_allocator_of_function(vt_sym_frame_at(sym, &st->frames[VT_VIEW_NATIVE(e)], VT_VIEW_DEPTH(e))->function);
}

void vt_allocator_title(vt_stack *st, vt_symbolizer *sym)
{
    st->allocator = -1;
    /* a Python title is the program's own line: only frames inside it count */
    int py_title = st->title < st->nview && st->view[st->title] < 0;
    uint32_t limit = py_title ? st->title : st->nview;
    uint32_t run_end = 0;   /* one past the innermost run of allocator frames */
    for (uint32_t j = 0; j < limit; j++) {
        int a = entry_allocator(st, j, sym);
        if (a >= 0) {
            if (st->allocator < 0) st->allocator = a;
            run_end = j + 1;
        } else if (st->allocator >= 0) {
            break;
        }
    }
    if (st->allocator < 0 || py_title) return;
    /* a native title inside the run: its caller names the site (kept when the run
     * is the whole view: nothing else to name it by) */
    if (st->title < run_end && run_end < st->nview) st->title = run_end;
}
