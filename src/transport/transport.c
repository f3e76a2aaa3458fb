/*
 * Transport selection: which transport reaches each PE. Core calls only this.
 * Node-local PEs (same node id) go through p2p; the others through the remote
 * transport. GSHMEM_DISABLE_P2P=1 sends node-local PEs the remote way too, so the
 * whole remote path runs on one machine. Every PE decides the same way from the
 * bootstrap's node map, so the remote transport's collective set-up is entered by all
 * PEs or by none.
 */
#include "transport/transport.h"

#include "bootstrap/bootstrap.h"
#include "core/env.h"
#include "core/heap.h"
#include "core/log.h"

#include <gshmem/status.h>

#include <stdio.h>
#include <stdlib.h>

const char *gshmemi_transports_remote_choice(const struct gshmemi_env *env, const char **why)
{
    static char reason[448];
    if (env->remote_transport == GSHMEMI_REMOTE_TCP) {
        *why = "GSHMEM_REMOTE_TRANSPORT=tcp";
        return "tcp";
    }
    char ibv_why[384] = "";
    if (gshmemi_transport_ibv_usable(env, -1, ibv_why, sizeof(ibv_why))) {
        *why = env->remote_transport == GSHMEMI_REMOTE_IBV ? "GSHMEM_REMOTE_TRANSPORT=ibv"
                                                           : "auto: an RDMA port is active here (every PE must have one)";
        return "ibv";
    }
    snprintf(reason, sizeof(reason), "%s%s", env->remote_transport == GSHMEMI_REMOTE_IBV ? "GSHMEM_REMOTE_TRANSPORT=ibv will fail: " : "auto: ibv is not usable here: ", ibv_why);
    *why = reason;
    return env->remote_transport == GSHMEMI_REMOTE_IBV ? "ibv" : "tcp";
}

static int transports_gpu = -1;
static int transports_ibv = -1; /* the job's decision: -1 not yet, 0 tcp, 1 ibv */

void gshmemi_transports_prefer_gpu(int device)
{
    transports_gpu = device;
}

/* Whether the job's remote transport is ibv: every PE must be able to use it (the same
 * answer everywhere, from an allgather). GSHMEM_REMOTE_TRANSPORT=ibv fails rather than
 * fall back. Decided once, at the first heap. */
static int transports_pick_ibv(struct gshmemi_bootstrap *bs, struct gshmemi_heap *heap, const struct gshmemi_env *env,
                               int *use_ibv)
{
    if (transports_ibv >= 0) return *use_ibv = transports_ibv, 0;
    *use_ibv = 0;
    if (env->remote_transport == GSHMEMI_REMOTE_TCP) return transports_ibv = 0, 0;
    char why[384] = "";
    int gpu = heap->kind == GSHMEMI_HEAP_KIND_DEVICE ? heap->device : transports_gpu;
    int usable = gshmemi_transport_ibv_usable(env, gpu, why, sizeof(why));
    int *all = calloc((size_t)bs->nranks, sizeof(int));
    int rc = all ? bs->ops->allgather(bs, &usable, all, sizeof(usable)) : GSHMEMX_ERR_NOMEM;
    int lacking = -1;
    for (int pe = 0; rc == 0 && pe < bs->nranks && lacking < 0; pe++)
        if (!all[pe]) lacking = pe;
    free(all);
    if (rc != 0) return rc;
    if (lacking >= 0 && env->remote_transport == GSHMEMI_REMOTE_IBV) {
        if (!usable) GSHMEMI_ERROR(TRANSPORT, "PE %d: GSHMEM_REMOTE_TRANSPORT=ibv, but %s", bs->rank, why);
        else GSHMEMI_ERROR(TRANSPORT, "PE %d: GSHMEM_REMOTE_TRANSPORT=ibv, but PE %d cannot use ibv (its log says why)",
                           bs->rank, lacking);
        return GSHMEMX_ERR_NOT_SUPPORTED;
    }
    if (lacking >= 0 && !usable) GSHMEMI_INFO(TRANSPORT, "PE %d: ibv not used: %s", bs->rank, why);
    else if (lacking >= 0) GSHMEMI_INFO(TRANSPORT, "PE %d: ibv not used: PE %d cannot use it", bs->rank, lacking);
    transports_ibv = lacking < 0;
    if (!transports_ibv) gshmemi_transport_ibv_release();
    *use_ibv = transports_ibv;
    return 0;
}

