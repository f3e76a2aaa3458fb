/*
 * The request ring between a PE's GPU threads (producers) and its proxy thread (the
 * consumer), which carries device-API operations on PROXY peers (peers the GPU cannot
 * reach by loads and stores) to the host transport. Plain C layout shared by the host
 * library, the device code and the unit test; the producer helpers are the same source
 * for the GPU and for a CPU (primitives differ, logic does not). Internal.
 *
 * Protocol (tickets are 64-bit and never wrap):
 *  - A producer takes ticket t with an atomic add on counters->next (device memory)
 *    and owns slot t % nslots.
 *  - Flow control: the slot is free once t < tail + nslots, where tail (pinned host
 *    memory, written by the proxy) says every ticket below it is done with its slot.
 *    Producers cache the highest tail seen in counters->known_tail so that most of them
 *    never read host memory. Past timeout_ns the producer gives up (the device traps).
 *  - The producer writes the request, then publishes valid = t + 1 with a system-scope
 *    release: valid differs on every lap, so a stale slot is never taken for a new one.
 *  - The proxy consumes tickets strictly in order, performs each, then writes the
 *    slot's completion: result first, then seq = t + 1 with a release.
 *  - A waiter on ticket t waits for completion seq >= t + 1 (>=: a later lap may have
 *    completed in the slot already). A request flagged RESULT keeps its slot until the
 *    waiter has read the result and written ack = t + 1, so the result word cannot be
 *    overwritten by a later lap before it is read; tail never passes an unacknowledged
 *    RESULT request.
 *  - Data slots: a request flagged DATA carries its local bytes in the ring itself: the
 *    producer takes 1 + span tickets at once (consecutive), fills the span slots after
 *    the header with up to GSHMEMI_PROXY_DATA_BYTES bytes each (kind DATA, flags 0),
 *    then publishes the header; the consumer serves header and data as one request and
 *    moves on by 1 + span. A GET flagged DATA (always RESULT) gets its bytes back in
 *    the same slots, which the waiter reads before it acknowledges. Device threads use
 *    this for sources and destinations the host cannot address (local and shared
 *    memory) and for small transfers (no device-to-host copy on the proxy's side).
 */
#ifndef GSHMEM_IMPL_PROXY_RING_H
#define GSHMEM_IMPL_PROXY_RING_H

#include <stdint.h>

#define GSHMEMI_PROXY_SLOT_BYTES 64

/* Request kinds. Offsets are heap offsets on the target; local is an address in this
 * process (device or host memory). */
enum gshmemi_proxy_op {
    GSHMEMI_PROXY_NOP = 0,
    GSHMEMI_PROXY_PUT,        /* offset <- local[0, len); flag NBI: put_nbi */
    GSHMEMI_PROXY_GET,        /* local[0, len) <- offset */
    GSHMEMI_PROXY_PUT_INLINE, /* offset <- the low len (1..8) bytes of operand (p) */
    GSHMEMI_PROXY_GET_INLINE, /* result <- len (1..8) bytes at offset (g) */
    GSHMEMI_PROXY_IPUT,       /* len elements of width bytes; operand: target stride, extra: local stride (bytes) */
    GSHMEMI_PROXY_IGET,       /* len elements of width bytes; operand: local stride, extra: target stride (bytes) */
    GSHMEMI_PROXY_AMO,        /* sub: enum gshmemi_amo_op; width 4/8; operand, extra: compare; FETCH */
    GSHMEMI_PROXY_PUT_SIGNAL, /* PUT, then sub (GSHMEM_SIGNAL_SET/ADD) of operand at extra (signal offset) */
    GSHMEMI_PROXY_SIGNAL,     /* sub (GSHMEM_SIGNAL_SET/ADD) of operand at offset */
    GSHMEMI_PROXY_QUIET,      /* every earlier request of this PE is complete at the target */
    GSHMEMI_PROXY_EXCHANGE,   /* local[0, len) and offset[0, len) swap contents (in-place alltoall) */
    GSHMEMI_PROXY_DATA,       /* not a request: a data slot of the request before it */
    GSHMEMI_PROXY_FENCE,      /* this PE's later requests reach each target after its earlier ones */
    GSHMEMI_PROXY_OP_COUNT
};

