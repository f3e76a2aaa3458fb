/*
 * The proxy end to end without a GPU: a proxy whose ring lives in ordinary memory
 * (gshmemi_proxy_init_host), CPU threads posting to it exactly as device threads do
 * (proxy_ring.h's producer functions, data slots packed the way device_proxy.cuh packs
 * them), and the real proxy thread serving the requests through the real transports
 * (run with GSHMEM_DISABLE_P2P=1: tcp to every other PE). Checked on data:
 *  1. a storm: THREADS threads per PE, ROUNDS rounds each, to every other PE:
 *     puts in data slots (lengths from 1 byte to several requests' worth), puts from
 *     an address, put_signal with the data in slots (signal ADD), iput from slots,
 *     g of a published word, gets into data slots (several requests' worth), and
 *     fetch-adds on one counter of PE 0; every request of a thread followed by its
 *     QUIET at the end;
 *  2. every written byte against its pattern and every other byte of the regions still
 *     poison; signal counts; the counter's total and the fetched values distinct;
 *  3. EXCHANGE between neighbours (the in-place alltoall's request);
 *  4. the host's quiet counts data slots: a put in slots, then gshmem_barrier_all
 *     straight away (no QUIET request), and the data must be there;
 *  5. FENCE (the device gshmem_fence with proxied peers) reaches the transports' fence;
 *  6. the proxy stopped while fetching atomics it sent await their answers.
 * Internal API (links the static library). usage: proxy_host
 */
#include "core/proxy.h"
#include "core/state.h"

#include <gshmem.h>
#include <gshmem/impl/proxy_ring.h>

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define THREADS 4
#define ROUNDS 12
#define BLOCK 8192           /* bytes of region per (sender, thread) on every PE */
#define SLOT_PUT_MAX 7000    /* data-slot puts: up to three requests */
#define ADDR_PUT_OFF 7168    /* puts from an address land at [7168, 7168 + 512) */
#define ADDR_PUT_LEN 512
#define IPUT_ELEMS 40        /* iput: 40 ints at stride 3 into its own array */
#define GET_LEN 5000         /* gets in data slots: two requests */
#define XCH 3000             /* bytes per exchange block */
#define POISON 0xEE

static int me, npes;
static unsigned char *region;  /* symmetric: npes * THREADS blocks of BLOCK */
static unsigned char *pub;     /* symmetric: GET_LEN bytes of pattern(owner) */
static uint64_t *word;         /* symmetric: published word, pattern of its owner */
static uint64_t *sigs;         /* symmetric: npes * THREADS signal words */
static int *iblk;              /* symmetric: npes * THREADS * IPUT_ELEMS * 3 ints */
static uint64_t *counter;      /* symmetric: the fetch-add target on PE 0 */
static unsigned char *xch;     /* symmetric: npes blocks of XCH */
static struct gshmemi_proxy_ring ring;
static int failures;

#define FAIL(...)                                                                         \
    do {                                                                                  \
        if (__atomic_fetch_add(&failures, 1, __ATOMIC_RELAXED) < 20) {                    \
            fprintf(stderr, "FAIL PE %d: ", me);                                          \
            fprintf(stderr, __VA_ARGS__);                                                 \
            fputc('\n', stderr);                                                          \
        }                                                                                 \
    } while (0)

static unsigned char pat(int pe, int thread, size_t i, int salt)
{
    return (unsigned char)(pe * 37 + thread * 11 + i * 7 + (i >> 8) * 3 + salt * 101 + 1);
}

static uint64_t heap_off(const void *p)
{
    return (uint64_t)((uintptr_t)p - (uintptr_t)gshmemi_state.heap.base);
}

static struct gshmemi_proxy_req req(int op, int pe, const void *remote)
{
    struct gshmemi_proxy_req r;
    memset(&r, 0, sizeof(r));
    r.op = (uint8_t)op;
    r.pe = pe;
    r.offset = heap_off(remote);
    return r;
}

/* A request without data slots; waits for its completion when wait (result: RESULT). */
static uint64_t post(struct gshmemi_proxy_req r, int wait)
{
    uint64_t t, result = 0;
    if (gshmemi_proxy_ring_post(&ring, &r, &t) != GSHMEMI_PROXY_RING_OK) FAIL("no ring slot for ticket %llu", (unsigned long long)t);
    if (wait && gshmemi_proxy_ring_wait(&ring, t, (r.flags & GSHMEMI_PROXY_F_RESULT) ? &result : NULL) != GSHMEMI_PROXY_RING_OK)
        FAIL("no completion for ticket %llu", (unsigned long long)t);
    return result;
}

