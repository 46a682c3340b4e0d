/* vt_frames.h — the one rule for "this frame is CUDA's or vramtrace's own".
 *
 * A site is the program's call stack of an allocation with the frames that are not
 * the program's taken out (docs/metrics.md "site"): every frame in one of the modules
 * of VT_FRAMES_TRIMMED_MODULES (by file name, without its folder), then a leading run
 * of CUDA API functions (VT_FRAMES_CUDA_FUNCTIONS: a statically linked runtime lives
 * in the program's own module). The preload's online leak warning, the analyzer's
 * trimming and python/vramtrace/snapshots.py all follow these lists (the Python copy
 * is checked by the python_vocabulary test). Header-only, no state, thread-safe.
 */
#ifndef VT_FRAMES_H
#define VT_FRAMES_H

#include <string.h>

/* Module file-name prefixes of vramtrace's own library, the CUDA runtime and the CUDA
 * driver: X("prefix"). */
#define VT_FRAMES_TRIMMED_MODULES(X) \
    X("libvramtrace")                \
    X("libcudart")                   \
    X("libcuda.")                    \
    X("libcuda-")

/* Function-name prefixes of the CUDA API: X("prefix", upper), upper = 1 when the
 * character after the prefix must be an upper-case letter (cudaMalloc, cuMemAlloc_v2;
 * not cufft or cudnn). libcudart_static_<hash>: the static runtime's local symbols.
 * nvtx: the header-only NVTX API's static functions compiled into the program
 * (nvtxMemRegionsRegister: a region's registering call). */
#define VT_FRAMES_CUDA_FUNCTIONS(X) \
    X("libcudart_static_", 0)       \
    X("__cudart", 0)                \
    X("cuda", 1)                    \
    X("cu", 1)                      \
    X("nvtx", 1)

/* The file name of path (after its last '/'). */
static inline const char *vt_frames_basename(const char *path)
{
    const char *b = strrchr(path, '/');
    return b ? b + 1 : path;
}

/* 1 when the module at path (a full path or a file name) is vramtrace's own library,
 * the CUDA runtime or the CUDA driver; 0 otherwise or for NULL. */
static inline int vt_frames_module_trimmed(const char *path)
{
    if (!path)
        return 0;
    const char *b = vt_frames_basename(path);
#define VT__FRAMES_MOD(p) if (strncmp(b, p, sizeof p - 1) == 0) return 1;
    VT_FRAMES_TRIMMED_MODULES(VT__FRAMES_MOD)
#undef VT__FRAMES_MOD
    return 0;
}

/* 1 when the module at path is the CUDA runtime (libcudart*). */
static inline int vt_frames_module_is_runtime(const char *path)
{
    return path && strncmp(vt_frames_basename(path), "libcudart", 9) == 0;
}

/* 1 when fn names a CUDA API function (VT_FRAMES_CUDA_FUNCTIONS); 0 otherwise or for
 * NULL. */
static inline int vt_frames_cuda_function(const char *fn)
{
    if (!fn)
        return 0;
#define VT__FRAMES_FN(p, upper)                                                   \
    if (strncmp(fn, p, sizeof p - 1) == 0 &&                                      \
        (!(upper) || (fn[sizeof p - 1] >= 'A' && fn[sizeof p - 1] <= 'Z')))       \
        return 1;
    VT_FRAMES_CUDA_FUNCTIONS(VT__FRAMES_FN)
#undef VT__FRAMES_FN
    return 0;
}

/* 1 when a Python frame's file is installed code rather than the program's: under a
 * "site-packages" or "dist-packages" folder (a library: Numba's driver, PyTorch) or in
 * the standard library (an absolute path with "/lib/python3"); 0 otherwise or for
 * NULL. A site's title and the online leak warning prefer the program's own frames. */
static inline int vt_frames_python_installed(const char *file)
{
    if (!file)
        return 0;
    if (strstr(file, "/site-packages/") || strstr(file, "/dist-packages/"))
        return 1;
    return file[0] == '/' && strstr(file, "/lib/python3") != NULL;
}

#endif /* VT_FRAMES_H */
