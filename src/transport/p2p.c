/*
 * p2p transport creation: node-local PEs publish their heap in the bootstrap
 * exchange, pass its fd over a unix socket, and map each other's heaps. The heap's
 * kind picks the ops table: CPU access for host heaps, CUDA for device heaps.
 */
#include "transport/p2p.h"

#include "bootstrap/bootstrap.h"
#include "core/heap.h"
#include "core/log.h"
#include "transport/p2p_fdpass.h"

#include <gshmem/status.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define P2P_BLOB_MAGIC 0x47503250u /* "GP2P" */
#define P2P_BLOB_VERSION 1

/* What each PE publishes in the bootstrap exchange. */
struct p2p_blob {
    uint32_t magic;
    uint16_t version;
    uint16_t length;
    uint64_t heap_size;
    uint32_t heap_kind;
    int32_t device;
    int32_t pid; /* the fd must come from this process */
    int32_t reserved;
    unsigned char uuid[16];
    char sockname[GSHMEMI_FDPASS_NAME_LEN];
};

static const char *p2p_kind_text(uint32_t kind)
{
    return kind == GSHMEMI_HEAP_KIND_DEVICE ? "device" : "host";
}

/* Checks a peer's blob; a malformed one is an error naming the peer. */
static int p2p_check_blob(const struct p2p_blob *blob, int me, int pe, const struct gshmemi_heap *heap)
{
    if (blob->magic != P2P_BLOB_MAGIC || blob->length != sizeof(*blob)) {
        GSHMEMI_ERROR(TRANSPORT, "p2p: malformed exchange blob from PE %d (magic 0x%x, length %u, expected %zu)",
                      pe, blob->magic, blob->length, sizeof(*blob));
        return GSHMEMX_ERR_PROTOCOL;
    }
    if (blob->version != P2P_BLOB_VERSION) {
        GSHMEMI_ERROR(TRANSPORT, "p2p: PE %d speaks exchange version %u, PE %d speaks %u (mixed gshmem versions?)",
                      pe, blob->version, me, P2P_BLOB_VERSION);
        return GSHMEMX_ERR_PROTOCOL;
    }
    if ((blob->heap_kind == GSHMEMI_HEAP_KIND_DEVICE) != (heap->kind == GSHMEMI_HEAP_KIND_DEVICE)) {
        GSHMEMI_ERROR(TRANSPORT, "p2p: PE %d has a %s heap but PE %d has a %s heap: set GSHMEM_HEAP the same way "
                      "on every PE", pe, p2p_kind_text(blob->heap_kind), me, p2p_kind_text((uint32_t)heap->kind));
        return GSHMEMX_ERR_MISMATCH;
    }
    if (blob->heap_size != heap->size) {
        GSHMEMI_ERROR(TRANSPORT, "p2p: PE %d has a %llu-byte heap but PE %d has %zu bytes: GSHMEM_SYMMETRIC_SIZE "
                      "must be the same on every PE", pe, (unsigned long long)blob->heap_size, me, heap->size);
        return GSHMEMX_ERR_MISMATCH;
    }
    return 0;
}

static int p2p_local_index(const struct gshmemi_bootstrap *bs, int pe)
{
    for (int i = 0; i < bs->local_nranks; i++)
        if (bs->local_ranks[i] == pe) return i;
    return -1;
}

/* Sends our heap fd to every node-local peer, then receives and maps theirs. */
static int p2p_exchange(struct gshmemi_p2p *p2p, struct gshmemi_bootstrap *bs, const struct p2p_blob *blobs,
                        int listen_fd, double timeout_s)
{
    for (int i = 0; i < bs->local_nranks; i++) {
        int pe = bs->local_ranks[i];
        if (pe == p2p->my_pe) continue;
        if (gshmemi_fdpass_send(blobs[pe].sockname, p2p->my_pe, p2p->heap->fd) != 0) {
            GSHMEMI_ERROR(TRANSPORT, "p2p: sending the heap to PE %d failed: %s", pe, strerror(errno));
            return GSHMEMX_ERR_SYSTEM;
        }
    }
    for (int i = 1; i < bs->local_nranks; i++) {
        int pe = -1, fd = -1, pid = -1;
        if (gshmemi_fdpass_recv(listen_fd, timeout_s, &pe, &fd, &pid) != 0) {
            GSHMEMI_ERROR(TRANSPORT, "p2p: receiving node-local heaps: %s after %d of %d peers (GSHMEM_TIMEOUT=%g)",
                          strerror(errno), i - 1, bs->local_nranks - 1, timeout_s);
            return errno == ETIMEDOUT ? GSHMEMX_ERR_TIMEOUT : GSHMEMX_ERR_PROTOCOL;
        }
        int index = pe >= 0 && pe < p2p->n_pes && pe != p2p->my_pe ? p2p_local_index(bs, pe) : -1;
        if (index < 0 || p2p->base[pe]) {
            GSHMEMI_ERROR(TRANSPORT, "p2p: a heap arrived from PE %d, which is not an unmapped node-local peer", pe);
            close(fd);
            return GSHMEMX_ERR_PROTOCOL;
        }
        if (pid != blobs[pe].pid) {
            GSHMEMI_ERROR(TRANSPORT, "p2p: a heap claiming to be PE %d's came from pid %d, but PE %d is pid %d "
                          "(another process, or PEs in different PID namespaces sharing a network namespace)",
                          pe, pid, pe, (int)blobs[pe].pid);
            close(fd);
            return GSHMEMX_ERR_PROTOCOL;
        }
        p2p->base[pe] = gshmemi_heap_map_peer(p2p->heap, fd, index);
        close(fd);
        if (!p2p->base[pe]) return GSHMEMX_ERR_NOMEM;
    }
    return 0;
}