/* Whether any pair of PEs needs the remote transport (the same answer on every PE). */
static int transports_need_remote(const struct gshmemi_bootstrap *bs, const struct gshmemi_env *env)
{
    if (bs->nranks < 2) return 0;
    if (env->disable_p2p) return 1;
    for (int pe = 1; pe < bs->nranks; pe++)
        if (bs->node_of_rank[pe] != bs->node_of_rank[0]) return 1;
    return 0;
}

/* "0-3,6" from a per-PE predicate, for the INFO log. */
static void transports_list(char *buf, size_t len, struct gshmemi_transport **per_pe, int n,
                            const struct gshmemi_transport *which, int skip)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int pe = 0; pe < n && at + 24 < len; pe++) {
        if (per_pe[pe] != which || pe == skip) continue;
        int end = pe;
        while (end + 1 < n && per_pe[end + 1] == which && end + 1 != skip) end++;
        at += (size_t)snprintf(buf + at, len - at, at ? ",%d" : "%d", pe);
        if (end > pe) at += (size_t)snprintf(buf + at, len - at, "-%d", end);
        pe = end;
    }
    if (!at) snprintf(buf, len, "none");
}

int gshmemi_transports_create(struct gshmemi_bootstrap *bs, struct gshmemi_heap *heap, const struct gshmemi_env *env,
                              struct gshmemi_transport **per_pe, struct gshmemi_transport_set *set)
{
    struct gshmemi_transport *p2p = NULL, *remote = NULL;
    set->count = 0;
    set->amo = NULL;
    int rc = gshmemi_transport_p2p_create(bs, heap, env->timeout, env->disable_p2p, &p2p);
    if (rc != 0) return rc;
    set->list[set->count++] = p2p;
    if (transports_need_remote(bs, env)) {
        int use_ibv;
        if ((rc = transports_pick_ibv(bs, heap, env, &use_ibv)) != 0) return rc;
        unsigned char *far = calloc((size_t)bs->nranks, 1);
        if (!far) return GSHMEMX_ERR_NOMEM;
        for (int pe = 0; pe < bs->nranks; pe++) far[pe] = use_ibv || !gshmemi_transport_p2p_reaches(p2p, pe);
        rc = use_ibv ? gshmemi_transport_ibv_create(bs, heap, env, far, &remote)
                     : gshmemi_transport_tcp_create(bs, heap, env, far, &remote);
        if (rc == GSHMEMX_ERR_NOT_SUPPORTED && use_ibv && env->remote_transport == GSHMEMI_REMOTE_AUTO) {
            /* the same answer on every PE (ibv.c agrees on each step) */
            if (heap->kind == GSHMEMI_HEAP_KIND_DEVICE)
                GSHMEMI_WARN(TRANSPORT, "PE %d: ibv cannot register the device heap on every PE (no GPUDirect "
                                        "RDMA: DMA-BUF or nvidia-peermem): PEs on other nodes reach it over tcp",
                             bs->rank);
            else
                GSHMEMI_WARN(TRANSPORT, "PE %d: ibv could not be set up on every PE (the first PE's log says why): "
                                        "PEs on other nodes are reached over tcp", bs->rank);
            if (!gshmemi_transport_ibv_in_use()) transports_ibv = 0;
            use_ibv = 0;
            for (int pe = 0; pe < bs->nranks; pe++) far[pe] = !gshmemi_transport_p2p_reaches(p2p, pe);
            rc = gshmemi_transport_tcp_create(bs, heap, env, far, &remote);
        }
        free(far);
        if (rc != 0) return rc;
        set->list[set->count++] = remote;
        if (use_ibv) set->amo = remote;
    }
    for (int pe = 0; pe < bs->nranks; pe++) per_pe[pe] = gshmemi_transport_p2p_reaches(p2p, pe) ? p2p : remote;
    char near[256], far[256];
    transports_list(near, sizeof(near), per_pe, bs->nranks, p2p, bs->rank);
    transports_list(far, sizeof(far), per_pe, bs->nranks, remote, bs->rank);
    GSHMEMI_INFO(TRANSPORT, "PE %d reaches PEs %s through p2p and PEs %s through %s", bs->rank, near, far,
                 remote ? remote->ops->name : "(no remote transport)");
    return 0;
}

void gshmemi_transports_destroy(struct gshmemi_transport_set *set)
{
    for (int i = set->count - 1; i >= 0; i--) set->list[i]->ops->destroy(set->list[i]);
    set->count = 0;
}

const char *gshmemi_transports_loss(void)
{
    const char *why = gshmemi_transport_ibv_loss();
    return why ? why : gshmemi_transport_tcp_loss();
}
