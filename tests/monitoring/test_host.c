/* test_host.c — unit tests of the parsers in vt_host.c and of vt_prom_render
 * (linked against vt_core, no LD_PRELOAD, no CUDA). Exit 0 = every check held. */
#define _GNU_SOURCE
#include "vt_buf.h"
#include "vt_host.h"
#include "vt_prom.h"

#include <stdio.h>
#include <string.h>

static int failures;
#define CHECK(c) do { if (!(c)) { fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #c); failures++; } } while (0)

static void test_field(void)
{
    const char *status = "Name:\tpython3\nVmHWM:\t  20480 kB\nVmRSS:\t   10240 kB\nVmSwap:\t       0 kB\n";
    uint64_t v = 1;
    CHECK(vt_host_field(status, "VmRSS:", &v) == 0 && v == 10240ull * 1024);
    CHECK(vt_host_field(status, "VmHWM:", &v) == 0 && v == 20480ull * 1024);
    CHECK(vt_host_field(status, "VmSwap:", &v) == 0 && v == 0);
    CHECK(vt_host_field(status, "VmPeak:", &v) == -1);
    const char *events = "low 0\nhigh 3\nmax 7\noom 2\noom_kill 1\noom_group_kill 0\n";
    CHECK(vt_host_field(events, "oom", &v) == 0 && v == 2);          /* not oom_kill */
    CHECK(vt_host_field(events, "oom_kill", &v) == 0 && v == 1);
    CHECK(vt_host_field(events, "max", &v) == 0 && v == 7);
    CHECK(vt_host_field("oom x\n", "oom", &v) == -1);
}

static void test_cgroup(void)
{
    char dir[4096];
    /* cgroup v2 only (systemd unified) */
    const char *cg2 = "0::/user.slice/user-1000.slice/session-3.scope\n";
    const char *mi2 =
        "22 1 0:21 / / rw - ext4 /dev/sda1 rw\n"
        "35 22 0:30 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate\n";
    CHECK(vt_host_cgroup_dir(cg2, mi2, 2, dir, sizeof dir) == 0 &&
          !strcmp(dir, "/sys/fs/cgroup/user.slice/user-1000.slice/session-3.scope"));
    CHECK(vt_host_cgroup_dir(cg2, mi2, 1, dir, sizeof dir) == -1);
    /* a container: the mount's root is the container's cgroup */
    const char *cgc = "0::/kubepods/pod1/ctr\n";
    const char *mic = "40 30 0:30 /kubepods/pod1/ctr /sys/fs/cgroup ro - cgroup2 cgroup2 rw\n";
    CHECK(vt_host_cgroup_dir(cgc, mic, 2, dir, sizeof dir) == 0 && !strcmp(dir, "/sys/fs/cgroup"));
    /* the root cgroup */
    CHECK(vt_host_cgroup_dir("0::/\n", mi2, 2, dir, sizeof dir) == 0 && !strcmp(dir, "/sys/fs/cgroup"));
    /* hybrid: v1 memory controller next to an empty v2 hierarchy */
    const char *cg1 = "5:devices:/\n4:memory:/process_api/abc\n3:cpu,cpuacct:/x\n0::/\n";
    const char *mi1 =
        "32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n"
        "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
        "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
    CHECK(vt_host_cgroup_dir(cg1, mi1, 1, dir, sizeof dir) == 0 &&
          !strcmp(dir, "/sys/fs/cgroup/memory/process_api/abc"));
    CHECK(vt_host_cgroup_dir(cg1, mi1, 2, dir, sizeof dir) == 0 && !strcmp(dir, "/sys/fs/cgroup/unified"));
    /* "memory" must be a whole controller name */
    CHECK(vt_host_cgroup_dir("4:nomemory:/a\n", mi1, 1, dir, sizeof dir) == -1);
    CHECK(vt_host_cgroup_dir("", mi1, 2, dir, sizeof dir) == -1);
}

static void test_uuid(void)
{
    unsigned char b[16] = {'s', 'i', 'm', 'c', 'u', 'd', 'a', '-', 'd', 'e', 'v', 0, 0, 0, 0, 0xab};
    char s[64];
    vt_host_format_uuid(b, s, sizeof s);
    CHECK(!strcmp(s, "GPU-73696d63-7564-612d-6465-7600000000ab"));
    CHECK(strlen(s) == 40);
}

