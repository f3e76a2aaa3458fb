/* ibv transport: posting, completions, stage slots and answer cells (ibv_impl.h). */
#ifdef GSHMEM_HAVE_IBV
#include "transport/ibv_impl.h"

#include "core/log.h"

#include <gshmem/status.h>

#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* wr_id: PE in bits 0-19, answer cell + 1 in 20-31, low 32 bits of the sequence above. */
#define IBV_PE_BITS 20
#define IBV_CELL_MASK 0xfffu

static double ibv_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void gshmemi_ibv_lost(struct ibv_net *net, int pe, const char *fmt, ...)
{
    if (atomic_load(&net->closing)) return;
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    static pthread_mutex_t lost_lock = PTHREAD_MUTEX_INITIALIZER; /* the event thread may write too */
    pthread_mutex_lock(&lost_lock);
    if (!net->lost_msg[0]) {
        const struct ibv_port_choice *port = &ibv_rail_of(net, pe)->port;
        if (pe >= 0)
            snprintf(net->lost_msg, sizeof(net->lost_msg), "ibv: PE %d lost PE %d (%s port %d): %s", net->my_pe, pe,
                     port->dev, port->port, what);
        else if (net->nrails > 1) /* not tied to a peer: what names the device */
            snprintf(net->lost_msg, sizeof(net->lost_msg), "ibv: PE %d: %s", net->my_pe, what);
        else
            snprintf(net->lost_msg, sizeof(net->lost_msg), "ibv: PE %d (%s port %d): %s", net->my_pe, port->dev,
                     port->port, what);
    }
    pthread_mutex_unlock(&lost_lock);
    int expected = 0;
    atomic_compare_exchange_strong(&net->failed, &expected, GSHMEMX_ERR_PEER_LOST);
}

/* The bit of the heap of pe that holds raddr, when pe registered it with relaxed
 * ordering: a write there may become visible after later ones until a read of that
 * heap follows it (gshmemi_ibv_post_flush). 0 otherwise. */
static unsigned ibv_relaxed_heap(const struct ibv_net *net, int pe, uint64_t raddr)
{
    for (int h = 0; h < net->nheaps; h++) {
        const struct ibv_heapreg *reg = &net->heaps[h];
        if (!reg->peer_flush || !reg->peer_flush[pe]) continue;
        const struct gshmemi_ibv_heapkeys *k = &reg->peer[pe];
        if (raddr - k->addr < k->size) return 1u << h;
    }
    return 0;
}

uint64_t gshmemi_ibv_post(struct ibv_net *net, int pe, struct ibv_send_wr *wr, int cell, int *rc)
{
    struct ibv_peer *p = &net->peers[pe];
    *rc = atomic_load(&net->failed);
    if (*rc) return 0;
    unsigned every =
        net->qp_depth / 2 < GSHMEMI_IBV_SIGNAL_EVERY ? (unsigned)net->qp_depth / 2 : GSHMEMI_IBV_SIGNAL_EVERY;
    double deadline = 0;
    while (p->posted - p->retired >= (uint64_t)net->qp_depth - 1) { /* full: a signalled request is among them */
        if ((*rc = gshmemi_ibv_poll(net)) != 0) return 0;
        if (deadline == 0) deadline = ibv_now() + (net->timeout > 0 ? net->timeout : 1e30);
        if (ibv_now() > deadline) {
            GSHMEMI_ERROR(TRANSPORT, "PE %d: ibv: the queue pair to PE %d (%s port %d) stayed full for %.0f s "
                                     "(GSHMEM_TIMEOUT)", net->my_pe, pe, net->rails[p->rail].port.dev,
                          net->rails[p->rail].port.port, net->timeout);
            return *rc = GSHMEMX_ERR_TIMEOUT, 0;
        }
    }
    uint64_t seq = p->posted + 1;
    if (cell >= 0 || ++p->unsignaled >= every) wr->send_flags |= IBV_SEND_SIGNALED;
    if (wr->send_flags & IBV_SEND_SIGNALED) p->unsignaled = 0;
    if (p->fence_due) wr->send_flags |= IBV_SEND_FENCE;
    wr->wr_id = (uint64_t)(uint32_t)seq << 32 | (uint64_t)(cell + 1) << IBV_PE_BITS | (uint64_t)pe;
    wr->next = NULL;
    struct ibv_send_wr *bad = NULL;
    int err = p->qp->context->ops.post_send(p->qp, wr, &bad);
    if (err) {
        gshmemi_ibv_lost(net, pe, "ibv_post_send failed: %s", strerror(err));
        return *rc = GSHMEMX_ERR_PEER_LOST, 0;
    }
    p->posted = seq;
    p->fence_due = 0;
    if (wr->send_flags & IBV_SEND_SIGNALED) p->last_signaled = seq;
    if (wr->opcode == IBV_WR_RDMA_WRITE)
        p->flush_heaps |= ibv_relaxed_heap(net, pe, wr->wr.rdma.remote_addr);
    else if (wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD || wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP)
        p->flush_heaps |= ibv_relaxed_heap(net, pe, wr->wr.atomic.remote_addr); /* its write half */
    return seq;
}

