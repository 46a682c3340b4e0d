/* vt_host.c — host and hardware signals (see vt_host.h, docs/snapshot-format.md
 * "host").
 *
 * Design: two kinds of work, on two kinds of thread.
 *   vt_host_nvml_load (the thread of the first CUDA allocation, before the
 *                   writer's start, no lock of ours held) the NVML dlopen +
 *                   nvmlInit_v2, once, published by an atomic state.
 *   vt_host_tick    (writer thread, top of each loop iteration, outside every lock)
 *                   does everything that may be slow or may call into other
 *                   libraries: the device UUIDs from the real driver (once) and an
 *                   NVML sample when due, each into a local copy that is then
 *                   stored under our lock.
 *   vt_host_measure (any thread writing a snapshot, under the writer's output lock)
 *                   when a sample is due (VRAMTRACE_HOST_INTERVAL_MS, or a complete
 *                   record) reads /proc/self/status and the cgroup files and
 *                   copies the NVML cache into a vt_host_sample; vt_host_format
 *                   turns that into the "host" object.
 * Nothing here ever runs inside a CUDA hook except vt_host_measure for an "oom"
 * snapshot, which makes no CUDA or NVML call. Nothing here writes a file.
 */
#define _GNU_SOURCE
#include "vt_host.h"
#include "vt_driver.h"
#include "vt_config.h"
#include "vt_fd.h"
#include "vt_guard.h"
#include "vt_log.h"
#include "vt_nvml.h"
#include "vt_state.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

typedef struct vt_nvml_fns {
    vt_nvmlInit_v2_t                             init;
    vt_nvmlDeviceGetCount_v2_t                   count;
    vt_nvmlDeviceGetHandleByIndex_v2_t           by_index;
    vt_nvmlDeviceGetHandleByUUID_t               by_uuid;
    vt_nvmlDeviceGetUUID_t                       uuid;
    vt_nvmlDeviceGetMemoryInfo_t                 mem;
    vt_nvmlDeviceGetComputeRunningProcesses_v3_t procs;
    vt_nvmlDeviceGetTotalEccErrors_t             ecc;
    vt_nvmlDeviceGetRetiredPages_t               retired;
    vt_nvmlDeviceGetRemappedRows_t               remapped;
} vt_nvml_fns;

static struct {
    pthread_mutex_t lock;
    /* under lock */
    char      uuid[VT_MAX_DEVICES][48];  /* "" unknown                                */
    int       uuids_done;                /* every ordinal asked                        */
    int       n_gpus;                    /* last NVML sample                           */
    vt_host_gpu gpus[VT_HOST_GPUS];
    uint64_t  nvml_ns;                   /* CLOCK_MONOTONIC of the sample; 0 none      */
    int       cg_state;                  /* 0 unknown, 1 found, -1 none                */
    int       cg_version;
    char      cg_dir[PATH_MAX];
    int       nvml_state;                /* atomic: VT__NVML_* or VT__NVML_LOADING + pid */
    vt_nvml_fns nvml;                    /* written before nvml_state becomes READY    */
    /* writer thread only */
    uint64_t  next_sample_ns;
} vt__host = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* Files read at every snapshot (/proc/self/status, the cgroup memory files) stay open
 * at high descriptor numbers (vt_fd.h) and are read again with pread from offset 0
 * (seq_file and kernfs regenerate the text), so a snapshot never takes one of the
 * program's low numbers, even for an instant: a program that closes fd 0 and opens a
 * file expects to get 0. An entry opened by another process (we are a forked child:
 * /proc/self meant the parent) or whose number the program closed or replaced
 * (dev+ino differ) is reopened; the program's descriptor is never closed.
 * Thread-safe (vt__kept.lock); the first read of each file opens it once. */
#define VT_KEPT_MAX 8
static struct {
    pthread_mutex_t lock;
    int n;
    struct { char path[PATH_MAX + 32]; int fd; pid_t pid; dev_t dev; ino_t ino; } e[VT_KEPT_MAX];
} vt__kept = { .lock = PTHREAD_MUTEX_INITIALIZER };

