/* vt_python.h — read the calling thread's CPython frames without the GIL.
 *
 * Used by the allocation hooks to name the Python file/function/line that
 * allocated. Two steps, split because they run in different places:
 *
 *   vt_py_capture   in the hook, possibly while the caller holds an allocator
 *                   lock and another thread holds the GIL. Plain loads of this
 *                   thread's own frame chain; copies (code identity, instruction
 *                   offset) per frame. No GIL, no reference counts, no Python
 *                   call that needs the GIL, no allocation, no lock, no syscall.
 *   vt_py_describe  later, on the writer thread: turns one captured frame into
 *                   file / function / line by decoding the code object's
 *                   location table. Every read goes through process_vm_readv on
 *                   our own pid (EFAULT instead of SIGSEGV), and the code object
 *                   is checked to still be the one captured (see below).
 *
 * Supported interpreters: CPython 3.10, 3.11, 3.12 (structure offsets from a
 * table generated from each version's own headers by
 * tests/pystack/py_layout_dump.c and re-checked by the pystack_layout_* tests)
 * and 3.13 (offsets from the interpreter's own _PyRuntime.debug_offsets,
 * cookie "xdebugpy", struct _Py_DebugOffsets of Include/internal/pycore_runtime.h).
 * Anything else (3.9-, 3.14+, free-threaded builds) is "no interpreter": capture
 * returns 0 and the tracer keeps native-only stacks. See docs/python-stacks.md.
 */
#ifndef VT_PYTHON_H
#define VT_PYTHON_H

#include <stddef.h>
#include <stdint.h>

/* Most frames vt_py_capture walks (innermost first) before it stops. */
#define VT_PY_MAX_WALK 256

/* One captured Python frame. Plain data: nothing here is a reference; the
 * pointers are identity keys only and may be stale by the time they are
 * described. Two captures of the same call site compare equal bytewise. */
typedef struct vt_py_frame {
    const void *code;        /* PyCodeObject* at capture (identity, not a ref)      */
    const void *linetable;   /* its co_linetable bytes object (identity check)      */
    int32_t     instr;       /* instruction offset in code units (_Py_CODEUNIT,
                                2 bytes) from the first instruction; -1 = the frame
                                has not started executing                           */
    int32_t     firstlineno; /* co_firstlineno at capture (identity check)          */
    uint32_t    group;       /* eval-loop activation this frame runs in, counted
                                from the innermost (0): one native
                                _PyEval_EvalFrameDefault frame per group. 3.10: one
                                per frame; 3.11: a group ends at is_entry; 3.12+: at
                                each C-stack entry shim (FRAME_OWNED_BY_CSTACK)     */
    uint32_t    reserved;    /* 0 (keeps the struct free of padding bytes)          */
} vt_py_frame;

/* Finds a CPython interpreter in this process and selects its layout.
 * Looks the runtime up with dlsym(RTLD_DEFAULT, ...) ("Py_Version",
 * "Py_GetVersion", "_PyRuntime", "PyGILState_GetThisThreadState",
 * "Py_IsInitialized", "PyCode_Type", "PyBytes_Type", "PyUnicode_Type",
 * "PyFrame_Type"); a python executable that can load extension modules exports
 * these (pyenv: libpython3.X.so, Debian: the executable itself), and when the
 * interpreter was dlopen()ed RTLD_LOCAL (embedding) it is found through
 * dl_iterate_phdr + dlopen(RTLD_NOLOAD). Cheap when there is no libpython
 * (a few failed dlsym calls). Idempotent; call once, outside any hook, before
 * vt_py_capture (e.g. from the library constructor and again lazily when a
 * later dlopen brings libpython in). Not thread-safe against itself; safe to
 * run while other threads call vt_py_capture (they see "not ready" until the
 * layout is published with a release store). */
void vt_py_init(void);

/* 1 when vt_py_init found a supported interpreter, else 0. Thread-safe. */
int vt_py_available(void);

/* The flag behind vt_py_available, for the hooks' fast path: read it with an acquire
 * load (vt_py_maybe); written once, by vt_py_init, with a release store. */
extern int vt__py_ready __attribute__((visibility("hidden")));  /* hidden: one load */

/* Same as vt_py_available, inline (one load): 0 means vt_py_capture would return 0. */
static inline int vt_py_maybe(void)
{
    return __atomic_load_n(&vt__py_ready, __ATOMIC_ACQUIRE);
}

/* Interpreter version found, as 0x030B0000-style PY_VERSION_HEX (major, minor,
 * micro, release), or 0 when none. Thread-safe. */
unsigned long vt_py_version_hex(void);

/* Reads the CALLING thread's Python frames, innermost first, into out[0..max).
 * The thread state comes from PyGILState_GetThisThreadState() (thread-specific
 * storage, documented callable without the GIL), so this works while the
 * thread has released the GIL (ctypes calls, Py_BEGIN_ALLOW_THREADS) and while
 * it holds it. Frames owned by the C stack (3.12+ entry shims) and frames that
 * have not reached their first traceable instruction are skipped.
 * Returns the number of frames written (<= max); 0 when there is no supported
 * interpreter, the thread has no Python thread state or no frames, or anything
 * read fails validation (pointer range/alignment, object type == &PyCode_Type,
 * instruction offset within the code object, more than VT_PY_MAX_WALK frames).
 * Async-signal-safe in practice: loads only (plus pthread_getspecific inside
 * PyGILState_GetThisThreadState); leaves errno unchanged. Thread-safe. */