static void ibv_complete(struct ibv_net *net, const struct ibv_wc *wc)
{
    int pe = (int)(wc->wr_id & ((1u << IBV_PE_BITS) - 1));
    int cell = (int)((wc->wr_id >> IBV_PE_BITS) & IBV_CELL_MASK) - 1;
    struct ibv_peer *p = &net->peers[pe];
    uint64_t seq = (p->posted & ~(uint64_t)0xffffffffu) | (wc->wr_id >> 32);
    if (seq > p->posted) seq -= (uint64_t)1 << 32;
    if (seq > p->retired) p->retired = seq;
    if (cell < 0) return;
    struct ibv_cell *c = &net->cells[cell];
    c->ready = 1;
    if (c->done) { /* amo_async: answer now, from whichever thread polled */
        c->done(c->arg, c->tag, gshmemi_ibv_amo_fetched(&c->amo, c->shift, *gshmemi_ibv_cell_ptr(net, cell)));
        c->done = NULL;
        c->busy = 0;
        atomic_fetch_sub(&net->async_pending, 1);
    }
}

/* One poll of rail r's CQ. */
static int ibv_poll_rail(struct ibv_net *net, int r)
{
    struct ibv_wc wc[16];
    struct ibv_cq *cq = net->rails[r].cq;
    int n = cq->context->ops.poll_cq(cq, 16, wc);
    if (n < 0) {
        gshmemi_ibv_lost(net, -1, "ibv_poll_cq on %s failed (%d)", net->rails[r].port.dev, n);
        return GSHMEMX_ERR_PEER_LOST;
    }
    for (int i = 0; i < n; i++) {
        int pe = (int)(wc[i].wr_id & ((1u << IBV_PE_BITS) - 1));
        if (wc[i].status != IBV_WC_SUCCESS && atomic_load(&net->closing) && pe < net->n_pes) {
            struct ibv_peer *p = &net->peers[pe]; /* finalize's drain: count it as done */
            if (p->posted > p->retired) p->retired = p->posted;
            continue;
        }
        if (wc[i].status != IBV_WC_SUCCESS) {
            char st[96];
            /* a failed completion's opcode is undefined: the request is named by its number */
            gshmemi_ibv_lost(net, pe, "request %llu failed: %s, vendor error 0x%x (qp 0x%x)",
                             (unsigned long long)(wc[i].wr_id >> 32),
                             gshmemi_ibv_wc_status(net->api, wc[i].status, st, sizeof(st)), wc[i].vendor_err,
                             wc[i].qp_num);
            continue; /* later completions may still retire requests other waiters need */
        }
        if (pe >= net->n_pes) continue;
        ibv_complete(net, &wc[i]);
    }
    return 0;
}

int gshmemi_ibv_poll(struct ibv_net *net)
{
    for (int r = 0; r < net->nrails; r++) {
        int rc = ibv_poll_rail(net, r);
        if (rc) return rc;
    }
    return atomic_load(&net->failed);
}

