/* The bootstrap codec and the rendezvous root fed truncated, corrupted, oversized and
 * random input. Decoder verdicts are checked against an independent reading of the
 * format; every input lives in a heap buffer of exactly its size, so a sanitized build
 * catches any read past it. Root tests talk raw sockets to an in-process root and
 * then let real clients join. Random input comes from a fixed-seed generator. */
#include <criterion/criterion.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bootstrap/bootstrap.h"
#include "bootstrap/tcp_root.h"
#include "bootstrap/wire.h"
#include "core/env.h"
#include "core/log.h"
#include "gshmem/status.h"

#define JOB "job-F"
#define SECRET "fuzz secret"
#define RANDOM_ROUNDS 4000

static char err[GSHMEMI_WIRE_ERR_MAX];
static uint64_t rng_state;

static void rng_seed(uint64_t seed)
{
    rng_state = seed;
}

/* xorshift64*: deterministic, so a failure replays. */
static uint64_t rng_next(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1dull;
}

static uint32_t rng_below(uint32_t n)
{
    return (uint32_t)(rng_next() % n);
}

static void rng_fill(uint8_t *p, size_t len)
{
    for (size_t i = 0; i < len; i++) p[i] = (uint8_t)rng_next();
}

/* A heap copy of exactly len bytes: a read past it is a sanitizer error. */
static uint8_t *exact(const uint8_t *src, size_t len)
{
    uint8_t *p = malloc(len);
    cr_assert(p != NULL || len == 0);
    if (len) memcpy(p, src, len);
    return p;
}

static uint32_t le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint16_t le16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

/* Before each decode: poison err so a missing terminator shows. */
static void err_poison(void)
{
    memset(err, 0x7f, sizeof(err));
}

/* An error verdict comes with a non-empty, terminated, printable reason. */
static void assert_reason(const char *what)
{
    cr_assert(memchr(err, '\0', sizeof(err)) != NULL, "%s: unterminated error string", what);
    cr_assert(err[0] != '\0', "%s: empty error string", what);
}

/* ---- valid frames of every type ---- */

struct frame {
    uint8_t bytes[GSHMEMI_WIRE_HEADER_SIZE + GSHMEMI_WIRE_HELLO_MAX];
    size_t len;
    unsigned type;
};

static void sample_hello(struct gshmemi_wire_hello *h)
{
    memset(h, 0, sizeof(*h));
    h->rank = 3;
    h->nranks = 8;
    h->pid = 4242;
    h->auth_method = GSHMEMI_WIRE_AUTH_HMAC_SHA256;
    h->auth_len = 32;
    strcpy(h->host, "fuzz-host.example");
    strcpy(h->job_id, JOB);
    for (int i = 0; i < 32; i++) h->auth[i] = (uint8_t)(0xa0 + i);
}

static void frame_make(struct frame *f, unsigned type)
{
    uint8_t *payload = f->bytes + GSHMEMI_WIRE_HEADER_SIZE;
    size_t n = 0;
    struct gshmemi_wire_hello hello;
    struct gshmemi_wire_abort a = {.status = GSHMEMX_ERR_ABORTED, .origin = 5, .kind = GSHMEMI_WIRE_ABORT_LOST};
    switch (type) {
    case GSHMEMI_WIRE_HELLO:
        sample_hello(&hello);
        n = gshmemi_wire_hello_encode(&hello, payload);
        break;
    case GSHMEMI_WIRE_ERROR:
        n = gshmemi_wire_error_encode(GSHMEMX_ERR_BOOTSTRAP, "rank 9 is out of range", payload);
        break;
    case GSHMEMI_WIRE_ABORT: n = gshmemi_wire_abort_encode(&a, payload); break;
    case GSHMEMI_WIRE_BYE: n = 0; break;
    default:
        n = gshmemi_wire_max_payload(type) < 64 ? gshmemi_wire_max_payload(type) : 64;
        for (size_t i = 0; i < n; i++) payload[i] = (uint8_t)(type * 31 + i);
    }
    struct gshmemi_wire_header h;
    gshmemi_wire_header_init(&h, type, type == GSHMEMI_WIRE_RESULT ? GSHMEMI_WIRE_ROOT : 1, type * 7u, (uint32_t)n);
    gshmemi_wire_header_encode(&h, f->bytes);
    f->len = GSHMEMI_WIRE_HEADER_SIZE + n;
    f->type = type;
}

/* Decodes a payload of type with its codec; 0 for types whose payload is opaque. */
static int payload_decode(unsigned type, const uint8_t *buf, size_t len)
{
    struct gshmemi_wire_hello hello;
    struct gshmemi_wire_error e;
    struct gshmemi_wire_abort a;
    err_poison();
    switch (type) {
    case GSHMEMI_WIRE_HELLO: return gshmemi_wire_hello_decode(buf, len, &hello, err, sizeof(err));
    case GSHMEMI_WIRE_ERROR: return gshmemi_wire_error_decode(buf, len, &e, err, sizeof(err));
    case GSHMEMI_WIRE_ABORT: return gshmemi_wire_abort_decode(buf, len, &a, err, sizeof(err));
    default: return 0;
    }
}

TestSuite(fuzz_decode, .timeout = 30);

