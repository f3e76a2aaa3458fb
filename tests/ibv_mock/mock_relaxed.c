/*
 * PCIe relaxed ordering, emulated (GSHMEM_MOCK_IB_RELAXED=<ms>, 0: off). An RDMA WRITE
 * into an MR registered with IBV_ACCESS_RELAXED_ORDERING does not land at once: its
 * bytes wait in a list of the initiator's QP ("late" writes). The oldest late write of
 * a QP lands <ms> milliseconds after it was posted; the ones after it land after a tenth
 * of that (at least 1 ms), so they overtake it, as relaxed-ordered PCIe writes may. A READ or an
 * atomic through the same QP into the same MR first lands every late write of that QP
 * into that MR: a PCIe read does not pass earlier writes on its path. One MR counts as
 * one path (stricter than hardware, where all of a GPU's or the host's memory is).
 * READs run late too: one waits in the QP's list of ops and runs a fifth of N later
 * (at least 1 ms, at a tick); the QP's later READs and atomics (non-posted requests)
 * run in order behind it.
 * A WR posted with IBV_SEND_FENCE waits behind them; a WRITE without it runs at once
 * and may pass them (PCIe lets a posted write pass a read), but its completion waits
 * its turn, as RC completions come in order. Not emulated: late atomic writes.
 * A QP's late writes land when it is destroyed. Completions are not delayed: on
 * hardware a write completes once the responder acknowledged it, not once the
 * consumer can see it.
 */
#define _GNU_SOURCE
#include "mock_ibv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

/* A READ, an atomic or a fenced WR waiting to run, or the completion of a WR that ran
 * past them, waiting its turn. */
struct mock_op {
    struct mock_op *next;
    double due; /* 0: as soon as it is first in line */
    uint64_t seq;
    int run; /* 1: run wr; 0: push wc */
    struct ibv_send_wr wr;
    struct ibv_sge sge[MOCK_MAX_SGE];
    struct ibv_wc wc;
    unsigned char inline_data[MOCK_MAX_INLINE];
};

struct mock_late {
    struct mock_late *next;
    pid_t pid;
    unsigned long long start; /* the owner's start time: a reused pid is not it */
    uint32_t rkey;
    uint64_t host; /* in the responder's memory */
    size_t len;
    double due; /* CLOCK_MONOTONIC seconds */
    unsigned char data[];
};

