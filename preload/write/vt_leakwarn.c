/* vt_leakwarn.c — the online leak warning's line (contract: vt_leakwarn.h). */
#define _GNU_SOURCE
#include "vt_leakwarn.h"
#include "vt_buf.h"
#include "vt_elfsym.h"
#include "vt_format.h"
#include "vt_frames.h"
#include "vt_log.h"
#include "vt_modules.h"
#include "vt_stack.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The qualified name of an Itanium ABI function name ("_ZL14remember_batchi" ->
 * "remember_batch", "_ZN5Cache4growEm" -> "Cache::grow"), without its parameters:
 * the C++ runtime's __cxa_demangle when the process has it loaded (found in the
 * global scope; looked up at each call: warnings are rare), else the plain and nested
 * source names read here (an anonymous namespace, _GLOBAL__N_..., as "(anonymous
 * namespace)"); NULL for anything else (templates, operators: the report demangles
 * them). The program is never made to load a library for it. malloc'ed, or NULL. */
static char *vt__demangle(const char *name)
{
    char *(*dem)(const char *, char *, size_t *, int *) =
        (char *(*)(const char *, char *, size_t *, int *))dlsym(RTLD_DEFAULT, "__cxa_demangle");
    int st = -1;
    char *out = dem ? dem(name, NULL, NULL, &st) : NULL;
    if (out && st == 0) {
        char *paren = strchr(out, '(');
        if (paren && paren != out)
            *paren = 0;
        return out;
    }
    free(out);
    const char *p = name + 2;
    int nested = *p == 'N';
    if (nested)
        for (p++; *p == 'K' || *p == 'V' || *p == 'r'; p++) {}
    else if (*p == 'L')
        p++;
    char buf[512];
    size_t o = 0;
    while (*p >= '1' && *p <= '9') {
        char *end;
        unsigned long n = strtoul(p, &end, 10);
        if (n == 0 || n > 255 || strnlen(end, n) < n)
            return NULL;
        const char *part = end;
        size_t len = n;
        if (n > 11 && !strncmp(end, "_GLOBAL__N_", 11)) {
            part = "(anonymous namespace)";
            len = strlen(part);
        }
        if (o + len + 3 > sizeof buf)
            return NULL;
        if (o) {
            memcpy(buf + o, "::", 2);
            o += 2;
        }
        memcpy(buf + o, part, len);
        o += len;
        p = end + n;
        if (!nested)
            break;
    }
    if (!o || (nested && *p != 'E'))
        return NULL;
    buf[o] = 0;
    return strdup(buf);
}

/* Logs one line per site that crossed the leak threshold in this snapshot (once per
 * site): the first frame that is not CUDA's own, as "function (module)" (the
 * function from the module's ELF symbol tables, static functions included, else
 * from dladdr), else "module+0xoffset"; or, when the stack has Python frames, the
 * innermost one of the program's own code (else the innermost). */
void vt_leakwarn_log(const vt_collect *c)
{
    for (size_t i = 0; i < c->n_sites; i++) {
        const vt_site_row *s = &c->sites[i];
        if (!s->leak_new)
            continue;
        const uintptr_t *pcs = NULL;
        int n = 0;
        char where[512] = "unknown frame";
        if (vt_stack_get(s->stack, &pcs, &n) == 0) {
            for (int f = 0; f < n; f++) {
                vt_module *m = vt_modules_find(pcs[f] - 1);
                if (m && vt_frames_module_trimmed(m->path))
                    continue;
                const char *fn = m ? vt_elfsym_lookup(m->path, (uint64_t)(pcs[f] - 1 - m->bias)) : NULL;
                if (!fn)
                    fn = vt_modules_symbol(pcs[f] - 1);
                char *demangled = fn && fn[0] == '_' && fn[1] == 'Z' ? vt__demangle(fn) : NULL;
                if (demangled)
                    fn = demangled;
                if (fn) {
                    const char *base = m ? strrchr(m->path, '/') : NULL;
                    if (m && m->path[0])
                        snprintf(where, sizeof where, "%.300s (%.180s)", fn, base ? base + 1 : m->path);
                    else
                        snprintf(where, sizeof where, "%.480s", fn);
                    free(demangled);
                } else if (m) {
                    const char *base = strrchr(m->path, '/');
                    vt_buf tmp;
                    vt_buf_init(&tmp);
                    vt_buf_cstr(&tmp, base ? base + 1 : m->path);
                    vt_buf_cstr(&tmp, "+0x");
                    vt_buf_hex(&tmp, (uint64_t)(pcs[f] - 1 - m->bias));
                    vt_buf_put(&tmp, "", 1);
                    if (!tmp.oom)
                        strncpy(where, tmp.p, sizeof where - 1);
                    vt_buf_free(&tmp);
                }
                break;
            }
        }
        const vt_py_frame *py = NULL;
        int npy = 0;
        char file[512], func[256];
        int line;
        if (vt_stack_get_py(s->stack, &py, &npy) == 0 && npy > 0) {
            /* the innermost frame of the program's own code, as the report's title:
             * not installed code (site-packages, dist-packages, the standard library) */
            int pick = -1;
            for (int k = 0; k < npy && pick < 0; k++)
                if (vt_py_describe(&py[k], file, sizeof file, func, sizeof func, &line) == 0 &&
                    !vt_frames_python_installed(file))
                    pick = k;
            if (pick < 0)
                pick = 0;
            if (vt_py_describe(&py[pick], file, sizeof file, func, sizeof func, &line) == 0)
                snprintf(where, sizeof where, "%.300s:%d in %.180s", file, line, func);
        }
        vt_log(VT_LOG_WARN, "possible leak: %s growing %llu bytes/step for %u steps (%s, device %d, stack %u)",
               where, (unsigned long long)(s->growth_steps ? s->growth_bytes / s->growth_steps : 0),
               s->growth_steps, vt_kind_name(s->kind), s->device, s->stack);
    }
}
