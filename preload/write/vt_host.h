/* vt_host.h — host and hardware signals of the snapshots (the "host" object of
 * docs/snapshot-format.md), sampled at most once per VRAMTRACE_HOST_INTERVAL_MS into a vt_host_sample that the writer formats and
 * hands to the Prometheus textfile (vt_prom.h). No file is written here.
 *
 * What is sampled, and where:
 *   - the process's resident and swapped memory (/proc/self/status VmRSS, VmHWM,
 *     VmSwap; kB there, bytes here) and its cgroup's memory events (cgroup v2
 *     memory.events "oom"/"oom_kill", memory.current, memory.max; cgroup v1
 *     memory.oom_control "oom_kill", memory.usage_in_bytes, memory.limit_in_bytes):
 *     read when a snapshot is written and a sample is due (vt_host_measure), on
 *     whichever thread writes it (pread on descriptors kept open, no lock but our
 *     own);
 *   - NVML (libnvidia-ml.so.1, dlopen'ed on the writer thread only, never in a
 *     hook; nvmlInit_v2 once; absent library or failed init = no "nvml" key):
 *     per CUDA device, matched by UUID (nvmlDeviceGetHandleByUUID), the device's
 *     used/total memory (nvmlDeviceGetMemoryInfo), this process's used memory
 *     (nvmlDeviceGetComputeRunningProcesses_v3, the entry with our pid), ECC counts
 *     (nvmlDeviceGetTotalEccErrors: NVML_MEMORY_ERROR_TYPE_CORRECTED/UNCORRECTED x
 *     NVML_VOLATILE_ECC/NVML_AGGREGATE_ECC), retired pages
 *     (nvmlDeviceGetRetiredPages, per nvmlPageRetirementCause_t) and remapped rows
 *     (nvmlDeviceGetRemappedRows), and with this process's use the tracked bytes of
 *     the same moment (vt_host_tracked_bytes, read from the core just before and
 *     just after that query: two short holds of the core lock). Sampled by the writer
 *     thread, outside every other lock, at most once per VRAMTRACE_HOST_INTERVAL_MS,
 *     into a cache; the record written after a sample carries it with its time;
 *   - device UUIDs (cuDeviceGetUuid_v2 of the real driver, found with
 *     dlopen("libcuda.so.1", RTLD_NOLOAD)), on the writer thread, outside locks,
 *     once, formatted like nvidia-smi and DCGM: "GPU-" and the 16 bytes as 8-4-4-4-12
 *     lowercase hex digits, e.g. "GPU-5f2a0c7e-91d3-4b6a-8e0f-1c2d3e4f5a6b".
 *     No CUDA call is made once process exit has begun (vt_state_exiting).
 *
 * Thread safety: one mutex (vt__host.lock) guards the caches; it is held only to
 * copy them, never across a CUDA, NVML or file call. vt_host_tick runs on the writer
 * thread only; vt_host_measure on any thread that writes a snapshot (under the
 * writer's output lock). A fork child calls vt_host_fork_child (from the library's one
 * pthread_atfork registration, interpose/vt_lifecycle.c).
 */
#ifndef VT_HOST_H
#define VT_HOST_H

#include <stddef.h>
#include <stdint.h>
#include <limits.h>

#include "vt_buf.h"
#include "vt_core.h"
#include "vt_nvml_types.h"

#define VT_HOST_GPUS 16   /* NVML devices sampled (CUDA ordinals 0..15) */