static double mock_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Writes one late write into its responder, if the MR is still the one it was posted
 * to (a finished peer's memory is left alone). */
static void mock_late_land(struct mock_context *c, const struct mock_late *w)
{
    struct mock_mr_rec m;
    if (mock_mr_rec_read(c, w->rkey, &m) || m.pid != w->pid || m.start != w->start || w->host < m.addr ||
        w->host - m.addr + w->len > m.length)
        return;
    struct iovec mine = {(void *)w->data, w->len}, theirs = {(void *)(uintptr_t)w->host, w->len};
    (void)process_vm_writev(w->pid, &mine, 1, &theirs, 1, 0);
}

/* Lands the QP's late writes that match: into rkey (all: every one), or those due by now. */
static void mock_late_flush(struct mock_context *c, struct mock_qp *q, int all, uint32_t rkey, double now)
{
    struct mock_late **pp = &q->late;
    while (*pp) {
        struct mock_late *w = *pp;
        if (all || (now > 0 ? w->due <= now : w->rkey == rkey)) {
            mock_late_land(c, w);
            *pp = w->next;
            free(w);
        } else {
            pp = &w->next;
        }
    }
}

/* Runs the QP's waiting ops that are due (all: every one), in order. */
static void mock_ops_run(struct mock_context *c, struct mock_qp *q, int all, double now)
{
    while (q->ops && (all || q->ops->due <= now)) {
        struct mock_op *o = q->ops;
        q->ops = o->next;
        struct ibv_wc wc = o->wc;
        if (!o->run || mock_wr_go(c, q, &o->wr, &wc))
            mock_cq_push((struct mock_cq *)q->qp.send_cq, q, &wc, o->seq);
        free(o);
    }
}

static void *mock_late_ticker(void *arg)
{
    struct mock_context *c = arg;
    struct timespec tick = {0, 1000000};
    pthread_mutex_lock(&c->lock);
    while (!c->late_stop) {
        double now = mock_now();
        for (struct mock_qp *q = c->qps; q; q = q->next) {
            mock_ops_run(c, q, 0, now);
            mock_late_flush(c, q, 0, 0, now);
        }
        pthread_mutex_unlock(&c->lock);
        nanosleep(&tick, NULL);
        pthread_mutex_lock(&c->lock);
    }
    pthread_mutex_unlock(&c->lock);
    return NULL;
}

static void mock_ticker_start(struct mock_context *c)
{
    if (c->late_thread_started)
        return;
    if (pthread_create(&c->late_thread, NULL, mock_late_ticker, c) != 0) {
        fprintf(stderr, "mock ibv: GSHMEM_MOCK_IB_RELAXED: cannot start the thread that runs late work\n");
        abort();
    }
    c->late_thread_started = 1;
}

/* Before a WR through q into the MR rkey (access: that MR's flags) runs. Returns 1 when
 * the WR is a relaxed-ordered WRITE the caller should hand to mock_late_defer. */
int mock_late_before(struct mock_context *c, struct mock_qp *q, enum ibv_wr_opcode op, uint32_t rkey,
                     unsigned access)
{
    if (op == IBV_WR_RDMA_WRITE) /* the MR's flag decides: all its writes are relaxed or none */
        return c->relaxed_ms > 0 && (access & IBV_ACCESS_RELAXED_ORDERING);
    mock_late_flush(c, q, 0, rkey, 0); /* a READ or an atomic */
    return 0;
}

/* Keeps a relaxed-ordered WRITE's bytes (read from the local sges now, as the NIC would
 * have) to land later. Called with c->lock held. */
enum mock_reason mock_late_defer(struct mock_context *c, struct mock_qp *q, const struct iovec *iov, int n,
                                 size_t total, pid_t pid, uint32_t rkey, uint64_t host)
{
    struct mock_late *w = malloc(sizeof(*w) + total);
    if (!w)
        return MOCK_LOCAL_FAULT;
    struct iovec whole = {w->data, total};
    if (process_vm_readv(getpid(), &whole, 1, iov, (unsigned long)n, 0) != (ssize_t)total) {
        free(w);
        return MOCK_LOCAL_FAULT;
    }
    struct mock_mr_rec m;
    if (mock_mr_rec_read(c, rkey, &m)) {
        free(w);
        return MOCK_RKEY_UNKNOWN;
    }
    w->next = NULL;
    w->pid = pid;
    w->start = m.start;
    w->rkey = rkey;
    w->host = host;
    w->len = total;
    double hold = (double)c->relaxed_ms * 1e-3;
    w->due = mock_now() + (q->late ? (hold / 10 > 1e-3 ? hold / 10 : 1e-3) : hold); /* the first waits longest */
    struct mock_late **pp = &q->late;
    while (*pp)
        pp = &(*pp)->next;
    *pp = w;
    mock_ticker_start(c);
    return MOCK_OK;
}

/* Whether the emulation takes a WR just posted (seq: its place in the send queue):
 * a READ or an atomic, or a fenced WR behind one, waits in q->ops; a WRITE passing
 * waiting ops runs now and its completion waits in q->ops. 0: the caller runs it. */
int mock_ops_take(struct mock_context *c, struct mock_qp *q, const struct ibv_send_wr *wr, uint64_t seq)
{
    if (c->relaxed_ms <= 0 || q->st == IBV_QPS_ERR)
        return 0;
    const int nonposted = wr->opcode != IBV_WR_RDMA_WRITE;
    if (!q->ops && wr->opcode != IBV_WR_RDMA_READ)
        return 0; /* an atomic with nothing ahead of it runs at once (it is the READ that is late) */
    struct mock_op *o = calloc(1, sizeof(*o));
    if (!o)
        return 0; /* runs at once */
    o->seq = seq;
    if (nonposted || (wr->send_flags & IBV_SEND_FENCE)) {
        o->run = 1;
        /* a fifth of the hold (at least 1 ms): longer than a late write that overtakes,
         * so a WRITE that passes the READ (no fence) lands before what the READ pushes */
        double wait = (double)c->relaxed_ms * 2e-4;
        o->due = q->ops ? 0 : mock_now() + (wait > 1e-3 ? wait : 1e-3);
        o->wr = *wr;
        o->wr.next = NULL;
        o->wr.sg_list = o->sge;
        size_t at = 0;
        for (int i = 0; i < wr->num_sge && i < MOCK_MAX_SGE; i++) {
            o->sge[i] = wr->sg_list[i];
            if ((wr->send_flags & IBV_SEND_INLINE) && at + wr->sg_list[i].length <= sizeof(o->inline_data)) {
                memcpy(o->inline_data + at, (const void *)(uintptr_t)wr->sg_list[i].addr, wr->sg_list[i].length);
                o->sge[i].addr = (uintptr_t)(o->inline_data + at); /* taken at post time */
                at += wr->sg_list[i].length;
            }
        }
    } else if (!mock_wr_go(c, q, wr, &o->wc)) { /* a WRITE passing them, with nothing to report */
        free(o);
        return 1;
    }
    struct mock_op **pp = &q->ops;
    while (*pp)
        pp = &(*pp)->next;
    *pp = o;
    mock_ticker_start(c);
    return 1;
}

/* Every waiting op of q runs and every late write lands (its destruction, or a reset).
 * Called with c->lock held. */
void mock_late_drain(struct mock_context *c, struct mock_qp *q)
{
    mock_ops_run(c, q, 1, 0);
    mock_late_flush(c, q, 1, 0, 0);
}

/* Stops the ticker (ibv_close_device), c->lock not held. */
void mock_late_stop(struct mock_context *c)
{
    if (!c->late_thread_started)
        return;
    pthread_mutex_lock(&c->lock);
    c->late_stop = 1;
    pthread_mutex_unlock(&c->lock);
    pthread_join(c->late_thread, NULL);
    c->late_thread_started = 0;
}
