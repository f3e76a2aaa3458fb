/* The proxy's request ring (include/gshmem/impl/proxy_ring.h) with CPU threads as the
 * producers: the same producer code the GPU runs, the consumer code the proxy runs. */
#include <gshmem/impl/proxy_ring.h>

#include <criterion/criterion.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ring_fixture {
    struct gshmemi_proxy_ring ring;
    struct gshmemi_proxy_consumer cons;
    void *mem;
};

static void ring_make(struct ring_fixture *f, uint32_t nslots, uint64_t timeout_ns)
{
    size_t bytes = nslots * (sizeof(struct gshmemi_proxy_req) + sizeof(struct gshmemi_proxy_completion)) + 64 +
                   sizeof(struct gshmemi_proxy_counters);
    f->mem = aligned_alloc(64, (bytes + 63) & ~(size_t)63);
    cr_assert_not_null(f->mem);
    memset(f->mem, 0, bytes);
    char *p = f->mem;
    f->ring.slots = (struct gshmemi_proxy_req *)p;
    p += nslots * sizeof(struct gshmemi_proxy_req);
    f->ring.completions = (struct gshmemi_proxy_completion *)p;
    p += nslots * sizeof(struct gshmemi_proxy_completion);
    f->ring.tail = (uint64_t *)p;
    f->ring.counters = (struct gshmemi_proxy_counters *)(p + 64);
    f->ring.nslots = nslots;
    f->ring.timeout_ns = timeout_ns;
    memset(&f->cons, 0, sizeof(f->cons));
}

static void ring_free(struct ring_fixture *f)
{
    free(f->mem);
}

/* What producer p's i-th request carries, and what the consumer returns for it. */
static uint64_t pattern(int p, uint64_t i)
{
    return ((uint64_t)p << 48) ^ (i * 0x9E3779B97F4A7C15ull) ^ 0xA5A5A5A5u;
}
static uint64_t answer(const struct gshmemi_proxy_req *r)
{
    return r->local * 3 + r->operand + (uint64_t)r->pe;
}

static struct gshmemi_proxy_req request(int p, uint64_t i, int flags)
{
    struct gshmemi_proxy_req r;
    memset(&r, 0, sizeof(r));
    r.op = GSHMEMI_PROXY_PUT;
    r.sub = (uint8_t)(i % 7);
    r.width = (uint8_t)(p + 1);
    r.flags = (uint8_t)flags;
    r.pe = p;
    r.offset = i;
    r.local = pattern(p, i);
    r.len = i * 7 + (uint64_t)p;
    r.operand = ~pattern(p, i);
    r.extra = (uint64_t)p ^ i;
    return r;
}

/* ---- Many producers, one consumer ---------------------------------------------------- */

#define PRODUCERS 8
#define PER_PRODUCER 3000

struct storm {
    struct ring_fixture f;
    uint64_t consumed;
    uint64_t next_index[PRODUCERS];
    int errors;
    char first_error[256];
    int producer_errors[PRODUCERS];
};

struct producer_arg {
    struct storm *s;
    int p;
};

static void *producer_main(void *arg)
{
    struct producer_arg *a = arg;
    struct storm *s = a->s;
    for (uint64_t i = 0; i < PER_PRODUCER; i++) {
        /* every third request fetches a result; every fifth other one blocks without one */
        int flags = i % 3 == 0 ? GSHMEMI_PROXY_F_RESULT : i % 5 == 0 ? 0 : GSHMEMI_PROXY_F_NBI;
        struct gshmemi_proxy_req r = request(a->p, i, flags);
        uint64_t ticket, result = 0;
        if (gshmemi_proxy_ring_post(&s->f.ring, &r, &ticket) != GSHMEMI_PROXY_RING_OK) {
            s->producer_errors[a->p]++;
            return NULL;
        }
        if (flags & GSHMEMI_PROXY_F_NBI) continue;
        int rc = gshmemi_proxy_ring_wait(&s->f.ring, ticket, (flags & GSHMEMI_PROXY_F_RESULT) ? &result : NULL);
        if (rc != GSHMEMI_PROXY_RING_OK || ((flags & GSHMEMI_PROXY_F_RESULT) && result != answer(&r)))
            s->producer_errors[a->p]++;
    }
    return NULL;
}

static void storm_error(struct storm *s, const char *what, const struct gshmemi_proxy_req *r)
{
    if (s->errors++ == 0)
        snprintf(s->first_error, sizeof(s->first_error), "ticket %llu: %s (pe %d offset %llu)",
                 (unsigned long long)s->f.cons.head, what, r->pe, (unsigned long long)r->offset);
}

