/* vt_stkcache.h — per-thread cache of the hooks' recent native stacks, reused only
 * when the stack memory proves that a full unwind would give the same pcs.
 *
 * What libunwind's fast trace (the walk behind unw_backtrace, on x86-64) computes is
 * a function of the state it starts from in a frame (pc, stack pointer, rbp) and of
 * the memory words it reads on the way out: each frame's return-address slot (CFA - 8)
 * and the slot its caller's rbp was saved in, when it saved one. A cache entry holds a
 * capture made in one hook (key: the hook, the return address into the program and
 * the hook's CFA, i.e. the program's stack pointer at the call, the depth) together
 * with the address and value of every such word, learned once from a cursor walk
 * (unw_step, unw_get_reg, unw_get_save_loc) over the same frames. A later capture with
 * the same key whose words all still hold those values starts the
 * same walk from the same state through the same memory (the program's rbp in its
 * first frame is read from the hook's save slot, CFA - 16 in every hook: the preload
 * is built with frame pointers, so which hook it is does not matter): its pcs are the entry's,
 * with no unwinding (vt_stkc_lookup). Any other capture unwinds in full
 * (vt_stack_unwind_here) and may then fill an entry (vt_stkc_fill).
 *
 * Entries are made only when the walk can be replayed this way: every frame kept is
 * an ordinary one (no signal frame: its successor is read from a ucontext), each
 * frame's rbp is saved in memory, the stack holds at least depth + 1 frames (a walk
 * that ended early would depend on a read past its last frame), the cursor walk's pcs
 * and slots agree with unw_backtrace's pcs, and every word lies on the thread's own
 * stack (bounds learned when the thread's cache is made; a capture on another stack,
 * such as a coroutine's or a sigaltstack, is neither cached nor served). A frame that
 * looks like GCC's realigned one (its rbp - 8 holds its CFA) adds that word too.
 * dlclose bumps a process-wide generation that makes every entry stale. Several
 * entries may share a key (a helper called from two sites of one function reaches its
 * allocation with the same return address and stack pointer): each is checked alone.
 *
 * What the argument rests on: the fast trace's frames compute their CFA from rsp or
 * rbp (libunwind's "standard" frames; GCC's realigned frames read it back from
 * rbp - 8, covered above), and a frame without unwind information is followed through
 * its saved rbp and return address, which are the words above. A frame whose CFA
 * libunwind computes from another register or from a general DWARF expression (hand-
 * written assembly in the middle of a stack) would make unw_backtrace fall back to its
 * full DWARF walk, which also reads the other callee-saved registers' slots; such a
 * frame is not recognised here. VRAMTRACE_STACK_CHECK=1 compares every hit with a full
 * unwind, for a program one suspects of it.
 *
 * Thread safety: per thread (the cache hangs off vt__tls, initial-exec TLS; no lock).
 * The hooks' depth guard keeps two captures of one thread from nesting, also from a
 * signal handler. The fill's cursor walk is bracketed as vt_stack_unwind_here brackets
 * unw_backtrace (the pipe2 flag, counted for pthread_cancel and for fork: vt_cancel.h),
 * so a fork child knows whether libunwind's locks were held. A thread's cache is freed
 * when the thread exits (a pthread key
 * destructor); after that the thread caches nothing. A fork child keeps the forking
 * thread's cache (the same stack at the same addresses); the other threads' caches
 * stay allocated there, unused.
 */
#ifndef VT_STKCACHE_H
#define VT_STKCACHE_H

#include <stdint.h>

#define VT_STKC_OFF ((struct vt_stkc *)1)   /* vt__tls.stkc: this thread caches nothing */

/* Returns the stack id of the capture that an unwind from the calling hook would make
 * (as vt_stack_capture_hook would return it, Python frames included), or 0 when the
 * cache holds no entry that matches: the caller then unwinds in full. ra: the hook's
 * return address into the program;
 * cfa: its CFA (the program's stack pointer after the call returns); depth: the
 * VRAMTRACE_DEPTH in effect (1..VT_DEPTH_MAX). May return UINT32_MAX (store out of
 * memory) as vt_stack_capture_hook does. Called from the hook's own frame, with no
 * lock held. With VRAMTRACE_STACK_CHECK=1 a hit is also compared with a full unwind
 * (a mismatch is counted, logged once, and answered as a miss). errno may change (the
 * caller keeps it). */
uint32_t vt_stkc_lookup(uintptr_t ra, uintptr_t cfa, int depth);

/* After a full capture in the hook: buf[0..n) are the pcs vt_stack_unwind_here wrote
 * in the hook (n = depth + 1 when the stack was deep enough), id what
 * vt_stack_capture_hook returned for them. Makes an entry when the walk can be
 * replayed (see the top of this file); otherwise nothing. Must be called directly from
 * the hook (its walk goes through the hook's frame). No lock held; may allocate. */
void vt_stkc_fill(uintptr_t ra, uintptr_t cfa, const uintptr_t *buf, int n,
                  int depth, uint32_t id);

/* A module is being or was unloaded (dlclose): every entry of every thread is stale.
 * Any thread; async-signal-safe. */
void vt_stkc_invalidate(void);

/* Counters since start (all threads): captures served from the cache, entries made,
 * and (VRAMTRACE_STACK_CHECK=1) hits compared with a full unwind and those that
 * differed. */
typedef struct vt_stkc_stats {
    uint64_t hits, fills, checked, mismatches;
} vt_stkc_stats;
void vt_stkc_get_stats(vt_stkc_stats *out);

#endif /* VT_STKCACHE_H */
