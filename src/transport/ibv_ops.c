/* ibv transport: the initiator's operations (ibv_impl.h). Every one runs under
 * net->lock; waits drop it while they poll. */
#ifdef GSHMEM_HAVE_IBV
#include "transport/ibv_impl.h"
#include "transport/transport_stubs.h"

#include "core/log.h"

#include <gshmem/status.h>
#include <gshmem/types.h>

#include <string.h>
#include <unistd.h>

/* The peer's address and key for heap offset off, and the bytes (<= len) up to the end
 * of that registration; 0 when [off, off + len) is outside its heap. */
static size_t ibv_remote(struct ibv_transport *t, int pe, uint64_t off, size_t len, uint64_t *raddr, uint32_t *rkey)
{
    const struct gshmemi_ibv_heapkeys *k = &t->net->heaps[t->heap_index].peer[pe];
    if (off > k->size || len > k->size - off) {
        GSHMEMI_ERROR(TRANSPORT, "PE %d: ibv: bytes [%llu, %llu) are outside PE %d's heap of %llu bytes", t->net->my_pe,
                      (unsigned long long)off, (unsigned long long)(off + len), pe, (unsigned long long)k->size);
        return 0;
    }
    *raddr = k->addr + off;
    *rkey = k->rkey[off / k->chunk];
    return gshmemi_ibv_chunk_span(off, len, k->chunk);
}

static int ibv_reach(struct ibv_transport *t, int pe)
{
    return pe >= 0 && pe < t->net->n_pes && t->net->peers[pe].qp != NULL;
}

static int ibv_is_device(struct ibv_net *net, const void *p)
{
    return net->device >= 0 && gshmemi_ibv_cuda_is_device(net->device, p);
}

/* A one-element work request; the callers fill its remote side. */
static void ibv_wr_init(struct ibv_send_wr *wr, struct ibv_sge *sge, int opcode)
{
    memset(wr, 0, sizeof(*wr));
    wr->opcode = opcode;
    wr->sg_list = sge;
    wr->num_sge = 1;
}

static void ibv_wr_rdma(struct ibv_send_wr *wr, struct ibv_sge *sge, int opcode, uint64_t raddr, uint32_t rkey)
{
    ibv_wr_init(wr, sge, opcode);
    wr->wr.rdma.remote_addr = raddr;
    wr->wr.rdma.rkey = rkey;
}

/* Writes len bytes from src to heap offset off of pe. Returns the sequence number the
 * caller must wait for before reusing src (0: none, src was copied or inlined), or 0
 * with *rc set. */
static uint64_t ibv_write(struct ibv_transport *t, int pe, uint64_t off, const void *src, size_t len, int *rc)
{
    struct ibv_net *net = t->net;
    const char *s = src;
    uint64_t need = 0;
    int device = -1; /* src is GPU memory; known after the first piece */
    *rc = 0;
    while (len > 0) {
        uint64_t raddr;
        uint32_t rkey, lkey;
        size_t n = ibv_remote(t, pe, off, len, &raddr, &rkey), span;
        if (n == 0) return *rc = GSHMEMX_ERR_INVALID_ARG, 0;
        if (n > net->max_msg) n = net->max_msg;
        struct ibv_sge sge = {(uintptr_t)s, 0, 0};
        struct ibv_send_wr wr;
        ibv_wr_rdma(&wr, &sge, IBV_WR_RDMA_WRITE, raddr, rkey);
        int slot = -1, reg = gshmemi_ibv_local_key(net, net->peers[pe].rail, s, n, &lkey, &span);
        if (device < 0) device = reg ? reg == 2 : ibv_is_device(net, s);
        if (n <= (size_t)net->max_inline && !device) { /* the CPU copies it into the request */
            wr.send_flags = IBV_SEND_INLINE;
        } else if (reg) { /* zero copy: the NIC reads src; a blocking put waits for this completion */
            n = span;
            sge.lkey = lkey;
            wr.send_flags = IBV_SEND_SIGNALED;
        } else {
            if ((slot = gshmemi_ibv_stage_get(net, rc)) < 0) return 0;
            if (n > GSHMEMI_IBV_STAGE_SLOT) n = GSHMEMI_IBV_STAGE_SLOT;
            unsigned char *stage = gshmemi_ibv_stage_ptr(net, slot);
            if (device && (*rc = gshmemi_ibv_cuda_copy(net->device, stage, s, n)) != 0) return 0;
            if (!device) memcpy(stage, s, n);
            sge.addr = (uintptr_t)stage;
            sge.lkey = ibv_rail_of(net, pe)->host_mr->lkey;
            wr.send_flags = IBV_SEND_SIGNALED;
        }
        sge.length = (uint32_t)n;
        uint64_t seq = gshmemi_ibv_post(net, pe, &wr, -1, rc);
        if (!seq) return 0;
        if (slot >= 0)
            net->stage[slot].pe = pe, net->stage[slot].seq = seq;
        else if (!(wr.send_flags & IBV_SEND_INLINE))
            need = seq;
        s += n, off += n, len -= n;
    }
    return need;
}