Test(fuzz_decode, valid_frames_of_every_type_decode)
{
    for (unsigned t = GSHMEMI_WIRE_HELLO; t < GSHMEMI_WIRE_TYPE_END; t++) {
        struct frame f;
        frame_make(&f, t);
        uint8_t *buf = exact(f.bytes, f.len);
        struct gshmemi_wire_header h;
        err_poison();
        cr_assert_eq(gshmemi_wire_header_decode(buf, f.len, &h, err, sizeof(err)), 0, "%s: %s",
                     gshmemi_wire_type_name(t), err);
        cr_assert_eq(h.type, t);
        cr_assert_eq(h.length, f.len - GSHMEMI_WIRE_HEADER_SIZE);
        cr_assert_eq(payload_decode(t, buf + GSHMEMI_WIRE_HEADER_SIZE, h.length), 0, "%s: %s",
                     gshmemi_wire_type_name(t), err);
        free(buf);
    }
    struct frame f;
    frame_make(&f, GSHMEMI_WIRE_HELLO);
    struct gshmemi_wire_hello h;
    cr_assert_eq(gshmemi_wire_hello_decode(f.bytes + GSHMEMI_WIRE_HEADER_SIZE, f.len - GSHMEMI_WIRE_HEADER_SIZE, &h,
                                           err, sizeof(err)), 0);
    cr_assert_eq(h.rank, 3);
    cr_assert_eq(h.pid, 4242u);
    cr_assert_str_eq(h.host, "fuzz-host.example");
    cr_assert_str_eq(h.job_id, JOB);
    cr_assert_eq(h.auth_len, 32);
    cr_assert_eq(h.auth[31], 0xa0 + 31);
}

/* Every prefix of a header is refused as truncated; every prefix of a payload with a
 * codec is refused, except ERROR's: its text has no length of its own, so a shorter
 * ERROR is a valid shorter message (the header's length guards it, next test). */
Test(fuzz_decode, every_truncation_is_refused)
{
    for (unsigned t = GSHMEMI_WIRE_HELLO; t < GSHMEMI_WIRE_TYPE_END; t++) {
        struct frame f;
        frame_make(&f, t);
        for (size_t k = 0; k < GSHMEMI_WIRE_HEADER_SIZE; k++) {
            uint8_t *buf = exact(f.bytes, k);
            struct gshmemi_wire_header h;
            char want[64];
            err_poison();
            cr_assert_eq(gshmemi_wire_header_decode(buf, k, &h, err, sizeof(err)), GSHMEMX_ERR_PROTOCOL);
            snprintf(want, sizeof(want), "truncated header: %zu of 20 bytes", k);
            cr_assert_str_eq(err, want);
            free(buf);
        }
        size_t plen = f.len - GSHMEMI_WIRE_HEADER_SIZE;
        for (size_t k = 0; k < plen; k++) {
            uint8_t *buf = exact(f.bytes + GSHMEMI_WIRE_HEADER_SIZE, k);
            int rc = payload_decode(t, buf, k);
            if (t == GSHMEMI_WIRE_HELLO || t == GSHMEMI_WIRE_ABORT || (t == GSHMEMI_WIRE_ERROR && k < 4)) {
                cr_assert_eq(rc, GSHMEMX_ERR_PROTOCOL, "%s payload cut to %zu bytes", gshmemi_wire_type_name(t), k);
                assert_reason("truncated payload");
            }
            if (t == GSHMEMI_WIRE_HELLO && k >= GSHMEMI_WIRE_HELLO_FIXED)
                cr_assert(strstr(err, "HELLO lengths add up to") != NULL, "%s", err);
            if (t == GSHMEMI_WIRE_HELLO && k < GSHMEMI_WIRE_HELLO_FIXED)
                cr_assert(strstr(err, "truncated HELLO") != NULL, "%s", err);
            if (t == GSHMEMI_WIRE_ERROR && k >= 4) cr_assert_eq(rc, 0, "%s", err);
            free(buf);
        }
    }
}

/* Every cut of every frame, through the real receive path: a closed connection inside
 * a frame is a protocol error naming the peer, before any byte it is a lost peer. */
Test(fuzz_decode, every_truncated_frame_on_a_socket)
{
    for (unsigned t = GSHMEMI_WIRE_HELLO; t < GSHMEMI_WIRE_TYPE_END; t++) {
        struct frame f;
        frame_make(&f, t);
        for (size_t k = 0; k < f.len; k++) {
            int sv[2];
            cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
            if (k) cr_assert_eq(write(sv[1], f.bytes, k), (ssize_t)k);
            close(sv[1]);
            struct gshmemi_wire_header h;
            void *payload = (void *)1;
            err_poison();
            int rc = gshmemi_wire_recv(sv[0], &h, &payload, gshmemi_wire_deadline(5), "PE 7", err, sizeof(err));
            close(sv[0]);
            cr_assert_eq(payload, NULL, "no payload handed out on failure");
            char want[128];
            if (k == 0) {
                cr_assert_eq(rc, GSHMEMX_ERR_PEER_LOST, "%s", err);
                cr_assert_str_eq(err, "PE 7 closed the connection");
                continue;
            }
            cr_assert_eq(rc, GSHMEMX_ERR_PROTOCOL, "%s cut at %zu: %s", gshmemi_wire_type_name(t), k, err);
            snprintf(want, sizeof(want), "truncated message from PE 7: connection closed after %zu of %zu bytes", k,
                     k < GSHMEMI_WIRE_HEADER_SIZE ? (size_t)GSHMEMI_WIRE_HEADER_SIZE : f.len);
            cr_assert_str_eq(err, want);
        }
    }
}

