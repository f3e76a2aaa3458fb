/* The device state, built from the process state and handed to device libraries. */
#include "device/device_publish.h"

#include "core/state.h"
#include "core/log.h"
#include "core/api.h"
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
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
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

#ifdef GSHMEM_HAVE_CUDA
/* The report a device wait leaves when it runs out of GSHMEM_TIMEOUT (struct
 * gshmemi_wait_report): a page of the process's own memory, never freed, registered
 * with CUDA (mapped) while gshmem is initialized, so that it can still be read after
 * the kernel's trap has ended the CUDA context, and after a cudaDeviceReset.
 * registered: the page is registered now; printed: the report has been printed (once). */
static struct {
    volatile struct gshmemi_wait_report *rec;
    bool registered;
    int pe;
    double timeout;
    uint64_t heap_base;
    atomic_int printed;
} wait_report;

static void wait_report_atexit(void)
{
    gshmemi_device_wait_report_print();
}

/* The report's device address (0 when the page could not be had or registered: such a
 * wait then only traps, and init says so). */
static uint64_t wait_report_setup(const struct gshmemi_state *st)
{
    if (!wait_report.rec) {
        void *page = NULL;
        if (posix_memalign(&page, 4096, 4096) != 0) return 0;
        wait_report.rec = page;
        atexit(wait_report_atexit);
    }
    gshmemi_device_wait_report_print(); /* one left by an earlier init, not yet printed */
    memset((void *)wait_report.rec, 0, sizeof(struct gshmemi_wait_report));
    atomic_store(&wait_report.printed, 0);
    wait_report.pe = st->my_pe;
    wait_report.timeout = st->env.timeout;
    wait_report.heap_base = (uint64_t)(uintptr_t)st->heap.base;
    void *d = NULL;
    cudaError_t err = cudaHostRegister((void *)wait_report.rec, 4096, cudaHostRegisterMapped | cudaHostRegisterPortable);
    wait_report.registered = err == cudaSuccess;
    if (err == cudaSuccess) err = cudaHostGetDevicePointer(&d, (void *)wait_report.rec, 0);
    if (err != cudaSuccess) {
        GSHMEMI_WARN(CUDA, "PE %d: no mapped page for the report of a device wait that runs out of GSHMEM_TIMEOUT "
                           "(%s): such a wait ends its kernel without saying why",
                     st->my_pe, cudaGetErrorString(err));
        (void)cudaGetLastError(); /* not the application's error */
        return 0;
    }
    return (uint64_t)(uintptr_t)d;
}

static void wait_report_fini(void)
{
    if (!wait_report.registered) return;
    if (cudaHostUnregister((void *)wait_report.rec) != cudaSuccess) (void)cudaGetLastError();
    wait_report.registered = false;
}

static const char *cmp_name(int cmp)
{
    static const char *const names[] = {"==", "!=", ">", ">=", "<", "<="};
    return cmp >= GSHMEM_CMP_EQ && cmp <= GSHMEM_CMP_LE ? names[cmp - GSHMEM_CMP_EQ] : "?";
}

void gshmemi_device_wait_report_print(void)
{
    volatile struct gshmemi_wait_report *r = wait_report.rec;
    if (!r || r->state == 0 || atomic_exchange(&wait_report.printed, 1)) return;
    if (r->state != 2) { /* claimed, but the kernel ended (another thread's trap) before it was written */
        fprintf(stderr, "gshmem: PE %d: a device wait ran out of GSHMEM_TIMEOUT (%.3f s) and ended its kernel (a "
                        "trap); its report was not complete\n",
                wait_report.pe, wait_report.timeout);
        fflush(stderr);
        return;
    }
    atomic_thread_fence(memory_order_acquire); /* the fields were written before state */
    int pe = wait_report.pe;
    double secs = wait_report.timeout;
    unsigned long long off = (unsigned long long)(r->addr - wait_report.heap_base);
    void *addr = (void *)(uintptr_t)r->addr;
    char value[32], target[32];
    if (r->is_signed) {
        snprintf(value, sizeof(value), "%lld", (long long)r->value);
        snprintf(target, sizeof(target), "%lld", (long long)r->target);
    } else {
        snprintf(value, sizeof(value), "%llu", (unsigned long long)r->value);
        snprintf(target, sizeof(target), "%llu", (unsigned long long)r->target);
    }
    if (r->kind == GSHMEMI_WAIT_BARRIER) {
        char what[64];
        if (r->team < 0)
            snprintf(what, sizeof(what), "barrier %llu of all PEs", (unsigned long long)r->epoch);
        else
            snprintf(what, sizeof(what), "team %d barrier %llu", r->team, (unsigned long long)r->epoch);
        fprintf(stderr, "gshmem: PE %d: device %s timed out after %.3f s (GSHMEM_TIMEOUT) in round %d of %d, waiting "
                        "for PE %d to arrive\n",
                pe, what, secs, r->round + 1, r->rounds, r->from_pe);
    } else if (r->kind == GSHMEMI_WAIT_IVARS && r->count > 0) {
        static const char *const modes[] = {"all", "any", "some"};
        fprintf(stderr, "gshmem: PE %d: device wait_until_%s%s timed out after %.3f s (GSHMEM_TIMEOUT): ivar %llu of "
                        "%llu at %p (heap offset %llu) holds %s, waited for %s %s\n",
                pe, modes[r->mode >= 0 && r->mode <= 2 ? r->mode : 0], r->vector ? "_vector" : "", secs,
                (unsigned long long)r->ivar, (unsigned long long)r->count, addr, off, value, cmp_name(r->cmp), target);
    } else {
        fprintf(stderr, "gshmem: PE %d: device %s timed out after %.3f s (GSHMEM_TIMEOUT): the word at %p (heap offset "
                        "%llu) holds %s, waited for %s %s\n",
                pe, r->kind == GSHMEMI_WAIT_SIGNAL ? "signal_wait_until" : "wait_until", secs, addr, off, value,
                cmp_name(r->cmp), target);
    }
    fprintf(stderr, "gshmem: PE %d: the waiting thread ended its kernel (a trap): the CUDA context is lost, and the "
                    "next CUDA call reports an error\n",
            pe);
    fflush(stderr);
}
#else
void gshmemi_device_wait_report_print(void) {}
#endif

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
#ifdef GSHMEM_HAVE_CUDA /* without CUDA there is no device heap, and this is not reached */
    ds->wait_timeout_ns = gshmemi_device_timeout_ns(st);
    ds->wait_report = wait_report_setup(st);
#endif
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
#ifdef GSHMEM_HAVE_CUDA
    wait_report_fini();
#endif
    pthread_mutex_lock(&publish.lock);
    struct gshmemi_device_state gone = {0};
    for (int i = 0; i < publish.count; i++) publish.fns[i](publish.device, &gone, sizeof(gone));
    publish.current = NULL;
    pthread_mutex_unlock(&publish.lock);
    free(st->dstate);
    st->dstate = NULL;
}
