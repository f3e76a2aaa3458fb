/* gshmem-info --check: the GPUs, the peer links between them, and MPS. */
#include "info_check.h"

#include "core/check.h"
#include "device/cuda_probe.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

/* NVIDIA display controllers on PCI (vendor 0x10de, class 0x03xxxx; NVSwitches are
 * bridges and do not count): the GPUs the hardware has, whether or not CUDA sees them.
 * Their addresses go to names. */
static int gpu_on_pci(const struct info_check *c, char *names, size_t len)
{
    char dir[1024];
    struct dirent **list;
    snprintf(dir, sizeof(dir), "%s/sys/bus/pci/devices", c->root);
    names[0] = '\0';
    int n = scandir(dir, &list, NULL, alphasort), count = 0;
    size_t used = 0;
    for (int i = 0; i < n; i++) {
        char path[512], vendor[16], class[16];
        const char *id = list[i]->d_name;
        snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/vendor", id);
        int gpu = id[0] != '.' && info_check_read(c, path, vendor, sizeof(vendor)) == 0 &&
                  strcmp(vendor, "0x10de") == 0;
        snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/class", id);
        gpu = gpu && info_check_read(c, path, class, sizeof(class)) == 0 && strncmp(class, "0x03", 4) == 0;
        if (gpu) {
            int w = snprintf(names + used, len - used, "%s%s", count ? ", " : "", id);
            if (w > 0 && (size_t)w < len - used) used += (size_t)w;
            count++;
        }
        free(list[i]);
    }
    if (n >= 0) free(list);
    return count;
}

static void gpu_none(struct info_check *c)
{
    char pci[512];
    int on_pci = gpu_on_pci(c, pci, sizeof(pci));
    if (c->env.heap == GSHMEMI_HEAP_DEVICE) {
        c->fails += gshmemi_check_line(c->out, GSHMEMI_CHECK_FAIL, "gpus", "none visible (%s), but GSHMEM_HEAP=device "
                                       "needs one: gshmem_init fails", c->no_gpu_why);
        gshmemi_check_fix(c->out, "make a GPU visible (NVIDIA driver loaded, CUDA_VISIBLE_DEVICES), or set "
                          "GSHMEM_HEAP=auto to run on the host heap without one");
    } else if (!c->cuda_built && on_pci) {
        gshmemi_check_line(c->out, GSHMEMI_CHECK_WARN, "gpus", "not used: this build has no CUDA support, but PCI "
                           "lists %d NVIDIA GPU%s (%s)", on_pci, on_pci == 1 ? "" : "s", pci);
        gshmemi_check_fix(c->out, "rebuild with -DGSHMEM_CUDA=ON (nvcc on PATH) to put heaps on the GPUs and call "
                          "gshmem from kernels");
    } else if (!c->cuda_built) {
        gshmemi_check_line(c->out, GSHMEMI_CHECK_OK, "gpus", "not checked: this build has no CUDA support (and PCI "
                           "lists no NVIDIA GPU); PEs use the host heap");
    } else if (on_pci) {
        gshmemi_check_line(c->out, GSHMEMI_CHECK_WARN, "gpus", "CUDA sees none (%s), but PCI lists %d NVIDIA GPU%s "
                           "(%s): PEs fall back to the host heap and kernels cannot call gshmem", c->no_gpu_why,
                           on_pci, on_pci == 1 ? "" : "s", pci);
        gshmemi_check_fix(c->out, "load the NVIDIA driver (nvidia-smi must list the GPUs); in a container expose them "
                          "(docker run --gpus all, the NVIDIA device plugin on Kubernetes); CUDA_VISIBLE_DEVICES must "
                          "not hide them");
    } else {
        gshmemi_check_line(c->out, GSHMEMI_CHECK_OK, "gpus", "none (%s): PEs use the host heap and kernels cannot call "
                           "gshmem on this node", c->no_gpu_why);
    }
}

