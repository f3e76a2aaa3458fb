/* ibv memory registration: heaps in chunks, and the net's own host memory (ibv_impl.h). */
#ifdef GSHMEM_HAVE_IBV
#include "transport/ibv_impl.h"

#include "core/heap.h"
#include "core/log.h"

#include <gshmem/status.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define IBV_ACCESS                                                                                                     \
    (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

/* ibv_reg_mr at addr, with relaxed ordering when asked and the library can express it
 * (ibv_reg_mr_iova2, rdma-core 28+; the flag is in the optional range, which a device
 * without the feature ignores). *relaxed says whether it was asked for. */
static struct ibv_mr *mr_host(struct ibv_net *net, struct ibv_pd *pd, void *addr, size_t len, int want_relaxed,
                              int *relaxed)
{
    const struct gshmemi_ibv_api *api = net->api;
    *relaxed = want_relaxed && api->ibv_reg_mr_iova2;
    if (*relaxed)
        return api->ibv_reg_mr_iova2(pd, addr, len, (uintptr_t)addr, IBV_ACCESS | IBV_ACCESS_RELAXED_ORDERING);
    return (api->ibv_reg_mr)(pd, addr, len, IBV_ACCESS);
}

/* Device memory: DMA-BUF first (kernel 5.12+, no extra module), then nvidia-peermem.
 * Relaxed ordering as on host memory: whoever writes here flushes with a read of this
 * heap before a signal or the end of a quiet (ibv_post.c). */
static struct ibv_mr *mr_device(struct ibv_net *net, struct ibv_pd *pd, void *addr, size_t len, int want_relaxed,
                                int *dmabuf, int *relaxed, char *why, size_t whylen)
{
    const struct gshmemi_ibv_api *api = net->api;
    char cwhy[160] = "";
    int fd = gshmemi_ibv_cuda_dmabuf(addr, len, cwhy, sizeof(cwhy));
    struct ibv_mr *mr = NULL;
    if (fd >= 0 && api->ibv_reg_dmabuf_mr) {
        *relaxed = want_relaxed;
        mr = api->ibv_reg_dmabuf_mr(pd, 0, len, (uintptr_t)addr, fd,
                                    IBV_ACCESS | (*relaxed ? IBV_ACCESS_RELAXED_ORDERING : 0));
        if (!mr) snprintf(cwhy, sizeof(cwhy), "ibv_reg_dmabuf_mr: %s", strerror(errno));
    } else if (fd >= 0) {
        snprintf(cwhy, sizeof(cwhy), "this libibverbs has no ibv_reg_dmabuf_mr");
    }
    if (fd >= 0) close(fd);
    *dmabuf = mr != NULL;
    if (mr) return mr;
    mr = mr_host(net, pd, addr, len, want_relaxed, relaxed);
    if (!mr) snprintf(why, whylen, "DMA-BUF: %s; nvidia-peermem (ibv_reg_mr on GPU memory): %s", cwhy, strerror(errno));
    return mr;
}

/* Registers every chunk of reg's heap on rail r (reg->nchunks of them). 0 or a status
 * (logged; the caller deregisters). */
static int heap_register_rail(struct ibv_net *net, struct ibv_heapreg *reg, int r, int device)
{
    const struct gshmemi_heap *heap = reg->heap;
    struct ibv_rail *rail = &net->rails[r];
    for (int c = 0; c < reg->nchunks; c++) {
        uint64_t at = (uint64_t)c * reg->chunk;
        size_t len = heap->size - at < reg->chunk ? heap->size - at : reg->chunk;
        char *addr = (char *)heap->base + at, why[400] = "";
        struct ibv_mr *mr = device ? mr_device(net, rail->pd, addr, len, net->relaxed, &reg->dmabuf, &reg->relaxed,
                                               why, sizeof(why))
                                   : mr_host(net, rail->pd, addr, len, net->relaxed, &reg->relaxed);
        /* GPU memory with relaxed ordering: a second registration without it is the
         * local key of zero-copy gets, whose data must reach the GPU's kernels in order
         * (nothing of ours follows it into GPU memory to push it: the completion goes to
         * host memory). */
        struct ibv_mr *local = NULL;
        int dmabuf = 0, plain = 0;
        if (mr && device && reg->relaxed) {
            local = mr_device(net, rail->pd, addr, len, 0, &dmabuf, &plain, why, sizeof(why));
            if (!local) {
                net->api->ibv_dereg_mr(mr);
                mr = NULL;
            }
        }
        if (!mr) {
            if (!device) snprintf(why, sizeof(why), "ibv_reg_mr: %s", strerror(errno));
            int err = errno;
            GSHMEMI_IBV_SETUP_FAIL(
                net, "PE %d: ibv: cannot register the %s heap (%zu bytes at offset %llu) with %s: %s%s", net->my_pe,
                device ? "device" : "host", len, (unsigned long long)at, rail->port.dev, why,
                err == ENOMEM || err == EPERM ? " (is the memlock limit unlimited? ulimit -l)" : "");
            return GSHMEMX_ERR_SYSTEM;
        }
        reg->mr_local[r][c] = local;
        reg->mr[r][c] = mr;
    }
    return 0;
}

int gshmemi_ibv_heap_register(struct ibv_net *net, struct ibv_heapreg *reg, struct gshmemi_heap *heap)
{
    memset(reg, 0, sizeof(*reg));
    reg->heap = heap;
    /* one chunk size for every rail: the smallest device limit decides */
    uint64_t max_mr = 0;
    for (int r = 0; r < net->nrails; r++) {
        struct ibv_device_attr da;
        if (net->api->ibv_query_device(net->rails[r].ctx, &da) == 0 && da.max_mr_size &&
            (!max_mr || da.max_mr_size < max_mr))
            max_mr = da.max_mr_size;
    }
    reg->chunk = gshmemi_ibv_chunk_size(heap->size, max_mr);
    if (reg->chunk == 0) {
        GSHMEMI_IBV_SETUP_FAIL(
            net, "PE %d: ibv: a heap of %zu bytes needs more than %d registrations of at most %llu bytes (%s)",
            net->my_pe, heap->size, GSHMEMI_IBV_MAX_CHUNKS, (unsigned long long)max_mr, net->rails[0].port.dev);
        return GSHMEMX_ERR_NOT_SUPPORTED;
    }
    int device = heap->kind == GSHMEMI_HEAP_KIND_DEVICE;
    reg->nchunks = (int)((heap->size + reg->chunk - 1) / reg->chunk);
    for (int r = 0; r < net->nrails; r++) {
        int rc = heap_register_rail(net, reg, r, device);
        if (rc) {
            gshmemi_ibv_heap_deregister(net, reg);
            return rc;
        }
    }
    reg->flush = reg->relaxed;
    char order[200] = "";
    if (device) {
        /* A GPU that does not order the NIC's writes for everyone who reads its heap (its
         * own kernels; with p2p peers on this node, every GPU): a writer reads the heap
         * before it signals (as for relaxed ordering), and gets into it end with a flush
         * (ibv_ops.c). */
        int o = gshmemi_ibv_cuda_gdr_order(heap->device, net->direct_peers > 0, order, sizeof(order));
        if (o != 0) reg->flush = 1;
        net->gdr_flush = o == 1;
        if (o < 0)
            GSHMEMI_WARN(TRANSPORT, "PE %d: ibv: %s: data a get reads into the device heap may reach its kernels late",
                         net->my_pe, order);
    }
    GSHMEMI_INFO(TRANSPORT, "PE %d: ibv: %s heap of %zu bytes registered in %d chunk(s) on %d rail(s)%s%s%s%s",
                 net->my_pe, device ? "device" : "host", heap->size, reg->nchunks, net->nrails,
                 device ? (reg->dmabuf ? " through DMA-BUF" : " through nvidia-peermem") : "",
                 reg->relaxed ? ", relaxed ordering" : "", order[0] ? "; " : "", order);
    return 0;
}

void gshmemi_ibv_heap_deregister(struct ibv_net *net, struct ibv_heapreg *reg)
{
    for (int r = 0; r < GSHMEMI_IBV_MAX_RAILS; r++)
        for (int i = 0; i < reg->nchunks; i++) {
            if (reg->mr[r][i]) net->api->ibv_dereg_mr(reg->mr[r][i]);
            if (reg->mr_local[r][i]) net->api->ibv_dereg_mr(reg->mr_local[r][i]);
            reg->mr[r][i] = reg->mr_local[r][i] = NULL;
        }
    reg->nchunks = 0;
    free(reg->peer);
    free(reg->peer_flush);
    reg->peer = NULL;
    reg->peer_flush = NULL;
}

int gshmemi_ibv_host_register(struct ibv_net *net)
{
    net->host_size = GSHMEMI_IBV_STAGE_SLOTS * GSHMEMI_IBV_STAGE_SLOT + GSHMEMI_IBV_CELLS * sizeof(uint64_t);
    void *p = mmap(NULL, net->host_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return GSHMEMX_ERR_NOMEM;
    net->host = p;
    for (int r = 0; r < net->nrails; r++) {
        struct ibv_rail *rail = &net->rails[r];
        int relaxed;
        rail->host_mr = mr_host(net, rail->pd, p, net->host_size, net->relaxed, &relaxed);
        if (!rail->host_mr) {
            int err = errno;
            GSHMEMI_IBV_SETUP_FAIL(net, "PE %d: ibv: cannot register %zu bytes of staging memory with %s: %s%s",
                                   net->my_pe, net->host_size, rail->port.dev, strerror(err),
                                   err == ENOMEM || err == EPERM ? " (is the memlock limit unlimited? ulimit -l)" : "");
            return GSHMEMX_ERR_SYSTEM;
        }
    }
    for (int i = 0; i < GSHMEMI_IBV_STAGE_SLOTS; i++) net->stage[i].pe = -1;
    return 0;
}

int gshmemi_ibv_local_key(struct ibv_net *net, int rail, const void *p, size_t len, uint32_t *lkey, size_t *span)
{
    uintptr_t a = (uintptr_t)p;
    for (int h = 0; h < net->nheaps; h++) {
        struct ibv_heapreg *reg = &net->heaps[h];
        uintptr_t off = a - (uintptr_t)reg->heap->base;
        if (off >= reg->heap->size || reg->nchunks == 0) continue;
        size_t c = off / reg->chunk;
        const struct ibv_mr *mr = reg->mr_local[rail][c] ? reg->mr_local[rail][c] : reg->mr[rail][c];
        *lkey = mr->lkey;
        *span = gshmemi_ibv_chunk_span(off, len, reg->chunk);
        return reg->heap->kind == GSHMEMI_HEAP_KIND_DEVICE ? 2 : 1;
    }
    if (net->rails[rail].host_mr && a - (uintptr_t)net->host < net->host_size) {
        *lkey = net->rails[rail].host_mr->lkey;
        *span = len;
        return 1;
    }
    return 0;
}
#endif
