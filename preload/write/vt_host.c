/* vt_host.c — host and hardware signals, and the Prometheus feed (see vt_host.h,
 * docs/snapshot-format.md "host").
 *
 * Design: two entry points, one per place the writer gives us.
 *   vt_host_tick   (writer thread, top of each loop iteration, outside every lock)
 *                  does everything that may be slow or may call into other
 *                  libraries: the device UUIDs from the real driver (once), the
 *                  NVML dlopen + nvmlInit_v2 (once) and an NVML sample when due,
 *                  each into a local copy that is then stored under our lock; then
 *                  it writes the textfile if a snapshot from another thread left
 *                  it behind.
 *   vt_host_format (any thread writing a snapshot, under the writer's output lock)
 *                  reads /proc/self/status and the cgroup files (cheap syscalls),
 *                  copies the NVML cache, appends the "host" object, and publishes
 *                  the snapshot's figures to vt_prom.
 * Nothing here ever runs inside a CUDA hook except vt_host_format for an "oom"
 * snapshot, which makes no CUDA or NVML call.
 */
#define _GNU_SOURCE
#include "vt_host.h"
#include "vt_config.h"
#include "vt_fd.h"
#include "vt_guard.h"
#include "vt_log.h"
#include "vt_nvml.h"
#include "vt_prom.h"
#include "vt_writer.h"

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

#define VT_HOST_GPUS 16   /* NVML devices sampled (CUDA ordinals 0..15) */

/* One device as NVML saw it at the last sample. */
typedef struct vt_host_gpu {
    int      device;              /* CUDA ordinal, -1 when matched by NVML index only */
    unsigned index;               /* NVML index                                      */
    char     uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
    int      mem_ok;
    uint64_t used, total;         /* nvmlDeviceGetMemoryInfo, bytes                  */
    int      proc_ok;             /* our pid listed with a value                     */
    uint64_t proc_used;
    int      ecc_ok[2][2];        /* [NVML_VOLATILE_ECC|AGGREGATE][CORRECTED|UNCORR.] */
    uint64_t ecc[2][2];
    int      retired_ok;
    uint64_t retired[2];          /* [nvmlPageRetirementCause_t]                     */
    int      remap_ok;
    unsigned remap_corr, remap_unc, remap_pending, remap_failure;
} vt_host_gpu;

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
    pthread_t writer;
    int       writer_known;
    /* writer thread only */
    int       nvml_state;                /* 0 untried, 1 ready, -1 unavailable         */
    vt_nvml_fns nvml;
    uint64_t  next_sample_ns;
    int       atfork_done;
} vt__host = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* ---- small helpers ---- */