static const char *gpu_link_text(int link)
{
    switch (link) {
    case GSHMEMI_GPU_LINK_NVLINK: return "peer access with native atomics (NVLink)";
    case GSHMEMI_GPU_LINK_PCIE: return "peer access without native atomics (PCIe)";
    case GSHMEMI_GPU_LINK_NONE: return "no peer access";
    default: return "peer access unknown (the CUDA query failed)";
    }
}

/* The weaker direction of a pair: a pair is only as good as its worse way. */
static int gpu_pair_link(const struct info_check *c, int a, int b)
{
    return c->link[a][b] < c->link[b][a] ? c->link[a][b] : c->link[b][a];
}

/* One detail line per kind of link, listing its pairs ("all 28 pairs" when every pair is
 * of that kind). */
static void gpu_links(struct info_check *c, int n)
{
    static const int kinds[] = {GSHMEMI_GPU_LINK_NVLINK, GSHMEMI_GPU_LINK_PCIE, GSHMEMI_GPU_LINK_NONE,
                                GSHMEMI_GPU_LINK_UNKNOWN};
    int pairs = n * (n - 1) / 2;
    for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
        char list[2048] = "";
        size_t used = 0;
        int count = 0;
        for (int a = 0; a < n; a++)
            for (int b = a + 1; b < n; b++) {
                if (gpu_pair_link(c, a, b) != kinds[k]) continue;
                int w = snprintf(list + used, sizeof(list) - used, "%s%d-%d", count ? " " : "", a, b);
                if (w > 0 && (size_t)w < sizeof(list) - used) used += (size_t)w;
                count++;
            }
        if (count == pairs) gshmemi_check_detail(c->out, "all %d pairs: %s", pairs, gpu_link_text(kinds[k]));
        else if (count) gshmemi_check_detail(c->out, "%s: %s", gpu_link_text(kinds[k]), list);
    }
}

static void gpu_details(struct info_check *c, int n)
{
    for (int d = 0; d < n; d++) {
        long node = info_check_pci_numa_node(c, c->gpu[d].pci_bus_id);
        char where[32] = "NUMA node unknown";
        if (node >= 0) snprintf(where, sizeof(where), "NUMA node %ld", node);
        gshmemi_check_detail(c->out, "GPU %d: %s, %s, %s", d, c->gpu[d].name,
                             c->gpu[d].pci_bus_id[0] ? c->gpu[d].pci_bus_id : "PCI address unknown", where);
    }
    if (n < c->gpus) gshmemi_check_detail(c->out, "GPUs %d-%d: not described", n, c->gpus - 1);
}

void info_check_gpus(struct info_check *c)
{
    if (c->gpus == 0) {
        gpu_none(c);
        return;
    }
    int n = c->gpus < INFO_CHECK_MAX_GPUS ? c->gpus : INFO_CHECK_MAX_GPUS;
    int without = 0;
    for (int a = 0; a < n; a++)
        for (int b = a + 1; b < n; b++) without += gpu_pair_link(c, a, b) == GSHMEMI_GPU_LINK_NONE;
    int p2p = info_check_heap_on_device(c) && !c->env.disable_p2p;
    const char *where = c->env.heap == GSHMEMI_HEAP_HOST ? "GSHMEM_HEAP=host keeps the heap in host memory"
                                                         : "a PE's heap goes on its GPU";
    if (c->env.device >= c->gpus) {
        c->fails += gshmemi_check_line(c->out, GSHMEMI_CHECK_FAIL, "gpus", "%d visible, but GSHMEM_DEVICE=%ld: "
                                       "gshmem_init fails", c->gpus, c->env.device);
        gshmemi_check_fix(c->out, "GSHMEM_DEVICE=0..%d, or unset it (node-local rank modulo the GPUs)", c->gpus - 1);
    } else if (without && p2p) {
        c->fails += gshmemi_check_line(c->out, GSHMEMI_CHECK_FAIL, "gpus", "%d visible, %d pair%s without peer access "
                                       "(below): PEs on those GPUs cannot map each other's heap, so gshmem_init fails "
                                       "when one node's PEs use both", c->gpus, without, without == 1 ? "" : "s");
        gshmemi_check_fix(c->out, "give the job GPUs that reach each other (CUDA_VISIBLE_DEVICES), or enable PCIe "
                          "peer-to-peer between them (IOMMU passthrough, ACS off on the PCIe switches)");
        gshmemi_check_fix(c->out, "or GSHMEM_DISABLE_P2P=1 (node-local PEs through the remote transport), or "
                          "GSHMEM_HEAP=host");
    } else if (without) {
        gshmemi_check_line(c->out, GSHMEMI_CHECK_OK, "gpus", "%d visible; %s, so pairs without peer access (below) "
                           "do not matter", c->gpus,
                           c->env.heap == GSHMEMI_HEAP_HOST ? "GSHMEM_HEAP=host" : "GSHMEM_DISABLE_P2P=1");
    } else {
        gshmemi_check_line(c->out, GSHMEMI_CHECK_OK, "gpus", "%d visible; %s", c->gpus, where);
    }
    gpu_details(c, n);
    if (n > 1) gpu_links(c, n);
}