int vt_py_capture(vt_py_frame *out, int max);

/* Hash of a Python capture py[0..n) as the stack store uses it (vt_stack.c): one
 * multiply-add per frame over (code, instr), folded from the OUTERMOST frame
 * (py[n-1]) inwards, so that a per-thread cache can keep the hash of an unchanged
 * outer chain (vt_py_capture_cached). A function of (code, instr) of each frame and
 * of their order only. n >= 0; 0 frames hash to VT_PY_HASH_SEED. */
#define VT_PY_HASH_SEED 0x2545f4914f6cdd1dULL
#define VT_PY_HASH_K    0x9e3779b97f4a7c15ULL
static inline uint64_t vt_py_hash_step(uint64_t h, const void *code, int32_t instr)
{
    return (h + ((uint64_t)(uintptr_t)code ^ ((uint64_t)(uint32_t)instr << 47))) * VT_PY_HASH_K;
}
static inline uint64_t vt_py_hash(const vt_py_frame *py, int n)
{
    uint64_t h = VT_PY_HASH_SEED;
    for (int i = n - 1; i >= 0; i--)
        h = vt_py_hash_step(h, py[i].code, py[i].instr);
    return h;
}

/* One step of a thread's previous walk (vt_py_cache). Internal to vt_python.c. */
typedef struct vt_py_cstep {
    vt_py_frame rec;                   /* emitted steps: the record (group as then)    */
    const void *fr, *ip, *back;        /* frame; what the walk read of it besides the
                                          code object (rec.code): instruction pointer
                                          (3.10: f_lasti), link to the previous frame */
    uint64_t    hsuf;                  /* vt_py_hash of the emitted frames from the
                                          outermost step up to this one               */
    uint32_t    flags;                 /* owner / is_entry bytes (3.11+), 0 (3.10);
                                          | kind << 16                                 */
    uint8_t     kind;                  /* VT_PY_STEP_*                                 */
    uint8_t     bnd;                   /* emitted: the activation ends below the next  */
    uint16_t    pad;
} vt_py_cstep;

/* A thread's cache of its previous Python capture: every step of that walk (frames
 * skipped included; as far as the walk went), innermost first, with what was read of each frame, so that the
 * next capture of the same thread can reuse the records and the hash of the frames
 * that are provably unchanged. Owned by one thread (not shared; no lock); zeroed
 * memory is an empty cache. About 37 KiB. */
typedef struct vt_py_cache {
    int         valid;                 /* 1: s[0..nsteps) is a whole chain to its end  */
    int         nsteps;
    int         max;                   /* the max of the capture that filled it        */
    int         cooldown;              /* captures left to walk without the cache      */
    uint32_t    win_caps, win_full, win_steps; /* this window: captures, steps walked in
                                          full, all steps                             */
    uint16_t    map[256];              /* frame address hash -> step + 1 (0: none)     */
    vt_py_cstep s[VT_PY_MAX_WALK + 1]; /* + a sentinel after the last step             */
    vt_py_cstep t[VT_PY_MAX_WALK + 1]; /* steps walked in full outside a replay, at
                                          their positions, until a join or the end    */
} vt_py_cache;

/* vt_py_capture with a per-thread cache c (the calling thread's own; zeroed before
 * its first use): writes exactly the frames vt_py_capture would write (same records,
 * same return value) and sets *hash to vt_py_hash(out, returned count). A frame is
 * taken from the cache only when it is at the same address, linked to the same
 * previous frame, holds the same code object, instruction pointer and owner bytes as
 * when the cache was filled, and its code object still has the same co_linetable and
 * co_firstlineno (which the record holds); everything else is walked and validated as
 * vt_py_capture does. Assumed, as vt_py_describe assumes it: a code object at the
 * address of a freed one, with the same co_linetable address and first line, is the
 * same code (its size and first traceable instruction are not read again).
 * Same safety as vt_py_capture (loads only, no lock, no syscall, errno unchanged);
 * the cache is written. Not reentrant on one cache. */
int vt_py_capture_cached(vt_py_cache *c, vt_py_frame *out, int max, uint64_t *hash);

/* Turns a captured frame into its source location. Call outside hooks (the
 * writer thread): it makes syscalls (process_vm_readv, ~1 per object read).
 * Writes NUL-terminated UTF-8 into file[0..file_len) (co_filename) and
 * func[0..func_len) (co_qualname on 3.11+, co_name on 3.10), truncating, and
 * the 1-based source line into *line (co_firstlineno when the instruction has
 * no line, e.g. -1 offsets or "no location" entries).
 * Returns 0 on success; -1 when no interpreter is available, the code object is
 * gone or is no longer the one captured (type, co_linetable or co_firstlineno
 * differ), or a read fails: then file = "?", func = "?", *line = 0.
 * Risk accepted: a code object freed and a NEW code object allocated at the
 * same address with the same co_linetable address and first line would be
 * described as the new one (same function recompiled, in practice).
 * Thread-safe (no shared state). */
int vt_py_describe(const vt_py_frame *f, char *file, size_t file_len,
                   char *func, size_t func_len, int *line);

/* Writes the layout in use as "key=value\n" lines (the keys printed by
 * tests/pystack/py_layout_dump.c) into buf[0..len), NUL-terminated.
 * Returns the length written, or -1 when no interpreter is available.
 * For tests; thread-safe. */
int vt_py_layout_format(char *buf, size_t len);

#endif /* VT_PYTHON_H */