static size_t vt__slurp(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    size_t n = 0;
    while (n + 1 < cap) {
        ssize_t r = read(fd, buf + n, cap - 1 - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    buf[n] = 0;
    return n;
}

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
        return vt__slurp(path, buf, cap);
    pthread_mutex_lock(&vt__kept.lock);
    pid_t me = getpid();
    int i;
    for (i = 0; i < vt__kept.n; i++)
        if (!strcmp(vt__kept.e[i].path, path))
            break;
    if (i == vt__kept.n && i == VT_KEPT_MAX) {
        pthread_mutex_unlock(&vt__kept.lock);
        return vt__slurp(path, buf, cap);
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
    int fd = vt__kept.e[i].fd;
    size_t n = 0;
    while (n + 1 < cap) {
        ssize_t r = pread(fd, buf + n, cap - 1 - n, (off_t)n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    buf[n] = 0;
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
    if (vt__slurp("/proc/self/cgroup", cg, sizeof cg) == 0 ||
        vt__slurp("/proc/self/mountinfo", mi, sizeof mi) == 0) {
        version = 0;
    } else if (vt_host_cgroup_dir(cg, mi, 2, dir, sizeof dir) == 0 &&
               snprintf(probe, sizeof probe, "%s/memory.events", dir) < (int)sizeof probe &&
               vt__slurp(probe, tmp, sizeof tmp) > 0) {
        version = 2;
    } else if (vt_host_cgroup_dir(cg, mi, 1, dir, sizeof dir) == 0 &&
               snprintf(probe, sizeof probe, "%s/memory.oom_control", dir) < (int)sizeof probe &&
               vt__slurp(probe, tmp, sizeof tmp) > 0) {
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

/* ---- the real driver: UUIDs ---- */

/* CUresult cuDeviceGetCount(int *count); CUresult cuDeviceGetUuid_v2(CUuuid *uuid,
 * CUdevice dev) — cuda.h; CUuuid is struct { char bytes[16]; }, CUresult an enum
 * whose CUDA_SUCCESS is 0. Spelled here so that vt_core needs no CUDA headers. */
typedef int (*vt_cuDeviceGetCount_t)(int *);
typedef int (*vt_cuDeviceGetUuid_v2_t)(unsigned char *, int);

static void vt__resolve_uuids(void)
{
    if (__atomic_load_n(&vt__host.uuids_done, __ATOMIC_ACQUIRE) || vt_writer_is_exiting())
        return;
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
    if (!h)
        return;   /* not loaded (yet): try at the next tick */
    vt_cuDeviceGetCount_t count = (vt_cuDeviceGetCount_t)dlsym(h, "cuDeviceGetCount");
    vt_cuDeviceGetUuid_v2_t get = (vt_cuDeviceGetUuid_v2_t)dlsym(h, "cuDeviceGetUuid_v2");
    int n = 0;
    if (!count || !get || count(&n) != 0) {
        dlclose(h);
        return;
    }
    char u[VT_MAX_DEVICES][48];
    memset(u, 0, sizeof u);
    for (int d = 0; d < n && d < VT_MAX_DEVICES; d++) {
        unsigned char b[16];
        if (get(b, d) == 0)
            vt_host_format_uuid(b, u[d], sizeof u[d]);
    }
    dlclose(h);   /* RTLD_NOLOAD took a reference: give it back */
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

static void vt__nvml_open(void)
{
    vt__host.nvml_state = -1;
    if (!vt__config.nvml) {
        vt_log(VT_LOG_DEBUG, "VRAMTRACE_NVML=0: NVML not loaded, no NVML figures");
        return;
    }
    void *h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        vt_log(VT_LOG_DEBUG, "no NVML (libnvidia-ml.so.1): %s", dlerror());
        return;
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
        return;   /* the library stays loaded: unloading NVML is not worth the risk */
    }
    nvmlReturn_t r = f->init();
    if (r != NVML_SUCCESS) {
        vt_log(VT_LOG_DEBUG, "nvmlInit_v2 failed (%d): no NVML figures", (int)r);
        return;
    }
    vt__host.nvml_state = 1;
    vt_log(VT_LOG_DEBUG, "NVML ready");
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
    if (f->procs) {
        nvmlProcessInfo_t infos[64];
        unsigned int n = 64;
        nvmlReturn_t r = f->procs(dev, &n, infos);
        unsigned pid = (unsigned)getpid();
        for (unsigned i = 0; r == NVML_SUCCESS && i < n && i < 64; i++)
            if (infos[i].pid == pid && infos[i].usedGpuMemory != NVML_VALUE_NOT_AVAILABLE) {
                g->proc_ok = 1;
                g->proc_used += infos[i].usedGpuMemory;   /* MIG: one entry per instance */
            }
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

static void vt__host_fork_child(void)
{
    pthread_mutex_init(&vt__host.lock, NULL);
    vt__host.writer_known = 0;
    vt__host.next_sample_ns = 0;
    vt_prom_after_fork_child();
}

/* ---- formatting ---- */

static void vt__kv_opt(vt_buf *b, const char *key, int ok, uint64_t v)
{
    vt_buf_cstr(b, key);
    if (ok)
        vt_buf_u64(b, v);
    else
        vt_buf_cstr(b, "null");
}

static void vt__kv_bool(vt_buf *b, const char *key, int ok, unsigned v)
{
    vt_buf_cstr(b, key);
    vt_buf_cstr(b, !ok ? "null" : v ? "true" : "false");
}

static void vt__format_cgroup(vt_buf *b)
{
    pthread_mutex_lock(&vt__host.lock);
    int state = vt__host.cg_state, version = vt__host.cg_version;
    char dir[PATH_MAX];
    memcpy(dir, vt__host.cg_dir, sizeof dir);
    pthread_mutex_unlock(&vt__host.lock);
    if (state == 0) {
        vt__cgroup_once();
        pthread_mutex_lock(&vt__host.lock);
        state = vt__host.cg_state;
        version = vt__host.cg_version;
        memcpy(dir, vt__host.cg_dir, sizeof dir);
        pthread_mutex_unlock(&vt__host.lock);
    }
    if (state <= 0)
        return;
    char path[PATH_MAX + 32], text[1024];
    uint64_t oom = 0, kill = 0, cur = 0, max = 0;
    int oom_ok = 0, kill_ok = 0, cur_ok = 0, max_ok = 0;
    if (version == 2) {
        snprintf(path, sizeof path, "%s/memory.events", dir);
        if (vt__slurp_kept(path, text, sizeof text) == 0)
            return;   /* no longer readable: absent */
        oom_ok = vt_host_field(text, "oom", &oom) == 0;
        kill_ok = vt_host_field(text, "oom_kill", &kill) == 0;
        snprintf(path, sizeof path, "%s/memory.current", dir);
        if (vt__slurp_kept(path, text, sizeof text) > 0)
            cur_ok = sscanf(text, "%lu", &cur) == 1;
        snprintf(path, sizeof path, "%s/memory.max", dir);
        if (vt__slurp_kept(path, text, sizeof text) > 0)
            max_ok = sscanf(text, "%lu", &max) == 1;   /* "max": no limit -> null */
    } else {
        snprintf(path, sizeof path, "%s/memory.oom_control", dir);
        if (vt__slurp_kept(path, text, sizeof text) == 0)
            return;
        kill_ok = vt_host_field(text, "oom_kill", &kill) == 0;
        snprintf(path, sizeof path, "%s/memory.usage_in_bytes", dir);
        if (vt__slurp_kept(path, text, sizeof text) > 0)
            cur_ok = sscanf(text, "%lu", &cur) == 1;
        snprintf(path, sizeof path, "%s/memory.limit_in_bytes", dir);
        if (vt__slurp_kept(path, text, sizeof text) > 0)
            max_ok = sscanf(text, "%lu", &max) == 1 && max < (1ull << 62);  /* "unlimited" */
    }
    vt_buf_cstr(b, ",\"cgroup\":{\"version\":");
    vt_buf_u64(b, (uint64_t)version);
    vt_buf_cstr(b, ",\"path\":");
    vt_buf_jstr(b, dir, 1024);
    vt__kv_opt(b, ",\"oom\":", oom_ok, oom);
    vt__kv_opt(b, ",\"oom_kill\":", kill_ok, kill);
    vt__kv_opt(b, ",\"memory_current_bytes\":", cur_ok, cur);
    vt__kv_opt(b, ",\"memory_max_bytes\":", max_ok, max);
    vt_buf_put(b, "}", 1);
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

/* Fills the NVML-derived figures of s (device used/total, this process's use,
 * untracked) from gpus; falls back to the snapshot's cuMemGetInfo figures. */
static void vt__prom_apply_gpus(vt_prom_snap *s, const vt_host_gpu *gpus, int n_gpus)
{
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
        if (p->proc_known) {               /* this process alone (NVML) */
            p->untracked_known = 1;
            p->untracked_bytes = (int64_t)p->proc_used_bytes - (int64_t)p->tracked_bytes;
        } else if (p->meminfo_known) {     /* the whole device (cuMemGetInfo) */
            p->untracked_known = 1;
            p->untracked_bytes = (int64_t)(p->meminfo_total - p->meminfo_free) - (int64_t)p->tracked_bytes;
        }
    }
}

typedef struct {
    const vt_host_gpu *gpus; int n;
    int uuids_done; char (*uuids)[48];
} vt_gpu_set;

static void vt__prom_edit_gpus(vt_prom_snap *s, void *arg)
{
    const vt_gpu_set *g = arg;
    for (int i = 0; i < s->n_devs; i++)   /* snapshots taken before the UUIDs were known */
        if (!s->devs[i].uuid[0] && g->uuids_done && s->devs[i].device >= 0 &&
            s->devs[i].device < VT_MAX_DEVICES)
            memcpy(s->devs[i].uuid, g->uuids[s->devs[i].device], sizeof s->devs[i].uuid);
    vt__prom_apply_gpus(s, g->gpus, g->n);
}

/* Builds the textfile figures of this snapshot. */
static void vt__prom_snap(vt_prom_snap *s, const vt_collect *c, int is_exit,
                          const vt_host_gpu *gpus, int n_gpus)
{
    memset(s, 0, sizeof *s);
    s->pid = (int)getpid();
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
        /* device memory this process's allocations explain: device, managed and VMM
         * live bytes, plus what stream-ordered pools hold (reserved, or the async live
         * bytes when the pool is not known); pinned host memory is not on the device */
        uint64_t async = d->kinds[VT_KIND_ASYNC].live_bytes;
        p->tracked_bytes = d->kinds[VT_KIND_DEVICE].live_bytes + d->kinds[VT_KIND_MANAGED].live_bytes +
                           d->kinds[VT_KIND_VMM].live_bytes +
                           (d->pool_known && d->pool_reserved_bytes > async ? d->pool_reserved_bytes : async);
    }
    vt__prom_apply_gpus(s, gpus, n_gpus);
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

void vt_host_format(vt_buf *b, const vt_collect *c, const char *trigger)
{
    char status[4096];
    uint64_t rss = 0, hwm = 0, swap = 0;
    int rss_ok = 0, hwm_ok = 0, swap_ok = 0;
    if (vt__slurp_kept("/proc/self/status", status, sizeof status) > 0) {
        rss_ok = vt_host_field(status, "VmRSS:", &rss) == 0;
        hwm_ok = vt_host_field(status, "VmHWM:", &hwm) == 0;
        swap_ok = vt_host_field(status, "VmSwap:", &swap) == 0;
    }
    vt_buf_cstr(b, ",\"host\":{");
    vt__kv_opt(b, "\"rss_bytes\":", rss_ok, rss);
    vt__kv_opt(b, ",\"rss_peak_bytes\":", hwm_ok, hwm);
    vt__kv_opt(b, ",\"swap_bytes\":", swap_ok, swap);
    vt__format_cgroup(b);

    static vt_host_gpu gpus[VT_HOST_GPUS];   /* under the writer's output lock */
    pthread_mutex_lock(&vt__host.lock);
    int n = vt__host.n_gpus;
    uint64_t at = vt__host.nvml_ns;
    memcpy(gpus, vt__host.gpus, sizeof gpus[0] * (size_t)n);
    int on_writer = vt__host.writer_known && pthread_equal(vt__host.writer, pthread_self());
    pthread_mutex_unlock(&vt__host.lock);
    if (at) {
        vt_buf_cstr(b, ",\"nvml\":{\"time_ns\":");
        vt_buf_u64(b, at);
        vt_buf_cstr(b, ",\"devices\":[");
        for (int i = 0; i < n; i++) {
            if (i)
                vt_buf_put(b, ",", 1);
            vt__format_gpu(b, &gpus[i]);
        }
        vt_buf_cstr(b, "]}");
    }
    vt_buf_put(b, "}", 1);

    if (vt_prom_enabled()) {
        static vt_prom_snap s;   /* under the writer's output lock */
        int is_exit = !strcmp(trigger, VT_TRIGGER_EXIT);
        vt__prom_snap(&s, c, is_exit, gpus, n);
        vt_prom_publish(&s, is_exit || on_writer);
    }
}

/* ---- the writer thread's tick ---- */

void vt_host_prime(void)
{
    vt_buf b;
    vt_buf_init(&b);
    vt__format_cgroup(&b);                   /* discovery + the kept cgroup files */
    vt_buf_free(&b);
    char status[4096];
    vt__slurp_kept("/proc/self/status", status, sizeof status);
    if (vt__host.nvml_state == 0)            /* no writer thread yet: ours to touch */
        vt__nvml_open();
}

void vt_host_tick(void)
{
    if (!vt__host.atfork_done) {
        vt__host.atfork_done = 1;
        pthread_atfork(NULL, NULL, vt__host_fork_child);
    }
    pthread_mutex_lock(&vt__host.lock);
    vt__host.writer = pthread_self();
    vt__host.writer_known = 1;
    int cg = vt__host.cg_state;
    pthread_mutex_unlock(&vt__host.lock);
    if (cg == 0)
        vt__cgroup_once();
    vt__resolve_uuids();
    uint64_t now = vt_now_ns();
    if (now >= vt__host.next_sample_ns) {
        uint64_t every = (uint64_t)(vt__config.interval_ms > 0 ? vt__config.interval_ms : 1000) * 1000000ull;
        vt__host.next_sample_ns = now + every - every / 10;
        if (vt__host.nvml_state == 0)
            vt__nvml_open();
        if (vt__host.nvml_state > 0)
            vt__nvml_sample();
        /* fresh figures (NVML, UUIDs) in the textfile between snapshots */
        static vt_host_gpu gpus[VT_HOST_GPUS];   /* writer thread only */
        static char uuids[VT_MAX_DEVICES][48];
        pthread_mutex_lock(&vt__host.lock);
        vt_gpu_set set = { gpus, vt__host.n_gpus, vt__host.uuids_done, uuids };
        memcpy(gpus, vt__host.gpus, sizeof gpus[0] * (size_t)set.n);
        memcpy(uuids, vt__host.uuid, sizeof uuids);
        pthread_mutex_unlock(&vt__host.lock);
        vt_prom_edit(vt__prom_edit_gpus, &set);
    }
    vt_prom_flush();
}