/* One request with its bytes in data slots: nelems elements of elem bytes at local
 * (stride in bytes), copied in (puts) or, for incoming requests, out after completion. */
static void post_data(struct gshmemi_proxy_req r, unsigned char *local, size_t stride, unsigned elem, size_t nelems,
                      int incoming)
{
    size_t bytes = nelems * elem;
    r.span = (bytes + GSHMEMI_PROXY_DATA_BYTES - 1) / GSHMEMI_PROXY_DATA_BYTES;
    r.flags |= GSHMEMI_PROXY_F_DATA | (incoming ? GSHMEMI_PROXY_F_RESULT : GSHMEMI_PROXY_F_NBI);
    uint64_t t;
    if (gshmemi_proxy_ring_reserve(&ring, 1 + r.span, &t) != GSHMEMI_PROXY_RING_OK) {
        FAIL("no ring slots for ticket %llu", (unsigned long long)t);
        return;
    }
    for (uint64_t i = 0; i < r.span; i++) gshmemi_proxy_ring_data(&ring, t, i);
    for (size_t e = 0; !incoming && e < nelems; e++)
        for (unsigned b = 0; b < elem; b++) {
            size_t at = e * elem + b;
            gshmemi_proxy_ring_data_bytes(&ring, t, at / GSHMEMI_PROXY_DATA_BYTES)[at % GSHMEMI_PROXY_DATA_BYTES] =
                local[e * stride + b];
        }
    gshmemi_proxy_ring_publish(&ring, t, &r);
    if (!incoming) return;
    if (gshmemi_proxy_ring_wait_done(&ring, t) != GSHMEMI_PROXY_RING_OK) {
        FAIL("no completion for data ticket %llu", (unsigned long long)t);
        return;
    }
    for (size_t e = 0; e < nelems; e++)
        for (unsigned b = 0; b < elem; b++) {
            size_t at = e * elem + b;
            local[e * stride + b] =
                gshmemi_proxy_ring_data_bytes(&ring, t, at / GSHMEMI_PROXY_DATA_BYTES)[at % GSHMEMI_PROXY_DATA_BYTES];
        }
    gshmemi_proxy_ring_ack(&ring, t);
}

/* Contiguous bytes in pieces of at most MAX_SPAN slots, as device_proxy.cuh splits them;
 * the last piece of a put may carry a signal. */
static void data_rma(int op, int pe, void *remote, unsigned char *local, size_t n, const struct gshmemi_proxy_req *sig)
{
    size_t piece = (size_t)GSHMEMI_PROXY_MAX_SPAN * GSHMEMI_PROXY_DATA_BYTES;
    for (size_t done = 0; done < n; done += piece) {
        size_t len = n - done < piece ? n - done : piece;
        struct gshmemi_proxy_req r = sig && done + len == n ? *sig : req(op, pe, (char *)remote + done);
        r.offset = heap_off((char *)remote + done);
        r.len = len;
        post_data(r, local + done, 1, 1, len, op == GSHMEMI_PROXY_GET);
    }
}

static size_t slot_put_len(int thread, int round)
{
    static const size_t lens[] = {1, 47, 48, 49, 3072, 3073, SLOT_PUT_MAX, 100, 6143, 9};
    return lens[(size_t)(thread * 3 + round) % (sizeof(lens) / sizeof(lens[0]))];
}

