/*
 * PCIe relaxed ordering, emulated (GSHMEM_MOCK_IB_RELAXED=<ms>, 0: off). An RDMA WRITE
 * into an MR registered with IBV_ACCESS_RELAXED_ORDERING does not land at once: its
 * bytes wait in a list of the initiator's QP ("late" writes). The oldest late write of
 * a QP lands <ms> milliseconds after it was posted; the ones after it land after a tenth
 * of that (at least 1 ms), so they overtake it, as relaxed-ordered PCIe writes may. A READ or an
 * atomic through the same QP into the same MR first lands every late write of that QP
 * into that MR: a PCIe read does not pass earlier writes on its path. One MR counts as
 * one path (stricter than hardware, where all of a GPU's or the host's memory is).
 * Not emulated: IBV_SEND_FENCE (every WR runs at post time, so a WRITE never passes
 * an earlier READ), late atomic writes and late READ responses.
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

static void *mock_late_ticker(void *arg)
{
    struct mock_context *c = arg;
    struct timespec tick = {0, 1000000};
    pthread_mutex_lock(&c->lock);
    while (!c->late_stop) {
        double now = mock_now();
        for (struct mock_qp *q = c->qps; q; q = q->next)
            mock_late_flush(c, q, 0, 0, now);
        pthread_mutex_unlock(&c->lock);
        nanosleep(&tick, NULL);
        pthread_mutex_lock(&c->lock);
    }
    pthread_mutex_unlock(&c->lock);
    return NULL;
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
    if (!c->late_thread_started) {
        if (pthread_create(&c->late_thread, NULL, mock_late_ticker, c) != 0) {
            fprintf(stderr, "mock ibv: GSHMEM_MOCK_IB_RELAXED: cannot start the thread that lands late writes\n");
            abort();
        }
        c->late_thread_started = 1;
    }
    return MOCK_OK;
}

/* Every late write of q lands (its destruction, or a reset). Called with c->lock held. */
void mock_late_drain(struct mock_context *c, struct mock_qp *q)
{
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
