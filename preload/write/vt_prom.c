/* vt_prom.c — the node_exporter textfile (see vt_prom.h, preload/README.md
 * "Prometheus textfile", docs/metrics.md).
 *
 * Design: after each snapshot record the writer hands its vt_collect and host sample
 * to vt_prom_snapshot, which turns them into a small vt_prom_snap (no sites, no
 * addresses). The latest one is kept under our own lock with a "dirty" flag; it is rendered and written (temp file + rename(2)) at
 * once when published from the writer thread or at exit, otherwise by the writer
 * thread's next tick, so a thread that marks steps never writes the textfile itself.
 * Families are rendered metric-major (all samples of one metric together, after its
 * HELP and TYPE lines), as the exposition format requires.
 */
#define _GNU_SOURCE
#include "vt_prom.h"
#include "vt_config.h"
#include "vt_fd.h"
#include "vt_log.h"
#include "vt_core.h"   /* vt_now_ns */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static struct {
    pthread_mutex_t lock;
    int             failed;     /* under lock: given up after a write error        */
    int             dirty;      /* under lock: snap not on disk yet                */
    vt_prom_snap    snap;       /* under lock: latest figures                      */
    uint64_t        written_ns; /* under lock: CLOCK_MONOTONIC of the last write    */
    vt_buf          buf;        /* under lock                                       */
} vt__prom = { .lock = PTHREAD_MUTEX_INITIALIZER };

int vt_prom_enabled(void)
{
    return vt__config.prometheus[0] != 0 && !__atomic_load_n(&vt__prom.failed, __ATOMIC_RELAXED);
}

/* ---- rendering ---- */

static void vt__family(vt_buf *b, const char *name, const char *type, const char *help)
{
    vt_buf_cstr(b, "# HELP ");
    vt_buf_cstr(b, name);
    vt_buf_put(b, " ", 1);
    vt_buf_cstr(b, help);
    vt_buf_cstr(b, "\n# TYPE ");
    vt_buf_cstr(b, name);
    vt_buf_put(b, " ", 1);
    vt_buf_cstr(b, type);
    vt_buf_put(b, "\n", 1);
}

/* name{pid=".."[,rank=".."][,gpu="..",UUID=".."][,kind=".."]} */
static void vt__labels(vt_buf *b, const char *name, const vt_prom_snap *s, const vt_prom_dev *d, int kind)
{
    vt_buf_cstr(b, name);
    vt_buf_cstr(b, "{pid=\"");
    vt_buf_i64(b, s->pid);
    vt_buf_put(b, "\"", 1);
    if (s->has_rank) {
        vt_buf_cstr(b, ",rank=\"");
        vt_buf_i64(b, s->rank);
        vt_buf_put(b, "\"", 1);
    }
    if (d) {
        vt_buf_cstr(b, ",gpu=\"");
        vt_buf_i64(b, d->device);
        vt_buf_cstr(b, "\",UUID=\"");
        vt_buf_cstr(b, d->uuid);   /* [0-9a-fGPU-] only: no escaping needed */
        vt_buf_put(b, "\"", 1);
    }
    if (kind >= 0) {
        vt_buf_cstr(b, ",kind=\"");
        vt_buf_cstr(b, vt_kind_name(kind));
        vt_buf_put(b, "\"", 1);
    }
    vt_buf_cstr(b, "} ");
}

static void vt__u(vt_buf *b, uint64_t v)
{
    vt_buf_u64(b, v);
    vt_buf_put(b, "\n", 1);
}

/* Per-kind families: which field of vt_kind_stats. */
enum { F_LIVE, F_PEAK, F_UNFREED, F_ALLOCS, F_FREES, F_ALLOC_BYTES, F_FAILED, F_OOM };