static void *consumer_main(void *arg)
{
    struct storm *s = arg;
    struct gshmemi_proxy_req r;
    while (s->consumed < (uint64_t)PRODUCERS * PER_PRODUCER) {
        if (!gshmemi_proxy_ring_peek(&s->f.ring, &s->f.cons, &r)) {
            gshmemi_proxy_ring_release(&s->f.ring, &s->f.cons);
            sched_yield();
            continue;
        }
        if (r.pe < 0 || r.pe >= PRODUCERS) {
            storm_error(s, "producer out of range", &r);
        } else {
            struct gshmemi_proxy_req want = request(r.pe, s->next_index[r.pe], r.flags);
            want.valid = r.valid;
            if (r.offset != s->next_index[r.pe]) storm_error(s, "out of order, lost or duplicated", &r);
            else if (memcmp(&r, &want, sizeof(r)) != 0) storm_error(s, "payload differs", &r);
            s->next_index[r.pe] = r.offset + 1;
        }
        if (r.valid != s->f.cons.head + 1) storm_error(s, "valid word is not ticket + 1", &r);
        gshmemi_proxy_ring_complete(&s->f.ring, &s->f.cons, answer(&r));
        gshmemi_proxy_ring_release(&s->f.ring, &s->f.cons);
        s->consumed++;
    }
    /* RESULT waiters acknowledge after the last completion: let the tail catch up. */
    while (s->f.cons.freed < s->f.cons.head) gshmemi_proxy_ring_release(&s->f.ring, &s->f.cons), sched_yield();
    return NULL;
}

static void run_storm(uint32_t nslots)
{
    static struct storm s;
    memset(&s, 0, sizeof(s));
    ring_make(&s.f, nslots, 30ull * 1000000000u);
    pthread_t consumer, producers[PRODUCERS];
    struct producer_arg args[PRODUCERS];
    cr_assert_eq(pthread_create(&consumer, NULL, consumer_main, &s), 0);
    for (int p = 0; p < PRODUCERS; p++) {
        args[p] = (struct producer_arg){&s, p};
        cr_assert_eq(pthread_create(&producers[p], NULL, producer_main, &args[p]), 0);
    }
    for (int p = 0; p < PRODUCERS; p++) pthread_join(producers[p], NULL);
    pthread_join(consumer, NULL);
    cr_expect_eq(s.errors, 0, "%d consumer errors, first: %s", s.errors, s.first_error);
    for (int p = 0; p < PRODUCERS; p++) {
        cr_expect_eq(s.producer_errors[p], 0, "producer %d saw %d bad completions", p, s.producer_errors[p]);
        cr_expect_eq(s.next_index[p], PER_PRODUCER, "producer %d: %llu of %d requests seen", p,
                     (unsigned long long)s.next_index[p], PER_PRODUCER);
    }
    uint64_t total = (uint64_t)PRODUCERS * PER_PRODUCER;
    cr_expect_eq(s.f.ring.counters->next, total);
    cr_expect_eq(*s.f.ring.tail, total, "tail %llu, want %llu", (unsigned long long)*s.f.ring.tail,
                 (unsigned long long)total);
    ring_free(&s.f);
}

Test(proxy_ring, many_producers_8_slots, .timeout = 120)
{
    run_storm(8);
}

Test(proxy_ring, many_producers_16_slots, .timeout = 120)
{
    run_storm(16);
}

/* ---- Laps and results ------------------------------------------------------------------ */

/* Serves everything visible, as the proxy does. */
static unsigned serve_all(struct ring_fixture *f)
{
    struct gshmemi_proxy_req r;
    unsigned n = 0;
    while (gshmemi_proxy_ring_peek(&f->ring, &f->cons, &r)) {
        gshmemi_proxy_ring_complete(&f->ring, &f->cons, answer(&r));
        gshmemi_proxy_ring_release(&f->ring, &f->cons);
        n++;
    }
    return n;
}

Test(proxy_ring, completion_seen_after_the_slot_lapped)
{
    struct ring_fixture f;
    ring_make(&f, 8, 1000000000u);
    struct gshmemi_proxy_req r = request(0, 0, 0);
    uint64_t first, t;
    cr_assert_eq(gshmemi_proxy_ring_post(&f.ring, &r, &first), GSHMEMI_PROXY_RING_OK);
    cr_assert_eq(first, 0);
    for (int lap = 0; lap < 3; lap++) {
        for (uint64_t i = 0; i < 8; i++) {
            r = request(1, lap * 8 + i, GSHMEMI_PROXY_F_NBI);
            cr_assert_eq(gshmemi_proxy_ring_post(&f.ring, &r, &t), GSHMEMI_PROXY_RING_OK);
            if (i == 6 || i == 7) serve_all(&f); /* keep room */
        }
    }
    serve_all(&f);
    cr_assert_gt(f.ring.completions[0].seq, first + 1, "slot 0 should have lapped");
    cr_expect_eq(gshmemi_proxy_ring_wait(&f.ring, first, NULL), GSHMEMI_PROXY_RING_OK);
    ring_free(&f);
}

