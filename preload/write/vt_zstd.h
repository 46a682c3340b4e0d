/* vt_zstd.h — the libzstd functions the snapshot file uses, called through pointers
 * that vt_zstd_load fills (libzstd is loaded with dlopen by the writer's start, not
 * linked: sys/vt_dlib.h). zstd.h gives the types only.
 */
#ifndef VT_ZSTD_H
#define VT_ZSTD_H

#include <zstd.h>

typedef struct vt_zstd_api {
    ZSTD_CCtx *(*createCCtx)(void);
    size_t (*CCtx_reset)(ZSTD_CCtx *, ZSTD_ResetDirective);
    size_t (*CCtx_setParameter)(ZSTD_CCtx *, ZSTD_cParameter, int);
    size_t (*compressBound)(size_t);
    size_t (*compressStream2)(ZSTD_CCtx *, ZSTD_outBuffer *, ZSTD_inBuffer *, ZSTD_EndDirective);
    unsigned (*isError)(size_t);
    const char *(*getErrorName)(size_t);
    size_t (*freeCCtx)(ZSTD_CCtx *);   /* NULL-safe, as libzstd's */
} vt_zstd_api;

/* Filled by vt_zstd_load; read only after it returned 0 (or by code that only runs
 * on a stream vt_file made compressed, which it does only then). */
extern vt_zstd_api vt_zstd;

/* Loads libzstd.so.1 once: 0; -1 missing (one "vramtrace:" warning: files are then
 * written uncompressed; latched); 1 another thread is loading it. Never inside a
 * dl_iterate_phdr callback nor with a lock of ours held (vt_hook_start calls it
 * before the writer's start). Thread-safe; keeps errno. */
int vt_zstd_load(void);

#endif /* VT_ZSTD_H */