static size_t vt__slurp_kept(const char *path, char *buf, size_t cap)
{
    if (strlen(path) >= sizeof vt__kept.e[0].path)
        return vt_fd_read_small(path, buf, cap);
    pthread_mutex_lock(&vt__kept.lock);
    pid_t me = getpid();
    int i;
    for (i = 0; i < vt__kept.n; i++)
        if (!strcmp(vt__kept.e[i].path, path))
            break;
    if (i == vt__kept.n && i == VT_KEPT_MAX) {
        pthread_mutex_unlock(&vt__kept.lock);
        return vt_fd_read_small(path, buf, cap);
    }
    int have = i < vt__kept.n && vt__kept.e[i].pid == me &&
               vt_fd_is(vt__kept.e[i].fd, vt__kept.e[i].dev, vt__kept.e[i].ino);
    if (!have) {
        if (i < vt__kept.n && vt_fd_is(vt__kept.e[i].fd, vt__kept.e[i].dev, vt__kept.e[i].ino))
            close(vt__kept.e[i].fd);   /* ours, inherited over fork: /proc/self was the parent */
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) < 0) {
            if (fd >= 0)
                close(fd);
            if (i < vt__kept.n)
                vt__kept.e[i].fd = -1;
            pthread_mutex_unlock(&vt__kept.lock);
            return 0;
        }
        if (i == vt__kept.n) {
            vt__kept.n++;
            strcpy(vt__kept.e[i].path, path);
        }
        vt__kept.e[i].fd = vt_fd_move_high(fd);
        vt__kept.e[i].pid = me;
        vt__kept.e[i].dev = st.st_dev;
        vt__kept.e[i].ino = st.st_ino;
    }
    size_t n = vt_fd_pread_small(vt__kept.e[i].fd, buf, cap);
    pthread_mutex_unlock(&vt__kept.lock);
    return n;
}

void vt_host_format_uuid(const unsigned char u[16], char *out, size_t cap)
{
    snprintf(out, cap, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12],
             u[13], u[14], u[15]);
}

int vt_host_uuid(int device, char *out, size_t cap)
{
    if (device < 0 || device >= VT_MAX_DEVICES || cap == 0)
        return -1;
    pthread_mutex_lock(&vt__host.lock);
    int ok = vt__host.uuid[device][0] != 0;
    if (ok)
        snprintf(out, cap, "%s", vt__host.uuid[device]);
    pthread_mutex_unlock(&vt__host.lock);
    return ok ? 0 : -1;
}

/* ---- parsers ---- */

int vt_host_field(const char *text, const char *key, uint64_t *out)
{
    size_t kl = strlen(key);
    for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
        if (strncmp(l, key, kl) != 0 || (l[kl] != ' ' && l[kl] != '\t'))
            continue;
        const char *p = l + kl;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p < '0' || *p > '9')
            return -1;
        errno = 0;
        char *end = NULL;
        unsigned long long v = strtoull(p, &end, 10);
        if (errno)
            return -1;
        if (!strncmp(end, " kB", 3))
            v *= 1024ull;
        *out = v;
        return 0;
    }
    return -1;
}

/* Copies the n bytes at s into a NUL-terminated field; returns 0 or -1 (too long). */
static int vt__field_copy(char *dst, size_t cap, const char *s, size_t n)
{
    if (n >= cap)
        return -1;
    memcpy(dst, s, n);
    dst[n] = 0;
    return 0;
}