Test(proxy_ring, result_keeps_its_slot_until_read)
{
    struct ring_fixture f;
    ring_make(&f, 8, 50000000u);
    struct gshmemi_proxy_req fetch = request(2, 0, GSHMEMI_PROXY_F_RESULT), r;
    uint64_t t0, t;
    cr_assert_eq(gshmemi_proxy_ring_post(&f.ring, &fetch, &t0), GSHMEMI_PROXY_RING_OK);
    for (uint64_t i = 1; i < 8; i++) {
        r = request(3, i, GSHMEMI_PROXY_F_NBI);
        cr_assert_eq(gshmemi_proxy_ring_post(&f.ring, &r, &t), GSHMEMI_PROXY_RING_OK);
    }
    cr_assert_eq(serve_all(&f), 8);
    cr_expect_eq(*f.ring.tail, 0, "the unread result's slot must stay taken");
    cr_expect_eq(gshmemi_proxy_ring_wait_slot(&f.ring, 8), GSHMEMI_PROXY_RING_TIMEOUT);
    uint64_t result = 0;
    cr_assert_eq(gshmemi_proxy_ring_wait(&f.ring, t0, &result), GSHMEMI_PROXY_RING_OK);
    cr_expect_eq(result, answer(&fetch));
    gshmemi_proxy_ring_release(&f.ring, &f.cons);
    cr_expect_eq(*f.ring.tail, 8);
    cr_expect_eq(gshmemi_proxy_ring_wait_slot(&f.ring, 8), GSHMEMI_PROXY_RING_OK);
    cr_expect_eq(gshmemi_proxy_ring_wait_slot(&f.ring, 15), GSHMEMI_PROXY_RING_OK);
    cr_expect_eq(f.ring.counters->known_tail, 8, "producers cache the tail they saw");
    ring_free(&f);
}

/* ---- Nothing hangs --------------------------------------------------------------------- */

Test(proxy_ring, full_ring_times_out, .timeout = 30)
{
    struct ring_fixture f;
    ring_make(&f, 8, 100000000u); /* 0.1 s */
    struct gshmemi_proxy_req r = request(4, 0, GSHMEMI_PROXY_F_NBI);
    uint64_t t;
    for (int i = 0; i < 8; i++) cr_assert_eq(gshmemi_proxy_ring_post(&f.ring, &r, &t), GSHMEMI_PROXY_RING_OK);
    uint64_t start = gshmemi_ring_now_ns();
    cr_expect_eq(gshmemi_proxy_ring_post(&f.ring, &r, &t), GSHMEMI_PROXY_RING_TIMEOUT);
    uint64_t waited = gshmemi_ring_now_ns() - start;
    cr_expect_eq(t, 8, "the diagnostic names the ticket");
    cr_expect_geq(waited, 100000000u, "gave up after %llu ns", (unsigned long long)waited);
    cr_expect_lt(waited, 10000000000ull, "took %llu ns to give up", (unsigned long long)waited);
    ring_free(&f);
}

Test(proxy_ring, completion_wait_times_out, .timeout = 30)
{
    struct ring_fixture f;
    ring_make(&f, 8, 100000000u);
    struct gshmemi_proxy_req r = request(5, 0, GSHMEMI_PROXY_F_RESULT);
    uint64_t t, result = 7;
    cr_assert_eq(gshmemi_proxy_ring_post(&f.ring, &r, &t), GSHMEMI_PROXY_RING_OK);
    cr_expect_eq(gshmemi_proxy_ring_wait(&f.ring, t, &result), GSHMEMI_PROXY_RING_TIMEOUT);
    cr_expect_eq(result, 7, "no result is read on timeout");
    ring_free(&f);
}

Test(proxy_ring, layout)
{
    cr_expect_eq(sizeof(struct gshmemi_proxy_req), GSHMEMI_PROXY_SLOT_BYTES);
    cr_expect_eq(sizeof(struct gshmemi_proxy_completion), 32);
    cr_expect_eq(sizeof(struct gshmemi_proxy_counters), 64);
}
