/* segment_leak.cc — stand-ins for frameworks' caching allocators, under their real
 * qualified names, for the allocator-frame table (analyzer/analyze/vt_allocators.c).
 *
 * Each step: keep_losses() keeps one 64 KiB block from
 * c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator::malloc (a leak of
 * 65,536 bytes per step whose site must be titled keep_losses, not the allocator),
 * scratch_pool() takes and returns 1 MiB through rmm::mr::pool_memory_resource
 * (churn, titled scratch_pool), and load_weights() at step 0 holds 4 MiB through
 * tsl::BFCAllocator (stable, titled load_weights). Steps are marked with
 * vramtrace_step(). Prints "30 steps" and exits 0; 1 when a CUDA call fails.
 * Built as C++ (-x c++) against the simulated CUDA runtime.
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include "vramtrace.h"

#define NOINLINE __attribute__((noinline))

static void *device_malloc(size_t n)
{
    void *p = NULL;
    if (cudaMalloc(&p, n) != cudaSuccess) {
        fprintf(stderr, "cudaMalloc(%zu) failed\n", n);
        exit(1);
    }
    return p;
}

namespace c10 { namespace cuda { namespace CUDACachingAllocator { namespace Native {
struct DeviceCachingAllocator {
    NOINLINE void *alloc_block(size_t n);
};
void *DeviceCachingAllocator::alloc_block(size_t n)
{
    void *p = device_malloc(n);
    asm volatile("" ::: "memory");   /* keeps the frame (no tail call) */
    return p;
}
struct NativeCachingAllocator {
    DeviceCachingAllocator dev;
    NOINLINE void *malloc(size_t n);
};
void *NativeCachingAllocator::malloc(size_t n)
{
    void *p = dev.alloc_block(n);
    asm volatile("" ::: "memory");
    return p;
}
}}}}  // namespace c10::cuda::CUDACachingAllocator::Native

namespace rmm { namespace mr {
struct pool_memory_resource {
    NOINLINE void *do_allocate(size_t n);
};
void *pool_memory_resource::do_allocate(size_t n)
{
    void *p = device_malloc(n);
    asm volatile("" ::: "memory");
    return p;
}
}}  // namespace rmm::mr

namespace tsl {
struct BFCAllocator {
    NOINLINE void *AllocateRaw(size_t alignment, size_t n);
};
void *BFCAllocator::AllocateRaw(size_t alignment, size_t n)
{
    (void)alignment;
    void *p = device_malloc(n);
    asm volatile("" ::: "memory");
    return p;
}
}  // namespace tsl

static c10::cuda::CUDACachingAllocator::Native::NativeCachingAllocator torch_alloc;
static rmm::mr::pool_memory_resource pool;
static tsl::BFCAllocator bfc;
static void *kept[64];

extern "C" NOINLINE void keep_losses(int step)
{
    kept[step] = torch_alloc.malloc(64 << 10);
    asm volatile("" ::: "memory");
}

extern "C" NOINLINE void scratch_pool(void)
{
    void *p = pool.do_allocate(1 << 20);
    cudaFree(p);
    asm volatile("" ::: "memory");
}

extern "C" NOINLINE void *load_weights(void)
{
    void *p = bfc.AllocateRaw(256, 4 << 20);
    asm volatile("" ::: "memory");
    return p;
}

int main(void)
{
    void *w = load_weights();
    for (int step = 0; step < 30; step++) {
        keep_losses(step);
        scratch_pool();
        vramtrace_step();
    }
    printf("30 steps\n");
    (void)w;
    return 0;
}
