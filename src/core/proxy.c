/* The proxy thread: drains the request ring in order and calls the peers' transports. */
#include "core/proxy.h"

#include "core/cpulist.h"
#include "core/log.h"
#include "core/relax.h"
#include "core/state.h"
#include "transport/transport.h"

#include <gshmem/status.h>
#include <gshmem/types.h>

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef GSHMEM_HAVE_CUDA
#include "device/cuda_driver.h"
#include "device/host_kernels.h"

#include <cuda_runtime_api.h>
#endif

/* The ring has GSHMEM_PROXY_RING_SLOTS slots of 64 bytes: a power of two (tickets map to
 * slots by a mask), and more than the longest request, 1 + GSHMEMI_PROXY_MAX_SPAN slots
 * (a producer waits for all of its slots, which the proxy frees in ticket order). The
 * default, 4096 slots (256 KiB), lets every thread of a few blocks have a request in
 * flight while the proxy works through a batch. */
_Static_assert(128 > 1 + GSHMEMI_PROXY_MAX_SPAN, "GSHMEM_PROXY_RING_SLOTS' least value holds the longest request");
/* After the last request the thread polls for PROXY_SPIN_NS (a kernel's requests come
 * in bursts), then sleeps, doubling the sleep from PROXY_SLEEP_MIN_NS up to
 * PROXY_SLEEP_MAX_NS while nothing arrives: an idle PE then costs a few percent of a
 * core (one short wake-up per PROXY_SLEEP_MAX_NS), and the first request after a long
 * quiet spell waits for at most that much more (put_quiet_idle in
 * gshmem-perf-gpu-latency measures it). */
#define PROXY_SPIN_NS 1000000u
#define PROXY_SLEEP_MIN_NS 1000u
#define PROXY_SLEEP_MAX_NS 128000u
/* An in-place exchange moves through host memory this much at a time. */
#define PROXY_XCHG_BYTES (1u << 20)

struct gshmemi_proxy {
    struct gshmemi_state *st;
    struct gshmemi_proxy_ring ring;  /* host addresses */
    struct gshmemi_proxy_ring dring; /* the same ring, device addresses */
    struct gshmemi_proxy_consumer cons;
    void *host_mem;                  /* slots, completions, tail (pinned, mapped) */
    void *dev_mem;                   /* counters */
    int host_mode;                   /* tests: everything in ordinary memory, CPU producers, no CUDA */
    struct gshmemi_transport *quiet_list[GSHMEMI_MAX_TRANSPORTS]; /* transports of PROXY peers */
    int quiet_count;
    unsigned char bounce[GSHMEMI_PROXY_MAX_SPAN * GSHMEMI_PROXY_DATA_BYTES]; /* DATA requests' bytes */
    unsigned char *xbuf;                                                   /* EXCHANGE staging, PROXY_XCHG_BYTES */
    void *stream; /* cudaStream_t, non-blocking: the legacy stream would wait for the kernels we serve */
    pthread_t thread;
    int started;
    int stop;        /* atomic */
    uint64_t served; /* atomic */
    uint64_t amo_inflight; /* atomic: fetching atomics whose answer proxy_amo_done has yet to store */
    int keep;              /* one stayed in flight at the end: its late answer would write into px */
};

#define PROXY_SAME_AMO(NAME) ((int)GSHMEMI_PROXY_AMO_##NAME == (int)GSHMEMI_AMO_##NAME)
_Static_assert(PROXY_SAME_AMO(FETCH) && PROXY_SAME_AMO(SET) && PROXY_SAME_AMO(SWAP) && PROXY_SAME_AMO(COMPARE_SWAP) &&
                   PROXY_SAME_AMO(ADD) && PROXY_SAME_AMO(AND) && PROXY_SAME_AMO(OR) && PROXY_SAME_AMO(XOR),
               "request AMO codes are the transports' codes");
#undef PROXY_SAME_AMO
_Static_assert(sizeof(struct gshmemi_proxy_req) == GSHMEMI_PROXY_SLOT_BYTES, "one request per 64-byte slot");

static const char *proxy_op_name(unsigned op)
{
    static const char *const names[GSHMEMI_PROXY_OP_COUNT] = {
        "nop", "put", "get", "p", "g", "iput", "iget", "atomic", "put_signal", "signal", "quiet", "exchange", "data", "fence"};
    return op < GSHMEMI_PROXY_OP_COUNT ? names[op] : "unknown request";
}

