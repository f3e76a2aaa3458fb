/* The proxy's request ring (include/gshmem/impl/proxy_ring.h) with CPU threads as the
 * producers: the same producer code the GPU runs, the consumer code the proxy runs. */
#include <gshmem/impl/proxy_ring.h>

#include <criterion/criterion.h>

#include <pthread.h>
#include <stddef.h>
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

/* A request of the most data slots, right behind a lap the proxy has freed but no
 * producer has reported in known_tail: its first ticket is at the front, so it reads
 * the tail at once. Judged by its last ticket it counted as a back row, with nobody in
 * front to raise known_tail, and read the tail only every 64th poll (about 3 ms of
 * backoff on the GPU; here the 1 us timeout comes first). */
Test(proxy_ring, longest_request_after_a_freed_lap_reads_the_tail)
{
    struct ring_fixture f;
    ring_make(&f, 128, 1000u);
    struct gshmemi_proxy_req r;
    uint64_t t;
    for (uint64_t i = 0; i < 128; i++) {
        r = request(1, i, GSHMEMI_PROXY_F_NBI);
        cr_assert_eq(gshmemi_proxy_ring_post(&f.ring, &r, &t), GSHMEMI_PROXY_RING_OK);
    }
    cr_assert_eq(serve_all(&f), 128);
    cr_assert_eq(*f.ring.tail, 128);
    cr_assert_eq(f.ring.counters->known_tail, 0, "nobody has seen the tail move yet");
    uint64_t first = 0;
    cr_expect_eq(gshmemi_proxy_ring_reserve(&f.ring, 1 + GSHMEMI_PROXY_MAX_SPAN, &first), GSHMEMI_PROXY_RING_OK,
                 "tickets 128 .. %u fit in the freed lap", 128 + GSHMEMI_PROXY_MAX_SPAN);
    cr_expect_eq(first, 128);
    cr_expect_eq(f.ring.counters->known_tail, 128, "the front reports the tail it read");
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

/* ---- Requests with data slots ------------------------------------------------------------ */

/* Byte k of the data of producer p's i-th request: puts carry it to the consumer, the
 * consumer answers gets with it. */
static uint8_t data_byte(int p, uint64_t i, size_t k)
{
    return (uint8_t)(pattern(p, i) >> (8 * (k % 7)) ^ (k * 31u) ^ (uint8_t)p);
}

#define DATA_PRODUCERS 6
#define DATA_PER_PRODUCER 1500

struct data_storm {
    struct ring_fixture f;
    uint64_t max_bytes; /* per request: (slots - 1) data slots at most */
    uint64_t next_index[DATA_PRODUCERS];
    uint64_t served;
    int errors;
    char first_error[256];
    int producer_errors[DATA_PRODUCERS];
};

struct data_arg {
    struct data_storm *s;
    int p;
};

/* Length of producer p's i-th request: 1 .. max_bytes, with the edges often. */
static size_t data_len(const struct data_storm *s, int p, uint64_t i)
{
    uint64_t h = pattern(p, i) >> 17;
    switch (i % 5) {
    case 0: return 1;
    case 1: return s->max_bytes;
    case 2: return GSHMEMI_PROXY_DATA_BYTES * (1 + h % (s->max_bytes / GSHMEMI_PROXY_DATA_BYTES));
    default: return 1 + h % s->max_bytes;
    }
}

/* Every third request of a producer is a get (data comes back), the rest puts; plain
 * requests without data are mixed in so that spans start at every slot. */
static void *data_producer(void *arg)
{
    struct data_arg *a = arg;
    struct data_storm *s = a->s;
    uint8_t buf[GSHMEMI_PROXY_MAX_SPAN * GSHMEMI_PROXY_DATA_BYTES];
    for (uint64_t i = 0; i < DATA_PER_PRODUCER; i++) {
        struct gshmemi_proxy_req r = request(a->p, i, GSHMEMI_PROXY_F_NBI);
        uint64_t t;
        if (i % 4 == 3) { /* plain */
            if (gshmemi_proxy_ring_post(&s->f.ring, &r, &t) != GSHMEMI_PROXY_RING_OK) goto fail;
            continue;
        }
        int get = i % 3 == 0;
        size_t len = data_len(s, a->p, i);
        r.op = get ? GSHMEMI_PROXY_GET : GSHMEMI_PROXY_PUT;
        r.flags = GSHMEMI_PROXY_F_DATA | (get ? GSHMEMI_PROXY_F_RESULT : GSHMEMI_PROXY_F_NBI);
        r.len = len;
        r.span = (len + GSHMEMI_PROXY_DATA_BYTES - 1) / GSHMEMI_PROXY_DATA_BYTES;
        if (gshmemi_proxy_ring_reserve(&s->f.ring, 1 + r.span, &t) != GSHMEMI_PROXY_RING_OK) goto fail;
        for (uint64_t k = 0; k < r.span; k++) {
            struct gshmemi_proxy_data *d = gshmemi_proxy_ring_data(&s->f.ring, t, k);
            memset(d->bytes, get ? 0xEE : 0, sizeof(d->bytes)); /* gets: the consumer must overwrite */
        }
        if (!get) {
            for (size_t k = 0; k < len; k++) buf[k] = data_byte(a->p, i, k);
            for (size_t k = 0; k < len; k++)
                gshmemi_proxy_ring_data_bytes(&s->f.ring, t, k / GSHMEMI_PROXY_DATA_BYTES)[k % GSHMEMI_PROXY_DATA_BYTES] =
                    buf[k];
        }
        gshmemi_proxy_ring_publish(&s->f.ring, t, &r);
        if (!get) continue;
        if (gshmemi_proxy_ring_wait_done(&s->f.ring, t) != GSHMEMI_PROXY_RING_OK) goto fail;
        for (size_t k = 0; k < len; k++) {
            uint8_t got = gshmemi_proxy_ring_data_bytes(&s->f.ring, t, k / GSHMEMI_PROXY_DATA_BYTES)[k % GSHMEMI_PROXY_DATA_BYTES];
            if (got != data_byte(a->p, i, k)) {
                s->producer_errors[a->p]++;
                break;
            }
        }
        gshmemi_proxy_ring_ack(&s->f.ring, t);
    }
    return NULL;
fail:
    s->producer_errors[a->p]++;
    return NULL;
}

static void data_error(struct data_storm *s, const char *what, const struct gshmemi_proxy_req *r)
{
    if (s->errors++ == 0)
        snprintf(s->first_error, sizeof(s->first_error), "ticket %llu: %s (pe %d index %llu)",
                 (unsigned long long)s->f.cons.head, what, r->pe, (unsigned long long)r->offset);
}

static void *data_consumer(void *arg)
{
    struct data_storm *s = arg;
    struct gshmemi_proxy_req r;
    uint8_t buf[GSHMEMI_PROXY_MAX_SPAN * GSHMEMI_PROXY_DATA_BYTES];
    while (s->served < (uint64_t)DATA_PRODUCERS * DATA_PER_PRODUCER) {
        if (!gshmemi_proxy_ring_peek(&s->f.ring, &s->f.cons, &r)) {
            gshmemi_proxy_ring_release(&s->f.ring, &s->f.cons);
            sched_yield();
            continue;
        }
        int64_t span = gshmemi_proxy_req_span(&r);
        if (r.pe < 0 || r.pe >= DATA_PRODUCERS || span < 0) {
            data_error(s, "bad producer or span", &r);
            break; /* cannot know how far to skip */
        }
        if (r.offset != s->next_index[r.pe]) data_error(s, "out of order, lost or duplicated", &r);
        s->next_index[r.pe] = r.offset + 1;
        uint64_t i = r.offset;
        if (span > 0) {
            size_t len = data_len(s, r.pe, i);
            if (r.len != len || (uint64_t)span != (len + GSHMEMI_PROXY_DATA_BYTES - 1) / GSHMEMI_PROXY_DATA_BYTES)
                data_error(s, "length or span differs", &r);
            if (r.op == GSHMEMI_PROXY_PUT) {
                gshmemi_proxy_ring_copy_data(&s->f.ring, s->f.cons.head, buf, len, 0);
                for (size_t k = 0; k < len; k++)
                    if (buf[k] != data_byte(r.pe, i, k)) {
                        data_error(s, "put data differs", &r);
                        break;
                    }
            } else {
                for (size_t k = 0; k < len; k++) buf[k] = data_byte(r.pe, i, k);
                gshmemi_proxy_ring_copy_data(&s->f.ring, s->f.cons.head, buf, len, 1);
            }
        } else if (r.op != GSHMEMI_PROXY_PUT || r.flags != GSHMEMI_PROXY_F_NBI) {
            data_error(s, "plain request differs", &r);
        }
        gshmemi_proxy_ring_complete_span(&s->f.ring, &s->f.cons, 0, (uint64_t)span);
        gshmemi_proxy_ring_release(&s->f.ring, &s->f.cons);
        s->served++;
    }
    while (s->errors == 0 && s->f.cons.freed < s->f.cons.head)
        gshmemi_proxy_ring_release(&s->f.ring, &s->f.cons), sched_yield();
    return NULL;
}

static void run_data_storm(uint32_t nslots)
{
    static struct data_storm s;
    memset(&s, 0, sizeof(s));
    ring_make(&s.f, nslots, 30ull * 1000000000u);
    uint64_t spans = nslots - 1 < GSHMEMI_PROXY_MAX_SPAN ? nslots - 1 : GSHMEMI_PROXY_MAX_SPAN;
    s.max_bytes = spans * GSHMEMI_PROXY_DATA_BYTES;
    pthread_t consumer, producers[DATA_PRODUCERS];
    struct data_arg args[DATA_PRODUCERS];
    cr_assert_eq(pthread_create(&consumer, NULL, data_consumer, &s), 0);
    for (int p = 0; p < DATA_PRODUCERS; p++) {
        args[p] = (struct data_arg){&s, p};
        cr_assert_eq(pthread_create(&producers[p], NULL, data_producer, &args[p]), 0);
    }
    for (int p = 0; p < DATA_PRODUCERS; p++) pthread_join(producers[p], NULL);
    pthread_join(consumer, NULL);
    cr_expect_eq(s.errors, 0, "%d consumer errors, first: %s", s.errors, s.first_error);
    for (int p = 0; p < DATA_PRODUCERS; p++) {
        cr_expect_eq(s.producer_errors[p], 0, "producer %d: %d bad gets or timeouts", p, s.producer_errors[p]);
        cr_expect_eq(s.next_index[p], DATA_PER_PRODUCER, "producer %d: %llu of %d requests seen", p,
                     (unsigned long long)s.next_index[p], DATA_PER_PRODUCER);
    }
    cr_expect_eq(*s.f.ring.tail, s.f.ring.counters->next, "every slot released: tail %llu, tickets %llu",
                 (unsigned long long)*s.f.ring.tail, (unsigned long long)s.f.ring.counters->next);
    ring_free(&s.f);
}

/* Spans up to 7 slots wrap an 8-slot ring on almost every request. */
Test(proxy_ring, data_slots_8_slots, .timeout = 120)
{
    run_data_storm(8);
}

Test(proxy_ring, data_slots_full_span, .timeout = 120)
{
    run_data_storm(128);
}

/* A get's data slots stay taken (their bytes are the answer) until it is acknowledged,
 * and stale RESULT flags in reused slots do not hold the tail. */
Test(proxy_ring, data_get_keeps_its_slots_until_read)
{
    struct ring_fixture f;
    ring_make(&f, 8, 50000000u);
    /* lap 0: eight RESULT requests fill every slot with a RESULT flag */
    for (uint64_t i = 0; i < 8; i++) {
        struct gshmemi_proxy_req r = request(1, i, GSHMEMI_PROXY_F_RESULT);
        uint64_t t, res;
        cr_assert_eq(gshmemi_proxy_ring_post(&f.ring, &r, &t), GSHMEMI_PROXY_RING_OK);
        cr_assert_eq(serve_all(&f), 1);
        cr_assert_eq(gshmemi_proxy_ring_wait(&f.ring, t, &res), GSHMEMI_PROXY_RING_OK);
    }
    gshmemi_proxy_ring_release(&f.ring, &f.cons);
    cr_assert_eq(*f.ring.tail, 8);
    /* lap 1: a get with 3 data slots, then a put with 2 */
    struct gshmemi_proxy_req get = request(2, 0, GSHMEMI_PROXY_F_DATA | GSHMEMI_PROXY_F_RESULT);
    get.op = GSHMEMI_PROXY_GET;
    get.len = 3 * GSHMEMI_PROXY_DATA_BYTES;
    get.span = 3;
    uint64_t tg, tp;
    cr_assert_eq(gshmemi_proxy_ring_reserve(&f.ring, 4, &tg), GSHMEMI_PROXY_RING_OK);
    for (int k = 0; k < 3; k++) gshmemi_proxy_ring_data(&f.ring, tg, k);
    gshmemi_proxy_ring_publish(&f.ring, tg, &get);
    struct gshmemi_proxy_req put = request(2, 1, GSHMEMI_PROXY_F_DATA | GSHMEMI_PROXY_F_NBI);
    put.len = 2 * GSHMEMI_PROXY_DATA_BYTES;
    put.span = 2;
    cr_assert_eq(gshmemi_proxy_ring_reserve(&f.ring, 3, &tp), GSHMEMI_PROXY_RING_OK);
    cr_assert_eq(tp, tg + 4);
    for (int k = 0; k < 2; k++) gshmemi_proxy_ring_data(&f.ring, tp, k);
    gshmemi_proxy_ring_publish(&f.ring, tp, &put);
    /* serve both: the get's answer goes into its slots */
    struct gshmemi_proxy_req r;
    uint8_t answer_bytes[3 * GSHMEMI_PROXY_DATA_BYTES];
    for (size_t k = 0; k < sizeof(answer_bytes); k++) answer_bytes[k] = (uint8_t)(k * 13 + 5);
    cr_assert(gshmemi_proxy_ring_peek(&f.ring, &f.cons, &r));
    cr_assert_eq(gshmemi_proxy_req_span(&r), 3);
    gshmemi_proxy_ring_copy_data(&f.ring, f.cons.head, answer_bytes, sizeof(answer_bytes), 1);
    gshmemi_proxy_ring_complete_span(&f.ring, &f.cons, 0, 3);
    cr_assert(gshmemi_proxy_ring_peek(&f.ring, &f.cons, &r));
    cr_assert_eq(r.offset, 1);
    gshmemi_proxy_ring_complete_span(&f.ring, &f.cons, 0, 2);
    cr_expect_eq(f.cons.head, 15);
    gshmemi_proxy_ring_release(&f.ring, &f.cons);
    cr_expect_eq(*f.ring.tail, 8, "the unread get holds its slots and those after it");
    cr_assert_eq(gshmemi_proxy_ring_wait_done(&f.ring, tg), GSHMEMI_PROXY_RING_OK);
    for (size_t k = 0; k < sizeof(answer_bytes); k++)
        cr_assert_eq(gshmemi_proxy_ring_data_bytes(&f.ring, tg, k / GSHMEMI_PROXY_DATA_BYTES)[k % GSHMEMI_PROXY_DATA_BYTES],
                     answer_bytes[k], "byte %zu", k);
    gshmemi_proxy_ring_ack(&f.ring, tg);
    gshmemi_proxy_ring_release(&f.ring, &f.cons);
    cr_expect_eq(*f.ring.tail, 15, "data slots with stale RESULT flags from lap 0 must not hold the tail");
    ring_free(&f);
}

Test(proxy_ring, bad_span_is_refused)
{
    struct gshmemi_proxy_req r = request(0, 0, GSHMEMI_PROXY_F_DATA);
    r.span = 0;
    cr_expect_eq(gshmemi_proxy_req_span(&r), -1);
    r.span = GSHMEMI_PROXY_MAX_SPAN + 1;
    cr_expect_eq(gshmemi_proxy_req_span(&r), -1);
    r.span = GSHMEMI_PROXY_MAX_SPAN;
    cr_expect_eq(gshmemi_proxy_req_span(&r), GSHMEMI_PROXY_MAX_SPAN);
    r.flags = 0;
    cr_expect_eq(gshmemi_proxy_req_span(&r), 0, "without DATA the span field means nothing");
}

Test(proxy_ring, layout)
{
    cr_expect_eq(sizeof(struct gshmemi_proxy_req), GSHMEMI_PROXY_SLOT_BYTES);
    cr_expect_eq(sizeof(struct gshmemi_proxy_data), GSHMEMI_PROXY_SLOT_BYTES);
    cr_expect_eq(offsetof(struct gshmemi_proxy_data, kind), offsetof(struct gshmemi_proxy_req, op),
                 "a data slot's kind is where a request has op");
    cr_expect_eq(sizeof(struct gshmemi_proxy_completion), 32);
    cr_expect_eq(sizeof(struct gshmemi_proxy_counters), 64);
}
