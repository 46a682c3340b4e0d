/* vt_tensors.h — `vramtrace run --tensors`: each framework's own supported switch
 * that makes its allocator call the CUDA API once per tensor or buffer, so the
 * preload sees tensors instead of the segments of a caching allocator.
 *
 * The switches (docs/frameworks.md of the project, "--tensors"):
 *   PyTorch     PYTORCH_ALLOC_CONF / PYTORCH_CUDA_ALLOC_CONF gain backend:cudaMallocAsync
 *               (the user's other options kept; those the asynchronous backend
 *               ignores named in a warning); when neither is set,
 *               PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync (read by every version)
 *   TensorFlow  TF_GPU_ALLOCATOR=cuda_malloc_async
 *   JAX         XLA_PYTHON_CLIENT_ALLOCATOR=platform, XLA_PYTHON_CLIENT_PREALLOCATE=false
 *   CuPy, RMM   VRAMTRACE_TENSORS=1 and the Python helper's start-up folder first on
 *               PYTHONPATH (its sitecustomize switches their allocators at import,
 *               python/vramtrace/_bootstrap), when the helper is found
 * A variable the user set to what the switch needs is left as it is; one set to
 * something else is replaced, with a warning naming the old value.
 */
#ifndef VT_TENSORS_H
#define VT_TENSORS_H

#include <stddef.h>
#include <stdio.h>

/* PyTorch's allocator configuration old (NULL or "": none) with the backend set to
 * cudaMallocAsync: options are split at commas outside brackets
 * ("roundup_power2_divisions:[256:1,512:2]" is one option) and kept in order, a
 * "backend:" option replaced in place, else "backend:cudaMallocAsync" put first.
 * ignored: the options, comma-separated, that the asynchronous backend ignores
 * (expandable_segments, max_split_size_mb, roundup_power2_divisions,
 * garbage_collection_threshold), "" when none (truncated to cap); replaced: the
 * user's own "backend:VALUE" when it named another backend, else "" (truncated to
 * rcap). Returns a malloc'ed string; never NULL (exits on OOM). */
char *vt_tensors_torch_conf(const char *old, char *ignored, size_t cap, char *replaced, size_t rcap);

/* Sets the switches above in this process's environment (the program inherits it).
 * One "vramtrace: --tensors: NAME=VALUE" line per variable set and one
 * "vramtrace: --tensors: warning: ..." line per option ignored or value replaced go
 * to err. Returns 0, or -1 after a message when setenv fails. */
int vt_tensors_apply(FILE *err);

#endif /* VT_TENSORS_H */
