/* gshmem-info --check: host memory: hugepages, the memlock limit, vm.max_map_count. */
#include "info_check.h"

#include "core/check.h"
#include "core/cpulist.h"
#include "core/heap.h"

#include <stdint.h>
#include <string.h>
#include <unistd.h>

static void mem_hugepages_missing(struct info_check *c, const char *without)
{
    int on = c->env.hugepages == GSHMEMI_HUGEPAGES_ON;
    c->fails += gshmemi_check_line(c->out, on ? GSHMEMI_CHECK_FAIL : GSHMEMI_CHECK_WARN, "hugepages",
                                   "%s: %s", without, on ? "GSHMEM_HUGEPAGES=on makes gshmem_init fail"
                                                         : "the host heap falls back to normal pages with THP advice");
}

void info_check_hugepages(struct info_check *c)
{
    if (info_check_heap_on_device(c)) {
        gshmemi_check_line(c->out, GSHMEMI_CHECK_OK, "hugepages", "not needed: the heap goes on the GPU (hugepages "
                           "back only a host heap, GSHMEM_HEAP=host)");
        return;
    }
    if (c->env.hugepages == GSHMEMI_HUGEPAGES_OFF) {
        gshmemi_check_line(c->out, GSHMEMI_CHECK_OK, "hugepages", "not used: GSHMEM_HUGEPAGES=off puts the host heap "
                           "on normal pages with THP advice");
        return;
    }
    struct gshmemi_hugepages hp;
    gshmemi_heap_hugepages_read(c->root, &hp);
    size_t per_pe = gshmemi_heap_hugepages_needed(c->env.symmetric_size);
    char heap[32];
    info_check_size_text(info_check_heap_bytes(c), heap, sizeof(heap));
    if (hp.total < 0) {
        mem_hugepages_missing(c, "no 2 MiB hugepage pool (/sys/kernel/mm/hugepages/hugepages-2048kB)");
        gshmemi_check_fix(c->out, "a kernel with hugetlbfs (CONFIG_HUGETLBFS) and 2 MiB pages%s",
                          c->env.hugepages == GSHMEMI_HUGEPAGES_ON ? ", or GSHMEM_HUGEPAGES=auto" : "");
        return;
    }
    long avail = gshmemi_heap_hugepages_available(&hp);
    if ((size_t)avail >= per_pe) {
        gshmemi_check_line(c->out, GSHMEMI_CHECK_OK, "hugepages", "%ld of %ld 2 MiB hugepages free; a PE's %s heap "
                           "takes %zu, so %zu PE%s per node fit", avail, hp.total, heap, per_pe,
                           (size_t)avail / per_pe, (size_t)avail / per_pe == 1 ? "" : "s");
        return;
    }
    char text[256];
    snprintf(text, sizeof(text), "%ld of %ld 2 MiB hugepages free, but a PE's %s heap takes %zu", avail, hp.total,
             heap, per_pe);
    mem_hugepages_missing(c, text);
    long in_use = hp.total - avail, want = in_use + (long)per_pe;
    if (hp.default_kb == 2048)
        gshmemi_check_fix(c->out, "sysctl -w vm.nr_hugepages=%ld (%zu per PE on this node, on top of the %ld in use; "
                          "persist it in /etc/sysctl.d/)", want, per_pe, in_use);
    else
        gshmemi_check_fix(c->out, "echo %ld > /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages (%zu per PE on "
                          "this node, on top of the %ld in use; vm.nr_hugepages sizes the default %ld kB pool here)",
                          want, per_pe, in_use, hp.default_kb);
    if (c->env.hugepages == GSHMEMI_HUGEPAGES_ON)
        gshmemi_check_fix(c->out, "or GSHMEM_HUGEPAGES=auto to accept normal pages");
}

/* CAP_IPC_LOCK in the effective set, in the initial user namespace (the kernel checks it
 * there; a container's own user namespace does not lift the memlock limit for RDMA
 * registration). */
static int mem_cap_ipc_lock(const struct info_check *c)
{
    char status[8192], map[256];
    unsigned long long caps = 0;
    const char *line = info_check_read(c, "/proc/self/status", status, sizeof(status)) == 0
                           ? strstr(status, "\nCapEff:") : NULL;
    if (!line || sscanf(line, "\nCapEff: %llx", &caps) != 1) return 0;
    unsigned long first = 0, second = 1, count = 0;
    if (info_check_read(c, "/proc/self/uid_map", map, sizeof(map)) == 0 &&
        (sscanf(map, "%lu %lu %lu", &first, &second, &count) != 3 || first != 0 || second != 0 ||
         count != 4294967295ul))
        return 0;
    return (caps >> 14) & 1; /* CAP_IPC_LOCK */
}

static void mem_limit_text(rlim_t v, char *buf, size_t len)
{
    if (v == RLIM_INFINITY) snprintf(buf, len, "unlimited");
    else info_check_size_text((unsigned long long)v, buf, len);
}