/* A request the proxy could not carry out ends the job. */
static _Noreturn void proxy_failed(struct gshmemi_proxy *px, const struct gshmemi_proxy_req *r, int rc)
{
    GSHMEMI_ERROR(TRANSPORT,
                  "proxy: device %s from PE %d to PE %d (heap offset %llu, %llu bytes, request %llu) failed: %s",
                  proxy_op_name(r->op), px->st->my_pe, r->pe, (unsigned long long)r->offset,
                  (unsigned long long)r->len, (unsigned long long)px->cons.head, gshmemx_strerror(rc));
    gshmemi_fatal(px->st, rc ? rc : GSHMEMX_ERR_INTERNAL);
}

static int proxy_quiet_all(struct gshmemi_proxy *px)
{
    int rc = 0;
    for (int i = 0; i < px->quiet_count && rc == 0; i++) rc = px->quiet_list[i]->ops->quiet(px->quiet_list[i]);
    return rc;
}

/* FENCE: every transport orders what it was given before what comes next. */
static int proxy_fence_all(struct gshmemi_proxy *px)
{
    int rc = 0;
    for (int i = 0; i < px->quiet_count && rc == 0; i++) rc = px->quiet_list[i]->ops->fence(px->quiet_list[i], -1);
    return rc;
}

/* After a pass: what the transports held back for a request that might follow (a put
 * waiting for its quiet) goes now. */
static void proxy_flush_all(struct gshmemi_proxy *px)
{
    for (int i = 0; i < px->quiet_count; i++) px->quiet_list[i]->ops->flush(px->quiet_list[i]);
}

static int proxy_copy(struct gshmemi_proxy *px, void *dst, const void *src, size_t len)
{
#ifdef GSHMEM_HAVE_CUDA
    if (!px->host_mode) {
        cudaError_t err = cudaMemcpyAsync(dst, src, len, cudaMemcpyDefault, (cudaStream_t)px->stream);
        if (err == cudaSuccess) err = cudaStreamSynchronize((cudaStream_t)px->stream);
        if (err == cudaSuccess) return 0;
        GSHMEMI_ERROR(CUDA, "proxy: copy of %zu bytes failed: %s", len, cudaGetErrorString(err));
        return GSHMEMX_ERR_CUDA;
    }
#else
    (void)px;
#endif
    memcpy(dst, src, len);
    return 0;
}

/* EXCHANGE: local[0, len) and the peer's [offset, offset + len) trade contents, a
 * chunk at a time through host memory: get theirs, put ours, store theirs. Nobody
 * else touches either range meanwhile (the in-place alltoall's barriers see to it). */
static int proxy_exchange(struct gshmemi_proxy *px, struct gshmemi_transport *tp, const struct gshmemi_proxy_req *r)
{
    if (!px->xbuf && !(px->xbuf = malloc(PROXY_XCHG_BYTES))) return GSHMEMX_ERR_NOMEM;
    char *local = (char *)(uintptr_t)r->local;
    int rc = 0;
    for (uint64_t done = 0; rc == 0 && done < r->len; done += PROXY_XCHG_BYTES) {
        size_t n = r->len - done < PROXY_XCHG_BYTES ? (size_t)(r->len - done) : PROXY_XCHG_BYTES;
        rc = tp->ops->get(tp, r->pe, px->xbuf, r->offset + done, n);
        if (rc == 0) rc = tp->ops->put(tp, r->pe, r->offset + done, local + done, n);
        if (rc == 0) rc = proxy_copy(px, local + done, px->xbuf, n);
    }
    return rc;
}

/* Bytes a DATA request's slots carry: len for PUT/GET/PUT_SIGNAL, elements for IPUT/IGET. */
static uint64_t proxy_data_bytes(const struct gshmemi_proxy_req *r)
{
    return (r->op == GSHMEMI_PROXY_IPUT || r->op == GSHMEMI_PROXY_IGET) ? r->len * r->width : r->len;
}

/* proxy_serve's answer for a request that completes later (amo_async). */
#define PROXY_LATER (-1) /* not a status: statuses are >= 0 */

/* A fetching atomic's answer, on the transport's thread: the result, then the
 * completion the waiting GPU thread polls. */