/* Reads len bytes at heap offset off of pe into dst; returns once they are there. */
static int ibv_read(struct ibv_transport *t, int pe, void *dst, uint64_t off, size_t len)
{
    struct ibv_net *net = t->net;
    char *d = dst;
    uint64_t last = 0;
    int rc = 0, into_gpu = 0; /* a zero-copy piece landed in our device heap */
    while (len > 0) {
        uint64_t raddr;
        uint32_t rkey, lkey;
        size_t n = ibv_remote(t, pe, off, len, &raddr, &rkey), span;
        if (n == 0) return GSHMEMX_ERR_INVALID_ARG;
        if (n > net->max_msg) n = net->max_msg;
        struct ibv_sge sge = {(uintptr_t)d, 0, 0};
        struct ibv_send_wr wr;
        ibv_wr_rdma(&wr, &sge, IBV_WR_RDMA_READ, raddr, rkey);
        int reg = gshmemi_ibv_local_key(net, net->peers[pe].rail, d, n, &lkey, &span);
        if (reg) {
            into_gpu |= reg == 2;
            sge.length = (uint32_t)span, sge.lkey = lkey;
            if (!(last = gshmemi_ibv_post(net, pe, &wr, -1, &rc))) return rc;
            d += span, off += span, len -= span;
            continue;
        }
        int slot = gshmemi_ibv_stage_get(net, &rc);
        if (slot < 0) return rc;
        if (n > GSHMEMI_IBV_STAGE_SLOT) n = GSHMEMI_IBV_STAGE_SLOT;
        unsigned char *stage = gshmemi_ibv_stage_ptr(net, slot);
        sge.addr = (uintptr_t)stage, sge.length = (uint32_t)n, sge.lkey = ibv_rail_of(net, pe)->host_mr->lkey;
        wr.send_flags = IBV_SEND_SIGNALED;
        net->stage[slot].held = 1; /* until copied out: the wait lets other threads run */
        uint64_t seq = gshmemi_ibv_post(net, pe, &wr, -1, &rc);
        if (seq) rc = gshmemi_ibv_wait(net, pe, seq, "a get");
        if (seq && rc == 0)
            rc = ibv_is_device(net, d) ? gshmemi_ibv_cuda_copy(net->device, d, stage, n) : (memcpy(d, stage, n), 0);
        net->stage[slot].held = 0;
        if (rc || !seq) return rc ? rc : GSHMEMX_ERR_INTERNAL;
        d += n, off += n, len -= n;
    }
    if (last) {
        /* the last zero-copy read may be unsignalled: a signalled flush read follows it */
        uint64_t seq = net->peers[pe].last_signaled == last ? last : gshmemi_ibv_post_flush(net, pe, 1, &rc);
        if (!seq || (rc = gshmemi_ibv_wait(net, pe, seq, "a get")) != 0) return rc ? rc : GSHMEMX_ERR_INTERNAL;
        /* the NIC wrote into GPU memory: visible to its kernels only after a flush there */
        if (into_gpu && net->gdr_flush) return gshmemi_ibv_cuda_gdr_flush(net->device, net->direct_peers > 0);
    }
    return 0;
}

static int ibv_put_common(struct gshmemi_transport *tp, int pe, size_t offset, const void *src, size_t len, int nbi)
{
    struct ibv_transport *t = ibv_of(tp);
    if (!ibv_reach(t, pe)) return GSHMEMX_ERR_INVALID_ARG;
    int rc;
    pthread_mutex_lock(&t->net->lock);
    uint64_t need = ibv_write(t, pe, offset, src, len, &rc);
    if (rc == 0 && need && !nbi) rc = gshmemi_ibv_wait(t->net, pe, need, "a put");
    pthread_mutex_unlock(&t->net->lock);
    return rc;
}

