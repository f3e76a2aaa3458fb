/*
 * p2p transport, host-heap half: every node-local peer's heap is mapped into this
 * process, so RMA is memcpy and AMOs are CPU atomics on the shared pages. A peer's
 * mapping and the peer's own mapping name the same physical memory; atomics from
 * all PEs are atomic against each other because they are the same instructions on
 * the same cache lines.
 */
#include "transport/transport.h"

#include "bootstrap/bootstrap.h"
#include "core/heap.h"
#include "core/log.h"
#include "transport/p2p_fdpass.h"

#include <gshmem/status.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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
    uint32_t reserved;
    char sockname[GSHMEMI_FDPASS_NAME_LEN];
};

struct p2p_host {
    struct gshmemi_transport tp;
    int my_pe;
    int n_pes;
    size_t heap_size;
    char **base; /* per PE; NULL where not mapped */
    char *own;
};

static struct p2p_host *p2p_of(struct gshmemi_transport *tp)
{
    return (struct p2p_host *)tp->impl;
}

static int p2p_put(struct gshmemi_transport *tp, int pe, size_t offset, const void *src, size_t len)
{
    memcpy(p2p_of(tp)->base[pe] + offset, src, len);
    return 0;
}

static int p2p_get(struct gshmemi_transport *tp, int pe, void *dst, size_t offset, size_t len)
{
    memcpy(dst, p2p_of(tp)->base[pe] + offset, len);
    return 0;
}

static int p2p_iput(struct gshmemi_transport *tp, int pe, size_t offset, ptrdiff_t dst_stride, const void *src,
                    ptrdiff_t src_stride, size_t elem, size_t nelems)
{
    char *d = p2p_of(tp)->base[pe] + offset;
    const char *s = src;
    for (size_t i = 0; i < nelems; i++) memcpy(d + (ptrdiff_t)i * dst_stride, s + (ptrdiff_t)i * src_stride, elem);
    return 0;
}

static int p2p_iget(struct gshmemi_transport *tp, int pe, void *dst, ptrdiff_t dst_stride, size_t offset,
                    ptrdiff_t src_stride, size_t elem, size_t nelems)
{
    const char *s = p2p_of(tp)->base[pe] + offset;
    char *d = dst;
    for (size_t i = 0; i < nelems; i++) memcpy(d + (ptrdiff_t)i * dst_stride, s + (ptrdiff_t)i * src_stride, elem);
    return 0;
}

#define P2P_AMO_APPLY(T, p, amo, old)                                                               \
    do {                                                                                            \
        T *obj = (T *)(p), operand = (T)(amo)->operand;                                             \
        switch ((amo)->op) {                                                                        \
        case GSHMEMI_AMO_FETCH: old = __atomic_load_n(obj, __ATOMIC_SEQ_CST); break;                \
        case GSHMEMI_AMO_SET: __atomic_store_n(obj, operand, __ATOMIC_SEQ_CST); break;              \
        case GSHMEMI_AMO_SWAP: old = __atomic_exchange_n(obj, operand, __ATOMIC_SEQ_CST); break;    \
        case GSHMEMI_AMO_COMPARE_SWAP: {                                                            \
            T expected = (T)(amo)->compare;                                                         \
            __atomic_compare_exchange_n(obj, &expected, operand, 0, __ATOMIC_SEQ_CST,               \
                                        __ATOMIC_SEQ_CST);                                          \
            old = expected;                                                                         \
            break;                                                                                  \
        }                                                                                           \
        case GSHMEMI_AMO_ADD: old = __atomic_fetch_add(obj, operand, __ATOMIC_SEQ_CST); break;      \
        case GSHMEMI_AMO_AND: old = __atomic_fetch_and(obj, operand, __ATOMIC_SEQ_CST); break;      \
        case GSHMEMI_AMO_OR: old = __atomic_fetch_or(obj, operand, __ATOMIC_SEQ_CST); break;        \
        case GSHMEMI_AMO_XOR: old = __atomic_fetch_xor(obj, operand, __ATOMIC_SEQ_CST); break;      \
        default: return GSHMEMX_ERR_INVALID_ARG;                                                    \
        }                                                                                           \
    } while (0)

