/*
 * Placement from the hwloc topology. GPUs are NVIDIA PCI devices (vendor 0x10de,
 * class 3D or VGA controller) in PCI bus order, which is CUDA's ordinal order when
 * CUDA_DEVICE_ORDER=PCI_BUS_ID or the GPUs are all the same model. hwloc's CUDA,
 * NVML and other GPU-runtime components are left out so the launcher never starts
 * a GPU runtime (slow, and pointless in a process that only forks).
 */
#include <errno.h>
#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launcher/placement.h"

#define PLACE_PCI_VENDOR_NVIDIA 0x10de
#define PLACE_PCI_CLASS_VGA 0x0300
#define PLACE_PCI_CLASS_3D 0x0302

struct place_topo {
    hwloc_topology_t topo;
    hwloc_obj_t *pci_gpus; /* every NVIDIA GPU, PCI bus order */
    int npci_gpus;
    hwloc_obj_t *gpus; /* the visible ones, by CUDA ordinal */
    int ngpus;
    const char *gpu_note; /* why the ordinal order is a guess, or NULL */
    hwloc_obj_t *nodes; /* NUMA nodes with CPUs (the root when there is none) */
    int nnodes;
    int core_type; /* HWLOC_OBJ_CORE, or HWLOC_OBJ_PU where cores are unknown */
};

int run_placement_supported(void)
{
    return 1;
}