static uint64_t vt__kind_field(const vt_kind_stats *k, int f)
{
    switch (f) {
    case F_LIVE: case F_UNFREED: return k->live_bytes;
    case F_PEAK:        return k->peak_bytes;
    case F_ALLOCS:      return k->alloc_total;
    case F_FREES:       return k->free_total;
    case F_ALLOC_BYTES: return k->alloc_bytes_total;
    case F_OOM:         return k->oom_total;
    default:            return k->failed_total;
    }
}

/* Per-device families: value and whether it is known. */
enum { D_USED, D_TOTAL, D_PROC, D_UNTRACKED, D_POOL_RES, D_POOL_USED, D_FRAG,
       D_GROWTH, D_GROWTH_STEPS, D_LEAKS };

static int vt__dev_known(const vt_prom_dev *d, int f)
{
    switch (f) {
    case D_USED: case D_TOTAL: return d->used_known;
    case D_PROC:               return d->proc_known;
    case D_UNTRACKED:          return d->untracked_known;
    case D_POOL_RES: case D_POOL_USED: return d->pool_known;
    case D_FRAG:               return d->fragmentation >= 0;
    default:                   return 1;
    }
}

static void vt__dev_value(vt_buf *b, const vt_prom_dev *d, int f)
{
    switch (f) {
    case D_USED:         vt__u(b, d->used_bytes); break;
    case D_TOTAL:        vt__u(b, d->total_bytes); break;
    case D_PROC:         vt__u(b, d->proc_used_bytes); break;
    case D_UNTRACKED:    vt_buf_i64(b, d->untracked_bytes); vt_buf_put(b, "\n", 1); break;
    case D_POOL_RES:     vt__u(b, d->pool_reserved_bytes); break;
    case D_POOL_USED:    vt__u(b, d->pool_used_bytes); break;
    case D_FRAG:         vt_buf_fixed6(b, d->fragmentation); vt_buf_put(b, "\n", 1); break;
    case D_GROWTH:       vt__u(b, d->growth_bytes_per_step); break;
    case D_GROWTH_STEPS: vt__u(b, d->growth_steps); break;
    default:             vt__u(b, d->leak_warnings); break;
    }
}