int vt_host_cgroup_dir(const char *proc_cgroup, const char *mountinfo, int version,
                       char *dir, size_t cap)
{
    /* 1. our path in the hierarchy */
    char path[PATH_MAX] = "";
    int found = 0;
    for (const char *l = proc_cgroup; l && *l && !found; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
        const char *c1 = strchr(l, ':');
        const char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        const char *eol = strchr(l, '\n');
        if (!eol)
            eol = l + strlen(l);
        if (!c2 || c2 > eol)
            continue;
        if (version == 2) {
            if (c1 - l != 1 || l[0] != '0' || c2 != c1 + 1)
                continue;
        } else {
            /* controllers list: ",memory," inside ",<list>," */
            char ctl[256];
            if (vt__field_copy(ctl + 1, sizeof ctl - 2, c1 + 1, (size_t)(c2 - c1 - 1)) < 0)
                continue;
            ctl[0] = ',';
            strcat(ctl, ",");
            if (!strstr(ctl, ",memory,"))
                continue;
        }
        if (vt__field_copy(path, sizeof path, c2 + 1, (size_t)(eol - c2 - 1)) == 0)
            found = 1;
    }
    if (!found || path[0] != '/')
        return -1;
    /* 2. the mount: "id parent maj:min root mountpoint opts [optional...] - fstype src superopts" */
    for (const char *l = mountinfo; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
        const char *eol = strchr(l, '\n');
        if (!eol)
            eol = l + strlen(l);
        char line[4096];
        if (vt__field_copy(line, sizeof line, l, (size_t)(eol - l)) < 0)
            continue;
        char *sep = strstr(line, " - ");
        if (!sep)
            continue;
        *sep = 0;
        char *fs = sep + 3, *save = NULL;
        char *fstype = strtok_r(fs, " ", &save);
        strtok_r(NULL, " ", &save);            /* source */
        char *super = strtok_r(NULL, " ", &save);
        if (!fstype)
            continue;
        if (version == 2 ? strcmp(fstype, "cgroup2") != 0 : strcmp(fstype, "cgroup") != 0)
            continue;
        if (version == 1) {
            char opts[1024];
            if (!super || snprintf(opts, sizeof opts, ",%s,", super) >= (int)sizeof opts ||
                !strstr(opts, ",memory,"))
                continue;
        }
        char *f[5];
        save = NULL;
        f[0] = strtok_r(line, " ", &save);
        for (int i = 1; i < 5; i++)
            f[i] = f[i - 1] ? strtok_r(NULL, " ", &save) : NULL;
        if (!f[4])
            continue;
        const char *root = f[3], *mnt = f[4];
        size_t rl = strlen(root);
        const char *rel = path;
        if (strcmp(root, "/") != 0) {
            if (strncmp(path, root, rl) != 0 || (path[rl] != '/' && path[rl] != 0))
                continue;   /* our cgroup is outside this mount */
            rel = path + rl;
        }
        if (!strcmp(rel, "/"))
            rel = "";
        if (snprintf(dir, cap, "%s%s", mnt, rel) >= (int)cap)
            return -1;
        return 0;
    }
    return -1;
}

/* Finds the cgroup folder whose memory files we can read: v2 first, then v1. */
static void vt__cgroup_resolve(void)
{
    static char cg[8192], mi[65536];
    char dir[PATH_MAX], probe[PATH_MAX + 32], tmp[256];
    int version = 0;
    if (vt_fd_read_small("/proc/self/cgroup", cg, sizeof cg) == 0 ||
        vt_fd_read_small("/proc/self/mountinfo", mi, sizeof mi) == 0) {
        version = 0;
    } else if (vt_host_cgroup_dir(cg, mi, 2, dir, sizeof dir) == 0 &&
               snprintf(probe, sizeof probe, "%s/memory.events", dir) < (int)sizeof probe &&
               vt_fd_read_small(probe, tmp, sizeof tmp) > 0) {
        version = 2;
    } else if (vt_host_cgroup_dir(cg, mi, 1, dir, sizeof dir) == 0 &&
               snprintf(probe, sizeof probe, "%s/memory.oom_control", dir) < (int)sizeof probe &&
               vt_fd_read_small(probe, tmp, sizeof tmp) > 0) {
        version = 1;
    }
    pthread_mutex_lock(&vt__host.lock);
    if (version) {
        vt__host.cg_state = 1;
        vt__host.cg_version = version;
        snprintf(vt__host.cg_dir, sizeof vt__host.cg_dir, "%s", dir);
    } else {
        vt__host.cg_state = -1;
    }
    pthread_mutex_unlock(&vt__host.lock);
}

/* Resolves once per process image (its static buffers are not shared). */
static pthread_once_t vt__cg_once = PTHREAD_ONCE_INIT;
static void vt__cgroup_once(void)
{
    pthread_once(&vt__cg_once, vt__cgroup_resolve);
}


/* ---- device UUIDs, asked of the real driver (sys/vt_driver.h); no call once exit
 * has begun ---- */

static void vt__resolve_uuids(void)
{
    if (__atomic_load_n(&vt__host.uuids_done, __ATOMIC_ACQUIRE) || vt_state_exiting())
        return;
    int n = vt_driver_device_count();
    if (n < 0)
        return;   /* no driver known (yet): try at the next tick */
    char u[VT_MAX_DEVICES][48];
    memset(u, 0, sizeof u);
    for (int d = 0; d < n && d < VT_MAX_DEVICES; d++) {
        unsigned char b[16];
        if (vt_driver_device_uuid(d, b) == 0)
            vt_host_format_uuid(b, u[d], sizeof u[d]);
    }
    pthread_mutex_lock(&vt__host.lock);
    int first = !vt__host.uuids_done;
    memcpy(vt__host.uuid, u, sizeof u);
    __atomic_store_n(&vt__host.uuids_done, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&vt__host.lock);
    if (first)
        vt_log(VT_LOG_DEBUG, "device UUIDs of %d CUDA device(s) known", n);
}