static int ibv_put(struct gshmemi_transport *tp, int pe, size_t offset, const void *src, size_t len)
{
    return ibv_put_common(tp, pe, offset, src, len, 0);
}

/* src must stay unchanged until the next quiet, as for any put_nbi. */
static int ibv_put_nbi(struct gshmemi_transport *tp, int pe, size_t offset, const void *src, size_t len)
{
    return ibv_put_common(tp, pe, offset, src, len, 1);
}

static int ibv_get(struct gshmemi_transport *tp, int pe, void *dst, size_t offset, size_t len)
{
    struct ibv_transport *t = ibv_of(tp);
    if (!ibv_reach(t, pe)) return GSHMEMX_ERR_INVALID_ARG;
    pthread_mutex_lock(&t->net->lock);
    int rc = ibv_read(t, pe, dst, offset, len);
    pthread_mutex_unlock(&t->net->lock);
    return rc;
}

static int ibv_iput(struct gshmemi_transport *tp, int pe, size_t offset, ptrdiff_t dst_stride, const void *src,
                    ptrdiff_t src_stride, size_t elem, size_t nelems)
{
    struct ibv_transport *t = ibv_of(tp);
    if (!ibv_reach(t, pe)) return GSHMEMX_ERR_INVALID_ARG;
    int rc = 0;
    uint64_t need = 0;
    pthread_mutex_lock(&t->net->lock);
    for (size_t i = 0; i < nelems && rc == 0; i++) {
        uint64_t n = ibv_write(t, pe, (uint64_t)((ptrdiff_t)offset + (ptrdiff_t)i * dst_stride),
                               (const char *)src + (ptrdiff_t)i * src_stride, elem, &rc);
        if (n) need = n;
    }
    if (rc == 0 && need) rc = gshmemi_ibv_wait(t->net, pe, need, "a strided put");
    pthread_mutex_unlock(&t->net->lock);
    return rc;
}

static int ibv_iget(struct gshmemi_transport *tp, int pe, void *dst, ptrdiff_t dst_stride, size_t offset,
                    ptrdiff_t src_stride, size_t elem, size_t nelems)
{
    struct ibv_transport *t = ibv_of(tp);
    if (!ibv_reach(t, pe)) return GSHMEMX_ERR_INVALID_ARG;
    int rc = 0;
    pthread_mutex_lock(&t->net->lock);
    for (size_t i = 0; i < nelems && rc == 0; i++)
        rc = ibv_read(t, pe, (char *)dst + (ptrdiff_t)i * dst_stride,
                      (uint64_t)((ptrdiff_t)offset + (ptrdiff_t)i * src_stride), elem);
    pthread_mutex_unlock(&t->net->lock);
    return rc;
}

/* A native atomic request on the remote word raddr, its answer into sge. */
static void ibv_wr_atomic(struct ibv_send_wr *wr, struct ibv_sge *sge, int opcode, uint64_t raddr, uint32_t rkey,
                          uint64_t compare_add, uint64_t swap)
{
    ibv_wr_init(wr, sge, opcode);
    wr->wr.atomic.remote_addr = raddr;
    wr->wr.atomic.rkey = rkey;
    wr->wr.atomic.compare_add = compare_add;
    wr->wr.atomic.swap = swap;
}

/* One native atomic on the word at heap offset word_off; *old gets the word it held
 * (when old is NULL nobody waits: the answer goes to the shared sink cell). */
static int ibv_atomic(struct ibv_transport *t, int pe, uint64_t word_off, int opcode, uint64_t compare_add,
                      uint64_t swap, uint64_t *old)
{
    struct ibv_net *net = t->net;
    uint64_t raddr;
    uint32_t rkey;
    if (ibv_remote(t, pe, word_off, 8, &raddr, &rkey) != 8) return GSHMEMX_ERR_INVALID_ARG;
    int rc = 0, cell = 0;
    if (old && (cell = gshmemi_ibv_cell_get(net, &rc)) < 0) return rc;
    struct ibv_sge sge = {(uintptr_t)gshmemi_ibv_cell_ptr(net, cell), 8, ibv_rail_of(net, pe)->host_mr->lkey};
    struct ibv_send_wr wr;
    ibv_wr_atomic(&wr, &sge, opcode, raddr, rkey, compare_add, swap);
    uint64_t seq = gshmemi_ibv_post(net, pe, &wr, old ? cell : -1, &rc);
    if (seq && old && (rc = gshmemi_ibv_wait(net, pe, seq, "an atomic")) == 0) *old = *gshmemi_ibv_cell_ptr(net, cell);
    if (old) net->cells[cell].busy = 0;
    return seq ? rc : (rc ? rc : GSHMEMX_ERR_INTERNAL);
}