static int p2p_amo(struct gshmemi_transport *tp, int pe, const struct gshmemi_amo *amo, uint64_t *fetched)
{
    char *p = p2p_of(tp)->base[pe] + amo->offset;
    uint64_t old = 0;
    if (amo->width == 8) {
        P2P_AMO_APPLY(uint64_t, p, amo, old);
    } else if (amo->width == 4) {
        uint32_t old32 = 0;
        P2P_AMO_APPLY(uint32_t, p, amo, old32);
        old = old32;
    } else {
        return GSHMEMX_ERR_INVALID_ARG;
    }
    if (fetched) *fetched = old;
    return 0;
}

static int p2p_put_signal(struct gshmemi_transport *tp, int pe, size_t offset, const void *src, size_t len,
                          size_t sig_offset, uint64_t signal, int sig_op)
{
    struct p2p_host *p2p = p2p_of(tp);
    memcpy(p2p->base[pe] + offset, src, len);
    uint64_t *sig = (uint64_t *)(p2p->base[pe] + sig_offset);
    /* Release: a PE that acquires the new signal value also sees the data. */
    if (sig_op == 1) __atomic_fetch_add(sig, signal, __ATOMIC_RELEASE);
    else __atomic_store_n(sig, signal, __ATOMIC_RELEASE);
    return 0;
}

static int p2p_fence(struct gshmemi_transport *tp, int pe)
{
    (void)tp;
    (void)pe;
    __atomic_thread_fence(__ATOMIC_RELEASE);
    return 0;
}

static int p2p_quiet(struct gshmemi_transport *tp)
{
    (void)tp;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    return 0;
}

static void *p2p_ptr(struct gshmemi_transport *tp, int pe, size_t offset)
{
    char *base = p2p_of(tp)->base[pe];
    return base ? base + offset : NULL;
}

static void p2p_destroy(struct gshmemi_transport *tp)
{
    struct p2p_host *p2p = p2p_of(tp);
    for (int pe = 0; pe < p2p->n_pes; pe++)
        if (p2p->base[pe] && p2p->base[pe] != p2p->own) munmap(p2p->base[pe], p2p->heap_size);
    free(p2p->base);
    free(p2p);
}

static const struct gshmemi_transport_ops p2p_host_ops = {
    .size = sizeof(struct gshmemi_transport_ops),
    .name = "p2p",
    .put = p2p_put,
    .get = p2p_get,
    .put_nbi = p2p_put,
    .get_nbi = p2p_get,
    .iput = p2p_iput,
    .iget = p2p_iget,
    .amo = p2p_amo,
    .put_signal = p2p_put_signal,
    .fence = p2p_fence,
    .quiet = p2p_quiet,
    .ptr = p2p_ptr,
    .destroy = p2p_destroy,
};

int gshmemi_transport_p2p_reaches(const struct gshmemi_transport *tp, int pe)
{
    const struct p2p_host *p2p = tp->impl;
    return pe >= 0 && pe < p2p->n_pes && p2p->base[pe] != NULL;
}


/* Checks a peer's blob; a malformed one is an error naming the peer. */
static int p2p_check_blob(const struct p2p_blob *blob, int me, int pe, size_t heap_size)
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
    if (blob->heap_size != heap_size) {
        GSHMEMI_ERROR(TRANSPORT, "p2p: PE %d has a %llu-byte heap but PE %d has %zu bytes: GSHMEM_SYMMETRIC_SIZE "
                      "must be the same on every PE", pe, (unsigned long long)blob->heap_size, me, heap_size);
        return GSHMEMX_ERR_MISMATCH;
    }
    return 0;
}