static void proxy_amo_done(void *arg, uint64_t ticket, uint64_t value)
{
    struct gshmemi_proxy *px = arg;
    struct gshmemi_proxy_completion *comp = &px->ring.completions[ticket & (px->ring.nslots - 1)];
    __atomic_store_n(&comp->result, value, __ATOMIC_RELAXED);
    gshmemi_ring_store_release(&comp->seq, ticket + 1);
    __atomic_fetch_sub(&px->amo_inflight, 1, __ATOMIC_RELEASE); /* px's last use here */
}

/* Carries out one request; *result gets what a fetching request returns. PROXY_LATER:
 * a fetching atomic is on its way and completes from the transport's thread (the proxy
 * goes on meanwhile: many GPU threads' atomics are then in flight at once). */
static int proxy_serve(struct gshmemi_proxy *px, const struct gshmemi_proxy_req *r, uint64_t *result)
{
    struct gshmemi_state *st = px->st;
    if (r->op == GSHMEMI_PROXY_QUIET) return proxy_quiet_all(px);
    if (r->op == GSHMEMI_PROXY_FENCE) return proxy_fence_all(px);
    if (r->op == GSHMEMI_PROXY_NOP) return 0;
    if (r->pe < 0 || r->pe >= st->n_pes) return GSHMEMX_ERR_INVALID_ARG;
    struct gshmemi_transport *tp = st->transport_of_pe[r->pe];
    void *local = (void *)(uintptr_t)r->local;
    ptrdiff_t iput_src_stride = (ptrdiff_t)r->extra, iget_dst_stride = (ptrdiff_t)r->operand;
    uint64_t word = r->operand;
    int64_t span = gshmemi_proxy_req_span(r);
    int incoming = r->op == GSHMEMI_PROXY_GET || r->op == GSHMEMI_PROXY_IGET;
    if (span < 0) return GSHMEMX_ERR_INVALID_ARG;
    if (span > 0) { /* the bytes travel in the ring: the local side is the bounce buffer, packed */
        int outgoing = r->op == GSHMEMI_PROXY_PUT || r->op == GSHMEMI_PROXY_PUT_SIGNAL || r->op == GSHMEMI_PROXY_IPUT;
        uint64_t bytes = proxy_data_bytes(r);
        if (!(incoming || outgoing) || bytes > (uint64_t)span * GSHMEMI_PROXY_DATA_BYTES) return GSHMEMX_ERR_INVALID_ARG;
        local = px->bounce;
        iput_src_stride = iget_dst_stride = r->width;
        if (outgoing) gshmemi_proxy_ring_copy_data(&px->ring, px->cons.head, local, bytes, 0);
    }
    int rc;
    switch (r->op) {
    case GSHMEMI_PROXY_PUT: /* the bounce buffer is reused at once: blocking */
        rc = (r->flags & GSHMEMI_PROXY_F_NBI) && span == 0 ? tp->ops->put_nbi(tp, r->pe, r->offset, local, r->len)
                                                           : tp->ops->put(tp, r->pe, r->offset, local, r->len);
        break;
    case GSHMEMI_PROXY_GET: rc = tp->ops->get(tp, r->pe, local, r->offset, r->len); break;
    case GSHMEMI_PROXY_PUT_INLINE:
        if (r->len > sizeof(word)) return GSHMEMX_ERR_INVALID_ARG;
        return tp->ops->put(tp, r->pe, r->offset, &word, r->len); /* little-endian: the low bytes */
    case GSHMEMI_PROXY_GET_INLINE:
        if (r->len > sizeof(word)) return GSHMEMX_ERR_INVALID_ARG;
        word = 0;
        rc = tp->ops->get(tp, r->pe, &word, r->offset, r->len);
        *result = word;
        return rc;
    case GSHMEMI_PROXY_IPUT:
        rc = tp->ops->iput(tp, r->pe, r->offset, (ptrdiff_t)r->operand, local, iput_src_stride, r->width, r->len);
        break;
    case GSHMEMI_PROXY_IGET:
        rc = tp->ops->iget(tp, r->pe, local, iget_dst_stride, r->offset, (ptrdiff_t)r->extra, r->width, r->len);
        break;
    case GSHMEMI_PROXY_AMO: {
        struct gshmemi_amo amo = {r->sub, r->width, r->offset, r->operand, r->extra};
        if ((r->flags & GSHMEMI_PROXY_F_FETCH) && (r->flags & GSHMEMI_PROXY_F_RESULT)) {
            __atomic_fetch_add(&px->amo_inflight, 1, __ATOMIC_RELAXED);
            rc = tp->ops->amo_async(tp, r->pe, &amo, proxy_amo_done, px, px->cons.head);
            if (rc) __atomic_fetch_sub(&px->amo_inflight, 1, __ATOMIC_RELAXED);
            return rc ? rc : PROXY_LATER;
        }
        return tp->ops->amo(tp, r->pe, &amo, (r->flags & GSHMEMI_PROXY_F_FETCH) ? result : NULL);
    }
    case GSHMEMI_PROXY_PUT_SIGNAL:
        rc = tp->ops->put_signal(tp, r->pe, r->offset, local, r->len, r->extra, r->operand, r->sub);
        break;
    case GSHMEMI_PROXY_SIGNAL: {
        struct gshmemi_amo amo = {r->sub == GSHMEM_SIGNAL_ADD ? GSHMEMI_AMO_ADD : GSHMEMI_AMO_SET, 8, r->offset,
                                  r->operand, 0};
        return tp->ops->amo(tp, r->pe, &amo, NULL);
    }
    case GSHMEMI_PROXY_EXCHANGE: return proxy_exchange(px, tp, r);
    default: return GSHMEMX_ERR_INVALID_ARG;
    }
    if (rc == 0 && span > 0 && incoming)
        gshmemi_proxy_ring_copy_data(&px->ring, px->cons.head, local, proxy_data_bytes(r), 1);
    return rc;
}