/* One device as NVML saw it at the last sample. Bytes; counts. */
typedef struct vt_host_gpu {
    int      device;              /* CUDA ordinal, -1 when matched by NVML index only */
    unsigned index;               /* NVML index                                      */
    char     uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE];
    int      mem_ok;
    uint64_t used, total;         /* nvmlDeviceGetMemoryInfo, bytes                  */
    int      proc_ok;             /* our pid listed with a value                     */
    uint64_t proc_used;
    int      tracked_ok;          /* tracked known for the moment of proc_used       */
    uint64_t tracked;             /* vt_host_tracked_bytes of the device, read just
                                     before and just after the process query, and
                                     equal both times (nothing moved meanwhile)      */
    int      ecc_ok[2][2];        /* [NVML_VOLATILE_ECC|AGGREGATE][CORRECTED|UNCORR.] */
    uint64_t ecc[2][2];
    int      retired_ok;
    uint64_t retired[2];          /* [nvmlPageRetirementCause_t]                     */
    int      remap_ok;
    unsigned remap_corr, remap_unc, remap_pending, remap_failure;
} vt_host_gpu;

/* This process's memory cgroup at one moment; *_ok 0 = not known (null). Bytes. */
typedef struct vt_host_cgroup {
    int      ok;                  /* a readable memory cgroup: the fields below       */
    int      version;             /* 1 or 2                                           */
    char     dir[PATH_MAX];
    int      oom_ok, kill_ok, cur_ok, max_ok;
    uint64_t oom, kill;           /* events (v2 "oom", "oom_kill"; v1 "oom_kill")     */
    uint64_t cur, max;            /* usage and limit                                  */
} vt_host_cgroup;

/* The host figures of one snapshot. Bytes. */
typedef struct vt_host_sample {
    uint64_t       proc_ns;             /* CLOCK_MONOTONIC of the /proc and cgroup reads;
                                           0 = none yet                                  */
    int            rss_ok, hwm_ok, swap_ok;
    uint64_t       rss, hwm, swap;      /* VmRSS, VmHWM, VmSwap                          */
    vt_host_cgroup cgroup;
    uint64_t       nvml_ns;             /* CLOCK_MONOTONIC of the NVML sample; 0 none     */
    int            n_gpus;
    vt_host_gpu    gpus[VT_HOST_GPUS];
} vt_host_sample;

/* Writer thread, once per loop iteration (vt_writer.c): resolves device UUIDs the
 * first time and samples NVML when due (once vt_host_nvml_load made it ready; the
 * writer thread never loads it). Returns 1 when it sampled (fresh
 * figures for the textfile between snapshots), else 0. Never blocks on another thread
 * for longer than a cache copy. */
int vt_host_tick(void);

/* Device UUIDs (cuDeviceGetUuid_v2 of every ordinal, CUDA Driver API "Device
 * Management"), asked of the real driver now if not known yet; one atomic load once
 * known. For a program thread outside every hook and signal handler, before it writes
 * a snapshot itself (vramtrace_step, vramtrace_snapshot): the writer thread's ticks
 * alone may come after a short program's step snapshots, which would then carry no
 * UUID (and the textfile an empty UUID label that later changes). Does nothing while
 * the driver is not initialised (retried later) or once the process is exiting.
 * Thread-safe; keeps errno. */
void vt_host_uuids(void);

/* Loads NVML once for this process (dlopen of libnvidia-ml.so.1, its functions,
 * nvmlInit_v2), unless VRAMTRACE_NVML=0; a missing or failing NVML leaves it off
 * (one debug line, no warning). Returns 0 when that is settled (ready or off), 1 when
 * another thread of this process is loading it (no wait: the caller tries again at a
 * later call). Takes the loader's locks and may run NVML's constructors: call it on
 * the thread of the process's first CUDA allocation, with no lock of ours held and
 * outside any dl_iterate_phdr callback (vt_hook_start calls it before the writer's
 * start, whose start lock a thread inside dlopen may wait for), so that its
 * descriptors come and go before the writer thread exists. A fork child whose parent
 * was loading it loads it itself. Thread-safe; keeps errno. */
int vt_host_nvml_load(void);