void vt_host_uuids(void)
{
    if (__atomic_load_n(&vt__host.uuids_done, __ATOMIC_ACQUIRE))
        return;
    int e = errno;
    vt_guard_enter();   /* anything hooked that the driver calls is not the program's */
    vt__resolve_uuids();
    vt_guard_leave();
    errno = e;
}

/* ---- NVML ---- */

/* nvml_state: 0 untried, READY, OFF, or LOADING + the pid of the process whose thread
 * is loading it (a fork child sees another pid and loads it itself). */
#define VT__NVML_READY 1
#define VT__NVML_OFF (-1)
#define VT__NVML_LOADING 2

/* dlopen, dlsym, nvmlInit_v2; the functions into vt__host.nvml. 1 when NVML is
 * ready, 0 when it stays off. */
static int vt__nvml_open(void)
{
    if (!vt__config.nvml) {
        vt_log(VT_LOG_DEBUG, "VRAMTRACE_NVML=0: NVML not loaded, no NVML figures");
        return 0;
    }
    void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        vt_log(VT_LOG_DEBUG, "no NVML (libnvidia-ml.so.1): %s", dlerror());
        return 0;
    }
    vt_nvml_fns *f = &vt__host.nvml;
#define VT_NVML_SYM(field, name) f->field = (__typeof__(f->field))dlsym(h, name)
    VT_NVML_SYM(init, "nvmlInit_v2");
    VT_NVML_SYM(count, "nvmlDeviceGetCount_v2");
    VT_NVML_SYM(by_index, "nvmlDeviceGetHandleByIndex_v2");
    VT_NVML_SYM(by_uuid, "nvmlDeviceGetHandleByUUID");
    VT_NVML_SYM(uuid, "nvmlDeviceGetUUID");
    VT_NVML_SYM(mem, "nvmlDeviceGetMemoryInfo");
    VT_NVML_SYM(procs, "nvmlDeviceGetComputeRunningProcesses_v3");
    VT_NVML_SYM(ecc, "nvmlDeviceGetTotalEccErrors");
    VT_NVML_SYM(retired, "nvmlDeviceGetRetiredPages");
    VT_NVML_SYM(remapped, "nvmlDeviceGetRemappedRows");
#undef VT_NVML_SYM
    if (!f->init || !f->mem || (!f->by_uuid && !(f->count && f->by_index))) {
        vt_log(VT_LOG_DEBUG, "NVML lacks nvmlInit_v2/nvmlDeviceGetMemoryInfo/handles: not used");
        return 0;   /* the library stays loaded: unloading NVML is not worth the risk */
    }
    nvmlReturn_t r = f->init();
    if (r != NVML_SUCCESS) {
        vt_log(VT_LOG_DEBUG, "nvmlInit_v2 failed (%d): no NVML figures", (int)r);
        return 0;
    }
    vt_log(VT_LOG_DEBUG, "NVML ready");
    return 1;
}

