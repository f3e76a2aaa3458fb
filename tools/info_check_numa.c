/* gshmem-info --check: NUMA placement of this process against the GPU a PE would use. */
#include "info_check.h"

#include "core/check.h"
#include "core/cpulist.h"

#include <dirent.h>
#include <stdlib.h>

#define NUMA_MAX_NODES 64

struct numa_nodes {
    int count;
    int id[NUMA_MAX_NODES];
    cpu_set_t cpus[NUMA_MAX_NODES];
};

static int numa_node_entry(const struct dirent *e)
{
    int id;
    char rest;
    return sscanf(e->d_name, "node%d%c", &id, &rest) == 1 && id >= 0;
}

static int numa_by_id(const struct dirent **a, const struct dirent **b)
{
    return atoi((*a)->d_name + 4) - atoi((*b)->d_name + 4);
}

/* The nodes sysfs lists with their CPUs (memory-only nodes have an empty list). */
static void numa_read_nodes(const struct info_check *c, struct numa_nodes *nodes)
{
    char dir[1024];
    struct dirent **list;
    snprintf(dir, sizeof(dir), "%s/sys/devices/system/node", c->root);
    nodes->count = 0;
    int n = scandir(dir, &list, numa_node_entry, numa_by_id);
    for (int i = 0; i < n; i++) {
        char path[512], text[4096];
        int k = nodes->count;
        snprintf(path, sizeof(path), "/sys/devices/system/node/%s/cpulist", list[i]->d_name);
        if (k < NUMA_MAX_NODES && info_check_read(c, path, text, sizeof(text)) == 0 &&
            gshmemi_cpulist_parse(text, &nodes->cpus[k]) == 0) {
            nodes->id[k] = atoi(list[i]->d_name + 4);
            nodes->count++;
        }
        free(list[i]);
    }
    if (n >= 0) free(list);
}

/* "0" or "0,1": the nodes holding some of set's CPUs; returns how many. */
static int numa_nodes_of(const struct numa_nodes *nodes, const cpu_set_t *set, char *buf, size_t len)
{
    int count = 0;
    size_t used = 0;
    buf[0] = '\0';
    for (int k = 0; k < nodes->count; k++) {
        cpu_set_t both;
        CPU_AND(&both, &nodes->cpus[k], set);
        if (CPU_COUNT(&both) == 0) continue;
        int w = snprintf(buf + used, len - used, "%s%d", count ? "," : "", nodes->id[k]);
        if (w > 0 && (size_t)w < len - used) used += (size_t)w;
        count++;
    }
    if (!count) snprintf(buf, len, "none");
    return count;
}

static const cpu_set_t *numa_cpus_of(const struct numa_nodes *nodes, long id)
{
    for (int k = 0; k < nodes->count; k++)
        if (nodes->id[k] == id) return &nodes->cpus[k];
    return NULL;
}

/* The first GPU on a node this process runs on; -1 when none. */
static int numa_gpu_near(const struct info_check *c, const struct numa_nodes *nodes)
{
    int n = c->gpus < INFO_CHECK_MAX_GPUS ? c->gpus : INFO_CHECK_MAX_GPUS;
    for (int d = 0; d < n; d++) {
        const cpu_set_t *cpus = numa_cpus_of(nodes, info_check_pci_numa_node(c, c->gpu[d].pci_bus_id));
        cpu_set_t both;
        if (!cpus) continue;
        CPU_AND(&both, cpus, &c->allowed);
        if (CPU_COUNT(&both)) return d;
    }
    return -1;
}

void info_check_numa(struct info_check *c)
{
    struct numa_nodes nodes;
    char cpus[256], on[256];
    numa_read_nodes(c, &nodes);
    gshmemi_cpulist_format(&c->allowed, cpus, sizeof(cpus));
    int spans = numa_nodes_of(&nodes, &c->allowed, on, sizeof(on));
    if (nodes.count <= 1) {
        gshmemi_check_line(c->out, GSHMEMI_CHECK_OK, "numa", "%s; this process runs on CPUs %s",
                           nodes.count ? "one NUMA node" : "no NUMA nodes in sysfs (one memory domain)", cpus);
        return;
    }
    long dev = c->env.device >= 0 ? c->env.device : 0;
    long gpu_node = dev < c->gpus && dev < INFO_CHECK_MAX_GPUS ? info_check_pci_numa_node(c, c->gpu[dev].pci_bus_id)
                                                               : -1;
    const cpu_set_t *gpu_cpus = numa_cpus_of(&nodes, gpu_node);
    cpu_set_t near;
    if (gpu_cpus) CPU_AND(&near, gpu_cpus, &c->allowed);
    if (c->gpus == 0 || dev >= c->gpus) {
        gshmemi_check_line(c->out, GSHMEMI_CHECK_OK, "numa", "%d nodes; this process runs on node%s %s (CPUs %s); "
                           "no GPU to place it next to", nodes.count, spans == 1 ? "" : "s", on, cpus);
    } else if (!gpu_cpus) {
        gshmemi_check_line(c->out, GSHMEMI_CHECK_OK, "numa", "%d nodes; this process runs on node%s %s (CPUs %s); "
                           "GPU %ld's node is unknown (sysfs numa_node)", nodes.count, spans == 1 ? "" : "s", on,
                           cpus, dev);
    } else if (CPU_COUNT(&near) == 0) {
        char node_cpus[256];
        int other = numa_gpu_near(c, &nodes);
        gshmemi_cpulist_format(gpu_cpus, node_cpus, sizeof(node_cpus));
        gshmemi_check_line(c->out, GSHMEMI_CHECK_WARN, "numa", "this process runs on node%s %s (CPUs %s), but GPU %ld "
                           "(%s) is on node %ld: its proxy thread and host copies cross the socket link",
                           spans == 1 ? "" : "s", on, cpus, dev, c->env.device >= 0 ? "GSHMEM_DEVICE"
                           : "node-local rank 0's", gpu_node);
        gshmemi_check_fix(c->out, "start each PE on its GPU's node: numactl --cpunodebind=%ld --membind=%ld <program>, "
                          "taskset -c %s, or the launcher's binding (srun --cpu-bind, mpirun --bind-to numa)",
                          gpu_node, gpu_node, node_cpus);
        if (other >= 0)
            gshmemi_check_fix(c->out, "or GSHMEM_DEVICE=%d, a GPU on this process's node%s", other,
                              spans == 1 ? "" : "s");
    } else {
        gshmemi_check_line(c->out, GSHMEMI_CHECK_OK, "numa", "this process runs on node%s %s (CPUs %s), GPU %ld's "
                           "node %ld included%s", spans == 1 ? "" : "s", on, cpus, dev, gpu_node,
                           spans == 1 ? "" : "; the proxy thread binds itself to that node's CPUs");
    }
}
