/* MPS detection and GPU sharing report (see mps.h). */
#include "device/mps.h"

#include "core/log.h"
#include "core/state.h"
#include "device/cuda_probe.h"

#include <gshmem/status.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef GSHMEM_HAVE_CUDA
#include "device/cuda_driver.h"

#include <cuda_runtime_api.h>
#endif

/* What each PE tells the others. */
struct mps_entry {
    unsigned char uuid[16];
    int32_t has_gpu; /* device heap on a GPU */
    int32_t mps;     /* 1 on, 0 off, -1 unknown */
};

void gshmemi_gpu_uuid_text(const unsigned char uuid[16], char *out, size_t outlen)
{
    size_t n = (size_t)snprintf(out, outlen, "GPU-");
    for (int i = 0; i < 16 && n < outlen; i++)
        n += (size_t)snprintf(out + n, outlen - n, "%s%02x", i == 4 || i == 6 || i == 8 || i == 10 ? "-" : "",
                              uuid[i]);
}

#ifdef GSHMEM_HAVE_CUDA
static int mps_enabled(int device)
{
    const struct gshmemi_cuda_driver *cu = gshmemi_cuda_driver(NULL, 0);
    CUdevice dev;
    int on = 0;
    if (!cu || cu->cuDeviceGet(&dev, device) != CUDA_SUCCESS ||
        cu->cuDeviceGetAttribute(&on, CU_DEVICE_ATTRIBUTE_MPS_ENABLED, dev) != CUDA_SUCCESS)
        return -1;
    return on != 0;
}

int gshmemi_gpu_describe(int device, struct gshmemi_gpu_info *info, char *why, size_t whylen)
{
    struct cudaDeviceProp props;
    cudaError_t err = cudaGetDeviceProperties(&props, device);
    if (err != cudaSuccess) {
        snprintf(why, whylen, "GPU %d: %s", device, cudaGetErrorString(err));
        return GSHMEMX_ERR_CUDA;
    }
    snprintf(info->name, sizeof(info->name), "%s", props.name);
    gshmemi_gpu_uuid_text((const unsigned char *)props.uuid.bytes, info->uuid, sizeof(info->uuid));
    snprintf(info->pci_bus_id, sizeof(info->pci_bus_id), "%04x:%02x:%02x.0", (unsigned)props.pciDomainID,
             (unsigned)props.pciBusID & 0xffu, (unsigned)props.pciDeviceID & 0x1fu);
    info->mps = mps_enabled(device);
    return 0;
}
#else
static int mps_enabled(int device)
{
    (void)device;
    return -1;
}

int gshmemi_gpu_describe(int device, struct gshmemi_gpu_info *info, char *why, size_t whylen)
{
    (void)info;
    snprintf(why, whylen, "GPU %d: this build has no CUDA support", device);
    return GSHMEMX_ERR_NOT_SUPPORTED;
}
#endif

static const char *mps_text(int mps)
{
    return mps > 0 ? "on" : mps == 0 ? "off" : "unknown";
}

/* Node-local PEs on the GPU of node-local index first; returns how many, fills pes. */
static int mps_sharers(const struct gshmemi_state *st, const struct mps_entry *all, int first, char *pes,
                       size_t len, int *mps_off)
{
    const struct mps_entry *ref = &all[st->boot.local_ranks[first]];
    int count = 0;
    size_t n = 0;
    pes[0] = '\0';
    for (int i = 0; i < st->boot.local_nranks; i++) {
        const struct mps_entry *e = &all[st->boot.local_ranks[i]];
        if (!e->has_gpu || memcmp(e->uuid, ref->uuid, sizeof(e->uuid)) != 0) continue;
        if (i < first) return 0; /* reported with an earlier PE */
        if (n < len) n += (size_t)snprintf(pes + n, len - n, "%s%d", count ? "," : "", st->boot.local_ranks[i]);
        *mps_off |= e->mps == 0;
        count++;
    }
    return count;
}

/* Node-local rank 0: an INFO line per GPU, one WARN when a shared GPU lacks MPS. */
static void mps_report(const struct gshmemi_state *st, const struct mps_entry *all)
{
    int shared_off = 0, shared = 0;
    char pes[256], uuid[48], example[320] = "";
    for (int i = 0; i < st->boot.local_nranks; i++) {
        const struct mps_entry *e = &all[st->boot.local_ranks[i]];
        int off = 0, count = e->has_gpu ? mps_sharers(st, all, i, pes, sizeof(pes), &off) : 0;
        if (count == 0) continue;
        gshmemi_gpu_uuid_text(e->uuid, uuid, sizeof(uuid));
        GSHMEMI_INFO(CUDA, "%s: PE%s %s (MPS %s)", uuid, count > 1 ? "s" : "", pes, mps_text(e->mps));
        if (count < 2) continue;
        shared++;
        if (off && !shared_off++) snprintf(example, sizeof(example), "PEs %s share %s", pes, uuid);
    }
    if (shared_off)
        GSHMEMI_WARN(CUDA, "%d GPU%s on this node %s shared by several PEs without CUDA MPS (%s%s): spin-waits "
                           "across PEs on one GPU serialize (the GPU time-slices between processes), so device "
                           "waits, signals and barriers between them may take milliseconds each. Start MPS "
                           "before the job: 'nvidia-cuda-mps-control -d' (a private daemon: set "
                           "CUDA_MPS_PIPE_DIRECTORY and CUDA_MPS_LOG_DIRECTORY first); stop it with "
                           "'echo quit | nvidia-cuda-mps-control'",
                     shared_off, shared_off == 1 ? "" : "s", shared_off == 1 ? "is" : "are", example,
                     shared_off > 1 ? ", ..." : "");
    else if (shared)
        GSHMEMI_INFO(CUDA, "%d GPU%s shared by several PEs, all under MPS", shared, shared == 1 ? "" : "s");
}

int gshmemi_mps_check(struct gshmemi_state *st)
{
    if (st->n_pes < 2 || !gshmemi_cuda_built()) return 0; /* uniform over the job: no collective skipped */
    struct mps_entry mine = {.has_gpu = st->heap.kind == GSHMEMI_HEAP_KIND_DEVICE, .mps = -1};
    if (mine.has_gpu) {
        memcpy(mine.uuid, st->heap.uuid, sizeof(mine.uuid));
        mine.mps = mps_enabled(st->device);
    }
    struct mps_entry *all = calloc((size_t)st->n_pes, sizeof(*all));
    if (!all) return GSHMEMX_ERR_NOMEM;
    int rc = st->boot.ops->allgather(&st->boot, &mine, all, sizeof(mine));
    if (rc == 0 && st->boot.local_rank == 0) mps_report(st, all);
    free(all);
    return rc;
}