/* Serves every request visible now, in order; returns how many tickets they held. */
static unsigned proxy_drain(struct gshmemi_proxy *px)
{
    struct gshmemi_proxy_req r;
    unsigned n = 0;
    while (gshmemi_proxy_ring_peek(&px->ring, &px->cons, &r)) {
        uint64_t result = 0;
        GSHMEMI_TRACE(TRANSPORT, "proxy: request %llu: %s to PE %d, %llu bytes", (unsigned long long)px->cons.head,
                      proxy_op_name(r.op), r.pe, (unsigned long long)r.len);
        int rc = proxy_serve(px, &r, &result);
        uint64_t span = (uint64_t)gshmemi_proxy_req_span(&r);
        if (rc == PROXY_LATER) {
            px->cons.head++; /* completed by proxy_amo_done; a RESULT request: its slot waits for the ack */
        } else {
            if (rc != 0) proxy_failed(px, &r, rc);
            gshmemi_proxy_ring_complete_span(&px->ring, &px->cons, result, span);
        }
        /* Free slots as we go: producers waiting for room need not wait for the batch. */
        gshmemi_proxy_ring_release(&px->ring, &px->cons);
        n += 1 + (unsigned)span;
        /* Tickets, as the host's quiet counts them; release: its transport quiet then
         * sees what this request left dirty. */
        __atomic_fetch_add(&px->served, 1 + span, __ATOMIC_RELEASE);
    }
    return n;
}

static uint64_t proxy_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void proxy_sleep(uint64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    nanosleep(&ts, NULL);
}

/* Busy while requests come, polling for PROXY_SPIN_NS after the last one, then sleeping
 * with a growing interval so an idle PE costs no core. */