int gshmemi_ibv_wait(struct ibv_net *net, int pe, uint64_t seq, const char *what)
{
    struct ibv_peer *p = &net->peers[pe];
    double deadline = 0;
    if (p->retired < seq && p->last_signaled < seq) { /* nothing signalled at or after it yet */
        int rc = 0;
        uint64_t flush = gshmemi_ibv_post_flush(net, pe, 1, &rc);
        if (!flush) return rc ? rc : GSHMEMX_ERR_INTERNAL;
        seq = flush;
    }
    for (unsigned spins = 0; p->retired < seq; spins++) {
        int rc = gshmemi_ibv_poll(net);
        if (rc) return rc;
        if (p->retired >= seq) break;
        if ((spins & 1023) == 1023) {
            if (deadline == 0) deadline = ibv_now() + (net->timeout > 0 ? net->timeout : 1e30);
            if (ibv_now() > deadline) {
                GSHMEMI_ERROR(TRANSPORT,
                              "PE %d: ibv: %s to PE %d got no completion in %.0f s (GSHMEM_TIMEOUT); "
                              "%llu requests outstanding on %s port %d",
                              net->my_pe, what, pe, net->timeout, (unsigned long long)(p->posted - p->retired),
                              ibv_rail_of(net, pe)->port.dev, ibv_rail_of(net, pe)->port.port);
                return GSHMEMX_ERR_TIMEOUT;
            }
            pthread_mutex_unlock(&net->lock); /* let other threads post and poll */
            sched_yield();
            pthread_mutex_lock(&net->lock);
        }
    }
    return 0;
}

unsigned char *gshmemi_ibv_stage_ptr(struct ibv_net *net, int slot)
{
    return net->host + (size_t)slot * GSHMEMI_IBV_STAGE_SLOT;
}

int gshmemi_ibv_stage_get(struct ibv_net *net, int *rc)
{
    for (unsigned tries = 0;; tries++) {
        int s = (int)(net->stage_next++ % GSHMEMI_IBV_STAGE_SLOTS);
        struct ibv_stage_slot *slot = &net->stage[s];
        if (slot->held) { /* another thread's get copies out of it (waits drop the lock) */
            if (tries % GSHMEMI_IBV_STAGE_SLOTS == GSHMEMI_IBV_STAGE_SLOTS - 1) {
                pthread_mutex_unlock(&net->lock);
                sched_yield();
                pthread_mutex_lock(&net->lock);
            }
            continue;
        }
        slot->held = 1; /* ours while we wait for its last user */
        *rc = slot->pe >= 0 ? gshmemi_ibv_wait(net, slot->pe, slot->seq, "a staged transfer") : 0;
        slot->held = 0;
        if (*rc) return -1;
        slot->pe = -1;
        return s;
    }
}

uint64_t *gshmemi_ibv_cell_ptr(struct ibv_net *net, int cell)
{
    return (uint64_t *)(void *)(net->host + GSHMEMI_IBV_STAGE_SLOTS * GSHMEMI_IBV_STAGE_SLOT) + cell;
}

/* Cell 0 is the shared sink of flush reads and of atomics whose answer nobody wants. */
int gshmemi_ibv_cell_get(struct ibv_net *net, int *rc)
{
    double deadline = 0;
    for (;;) {
        for (int i = 1; i < GSHMEMI_IBV_CELLS; i++) {
            int c = 1 + (int)((net->cell_next + (unsigned)i) % (GSHMEMI_IBV_CELLS - 1));
            if (net->cells[c].busy) continue;
            net->cell_next = (unsigned)c;
            net->cells[c].busy = 1;
            net->cells[c].ready = 0;
            return c;
        }
        if ((*rc = gshmemi_ibv_poll(net)) != 0) return -1;
        if (deadline == 0) deadline = ibv_now() + (net->timeout > 0 ? net->timeout : 1e30);
        if (ibv_now() > deadline) {
            GSHMEMI_ERROR(TRANSPORT, "PE %d: ibv: all %d answer cells of fetching atomics stayed taken for %.0f s "
                                     "(GSHMEM_TIMEOUT): their answers never came", net->my_pe, GSHMEMI_IBV_CELLS - 1,
                          net->timeout);
            *rc = GSHMEMX_ERR_TIMEOUT;
            return -1;
        }
        pthread_mutex_unlock(&net->lock); /* every cell is some thread's: wait for one */
        sched_yield();
        pthread_mutex_lock(&net->lock);
    }
}