/* AMO codes in requests (sub of GSHMEMI_PROXY_AMO): the values of enum gshmemi_amo_op
 * of the host transports (src/transport/transport.h; proxy.c checks they agree). */
enum gshmemi_proxy_amo {
    GSHMEMI_PROXY_AMO_FETCH,
    GSHMEMI_PROXY_AMO_SET,
    GSHMEMI_PROXY_AMO_SWAP,
    GSHMEMI_PROXY_AMO_COMPARE_SWAP,
    GSHMEMI_PROXY_AMO_ADD,
    GSHMEMI_PROXY_AMO_AND,
    GSHMEMI_PROXY_AMO_OR,
    GSHMEMI_PROXY_AMO_XOR
};

enum gshmemi_proxy_flags {
    GSHMEMI_PROXY_F_NBI = 1,    /* the producer does not wait; completes at QUIET */
    GSHMEMI_PROXY_F_FETCH = 2,  /* AMO: return the previous value */
    GSHMEMI_PROXY_F_RESULT = 4, /* the waiter reads the result word and acknowledges */
    GSHMEMI_PROXY_F_DATA = 8    /* local is not an address: the bytes are in the span slots after it
                                   (PUT, PUT_SIGNAL, IPUT: packed source; GET, IGET: packed result) */
};

/* Bytes per data slot, and the most data slots one request may have. */
#define GSHMEMI_PROXY_DATA_BYTES 48u
#define GSHMEMI_PROXY_MAX_SPAN 64u

/* One slot: 64 bytes, valid written last. */
struct gshmemi_proxy_req {
    uint64_t valid; /* ticket + 1 once the rest is written */
    uint8_t op;     /* enum gshmemi_proxy_op */
    uint8_t sub;    /* AMO op or signal op */
    uint8_t width;  /* AMO or element width in bytes */
    uint8_t flags;  /* enum gshmemi_proxy_flags */
    int32_t pe;
    uint64_t offset;
    uint64_t local;
    uint64_t len;
    uint64_t operand;
    uint64_t extra;
    uint64_t span; /* F_DATA: data slots after this one (1..GSHMEMI_PROXY_MAX_SPAN) */
};

/* A data slot: kind is GSHMEMI_PROXY_DATA in its low byte and zeros above, so the
 * bytes where a request has op and flags read as a DATA slot without flags. */
struct gshmemi_proxy_data {
    uint64_t valid; /* its ticket + 1, for diagnostics (the header's valid publishes it) */
    uint64_t kind;
    uint8_t bytes[GSHMEMI_PROXY_DATA_BYTES];
};

/* Per slot, written by the proxy (seq, result) and by a RESULT waiter (ack). */
struct gshmemi_proxy_completion {
    uint64_t seq;    /* ticket + 1 of the last request completed in this slot */
    uint64_t result; /* fetched value (AMO FETCH, GET_INLINE) */
    uint64_t ack;    /* ticket + 1 once a RESULT waiter has read result */
    uint64_t reserved;
};

/* In device memory: only GPU threads touch it (CPU producers in the unit test). */
struct gshmemi_proxy_counters {
    uint64_t next;       /* next ticket */
    uint64_t known_tail; /* highest tail a producer has seen (a cache of *tail) */
    uint64_t reserved[6];
};

/* Where a producer finds the ring (device addresses in the device state; host
 * addresses on the proxy's side). nslots 0: no proxy. */