/* What the decoder must say about a header, read independently of it. */
static int header_oracle(const uint8_t *b, size_t len, const char **why)
{
    if (len < GSHMEMI_WIRE_HEADER_SIZE) return *why = "truncated header", GSHMEMX_ERR_PROTOCOL;
    if (memcmp(b, "GSHB", 4) != 0) return *why = "bad magic", GSHMEMX_ERR_PROTOCOL;
    if (le16(b + 4) != GSHMEMI_WIRE_VERSION) return *why = "version mismatch", GSHMEMX_ERR_PROTOCOL;
    unsigned type = le16(b + 6);
    if (type == 0 || type >= GSHMEMI_WIRE_TYPE_END) return *why = "unknown message type", GSHMEMX_ERR_PROTOCOL;
    if (le32(b + 16) > gshmemi_wire_max_payload(type)) return *why = "exceeds the maximum", GSHMEMX_ERR_PROTOCOL;
    return *why = "", 0;
}

static void header_check(const uint8_t *src, size_t len, const char *what)
{
    uint8_t *buf = exact(src, len);
    struct gshmemi_wire_header h;
    const char *why;
    int want = header_oracle(src, len, &why);
    err_poison();
    int rc = gshmemi_wire_header_decode(buf, len, &h, err, sizeof(err));
    cr_assert_eq(rc, want, "%s: decoder says %d (%s), expected %d (%s)", what, rc, rc ? err : "", want, why);
    if (rc) {
        assert_reason(what);
        cr_assert(strstr(err, why) != NULL, "%s: '%s' lacks '%s'", what, err, why);
    } else {
        cr_assert_eq(h.type, le16(src + 6));
        cr_assert_eq((uint32_t)h.sender, le32(src + 8));
        cr_assert_eq(h.seq, le32(src + 12));
        cr_assert_eq(h.length, le32(src + 16));
    }
    free(buf);
}

/* All 255 wrong values of each of the 20 header bytes, for every type. */
Test(fuzz_decode, every_single_byte_header_corruption)
{
    int refused = 0, accepted = 0;
    for (unsigned t = GSHMEMI_WIRE_HELLO; t < GSHMEMI_WIRE_TYPE_END; t++) {
        struct frame f;
        frame_make(&f, t);
        for (int i = 0; i < GSHMEMI_WIRE_HEADER_SIZE; i++) {
            for (int v = 0; v < 256; v++) {
                if (v == f.bytes[i]) continue;
                uint8_t hdr[GSHMEMI_WIRE_HEADER_SIZE];
                memcpy(hdr, f.bytes, sizeof(hdr));
                hdr[i] = (uint8_t)v;
                char what[64];
                snprintf(what, sizeof(what), "%s byte %d = 0x%02x", gshmemi_wire_type_name(t), i, v);
                header_check(hdr, sizeof(hdr), what);
                const char *why;
                if (header_oracle(hdr, sizeof(hdr), &why)) refused++;
                else accepted++;
                if (i < 8) cr_assert(i >= 6 || why[0] != '\0', "%s: magic and version are always checked", what);
            }
        }
    }
    /* Sanity of the oracle itself: sender and seq are free, the rest is checked. */
    cr_assert_gt(refused, accepted);
    cr_assert_gt(accepted, 0);
}

Test(fuzz_decode, lengths_over_the_limit_up_to_uint32_max)
{
    for (unsigned t = GSHMEMI_WIRE_HELLO; t < GSHMEMI_WIRE_TYPE_END; t++) {
        uint32_t max = gshmemi_wire_max_payload(t);
        uint32_t lens[40];
        int n = 0;
        lens[n++] = max + 1;
        lens[n++] = max + 2;
        for (uint64_t l = 1; l <= UINT32_MAX; l <<= 1)
            if (l > max && n < 36) lens[n++] = (uint32_t)l;
        lens[n++] = 1u << 30; /* 1 GiB */
        lens[n++] = UINT32_MAX - 1;
        lens[n++] = UINT32_MAX;
        for (int i = 0; i < n; i++) {
            uint8_t hdr[GSHMEMI_WIRE_HEADER_SIZE];
            struct gshmemi_wire_header h;
            gshmemi_wire_header_init(&h, t, 0, 0, lens[i]);
            gshmemi_wire_header_encode(&h, hdr);
            uint8_t *buf = exact(hdr, sizeof(hdr));
            err_poison();
            cr_assert_eq(gshmemi_wire_header_decode(buf, sizeof(hdr), &h, err, sizeof(err)), GSHMEMX_ERR_PROTOCOL,
                         "%s with length %u", gshmemi_wire_type_name(t), lens[i]);
            char want[128];
            snprintf(want, sizeof(want), "%s payload of %u bytes exceeds the maximum of %u",
                     gshmemi_wire_type_name(t), lens[i], max);
            cr_assert_str_eq(err, want);
            free(buf);
        }
        uint8_t hdr[GSHMEMI_WIRE_HEADER_SIZE];
        struct gshmemi_wire_header h;
        gshmemi_wire_header_init(&h, t, 0, 0, max);
        gshmemi_wire_header_encode(&h, hdr);
        cr_assert_eq(gshmemi_wire_header_decode(hdr, sizeof(hdr), &h, err, sizeof(err)), 0, "the maximum itself");
    }
}

