/* vt_zstd.c — libzstd loaded when the writer starts (contract in vt_zstd.h). */
#include "vt_zstd.h"
#include "vt_dlib.h"

vt_zstd_api vt_zstd;

static const vt_dlib_fn vt__zstd_fns[] = {
    { "ZSTD_createCCtx",        (void **)&vt_zstd.createCCtx },
    { "ZSTD_CCtx_reset",        (void **)&vt_zstd.CCtx_reset },
    { "ZSTD_CCtx_setParameter", (void **)&vt_zstd.CCtx_setParameter },
    { "ZSTD_compressBound",     (void **)&vt_zstd.compressBound },
    { "ZSTD_compressStream2",   (void **)&vt_zstd.compressStream2 },
    { "ZSTD_isError",           (void **)&vt_zstd.isError },
    { "ZSTD_getErrorName",      (void **)&vt_zstd.getErrorName },
    { "ZSTD_freeCCtx",          (void **)&vt_zstd.freeCCtx },
};

static int vt__zstd_state;
static const vt_dlib vt__zstd_lib = {
    "libzstd.so.1", "snapshot files are written uncompressed (.jsonl)",
    vt__zstd_fns, sizeof vt__zstd_fns / sizeof vt__zstd_fns[0], &vt__zstd_state
};

int vt_zstd_load(void)
{
    return vt_dlib_load(&vt__zstd_lib);
}
