/* fence, quiet and the dissemination barrier over the transports. */
#include "core/api.h"
#include "core/proxy.h"

#include <gshmem.h>

#include <stddef.h>
#include <stdio.h>

void gshmemi_sync_quiet(struct gshmemi_state *st, const char *fn)
{
    /* Requests kernels posted to the proxy count too (finalize relies on it). */
    if (st->proxy) gshmemi_api_check_rc(st, fn, gshmemi_proxy_quiet(st->proxy), st->my_pe);
    for (int i = 0; i < st->transports.count; i++) {
        struct gshmemi_transport *tp = st->transports.list[i];
        gshmemi_api_check_rc(st, fn, tp->ops->quiet(tp), st->my_pe);
    }
}

void gshmemi_sync_flush(struct gshmemi_state *st)
{
    for (int i = 0; i < st->transports.count; i++) st->transports.list[i]->ops->flush(st->transports.list[i]);
    for (int i = 0; i < st->sync_transports.count; i++)
        st->sync_transports.list[i]->ops->flush(st->sync_transports.list[i]);
}

struct barrier_wait {
    const char *fn;
    const uint64_t *flag;
    uint64_t epoch;
    int round;
    int from_pe;
};

static int barrier_arrived(void *arg)
{
    const struct barrier_wait *w = arg;
    return __atomic_load_n(w->flag, __ATOMIC_ACQUIRE) >= w->epoch;
}

static void barrier_describe(void *arg, char *buf, size_t len)
{
    const struct barrier_wait *w = arg;
    snprintf(buf, len, "%s: barrier %llu, round %d: waiting for PE %d to arrive", w->fn,
             (unsigned long long)w->epoch, w->round, w->from_pe);
}

/* Dissemination barrier: in round r each PE signals PE (me + 2^r) and waits for
 * PE (me - 2^r). Counters only grow, so a PE running ahead is harmless. */
void gshmemi_sync_barrier(struct gshmemi_state *st, const char *fn)
{
    struct gshmemi_sync_area *area = st->sync_heap.base;
    uint64_t epoch = __atomic_add_fetch(&st->barrier_epoch, 1, __ATOMIC_RELAXED);
    int me = st->my_pe, n = st->n_pes, round = 0;
    for (int dist = 1; dist < n; dist <<= 1, round++) {
        int to = (me + dist) % n;
        struct gshmemi_transport *tp = st->sync_of_pe[to];
        struct gshmemi_amo amo = {.op = GSHMEMI_AMO_ADD, .width = 8, .operand = 1,
                                  .offset = offsetof(struct gshmemi_sync_area, barrier_flags) +
                                            (size_t)round * sizeof(uint64_t)};
        gshmemi_api_check_rc(st, fn, tp->ops->amo(tp, to, &amo, NULL), to);
        struct barrier_wait w = {fn, &area->barrier_flags[round], epoch, round, (me - dist + n) % n};
        gshmemi_progress_wait(st, barrier_arrived, &w, barrier_describe);
    }
}

void gshmem_fence(void)
{
    struct gshmemi_state *st = gshmemi_api_state(__func__);
    for (int i = 0; i < st->transports.count; i++) {
        struct gshmemi_transport *tp = st->transports.list[i];
        gshmemi_api_check_rc(st, __func__, tp->ops->fence(tp, -1), st->my_pe);
    }
}

void gshmem_quiet(void)
{
    gshmemi_sync_quiet(gshmemi_api_state(__func__), __func__);
}

void gshmem_sync_all(void)
{
    gshmemi_sync_barrier(gshmemi_api_state(__func__), __func__);
}

void gshmem_barrier_all(void)
{
    struct gshmemi_state *st = gshmemi_api_state(__func__);
    gshmemi_sync_quiet(st, __func__);
    gshmemi_sync_barrier(st, __func__);
}