/* Payloads longer than their codec allows, and a valid HELLO with bytes appended. */
Test(fuzz_decode, oversized_payloads)
{
    static uint8_t big[GSHMEMI_WIRE_HELLO_MAX + 4096];
    rng_seed(7);
    rng_fill(big, sizeof(big));
    put32(big, GSHMEMX_ERR_BOOTSTRAP);
    put32(big + 8, GSHMEMI_WIRE_ABORT_LOST);
    size_t sizes[] = {GSHMEMI_WIRE_ERROR_MAX + 1, GSHMEMI_WIRE_HELLO_MAX, GSHMEMI_WIRE_HELLO_MAX + 1, sizeof(big)};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        uint8_t *buf = exact(big, sizes[i]);
        cr_assert_eq(payload_decode(GSHMEMI_WIRE_ERROR, buf, sizes[i]), GSHMEMX_ERR_PROTOCOL);
        cr_assert(strstr(err, "malformed ERROR payload") != NULL, "%s", err);
        cr_assert_eq(payload_decode(GSHMEMI_WIRE_ABORT, buf, sizes[i]), GSHMEMX_ERR_PROTOCOL);
        cr_assert(strstr(err, "malformed ABORT payload") != NULL, "%s", err);
        free(buf);
    }
    struct frame f;
    frame_make(&f, GSHMEMI_WIRE_HELLO);
    size_t plen = f.len - GSHMEMI_WIRE_HEADER_SIZE;
    for (size_t extra = 1; extra < 600; extra += 37) {
        uint8_t tmp[GSHMEMI_WIRE_HELLO_MAX + 600];
        memcpy(tmp, f.bytes + GSHMEMI_WIRE_HEADER_SIZE, plen);
        rng_fill(tmp + plen, extra);
        uint8_t *buf = exact(tmp, plen + extra);
        cr_assert_eq(payload_decode(GSHMEMI_WIRE_HELLO, buf, plen + extra), GSHMEMX_ERR_PROTOCOL);
        char want[128];
        snprintf(want, sizeof(want), "HELLO lengths add up to %zu bytes but the payload has %zu", plen, plen + extra);
        cr_assert_str_eq(err, want);
        free(buf);
    }
    /* HELLO length fields at their largest: the sum must not wrap or be trusted. */
    uint8_t fixed[GSHMEMI_WIRE_HELLO_FIXED] = {0};
    put16(fixed + 14, 0xffff);
    put16(fixed + 16, 0xffff);
    put16(fixed + 18, 0xffff);
    uint8_t *buf = exact(fixed, sizeof(fixed));
    cr_assert_eq(payload_decode(GSHMEMI_WIRE_HELLO, buf, sizeof(fixed)), GSHMEMX_ERR_PROTOCOL);
    cr_assert_str_eq(err, "HELLO lengths add up to 196625 bytes but the payload has 20");
    free(buf);
}

Test(fuzz_decode, small_error_buffers_stay_terminated)
{
    uint8_t junk[GSHMEMI_WIRE_HEADER_SIZE] = {'X', 'Y'};
    struct gshmemi_wire_header h;
    for (size_t errlen = 1; errlen < 24; errlen++) {
        char small[24];
        memset(small, 0x7f, sizeof(small));
        cr_assert_eq(gshmemi_wire_header_decode(junk, sizeof(junk), &h, small, errlen), GSHMEMX_ERR_PROTOCOL);
        cr_assert(memchr(small, '\0', errlen) != NULL, "errlen %zu", errlen);
        cr_assert_eq((unsigned char)small[errlen], 0x7f, "errlen %zu: wrote past the buffer", errlen);
    }
}

/* Random headers: half start with a valid magic and version so the type and length
 * checks see random values too. */
Test(fuzz_decode, random_headers)
{
    rng_seed(0x5eed0001);
    for (int round = 0; round < RANDOM_ROUNDS; round++) {
        uint8_t b[48];
        size_t len = rng_below(sizeof(b) + 1);
        rng_fill(b, sizeof(b));
        if (round & 1) {
            memcpy(b, "GSHB", 4);
            put16(b + 4, GSHMEMI_WIRE_VERSION);
            if (round & 2) put16(b + 6, (uint16_t)rng_below(GSHMEMI_WIRE_TYPE_END + 2));
            if (round & 4) put32(b + 16, rng_below(2 * GSHMEMI_WIRE_HELLO_MAX));
        }
        char what[32];
        snprintf(what, sizeof(what), "random header %d", round);
        header_check(b, len, what);
    }
}