static void *proxy_main(void *arg)
{
    struct gshmemi_proxy *px = arg;
#ifdef GSHMEM_HAVE_CUDA
    if (!px->host_mode) {
        cudaSetDevice(px->st->device); /* the transports copy to and from this GPU's memory */
        /* Our copies and syncs must go on while the application captures a graph. */
        int err = gshmemi_helper_thread_relax_capture();
        if (err != 0)
            GSHMEMI_WARN(TRANSPORT, "proxy: PE %d: cannot relax the thread's stream capture mode (cudaError_t %d): "
                                    "a graph captured in cudaStreamCaptureModeGlobal may fail meanwhile",
                         px->st->my_pe, err);
    }
#endif
    uint64_t last = proxy_now_ns(), sleep_ns = 0;
    while (!__atomic_load_n(&px->stop, __ATOMIC_ACQUIRE)) {
        unsigned served = proxy_drain(px);
        if (served) proxy_flush_all(px);
        if (served || gshmemi_proxy_ring_release(&px->ring, &px->cons)) {
            last = proxy_now_ns();
            sleep_ns = 0;
            continue;
        }
        if (proxy_now_ns() - last < PROXY_SPIN_NS) {
            gshmemi_cpu_relax();
            continue;
        }
        if (sleep_ns == 0)
            GSHMEMI_TRACE(TRANSPORT, "proxy: idle at request %llu (its slot's valid word: %llu)",
                          (unsigned long long)px->cons.head,
                          (unsigned long long)__atomic_load_n(
                              &px->ring.slots[px->cons.head & (px->ring.nslots - 1)].valid, __ATOMIC_ACQUIRE));
        sleep_ns = sleep_ns ? sleep_ns * 2 : PROXY_SLEEP_MIN_NS;
        if (sleep_ns > PROXY_SLEEP_MAX_NS) sleep_ns = PROXY_SLEEP_MAX_NS;
        proxy_sleep(sleep_ns);
    }
    /* Requests posted after finalize's quiet (a kernel still running) still go out,
     * and fetching atomics served since then get their answers before px is freed
     * (proxy_amo_done writes into it from the transport's thread). Nothing else to
     * complete: finalize's quiet did that before its barrier, after which the peers
     * may be gone. */
    int rc = 0;
    if (proxy_drain(px) || __atomic_load_n(&px->amo_inflight, __ATOMIC_ACQUIRE) > 0) {
        rc = proxy_quiet_all(px);
        if (rc != 0) GSHMEMI_ERROR(TRANSPORT, "proxy: the final quiet failed: %s", gshmemx_strerror(rc));
    }
    /* After a failed quiet the answers will not come: no wait, the memory is kept. */
    uint64_t start = proxy_now_ns(), limit = (uint64_t)(px->st->env.timeout * 1e9);
    while (rc == 0 && __atomic_load_n(&px->amo_inflight, __ATOMIC_ACQUIRE) > 0 &&
           (!limit || proxy_now_ns() - start < limit))
        proxy_sleep(PROXY_SLEEP_MAX_NS);
    uint64_t left = __atomic_load_n(&px->amo_inflight, __ATOMIC_ACQUIRE);
    if (left > 0) {
        GSHMEMI_WARN(TRANSPORT, "proxy: PE %d: %llu fetching atomics still unanswered at finalize; keeping the proxy's "
                                "memory for their answers", px->st->my_pe, (unsigned long long)left);
        px->keep = 1;
    }
    return NULL;
}

/* Collects the transports of PEs the GPU cannot map; 0 when there is none. */
static int proxy_find_peers(struct gshmemi_state *st, struct gshmemi_proxy *px)
{
    int peers = 0;
    for (int pe = 0; pe < st->n_pes; pe++) {
        struct gshmemi_transport *tp = st->transport_of_pe[pe];
        if (tp->ops->ptr(tp, pe, 0) != NULL) continue;
        peers++;
        int known = 0;
        for (int i = 0; i < px->quiet_count; i++) known |= px->quiet_list[i] == tp;
        if (!known && px->quiet_count < GSHMEMI_MAX_TRANSPORTS) px->quiet_list[px->quiet_count++] = tp;
    }
    return peers;
}

static uint32_t proxy_slots(const struct gshmemi_state *st) { return (uint32_t)st->env.proxy_ring_slots; }

/* Slots, completions and the tail word, in that order, in one allocation. */
static size_t proxy_ring_bytes(uint32_t nslots)
{
    return nslots * (sizeof(struct gshmemi_proxy_req) + sizeof(struct gshmemi_proxy_completion)) + 64;
}

/* The ring laid out at mem (host or device addresses of the same bytes). */
static struct gshmemi_proxy_ring proxy_ring_at(char *mem, uint32_t nslots, struct gshmemi_proxy_counters *counters,
                                               uint64_t timeout_ns)
{
    char *comps = mem + nslots * sizeof(struct gshmemi_proxy_req);
    return (struct gshmemi_proxy_ring){(struct gshmemi_proxy_req *)mem, (struct gshmemi_proxy_completion *)comps,
                                       (uint64_t *)(comps + nslots * sizeof(struct gshmemi_proxy_completion)),
                                       counters, nslots, 0, timeout_ns};
}