static int ibv_amo_locked(struct ibv_transport *t, int pe, const struct gshmemi_amo *amo, uint64_t *fetched)
{
    struct gshmemi_ibv_amo_plan plan;
    if (gshmemi_ibv_amo_plan(amo, &plan) != 0) {
        GSHMEMI_ERROR(TRANSPORT, "PE %d: ibv: atomic of %u bytes at offset %zu of PE %d is not aligned", t->net->my_pe,
                      amo->width, amo->offset, pe);
        return GSHMEMX_ERR_INVALID_ARG;
    }
    uint64_t word = 0, next;
    int rc;
    if (plan.kind != GSHMEMI_IBV_AMO_LOOP) {
        int op = plan.kind == GSHMEMI_IBV_AMO_FADD ? IBV_WR_ATOMIC_FETCH_AND_ADD : IBV_WR_ATOMIC_CMP_AND_SWP;
        uint64_t arg = plan.kind == GSHMEMI_IBV_AMO_FADD ? plan.add : plan.compare;
        rc = ibv_atomic(t, pe, plan.word_offset, op, arg, plan.swap, fetched ? &word : NULL);
        if (rc == 0 && fetched) *fetched = gshmemi_ibv_amo_fetched(amo, plan.shift, word);
        return rc;
    }
    /* compare-swap loop: guess the word, learn its value from each failed attempt */
    int known = 0;
    for (;;) {
        if (!gshmemi_ibv_amo_next(amo, plan.shift, word, &next)) {
            if (known) break;
            next = word; /* a FETCH or failing compare on a guess: confirm the value */
        }
        uint64_t old;
        if ((rc = ibv_atomic(t, pe, plan.word_offset, IBV_WR_ATOMIC_CMP_AND_SWP, word, next, &old)) != 0) return rc;
        if (old == word) break;
        word = old, known = 1;
    }
    if (fetched) *fetched = gshmemi_ibv_amo_fetched(amo, plan.shift, word);
    return 0;
}

static int ibv_amo(struct gshmemi_transport *tp, int pe, const struct gshmemi_amo *amo, uint64_t *fetched)
{
    struct ibv_transport *t = ibv_of(tp);
    if (!ibv_reach(t, pe)) return GSHMEMX_ERR_INVALID_ARG;
    pthread_mutex_lock(&t->net->lock);
    int rc = ibv_amo_locked(t, pe, amo, fetched);
    pthread_mutex_unlock(&t->net->lock);
    return rc;
}

/* Native fetching atomics answer from the polling thread (the proxy goes on serving
 * meanwhile); compare-swap loops need each answer before the next try, so they run
 * here and answer before returning. */
static int ibv_amo_async(struct gshmemi_transport *tp, int pe, const struct gshmemi_amo *amo,
                         void (*done)(void *arg, uint64_t tag, uint64_t value), void *arg, uint64_t tag)
{
    struct ibv_transport *t = ibv_of(tp);
    struct ibv_net *net = t->net;
    struct gshmemi_ibv_amo_plan plan;
    if (!ibv_reach(t, pe)) return GSHMEMX_ERR_INVALID_ARG;
    if (gshmemi_ibv_amo_plan(amo, &plan) != 0 || plan.kind == GSHMEMI_IBV_AMO_LOOP)
        return gshmemi_transport_amo_async_sync(tp, pe, amo, done, arg, tag);
    uint64_t raddr;
    uint32_t rkey;
    pthread_mutex_lock(&net->lock);
    int rc = 0, cell = ibv_remote(t, pe, plan.word_offset, 8, &raddr, &rkey) == 8 ? gshmemi_ibv_cell_get(net, &rc)
                                                                                  : (rc = GSHMEMX_ERR_INVALID_ARG, -1);
    if (cell >= 0) {
        struct ibv_cell *c = &net->cells[cell];
        c->done = done, c->arg = arg, c->tag = tag, c->amo = *amo, c->shift = plan.shift;
        struct ibv_sge sge = {(uintptr_t)gshmemi_ibv_cell_ptr(net, cell), 8, ibv_rail_of(net, pe)->host_mr->lkey};
        struct ibv_send_wr wr;
        int fadd = plan.kind == GSHMEMI_IBV_AMO_FADD;
        ibv_wr_atomic(&wr, &sge, fadd ? IBV_WR_ATOMIC_FETCH_AND_ADD : IBV_WR_ATOMIC_CMP_AND_SWP, raddr, rkey,
                      fadd ? plan.add : plan.compare, plan.swap);
        if (atomic_fetch_add(&net->async_pending, 1) == 0 && write(net->wake[1], "w", 1) < 0) {
            /* the pipe is full: the event thread is awake already */
        }
        if (!gshmemi_ibv_post(net, pe, &wr, cell, &rc)) {
            c->done = NULL, c->busy = 0;
            atomic_fetch_sub(&net->async_pending, 1);
        }
    }
    pthread_mutex_unlock(&net->lock);
    return rc;
}