void vt_prom_render(vt_buf *b, const vt_prom_snap *s)
{
    static const struct { const char *name, *type, *help; int f; } kf[] = {
        {"vramtrace_live_bytes", "gauge",
         "Bytes of GPU allocations live now, as the program asked for them (vramtrace).", F_LIVE},
        {"vramtrace_peak_bytes", "gauge",
         "Highest live bytes since the process started.", F_PEAK},
        {"vramtrace_unfreed_bytes", "gauge",
         "Bytes still live at process exit, after the program's own exit-time frees (written at exit).", F_UNFREED},
        {"vramtrace_allocations_total", "counter",
         "Successful allocation calls.", F_ALLOCS},
        {"vramtrace_frees_total", "counter",
         "Frees of tracked allocations (explicit, or by context destroy/reset).", F_FREES},
        {"vramtrace_allocated_bytes_total", "counter",
         "Bytes asked for by successful allocation calls.", F_ALLOC_BYTES},
        {"vramtrace_failed_allocations_total", "counter",
         "Failed allocation calls (out of memory, and any other error).", F_FAILED},
        {"vramtrace_oom_total", "counter",
         "Allocation calls that failed with out-of-memory.", F_OOM},
    };
    static const struct { const char *name, *type, *help; int f; } df[] = {
        {"vramtrace_device_memory_used_bytes", "gauge",
         "Device memory in use by every process (NVML nvmlDeviceGetMemoryInfo, else total - free of cuMemGetInfo).", D_USED},
        {"vramtrace_device_memory_total_bytes", "gauge",
         "Device memory size (NVML nvmlDeviceGetMemoryInfo, else cuMemGetInfo).", D_TOTAL},
        {"vramtrace_process_memory_used_bytes", "gauge",
         "Device memory this process uses as NVML sees it (nvmlDeviceGetComputeRunningProcesses), at the "
         "NVML sample (vramtrace_nvml_sample_timestamp_seconds).", D_PROC},
        {"vramtrace_untracked_bytes", "gauge",
         "Device memory in use that no tracked allocation explains (context, modules): NVML's process use less "
         "the tracked bytes of the same moment (the NVML sample), else cuMemGetInfo's used bytes less the "
         "tracked bytes when nothing was allocated or freed since that reading; absent when neither is known.",
         D_UNTRACKED},
        {"vramtrace_pool_reserved_bytes", "gauge",
         "Bytes the default stream-ordered memory pool holds (CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT).", D_POOL_RES},
        {"vramtrace_pool_used_bytes", "gauge",
         "Live bytes of stream-ordered allocations in pools.", D_POOL_USED},
        {"vramtrace_fragmentation_ratio", "gauge",
         "1 - largest gap / sum of gaps between this process's live blocks (0 = one free piece).", D_FRAG},
        {"vramtrace_fastest_site_growth_bytes_per_step", "gauge",
         "Floor growth per step of the fastest-growing allocation site on the device (0 = none growing).", D_GROWTH},
        {"vramtrace_fastest_site_growth_steps", "gauge",
         "Consecutive steps the fastest-growing site has grown without falling back.", D_GROWTH_STEPS},
        {"vramtrace_leak_warning_sites", "gauge",
         "Allocation sites whose floor rose for at least VRAMTRACE_LEAK_STEPS steps.", D_LEAKS},
    };
    vt__family(b, "vramtrace_up", "gauge", "1 while the process runs, 0 after it exited.");
    vt__labels(b, "vramtrace_up", s, NULL, -1);
    vt__u(b, (uint64_t)(s->up ? 1 : 0));
    vt__family(b, "vramtrace_last_snapshot_timestamp_seconds", "gauge",
               "Unix time (CLOCK_REALTIME) these figures were written: after each snapshot, and at least once "
               "per snapshot interval while the process runs (a stale one: killed).");
    vt__labels(b, "vramtrace_last_snapshot_timestamp_seconds", s, NULL, -1);
    vt_buf_fixed6(b, (double)s->written_unix_ms / 1000.0);
    vt_buf_put(b, "\n", 1);
    vt__family(b, "vramtrace_snapshot_interval_seconds", "gauge",
               "VRAMTRACE_INTERVAL_MS in seconds (0: periodic snapshots off; the file is then written at snapshots "
               "and exit only).");
    vt__labels(b, "vramtrace_snapshot_interval_seconds", s, NULL, -1);
    vt_buf_fixed6(b, (double)vt__config.interval_ms / 1000.0);
    vt_buf_put(b, "\n", 1);
    if (s->nvml_ns && s->nvml_ns <= s->written_mono_ns &&
        (s->written_mono_ns - s->nvml_ns) / 1000000u <= s->written_unix_ms) {
        vt__family(b, "vramtrace_nvml_sample_timestamp_seconds", "gauge",
                   "Unix time of the NVML sample that the process memory and untracked figures are of (taken at "
                   "most once per VRAMTRACE_HOST_INTERVAL_MS).");
        vt__labels(b, "vramtrace_nvml_sample_timestamp_seconds", s, NULL, -1);
        uint64_t age_ms = (s->written_mono_ns - s->nvml_ns) / 1000000u;
        vt_buf_fixed6(b, (double)(s->written_unix_ms - age_ms) / 1000.0);
        vt_buf_put(b, "\n", 1);
    }
    vt__family(b, "vramtrace_step", "gauge",
               "Step number (vramtrace_step() marks, else periodic snapshots).");
    vt__labels(b, "vramtrace_step", s, NULL, -1);
    vt__u(b, s->step);
    for (size_t i = 0; i < sizeof kf / sizeof kf[0]; i++) {
        if (kf[i].f == F_UNFREED && !s->at_exit)
            continue;
        if (s->n_devs == 0)
            continue;
        vt__family(b, kf[i].name, kf[i].type, kf[i].help);
        for (int d = 0; d < s->n_devs; d++)
            for (int k = 0; k < VT_KIND_COUNT; k++) {
                vt__labels(b, kf[i].name, s, &s->devs[d], k);
                vt__u(b, vt__kind_field(&s->devs[d].kinds[k], kf[i].f));
            }
    }
    for (size_t i = 0; i < sizeof df / sizeof df[0]; i++) {
        int any = 0;
        for (int d = 0; d < s->n_devs; d++)
            any |= vt__dev_known(&s->devs[d], df[i].f);
        if (!any)
            continue;
        vt__family(b, df[i].name, df[i].type, df[i].help);
        for (int d = 0; d < s->n_devs; d++) {
            if (!vt__dev_known(&s->devs[d], df[i].f))
                continue;
            vt__labels(b, df[i].name, s, &s->devs[d], -1);
            vt__dev_value(b, &s->devs[d], df[i].f);
        }
    }
}

