/* vt_writer.c — snapshot files: creation rules, record formatting, the writer thread
 * (see vt_writer.h and docs/snapshot-format.md).
 *
 * Design: one stream per process. vt_writer_start creates the file and writes the
 * header. Every snapshot goes through vt__snapshot_locked under vt__w.out_lock: it asks
 * the core for a copy (vt_core_collect), writes the module and stack records the copy
 * references that this file does not define yet, then the snapshot record, each as one
 * whole line with write(2). The writer thread sleeps on a semaphore (sem_post is
 * async-signal-safe, so the signal handler can wake it) with a deadline for the
 * periodic snapshot. OOM, manual and exit snapshots are written synchronously by the
 * calling thread: OOM often precedes a crash, and vramtrace_snapshot() returns after
 * the record is on disk. The writer thread never waits for one of those: its own
 * snapshots take out_lock with trylock and retry every 5 ms (vt__own_snapshot), so it
 * keeps applying the hooks' ring events while another thread writes a long list.
 *
 * Sites (format versions 2 and 3): rows, not objects. Periodic and step snapshots list only
 * the sites whose row changed since the previous snapshot of this stream
 * ("sites_delta":true; vt_sitediff.h keeps the previous rows, sorted by key); start,
 * signal, OOM, manual and exit snapshots list every site (complete), so a single such
 * record is readable on its own. All records go through out_lock, so "previous" is the
 * previous record in the file. Version 3: a delta record writes each listed row as
 * its differences from the site's previous row, trailing zeros left out (a churning
 * site's row shrinks from ~57 to ~20 bytes; issue 7 figure 7).
 *
 * Steps: without vramtrace_step() marks, each periodic snapshot that is written
 * closes a step (the core's step counter advances); periodic snapshots are skipped
 * when nothing changed since the previous snapshot. With marks, a "step" snapshot is
 * written every VRAMTRACE_STEP_EVERY marks and only those close steps for the online
 * leak detector. Step snapshots are written synchronously by the thread that calls
 * vramtrace_step(), so every step is a point of the curve however fast steps come.
 */
#define _GNU_SOURCE
#include "vt_writer.h"
#include "vt_annot.h"
#include "vt_buf.h"
#include "vt_config.h"
#include "vt_core.h"
#include "vt_fd.h"
#include "vt_host.h"
#include "vt_log.h"
#include "vt_modules.h"
#include "vt_sitediff.h"
#include "vt_stack.h"
#include "vt_format.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define VT_FRAG_MAX_LIVE 262144   /* periodic fragmentation only up to this many live */

void (*vt_writer_refresh)(void);

/* A set of small dense ids (stack ids, site ids): one byte each, grown on demand. */
typedef struct vt__idset {
    uint8_t *on;
    size_t   cap;
} vt__idset;

static struct {
    pthread_mutex_t start_lock;   /* serialises start / fork                            */
    pthread_mutex_t out_lock;     /* serialises records and per-file state below        */
    int       state;              /* atomic: 0 not started, 1 open, -1 failed           */
    int       fd;                 /* under out_lock; high number (vt_fd.h)               */
    dev_t     dev;                /* under out_lock: the file fd must refer to           */
    ino_t     ino;
    char      path[PATH_MAX];     /* under start_lock, then constant                    */
    pthread_t thread;
    int       thread_running;     /* under start_lock                                    */
    sem_t     wake;               /* posted by kicks, the signal handler, stop          */
    volatile sig_atomic_t sig_pending;
    int       step_pending;       /* atomic                                             */
    int       stop;               /* atomic                                             */
    int       exiting;            /* atomic: exit has begun                             */
    uint64_t  seq;                /* under out_lock: last snapshot sequence number      */
    uint64_t  last_changes;       /* under out_lock: core changes at the last snapshot  */
    uint64_t  oom_classes;        /* atomic: size classes already written (bit i)       */
    vt__idset stk_written;        /* under out_lock: stack ids defined in this file     */
    vt__idset site_written;       /* under out_lock: site ids defined in this file      */
    vt_buf    buf;                /* under out_lock                                      */
    vt_sitediff sites;            /* under out_lock: previous record's site rows (delta) */
    uint64_t  per_n, per_sum_ns, per_max_ns;   /* atomic: periodic snapshots the writer
                                                  thread wrote, and how long each took */
    int       sig;                /* signal installed (0 none)                          */
} vt__w = {
    .start_lock = PTHREAD_MUTEX_INITIALIZER,
    .out_lock = PTHREAD_MUTEX_INITIALIZER,
    .fd = -1,
};

/* ---- small helpers ---- */