/* One-time file work (cgroup discovery, opening the files read at every snapshot at
 * high numbers), done by vt_writer_start on the thread that makes the
 * process's first CUDA allocation, inside that call and before the writer thread
 * exists: afterwards the writer thread opens no file the program could race with
 * (a program that closes 0 and opens a file must get 0). Not thread-safe with
 * vt_host_tick: call only while no writer thread runs. */
void vt_host_prime(void);

/* A new host sample into s when one is due: force, no sample in s yet, an NVML sample
 * not yet written into the current output file, or VRAMTRACE_HOST_INTERVAL_MS (less a
 * tenth) since s's last one. A sample is the figures of now (/proc/self/status, the
 * cgroup files) and the latest NVML sample. Returns 1 when s holds a new sample (the
 * record being written carries it: vt_host_format), 0 when s is unchanged. Any thread
 * that writes a snapshot (vt_writer.c, under its output lock); no CUDA or NVML call. */
int vt_host_measure(vt_host_sample *s, int force);

/* Appends ,"host":{...} (docs/snapshot-format.md "host") for s to b; its "nvml" block
 * when s holds an NVML sample and either complete (a complete record: every block) or
 * that sample is not yet written into the current output file (the sampler runs once
 * per interval; steps come faster). Under the writer's output lock. */
void vt_host_format(vt_buf *b, const vt_host_sample *s, int complete);
/* A new output file begins: no NVML sample is written into it yet. */
void vt_host_new_file(void);

/* Device memory that this process's tracked allocations explain on one device: the
 * device, managed and VMM live bytes, plus what its stream-ordered pools hold (the
 * pool reserve sampled at the latest snapshot when known and larger, else the async
 * live bytes); pinned host memory is not on the device. What NVML's per-process
 * figure (and, without NVML, cuMemGetInfo's used bytes) is compared with for
 * "untracked" (vt_prom.h). Bytes. Pure. */
uint64_t vt_host_tracked_bytes(const vt_dev_stats *d);

/* Copies the latest NVML sample into gpus; returns how many, *at_ns its time (0: no
 * sample yet). Thread-safe. */
int vt_host_nvml_copy(vt_host_gpu gpus[VT_HOST_GPUS], uint64_t *at_ns);

/* Fork child step: re-initialises the locks (another thread may have held one at the
 * fork) and samples NVML again at the first tick. The caches are kept (the same
 * devices). */
void vt_host_fork_child(void);

/* UUID of CUDA device ordinal `device` as "GPU-..." into out (cap >= 41). Returns 0,
 * or -1 when not known (yet). Thread-safe. */
int vt_host_uuid(int device, char *out, size_t cap);

/* CUuuid bytes -> "GPU-" + 8-4-4-4-12 hex digits, e.g.
 * "GPU-5f2a0c7e-91d3-4b6a-8e0f-1c2d3e4f5a6b" (41 bytes with the NUL; cap >= 41).
 * Lowercase hex, nvidia-smi's and DCGM's form. */
void vt_host_format_uuid(const unsigned char bytes[16], char *out, size_t cap);

/* ---- parsers, exposed for unit tests (pure, thread-safe) ---- */

/* Value of "key <number>" or "Key:  <number> kB" lines: finds the first line that
 * starts with key (key includes its ':' when the file has one) and parses the
 * unsigned decimal after it; a " kB" suffix multiplies by 1024. Returns 0 or -1. */
int vt_host_field(const char *text, const char *key, uint64_t *out);

/* Cgroup folder of this process for `version` (2: the "0::/path" line and the
 * cgroup2 mount; 1: the line whose controllers include "memory" and the cgroup
 * mount whose super options include "memory"), from the texts of
 * /proc/self/cgroup and /proc/self/mountinfo. Writes mountpoint + path (the mount's
 * root removed) to dir. Returns 0, or -1 when there is no such hierarchy. */
int vt_host_cgroup_dir(const char *proc_cgroup, const char *mountinfo, int version,
                       char *dir, size_t cap);

#endif /* VT_HOST_H */