struct gshmemi_proxy_ring {
    struct gshmemi_proxy_req *slots;               /* pinned, nslots entries */
    struct gshmemi_proxy_completion *completions;  /* pinned, nslots entries */
    uint64_t *tail;                                /* pinned: tickets below it have released their slot */
    struct gshmemi_proxy_counters *counters;       /* device memory */
    uint32_t nslots;                               /* a power of two */
    uint32_t reserved;
    uint64_t timeout_ns;                           /* producer and waiter give up after it; 0: never */
};

enum { GSHMEMI_PROXY_RING_OK = 0, GSHMEMI_PROXY_RING_TIMEOUT = 1 };

/* ---- Primitives: the only part that differs between GPU and CPU. ----------------- */
#if defined(__CUDACC__)
#define GSHMEMI_RING_FN static __device__ __forceinline__

GSHMEMI_RING_FN uint64_t gshmemi_ring_take_tickets(struct gshmemi_proxy_counters *c, uint64_t n)
{
    return atomicAdd((unsigned long long *)&c->next, (unsigned long long)n);
}
GSHMEMI_RING_FN uint64_t gshmemi_ring_load_acquire(const uint64_t *p)
{
    uint64_t v;
    asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}
GSHMEMI_RING_FN uint64_t gshmemi_ring_load_relaxed(const uint64_t *p)
{
    return *(const volatile uint64_t *)p;
}
/* A system-scope release: earlier writes of this thread (and, cumulatively, those it
 * has observed) are visible to whoever sees v. */
