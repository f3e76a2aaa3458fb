/* The device state, built from the process state and handed to device libraries. */
#include "device/device_publish.h"

#include "core/state.h"
#include "core/log.h"
#include "core/proxy.h"

#include <gshmem/impl/device_state.h>
#include <gshmem/status.h>

#ifdef GSHMEM_HAVE_CUDA
#include <cuda_runtime_api.h>
#define PUBLISH_ERROR_TEXT(err) cudaGetErrorString((cudaError_t)(err))
#else
#define PUBLISH_ERROR_TEXT(err) "no CUDA in this build"
#endif
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define PUBLISH_MAX_IMAGES 16

static struct {
    pthread_mutex_t lock;
    gshmemi_device_sync_fn fns[PUBLISH_MAX_IMAGES];
    int count;
    const struct gshmemi_device_state *current; /* set while initialized */
    int device;
} publish = {PTHREAD_MUTEX_INITIALIZER, {0}, 0, NULL, -1};

static int publish_one(gshmemi_device_sync_fn fn, int device, const struct gshmemi_device_state *state)
{
    int err = fn(device, state, sizeof(*state));
    if (err != 0)
        GSHMEMI_ERROR(CUDA, "copying the device state to a device library on GPU %d failed: %s (cudaError_t %d)",
                      device, PUBLISH_ERROR_TEXT(err), err);
    return err ? GSHMEMX_ERR_CUDA : 0;
}

/* PEs whose heap is on this PE's GPU, itself included (1 before init): the device
 * library's collective launch sizes grids with it. */
int gshmemi_device_gpu_sharers(void)
{
    pthread_mutex_lock(&publish.lock);
    int n = 0;
    if (publish.current)
        for (int i = 0; i < GSHMEMI_DEVICE_MAX_PES / 32; i++) n += __builtin_popcount(publish.current->same_gpu[i]);
    pthread_mutex_unlock(&publish.lock);
    return n > 0 ? n : 1;
}

void gshmemi_device_register(gshmemi_device_sync_fn fn)
{
    pthread_mutex_lock(&publish.lock);
    int known = 0;
    for (int i = 0; i < publish.count; i++) known |= publish.fns[i] == fn;
    if (!known && publish.count < PUBLISH_MAX_IMAGES) {
        publish.fns[publish.count++] = fn;
        if (publish.current) publish_one(fn, publish.device, publish.current);
    }
    pthread_mutex_unlock(&publish.lock);
}

/* Marks the PEs whose heap lives on our GPU (same UUID, same node). */
static int publish_same_gpu(struct gshmemi_state *st, struct gshmemi_device_state *ds)
{
    unsigned char(*uuids)[16] = calloc((size_t)st->n_pes, 16);
    if (!uuids) return GSHMEMX_ERR_NOMEM;
    int rc = st->boot.ops->allgather(&st->boot, st->heap.uuid, uuids, 16);
    for (int pe = 0; rc == 0 && pe < st->n_pes; pe++)
        if (st->boot.node_of_rank[pe] == st->boot.node_of_rank[st->my_pe] && memcmp(uuids[pe], st->heap.uuid, 16) == 0)
            ds->same_gpu[pe / 32] |= 1u << (pe % 32);
    free(uuids);
    return rc;
}

static void fill_teams(const struct gshmemi_state *st, struct gshmemi_device_state *ds)
{
    for (int i = 0; i < GSHMEMI_TEAMS_LIMIT; i++) {
        const struct gshmemi_team *t = &st->teams[i];
        struct gshmemi_device_team d = {0, 0, 0, -1};
        if (t->in_use) d = (struct gshmemi_device_team){t->start, t->stride, t->size, t->my_index};
        ds->teams[i] = d;
    }
}

int gshmemi_device_state_teams(struct gshmemi_state *st)
{
    if (!st->dstate) return 0;
    fill_teams(st, st->dstate);
    int rc = 0;
    pthread_mutex_lock(&publish.lock);
    for (int i = 0; i < publish.count && rc == 0; i++) rc = publish_one(publish.fns[i], st->device, st->dstate);
    pthread_mutex_unlock(&publish.lock);
    return rc;
}

int gshmemi_device_state_publish(struct gshmemi_state *st)
{
    if (st->heap.kind != GSHMEMI_HEAP_KIND_DEVICE) return 0;
    if (st->n_pes > GSHMEMI_DEVICE_MAX_PES) {
        GSHMEMI_ERROR(CUDA, "the device API supports up to %d PEs in this version; the job has %d",
                      GSHMEMI_DEVICE_MAX_PES, st->n_pes);
        return GSHMEMX_ERR_NOT_SUPPORTED;
    }
    struct gshmemi_device_state *ds = calloc(1, sizeof(*ds));
    if (!ds) return GSHMEMX_ERR_NOMEM;
    ds->initialized = 1;
    ds->my_pe = st->my_pe;
    ds->n_pes = st->n_pes;
    ds->heap_base = (uint64_t)(uintptr_t)st->heap.base;
    ds->heap_size = st->heap.size;
    for (int pe = 0; pe < st->n_pes; pe++) {
        struct gshmemi_transport *tp = st->transport_of_pe[pe];
        ds->peer_base[pe] = (uint64_t)(uintptr_t)tp->ops->ptr(tp, pe, 0);
    }
    ds->proxy = gshmemi_proxy_device_ring(st->proxy);
    st->dstate = ds;
    int rc = publish_same_gpu(st, ds);
    fill_teams(st, ds);
    pthread_mutex_lock(&publish.lock);
    publish.current = ds;
    publish.device = st->device;
    for (int i = 0; i < publish.count && rc == 0; i++) rc = publish_one(publish.fns[i], st->device, ds);
    pthread_mutex_unlock(&publish.lock);
    GSHMEMI_INFO(CUDA, "device state published to %d device librar%s", publish.count, publish.count == 1 ? "y" : "ies");
    return rc;
}

void gshmemi_device_state_fini(struct gshmemi_state *st)
{
    if (!st->dstate) return;
    pthread_mutex_lock(&publish.lock);
    struct gshmemi_device_state gone = {0};
    for (int i = 0; i < publish.count; i++) publish.fns[i](publish.device, &gone, sizeof(gone));
    publish.current = NULL;
    pthread_mutex_unlock(&publish.lock);
    free(st->dstate);
    st->dstate = NULL;
}