/* Whether several PEs of one node are known to share a GPU; says why in why. */
static int mps_sharing_known(const struct info_check *c, char *why, size_t len)
{
    if (c->env.device >= 0 && c->env.device < c->gpus) {
        snprintf(why, len, "GSHMEM_DEVICE=%ld puts every PE of this node on GPU %ld", c->env.device, c->env.device);
        return 1;
    }
    if (c->env.ppn > c->gpus) {
        snprintf(why, len, "GSHMEM_PPN=%ld PEs per pod share %d GPU%s", c->env.ppn, c->gpus, c->gpus == 1 ? "" : "s");
        return 1;
    }
    return 0;
}

void info_check_mps(struct info_check *c)
{
    if (c->gpus == 0 || c->env.heap == GSHMEMI_HEAP_HOST) {
        gshmemi_check_line(c->out, GSHMEMI_CHECK_OK, "mps", "not needed: %s", c->gpus == 0 ? "no GPU"
                           : "GSHMEM_HEAP=host keeps PEs off the GPUs");
        return;
    }
    int n = c->gpus < INFO_CHECK_MAX_GPUS ? c->gpus : INFO_CHECK_MAX_GPUS, on = 0, off = 0;
    for (int d = 0; d < n; d++) {
        on += c->gpu[d].mps > 0;
        off += c->gpu[d].mps == 0;
    }
    char why[160];
    if (on && !off) {
        gshmemi_check_line(c->out, GSHMEMI_CHECK_OK, "mps", "an MPS control daemon serves this process: PEs sharing "
                           "a GPU run their kernels side by side");
    } else if (mps_sharing_known(c, why, sizeof(why))) {
        gshmemi_check_line(c->out, GSHMEMI_CHECK_WARN, "mps", "%s, and %s: their kernels take turns on it, so each "
                           "wait between them may last a time slice", off ? "no MPS daemon serves this process"
                           : "whether MPS is on is unknown", why);
        gshmemi_check_fix(c->out, "start MPS before the job: export CUDA_MPS_PIPE_DIRECTORY and "
                          "CUDA_MPS_LOG_DIRECTORY (a private daemon), nvidia-cuda-mps-control -d; stop it after with "
                          "echo quit | nvidia-cuda-mps-control");
    } else {
        gshmemi_check_line(c->out, GSHMEMI_CHECK_OK, "mps", "%s; PEs share a GPU only when a node runs more PEs than "
                           "its %d GPU%s, which is not known before the job starts (gshmem_init warns then)",
                           off ? "no MPS daemon serves this process" : "MPS state unknown", c->gpus,
                           c->gpus == 1 ? "" : "s");
    }
}