static uint64_t vt__realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Reads a small file (/proc/self/cmdline) into buf; returns bytes read (0 on error). */
static size_t vt__read_file(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    size_t n = 0;
    while (n < cap) {
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    return n;
}

/* Creates dir and missing parents with mode 0700. Returns 0 or -1 (errno). */
static int vt__mkdirs(const char *dir)
{
    char tmp[PATH_MAX];
    size_t n = strlen(dir);
    if (n == 0 || n >= sizeof tmp) {
        errno = ENAMETOOLONG;
        return -1;
    }
    memcpy(tmp, dir, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (tmp[i] != '/' && tmp[i] != 0)
            continue;
        char c = tmp[i];
        tmp[i] = 0;
        if (mkdir(tmp, 0700) < 0) {
            if (errno != EEXIST)
                return -1;
        } else {
            chmod(tmp, 0700);   /* ours: 0700 whatever the program's umask (0777 too) */
        }
        tmp[i] = c;
    }
    struct stat st;
    if (stat(dir, &st) < 0)
        return -1;
    if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return 0;
}

static int vt__write_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Makes sure vt__w.fd still refers to our snapshot file (dev+ino). The program may
 * have closed it (a daemon's close-all) or put its own file at that number (dup2):
 * then our file is reopened by path (O_APPEND|O_NOFOLLOW, the same dev+ino) and moved
 * high; the program's descriptor is left alone. Returns 0, or -1 (errno) when our
 * file cannot be reached any more (removed or renamed). Under out_lock. */
static int vt__fd_check(void)
{
    if (vt_fd_is(vt__w.fd, vt__w.dev, vt__w.ino))
        return 0;
    vt__w.fd = -1;   /* not ours (any more): never written to, never closed */
    int fd = open(vt__w.path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return -1;
    if (!vt_fd_is(fd, vt__w.dev, vt__w.ino)) {
        close(fd);
        errno = ENOENT;   /* another file under our name: ours was removed */
        return -1;
    }
    vt__w.fd = vt_fd_move_high(fd);
    vt_log(VT_LOG_DEBUG, "snapshot descriptor was closed or replaced by the program; reopened %s",
           vt__w.path);
    return 0;
}

/* Writes the buffer as one record; on failure latches off. Under out_lock. */
static int vt__flush(void)
{
    vt_buf *b = &vt__w.buf;
    if (b->oom) {
        vt_buf_reset(b);
        return -ENOMEM;
    }
    if (vt__w.fd < 0) {
        vt_buf_reset(b);
        return -EIO;
    }
    int rc = 0;
    struct stat st;
    int gone = 0;   /* the file (or its folder) was removed: records would go nowhere */
    if ((gone = vt__fd_check() < 0) || vt__write_all(vt__w.fd, b->p, b->len) < 0 ||
        (gone = fstat(vt__w.fd, &st) == 0 && st.st_nlink == 0)) {
        int e = errno;
        char why[PATH_MAX + 64];
        size_t pl = strlen(vt__w.path);
        if (pl > PATH_MAX - 1) pl = PATH_MAX - 1;
        memcpy(why, "cannot write ", 13);
        memcpy(why + 13, vt__w.path, pl);
        why[13 + pl] = 0;
        strcat(why, ": ");
        strcat(why, gone ? "the file was removed" : strerror(e));
        vt_core_latch_off(why);
        if (vt_fd_is(vt__w.fd, vt__w.dev, vt__w.ino))
            close(vt__w.fd);
        vt__w.fd = -1;
        __atomic_store_n(&vt__w.state, -1, __ATOMIC_RELEASE);
        rc = -EIO;
    }
    vt_buf_reset(b);
    return rc;
}

/* ---- records ---- */

static void vt__kv_int_env(vt_buf *b, const char *key, const char *env)
{
    vt_buf_cstr(b, key);
    const char *v = getenv(env);
    char *end = NULL;
    long long n = v && *v ? strtoll(v, &end, 10) : 0;
    if (v && *v && end && *end == 0)
        vt_buf_i64(b, n);
    else
        vt_buf_cstr(b, "null");
}

static void vt__format_header(vt_buf *b, uint64_t start_ns)
{
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;
    vt_buf_cstr(b, "{\"t\":\"header\",\"format\":\"" VT_FORMAT_NAME "\",\"version\":");
    vt_buf_u64(b, VT_FORMAT_VERSION);
    vt_buf_cstr(b, ",\"pid\":");
    vt_buf_u64(b, (uint64_t)getpid());
    vt_buf_cstr(b, ",\"ppid\":");
    vt_buf_u64(b, (uint64_t)getppid());
    vt_buf_cstr(b, ",\"host\":");
    vt_buf_jstr(b, host, 0);
    vt_buf_cstr(b, ",\"exe\":");
    vt_buf_jstr(b, exe, 0);
    vt_buf_cstr(b, ",\"cmdline\":[");
    static char cmd[65536];
    size_t len = vt__read_file("/proc/self/cmdline", cmd, sizeof cmd - 1);
    cmd[len] = 0;
    for (size_t i = 0; i < len;) {
        if (i)
            vt_buf_put(b, ",", 1);
        vt_buf_jstr(b, cmd + i, 0);
        i += strlen(cmd + i) + 1;
    }
    vt_buf_cstr(b, "]");
    vt__kv_int_env(b, ",\"rank\":", "RANK");
    vt__kv_int_env(b, ",\"local_rank\":", "LOCAL_RANK");
    vt__kv_int_env(b, ",\"world_size\":", "WORLD_SIZE");
    vt_buf_cstr(b, ",\"start_ns\":");
    vt_buf_u64(b, start_ns);
    vt_buf_cstr(b, ",\"clock\":\"CLOCK_MONOTONIC\",\"mono_start_ns\":");
    vt_buf_u64(b, vt_now_ns());
    vt_buf_cstr(b, ",\"depth\":");
    vt_buf_u64(b, (uint64_t)vt__config.depth);
    vt_buf_cstr(b, ",\"interval_ms\":");
    vt_buf_u64(b, (uint64_t)vt__config.interval_ms);
    vt_buf_cstr(b, ",\"step_every\":");
    vt_buf_u64(b, (uint64_t)vt__config.step_every);
    vt_buf_cstr(b, ",\"leak_steps\":");
    vt_buf_u64(b, (uint64_t)vt__config.leak_steps);
    vt_buf_cstr(b, "}\n");
}

static int vt__idset_has(const vt__idset *set, uint32_t id)
{
    return id < set->cap && set->on[id];
}

static void vt__idset_add(vt__idset *set, uint32_t id)
{
    if (id >= set->cap) {
        size_t cap = set->cap ? set->cap : 1024;
        while (cap <= id)
            cap *= 2;
        uint8_t *p = realloc(set->on, cap);
        if (!p)
            return;  /* defined again next time (readers accept an identical site again) */
        memset(p + set->cap, 0, cap - set->cap);
        set->on = p;
        set->cap = cap;
    }
    set->on[id] = 1;
}

static void vt__idset_clear(vt__idset *set)
{
    if (set->on)   /* NULL before the first id: memset(NULL, 0, 0) is UB */
        memset(set->on, 0, set->cap);
}

static int vt__stack_is_written(uint32_t id)
{
    return vt__idset_has(&vt__w.stk_written, id);
}

static void vt__stack_mark_written(uint32_t id)
{
    vt__idset_add(&vt__w.stk_written, id);
}

/* Appends ,"py":[[file,function,line,native_index],...] for the Python frames of
 * stack id (nothing when it has none). native_index: the native frame (index into
 * pcs) of the interpreter eval loop (_PyEval_EvalFrameDefault) that runs the
 * frame's activation (vt_py_frame.group: the g-th eval frame counted from the
 * innermost), -1 when the native stack was cut before it. Under out_lock. */
static void vt__define_py(vt_buf *b, uint32_t id, const uintptr_t *pcs, int n)
{
    const vt_py_frame *py = NULL;
    int npy = 0;
    if (vt_stack_get_py(id, &py, &npy) < 0 || npy == 0)
        return;
    int evals[VT_DEPTH_MAX], nev = 0;
    for (int i = 0; i < n && nev < VT_DEPTH_MAX; i++) {
        const char *fn = vt_modules_symbol(pcs[i] - 1);
        if (fn && !strcmp(fn, "_PyEval_EvalFrameDefault"))
            evals[nev++] = i;
    }
    vt_buf_cstr(b, ",\"py\":[");
    for (int i = 0; i < npy; i++) {
        char file[1024], func[256];
        int line;
        vt_py_describe(&py[i], file, sizeof file, func, sizeof func, &line);
        if (i)
            vt_buf_put(b, ",", 1);
        vt_buf_put(b, "[", 1);
        vt_buf_jstr(b, file, 1024);
        vt_buf_put(b, ",", 1);
        vt_buf_jstr(b, func, 256);
        vt_buf_put(b, ",", 1);
        vt_buf_u64(b, (uint64_t)(line > 0 ? line : 0));
        if (py[i].group < (uint32_t)nev) {
            vt_buf_put(b, ",", 1);
            vt_buf_u64(b, (uint64_t)evals[py[i].group]);
        } else {
            vt_buf_cstr(b, ",-1");
        }
        vt_buf_put(b, "]", 1);
    }
    vt_buf_put(b, "]", 1);
}

/* Appends the module and stack records that stack `id` needs. Under out_lock. */
static void vt__define_stack(vt_buf *b, uint32_t id)
{
    if (vt__stack_is_written(id))
        return;
    const uintptr_t *pcs = NULL;
    int n = 0;
    if (vt_stack_get(id, &pcs, &n) < 0)
        n = 0;
    /* modules first */
    for (int i = 0; i < n; i++) {
        vt_module *m = vt_modules_find(pcs[i] - 1);
        if (!m || m->written)
            continue;
        vt_buf_cstr(b, "{\"t\":\"module\",\"id\":");
        vt_buf_u64(b, (uint64_t)m->id);
        vt_buf_cstr(b, ",\"path\":");
        vt_buf_jstr(b, m->path, 0);
        vt_buf_cstr(b, ",\"build_id\":\"");
        vt_buf_cstr(b, m->build_id);
        vt_buf_cstr(b, "\",\"bias\":");
        vt_buf_u64(b, (uint64_t)m->bias);
        vt_buf_cstr(b, "}\n");
        m->written = 1;
    }
    vt_buf_cstr(b, "{\"t\":\"stack\",\"id\":");
    vt_buf_u64(b, id);
    vt_buf_cstr(b, ",\"frames\":[");
    for (int i = 0; i < n; i++) {
        /* Every captured pc is a return address. The first frame is written as
         * pc - 1 (inside the call instruction) so that it is looked up as is; the
         * others are return addresses that readers look up at offset - 1. */
        uintptr_t pc = i == 0 ? pcs[i] - 1 : pcs[i];
        vt_module *m = vt_modules_find(pcs[i] - 1);
        if (i)
            vt_buf_put(b, ",", 1);
        vt_buf_put(b, "[", 1);
        if (m) {
            vt_buf_u64(b, (uint64_t)m->id);
            vt_buf_put(b, ",", 1);
            vt_buf_u64(b, (uint64_t)(pc - m->bias));
        } else {
            vt_buf_cstr(b, "-1,");
            vt_buf_u64(b, (uint64_t)pc);
        }
        vt_buf_put(b, ",", 1);
        vt_buf_jstr(b, vt_modules_symbol(pcs[i] - 1), 512);
        vt_buf_put(b, "]", 1);
    }
    vt_buf_put(b, "]", 1);
    vt__define_py(b, id, pcs, n);
    vt_buf_cstr(b, "}\n");
    vt__stack_mark_written(id);
}

static void vt__kv_u64(vt_buf *b, const char *key, uint64_t v)
{
    vt_buf_cstr(b, key);
    vt_buf_u64(b, v);
}

static void vt__format_kinds(vt_buf *b, const vt_dev_stats *d)
{
    vt_buf_cstr(b, ",\"kinds\":{");
    for (int k = 0; k < VT_KIND_COUNT; k++) {
        const vt_kind_stats *s = &d->kinds[k];
        if (k)
            vt_buf_put(b, ",", 1);
        vt_buf_put(b, "\"", 1);
        vt_buf_cstr(b, vt_kind_name(k));
        vt__kv_u64(b, "\":{\"live_bytes\":", s->live_bytes);
        vt__kv_u64(b, ",\"live_count\":", s->live_count);
        vt__kv_u64(b, ",\"peak_bytes\":", s->peak_bytes);
        vt__kv_u64(b, ",\"alloc_total\":", s->alloc_total);
        vt__kv_u64(b, ",\"free_total\":", s->free_total);
        vt__kv_u64(b, ",\"failed_total\":", s->failed_total);
        vt__kv_u64(b, ",\"oom_total\":", s->oom_total);
        vt__kv_u64(b, ",\"alloc_bytes_total\":", s->alloc_bytes_total);
        vt_buf_put(b, "}", 1);
    }
    vt_buf_put(b, "}", 1);
}

/* The kind and device: keyed, `,"kind":"<kind>","device":<device>` (objects); not
 * keyed, `,"<kind>",<device>` (the columns of a positional row). */
static void vt__kind_device(vt_buf *b, int kind, int device, int keyed)
{
    vt_buf_cstr(b, keyed ? ",\"kind\":\"" : ",\"");
    vt_buf_cstr(b, vt_kind_name(kind));
    vt_buf_cstr(b, keyed ? "\",\"device\":" : "\",");
    vt_buf_i64(b, device);
}

/* {"stack":N,"kind":"...","device":D  — the key of a site row (left open). */
static void vt__site_key(vt_buf *b, const vt_site_row *s)
{
    vt__kv_u64(b, "{\"stack\":", s->stack);
    vt__kind_device(b, s->kind, s->device, 1);
}

/* Site definitions (format version 3): {"t":"site","id":N,"stack":S,"kind":"...",
 * "device":D}, written once per file before the first row that uses site N. */
static void vt__define_site(vt_buf *b, const vt_site_row *s)
{
    if (vt__idset_has(&vt__w.site_written, s->id))
        return;
    vt__kv_u64(b, "{\"t\":\"site\",\"id\":", s->id);
    vt__kv_u64(b, ",\"stack\":", s->stack);
    vt__kind_device(b, s->kind, s->device, 1);
    vt_buf_cstr(b, "}\n");
    vt__idset_add(&vt__w.site_written, s->id);
}

/* A row's counters indexed by their version 2 column (VT_SITE_*; the key columns 0). */
static void vt__site_cols(const vt_site_row *s, uint64_t col[VT_SITE_NCOLS])
{
    const uint64_t c[VT_SITE_NCOLS] = {
        [VT_SITE_LIVE_BYTES] = s->live_bytes,       [VT_SITE_LIVE_COUNT] = s->live_count,
        [VT_SITE_INTERVAL_PEAK_BYTES] = s->interval_peak_bytes,
        [VT_SITE_ALLOC_TOTAL] = s->alloc_total,     [VT_SITE_ALLOC_BYTES_TOTAL] = s->alloc_bytes_total,
        [VT_SITE_FREE_TOTAL] = s->free_total,       [VT_SITE_GROWTH_STEPS] = s->growth_steps,
        [VT_SITE_GROWTH_BYTES] = s->growth_bytes };
    memcpy(col, c, sizeof c);
}

/* One row of "sites", version 3 (docs/snapshot-format.md "sites"): [site id, then
 * the counters in VT_SITE3_ORDER]. delta 0: all 9 columns, absolute (complete
 * records). delta 1: each counter minus its value in prev (the site's row in the
 * previous record; NULL = 0), signed, without the trailing zeros: a site that
 * allocated and freed a temporary since the previous record is [id,1,size,1]. */
static void vt__site_row(vt_buf *b, const vt_site_row *s, int delta, const vt_site_row *prev)
{
    /* one room check per row, not per field: a periodic snapshot of 10,000 changed
     * sites formats 90,000 numbers (issue 7 figure 5) */
    if (!vt_buf_reserve(b, VT_SITE3_NCOLS * (VT_BUF_U64_MAX + 2) + 4))
        return;
    char *p = b->p + b->len, *p0 = p;
    *p++ = '[';
    p += vt_buf_u64_at(p, s->id);
    static const int order[8] = VT_SITE3_ORDER;
    uint64_t cur[VT_SITE_NCOLS], old[VT_SITE_NCOLS] = { 0 }, v[8];
    vt__site_cols(s, cur);
    if (delta && prev)
        vt__site_cols(prev, old);
    for (int i = 0; i < 8; i++)
        v[i] = cur[order[i]] - old[order[i]];
    int n = 8;                 /* a difference is the two's complement of the signed value */
    if (delta)
        while (n > 0 && v[n - 1] == 0)
            n--;
    for (int i = 0; i < n; i++) {
        *p++ = ',';
        if (delta && (int64_t)v[i] < 0) {
            *p++ = '-';
            p += vt_buf_u64_at(p, (uint64_t)0 - v[i]);
        } else {
            p += vt_buf_u64_at(p, v[i]);
        }
    }
    *p++ = ']';
    b->len += (size_t)(p - p0);
}

void (*vt_writer_test_held)(const char *trigger);   /* vt_writer.h: tests only */

/* The one place a snapshot is built and written. Under out_lock. */
static int vt__snapshot_locked(const char *trigger, const char *label, const vt_oom_info *oom)
{
    void (*held)(const char *) = __atomic_load_n(&vt_writer_test_held, __ATOMIC_ACQUIRE);
    if (held)
        held(trigger);
    if (!vt_core_enabled() || vt__w.fd < 0)
        return -ECANCELED;
    int periodic = !strcmp(trigger, VT_TRIGGER_PERIODIC);
    int is_step = !strcmp(trigger, VT_TRIGGER_STEP);
    int is_exit = !strcmp(trigger, VT_TRIGGER_EXIT);
    int want_allocs = is_exit || !strcmp(trigger, VT_TRIGGER_OOM) ||
                      !strcmp(trigger, VT_TRIGGER_SIGNAL) || !strcmp(trigger, VT_TRIGGER_MANUAL);
    /* a periodic snapshot is of the state as applied (the writer applies the ring's
     * events every VT_RING_KICK of them); every other one applies them first */
    uint64_t changes = periodic ? vt_core_changes_applied() : vt_core_changes();
    if (periodic && changes == vt__w.last_changes && vt__w.seq > 0)
        return 0;  /* nothing changed: skipped */
    unsigned flags = periodic ? VT_COLLECT_APPLIED : 0;
    if (is_step)
        flags |= VT_COLLECT_STEP;
    if (periodic && vt_core_advance_unmarked_step())
        flags |= VT_COLLECT_STEP;
    if (want_allocs)
        flags |= VT_COLLECT_ALLOCS | VT_COLLECT_FRAG;
    else if ((periodic ? vt_core_live_count_applied() : vt_core_live_count()) <= VT_FRAG_MAX_LIVE)
        flags |= VT_COLLECT_FRAG;
    vt_collect c;
    if (vt_core_collect(&c, flags, vt__config.leak_steps) < 0)
        return -ENOMEM;
    vt__w.last_changes = c.changes;
    vt_buf *b = &vt__w.buf;
    vt_buf_reset(b);
    /* periodic and step records list only changed sites (vt_sitediff.h) */
    vt_sitediff_sort(c.sites, c.n_sites);
    int delta = (periodic || is_step) && vt_sitediff_can_delta(&vt__w.sites, c.sites, c.n_sites);

    /* definitions first: stacks, then the sites that use them */
    for (size_t i = 0; i < c.n_sites; i++)
        vt__define_stack(b, c.sites[i].stack);
    for (size_t i = 0; i < c.n_sites; i++)
        vt__define_site(b, &c.sites[i]);
    for (size_t i = 0; i < c.n_allocs; i++)
        vt__define_stack(b, c.allocs[i].stack);
    if (oom)
        vt__define_stack(b, oom->stack);
    int rc = 0;
    if (b->len)
        rc = vt__flush();
    if (rc == -ENOMEM)   /* the definitions were marked written but never were: a later
                          * row would name an undefined stack or site (vt_core.h latch) */
        vt_core_latch_off("out of memory for the snapshot buffer");
    if (rc < 0) {
        vt_sitediff_reset(&vt__w.sites);
        vt_collect_free(&c);
        return rc;
    }

    vt_buf_cstr(b, "{\"t\":\"snapshot\"");
    vt__kv_u64(b, ",\"seq\":", ++vt__w.seq);
    vt_buf_cstr(b, ",\"trigger\":\"");
    vt_buf_cstr(b, trigger);
    vt_buf_cstr(b, "\",\"label\":");
    vt_buf_jstr(b, label, 1024);
    vt__kv_u64(b, ",\"time_ns\":", vt_now_ns());
    vt__kv_u64(b, ",\"step\":", c.step);
    vt_buf_cstr(b, c.step_marked ? ",\"step_marked\":true" : ",\"step_marked\":false");
    vt_buf_cstr(b, ",\"devices\":[");
    for (int i = 0; i < c.n_devs; i++) {
        const vt_dev_stats *d = &c.devs[i];
        if (i)
            vt_buf_put(b, ",", 1);
        vt_buf_cstr(b, "{\"device\":");
        vt_buf_i64(b, d->device);
        vt_buf_cstr(b, ",\"free_bytes\":");
        if (d->meminfo_known) vt_buf_u64(b, d->free_bytes); else vt_buf_cstr(b, "null");
        vt_buf_cstr(b, ",\"total_bytes\":");
        if (d->meminfo_known) vt_buf_u64(b, d->total_bytes); else vt_buf_cstr(b, "null");
        vt__kv_u64(b, ",\"live_bytes\":", d->live_bytes);
        vt__kv_u64(b, ",\"peak_bytes\":", d->peak_bytes);
        vt_buf_cstr(b, ",\"fragmentation\":");
        vt_buf_fixed6(b, d->fragmentation);
        vt_buf_cstr(b, ",\"pool_reserved_bytes\":");
        if (d->pool_known) vt_buf_u64(b, d->pool_reserved_bytes); else vt_buf_cstr(b, "null");
        vt__kv_u64(b, ",\"pool_used_bytes\":", d->pool_used_bytes);
        vt__format_kinds(b, d);
        vt_buf_put(b, "}", 1);
    }
    vt_buf_cstr(b, delta ? "],\"" VT_SITES_DELTA_KEY "\":true,\"sites\":["
                         : "],\"" VT_SITES_DELTA_KEY "\":false,\"sites\":[");
    size_t cursor = 0;
    int nrows = 0;
    for (size_t i = 0; i < c.n_sites; i++) {
        const vt_site_row *s = &c.sites[i], *prev = NULL;
        if (delta && !vt_sitediff_changed(&vt__w.sites, s, &cursor, &prev))
            continue;
        if (nrows++)
            vt_buf_put(b, ",", 1);
        vt__site_row(b, s, delta, prev);
    }
    vt_buf_cstr(b, "],\"leak_warnings\":[");
    int nw = 0;
    for (size_t i = 0; i < c.n_sites; i++) {
        const vt_site_row *s = &c.sites[i];
        if (!s->leak_warn)
            continue;
        if (nw++)
            vt_buf_put(b, ",", 1);
        vt__site_key(b, s);
        vt__kv_u64(b, ",\"growth_steps\":", s->growth_steps);
        vt__kv_u64(b, ",\"growth_bytes_per_step\":", s->growth_steps ? s->growth_bytes / s->growth_steps : 0);
        vt_buf_put(b, "}", 1);
    }
    vt_buf_cstr(b, "],\"oom\":");
    if (oom) {
        vt_buf_cstr(b, "{\"api\":");
        vt_buf_jstr(b, oom->api, 0);
        vt__kind_device(b, oom->kind, oom->device, 1);
        /* the one integer the program chooses (cudaMalloc(&p, (size_t)-1)): clamped to
         * 2^63-1 like every integer of the format (docs/snapshot-format.md "Records"),
         * or no reader with signed 64-bit integers reads the file past this line */
        vt__kv_u64(b, ",\"requested_bytes\":", oom->requested > (uint64_t)INT64_MAX ? (uint64_t)INT64_MAX
                                                                                   : oom->requested);
        vt_buf_cstr(b, ",\"result\":");
        vt_buf_i64(b, oom->result);
        vt_buf_cstr(b, ",\"free_bytes\":");
        if (oom->meminfo_ok) vt_buf_u64(b, oom->free_bytes); else vt_buf_cstr(b, "null");
        vt_buf_cstr(b, ",\"total_bytes\":");
        if (oom->meminfo_ok) vt_buf_u64(b, oom->total_bytes); else vt_buf_cstr(b, "null");
        vt__kv_u64(b, ",\"tracked_bytes\":", vt_core_live_bytes(oom->device));
        vt__kv_u64(b, ",\"stack\":", oom->stack);
        vt_buf_put(b, "}", 1);
    } else {
        vt_buf_cstr(b, "null");
    }
    vt_buf_cstr(b, ",\"allocations\":");
    if (want_allocs && !c.rows_failed) {
        vt_buf_put(b, "[", 1);
        for (size_t i = 0; i < c.n_allocs; i++) {
            const vt_alloc_row *a = &c.allocs[i];
            if (i)
                vt_buf_put(b, ",", 1);
            vt__kv_u64(b, "[", a->addr);
            vt__kv_u64(b, ",", a->size);
            vt__kind_device(b, a->kind, a->device, 0);
            vt__kv_u64(b, ",", a->stack);
            vt__kv_u64(b, ",", a->step);
            vt__kv_u64(b, ",", a->birth_ns);
            vt_buf_put(b, ",", 1);
            vt_buf_i64(b, a->tid);
            vt__kv_u64(b, ",", a->stream);
            vt_buf_put(b, "]", 1);
        }
        vt_buf_put(b, "]", 1);
    } else {
        vt_buf_cstr(b, "null");
    }
    vt_buf_cstr(b, is_exit ? ",\"unfreed_at_exit\":true" : ",\"unfreed_at_exit\":false");
    vt__kv_u64(b, ",\"dropped_records\":", c.dropped_records);
    vt_annot_format(b);
    vt_host_format(b, &c, trigger);   /* "host" object + Prometheus textfile (vt_host.h) */
    vt_buf_cstr(b, "}\n");
    rc = vt__flush();
    if (rc == 0)
        vt_sitediff_commit(&vt__w.sites, c.sites, c.n_sites);
    else
        vt_sitediff_reset(&vt__w.sites);

    /* one line per site that crossed the leak threshold, once per site */
    for (size_t i = 0; rc == 0 && i < c.n_sites; i++) {
        const vt_site_row *s = &c.sites[i];
        if (!s->leak_new)
            continue;
        const uintptr_t *pcs = NULL;
        int n = 0;
        char where[512] = "unknown frame";
        if (vt_stack_get(s->stack, &pcs, &n) == 0) {
            for (int f = 0; f < n; f++) {
                vt_module *m = vt_modules_find(pcs[f] - 1);
                if (m && (strstr(m->path, "libcudart") || strstr(m->path, "libcuda.so")))
                    continue;
                const char *fn = vt_modules_symbol(pcs[f] - 1);
                if (fn) {
                    strncpy(where, fn, sizeof where - 1);
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
        if (vt_stack_get_py(s->stack, &py, &npy) == 0 && npy > 0 &&
            vt_py_describe(&py[0], file, sizeof file, func, sizeof func, &line) == 0)
            snprintf(where, sizeof where, "%.300s:%d in %.180s", file, line, func);
        vt_log(VT_LOG_WARN, "possible leak: %s growing %llu bytes/step for %u steps (%s, device %d, stack %u)",
               where, (unsigned long long)(s->growth_steps ? s->growth_bytes / s->growth_steps : 0),
               s->growth_steps, vt_kind_name(s->kind), s->device, s->stack);
    }
    vt_collect_free(&c);
    return rc;
}

/* ---- the writer thread ---- */

static void vt__on_signal(int sig)
{
    (void)sig;
    int e = errno;
    __atomic_store_n(&vt__w.sig_pending, 1, __ATOMIC_RELEASE);  /* lock-free: signal-safe */
    sem_post(&vt__w.wake);
    errno = e;
}

static void vt__refresh(const char *trigger)
{
    (void)trigger;
    if (vt_writer_refresh && !vt_writer_is_exiting())
        vt_writer_refresh();
}

/* Counts a periodic snapshot the writer thread wrote in ns (vt_writer_periodic_stats). */
static void vt__periodic_done(uint64_t ns)
{
    __atomic_add_fetch(&vt__w.per_n, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&vt__w.per_sum_ns, ns, __ATOMIC_RELAXED);
    uint64_t m = __atomic_load_n(&vt__w.per_max_ns, __ATOMIC_RELAXED);
    while (ns > m && !__atomic_compare_exchange_n(&vt__w.per_max_ns, &m, ns, 1, __ATOMIC_RELAXED,
                                                  __ATOMIC_RELAXED))
        ;
}

void vt_writer_periodic_stats(uint64_t *n, uint64_t *sum_ns, uint64_t *max_ns, int reset)
{
    *n = reset ? __atomic_exchange_n(&vt__w.per_n, 0, __ATOMIC_RELAXED) : __atomic_load_n(&vt__w.per_n, __ATOMIC_RELAXED);
    *sum_ns = reset ? __atomic_exchange_n(&vt__w.per_sum_ns, 0, __ATOMIC_RELAXED)
                    : __atomic_load_n(&vt__w.per_sum_ns, __ATOMIC_RELAXED);
    *max_ns = reset ? __atomic_exchange_n(&vt__w.per_max_ns, 0, __ATOMIC_RELAXED)
                    : __atomic_load_n(&vt__w.per_max_ns, __ATOMIC_RELAXED);
}

/* The writer thread's own snapshots (signal, step, periodic) never wait for out_lock:
 * another thread writing a snapshot (manual, OOM, a full live list: 0.3-0.6 s at
 * 1,000,000 live) may hold it, and the thread must go on draining the event ring
 * meanwhile, or the hooks find the ring full and apply events themselves (issue 7
 * figure 5; bench_core stall ... --rate). A snapshot that finds it held is tried again
 * VT_W_RETRY_NS later; the other thread's record is written meanwhile. Returns 1
 * when done (written, skipped as unchanged, or failed: the file latched off), 0 to
 * try again (periodic: counted in vt_writer_periodic_stats when written). */
#define VT_W_RETRY_NS 5000000ull   /* 5 ms */

static int vt__own_snapshot(const char *trigger, int periodic)
{
    vt__refresh(trigger);   /* outside out_lock: it calls the driver */
    if (pthread_mutex_trylock(&vt__w.out_lock) != 0)
        return 0;
    uint64_t t0 = vt_now_ns(), seq0 = vt__w.seq;
    int wrote = vt__snapshot_locked(trigger, NULL, NULL) == 0 && vt__w.seq != seq0;
    pthread_mutex_unlock(&vt__w.out_lock);
    if (wrote && periodic)
        vt__periodic_done(vt_now_ns() - t0);
    return 1;
}

static void *vt__writer_main(void *arg)
{
    (void)arg;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);   /* our thread, our locks */
    uint64_t interval = (uint64_t)vt__config.interval_ms * 1000000ull;
    uint64_t deadline = vt_now_ns() + (interval ? interval : 3600ull * 1000000000ull);
    int retry = 0;   /* a snapshot found out_lock held: wake again in VT_W_RETRY_NS */
    while (!__atomic_load_n(&vt__w.stop, __ATOMIC_ACQUIRE)) {
        vt_host_tick();   /* UUIDs, NVML sample, textfile (vt_host.h); outside every lock */
        uint64_t wake = deadline, now = vt_now_ns();
        /* a retry sleeps VT_W_RETRY_NS, or up to a deadline that comes sooner; not to
         * a deadline already past (a periodic snapshot waiting for the lock): that
         * would time out at once, over and over, a busy loop for as long as the
         * other snapshot takes */
        if (retry && (wake <= now || wake > now + VT_W_RETRY_NS))
            wake = now + VT_W_RETRY_NS;
        retry = 0;
        struct timespec ts = { (time_t)(wake / 1000000000ull), (long)(wake % 1000000000ull) };
        sem_clockwait(&vt__w.wake, CLOCK_MONOTONIC, &ts);
        if (__atomic_load_n(&vt__w.stop, __ATOMIC_ACQUIRE))
            break;
        vt_core_drain();   /* the hooks' ring events (woken every VT_RING_KICK of them) */
        vt_core_frag_keep();   /* fragmentation kept up to date between snapshots */
        /* set by the handler on another thread, and by vramtrace_step */
        if (__atomic_exchange_n(&vt__w.sig_pending, 0, __ATOMIC_ACQ_REL) &&
            !vt__own_snapshot(VT_TRIGGER_SIGNAL, 0)) {
            __atomic_store_n(&vt__w.sig_pending, 1, __ATOMIC_RELEASE);
            retry = 1;
        }
        if (__atomic_exchange_n(&vt__w.step_pending, 0, __ATOMIC_ACQ_REL) &&
            !vt__own_snapshot(VT_TRIGGER_STEP, 0)) {
            __atomic_store_n(&vt__w.step_pending, 1, __ATOMIC_RELEASE);
            retry = 1;
        }
        if (vt_now_ns() >= deadline) {
            if (interval && !vt__own_snapshot(VT_TRIGGER_PERIODIC, 1))
                retry = 1;   /* the deadline stays: due as soon as out_lock is free */
            else
                deadline = vt_now_ns() + (interval ? interval : 3600ull * 1000000000ull);
        }
        if (!vt_core_enabled())
            break;
    }
    return NULL;
}

/* ---- public ---- */

/* Threat model: the output folder may sit in a shared, world-writable place (/tmp)
 * where another user planted a symbolic link, or a folder of their own, at its name
 * before the run, to collect or tamper with the snapshots. The folder is used only if
 * it is owned by us (or root), is not writable by others unless sticky, and, if the
 * name is a symbolic link, the link is ours (or root's). Files are then created new
 * (O_EXCL|O_NOFOLLOW, 0600), so nothing existing is ever opened or overwritten.
 * Returns NULL when safe, else what is wrong. */
static const char *vt__dir_unsafe(const char *dir)
{
    struct stat ls, st;
    uid_t me = geteuid();
    if (lstat(dir, &ls) < 0 || stat(dir, &st) < 0)
        return "cannot be examined";
    if (S_ISLNK(ls.st_mode) && ls.st_uid != me && ls.st_uid != 0)
        return "a symbolic link owned by another user";
    if (st.st_uid != me && st.st_uid != 0)
        return "owned by another user";
    if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX))
        return "writable by others";
    return NULL;
}

static int vt__open_file(void)
{
    if (vt__mkdirs(vt__config.output) < 0) {
        char why[PATH_MAX + 64];
        int e = errno;
        snprintf(why, sizeof why, "cannot create output folder %s: %s", vt__config.output, strerror(e));
        vt_core_latch_off(why);
        return -1;
    }
    const char *unsafe = vt__dir_unsafe(vt__config.output);
    if (unsafe) {
        char why[PATH_MAX + 96];
        snprintf(why, sizeof why, "output folder %s is not safe (%s)", vt__config.output, unsafe);
        vt_core_latch_off(why);
        return -1;
    }
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    for (char *p = host; *p; p++)   /* a name of one path component, nothing a terminal acts on */
        if (*p == '/' || (unsigned char)*p <= ' ' || *p == 0x7f)
            *p = '_';
    uint64_t start_ns = vt__realtime_ns();
    int fd = -1;
    for (int attempt = 0; attempt < 16 && fd < 0; attempt++) {
        int len;
        if (attempt)
            len = snprintf(vt__w.path, sizeof vt__w.path, "%s/vt.%s.%d.%llu-%d.jsonl", vt__config.output,
                           host, (int)getpid(), (unsigned long long)start_ns, attempt);
        else
            len = snprintf(vt__w.path, sizeof vt__w.path, "%s/vt.%s.%d.%llu.jsonl", vt__config.output,
                           host, (int)getpid(), (unsigned long long)start_ns);
        if (len < 0 || (size_t)len >= sizeof vt__w.path) {
            /* never a truncated name: that would be a file nobody looks for */
            char why[PATH_MAX + 96];
            snprintf(why, sizeof why, "snapshot file name too long (%d bytes, PATH_MAX %d) in "
                     "VRAMTRACE_OUTPUT=%.200s...", len, PATH_MAX, vt__config.output);
            vt_core_latch_off(why);
            vt__w.path[0] = 0;
            return -1;
        }
        fd = open(vt__w.path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_APPEND | O_CLOEXEC, 0600);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (fd < 0) {
        char why[PATH_MAX + 64];
        int e = errno;
        snprintf(why, sizeof why, "cannot create %s: %s", vt__w.path, strerror(e));
        vt_core_latch_off(why);
        vt__w.path[0] = 0;
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) < 0) {
        int e = errno;
        close(fd);
        char why[PATH_MAX + 64];
        snprintf(why, sizeof why, "cannot examine %s: %s", vt__w.path, strerror(e));
        vt_core_latch_off(why);
        return -1;
    }
    fchmod(fd, 0600);              /* created by us: 0600 whatever the umask */
    fd = vt_fd_move_high(fd);      /* out of the program's low numbers (vt_fd.h) */
    pthread_mutex_lock(&vt__w.out_lock);
    vt__w.fd = fd;
    vt__w.dev = st.st_dev;
    vt__w.ino = st.st_ino;
    vt__w.seq = 0;
    vt__w.last_changes = 0;
    vt_sitediff_reset(&vt__w.sites);
    vt_modules_new_file();
    vt__idset_clear(&vt__w.stk_written);
    vt__idset_clear(&vt__w.site_written);
    vt_buf_reset(&vt__w.buf);
    vt__format_header(&vt__w.buf, start_ns);
    int rc = vt__flush();
    pthread_mutex_unlock(&vt__w.out_lock);
    return rc < 0 ? -1 : 0;
}

static void vt__install_signal(void)
{
    int sig = vt__config.signal;
    if (sig <= 0 || vt__w.sig == sig)
        return;
    struct sigaction old;
    if (sigaction(sig, NULL, &old) < 0)
        return;
    if (!(old.sa_flags & SA_SIGINFO) && old.sa_handler == vt__on_signal) {
        vt__w.sig = sig;   /* inherited over fork */
        return;
    }
    if ((old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL) {
        vt_log(VT_LOG_WARN, "signal %d already has a handler or is ignored; snapshot on signal is off", sig);
        return;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = vt__on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    if (sigaction(sig, &sa, NULL) == 0)
        vt__w.sig = sig;
}

int vt_writer_start(void)
{
    int st = __atomic_load_n(&vt__w.state, __ATOMIC_ACQUIRE);
    if (st)
        return st > 0 ? 0 : -1;
    if (!vt_core_enabled())
        return -1;
    pthread_mutex_lock(&vt__w.start_lock);
    st = __atomic_load_n(&vt__w.state, __ATOMIC_ACQUIRE);
    if (st == 0) {
        if (vt__open_file() < 0) {
            st = -1;
        } else {
            st = 1;
            vt_host_prime();   /* one-time opens here, not on the writer thread */
            sem_init(&vt__w.wake, 0, 0);
            __atomic_store_n(&vt__w.stop, 0, __ATOMIC_RELEASE);
            sigset_t all, old;
            sigfillset(&all);
            pthread_sigmask(SIG_SETMASK, &all, &old);  /* the writer takes no signals */
            if (pthread_create(&vt__w.thread, NULL, vt__writer_main, NULL) == 0) {
                vt__w.thread_running = 1;
                vt_core_set_drain_kick(vt_writer_kick_drain);
            }
            else
                vt_log(VT_LOG_WARN, "cannot start the writer thread; only oom, manual and exit snapshots");
            pthread_sigmask(SIG_SETMASK, &old, NULL);
            vt__install_signal();
            vt_log(VT_LOG_INFO, "writing snapshots to %s", vt__w.path);
        }
        __atomic_store_n(&vt__w.state, st, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&vt__w.start_lock);
    return st > 0 ? 0 : -1;
}

int vt_writer_started(void)
{
    return __atomic_load_n(&vt__w.state, __ATOMIC_ACQUIRE) > 0;
}

void vt_writer_kick_step(void)
{
    if (!vt_writer_started())
        return;
    /* Written by the calling thread, at once: a step snapshot handed to the writer
     * thread would be merged with the next ones whenever steps come faster than the
     * writer wakes, and the step curve would lose points. The cost is one record
     * per VRAMTRACE_STEP_EVERY marks on the thread that marks steps; hooks on other
     * threads wait only for the core's copy (vt_core_collect), not for the write. */
    vt__refresh(VT_TRIGGER_STEP);
    pthread_mutex_lock(&vt__w.out_lock);
    vt__snapshot_locked(VT_TRIGGER_STEP, NULL, NULL);
    pthread_mutex_unlock(&vt__w.out_lock);
}

void vt_writer_post_step(void)
{
    if (!vt_writer_started())
        return;
    int e = errno;
    __atomic_store_n(&vt__w.step_pending, 1, __ATOMIC_RELEASE);
    sem_post(&vt__w.wake);
    errno = e;
}

void vt_writer_kick_drain(void)
{
    if (!vt_writer_started())
        return;
    int e = errno;
    sem_post(&vt__w.wake);
    errno = e;
}

int vt_writer_snapshot(const char *trigger, const char *label)
{
    if (!vt_core_enabled())
        return -ECANCELED;
    if (vt_writer_start() < 0)
        return vt_core_enabled() ? -EIO : -ECANCELED;
    pthread_mutex_lock(&vt__w.out_lock);
    int rc = vt__snapshot_locked(trigger, label, NULL);
    pthread_mutex_unlock(&vt__w.out_lock);
    return rc;
}

int vt_writer_oom(const vt_oom_info *o)
{
    if (!vt_core_enabled())
        return 1;
    unsigned cls = 0;
    for (uint64_t v = o->requested; v; v >>= 1)
        cls++;
    uint64_t bit = 1ull << (cls > 63 ? 63 : cls);
    if (__atomic_fetch_or(&vt__w.oom_classes, bit, __ATOMIC_ACQ_REL) & bit)
        return 1;
    if (vt_writer_start() < 0)
        return -EIO;
    pthread_mutex_lock(&vt__w.out_lock);
    int rc = vt__snapshot_locked(VT_TRIGGER_OOM, NULL, o);
    pthread_mutex_unlock(&vt__w.out_lock);
    return rc;
}

void vt_writer_exit_begun(void)
{
    __atomic_store_n(&vt__w.exiting, 1, __ATOMIC_RELEASE);
}

int vt_writer_is_exiting(void)
{
    return __atomic_load_n(&vt__w.exiting, __ATOMIC_ACQUIRE);
}

void vt_writer_exit(void)
{
    vt_writer_exit_begun();
    /* Join the writer thread even when tracking latched off (the thread then left
     * its loop on its own): a thread is never left unjoined. */
    if (vt__w.thread_running) {
        __atomic_store_n(&vt__w.stop, 1, __ATOMIC_RELEASE);
        sem_post(&vt__w.wake);
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += 5;
        if (pthread_timedjoin_np(vt__w.thread, NULL, &ts) == 0)
            vt__w.thread_running = 0;
    }
    if (!vt_writer_started())
        return;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += 5;
    if (pthread_mutex_timedlock(&vt__w.out_lock, &ts) != 0)
        return;
    vt__snapshot_locked(VT_TRIGGER_EXIT, NULL, NULL);
    if (vt_fd_is(vt__w.fd, vt__w.dev, vt__w.ino))
        close(vt__w.fd);
    vt__w.fd = -1;
    __atomic_store_n(&vt__w.state, -1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&vt__w.out_lock);
}

const char *vt_writer_path(void)
{
    return vt__w.path;
}

void vt_writer_fork_prepare(void)
{
    pthread_mutex_lock(&vt__w.start_lock);
    pthread_mutex_lock(&vt__w.out_lock);
}

void vt_writer_fork_parent(void)
{
    pthread_mutex_unlock(&vt__w.out_lock);
    pthread_mutex_unlock(&vt__w.start_lock);
}

void vt_writer_fork_child(void)
{
    pthread_mutex_init(&vt__w.start_lock, NULL);
    pthread_mutex_init(&vt__w.out_lock, NULL);
    /* the parent's file, inherited; only when the number still refers to it (the
     * program may have closed it and opened its own file at that number) */
    if (vt_fd_is(vt__w.fd, vt__w.dev, vt__w.ino))
        close(vt__w.fd);
    vt__w.fd = -1;
    vt__w.path[0] = 0;
    vt__w.thread_running = 0;
    vt__w.sig_pending = 0;
    vt__w.step_pending = 0;
    vt__w.stop = 0;
    vt__w.seq = 0;
    vt__w.last_changes = 0;
    vt_sitediff_reset(&vt__w.sites);
    vt__w.oom_classes = 0;
    vt__idset_clear(&vt__w.stk_written);
    vt__idset_clear(&vt__w.site_written);
    vt_modules_new_file();
    if (__atomic_load_n(&vt__w.state, __ATOMIC_ACQUIRE) > 0)
        sem_destroy(&vt__w.wake);
    __atomic_store_n(&vt__w.state, 0, __ATOMIC_RELEASE);
}