/* What the HELLO decoder must say, read independently of it. */
static int hello_oracle(const uint8_t *b, size_t len)
{
    if (len < GSHMEMI_WIRE_HELLO_FIXED) return GSHMEMX_ERR_PROTOCOL;
    size_t auth = le16(b + 14), host = le16(b + 16), job = le16(b + 18);
    if (GSHMEMI_WIRE_HELLO_FIXED + host + job + auth != len) return GSHMEMX_ERR_PROTOCOL;
    if (auth > GSHMEMI_WIRE_AUTH_MAX || host >= GSHMEMI_WIRE_NAME_MAX || job >= GSHMEMI_WIRE_NAME_MAX)
        return GSHMEMX_ERR_PROTOCOL;
    const uint8_t *p = b + GSHMEMI_WIRE_HELLO_FIXED;
    if (memchr(p, 0, host + job) != NULL) return GSHMEMX_ERR_PROTOCOL;
    return 0;
}

/* Random HELLO payloads; most have length fields that add up, so the name and auth
 * checks are reached with random sizes and contents. */
Test(fuzz_decode, random_hello_payloads)
{
    static uint8_t b[GSHMEMI_WIRE_HELLO_MAX + 64];
    int accepted = 0;
    rng_seed(0x5eed0002);
    for (int round = 0; round < RANDOM_ROUNDS; round++) {
        size_t len = rng_below(sizeof(b) + 1);
        rng_fill(b, len);
        if (round % 4 != 0 && len >= GSHMEMI_WIRE_HELLO_FIXED) {
            size_t rest = len - GSHMEMI_WIRE_HELLO_FIXED;
            size_t host = rng_below((uint32_t)(rest < 300 ? rest : 300) + 1);
            size_t job = rng_below((uint32_t)(rest - host < 300 ? rest - host : 300) + 1);
            put16(b + 14, (uint16_t)(rest - host - job));
            put16(b + 16, (uint16_t)host);
            put16(b + 18, (uint16_t)job);
            for (size_t i = 0; round % 3 != 0 && i < host + job; i++)
                if (b[GSHMEMI_WIRE_HELLO_FIXED + i] == 0) b[GSHMEMI_WIRE_HELLO_FIXED + i] = 'a';
        }
        uint8_t *buf = exact(b, len);
        struct gshmemi_wire_hello h;
        err_poison();
        int rc = gshmemi_wire_hello_decode(buf, len, &h, err, sizeof(err));
        cr_assert_eq(rc, hello_oracle(b, len), "round %d (%zu bytes): %s", round, len, rc ? err : "accepted");
        if (rc) {
            assert_reason("random HELLO");
        } else {
            accepted++;
            cr_assert_eq(strlen(h.host), le16(b + 16));
            cr_assert_eq(strlen(h.job_id), le16(b + 18));
            cr_assert_eq(h.auth_len, le16(b + 14));
            cr_assert_eq(memcmp(h.auth, b + len - h.auth_len, h.auth_len), 0);
        }
        free(buf);
    }
    cr_assert_gt(accepted, RANDOM_ROUNDS / 10, "the generator reaches the accepting paths");
}

Test(fuzz_decode, random_error_and_abort_payloads)
{
    uint8_t b[GSHMEMI_WIRE_ERROR_MAX + 64];
    rng_seed(0x5eed0003);
    for (int round = 0; round < RANDOM_ROUNDS; round++) {
        size_t len = round % 2 ? rng_below(sizeof(b) + 1) : rng_below(16);
        rng_fill(b, sizeof(b));
        if (round % 3 == 0) put32(b, 1 + rng_below(GSHMEMX_STATUS_COUNT));
        if (round % 5 == 0) put32(b + 8, rng_below(3));
        uint8_t *buf = exact(b, len);
        struct gshmemi_wire_error e;
        int32_t status = (int32_t)le32(b);
        int want = len >= 4 && len <= GSHMEMI_WIRE_ERROR_MAX && status > 0 && status < GSHMEMX_STATUS_COUNT ? 0
                                                                                                            : -1;
        err_poison();
        int rc = gshmemi_wire_error_decode(buf, len, &e, err, sizeof(err));
        cr_assert_eq(rc == 0, want == 0, "ERROR round %d (%zu bytes): %s", round, len, rc ? err : "accepted");
        if (rc) {
            cr_assert_eq(rc, GSHMEMX_ERR_PROTOCOL);
            assert_reason("random ERROR");
        } else {
            cr_assert_eq(strlen(e.msg), len - 4, "the message keeps every byte");
            for (size_t i = 0; e.msg[i]; i++) cr_assert(e.msg[i] >= 0x20 && e.msg[i] <= 0x7e, "printable");
        }
        struct gshmemi_wire_abort a;
        want = len == GSHMEMI_WIRE_ABORT_SIZE && le32(b + 8) <= 1 ? 0 : -1;
        err_poison();
        rc = gshmemi_wire_abort_decode(buf, len, &a, err, sizeof(err));
        cr_assert_eq(rc == 0, want == 0, "ABORT round %d (%zu bytes): %s", round, len, rc ? err : "accepted");
        if (rc) assert_reason("random ABORT");
        else cr_assert_eq(a.origin, (int32_t)le32(b + 4));
        free(buf);
    }
}

/* ---- an in-process root fed the same ---- */

static struct gshmemi_tcp_root *root;
static char log_path[64];

