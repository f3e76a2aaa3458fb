/* gshmem-info --check: the context, the shared helpers and the configuration item. */
#include "info_check.h"

#include "core/check.h"
#include "core/heap.h"
#include "device/cuda_probe.h"
#include "device/mps.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void check_describe_gpus(struct info_check *c)
{
    int n = c->gpus < INFO_CHECK_MAX_GPUS ? c->gpus : INFO_CHECK_MAX_GPUS;
    for (int d = 0; d < n; d++) {
        struct gshmemi_gpu_info info;
        char why[200];
        if (gshmemi_gpu_describe(d, &info, why, sizeof(why)) == 0) {
            snprintf(c->gpu[d].name, sizeof(c->gpu[d].name), "%s", info.name);
            snprintf(c->gpu[d].pci_bus_id, sizeof(c->gpu[d].pci_bus_id), "%s", info.pci_bus_id);
            c->gpu[d].mps = info.mps;
        } else {
            snprintf(c->gpu[d].name, sizeof(c->gpu[d].name), "not described (%s)", why);
            c->gpu[d].mps = -1;
        }
        for (int p = 0; p < n; p++)
            c->link[d][p] = (signed char)(p == d ? GSHMEMI_GPU_LINK_UNKNOWN : gshmemi_gpu_link(d, p));
    }
}

void info_check_init(struct info_check *c, FILE *out, const char *root)
{
    memset(c, 0, sizeof(*c));
    c->out = out;
    c->root = root;
    if (gshmemi_env_load(&c->env, gshmemi_env_getenv, c->env_error, sizeof(c->env_error)) != 0)
        gshmemi_env_load(&c->env, NULL, NULL, 0);
    else
        c->env_error[0] = '\0';
    c->cuda_built = gshmemi_cuda_built();
    c->gpus = gshmemi_cuda_probe(c->no_gpu_why, sizeof(c->no_gpu_why));
    check_describe_gpus(c);
    if (sched_getaffinity(0, sizeof(c->allowed), &c->allowed) != 0) CPU_ZERO(&c->allowed);
    if (getrlimit(RLIMIT_MEMLOCK, &c->memlock) != 0) c->memlock.rlim_cur = c->memlock.rlim_max = 0;
}

int info_check_run(struct info_check *c)
{
    fprintf(c->out, "gshmem-info --check: this node as this process sees it (OK: nothing to do; WARN: runs, "
                    "slower or with less; FAIL: a run would fail)\n");
    if (c->root[0]) fprintf(c->out, "note: /proc and /sys are read under %s\n", c->root);
    if (geteuid() == 0)
        fprintf(c->out, "note: checked as root; PEs started as another user, by a batch system or in a container "
                        "may have other limits and capabilities: run this check the way PEs start\n");
    info_check_config(c);
    info_check_gpus(c);
    info_check_mps(c);
    info_check_hugepages(c);
    info_check_memlock(c);
    info_check_map_count(c);
    info_check_numa(c);
    info_check_rdma(c);
    if (c->fails)
        fprintf(c->out, "%d item%s failed: a run on this node would fail until %s fixed\n", c->fails,
                c->fails == 1 ? "" : "s", c->fails == 1 ? "it is" : "they are");
    else
        fprintf(c->out, "nothing a run needs is missing\n");
    return c->fails;
}

void info_check_config(struct info_check *c)
{
    char size[32];
    info_check_size_text(c->env.symmetric_size, size, sizeof(size));
    if (c->env_error[0]) {
        c->fails += gshmemi_check_line(c->out, GSHMEMI_CHECK_FAIL, "config", "%s: gshmem_init refuses it; the items "
                                       "below use the defaults", c->env_error);
        gshmemi_check_fix(c->out, "set the variable to an accepted value or unset it (gshmem-info lists them all)");
        return;
    }
    gshmemi_check_line(c->out, GSHMEMI_CHECK_OK, "config", "the GSHMEM_* variables parse; GSHMEM_SYMMETRIC_SIZE %s "
                       "per PE", size);
}

int info_check_read(const struct info_check *c, const char *path, char *buf, size_t len)
{
    char full[1024];
    snprintf(full, sizeof(full), "%s%s", c->root, path);
    FILE *f = fopen(full, "r");
    if (!f) return -1;
    size_t n = fread(buf, 1, len - 1, f);
    int bad = ferror(f);
    fclose(f);
    if (bad) return -1;
    buf[n] = '\0';
    while (n > 0 && buf[n - 1] == '\n') buf[--n] = '\0';
    return 0;
}

int info_check_read_long(const struct info_check *c, const char *path, long *out)
{
    char text[64], *end;
    if (info_check_read(c, path, text, sizeof(text)) != 0) return -1;
    long v = strtol(text, &end, 0);
    if (end == text || *end != '\0') return -1;
    *out = v;
    return 0;
}

int info_check_heap_on_device(const struct info_check *c)
{
    return c->cuda_built && c->gpus > 0 && c->env.heap != GSHMEMI_HEAP_HOST;
}

size_t info_check_heap_bytes(const struct info_check *c)
{
    return gshmemi_heap_hugepages_needed(c->env.symmetric_size) * ((size_t)2 << 20);
}

long info_check_pci_numa_node(const struct info_check *c, const char *pci_bus_id)
{
    char path[128];
    long node;
    snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/numa_node", pci_bus_id);
    return pci_bus_id[0] && info_check_read_long(c, path, &node) == 0 && node >= 0 ? node : -1;
}

static int check_visible_entry(const struct dirent *e)
{
    return e->d_name[0] != '.';
}

int info_check_rdma_devices(const struct info_check *c, char *names, size_t len)
{
    char dir[1024];
    struct dirent **list;
    snprintf(dir, sizeof(dir), "%s/sys/class/infiniband", c->root);
    names[0] = '\0';
    int count = scandir(dir, &list, check_visible_entry, alphasort);
    size_t used = 0;
    for (int i = 0; i < count; i++) {
        int n = snprintf(names + used, len - used, "%s%s", i ? ", " : "", list[i]->d_name);
        if (n > 0 && (size_t)n < len - used) used += (size_t)n;
        free(list[i]);
    }
    if (count >= 0) free(list);
    return count > 0 ? count : 0;
}

void info_check_size_text(unsigned long long bytes, char *buf, size_t len)
{
    static const char *const unit[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (u < 4 && bytes >= 1024 && bytes % 1024 == 0) {
        bytes /= 1024;
        u++;
    }
    snprintf(buf, len, "%llu %s", bytes, unit[u]);
}