/* ---- the figures of a snapshot ---- */

/* Fills the NVML-derived figures of s (device used/total, this process's use,
 * untracked) from gpus; falls back to the snapshot's cuMemGetInfo figures. */
static void vt__prom_apply_gpus(vt_prom_snap *s, const vt_host_gpu *gpus, int n_gpus, uint64_t nvml_ns)
{
    s->nvml_ns = n_gpus ? nvml_ns : 0;
    for (int i = 0; i < s->n_devs; i++) {
        vt_prom_dev *p = &s->devs[i];
        const vt_host_gpu *g = NULL;
        for (int j = 0; j < n_gpus && p->device >= 0; j++)
            if (gpus[j].device == p->device)
                g = &gpus[j];
        p->used_known = p->proc_known = p->untracked_known = 0;
        if (g && g->mem_ok) {
            p->used_known = 1;
            p->used_bytes = g->used;
            p->total_bytes = g->total;
        } else if (p->meminfo_known) {
            p->used_known = 1;
            p->used_bytes = p->meminfo_total - p->meminfo_free;
            p->total_bytes = p->meminfo_total;
        }
        if (g && g->proc_ok) {
            p->proc_known = 1;
            p->proc_used_bytes = g->proc_used;
        }
        /* untracked: a used figure less the tracked bytes of the same moment, never
         * of another (the NVML sample may be a host interval older than the snapshot,
         * and memory may have come and gone in between) */
        if (p->proc_known) {               /* this process alone (NVML) */
            p->untracked_known = g->tracked_ok;
            p->untracked_bytes = (int64_t)p->proc_used_bytes - (int64_t)g->tracked;
        } else if (p->meminfo_known && p->meminfo_current) {   /* the whole device (cuMemGetInfo) */
            p->untracked_known = 1;
            p->untracked_bytes = (int64_t)(p->meminfo_total - p->meminfo_free) - (int64_t)p->tracked_bytes;
        }
    }
}

typedef struct {
    const vt_host_gpu *gpus; int n;
    uint64_t at_ns;             /* the sample's time */
    char (*uuids)[48];          /* per CUDA ordinal, "" unknown */
} vt_gpu_set;

static void vt__prom_edit_gpus(vt_prom_snap *s, void *arg)
{
    const vt_gpu_set *g = arg;
    for (int i = 0; i < s->n_devs; i++)   /* snapshots taken before the UUIDs were known */
        if (!s->devs[i].uuid[0] && s->devs[i].device >= 0 &&
            s->devs[i].device < VT_MAX_DEVICES)
            memcpy(s->devs[i].uuid, g->uuids[s->devs[i].device], sizeof s->devs[i].uuid);
    vt__prom_apply_gpus(s, g->gpus, g->n, g->at_ns);
}