/* Tests: the same layout in ordinary memory, counters included (CPU producers). */
static int proxy_alloc_host(struct gshmemi_state *st, struct gshmemi_proxy *px)
{
    const uint32_t nslots = proxy_slots(st);
    size_t bytes = proxy_ring_bytes(nslots) + sizeof(struct gshmemi_proxy_counters);
    px->host_mode = 1;
    px->host_mem = aligned_alloc(64, bytes);
    if (!px->host_mem) return GSHMEMX_ERR_NOMEM;
    memset(px->host_mem, 0, bytes);
    char *h = px->host_mem;
    px->ring = proxy_ring_at(h, nslots, (struct gshmemi_proxy_counters *)(h + proxy_ring_bytes(nslots)),
                             (uint64_t)(st->env.timeout * 1e9));
    px->dring = px->ring;
    return 0;
}

#ifdef GSHMEM_HAVE_CUDA
static int proxy_alloc(struct gshmemi_state *st, struct gshmemi_proxy *px)
{
    const uint32_t nslots = proxy_slots(st);
    size_t bytes = proxy_ring_bytes(nslots);
    void *dhost = NULL;
    cudaError_t err = cudaSetDevice(st->device);
    if (err == cudaSuccess) err = cudaHostAlloc(&px->host_mem, bytes, cudaHostAllocMapped | cudaHostAllocPortable);
    if (err == cudaSuccess) memset(px->host_mem, 0, bytes);
    if (err == cudaSuccess) err = cudaHostGetDevicePointer(&dhost, px->host_mem, 0);
    if (err == cudaSuccess) err = cudaMalloc(&px->dev_mem, sizeof(struct gshmemi_proxy_counters));
    if (err == cudaSuccess) err = cudaMemset(px->dev_mem, 0, sizeof(struct gshmemi_proxy_counters));
    if (err == cudaSuccess) err = (cudaError_t)gshmemi_helper_stream_create(&px->stream);
    if (err != cudaSuccess) {
        GSHMEMI_ERROR(CUDA, "proxy: allocating the request ring (%zu bytes pinned) failed: %s", bytes,
                      cudaGetErrorString(err));
        return GSHMEMX_ERR_CUDA;
    }
    px->ring = proxy_ring_at(px->host_mem, nslots, NULL, 0); /* the proxy's view: no counters, no timeout */
    px->dring = proxy_ring_at(dhost, nslots, px->dev_mem, (uint64_t)(st->env.timeout * 1e9));
    return 0;
}

static void proxy_free(struct gshmemi_proxy *px)
{
    if (px->host_mode) {
        free(px->host_mem);
        return;
    }
    if (px->stream) cudaStreamDestroy((cudaStream_t)px->stream);
    if (px->host_mem) cudaFreeHost(px->host_mem);
    if (px->dev_mem) cudaFree(px->dev_mem);
}
#else
static int proxy_alloc(struct gshmemi_state *st, struct gshmemi_proxy *px)
{
    (void)st, (void)px;
    return GSHMEMX_ERR_NOT_SUPPORTED;
}
static void proxy_free(struct gshmemi_proxy *px)
{
    free(px->host_mem); /* only host mode allocates without CUDA */
}
#endif

/* A sysfs local_cpulist (what hwloc reads too): 0 with *set filled, else -1 and why. */
static int proxy_read_cpulist(const char *path, cpu_set_t *set, char *why, size_t len)
{
    char text[4096];
    FILE *fp = fopen(path, "r");
    size_t n = fp ? fread(text, 1, sizeof(text) - 1, fp) : 0;
    if (fp) fclose(fp);
    text[n] = '\0';
    if (n == 0 || gshmemi_cpulist_parse(text, set) != 0) {
        snprintf(why, len, "%s is missing or unreadable", path);
        return -1;
    }
    return 0;
}

/* The CPUs near GPU device (its PCI function's local_cpulist): 0, else -1 and why. */
static int proxy_gpu_cpus(int device, cpu_set_t *set, char *why, size_t len)
{
#ifdef GSHMEM_HAVE_CUDA
    char bus[64], path[160];
    unsigned dom, b, d, f;
    if (cudaDeviceGetPCIBusId(bus, (int)sizeof(bus), device) != cudaSuccess ||
        sscanf(bus, "%x:%x:%x.%x", &dom, &b, &d, &f) != 4) {
        (void)cudaGetLastError();
        snprintf(why, len, "GPU %d's PCI address is unknown", device);
        return -1;
    }
    snprintf(path, sizeof(path), "/sys/bus/pci/devices/%04x:%02x:%02x.%x/local_cpulist", dom, b, d, f);
    return proxy_read_cpulist(path, set, why, len);
#else
    (void)device, (void)set;
    snprintf(why, len, "no CUDA");
    return -1;
#endif
}