int vt_host_nvml_load(void)
{
    int st = __atomic_load_n(&vt__host.nvml_state, __ATOMIC_ACQUIRE);
    if (st == VT__NVML_READY || st == VT__NVML_OFF)
        return 0;
    int me = VT__NVML_LOADING + (int)getpid();
    if (st == me)
        return 1;   /* another thread of this process is loading it */
    /* untried, or being loaded in the parent of this fork child */
    if (!__atomic_compare_exchange_n(&vt__host.nvml_state, &st, me, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
        return st == VT__NVML_READY || st == VT__NVML_OFF ? 0 : 1;   /* another thread came first */
    int e = errno;
    int ok = vt__nvml_open();
    /* release: the writer thread that sees READY sees every function pointer */
    __atomic_store_n(&vt__host.nvml_state, ok ? VT__NVML_READY : VT__NVML_OFF, __ATOMIC_RELEASE);
    errno = e;
    return 0;
}

/* 1 once vt_host_nvml_load made NVML ready (acquire: its functions are visible). */
static int vt__nvml_ready(void)
{
    return __atomic_load_n(&vt__host.nvml_state, __ATOMIC_ACQUIRE) == VT__NVML_READY;
}

uint64_t vt_host_tracked_bytes(const vt_dev_stats *d)
{
    uint64_t async = d->kinds[VT_KIND_ASYNC].live_bytes;
    return d->kinds[VT_KIND_DEVICE].live_bytes + d->kinds[VT_KIND_MANAGED].live_bytes +
           d->kinds[VT_KIND_VMM].live_bytes +
           (d->pool_known && d->pool_reserved_bytes > async ? d->pool_reserved_bytes : async);
}

/* The tracked bytes of CUDA device `device` now (vt_core_dev_totals): 1 and *out, or
 * 0 when not known. Not known either before the core has recorded any allocation:
 * the writer thread starts inside the process's first allocation call, after the
 * driver made it and before its hook records it, so a sample taken then would count
 * that allocation in NVML's figure and not in ours. */
static int vt__tracked_now(int device, uint64_t *out)
{
    vt_dev_stats d;
    if (device < 0 || vt_core_changes() == 0 || vt_core_dev_totals(device, &d) < 0)
        return 0;
    *out = vt_host_tracked_bytes(&d);
    return 1;
}

/* Samples one device into g (g->device, g->index set by the caller). */
static void vt__nvml_sample_dev(nvmlDevice_t dev, vt_host_gpu *g)
{
    const vt_nvml_fns *f = &vt__host.nvml;
    nvmlMemory_t m;
    if (f->mem(dev, &m) == NVML_SUCCESS) {
        g->mem_ok = 1;
        g->used = m.used;
        g->total = m.total;
    }
    /* this process's use, and the tracked bytes of the same moment: read before and
     * after the query, and kept only when equal (asked again, up to 3 times, when
     * an allocation or free came in between) */
    for (int attempt = 0; f->procs && attempt < 3; attempt++) {
        nvmlProcessInfo_t infos[64];
        unsigned int n = 64;
        uint64_t before = 0, after = 0;
        int known = vt__tracked_now(g->device, &before);
        g->proc_ok = 0;
        g->proc_used = 0;
        nvmlReturn_t r = f->procs(dev, &n, infos);
        unsigned pid = (unsigned)getpid();
        for (unsigned i = 0; r == NVML_SUCCESS && i < n && i < 64; i++)
            if (infos[i].pid == pid && infos[i].usedGpuMemory != NVML_VALUE_NOT_AVAILABLE) {
                g->proc_ok = 1;
                g->proc_used += infos[i].usedGpuMemory;   /* MIG: one entry per instance */
            }
        known = known && vt__tracked_now(g->device, &after);
        g->tracked_ok = known && g->proc_ok && before == after;
        g->tracked = g->tracked_ok ? after : 0;
        if (!known || !g->proc_ok || before == after)
            break;
    }
    if (f->ecc)
        for (int c = 0; c < 2; c++)
            for (int t = 0; t < 2; t++) {
                unsigned long long v = 0;
                if (f->ecc(dev, (nvmlMemoryErrorType_t)t, (nvmlEccCounterType_t)c, &v) == NVML_SUCCESS) {
                    g->ecc_ok[c][t] = 1;
                    g->ecc[c][t] = v;
                }
            }
    if (f->retired) {
        int ok = 1;
        for (int cause = 0; cause < 2; cause++) {
            unsigned int n = 0;
            nvmlReturn_t r = f->retired(dev, (nvmlPageRetirementCause_t)cause, &n, NULL);
            if (r != NVML_SUCCESS && r != NVML_ERROR_INSUFFICIENT_SIZE)
                ok = 0;
            g->retired[cause] = n;
        }
        g->retired_ok = ok;
    }
    if (f->remapped &&
        f->remapped(dev, &g->remap_corr, &g->remap_unc, &g->remap_pending, &g->remap_failure) == NVML_SUCCESS)
        g->remap_ok = 1;
}

static void vt__nvml_sample(void)
{
    const vt_nvml_fns *f = &vt__host.nvml;
    vt_host_gpu gpus[VT_HOST_GPUS];
    int n = 0;
    char uuids[VT_MAX_DEVICES][48];
    int have_uuids;
    pthread_mutex_lock(&vt__host.lock);
    memcpy(uuids, vt__host.uuid, sizeof uuids);
    have_uuids = vt__host.uuids_done;
    pthread_mutex_unlock(&vt__host.lock);
    if (have_uuids && f->by_uuid) {
        /* CUDA's ordinals (CUDA_VISIBLE_DEVICES, ordering) are not NVML's indices:
         * match by UUID. */
        for (int d = 0; d < VT_MAX_DEVICES && n < VT_HOST_GPUS; d++) {
            nvmlDevice_t dev;
            if (!uuids[d][0] || f->by_uuid(uuids[d], &dev) != NVML_SUCCESS)
                continue;
            vt_host_gpu *g = &gpus[n++];
            memset(g, 0, sizeof *g);
            g->device = d;
            memcpy(g->uuid, uuids[d], sizeof uuids[d]);   /* NUL-terminated, 48 <= 96 */
            vt__nvml_sample_dev(dev, g);
        }
    } else if (f->count && f->by_index) {
        unsigned int count = 0;
        if (f->count(&count) == NVML_SUCCESS)
            for (unsigned i = 0; i < count && n < VT_HOST_GPUS; i++) {
                nvmlDevice_t dev;
                if (f->by_index(i, &dev) != NVML_SUCCESS)
                    continue;
                vt_host_gpu *g = &gpus[n++];
                memset(g, 0, sizeof *g);
                g->device = -1;
                g->index = i;
                if (!f->uuid || f->uuid(dev, g->uuid, sizeof g->uuid) != NVML_SUCCESS)
                    g->uuid[0] = 0;
                vt__nvml_sample_dev(dev, g);
            }
    }
    /* NVML index of UUID-matched devices, for the record */
    if (f->count && f->by_index && f->uuid)
        for (int i = 0; i < n; i++) {
            if (gpus[i].device < 0)
                continue;
            unsigned int count = 0;
            if (f->count(&count) != NVML_SUCCESS)
                break;
            for (unsigned j = 0; j < count; j++) {
                nvmlDevice_t dev;
                char u[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
                if (f->by_index(j, &dev) == NVML_SUCCESS &&
                    f->uuid(dev, u, sizeof u) == NVML_SUCCESS && !strcmp(u, gpus[i].uuid)) {
                    gpus[i].index = j;
                    break;
                }
            }
        }
    pthread_mutex_lock(&vt__host.lock);
    memcpy(vt__host.gpus, gpus, sizeof gpus[0] * (size_t)n);
    vt__host.n_gpus = n;
    vt__host.nvml_ns = vt_now_ns();
    pthread_mutex_unlock(&vt__host.lock);
}

/* ---- fork ---- */

void vt_host_fork_child(void)
{
    pthread_mutex_init(&vt__host.lock, NULL);
    pthread_mutex_init(&vt__kept.lock, NULL);
    vt__host.next_sample_ns = 0;
}

/* ---- the snapshot's sample ---- */

/* dir/name, kept open (vt__slurp_kept), into text. Returns the bytes read. */
static size_t vt__cg_read(const char *dir, const char *name, char *text, size_t cap)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return vt__slurp_kept(path, text, cap);
}

/* 1 when dir/name holds a decimal number (into *v); a word ("max") is 0. */
static int vt__cg_u64(const char *dir, const char *name, uint64_t *v)
{
    char text[1024];
    return vt__cg_read(dir, name, text, sizeof text) > 0 && sscanf(text, "%lu", v) == 1;
}

/* This process's cgroup figures; g->ok 0 when there is no readable memory cgroup.
 * The first call finds the folder (vt__cgroup_once). */
static void vt__cgroup_measure(vt_host_cgroup *g)
{
    memset(g, 0, sizeof *g);
    pthread_mutex_lock(&vt__host.lock);
    int state = vt__host.cg_state;
    pthread_mutex_unlock(&vt__host.lock);
    if (state == 0)
        vt__cgroup_once();
    pthread_mutex_lock(&vt__host.lock);
    state = vt__host.cg_state;
    g->version = vt__host.cg_version;
    memcpy(g->dir, vt__host.cg_dir, sizeof g->dir);
    pthread_mutex_unlock(&vt__host.lock);
    if (state <= 0)
        return;
    int v2 = g->version == 2;
    char text[1024];
    if (vt__cg_read(g->dir, v2 ? "memory.events" : "memory.oom_control", text, sizeof text) == 0)
        return;   /* no longer readable: absent */
    if (v2)
        g->oom_ok = vt_host_field(text, "oom", &g->oom) == 0;
    g->kill_ok = vt_host_field(text, "oom_kill", &g->kill) == 0;
    g->cur_ok = vt__cg_u64(g->dir, v2 ? "memory.current" : "memory.usage_in_bytes", &g->cur);
    /* v2 "max" and v1's huge "unlimited" value: no limit -> null */
    g->max_ok = vt__cg_u64(g->dir, v2 ? "memory.max" : "memory.limit_in_bytes", &g->max) &&
                (v2 || g->max < (1ull << 62));
    g->ok = 1;
}

/* time_ns of the NVML sample last written into the current output file (0: none);
 * under the writer's output lock, like every vt_host_measure and vt_host_format call */
static uint64_t vt__nvml_written_ns;

/* The host interval in ns, with a tenth of slack: a sample due "every second" is not
 * put off by a whole interval when a record comes a little early. */
static uint64_t vt__host_every_ns(void)
{
    uint64_t every = (uint64_t)(vt__config.host_interval_ms > 0 ? vt__config.host_interval_ms : 1000) * 1000000ull;
    return every - every / 10;
}

int vt_host_measure(vt_host_sample *s, int force)
{
    uint64_t now = vt_now_ns();
    pthread_mutex_lock(&vt__host.lock);
    uint64_t nvml_ns = vt__host.nvml_ns;
    pthread_mutex_unlock(&vt__host.lock);
    int nvml_new = nvml_ns && nvml_ns != vt__nvml_written_ns;
    if (!force && !nvml_new && s->proc_ns && now - s->proc_ns < vt__host_every_ns())
        return 0;
    char status[4096];
    s->rss_ok = s->hwm_ok = s->swap_ok = 0;
    if (vt__slurp_kept("/proc/self/status", status, sizeof status) > 0) {
        s->rss_ok = vt_host_field(status, "VmRSS:", &s->rss) == 0;
        s->hwm_ok = vt_host_field(status, "VmHWM:", &s->hwm) == 0;
        s->swap_ok = vt_host_field(status, "VmSwap:", &s->swap) == 0;
    }
    vt__cgroup_measure(&s->cgroup);
    s->n_gpus = vt_host_nvml_copy(s->gpus, &s->nvml_ns);
    s->proc_ns = now ? now : 1;
    return 1;
}

int vt_host_nvml_copy(vt_host_gpu gpus[VT_HOST_GPUS], uint64_t *at_ns)
{
    pthread_mutex_lock(&vt__host.lock);
    int n = vt__host.n_gpus;
    *at_ns = vt__host.nvml_ns;
    memcpy(gpus, vt__host.gpus, sizeof gpus[0] * (size_t)n);
    pthread_mutex_unlock(&vt__host.lock);
    return n;
}

/* ---- the "host" object ---- */

static void vt__kv_opt(vt_buf *b, const char *key, int ok, uint64_t v)
{
    vt_buf_cstr(b, key);
    vt_buf_u64_or_null(b, ok, v);
}

static void vt__kv_bool(vt_buf *b, const char *key, int ok, unsigned v)
{
    vt_buf_cstr(b, key);
    vt_buf_cstr(b, !ok ? "null" : v ? "true" : "false");
}

static void vt__format_gpu(vt_buf *b, const vt_host_gpu *g)
{
    vt_buf_cstr(b, "{\"device\":");
    if (g->device >= 0) vt_buf_i64(b, g->device); else vt_buf_cstr(b, "null");
    vt_buf_cstr(b, ",\"index\":");
    vt_buf_u64(b, g->index);
    vt_buf_cstr(b, ",\"uuid\":");
    vt_buf_jstr(b, g->uuid[0] ? g->uuid : NULL, 95);
    vt__kv_opt(b, ",\"used_bytes\":", g->mem_ok, g->used);
    vt__kv_opt(b, ",\"total_bytes\":", g->mem_ok, g->total);
    vt__kv_opt(b, ",\"process_used_bytes\":", g->proc_ok, g->proc_used);
    vt__kv_opt(b, ",\"tracked_bytes\":", g->tracked_ok, g->tracked);
    vt__kv_opt(b, ",\"ecc_volatile_corrected\":", g->ecc_ok[NVML_VOLATILE_ECC][NVML_MEMORY_ERROR_TYPE_CORRECTED],
               g->ecc[NVML_VOLATILE_ECC][NVML_MEMORY_ERROR_TYPE_CORRECTED]);
    vt__kv_opt(b, ",\"ecc_volatile_uncorrected\":", g->ecc_ok[NVML_VOLATILE_ECC][NVML_MEMORY_ERROR_TYPE_UNCORRECTED],
               g->ecc[NVML_VOLATILE_ECC][NVML_MEMORY_ERROR_TYPE_UNCORRECTED]);
    vt__kv_opt(b, ",\"ecc_aggregate_corrected\":", g->ecc_ok[NVML_AGGREGATE_ECC][NVML_MEMORY_ERROR_TYPE_CORRECTED],
               g->ecc[NVML_AGGREGATE_ECC][NVML_MEMORY_ERROR_TYPE_CORRECTED]);
    vt__kv_opt(b, ",\"ecc_aggregate_uncorrected\":", g->ecc_ok[NVML_AGGREGATE_ECC][NVML_MEMORY_ERROR_TYPE_UNCORRECTED],
               g->ecc[NVML_AGGREGATE_ECC][NVML_MEMORY_ERROR_TYPE_UNCORRECTED]);
    vt__kv_opt(b, ",\"retired_pages_single_bit\":", g->retired_ok,
               g->retired[NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS]);
    vt__kv_opt(b, ",\"retired_pages_double_bit\":", g->retired_ok,
               g->retired[NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR]);
    vt__kv_opt(b, ",\"remapped_rows_corrected\":", g->remap_ok, g->remap_corr);
    vt__kv_opt(b, ",\"remapped_rows_uncorrected\":", g->remap_ok, g->remap_unc);
    vt__kv_bool(b, ",\"remapped_rows_pending\":", g->remap_ok, g->remap_pending);
    vt__kv_bool(b, ",\"remapped_rows_failure\":", g->remap_ok, g->remap_failure);
    vt_buf_put(b, "}", 1);
}

void vt_host_new_file(void)
{
    vt__nvml_written_ns = 0;
}

void vt_host_format(vt_buf *b, const vt_host_sample *s, int complete)
{
    vt_buf_cstr(b, ",\"host\":{");
    vt__kv_opt(b, "\"rss_bytes\":", s->rss_ok, s->rss);
    vt__kv_opt(b, ",\"rss_peak_bytes\":", s->hwm_ok, s->hwm);
    vt__kv_opt(b, ",\"swap_bytes\":", s->swap_ok, s->swap);
    const vt_host_cgroup *g = &s->cgroup;
    if (g->ok) {
        vt_buf_cstr(b, ",\"cgroup\":{\"version\":");
        vt_buf_u64(b, (uint64_t)g->version);
        vt_buf_cstr(b, ",\"path\":");
        vt_buf_jstr(b, g->dir, 1024);
        vt__kv_opt(b, ",\"oom\":", g->oom_ok, g->oom);
        vt__kv_opt(b, ",\"oom_kill\":", g->kill_ok, g->kill);
        vt__kv_opt(b, ",\"memory_current_bytes\":", g->cur_ok, g->cur);
        vt__kv_opt(b, ",\"memory_max_bytes\":", g->max_ok, g->max);
        vt_buf_put(b, "}", 1);
    }
    if (s->nvml_ns && (complete || s->nvml_ns != vt__nvml_written_ns)) {   /* not written yet */
        vt__nvml_written_ns = s->nvml_ns;
        vt_buf_cstr(b, ",\"nvml\":{\"time_ns\":");
        vt_buf_u64(b, s->nvml_ns);
        vt_buf_cstr(b, ",\"devices\":[");
        for (int i = 0; i < s->n_gpus; i++) {
            if (i)
                vt_buf_put(b, ",", 1);
            vt__format_gpu(b, &s->gpus[i]);
        }
        vt_buf_cstr(b, "]}");
    }
    vt_buf_put(b, "}", 1);
}

/* ---- the writer thread's tick ---- */

void vt_host_prime(void)
{
    vt_host_cgroup g;
    vt__cgroup_measure(&g);                  /* discovery + the kept cgroup files */
    char status[4096];
    vt__slurp_kept("/proc/self/status", status, sizeof status);
}

int vt_host_tick(void)
{
    pthread_mutex_lock(&vt__host.lock);
    int cg = vt__host.cg_state;
    pthread_mutex_unlock(&vt__host.lock);
    if (cg == 0)
        vt__cgroup_once();
    vt__resolve_uuids();
    uint64_t now = vt_now_ns();
    if (now < vt__host.next_sample_ns)
        return 0;
    vt__host.next_sample_ns = now + vt__host_every_ns();
    if (vt__nvml_ready())   /* loaded by the first allocation's thread, never here */
        vt__nvml_sample();
    return 1;
}
