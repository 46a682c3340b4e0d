/* vt_tensors.c — the `--tensors` switches (contract in vt_tensors.h).
 *
 * Design: only environment variables the frameworks document, set before the
 * program starts; nothing is patched. The PyTorch option string is rewritten, not
 * replaced, so a user's own options survive; options that mean nothing to the
 * asynchronous backend are named rather than dropped (PyTorch ignores them itself).
 */
#include "vt_tensors.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vt_util.h"

#define TORCH_BACKEND "cudaMallocAsync"

/* Options of PyTorch's native caching allocator that its cudaMallocAsync backend
 * does not apply (c10/cuda/CUDAMallocAsyncAllocator.cpp; PyTorch's "CUDA memory
 * management" notes). */
static const char *const torch_ignored[] = {"expandable_segments", "max_split_size_mb", "roundup_power2_divisions",
                                            "garbage_collection_threshold"};

static void append(char **s, size_t *len, size_t *cap, const char *p, size_t n)
{
    if (*len + n + 1 > *cap) vt_grow((void **)s, cap, *len + n + 1, 1);
    memcpy(*s + *len, p, n);
    *len += n;
    (*s)[*len] = 0;
}

/* The option's key: the bytes before its first ':' with blanks trimmed. */
static size_t option_key(const char *opt, size_t n, const char **key)
{
    size_t i = 0;
    while (i < n && (opt[i] == ' ' || opt[i] == '\t')) i++;
    size_t k = i;
    while (k < n && opt[k] != ':') k++;
    size_t e = k;
    while (e > i && (opt[e - 1] == ' ' || opt[e - 1] == '\t')) e--;
    *key = opt + i;
    return e - i;
}

/* The end of the option starting at p: the next comma outside brackets, or the
 * string's end. */
static const char *option_end(const char *p)
{
    int depth = 0;
    while (*p && !(*p == ',' && depth == 0)) {
        if (*p == '[') depth++;
        else if (*p == ']' && depth > 0) depth--;
        p++;
    }
    return p;
}

char *vt_tensors_torch_conf(const char *old, char *ignored, size_t cap, char *replaced, size_t rcap)
{
    char *out = NULL;
    size_t len = 0, ocap = 0, ilen = 0;
    int have_backend = 0;
    if (cap) ignored[0] = 0;
    if (rcap) replaced[0] = 0;
    if (!old) old = "";
    /* backend first when the user had none: read before the other options */
    for (const char *p = old; *p;) {
        const char *q = option_end(p);
        const char *key;
        size_t kl = option_key(p, (size_t)(q - p), &key);
        if (kl == 7 && !strncmp(key, "backend", 7)) have_backend = 1;
        p = *q ? q + 1 : q;
    }
    if (!have_backend) append(&out, &len, &ocap, "backend:" TORCH_BACKEND, strlen("backend:" TORCH_BACKEND));
    for (const char *p = old; *p;) {
        const char *q = option_end(p);
        size_t n = (size_t)(q - p);
        const char *key;
        size_t kl = option_key(p, n, &key);
        if (kl) {   /* empty options (",,") are dropped */
            if (len) append(&out, &len, &ocap, ",", 1);
            if (kl == 7 && !strncmp(key, "backend", 7)) {
                append(&out, &len, &ocap, "backend:" TORCH_BACKEND, strlen("backend:" TORCH_BACKEND));
                const char *val = memchr(p, ':', n);   /* the user's own choice, said when replaced */
                size_t vl = val ? n - (size_t)(val + 1 - p) : 0;
                while (vl && val[1] == ' ') { val++; vl--; }
                while (vl && (val[vl] == ' ' || val[vl] == '\t')) vl--;
                if (val && (vl != strlen(TORCH_BACKEND) || strncmp(val + 1, TORCH_BACKEND, vl)) && rcap)
                    snprintf(replaced, rcap, "backend:%.*s", (int)vl, val + 1);
            } else {
                append(&out, &len, &ocap, p, n);
                for (size_t i = 0; i < sizeof torch_ignored / sizeof torch_ignored[0]; i++) {
                    if (strlen(torch_ignored[i]) != kl || strncmp(torch_ignored[i], key, kl)) continue;
                    int w = snprintf(ignored + ilen, cap > ilen ? cap - ilen : 0, "%s%.*s", ilen ? ", " : "", (int)kl, key);
                    if (w > 0) ilen = ilen + (size_t)w < cap ? ilen + (size_t)w : (cap ? cap - 1 : 0);
                }
            }
        }
        p = *q ? q + 1 : q;
    }
    if (!out) out = vt_xstrdup("");
    return out;
}

/* Sets name=value, saying so (and what it replaces) on err; -1 when setenv fails. */
static int set_var(FILE *err, const char *name, const char *value)
{
    const char *old = getenv(name);
    if (old && !strcmp(old, value)) {
        fprintf(err, "vramtrace: --tensors: %s=%s (already set)\n", name, value);
        return 0;
    }
    if (old && *old) fprintf(err, "vramtrace: --tensors: warning: %s was \"%s\"; replaced\n", name, old);
    if (setenv(name, value, 1) < 0) {
        fprintf(err, "vramtrace: --tensors: cannot set %s: %s\n", name, strerror(errno));
        return -1;
    }
    fprintf(err, "vramtrace: --tensors: %s=%s\n", name, value);
    return 0;
}