struct worker {
    int thread;
    uint64_t fetched[ROUNDS * 8];
    int nfetched;
};

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    int k = w->thread;
    unsigned char src[SLOT_PUT_MAX], addr_src[ADDR_PUT_LEN], got[GET_LEN];
    int ints[IPUT_ELEMS * 2];
    for (int r = 0; r < ROUNDS; r++) {
        for (int d = 1; d < npes; d++) {
            int pe = (me + d) % npes;
            unsigned char *blk = region + ((size_t)me * THREADS + k) * BLOCK;
            /* data-slot put of the round's length; the last round's pattern must win */
            size_t len = slot_put_len(k, r);
            for (size_t i = 0; i < len; i++) src[i] = pat(me, k, i, r == ROUNDS - 1 ? 0 : r + 1);
            data_rma(GSHMEMI_PROXY_PUT, pe, blk, src, len, NULL);
            /* put from an address (the proxy reads it) */
            for (size_t i = 0; i < ADDR_PUT_LEN; i++) addr_src[i] = pat(me, k, i, 50 + (r == ROUNDS - 1 ? 0 : r + 1));
            struct gshmemi_proxy_req p = req(GSHMEMI_PROXY_PUT, pe, blk + ADDR_PUT_OFF);
            p.local = (uint64_t)(uintptr_t)addr_src;
            p.len = ADDR_PUT_LEN;
            post(p, 1); /* blocking: addr_src is reused next round */
            /* put_signal with the data in slots: 16 bytes after the address put */
            unsigned char tail[16];
            for (int i = 0; i < 16; i++) tail[i] = pat(me, k, (size_t)i, 90);
            struct gshmemi_proxy_req s = req(GSHMEMI_PROXY_PUT_SIGNAL, pe, blk + ADDR_PUT_OFF + ADDR_PUT_LEN);
            s.sub = GSHMEM_SIGNAL_ADD;
            s.operand = 1;
            s.extra = heap_off(&sigs[me * THREADS + k]);
            data_rma(GSHMEMI_PROXY_PUT, pe, blk + ADDR_PUT_OFF + ADDR_PUT_LEN, tail, sizeof(tail), &s);
            /* iput from slots: every other local int, to stride 3 */
            for (int i = 0; i < IPUT_ELEMS * 2; i++) ints[i] = (int)(me * 100000 + k * 1000 + i + (r == ROUNDS - 1 ? 0 : 7777));
            int *iremote = iblk + ((size_t)me * THREADS + k) * IPUT_ELEMS * 3;
            struct gshmemi_proxy_req ip = req(GSHMEMI_PROXY_IPUT, pe, iremote);
            ip.width = sizeof(int);
            ip.len = IPUT_ELEMS;
            ip.operand = 3 * sizeof(int);
            int packed[IPUT_ELEMS];
            for (int i = 0; i < IPUT_ELEMS; i++) packed[i] = ints[2 * i];
            post_data(ip, (unsigned char *)packed, sizeof(int), sizeof(int), IPUT_ELEMS, 0);
            /* g of the published word, get of pub into data slots */
            struct gshmemi_proxy_req g = req(GSHMEMI_PROXY_GET_INLINE, pe, word);
            g.flags = GSHMEMI_PROXY_F_RESULT;
            g.len = 8;
            uint64_t v = post(g, 1);
            if (v != 0x1234567800000000ull + (uint64_t)pe) FAIL("g from PE %d: %#llx", pe, (unsigned long long)v);
            size_t glen = r % 2 ? GET_LEN : 1 + (size_t)r * 97;
            memset(got, 0, sizeof(got));
            data_rma(GSHMEMI_PROXY_GET, pe, pub, got, glen, NULL);
            for (size_t i = 0; i < glen; i++)
                if (got[i] != pat(pe, 0, i, 200)) {
                    FAIL("get in data slots from PE %d, %zu bytes: byte %zu is %u, want %u", pe, glen, i, got[i],
                         pat(pe, 0, i, 200));
                    break;
                }
            /* fetch-add on PE 0's counter (from the others) */
            if (pe == 0) {
                struct gshmemi_proxy_req a = req(GSHMEMI_PROXY_AMO, 0, counter);
                a.sub = GSHMEMI_PROXY_AMO_ADD;
                a.width = 8;
                a.operand = 1;
                a.flags = GSHMEMI_PROXY_F_FETCH | GSHMEMI_PROXY_F_RESULT;
                w->fetched[w->nfetched++] = post(a, 1);
            }
        }
    }
    struct gshmemi_proxy_req q = req(GSHMEMI_PROXY_QUIET, me, gshmemi_state.heap.base);
    post(q, 1);
    return NULL;
}