void gshmemi_p2p_destroy(struct gshmemi_transport *tp)
{
    struct gshmemi_p2p *p2p = gshmemi_p2p_of(tp);
    if (p2p->device_ctx) gshmemi_p2p_device_fini(p2p);
    for (int pe = 0; pe < p2p->n_pes; pe++)
        if (p2p->base[pe] && p2p->base[pe] != (char *)p2p->heap->base) gshmemi_heap_unmap_peer(p2p->heap, p2p->base[pe]);
    free(p2p->base);
    free(p2p);
}

int gshmemi_transport_p2p_reaches(const struct gshmemi_transport *tp, int pe)
{
    const struct gshmemi_p2p *p2p = tp->impl;
    return pe >= 0 && pe < p2p->n_pes && p2p->base[pe] != NULL;
}

static int p2p_connect(struct gshmemi_p2p *p2p, struct gshmemi_bootstrap *bs, double timeout_s, int self_only)
{
    struct gshmemi_heap *heap = p2p->heap;
    struct p2p_blob mine = {.magic = P2P_BLOB_MAGIC, .version = P2P_BLOB_VERSION, .length = sizeof(mine),
                            .heap_size = heap->size, .heap_kind = (uint32_t)heap->kind, .device = heap->device,
                            .pid = (int32_t)getpid()};
    memcpy(mine.uuid, heap->uuid, sizeof(mine.uuid));
    int listen_fd = -1, rc;
    int peers = !self_only && bs->local_nranks > 1; /* node-local peers to map */
    if (peers && (listen_fd = gshmemi_fdpass_listen(mine.sockname, bs->local_nranks)) < 0) {
        GSHMEMI_ERROR(TRANSPORT, "p2p: cannot listen for node-local peers: %s", strerror(errno));
        return GSHMEMX_ERR_SYSTEM;
    }
    struct p2p_blob *blobs = calloc((size_t)bs->nranks, sizeof(*blobs));
    if (!blobs) rc = GSHMEMX_ERR_NOMEM;
    else rc = bs->ops->allgather(bs, &mine, blobs, sizeof(mine));
    for (int i = 0; i < bs->local_nranks && rc == 0 && peers; i++)
        rc = p2p_check_blob(&blobs[bs->local_ranks[i]], bs->rank, bs->local_ranks[i], heap);
    for (int i = 0; i < bs->local_nranks && rc == 0 && peers && heap->kind == GSHMEMI_HEAP_KIND_DEVICE; i++) {
        char why[256];
        int pe = bs->local_ranks[i];
        if (gshmemi_heap_device_can_reach(heap, blobs[pe].uuid, why, sizeof(why))) continue;
        GSHMEMI_ERROR(TRANSPORT, "p2p: PE %d cannot reach node-local PE %d's device heap: %s (one PE per GPU on "
                      "GPUs that see each other, GSHMEM_HEAP=host, or GSHMEM_DISABLE_P2P=1 to reach node-local "
                      "PEs through the remote transport)", bs->rank, pe, why);
        rc = GSHMEMX_ERR_NOT_SUPPORTED;
    }
    if (rc == 0 && peers) rc = p2p_exchange(p2p, bs, blobs, listen_fd, timeout_s);
    if (rc == 0) rc = bs->ops->barrier(bs); /* every peer has mapped our heap */
    if (listen_fd >= 0) close(listen_fd);
    free(blobs);
    return rc;
}

int gshmemi_transport_p2p_create(struct gshmemi_bootstrap *bs, struct gshmemi_heap *heap, double timeout_s,
                                 int self_only, struct gshmemi_transport **out)
{
    struct gshmemi_p2p *p2p = calloc(1, sizeof(*p2p));
    if (!p2p || !(p2p->base = calloc((size_t)bs->nranks, sizeof(char *)))) {
        free(p2p);
        return GSHMEMX_ERR_NOMEM;
    }
    int device = heap->kind == GSHMEMI_HEAP_KIND_DEVICE;
    p2p->tp.ops = device ? &gshmemi_p2p_device_ops : &gshmemi_p2p_host_ops;
    p2p->tp.impl = p2p;
    p2p->my_pe = bs->rank;
    p2p->n_pes = bs->nranks;
    p2p->heap = heap;
    p2p->base[bs->rank] = heap->base;
    int rc = device ? gshmemi_p2p_device_init(p2p) : 0;
    if (rc == 0) rc = p2p_connect(p2p, bs, timeout_s, self_only);
    if (rc != 0) {
        gshmemi_p2p_destroy(&p2p->tp);
        return rc;
    }
    GSHMEMI_INFO(TRANSPORT, "p2p: mapped the %s heaps of %d node-local PEs%s", device ? "device" : "host",
                 self_only ? 1 : bs->local_nranks, self_only ? " (GSHMEM_DISABLE_P2P: only its own)" : "");
    *out = &p2p->tp;
    return 0;
}