/* A read of the first word of each heap of pe written with relaxed ordering since its
 * last flush (of heap 0 when none was: then it is only a request to wait for). A read
 * does not pass earlier writes on its PCIe path, and a heap lives in one memory (host
 * RAM or one GPU), so its answer follows every earlier write into that heap. Only the
 * last read is signalled when signaled is set. */
uint64_t gshmemi_ibv_post_flush(struct ibv_net *net, int pe, int signaled, int *rc)
{
    struct ibv_peer *p = &net->peers[pe];
    unsigned due = p->flush_heaps ? p->flush_heaps : 1u;
    uint64_t seq = 0;
    for (int h = 0; h < net->nheaps && due; h++) {
        if (!(due & (1u << h))) continue;
        due &= ~(1u << h);
        const struct gshmemi_ibv_heapkeys *k = &net->heaps[h].peer[pe];
        struct ibv_sge sge = {(uintptr_t)gshmemi_ibv_cell_ptr(net, 0), 8, ibv_rail_of(net, pe)->host_mr->lkey};
        struct ibv_send_wr wr;
        memset(&wr, 0, sizeof(wr));
        wr.opcode = IBV_WR_RDMA_READ;
        wr.sg_list = &sge;
        wr.num_sge = 1;
        wr.send_flags = signaled && !due ? IBV_SEND_SIGNALED : 0;
        wr.wr.rdma.remote_addr = k->addr;
        wr.wr.rdma.rkey = k->rkey[0];
        if (!(seq = gshmemi_ibv_post(net, pe, &wr, -1, rc))) return 0;
    }
    p->flush_heaps = 0;
    return seq;
}

int gshmemi_ibv_fence_pe(struct ibv_net *net, int pe)
{
    struct ibv_peer *p = &net->peers[pe];
    int rc = 0;
    if (p->flush_heaps && !gshmemi_ibv_post_flush(net, pe, 0, &rc)) return rc;
    p->fence_due = 1;
    return 0;
}

int gshmemi_ibv_quiet_pe(struct ibv_net *net, int pe)
{
    int first = pe < 0 ? 0 : pe, last = pe < 0 ? net->n_pes - 1 : pe;
    for (int i = first; i <= last; i++) {
        struct ibv_peer *p = &net->peers[i];
        if (!p->qp || (p->retired == p->posted && !p->flush_heaps)) continue;
        int rc = 0;
        if (p->flush_heaps || p->last_signaled != p->posted)
            if (!gshmemi_ibv_post_flush(net, i, 1, &rc)) return rc;
    }
    for (int i = first; i <= last; i++) {
        struct ibv_peer *p = &net->peers[i];
        if (!p->qp || p->retired == p->posted) continue;
        int rc = gshmemi_ibv_wait(net, i, p->posted, "quiet");
        if (rc) return rc;
    }
    return 0;
}
/* Finalize: every request in a send queue reaches its target before the QPs go. A
 * zero-length write (no remote memory: a peer may already have released its heap)
 * signals each unfinished QP; failures of leaving peers are ignored, and the wait is
 * short. */
void gshmemi_ibv_drain(struct ibv_net *net)
{
    atomic_store(&net->closing, 1);
    pthread_mutex_lock(&net->lock);
    double deadline = ibv_now() + 2;
    for (int pe = 0; pe < net->n_pes; pe++) {
        struct ibv_peer *p = &net->peers[pe];
        if (!p->qp || p->retired >= p->posted || p->last_signaled == p->posted) continue;
        struct ibv_send_wr wr;
        int rc;
        memset(&wr, 0, sizeof(wr));
        wr.opcode = IBV_WR_RDMA_WRITE;
        wr.send_flags = IBV_SEND_SIGNALED;
        (void)gshmemi_ibv_post(net, pe, &wr, -1, &rc);
    }
    for (int pe = 0; pe < net->n_pes; pe++)
        while (net->peers[pe].qp && net->peers[pe].retired < net->peers[pe].last_signaled && ibv_now() < deadline &&
               gshmemi_ibv_poll(net) == 0) {
        }
    pthread_mutex_unlock(&net->lock);
}
#endif