/* Sends our heap fd to every node-local peer, then receives and maps theirs. */
static int p2p_exchange(struct p2p_host *p2p, struct gshmemi_bootstrap *bs, const struct p2p_blob *blobs,
                        int listen_fd, int heap_fd, double timeout_s)
{
    for (int i = 0; i < bs->local_nranks; i++) {
        int pe = bs->local_ranks[i];
        if (pe == p2p->my_pe) continue;
        if (gshmemi_fdpass_send(blobs[pe].sockname, p2p->my_pe, heap_fd) != 0) {
            GSHMEMI_ERROR(TRANSPORT, "p2p: sending the heap to PE %d failed: %s", pe, strerror(errno));
            return GSHMEMX_ERR_SYSTEM;
        }
    }
    for (int i = 1; i < bs->local_nranks; i++) {
        int pe = -1, fd = -1;
        if (gshmemi_fdpass_recv(listen_fd, timeout_s, &pe, &fd) != 0) {
            GSHMEMI_ERROR(TRANSPORT, "p2p: receiving node-local heaps: %s after %d of %d peers (GSHMEM_TIMEOUT=%g)",
                          strerror(errno), i - 1, bs->local_nranks - 1, timeout_s);
            return errno == ETIMEDOUT ? GSHMEMX_ERR_TIMEOUT : GSHMEMX_ERR_PROTOCOL;
        }
        int known = pe >= 0 && pe < p2p->n_pes && pe != p2p->my_pe && bs->node_of_rank[pe] == bs->node_of_rank[p2p->my_pe];
        if (!known || p2p->base[pe]) {
            GSHMEMI_ERROR(TRANSPORT, "p2p: a heap arrived from PE %d, which is not an unmapped node-local peer", pe);
            close(fd);
            return GSHMEMX_ERR_PROTOCOL;
        }
        p2p->base[pe] = gshmemi_heap_map_peer(fd, p2p->heap_size);
        int saved = errno;
        close(fd);
        if (!p2p->base[pe]) {
            GSHMEMI_ERROR(TRANSPORT, "p2p: mapping PE %d's %zu-byte heap failed: %s", pe, p2p->heap_size, strerror(saved));
            return GSHMEMX_ERR_NOMEM;
        }
    }
    return 0;
}

int gshmemi_transport_p2p_host_create(struct gshmemi_bootstrap *bs, struct gshmemi_heap *heap, double timeout_s,
                                      struct gshmemi_transport **out)
{
    struct p2p_host *p2p = calloc(1, sizeof(*p2p));
    struct p2p_blob *blobs = calloc((size_t)bs->nranks, sizeof(*blobs));
    int rc = GSHMEMX_ERR_NOMEM, listen_fd = -1;
    if (!p2p || !blobs || !(p2p->base = calloc((size_t)bs->nranks, sizeof(char *)))) goto out_free;
    p2p->tp.ops = &p2p_host_ops;
    p2p->tp.impl = p2p;
    p2p->my_pe = bs->rank;
    p2p->n_pes = bs->nranks;
    p2p->heap_size = heap->size;
    p2p->own = heap->base;
    p2p->base[bs->rank] = heap->base;

    struct p2p_blob mine = {.magic = P2P_BLOB_MAGIC, .version = P2P_BLOB_VERSION, .length = sizeof(mine),
                            .heap_size = heap->size, .heap_kind = (uint32_t)heap->kind};
    if (bs->local_nranks > 1 && (listen_fd = gshmemi_fdpass_listen(mine.sockname, bs->local_nranks)) < 0) {
        GSHMEMI_ERROR(TRANSPORT, "p2p: cannot listen for node-local peers: %s", strerror(errno));
        rc = GSHMEMX_ERR_SYSTEM;
        goto out_free;
    }
    if ((rc = bs->ops->allgather(bs, &mine, blobs, sizeof(mine))) != 0) goto out_close;
    for (int i = 0; i < bs->local_nranks && rc == 0; i++)
        rc = p2p_check_blob(&blobs[bs->local_ranks[i]], bs->rank, bs->local_ranks[i], heap->size);
    if (rc == 0 && bs->local_nranks > 1) rc = p2p_exchange(p2p, bs, blobs, listen_fd, heap->fd, timeout_s);
    if (rc == 0) rc = bs->ops->barrier(bs); /* every peer has mapped our heap */
out_close:
    if (listen_fd >= 0) close(listen_fd);
out_free:
    free(blobs);
    if (rc != 0 && p2p) {
        if (p2p->base) p2p_destroy(&p2p->tp);
        else free(p2p);
        return rc;
    }
    GSHMEMI_INFO(TRANSPORT, "p2p: mapped the host heaps of %d node-local PEs", bs->local_nranks);
    *out = &p2p->tp;
    return 0;
}