static void test_render(void)
{
    static vt_prom_snap s;
    memset(&s, 0, sizeof s);
    s.pid = 42;
    s.up = 1;
    s.step = 7;
    s.n_devs = 1;
    vt_prom_dev *d = &s.devs[0];
    d->device = 1;
    strcpy(d->uuid, "GPU-00000000-0000-0000-0000-000000000001");
    d->kinds[0].live_bytes = 1048576;
    d->kinds[0].alloc_total = 3;
    d->kinds[0].failed_total = 1;
    d->fragmentation = 0.25;
    d->untracked_known = 1;
    d->untracked_bytes = -5;
    d->growth_bytes_per_step = 4096;
    vt_buf b;
    vt_buf_init(&b);
    vt_prom_render(&b, &s);
    vt_buf_put(&b, "", 1);
    CHECK(!b.oom);
    const char *t = b.p;
    CHECK(strstr(t, "# TYPE vramtrace_up gauge\nvramtrace_up{pid=\"42\"} 1\n"));
    CHECK(strstr(t, "vramtrace_step{pid=\"42\"} 7\n"));
    CHECK(strstr(t, "vramtrace_live_bytes{pid=\"42\",gpu=\"1\",UUID=\"GPU-00000000-0000-0000-0000-000000000001\",kind=\"device\"} 1048576\n"));
    CHECK(strstr(t, "# TYPE vramtrace_allocations_total counter\n"));
    CHECK(strstr(t, "vramtrace_failed_allocations_total{pid=\"42\",gpu=\"1\",UUID=\"GPU-00000000-0000-0000-0000-000000000001\",kind=\"device\"} 1\n"));
    CHECK(strstr(t, ",kind=\"vmm\"} 0\n"));
    CHECK(strstr(t, "vramtrace_fragmentation_ratio{pid=\"42\",gpu=\"1\",UUID=\"GPU-00000000-0000-0000-0000-000000000001\"} 0.250000\n"));
    CHECK(strstr(t, "UUID=\"GPU-00000000-0000-0000-0000-000000000001\"} -5\n"));
    CHECK(strstr(t, "vramtrace_fastest_site_growth_bytes_per_step{pid=\"42\",gpu=\"1\",UUID=\"GPU-00000000-0000-0000-0000-000000000001\"} 4096\n"));
    CHECK(!strstr(t, "vramtrace_unfreed_bytes"));          /* only at exit */
    CHECK(!strstr(t, "vramtrace_device_memory_used_bytes")); /* not known  */
    CHECK(!strstr(t, "vramtrace_pool_reserved_bytes"));
    /* every sample line's family was announced by HELP and TYPE just before */
    int lines = 0;
    for (const char *l = t; *l; l = strchr(l, '\n') + 1) {
        lines++;
        if (*l == '#')
            continue;
        char name[128];
        size_t n = strcspn(l, "{ ");
        snprintf(name, sizeof name, "# TYPE %.*s ", (int)n, l);
        CHECK(strstr(t, name) && strstr(t, name) < l);
    }
    CHECK(lines > 40);
    s.up = 0;
    s.at_exit = 1;
    vt_buf_reset(&b);
    vt_prom_render(&b, &s);
    vt_buf_put(&b, "", 1);
    CHECK(strstr(b.p, "vramtrace_up{pid=\"42\"} 0\n"));
    CHECK(strstr(b.p, "# TYPE vramtrace_unfreed_bytes gauge\n"));
    /* a known rank: on every sample, after pid */
    s.has_rank = 1;
    s.rank = 3;
    vt_buf_reset(&b);
    vt_prom_render(&b, &s);
    vt_buf_put(&b, "", 1);
    CHECK(strstr(b.p, "vramtrace_up{pid=\"42\",rank=\"3\"} 0\n"));
    CHECK(strstr(b.p, "vramtrace_live_bytes{pid=\"42\",rank=\"3\",gpu=\"1\",UUID="));
    for (const char *l = b.p; *l; l = strchr(l, '\n') + 1)
        if (*l != '#') CHECK(!strncmp(strchr(l, '{'), "{pid=\"42\",rank=\"3\"", 18));
    vt_buf_free(&b);
}

int main(void)
{
    test_field();
    test_cgroup();
    test_uuid();
    test_render();
    if (failures)
        fprintf(stderr, "%d check(s) failed\n", failures);
    return failures ? 1 : 0;
}