static void root_up_with(const char *secret)
{
    snprintf(log_path, sizeof(log_path), "/tmp/gshmem-fuzz-test-%d.log", (int)getpid());
    unlink(log_path);
    cr_assert_eq(gshmemi_log_configure(GSHMEMI_LOG_WARN, "ALL", log_path), 0);
    struct gshmemi_tcp_root_config cfg = {.bind_host = "127.0.0.1", .nranks = 2, .job_id = JOB, .timeout = 1,
                                          .secret = secret, .secret_len = secret ? strlen(secret) : 0};
    cr_assert_eq(gshmemi_tcp_root_create(&cfg, &root), 0);
    cr_assert_eq(gshmemi_tcp_root_start_thread(root), 0);
}

static void root_up_open(void)
{
    root_up_with(NULL);
}

static void root_up_secret(void)
{
    root_up_with(SECRET);
}

static void root_down(void)
{
    gshmemi_tcp_root_stop(root);
    gshmemi_tcp_root_join(root);
    gshmemi_tcp_root_destroy(root);
    gshmemi_log_close();
    unlink(log_path);
}

/* 1 once the log holds a line containing both a and b; waits up to 5 s for the root thread. */
static int log_has(const char *a, const char *b)
{
    for (int tries = 0; tries < 500; tries++) {
        char line[2048];
        int found = 0;
        FILE *f = fopen(log_path, "r");
        while (f && !found && fgets(line, sizeof(line), f)) found = strstr(line, a) && strstr(line, b);
        if (f) fclose(f);
        if (found) return 1;
        nanosleep(&(struct timespec){.tv_nsec = 10000000}, NULL);
    }
    return 0;
}

static int raw_connect(int *local_port)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)gshmemi_tcp_root_port(root))};
    socklen_t sl = sizeof(sa);
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    cr_assert_geq(fd, 0);
    cr_assert_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    getsockname(fd, (struct sockaddr *)&sa, &sl);
    *local_port = ntohs(sa.sin_port);
    return fd;
}

static void raw_write(int fd, const void *buf, size_t len)
{
    cr_assert_eq(gshmemi_wire_write_all(fd, buf, len, gshmemi_wire_deadline(5), "root", err, sizeof(err)), 0, "%s",
                 err);
}

/* A header announcing length, then extra bytes, in one write: bytes that reach the
 * root only after it refused and closed would reset the connection under its ERROR. */
static void raw_header(int fd, unsigned type, uint32_t length, const void *extra, size_t extra_len)
{
    struct gshmemi_wire_header h;
    uint8_t buf[GSHMEMI_WIRE_HEADER_SIZE + GSHMEMI_WIRE_HELLO_MAX + 64];
    cr_assert_leq(extra_len, sizeof(buf) - GSHMEMI_WIRE_HEADER_SIZE);
    gshmemi_wire_header_init(&h, type, 0, 0, length);
    gshmemi_wire_header_encode(&h, buf);
    if (extra_len) memcpy(buf + GSHMEMI_WIRE_HEADER_SIZE, extra, extra_len);
    raw_write(fd, buf, GSHMEMI_WIRE_HEADER_SIZE + extra_len);
}

static size_t hello_payload(int rank, unsigned method, uint8_t *out)
{
    struct gshmemi_wire_hello h = {.rank = rank, .nranks = 2, .pid = 1, .auth_method = (uint16_t)method};
    strcpy(h.host, "fuzz-host");
    strcpy(h.job_id, JOB);
    return gshmemi_wire_hello_encode(&h, out);
}

/* Reads the root's answer: an ERROR with status (then EOF); returns its text. */
static const char *raw_expect_refusal(int fd, int status)
{
    static struct gshmemi_wire_error e;
    struct gshmemi_wire_header h;
    void *payload;
    cr_assert_eq(gshmemi_wire_recv(fd, &h, &payload, gshmemi_wire_deadline(5), "root", err, sizeof(err)), 0, "%s",
                 err);
    cr_assert_eq(h.type, GSHMEMI_WIRE_ERROR, "got %s", gshmemi_wire_type_name(h.type));
    cr_assert_eq(gshmemi_wire_error_decode(payload, h.length, &e, err, sizeof(err)), 0, "%s", err);
    free(payload);
    cr_assert_eq(e.status, status, "status %d: %s", e.status, e.msg);
    char c;
    cr_assert_eq(read(fd, &c, 1), 0, "the root closes a refused connection");
    close(fd);
    return e.msg;
}

/* The root's log has a line naming this connection's address and saying what. */
static void assert_logged(int port, const char *prefix, const char *what)
{
    char peer[96];
    snprintf(peer, sizeof(peer), "%s127.0.0.1:%d", prefix, port);
    cr_assert(log_has(peer, what), "the root's log lacks a line with '%s' and '%s'", peer, what);
}

struct client {
    pthread_t thread;
    int rank;
    const char *secret;
    char addr[64];
    int rc;
};

static void *client_main(void *arg)
{
    struct client *c = arg;
    struct gshmemi_env env = {.bootstrap = GSHMEMI_BOOTSTRAP_TCP, .bootstrap_root = c->addr, .rank = c->rank,
                              .nranks = 2, .job_id = JOB, .timeout = 10, .node_id = "n",
                              .bootstrap_secret = c->secret};
    struct gshmemi_bootstrap bs;
    c->rc = gshmemi_bootstrap_init(&env, &bs);
    if (c->rc == 0) {
        int in = 0x5a00 + c->rank, out[2] = {-1, -1};
        c->rc = bs.ops->allgather(&bs, &in, out, sizeof(in));
        if (c->rc == 0 && (out[0] != 0x5a00 || out[1] != 0x5a01)) c->rc = -1;
        gshmemi_bootstrap_fini(&bs);
    }
    return NULL;
}