void info_check_memlock(struct info_check *c)
{
    char names[256], soft[32], hard[32], heap[32];
    int rdma = info_check_rdma_devices(c, names, sizeof(names));
    size_t need = info_check_heap_bytes(c);
    mem_limit_text(c->memlock.rlim_cur, soft, sizeof(soft));
    mem_limit_text(c->memlock.rlim_max, hard, sizeof(hard));
    info_check_size_text(need, heap, sizeof(heap));
    if (c->memlock.rlim_cur == RLIM_INFINITY || c->memlock.rlim_cur >= need) {
        gshmemi_check_line(c->out, GSHMEMI_CHECK_OK, "memlock", "%s: RDMA registration can pin a PE's %s heap", soft,
                           heap);
        return;
    }
    if (mem_cap_ipc_lock(c)) {
        gshmemi_check_line(c->out, GSHMEMI_CHECK_OK, "memlock", "%s, below a PE's %s heap, but this process has "
                           "CAP_IPC_LOCK, which lifts the limit for RDMA registration", soft, heap);
        return;
    }
    if (rdma)
        c->fails += gshmemi_check_line(c->out, GSHMEMI_CHECK_FAIL, "memlock", "%s (hard %s), below a PE's %s heap: "
                                       "registering it with the RDMA devices (%s) fails", soft, hard, heap, names);
    else
        gshmemi_check_line(c->out, GSHMEMI_CHECK_WARN, "memlock", "%s (hard %s), below a PE's %s heap: no RDMA device "
                           "here, but registering the heap with one needs it", soft, hard, heap);
    if (c->memlock.rlim_max == RLIM_INFINITY || c->memlock.rlim_max >= need)
        gshmemi_check_fix(c->out, "ulimit -l unlimited in the shell or job script that starts the PEs (the hard limit "
                          "allows it)");
    else
        gshmemi_check_fix(c->out, "raise the hard limit: '* soft memlock unlimited' and '* hard memlock unlimited' in "
                          "/etc/security/limits.conf (then log in again); daemons that start jobs (slurmd, "
                          "sshd) need LimitMEMLOCK=infinity in their systemd unit");
    gshmemi_check_fix(c->out, "containers: docker run --ulimit memlock=-1; Kubernetes: the IPC_LOCK capability in the "
                      "container's securityContext, or LimitMEMLOCK=infinity in the container runtime's systemd unit");
}

/*
 * vm.max_map_count bounds the mappings of one process. gshmem's own are few: its heap
 * and the sync heap, each mapped once for itself and once per node-local peer, a
 * device heap's reserved slots split at each peer's mapping, plus rings and thread
 * stacks. 4 per node-local PE + 64 bounds that, with PEs per node at most the CPUs;
 * below it gshmem_init's mappings fail: FAIL. Between that and the kernel's default,
 * 65530, WARN: the CUDA driver, RDMA registration (which splits mappings with
 * madvise(MADV_DONTFORK)) and frameworks such as PyTorch take thousands, and the
 * default is what they are used with, so a value lowered below it is what to catch.
 */
#define MEM_MAP_COUNT_DEFAULT 65530L

static long mem_cpus(const struct info_check *c)
{
    char text[4096];
    cpu_set_t set;
    if (info_check_read(c, "/sys/devices/system/cpu/online", text, sizeof(text)) == 0 &&
        gshmemi_cpulist_parse(text, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? n : 1;
}

void info_check_map_count(struct info_check *c)
{
    long count, cpus = mem_cpus(c), need = 4 * cpus + 64;
    if (info_check_read_long(c, "/proc/sys/vm/max_map_count", &count) != 0) {
        gshmemi_check_line(c->out, GSHMEMI_CHECK_WARN, "max_map_count", "unknown: /proc/sys/vm/max_map_count is "
                           "unreadable");
        gshmemi_check_fix(c->out, "mount /proc (in a container: the runtime's default mounts)");
        return;
    }
    if (count >= MEM_MAP_COUNT_DEFAULT) {
        gshmemi_check_line(c->out, GSHMEMI_CHECK_OK, "max_map_count", "%ld (gshmem needs at most %ld with one PE per "
                           "CPU here; WARN below the kernel default %ld)", count, need, MEM_MAP_COUNT_DEFAULT);
        return;
    }
    if (count < need)
        c->fails += gshmemi_check_line(c->out, GSHMEMI_CHECK_FAIL, "max_map_count", "%ld, below the %ld mappings "
                                       "gshmem may need with one PE per CPU here: gshmem_init's mappings fail",
                                       count, need);
    else
        gshmemi_check_line(c->out, GSHMEMI_CHECK_WARN, "max_map_count", "%ld, below the kernel default %ld: enough "
                           "for gshmem (%ld), but the CUDA driver, RDMA registration and frameworks count against it "
                           "too", count, MEM_MAP_COUNT_DEFAULT, need);
    gshmemi_check_fix(c->out, "sysctl -w vm.max_map_count=%ld (persist it in /etc/sysctl.d/)", MEM_MAP_COUNT_DEFAULT);
}