static int torch_var(FILE *err, const char *name)
{
    char ignored[256], replaced[128];
    const char *old = getenv(name);
    char *conf = vt_tensors_torch_conf(old, ignored, sizeof ignored, replaced, sizeof replaced);
    int rc = 0;
    if (old && !strcmp(old, conf)) {
        fprintf(err, "vramtrace: --tensors: %s=%s (already set)\n", name, conf);
    } else if (setenv(name, conf, 1) < 0) {
        fprintf(err, "vramtrace: --tensors: cannot set %s: %s\n", name, strerror(errno));
        rc = -1;
    } else {
        fprintf(err, "vramtrace: --tensors: %s=%s\n", name, conf);
    }
    if (replaced[0])
        fprintf(err, "vramtrace: --tensors: warning: %s had %s; replaced by backend:" TORCH_BACKEND "\n", name, replaced);
    if (ignored[0])
        fprintf(err, "vramtrace: --tensors: warning: PyTorch's cudaMallocAsync backend ignores %s (%s)\n", ignored, name);
    free(conf);
    return rc;
}

/* The folder holding the Python helper's package `vramtrace` (with its start-up
 * folder vramtrace/_bootstrap), or NULL: $VRAMTRACE_PYTHONPATH, else
 * <dir of this executable>/../share/vramtrace/python, else <dir>/../../.. (the
 * wheel: site-packages/vramtrace/_prefix/bin/vramtrace), else the source tree's
 * python/ this binary was built from (VT_PYTHON_SOURCE_DIR). */
static const char *python_dir(char *buf, size_t cap)
{
    char probe[PATH_MAX + 64];
    const char *env = getenv("VRAMTRACE_PYTHONPATH");
    if (env && *env) {
        snprintf(buf, cap, "%s", env);
        snprintf(probe, sizeof probe, "%s/vramtrace/_bootstrap/sitecustomize.py", buf);
        return access(probe, R_OK) == 0 ? buf : NULL;
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) {
        exe[n] = 0;
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = 0;
            /* an installed prefix; the Python wheel (site-packages/vramtrace/_prefix/bin) */
            static const char *const rel[] = {"../share/vramtrace/python", "../../.."};
            for (int i = 0; i < 2; i++) {
                snprintf(probe, sizeof probe, "%s/%s", exe, rel[i]);
                char real[PATH_MAX];
                if (realpath(probe, real)) {
                    snprintf(buf, cap, "%s", real);
                    snprintf(probe, sizeof probe, "%s/vramtrace/_bootstrap/sitecustomize.py", buf);
                    if (access(probe, R_OK) == 0) return buf;
                }
            }
        }
    }
#ifdef VT_PYTHON_SOURCE_DIR
    snprintf(buf, cap, "%s", VT_PYTHON_SOURCE_DIR);
    snprintf(probe, sizeof probe, "%s/vramtrace/_bootstrap/sitecustomize.py", buf);
    if (access(probe, R_OK) == 0) return buf;
#endif
    return NULL;
}

int vt_tensors_apply(FILE *err)
{
    /* PyTorch reads PYTORCH_ALLOC_CONF before PYTORCH_CUDA_ALLOC_CONF where it has
     * both: whichever the user set is switched; with none, the older name, which
     * every version reads */
    int any = 0;
    if (getenv("PYTORCH_ALLOC_CONF")) {
        if (torch_var(err, "PYTORCH_ALLOC_CONF") < 0) return -1;
        any = 1;
    }
    if (getenv("PYTORCH_CUDA_ALLOC_CONF") || !any)
        if (torch_var(err, "PYTORCH_CUDA_ALLOC_CONF") < 0) return -1;
    const char *nc = getenv("PYTORCH_NO_CUDA_MEMORY_CACHING");
    if (nc && *nc && strcmp(nc, "0"))
        fprintf(err, "vramtrace: --tensors: PYTORCH_NO_CUDA_MEMORY_CACHING=%s is set: PyTorch then calls cudaMalloc per "
                "tensor and the backend option has no effect\n", nc);
    if (set_var(err, "TF_GPU_ALLOCATOR", "cuda_malloc_async") < 0) return -1;
    if (set_var(err, "XLA_PYTHON_CLIENT_ALLOCATOR", "platform") < 0) return -1;
    if (set_var(err, "XLA_PYTHON_CLIENT_PREALLOCATE", "false") < 0) return -1;
    if (setenv("VRAMTRACE_TENSORS", "1", 1) < 0) return -1;
    fprintf(err, "vramtrace: --tensors: VRAMTRACE_TENSORS=1\n");
    char dir[PATH_MAX];
    if (!python_dir(dir, sizeof dir)) {
        fprintf(err, "vramtrace: --tensors: warning: the vramtrace Python package was not found (set VRAMTRACE_PYTHONPATH "
                "to the folder that holds it): CuPy's and RMM's allocators are not switched\n");
        return 0;
    }
    const char *old = getenv("PYTHONPATH");
    size_t need = strlen(dir) * 2 + 64 + (old ? strlen(old) : 0);
    char *pp = vt_xmalloc(need);
    /* the start-up folder (its sitecustomize runs the user's own one after it),
     * then the package's folder, then what was there */
    snprintf(pp, need, "%s/vramtrace/_bootstrap:%s%s%s", dir, dir, old && *old ? ":" : "", old && *old ? old : "");
    int rc = setenv("PYTHONPATH", pp, 1);
    if (rc == 0) fprintf(err, "vramtrace: --tensors: PYTHONPATH=%s\n", pp);
    else fprintf(err, "vramtrace: --tensors: cannot set PYTHONPATH: %s\n", strerror(errno));
    free(pp);
    return rc < 0 ? -1 : 0;
}