/* Builds the textfile figures of this snapshot. */
static void vt__prom_snap(vt_prom_snap *s, const vt_collect *c, int is_exit,
                          const vt_host_gpu *gpus, int n_gpus, uint64_t nvml_ns)
{
    memset(s, 0, sizeof *s);
    s->pid = (int)getpid();
    const char *rank = getenv("RANK");   /* read as vt_encode.c's header reads it */
    char *end = NULL;
    long long r = rank && *rank ? strtoll(rank, &end, 10) : -1;
    s->has_rank = rank && *rank && end && *end == 0 && r >= 0;
    s->rank = s->has_rank ? r : 0;
    s->up = !is_exit;
    s->at_exit = is_exit;
    s->step = c->step;
    for (int i = 0; i < c->n_devs && s->n_devs < VT_DEV_SLOTS; i++) {
        const vt_dev_stats *d = &c->devs[i];
        vt_prom_dev *p = &s->devs[s->n_devs++];
        p->device = d->device;
        if (vt_host_uuid(d->device, p->uuid, sizeof p->uuid) < 0)
            p->uuid[0] = 0;
        memcpy(p->kinds, d->kinds, sizeof p->kinds);
        p->pool_known = d->pool_known;
        p->pool_reserved_bytes = d->pool_reserved_bytes;
        p->pool_used_bytes = d->pool_used_bytes;
        p->fragmentation = d->fragmentation;
        p->meminfo_known = d->meminfo_known;
        p->meminfo_free = d->free_bytes;
        p->meminfo_total = d->total_bytes;
        p->meminfo_current = d->meminfo_changes == c->changes;   /* nothing came or went since */
        p->tracked_bytes = vt_host_tracked_bytes(d);
    }
    vt__prom_apply_gpus(s, gpus, n_gpus, nvml_ns);
    for (size_t i = 0; i < c->n_sites; i++) {
        const vt_site_row *r = &c->sites[i];
        for (int j = 0; j < s->n_devs; j++) {
            vt_prom_dev *p = &s->devs[j];
            if (p->device != r->device)
                continue;
            uint64_t rate = r->growth_steps ? r->growth_bytes / r->growth_steps : 0;
            if (rate > p->growth_bytes_per_step ||
                (rate == p->growth_bytes_per_step && rate && r->growth_steps > p->growth_steps)) {
                p->growth_bytes_per_step = rate;
                p->growth_steps = r->growth_steps;
            }
            if (r->leak_warn)
                p->leak_warnings++;
        }
    }
}

/* ---- writing ---- */

static void vt__give_up(const char *what, const char *path, int e)
{
    vt_log(VT_LOG_WARN, "Prometheus textfile: cannot %s %s: %s; textfile off", what, path, strerror(e));
    __atomic_store_n(&vt__prom.failed, 1, __ATOMIC_RELAXED);
}

/* Renders vt__prom.snap and replaces the file. Under vt__prom.lock. */
static void vt__write_locked(void)
{
    const char *dir = vt__config.prometheus;
    if (!dir[0] || vt__prom.failed)
        return;
    char path[PATH_MAX], tmp[PATH_MAX];
    int pid = vt__prom.snap.pid;
    /* vramtrace_<host>_<pid>.prom: two containers whose processes are both pid 1 can
     * share one collector folder. Host name characters other than [A-Za-z0-9.-] -> _ */
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    for (char *h = host; *h; h++)
        if (!((*h >= 'a' && *h <= 'z') || (*h >= 'A' && *h <= 'Z') || (*h >= '0' && *h <= '9') ||
              *h == '.' || *h == '-'))
            *h = '_';
    if (snprintf(path, sizeof path, "%s/vramtrace_%s_%d.prom", dir, host, pid) >= (int)sizeof path ||
        snprintf(tmp, sizeof tmp, "%s/.vramtrace_%s_%d.prom.tmp", dir, host, pid) >= (int)sizeof tmp) {
        vt__give_up("name a file in", dir, ENAMETOOLONG);
        return;
    }
    if (mkdir(dir, 0755) < 0) {
        if (errno != EEXIST) {
            vt__give_up("create folder", dir, errno);
            return;
        }
    } else {
        chmod(dir, 0755);   /* ours: the collector must read it whatever the umask */
    }
    vt_buf *b = &vt__prom.buf;
    vt_buf_reset(b);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    vt__prom.snap.written_unix_ms = (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
    vt__prom.written_ns = vt_now_ns();
    vt__prom.snap.written_mono_ns = vt__prom.written_ns;
    vt_prom_render(b, &vt__prom.snap);
    if (b->oom) {
        vt__give_up("format", path, ENOMEM);
        return;
    }
    /* Never open what someone else put at the temporary name (a link, a file of
     * theirs in a shared folder): remove ours, then create it new. */
    unlink(tmp);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) {
        vt__give_up("create", tmp, errno);
        return;
    }
    fchmod(fd, 0644);   /* created by us: readable by the collector whatever the umask */
    if (vt_fd_write_all(fd, b->p, b->len) < 0) {
        int e = errno;
        close(fd);
        unlink(tmp);
        vt__give_up("write", tmp, e);
        return;
    }
    if (close(fd) < 0 || rename(tmp, path) < 0) {
        int e = errno;
        unlink(tmp);
        vt__give_up("rename to", path, e);
        return;
    }
    vt__prom.dirty = 0;
}