static void check_regions(void)
{
    for (int s = 0; s < npes; s++)
        for (int k = 0; k < THREADS; k++) {
            const unsigned char *blk = region + ((size_t)s * THREADS + k) * BLOCK;
            size_t len = slot_put_len(k, ROUNDS - 1), bad = 0, first = 0;
            for (size_t i = 0; i < BLOCK; i++) {
                unsigned char want = POISON;
                if (s == me) want = POISON; /* nobody writes its own block on itself */
                else if (i >= ADDR_PUT_OFF + ADDR_PUT_LEN && i < ADDR_PUT_OFF + ADDR_PUT_LEN + 16)
                    want = pat(s, k, i - ADDR_PUT_OFF - ADDR_PUT_LEN, 90);
                else if (i >= ADDR_PUT_OFF && i < ADDR_PUT_OFF + ADDR_PUT_LEN) want = pat(s, k, i - ADDR_PUT_OFF, 50);
                else if (i < SLOT_PUT_MAX) {
                    /* the largest length of any round lands; the last round's bytes win below its length */
                    size_t longest = 0;
                    for (int r = 0; r < ROUNDS; r++)
                        if (slot_put_len(k, r) > longest) longest = slot_put_len(k, r);
                    if (i < len) want = pat(s, k, i, 0);
                    else if (i < longest) {
                        /* the latest earlier round that reached byte i */
                        int last = -1;
                        for (int r = 0; r < ROUNDS - 1; r++)
                            if (slot_put_len(k, r) > i) last = r;
                        want = last >= 0 ? pat(s, k, i, last + 1) : POISON;
                    }
                }
                if (blk[i] != want && bad++ == 0) first = i;
            }
            if (bad)
                FAIL("region of PE %d thread %d: %zu bytes wrong, first at %zu: %u", s, k, bad, first, blk[first]);
            uint64_t want_sig = s == me ? 0 : ROUNDS;
            if (sigs[s * THREADS + k] != want_sig)
                FAIL("signal of PE %d thread %d: %llu, want %llu", s, k, (unsigned long long)sigs[s * THREADS + k],
                     (unsigned long long)want_sig);
            const int *ib = iblk + ((size_t)s * THREADS + k) * IPUT_ELEMS * 3;
            for (int i = 0; i < IPUT_ELEMS * 3; i++) {
                int want = (s == me || i % 3) ? (int)0xEEEEEEEE : (int)(s * 100000 + k * 1000 + 2 * (i / 3));
                if (ib[i] != want) {
                    FAIL("iput of PE %d thread %d: int %d is %d, want %d", s, k, i, ib[i], want);
                    break;
                }
            }
        }
}

static void test_storm(void)
{
    struct worker w[THREADS];
    pthread_t th[THREADS];
    for (int k = 0; k < THREADS; k++) {
        memset(&w[k], 0, sizeof(w[k]));
        w[k].thread = k;
        if (pthread_create(&th[k], NULL, worker_main, &w[k]) != 0) FAIL("pthread_create");
    }
    for (int k = 0; k < THREADS; k++) pthread_join(th[k], NULL);
    gshmem_barrier_all();
    check_regions();
    /* the counter: every fetch distinct on this PE, the total on PE 0 */
    int n = 0;
    uint64_t all[THREADS * ROUNDS * 8];
    for (int k = 0; k < THREADS; k++)
        for (int i = 0; i < w[k].nfetched; i++) all[n++] = w[k].fetched[i];
    for (int i = 0; i < n; i++)
        for (int j = i + 1; j < n; j++)
            if (all[i] == all[j]) FAIL("fetch-add returned %llu twice", (unsigned long long)all[i]);
    uint64_t total = (uint64_t)(npes - 1) * THREADS * ROUNDS;
    for (int i = 0; i < n; i++)
        if (all[i] >= total) FAIL("fetch-add returned %llu, beyond the total %llu", (unsigned long long)all[i],
                                  (unsigned long long)total);
    if (me == 0 && *counter != total)
        FAIL("counter %llu, want %llu", (unsigned long long)*counter, (unsigned long long)total);
    if (n != (me == 0 ? 0 : ROUNDS * THREADS)) FAIL("%d fetch-adds, want %d", n, me == 0 ? 0 : ROUNDS * THREADS);
}

static void test_exchange(void)
{
    for (int j = 0; j < npes; j++)
        for (int i = 0; i < XCH; i++) xch[(size_t)j * XCH + i] = pat(me, j, (size_t)i, 300);
    gshmem_barrier_all();
    int right = (me + 1) % npes, left = (me + npes - 1) % npes;
    struct gshmemi_proxy_req x = req(GSHMEMI_PROXY_EXCHANGE, right, xch + (size_t)me * XCH);
    x.local = (uint64_t)(uintptr_t)(xch + (size_t)right * XCH);
    x.len = XCH;
    if (npes > 2 || me == 0) post(x, 1); /* two PEs share their only pair */
    gshmem_barrier_all();
    for (int j = 0; j < npes; j++) {
        int swapped = j == right || j == left;
        int owner = swapped ? j : me, idx = swapped ? me : j;
        for (int i = 0; i < XCH; i++)
            if (xch[(size_t)j * XCH + i] != pat(owner, idx, (size_t)i, 300)) {
                FAIL("exchange: block %d byte %d is %u, want %u", j, i, xch[(size_t)j * XCH + i],
                     pat(owner, idx, (size_t)i, 300));
                break;
            }
    }
}