/* Starts the thread bound to the process's CPUs near its GPU and the ibv NIC, when
 * there are some (gshmemi_cpus_near says which come first). */
static int proxy_start(struct gshmemi_proxy *px)
{
    pthread_attr_t attr;
    cpu_set_t allowed, gpu, nic, near;
    char gpu_why[256] = "host mode, no GPU", nic_why[320] = "no RDMA NIC in use", cpus[256], what[800];
    if (pthread_attr_init(&attr) != 0) return GSHMEMX_ERR_INTERNAL;
    int device = px->st->device;
    int have_gpu = !px->host_mode && proxy_gpu_cpus(device, &gpu, gpu_why, sizeof(gpu_why)) == 0;
    const char *nic_name = gshmemi_transport_ibv_device();
    int have_nic = 0;
    if (nic_name) {
        char path[160];
        snprintf(path, sizeof(path), "/sys/class/infiniband/%s/device/local_cpulist", nic_name);
        have_nic = proxy_read_cpulist(path, &nic, nic_why, sizeof(nic_why)) == 0;
    }
    enum gshmemi_cpus_near where = GSHMEMI_CPUS_NEAR_NONE;
    if (sched_getaffinity(0, sizeof(allowed), &allowed) == 0)
        where = gshmemi_cpus_near(&allowed, have_gpu ? &gpu : NULL, have_nic ? &nic : NULL, &near);
    switch (where) {
    case GSHMEMI_CPUS_NEAR_BOTH: snprintf(what, sizeof(what), "near GPU %d and NIC %s", device, nic_name); break;
    case GSHMEMI_CPUS_NEAR_NIC:
        snprintf(what, sizeof(what), "near NIC %s; %s", nic_name,
                 have_gpu ? "none of them is also near the GPU" : gpu_why);
        break;
    case GSHMEMI_CPUS_NEAR_GPU:
        snprintf(what, sizeof(what), "near GPU %d; %s", device,
                 have_nic ? "none of them is also near the NIC" : nic_why);
        break;
    default:
        snprintf(what, sizeof(what), "none of its CPUs is known to be near the GPU (%s) or a NIC (%s)", gpu_why,
                 nic_why);
    }
    int bound = where != GSHMEMI_CPUS_NEAR_NONE && pthread_attr_setaffinity_np(&attr, sizeof(near), &near) == 0;
    int rc = pthread_create(&px->thread, &attr, proxy_main, px) != 0 ? GSHMEMX_ERR_INTERNAL : 0;
    pthread_attr_destroy(&attr);
    if (rc != 0) {
        GSHMEMI_ERROR(INIT, "proxy: cannot start the proxy thread");
        return rc;
    }
    if (bound) {
        gshmemi_cpulist_format(&near, cpus, sizeof(cpus));
        GSHMEMI_INFO(TRANSPORT, "proxy thread bound to CPUs %s (this process's CPUs %s)", cpus, what);
    } else {
        GSHMEMI_INFO(TRANSPORT, "proxy thread keeps the process's CPU binding: %s", what);
    }
    return 0;
}

static int proxy_create(struct gshmemi_state *st, int host_mode)
{
    struct gshmemi_proxy *px = calloc(1, sizeof(*px));
    if (!px) return GSHMEMX_ERR_NOMEM;
    px->st = st;
    int peers = proxy_find_peers(st, px);
    if (peers == 0) {
        free(px);
        return 0;
    }
    int rc = host_mode ? proxy_alloc_host(st, px) : proxy_alloc(st, px);
    if (rc == 0) rc = proxy_start(px);
    if (rc != 0) {
        proxy_free(px);
        free(px);
        return rc;
    }
    px->started = 1;
    st->proxy = px;
    GSHMEMI_INFO(TRANSPORT, "proxy thread started: %d PE%s reached through it, %u ring slots%s", peers,
                 peers == 1 ? "" : "s", px->ring.nslots, host_mode ? " (host mode, CPU producers)" : "");
    return 0;
}