static void vt__publish(const vt_prom_snap *s, int write_now)
{
    if (!vt_prom_enabled())
        return;
    pthread_mutex_lock(&vt__prom.lock);
    vt__prom.snap = *s;
    vt__prom.dirty = 1;
    if (write_now)
        vt__write_locked();
    pthread_mutex_unlock(&vt__prom.lock);
}

/* Applies edit(latest figures, arg) under the lock and marks them for writing. No-op
 * before the first vt_prom_publish and after the exit write. */
static void vt__edit(void (*edit)(vt_prom_snap *s, void *arg), void *arg)
{
    if (!vt_prom_enabled())
        return;
    pthread_mutex_lock(&vt__prom.lock);
    if (vt__prom.snap.pid == (int)getpid() && vt__prom.snap.up) {
        edit(&vt__prom.snap, arg);
        vt__prom.dirty = 1;
    }
    pthread_mutex_unlock(&vt__prom.lock);
}

void vt_prom_flush(void)
{
    if (!vt_prom_enabled())
        return;
    pthread_mutex_lock(&vt__prom.lock);
    /* a running process's file is rewritten at least once per interval, so that its
     * timestamp tells a live process from a killed one */
    uint64_t iv = (uint64_t)vt__config.interval_ms * 1000000ull;
    int stale = iv && vt__prom.snap.up && vt_now_ns() - vt__prom.written_ns >= iv;
    if ((vt__prom.dirty || stale) && vt__prom.snap.pid == (int)getpid())
        vt__write_locked();
    pthread_mutex_unlock(&vt__prom.lock);
}

void vt_prom_after_fork_child(void)
{
    pthread_mutex_init(&vt__prom.lock, NULL);
    vt__prom.dirty = 0;
    vt__prom.snap.n_devs = 0;
    vt_buf_init(&vt__prom.buf);   /* the parent's buffer may be mid-use: leak it */
}

void vt_prom_snapshot(const vt_collect *c, const vt_host_sample *h, int at_exit, int write_now)
{
    if (!vt_prom_enabled())
        return;
    static vt_prom_snap s;   /* under the writer's output lock */
    vt__prom_snap(&s, c, at_exit, h->gpus, h->n_gpus, h->nvml_ns);
    vt__publish(&s, write_now);
}

void vt_prom_host_refresh(void)
{
    if (!vt_prom_enabled())
        return;
    static vt_host_gpu gpus[VT_HOST_GPUS];   /* writer thread only */
    static char uuids[VT_MAX_DEVICES][48];
    uint64_t at;
    int n = vt_host_nvml_copy(gpus, &at);
    vt_gpu_set set = { gpus, n, at, uuids };
    for (int d = 0; d < VT_MAX_DEVICES; d++)
        if (vt_host_uuid(d, uuids[d], sizeof uuids[d]) < 0)
            uuids[d][0] = 0;
    vt__edit(vt__prom_edit_gpus, &set);
}