/* gshmem_barrier_all's quiet must wait for requests with data slots (it compares
 * tickets served with tickets taken). */
static void test_host_quiet(void)
{
    memset(region, POISON, BLOCK);
    gshmem_barrier_all();
    int right = (me + 1) % npes;
    unsigned char src[SLOT_PUT_MAX];
    for (size_t i = 0; i < sizeof(src); i++) src[i] = pat(me, 9, i, 400);
    data_rma(GSHMEMI_PROXY_PUT, right, region, src, sizeof(src), NULL);
    gshmem_barrier_all(); /* no QUIET request: the host's quiet alone */
    int left = (me + npes - 1) % npes;
    for (size_t i = 0; i < sizeof(src); i++)
        if (region[i] != pat(left, 9, i, 400)) {
            FAIL("host quiet: byte %zu from PE %d is %u, want %u", i, left, region[i], pat(left, 9, i, 400));
            break;
        }
}

/* A FENCE request makes the proxy call every transport's fence (ibv needs it between
 * two RDMA writes to one PE; tcp keeps their order anyway): the transports' ops are
 * swapped for copies whose fence counts its calls, then a put, a FENCE and a waited
 * QUIET go through the ring, and the put's data must have landed too. */
static atomic_int fences;
static int (*real_fence[GSHMEMI_MAX_TRANSPORTS])(struct gshmemi_transport *, int);
static struct gshmemi_transport_ops counting_ops[GSHMEMI_MAX_TRANSPORTS];
#define COUNTING_FENCE(i)                                                    \
    static int counting_fence_##i(struct gshmemi_transport *tp, int pe)     \
    {                                                                        \
        atomic_fetch_add(&fences, 1);                                        \
        return real_fence[i](tp, pe);                                        \
    }
COUNTING_FENCE(0)
COUNTING_FENCE(1)
COUNTING_FENCE(2)
COUNTING_FENCE(3)

static void test_fence(void)
{
    int (*const counting[GSHMEMI_MAX_TRANSPORTS])(struct gshmemi_transport *, int) = {
        counting_fence_0, counting_fence_1, counting_fence_2, counting_fence_3};
    struct gshmemi_transport_set *set = &gshmemi_state.transports;
    const struct gshmemi_transport_ops *saved[GSHMEMI_MAX_TRANSPORTS];
    for (int i = 0; i < set->count; i++) {
        saved[i] = set->list[i]->ops;
        counting_ops[i] = *saved[i];
        real_fence[i] = saved[i]->fence;
        counting_ops[i].fence = counting[i];
        set->list[i]->ops = &counting_ops[i];
    }
    memset(region, POISON, BLOCK);
    gshmem_barrier_all();
    int right = (me + 1) % npes, left = (me + npes - 1) % npes;
    unsigned char src[ADDR_PUT_LEN];
    for (size_t i = 0; i < sizeof(src); i++) src[i] = pat(me, 7, i, 500);
    struct gshmemi_proxy_req p = req(GSHMEMI_PROXY_PUT, right, region);
    p.local = (uint64_t)(uintptr_t)src;
    p.len = sizeof(src);
    post(p, 0);
    struct gshmemi_proxy_req f = req(GSHMEMI_PROXY_FENCE, me, gshmemi_state.heap.base);
    f.flags = GSHMEMI_PROXY_F_NBI;
    post(f, 0);
    post(req(GSHMEMI_PROXY_QUIET, me, gshmemi_state.heap.base), 1);
    int seen = atomic_load(&fences);
    if (seen < 1) FAIL("fence: the proxy served a FENCE request without calling a transport's fence");
    gshmem_barrier_all();
    for (size_t i = 0; i < sizeof(src); i++)
        if (region[i] != pat(left, 7, i, 500)) {
            FAIL("fence: byte %zu from PE %d is %u, want %u", i, left, region[i], pat(left, 7, i, 500));
            break;
        }
    for (int i = 0; i < set->count; i++) set->list[i]->ops = saved[i];
    gshmem_barrier_all();
}