static int ibv_put_signal(struct gshmemi_transport *tp, int pe, size_t offset, const void *src, size_t len,
                          size_t sig_offset, uint64_t signal, int sig_op)
{
    struct ibv_transport *t = ibv_of(tp);
    struct ibv_net *net = t->net;
    if (!ibv_reach(t, pe)) return GSHMEMX_ERR_INVALID_ARG;
    int rc;
    pthread_mutex_lock(&net->lock);
    uint64_t need = ibv_write(t, pe, offset, src, len, &rc);
    if (rc == 0) rc = gshmemi_ibv_fence_pe(net, pe); /* the signal lands after the data */
    if (rc == 0 && sig_op == GSHMEM_SIGNAL_ADD) {
        rc = ibv_atomic(t, pe, sig_offset, IBV_WR_ATOMIC_FETCH_AND_ADD, signal, 0, NULL);
    } else if (rc == 0) { /* SET: an aligned 8-byte write, read whole by the waiting PE */
        uint64_t raddr;
        uint32_t rkey;
        if (ibv_remote(t, pe, sig_offset, 8, &raddr, &rkey) != 8) rc = GSHMEMX_ERR_INVALID_ARG;
        struct ibv_sge sge = {(uintptr_t)&signal, 8, 0};
        struct ibv_send_wr wr;
        ibv_wr_rdma(&wr, &sge, IBV_WR_RDMA_WRITE, raddr, rkey);
        wr.send_flags = IBV_SEND_INLINE;
        if (rc == 0 && !gshmemi_ibv_post(net, pe, &wr, -1, &rc) && rc == 0) rc = GSHMEMX_ERR_INTERNAL;
    }
    if (rc == 0 && need) rc = gshmemi_ibv_wait(net, pe, need, "a put with signal");
    pthread_mutex_unlock(&net->lock);
    return rc;
}

/* Fence waits for completion: ibv also carries atomics and signals to node-local PEs
 * whose puts go through p2p stores, which no request flag orders. */
static int ibv_fence(struct gshmemi_transport *tp, int pe)
{
    struct ibv_transport *t = ibv_of(tp);
    if (pe >= 0 && !ibv_reach(t, pe)) return 0;
    pthread_mutex_lock(&t->net->lock);
    int rc = gshmemi_ibv_quiet_pe(t->net, pe);
    pthread_mutex_unlock(&t->net->lock);
    return rc;
}

static int ibv_quiet(struct gshmemi_transport *tp)
{
    struct ibv_net *net = ibv_of(tp)->net;
    pthread_mutex_lock(&net->lock);
    int rc = gshmemi_ibv_quiet_pe(net, -1);
    pthread_mutex_unlock(&net->lock);
    return rc;
}

void gshmemi_ibv_destroy(struct gshmemi_transport *tp);

const struct gshmemi_transport_ops gshmemi_ibv_ops = {
    .size = sizeof(struct gshmemi_transport_ops),
    .name = "ibv",
    .put = ibv_put,
    .get = ibv_get,
    .put_nbi = ibv_put_nbi,
    .get_nbi = ibv_get, /* completes at once: earlier than quiet requires */
    .iput = ibv_iput,
    .iget = ibv_iget,
    .amo = ibv_amo,
    .amo_async = ibv_amo_async,
    .put_signal = ibv_put_signal,
    .fence = ibv_fence,
    .quiet = ibv_quiet,
    .flush = gshmemi_transport_flush_none,
    .ptr = gshmemi_transport_stub_ptr,
    .destroy = gshmemi_ibv_destroy,
};
#endif