/* Real PEs 0 and 1 join and exchange: the root is still serving. */
static void assert_real_clients_join(const char *secret)
{
    struct client cs[2] = {{.rank = 0, .secret = secret}, {.rank = 1, .secret = secret}};
    for (int i = 0; i < 2; i++) {
        snprintf(cs[i].addr, sizeof(cs[i].addr), "%s", gshmemi_tcp_root_address(root));
        cr_assert_eq(pthread_create(&cs[i].thread, NULL, client_main, &cs[i]), 0);
    }
    for (int i = 0; i < 2; i++) pthread_join(cs[i].thread, NULL);
    cr_assert_eq(cs[0].rc, 0, "PE 0 after the garbage: %s", gshmemx_status_name(cs[0].rc));
    cr_assert_eq(cs[1].rc, 0, "PE 1 after the garbage: %s", gshmemx_status_name(cs[1].rc));
}

TestSuite(fuzz_root, .init = root_up_open, .fini = root_down, .timeout = 30);

Test(fuzz_root, truncated_header_then_close)
{
    uint8_t hdr[GSHMEMI_WIRE_HEADER_SIZE];
    struct gshmemi_wire_header h;
    gshmemi_wire_header_init(&h, GSHMEMI_WIRE_HELLO, 0, 0, 40);
    gshmemi_wire_header_encode(&h, hdr);
    for (size_t cut = 1; cut < GSHMEMI_WIRE_HEADER_SIZE; cut += 6) {
        int port;
        int fd = raw_connect(&port);
        raw_write(fd, hdr, cut);
        close(fd);
        char what[64];
        snprintf(what, sizeof(what), ": connection closed inside a message (%zu bytes in)", cut);
        assert_logged(port, "bootstrap root: ", what);
    }
    assert_real_clients_join(NULL);
}

Test(fuzz_root, gib_header_then_a_few_bytes)
{
    int port;
    int fd = raw_connect(&port);
    raw_header(fd, GSHMEMI_WIRE_HELLO, 1u << 30, "abcdefgh", 8);
    char want[128];
    snprintf(want, sizeof(want), "HELLO payload of 1073741824 bytes exceeds the maximum of %d", GSHMEMI_WIRE_HELLO_MAX);
    cr_assert_str_eq(raw_expect_refusal(fd, GSHMEMX_ERR_PROTOCOL), want);
    assert_logged(port, "refused connection from ", want);

    fd = raw_connect(&port);
    raw_header(fd, GSHMEMI_WIRE_GATHER, 1u << 30, "abcdefgh", 8);
    cr_assert_str_eq(raw_expect_refusal(fd, GSHMEMX_ERR_PROTOCOL),
                     "GATHER payload of 1073741824 bytes exceeds the maximum of 268435456");
    assert_logged(port, "refused connection from ", "GATHER payload of 1073741824 bytes");

    /* Within GATHER's limit, but no PE yet: refused before anything is allocated. */
    fd = raw_connect(&port);
    raw_header(fd, GSHMEMI_WIRE_GATHER, 200u << 20, "abcdefgh", 8);
    cr_assert_str_eq(raw_expect_refusal(fd, GSHMEMX_ERR_PROTOCOL), "expected HELLO, got GATHER");
    assert_logged(port, "refused connection from ", "expected HELLO, got GATHER");

    /* A legal HELLO length, a few bytes, then silence: dropped at the HELLO deadline. */
    fd = raw_connect(&port);
    raw_header(fd, GSHMEMI_WIRE_HELLO, GSHMEMI_WIRE_HELLO_MAX, "abcdefgh", 8);
    cr_assert_str_eq(raw_expect_refusal(fd, GSHMEMX_ERR_TIMEOUT), "no HELLO within 1 s");
    assert_logged(port, "refused connection from ", "no HELLO within 1 s");

    /* The same, closed instead. */
    fd = raw_connect(&port);
    raw_header(fd, GSHMEMI_WIRE_HELLO, GSHMEMI_WIRE_HELLO_MAX, "abcdefgh", 8);
    close(fd);
    assert_logged(port, "bootstrap root: ", ": connection closed inside a message (28 bytes in)");
    assert_real_clients_join(NULL);
}

Test(fuzz_root, random_garbage)
{
    rng_seed(0x5eed0004);
    for (int round = 0; round < 12; round++) {
        uint8_t junk[256];
        size_t len = GSHMEMI_WIRE_HEADER_SIZE + rng_below(sizeof(junk) - GSHMEMI_WIRE_HEADER_SIZE);
        rng_fill(junk, len);
        if (junk[0] == 'G') junk[0] = 'g'; /* never the magic by chance */
        int port;
        int fd = raw_connect(&port);
        raw_write(fd, junk, len);
        char want[96];
        snprintf(want, sizeof(want), "not a gshmem bootstrap message (bad magic 0x%08x)", le32(junk));
        cr_assert_str_eq(raw_expect_refusal(fd, GSHMEMX_ERR_PROTOCOL), want);
        assert_logged(port, "refused connection from ", want);
    }
    /* Right magic, random rest: whatever the reason, a refusal naming the peer. */
    for (int round = 0; round < 12; round++) {
        uint8_t junk[64];
        rng_fill(junk, sizeof(junk));
        memcpy(junk, "GSHB", 4);
        if (round % 2) put16(junk + 4, GSHMEMI_WIRE_VERSION);
        int port;
        int fd = raw_connect(&port);
        raw_write(fd, junk, sizeof(junk));
        const char *msg = raw_expect_refusal(fd, GSHMEMX_ERR_PROTOCOL);
        cr_assert(msg[0] != '\0');
        assert_logged(port, "refused connection from ", msg);
    }
    assert_real_clients_join(NULL);
}