/* The proxy ends while fetching atomics it served are still waiting for their answers
 * (a kernel still running at finalize): it must not free what their answers are
 * written into. Each PE posts fetch-adds on its right neighbour's counter, waits until
 * the proxy has served (sent) them, not for their answers, and stops the proxy at once;
 * the answers then arrive. Under ASan a use after free in proxy_amo_done fails the run
 * (it did before the proxy waited for them). Ends the proxy: the last test. */
static void test_fini_with_fetches_in_flight(void)
{
    int right = (me + 1) % npes;
    uint64_t before = gshmemi_proxy_served(gshmemi_state.proxy);
    for (int i = 0; i < 8; i++) {
        struct gshmemi_proxy_req a = req(GSHMEMI_PROXY_AMO, right, counter);
        a.sub = GSHMEMI_PROXY_AMO_ADD;
        a.width = 8;
        a.operand = 1000;
        a.flags = GSHMEMI_PROXY_F_FETCH | GSHMEMI_PROXY_F_RESULT;
        post(a, 0);
    }
    while (gshmemi_proxy_served(gshmemi_state.proxy) < before + 8) sched_yield();
    gshmemi_proxy_fini(&gshmemi_state);
    struct timespec pause = {0, 50 * 1000 * 1000}; /* the answers arrive meanwhile */
    nanosleep(&pause, NULL);
    gshmem_barrier_all();
    uint64_t want = 8000 + (me == 0 ? (uint64_t)(npes - 1) * THREADS * ROUNDS : 0);
    if (*counter != want)
        FAIL("counter after the fetch-adds in flight at the proxy's end: %llu, want %llu",
             (unsigned long long)*counter, (unsigned long long)want);
}

int main(void)
{
    gshmem_init();
    me = gshmem_my_pe();
    npes = gshmem_n_pes();
    region = gshmem_malloc((size_t)npes * THREADS * BLOCK);
    pub = gshmem_malloc(GET_LEN);
    word = gshmem_malloc(sizeof(uint64_t));
    sigs = gshmem_calloc((size_t)npes * THREADS, sizeof(uint64_t));
    iblk = gshmem_malloc((size_t)npes * THREADS * IPUT_ELEMS * 3 * sizeof(int));
    counter = gshmem_calloc(1, sizeof(uint64_t));
    xch = gshmem_malloc((size_t)npes * XCH);
    if (!region || !pub || !word || !sigs || !iblk || !counter || !xch) {
        fprintf(stderr, "PE %d: allocation failed\n", me);
        gshmem_global_exit(2);
    }
    memset(region, POISON, (size_t)npes * THREADS * BLOCK);
    memset(iblk, POISON, (size_t)npes * THREADS * IPUT_ELEMS * 3 * sizeof(int));
    for (size_t i = 0; i < GET_LEN; i++) pub[i] = pat(me, 0, i, 200);
    *word = 0x1234567800000000ull + (uint64_t)me;
    if (gshmemi_proxy_init_host(&gshmemi_state) != 0 || !gshmemi_state.proxy) {
        fprintf(stderr, "PE %d: no proxy started (run with GSHMEM_DISABLE_P2P=1 and 2 or more PEs)\n", me);
        gshmem_global_exit(2);
    }
    ring = gshmemi_proxy_device_ring(gshmemi_state.proxy);
    if (ring.nslots != (uint32_t)gshmemi_state.env.proxy_ring_slots) {
        fprintf(stderr, "PE %d: the ring has %u slots, GSHMEM_PROXY_RING_SLOTS asks for %ld\n", me, ring.nslots,
                gshmemi_state.env.proxy_ring_slots);
        gshmem_global_exit(1);
    }
    gshmem_barrier_all();
    test_storm();
    test_exchange();
    test_host_quiet();
    test_fence();
    unsigned long long served = (unsigned long long)gshmemi_proxy_served(gshmemi_state.proxy);
    test_fini_with_fetches_in_flight();
    int *mine = gshmem_malloc(sizeof(int)), *all = gshmem_malloc(sizeof(int));
    *mine = failures;
    gshmem_int_sum_reduce(GSHMEM_TEAM_WORLD, all, mine, 1);
    if (me == 0)
        printf("proxy_host: %d PEs, %llu tickets served on PE 0 through a ring of %u slots: %s\n", npes,
               served, ring.nslots, *all ? "FAILED" : "ok");
    int rc = failures ? 1 : 0;
    gshmem_finalize();
    return rc;
}