int gshmemi_proxy_init(struct gshmemi_state *st)
{
    st->proxy = NULL;
    if (st->heap.kind != GSHMEMI_HEAP_KIND_DEVICE) return 0;
    int rc = proxy_create(st, 0);
#ifdef GSHMEM_HAVE_CUDA
    /* init.c (init_module_loading) asks for eager loading where it still can. */
    const char *loading = getenv("CUDA_MODULE_LOADING");
    if (rc == 0 && st->proxy && gshmemi_cuda_lazy_loading())
        GSHMEMI_WARN(TRANSPORT, "PE %d: CUDA loads kernels lazily in this process (CUDA_MODULE_LOADING=%s) and some "
                                "peers are reached through the proxy: a kernel launched for the first time while "
                                "a proxied call is in flight can hang every PE. Set CUDA_MODULE_LOADING=EAGER, or "
                                "call gshmem_init before the process's first CUDA call",
                     st->my_pe, loading ? loading : "unset, LAZY by default");
#endif
    return rc;
}

int gshmemi_proxy_init_host(struct gshmemi_state *st)
{
    if (st->proxy) return GSHMEMX_ERR_INVALID_ARG;
    return proxy_create(st, 1);
}

void gshmemi_proxy_fini(struct gshmemi_state *st)
{
    struct gshmemi_proxy *px = st->proxy;
    if (!px) return;
    if (px->started) {
        __atomic_store_n(&px->stop, 1, __ATOMIC_RELEASE);
        pthread_join(px->thread, NULL);
    }
    GSHMEMI_INFO(TRANSPORT, "proxy served %llu requests", (unsigned long long)gshmemi_proxy_served(px));
    st->proxy = NULL;
    if (px->keep) return; /* an answer may still arrive: leaked, not freed */
    proxy_free(px);
    free(px->xbuf);
    free(px);
}

/* How many tickets device code (or, in host mode, CPU producers) has taken so far. */
static int proxy_posted(struct gshmemi_proxy *px, uint64_t *posted)
{
    if (px->host_mode) {
        *posted = __atomic_load_n(&px->ring.counters->next, __ATOMIC_ACQUIRE);
        return 0;
    }
#ifdef GSHMEM_HAVE_CUDA
    cudaError_t err = cudaSetDevice(px->st->device);
    /* On the proxy's non-blocking stream: the legacy stream would wait for running kernels. */
    if (err == cudaSuccess)
        err = cudaMemcpyAsync(posted, &px->dring.counters->next, sizeof(*posted), cudaMemcpyDeviceToHost,
                              (cudaStream_t)px->stream);
    if (err == cudaSuccess) err = cudaStreamSynchronize((cudaStream_t)px->stream);
    if (err == cudaSuccess) return 0;
    GSHMEMI_ERROR(CUDA, "proxy: reading the request count failed: %s", cudaGetErrorString(err));
#endif
    return GSHMEMX_ERR_CUDA;
}

int gshmemi_proxy_quiet(struct gshmemi_proxy *px)
{
    if (!px) return 0;
    uint64_t posted = 0;
    int rc = proxy_posted(px, &posted);
    if (rc != 0) return rc;
    uint64_t start = proxy_now_ns(), limit = (uint64_t)(px->st->env.timeout * 1e9);
    while (__atomic_load_n(&px->served, __ATOMIC_ACQUIRE) < posted) {
        if (limit && proxy_now_ns() - start > limit) {
            GSHMEMI_ERROR(TRANSPORT, "proxy: %llu of %llu device requests served after %.0f s (GSHMEM_TIMEOUT)",
                          (unsigned long long)gshmemi_proxy_served(px), (unsigned long long)posted,
                          px->st->env.timeout);
            return GSHMEMX_ERR_TIMEOUT;
        }
        proxy_sleep(PROXY_SLEEP_MIN_NS);
    }
    return 0;
}

struct gshmemi_proxy_ring gshmemi_proxy_device_ring(const struct gshmemi_proxy *px)
{
    struct gshmemi_proxy_ring none = {0};
    return px ? px->dring : none;
}

uint64_t gshmemi_proxy_served(const struct gshmemi_proxy *px)
{
    return px ? __atomic_load_n(&px->served, __ATOMIC_RELAXED) : 0;
}