Test(fuzz_root, hello_with_trailing_garbage)
{
    uint8_t buf[GSHMEMI_WIRE_HELLO_MAX];
    size_t n = hello_payload(0, GSHMEMI_WIRE_AUTH_NONE, buf);
    rng_seed(0x5eed0005);
    rng_fill(buf + n, 17);
    int port;
    int fd = raw_connect(&port);
    raw_header(fd, GSHMEMI_WIRE_HELLO, (uint32_t)(n + 17), buf, n + 17);
    char want[96];
    snprintf(want, sizeof(want), "HELLO lengths add up to %zu bytes but the payload has %zu", n, n + 17);
    cr_assert_str_eq(raw_expect_refusal(fd, GSHMEMX_ERR_PROTOCOL), want);
    assert_logged(port, "refused connection from ", want);
    assert_real_clients_join(NULL);
}

/* A joined PE that then sends garbage is a broken PE: by design the job is over (the
 * others get ABORT), and the root says so to a PE that comes later instead of hanging. */
Test(fuzz_root, joined_pe_sending_garbage_ends_the_job)
{
    uint8_t buf[GSHMEMI_WIRE_HELLO_MAX];
    size_t n = hello_payload(0, GSHMEMI_WIRE_AUTH_NONE, buf);
    int port;
    int fd = raw_connect(&port);
    raw_header(fd, GSHMEMI_WIRE_HELLO, (uint32_t)n, buf, n);
    struct gshmemi_wire_header h;
    void *payload;
    cr_assert_eq(gshmemi_wire_recv(fd, &h, &payload, gshmemi_wire_deadline(5), "root", err, sizeof(err)), 0, "%s",
                 err);
    cr_assert_eq(h.type, GSHMEMI_WIRE_WELCOME);
    free(payload);
    raw_write(fd, "\x01\x02\x03\x04 this is not a frame at all", 32);
    char lost[96];
    snprintf(lost, sizeof(lost), "lost PE 0 (fuzz-host pid 1, 127.0.0.1:%d)", port);
    cr_assert(log_has(lost, "not a gshmem bootstrap message (bad magic 0x04030201)"), "no '%s' in the log", lost);
    close(fd);
    struct client late = {.rank = 1};
    snprintf(late.addr, sizeof(late.addr), "%s", gshmemi_tcp_root_address(root));
    client_main(&late);
    cr_assert_eq(late.rc, GSHMEMX_ERR_BOOTSTRAP, "%s", gshmemx_status_name(late.rc));
    cr_assert(log_has("refused connection from 127.0.0.1:", "the job was already aborted"));
}

TestSuite(fuzz_secret_root, .init = root_up_secret, .fini = root_down, .timeout = 30);

/* Garbage instead of the AUTH that answers the CHALLENGE: refused, the job goes on. */
Test(fuzz_secret_root, hello_then_garbage)
{
    uint8_t buf[GSHMEMI_WIRE_HELLO_MAX];
    size_t n = hello_payload(1, GSHMEMI_WIRE_AUTH_HMAC_SHA256, buf);
    rng_seed(0x5eed0006);
    for (int round = 0; round < 4; round++) {
        int port;
        int fd = raw_connect(&port);
        raw_header(fd, GSHMEMI_WIRE_HELLO, (uint32_t)n, buf, n);
        struct gshmemi_wire_header h;
        void *payload;
        cr_assert_eq(gshmemi_wire_recv(fd, &h, &payload, gshmemi_wire_deadline(5), "root", err, sizeof(err)), 0,
                     "%s", err);
        cr_assert_eq(h.type, GSHMEMI_WIRE_CHALLENGE, "got %s", gshmemi_wire_type_name(h.type));
        free(payload);
        uint8_t junk[48];
        rng_fill(junk, sizeof(junk));
        junk[0] = 'x';
        if (round == 3) { /* a valid header of the wrong kind, then junk */
            struct gshmemi_wire_header g;
            gshmemi_wire_header_init(&g, GSHMEMI_WIRE_GATHER, 1, 0, 28);
            gshmemi_wire_header_encode(&g, junk);
        }
        raw_write(fd, junk, sizeof(junk));
        const char *want = "expected AUTH, got GATHER";
        char bad_magic[96];
        snprintf(bad_magic, sizeof(bad_magic), "not a gshmem bootstrap message (bad magic 0x%08x)", le32(junk));
        if (round != 3) want = bad_magic;
        cr_assert_str_eq(raw_expect_refusal(fd, GSHMEMX_ERR_PROTOCOL), want);
        assert_logged(port, "refused connection from ", want);
    }
    assert_real_clients_join(SECRET);
}