GSHMEMI_RING_FN void gshmemi_ring_store_release(uint64_t *p, uint64_t v)
{
    asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
/* known_tail (device memory, shared by this GPU's producers): a producer that sees it
 * raised reuses slots the proxy freed, so it acquires what the raiser acquired from the
 * tail, which the raise releases. */
GSHMEMI_RING_FN uint64_t gshmemi_ring_load_known(const uint64_t *p)
{
    uint64_t v;
    asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}
GSHMEMI_RING_FN void gshmemi_ring_raise(uint64_t *p, uint64_t v)
{
    asm volatile("red.release.gpu.global.max.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}
GSHMEMI_RING_FN uint64_t gshmemi_ring_now_ns(void)
{
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
/* Polling host memory crosses PCIe: back off so many waiters do not flood it. ahead:
 * how many tickets are to be served before the waiter's (an estimate); a waiter near
 * the head polls every microsecond at most, one k tickets behind every k us (the proxy
 * needs about that long to get there), at most every 262 us, so the ring's waiters
 * together poll at a rate that grows with the log of their number. */
GSHMEMI_RING_FN void gshmemi_ring_pause(unsigned *backoff, uint64_t ahead)
{
    unsigned cap = ahead >= 256 ? 262144u : ahead < 4 ? 1024u : (unsigned)ahead * 1024u;
    __nanosleep(*backoff);
    *backoff = *backoff ? *backoff * 2 : 32;
    if (*backoff > cap) *backoff = cap;
}
#else
#include <sched.h>
#include <time.h>
#define GSHMEMI_RING_FN static inline

GSHMEMI_RING_FN uint64_t gshmemi_ring_take_tickets(struct gshmemi_proxy_counters *c, uint64_t n)
{
    return __atomic_fetch_add(&c->next, n, __ATOMIC_RELAXED);
}
GSHMEMI_RING_FN uint64_t gshmemi_ring_load_acquire(const uint64_t *p)
{
    return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}
GSHMEMI_RING_FN uint64_t gshmemi_ring_load_relaxed(const uint64_t *p)
{
    return __atomic_load_n(p, __ATOMIC_RELAXED);
}
GSHMEMI_RING_FN void gshmemi_ring_store_release(uint64_t *p, uint64_t v)
{
    __atomic_store_n(p, v, __ATOMIC_RELEASE);
}
GSHMEMI_RING_FN uint64_t gshmemi_ring_load_known(const uint64_t *p)
{
    return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}
GSHMEMI_RING_FN void gshmemi_ring_raise(uint64_t *p, uint64_t v)
{
    uint64_t cur = __atomic_load_n(p, __ATOMIC_RELAXED);
    while (cur < v && !__atomic_compare_exchange_n(p, &cur, v, 1, __ATOMIC_RELEASE, __ATOMIC_RELAXED)) {
    }
}
GSHMEMI_RING_FN uint64_t gshmemi_ring_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
GSHMEMI_RING_FN void gshmemi_ring_pause(unsigned *backoff, uint64_t ahead)
{
    (void)backoff, (void)ahead;
    sched_yield();
}
#endif

/* ---- Producer side (GPU threads; CPU threads in the unit test). ------------------- */

/* Producers waiting for a slot this close to the first busy one read the tail in host
 * memory; those further back mostly watch known_tail in device memory, which the
 * front ones raise. With thousands of GPU threads waiting, reading host memory over
 * PCIe from every one of them crowded out the traffic that serves the ring (the H200's
 * atomic storms stalled). */
#define GSHMEMI_RING_FRONT 64u

/* Waits until the slots of tickets first .. last are free (the proxy frees in order,
 * so until last's is). Whether a waiter is at the front goes by its first ticket: a
 * request of many data slots otherwise counted as a back row while nobody was in front
 * of it to raise known_tail, and waited 64 polls (milliseconds on the GPU). */
GSHMEMI_RING_FN int gshmemi_proxy_ring_wait_slots(const struct gshmemi_proxy_ring *r, uint64_t first, uint64_t last)
{
    uint64_t deadline = 0;
    unsigned backoff = 0;
    const uint64_t ticket = last;
    for (unsigned polls = 0;; polls++) {
        uint64_t known = gshmemi_ring_load_known(&r->counters->known_tail);
        if (ticket < known + r->nslots) return GSHMEMI_PROXY_RING_OK;
        int front = first < known + r->nslots + GSHMEMI_RING_FRONT;
        if (front || (polls & 63u) == 63u) { /* the back rows look too now and then: none may be in front */
            uint64_t tail = gshmemi_ring_load_acquire(r->tail);
            if (tail > known) gshmemi_ring_raise(&r->counters->known_tail, tail);
            if (ticket < tail + r->nslots) return GSHMEMI_PROXY_RING_OK;
        }
        if (r->timeout_ns && (polls & 15u) == 0) {
            uint64_t now = gshmemi_ring_now_ns();
            if (deadline == 0) deadline = now + r->timeout_ns;
            else if (now > deadline) return GSHMEMI_PROXY_RING_TIMEOUT;
        }
        gshmemi_ring_pause(&backoff, ticket - (known + r->nslots));
    }
}

/* Waits until ticket's slot is free. */
GSHMEMI_RING_FN int gshmemi_proxy_ring_wait_slot(const struct gshmemi_proxy_ring *r, uint64_t ticket)
{
    return gshmemi_proxy_ring_wait_slots(r, ticket, ticket);
}

/* Takes count consecutive tickets (a request and its data slots), the first in
 * *ticket even on timeout (for the diagnostic), and waits until all their slots are free. */
GSHMEMI_RING_FN int gshmemi_proxy_ring_reserve(const struct gshmemi_proxy_ring *r, uint64_t count, uint64_t *ticket)
{
    uint64_t t = gshmemi_ring_take_tickets(r->counters, count);
    *ticket = t;
    return gshmemi_proxy_ring_wait_slots(r, t, t + count - 1);
}

/* The bytes of data slot i (0-based) of the request at ticket t. */
GSHMEMI_RING_FN uint8_t *gshmemi_proxy_ring_data_bytes(const struct gshmemi_proxy_ring *r, uint64_t t, uint64_t i)
{
    return ((struct gshmemi_proxy_data *)&r->slots[(t + 1 + i) & (r->nslots - 1)])->bytes;
}

/* Data slot i (0-based) of the request at ticket t, marked as a data slot (a producer
 * marks every one before it publishes: a stale slot may look like a RESULT request). */
GSHMEMI_RING_FN struct gshmemi_proxy_data *gshmemi_proxy_ring_data(const struct gshmemi_proxy_ring *r, uint64_t t,
                                                                  uint64_t i)
{
    struct gshmemi_proxy_data *d = (struct gshmemi_proxy_data *)&r->slots[(t + 1 + i) & (r->nslots - 1)];
    d->valid = t + 2 + i;
    d->kind = GSHMEMI_PROXY_DATA;
    return d;
}

/* Writes *req (its valid field is ignored) into ticket t's slot and publishes it: the
 * release also publishes the data slots this thread filled before. */
GSHMEMI_RING_FN void gshmemi_proxy_ring_publish(const struct gshmemi_proxy_ring *r, uint64_t t,
                                                const struct gshmemi_proxy_req *req)
{
    struct gshmemi_proxy_req *s = &r->slots[t & (r->nslots - 1)];
    s->op = req->op;
    s->sub = req->sub;
    s->width = req->width;
    s->flags = req->flags;
    s->pe = req->pe;
    s->offset = req->offset;
    s->local = req->local;
    s->len = req->len;
    s->operand = req->operand;
    s->extra = req->extra;
    s->span = req->span;
    gshmemi_ring_store_release(&s->valid, t + 1);
}

/* Posts *req without data slots: takes a ticket, waits for the slot, writes the
 * request and publishes it. *ticket is set even on timeout (for the diagnostic). */
GSHMEMI_RING_FN int gshmemi_proxy_ring_post(const struct gshmemi_proxy_ring *r, const struct gshmemi_proxy_req *req,
                                            uint64_t *ticket)
{
    int rc = gshmemi_proxy_ring_reserve(r, 1, ticket);
    if (rc == GSHMEMI_PROXY_RING_OK) gshmemi_proxy_ring_publish(r, *ticket, req);
    return rc;
}

/* Waits for ticket's completion (a RESULT request keeps its slots until acknowledged). */
GSHMEMI_RING_FN int gshmemi_proxy_ring_wait_done(const struct gshmemi_proxy_ring *r, uint64_t ticket)
{
    struct gshmemi_proxy_completion *c = &r->completions[ticket & (r->nslots - 1)];
    uint64_t deadline = 0, ahead = 0;
    unsigned backoff = 0;
    for (unsigned polls = 0; gshmemi_ring_load_acquire(&c->seq) < ticket + 1; polls++) {
        if ((polls & 15u) == 0) {
            uint64_t tail = gshmemi_ring_load_relaxed(r->tail); /* below the head: an overestimate */
            ahead = ticket > tail ? ticket - tail : 0;
            if (r->timeout_ns) {
                uint64_t now = gshmemi_ring_now_ns();
                if (deadline == 0) deadline = now + r->timeout_ns;
                else if (now > deadline) return GSHMEMI_PROXY_RING_TIMEOUT;
            }
        }
        gshmemi_ring_pause(&backoff, ahead);
    }
    return GSHMEMI_PROXY_RING_OK;
}

/* A RESULT waiter is done with the result word and the data slots: the proxy may free them. */
GSHMEMI_RING_FN void gshmemi_proxy_ring_ack(const struct gshmemi_proxy_ring *r, uint64_t ticket)
{
    gshmemi_ring_store_release(&r->completions[ticket & (r->nslots - 1)].ack, ticket + 1);
}

/* Waits for ticket's completion. result non-NULL (the request was posted with RESULT):
 * reads the result word and releases the slot. */
GSHMEMI_RING_FN int gshmemi_proxy_ring_wait(const struct gshmemi_proxy_ring *r, uint64_t ticket, uint64_t *result)
{
    int rc = gshmemi_proxy_ring_wait_done(r, ticket);
    if (rc == GSHMEMI_PROXY_RING_OK && result) {
        *result = *(volatile uint64_t *)&r->completions[ticket & (r->nslots - 1)].result;
        gshmemi_proxy_ring_ack(r, ticket);
    }
    return rc;
}

/* ---- Consumer side (the proxy thread; host C only). ------------------------------- */
#if !defined(__CUDACC__)
#include <string.h>

struct gshmemi_proxy_consumer {
    uint64_t head;  /* next ticket to take */
    uint64_t freed; /* tickets below it have released their slot (published as *tail) */
};

/* Copies ticket head's request to *out when the producer has published it. */
static inline int gshmemi_proxy_ring_peek(const struct gshmemi_proxy_ring *r, const struct gshmemi_proxy_consumer *c,
                                          struct gshmemi_proxy_req *out)
{
    const struct gshmemi_proxy_req *s = &r->slots[c->head & (r->nslots - 1)];
    if (gshmemi_ring_load_acquire(&s->valid) != c->head + 1) return 0;
    *out = *s;
    return 1;
}

/* Completes ticket head (its operation is done) and moves on past it and its data
 * slots (span: the request's span when it is flagged DATA, else 0). */
static inline void gshmemi_proxy_ring_complete_span(const struct gshmemi_proxy_ring *r,
                                                    struct gshmemi_proxy_consumer *c, uint64_t result, uint64_t span)
{
    struct gshmemi_proxy_completion *comp = &r->completions[c->head & (r->nslots - 1)];
    __atomic_store_n(&comp->result, result, __ATOMIC_RELAXED);
    gshmemi_ring_store_release(&comp->seq, c->head + 1);
    c->head += 1 + span;
}

static inline void gshmemi_proxy_ring_complete(const struct gshmemi_proxy_ring *r, struct gshmemi_proxy_consumer *c,
                                               uint64_t result)
{
    gshmemi_proxy_ring_complete_span(r, c, result, 0);
}

/* The span of a peeked request: its data slots, 0 unless it is flagged DATA. Refuses
 * (returns -1 for) a span the producer could not have written. */
static inline int64_t gshmemi_proxy_req_span(const struct gshmemi_proxy_req *req)
{
    if (!(req->flags & GSHMEMI_PROXY_F_DATA)) return 0;
    if (req->span == 0 || req->span > GSHMEMI_PROXY_MAX_SPAN) return -1;
    return (int64_t)req->span;
}

/* Copies len bytes between the data slots of the request at ticket head and buf:
 * to_slots 0 reads them (a put's source), 1 writes them (a get's result). */
static inline void gshmemi_proxy_ring_copy_data(const struct gshmemi_proxy_ring *r, uint64_t head, void *buf,
                                                size_t len, int to_slots)
{
    char *p = (char *)buf;
    for (uint64_t i = 0; len > 0; i++) {
        struct gshmemi_proxy_data *d = (struct gshmemi_proxy_data *)&r->slots[(head + 1 + i) & (r->nslots - 1)];
        size_t n = len < GSHMEMI_PROXY_DATA_BYTES ? len : GSHMEMI_PROXY_DATA_BYTES;
        if (to_slots) memcpy(d->bytes, p, n);
        else memcpy(p, d->bytes, n);
        p += n;
        len -= n;
    }
}

/* Frees the slots of completed requests in order, stopping at a RESULT request whose
 * waiter has not acknowledged yet, and publishes the new tail. Returns how many slots
 * it freed. */
static inline uint64_t gshmemi_proxy_ring_release(const struct gshmemi_proxy_ring *r, struct gshmemi_proxy_consumer *c)
{
    uint64_t start = c->freed;
    while (c->freed < c->head) {
        uint32_t i = (uint32_t)(c->freed & (r->nslots - 1));
        if ((r->slots[i].flags & GSHMEMI_PROXY_F_RESULT) &&
            gshmemi_ring_load_acquire(&r->completions[i].ack) < c->freed + 1)
            break;
        c->freed++;
    }
    if (c->freed != start) gshmemi_ring_store_release(r->tail, c->freed);
    return c->freed - start;
}

#endif /* !__CUDACC__ */

#endif