static int place_topology_load(struct place_topo *pt)
{
    static const char *const gpu_runtimes[] = {"cuda", "nvml", "opencl", "rsmi", "levelzero", "gl"};
    if (hwloc_topology_init(&pt->topo) != 0) return -1;
    hwloc_topology_set_io_types_filter(pt->topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    for (size_t i = 0; i < sizeof(gpu_runtimes) / sizeof(gpu_runtimes[0]); i++)
        hwloc_topology_set_components(pt->topo, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, gpu_runtimes[i]);
    if (hwloc_topology_load(pt->topo) != 0) {
        hwloc_topology_destroy(pt->topo);
        pt->topo = NULL;
        return -1;
    }
    pt->core_type = hwloc_get_nbobjs_by_type(pt->topo, HWLOC_OBJ_CORE) > 0 ? HWLOC_OBJ_CORE : HWLOC_OBJ_PU;
    return 0;
}

static int place_pci_cmp(const void *a, const void *b)
{
    const struct hwloc_pcidev_attr_s *x = &(*(const hwloc_obj_t *)a)->attr->pcidev;
    const struct hwloc_pcidev_attr_s *y = &(*(const hwloc_obj_t *)b)->attr->pcidev;
    long kx = ((long)x->domain << 24) | (x->bus << 16) | (x->dev << 8) | x->func;
    long ky = ((long)y->domain << 24) | (y->bus << 16) | (y->dev << 8) | y->func;
    return (kx > ky) - (kx < ky);
}

static int place_find_pci_gpus(struct place_topo *pt)
{
    int n = 0;
    for (hwloc_obj_t o = NULL; (o = hwloc_get_next_pcidev(pt->topo, o)) != NULL;) n++;
    pt->pci_gpus = calloc((size_t)n + 1, sizeof(*pt->pci_gpus));
    pt->gpus = calloc((size_t)n + 1, sizeof(*pt->gpus));
    if (pt->pci_gpus == NULL || pt->gpus == NULL) return -1;
    for (hwloc_obj_t o = NULL; (o = hwloc_get_next_pcidev(pt->topo, o)) != NULL;) {
        const struct hwloc_pcidev_attr_s *pci = &o->attr->pcidev;
        if (pci->vendor_id == PLACE_PCI_VENDOR_NVIDIA &&
            (pci->class_id == PLACE_PCI_CLASS_3D || pci->class_id == PLACE_PCI_CLASS_VGA))
            pt->pci_gpus[pt->npci_gpus++] = o;
    }
    qsort(pt->pci_gpus, (size_t)pt->npci_gpus, sizeof(*pt->pci_gpus), place_pci_cmp);
    return 0;
}

/* The visible GPUs as CUDA numbers them. Like CUDA, an ordinal list ends at its first
 * entry that is not a usable ordinal; a list of UUIDs cannot be matched to PCI
 * devices here, so it falls back to every GPU in PCI order. */
static void place_apply_visible(struct place_topo *pt, const char *visible)
{
    if (visible == NULL) {
        memcpy(pt->gpus, pt->pci_gpus, (size_t)pt->npci_gpus * sizeof(*pt->gpus));
        pt->ngpus = pt->npci_gpus;
        return;
    }
    for (const char *p = visible; *p != '\0';) {
        while (*p == ' ') p++;
        if (!strncmp(p, "GPU-", 4) || !strncmp(p, "MIG-", 4)) {
            memcpy(pt->gpus, pt->pci_gpus, (size_t)pt->npci_gpus * sizeof(*pt->gpus));
            pt->ngpus = pt->npci_gpus;
            pt->gpu_note = "CUDA_VISIBLE_DEVICES lists UUIDs: GPUs assumed in PCI bus order";
            return;
        }
        char *end;
        errno = 0;
        long ord = strtol(p, &end, 10);
        if (errno || end == p || ord < 0 || ord >= pt->npci_gpus || (*end != ',' && *end != '\0')) return;
        for (int i = 0; i < pt->ngpus; i++)
            if (pt->gpus[i] == pt->pci_gpus[ord]) return;
        pt->gpus[pt->ngpus++] = pt->pci_gpus[ord];
        p = *end == ',' ? end + 1 : end;
    }
}

static int place_find_nodes(struct place_topo *pt)
{
    int n = hwloc_get_nbobjs_by_type(pt->topo, HWLOC_OBJ_NUMANODE);
    pt->nodes = calloc((size_t)n + 1, sizeof(*pt->nodes));
    if (pt->nodes == NULL) return -1;
    for (int i = 0; i < n; i++) {
        hwloc_obj_t node = hwloc_get_obj_by_type(pt->topo, HWLOC_OBJ_NUMANODE, (unsigned)i);
        if (node->cpuset != NULL && !hwloc_bitmap_iszero(node->cpuset)) pt->nodes[pt->nnodes++] = node;
    }
    if (pt->nnodes == 0) pt->nodes[pt->nnodes++] = hwloc_get_root_obj(pt->topo);
    return 0;
}

/* The NUMA node (with CPUs) nearest GPU g; NULL when hwloc places it under the whole machine. */
static hwloc_obj_t place_gpu_node(const struct place_topo *pt, int g)
{
    hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(pt->topo, pt->gpus[g]);
    if (anc == NULL || hwloc_bitmap_isequal(anc->cpuset, hwloc_get_root_obj(pt->topo)->cpuset)) return NULL;
    for (int i = 0; i < pt->nnodes; i++)
        if (hwloc_bitmap_intersects(pt->nodes[i]->nodeset, anc->nodeset)) return pt->nodes[i];
    return NULL;
}

/* GSHMEM_DEVICE as the PEs will read it; -1 when unset or not a number (the PEs reject that). */
static long place_device(char *const *env)
{
    const char *text = run_env_value(env, "GSHMEM_DEVICE");
    char *end;
    if (text == NULL) return -1;
    errno = 0;
    long v = strtol(text, &end, 10);
    return errno || end == text || *end != '\0' || v < -1 ? -1 : v;
}

static enum run_bind place_auto(const struct place_topo *pt, char *why, size_t whylen)
{
    int known = 0;
    for (int g = 0; g < pt->ngpus; g++) known += place_gpu_node(pt, g) != NULL;
    if (pt->ngpus > 0 && (pt->nnodes > 1 || known > 0)) {
        snprintf(why, whylen, "%d GPU%s, %d with known locality, %d NUMA node%s", pt->ngpus,
                 pt->ngpus == 1 ? "" : "s", known, pt->nnodes, pt->nnodes == 1 ? "" : "s");
        return RUN_BIND_NUMA;
    }
    snprintf(why, whylen, "%s", pt->ngpus == 0 ? "no GPU" : "one NUMA node and no GPU locality");
    return RUN_BIND_NONE;
}

/* The n-th core (wrapping) among those inside node's CPUs. */
static hwloc_obj_t place_core_in(const struct place_topo *pt, hwloc_obj_t node, int n)
{
    int count = hwloc_get_nbobjs_inside_cpuset_by_type(pt->topo, node->cpuset, (hwloc_obj_type_t)pt->core_type);
    if (count <= 0) return node;
    return hwloc_get_obj_inside_cpuset_by_type(pt->topo, node->cpuset, (hwloc_obj_type_t)pt->core_type,
                                               (unsigned)(n % count));
}

static int place_binding_fill(struct run_binding *b, hwloc_const_cpuset_t cpus, hwloc_const_nodeset_t nodes)
{
    int last = hwloc_bitmap_last(cpus);
    b->cpus = CPU_ALLOC((size_t)last + 1);
    if (b->cpus == NULL) return -1;
    b->cpus_size = CPU_ALLOC_SIZE((size_t)last + 1);
    CPU_ZERO_S(b->cpus_size, b->cpus);
    unsigned i;
    hwloc_bitmap_foreach_begin(i, cpus) CPU_SET_S(i, b->cpus_size, b->cpus);
    hwloc_bitmap_foreach_end();
    hwloc_bitmap_list_snprintf(b->cpus_text, sizeof(b->cpus_text), cpus);
    hwloc_bitmap_list_snprintf(b->nodes_text, sizeof(b->nodes_text), nodes);
    const unsigned bits = 8 * sizeof(unsigned long);
    unsigned words = (unsigned)hwloc_bitmap_last(nodes) / bits + 1;
    if ((b->nodes = calloc(words, sizeof(unsigned long))) == NULL) return -1;
    hwloc_bitmap_foreach_begin(i, nodes) b->nodes[i / bits] |= 1UL << (i % bits);
    hwloc_bitmap_foreach_end();
    b->maxnode = (unsigned long)words * bits + 1; /* the kernel reads maxnode - 1 bits */
    return 0;
}

/* PE r's binding. per_node counts the PEs already given a core in each NUMA node. */
static int place_pe(const struct place_topo *pt, enum run_bind bind, long r, long device, int *per_node,
                    struct run_binding *b)
{
    b->gpu = pt->ngpus == 0 ? -1 : device >= 0 ? (device < pt->ngpus ? (int)device : -1) : (int)(r % pt->ngpus);
    if (bind == RUN_BIND_NONE) {
        run_own_cpus_text(b->cpus_text, sizeof(b->cpus_text));
        snprintf(b->nodes_text, sizeof(b->nodes_text), "-");
        return 0;
    }
    hwloc_obj_t node = b->gpu >= 0 ? place_gpu_node(pt, b->gpu) : NULL;
    hwloc_obj_t target;
    if (bind == RUN_BIND_NUMA) {
        target = node != NULL ? node : pt->nodes[r % pt->nnodes];
    } else if (node != NULL) {
        int k = 0;
        while (pt->nodes[k] != node) k++;
        target = place_core_in(pt, node, per_node[k]++);
    } else {
        target = place_core_in(pt, hwloc_get_root_obj(pt->topo), (int)r);
    }
    return place_binding_fill(b, target->cpuset, target->nodeset);
}

static void place_topo_destroy(struct place_topo *pt)
{
    free(pt->pci_gpus);
    free(pt->gpus);
    free(pt->nodes);
    if (pt->topo != NULL) hwloc_topology_destroy(pt->topo);
}

static void place_say_decision(const struct place_topo *pt, enum run_bind asked, enum run_bind bind, const char *why,
                               long device)
{
    fprintf(stderr, "gshmemrun: bind-to %s%s%s%s; %d GPU%s visible, %d NUMA node%s with CPUs\n", run_bind_name(bind),
            asked == RUN_BIND_AUTO ? " (default: " : "", asked == RUN_BIND_AUTO ? why : "",
            asked == RUN_BIND_AUTO ? ")" : "", pt->ngpus, pt->ngpus == 1 ? "" : "s", pt->nnodes,
            pt->nnodes == 1 ? "" : "s");
    if (pt->gpu_note != NULL) fprintf(stderr, "gshmemrun: %s\n", pt->gpu_note);
    if (device >= pt->ngpus && pt->ngpus > 0)
        fprintf(stderr, "gshmemrun: GSHMEM_DEVICE=%ld but %d GPUs are visible: placed as without a GPU\n", device,
                pt->ngpus);
}

int run_placement_create(enum run_bind bind, long np, char *const *env, int verbose, struct run_placement *out)
{
    struct place_topo pt = {0};
    int rc = -1, *per_node = NULL;
    *out = (struct run_placement){.np = np};
    if (place_topology_load(&pt) != 0) {
        fprintf(stderr, "gshmemrun: hwloc cannot read this machine's topology\n");
        return -1;
    }
    if (place_find_pci_gpus(&pt) != 0 || place_find_nodes(&pt) != 0) goto out_nomem;
    place_apply_visible(&pt, run_env_value(env, "CUDA_VISIBLE_DEVICES"));
    char why[128] = "";
    long device = place_device(env);
    out->bind = bind == RUN_BIND_AUTO ? place_auto(&pt, why, sizeof(why)) : bind;
    if (verbose) place_say_decision(&pt, bind, out->bind, why, device);
    out->pes = calloc((size_t)np, sizeof(*out->pes));
    per_node = calloc((size_t)pt.nnodes, sizeof(*per_node));
    if (out->pes == NULL || per_node == NULL) goto out_nomem;
    for (long r = 0; r < np; r++)
        if (place_pe(&pt, out->bind, r, device, per_node, &out->pes[r]) != 0) goto out_nomem;
    if (verbose) run_placement_report(out);
    rc = 0;
    goto out_topo;
out_nomem:
    fprintf(stderr, "gshmemrun: out of memory\n");
    run_placement_destroy(out);
out_topo:
    free(per_node);
    place_topo_destroy(&pt);
    return rc;
}
