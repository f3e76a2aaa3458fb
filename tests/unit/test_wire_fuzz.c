/* The bootstrap codec fed truncated, corrupted, oversized and random input. Decoder
 * verdicts are checked against an independent reading of the format; every input lives
 * in a heap buffer of exactly its size, so a sanitized build catches any read past it.
 * Random input comes from a fixed-seed generator. The root fed the same:
 * test_bootstrap_root_fuzz.c. */
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

#include "root_harness.h"

#define JOB "job-F"
#define SECRET "fuzz secret"
#define RANDOM_ROUNDS 4000

static char err[GSHMEMI_WIRE_ERR_MAX];
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

/* What the ABORT decoder must say, read independently of it: 0 or -1. */
static int abort_oracle(const uint8_t *b, size_t len)
{
    if (len < GSHMEMI_WIRE_ABORT_SIZE) return -1;
    uint32_t kind = le32(b + 8);
    if (kind > GSHMEMI_WIRE_ABORT_MISSING) return -1;
    if (kind != GSHMEMI_WIRE_ABORT_MISSING) return len == GSHMEMI_WIRE_ABORT_SIZE ? 0 : -1;
    if (len < GSHMEMI_WIRE_ABORT_MISSING_FIXED) return -1;
    uint32_t nmissing = le32(b + 16), nlisted = le32(b + 20);
    if (nmissing == 0 || nlisted > nmissing || nlisted > GSHMEMI_WIRE_MISSING_LIST_MAX) return -1;
    if (len != GSHMEMI_WIRE_ABORT_MISSING_FIXED + 8 * (size_t)nlisted) return -1;
    int64_t prev = -1;
    for (uint32_t i = 0; i < nlisted; i++) {
        int32_t rank = (int32_t)le32(b + GSHMEMI_WIRE_ABORT_MISSING_FIXED + 8 * i);
        if (rank < 0 || rank <= prev || le32(b + GSHMEMI_WIRE_ABORT_MISSING_FIXED + 8 * i + 4) > 1) return -1;
        prev = rank;
    }
    return 0;
}

/* Random MISSING aborts, most with counts that fit the length, ranks that mostly ascend
 * and flags that are mostly 0 or 1, so every check is reached with random values. */
Test(fuzz_decode, random_missing_aborts)
{
    uint8_t b[GSHMEMI_WIRE_ABORT_MAX + 16];
    int accepted = 0;
    rng_seed(0x5eed0004);
    for (int round = 0; round < RANDOM_ROUNDS; round++) {
        uint32_t nlisted = rng_below(GSHMEMI_WIRE_MISSING_LIST_MAX + 3);
        size_t len = GSHMEMI_WIRE_ABORT_MISSING_FIXED + 8 * (size_t)nlisted;
        if (round % 7 == 0) len = rng_below(sizeof(b) + 1);
        rng_fill(b, sizeof(b));
        put32(b + 8, round % 11 ? GSHMEMI_WIRE_ABORT_MISSING : rng_below(6));
        put32(b + 16, round % 13 ? nlisted + rng_below(3) : rng_below(40));
        put32(b + 20, round % 17 ? nlisted : rng_below(40));
        int32_t rank = (int32_t)rng_below(4) - (round % 19 == 0);
        for (uint32_t i = 0; i < nlisted && GSHMEMI_WIRE_ABORT_MISSING_FIXED + 8 * i + 8 <= sizeof(b); i++) {
            rank += round % 23 ? 1 + (int32_t)rng_below(5) : (int32_t)rng_below(3) - 1;
            put32(b + GSHMEMI_WIRE_ABORT_MISSING_FIXED + 8 * i, (uint32_t)rank);
            put32(b + GSHMEMI_WIRE_ABORT_MISSING_FIXED + 8 * i + 4, round % 29 ? rng_below(2) : rng_below(4));
        }
        uint8_t *buf = exact(b, len);
        struct gshmemi_wire_abort a;
        err_poison();
        int rc = gshmemi_wire_abort_decode(buf, len, &a, err, sizeof(err));
        int want = abort_oracle(b, len);
        cr_assert_eq(rc == 0, want == 0, "round %d (%zu bytes): %s", round, len, rc ? err : "accepted");
        if (rc) {
            cr_assert_eq(rc, GSHMEMX_ERR_PROTOCOL);
            assert_reason("random MISSING");
        } else if (a.kind == GSHMEMI_WIRE_ABORT_MISSING) {
            accepted++;
            cr_assert_eq(a.nlisted, le32(b + 20));
            for (uint32_t i = 0; i < a.nlisted; i++)
                cr_assert_eq((uint32_t)a.missing[i].rank, le32(b + GSHMEMI_WIRE_ABORT_MISSING_FIXED + 8 * i));
        }
        free(buf);
    }
    cr_assert_gt(accepted, RANDOM_ROUNDS / 10, "the generator reaches the accepting path");
}

/* Every cut and every extension of a valid MISSING abort is refused. */
Test(fuzz_decode, missing_abort_cut_or_extended)
{
    struct gshmemi_wire_abort in = {.status = GSHMEMX_ERR_TIMEOUT, .origin = 0, .kind = GSHMEMI_WIRE_ABORT_MISSING,
                                    .round = 3, .nmissing = 5, .nlisted = 5},
                              out;
    for (int i = 0; i < 5; i++) in.missing[i].rank = 2 * i + 1, in.missing[i].joined = (uint32_t)(i & 1);
    uint8_t good[GSHMEMI_WIRE_ABORT_MAX + 64] = {0};
    size_t n = gshmemi_wire_abort_encode(&in, good);
    for (size_t len = 0; len <= n + 64; len++) {
        uint8_t *buf = exact(good, len);
        err_poison();
        int rc = gshmemi_wire_abort_decode(buf, len, &out, err, sizeof(err));
        if (len == n) cr_assert_eq(rc, 0, "%s", err);
        else cr_assert_eq(rc, GSHMEMX_ERR_PROTOCOL, "%zu of %zu bytes accepted", len, n);
        if (rc) assert_reason("cut MISSING");
        free(buf);
    }
}

Test(fuzz_decode, random_error_and_abort_payloads)
{
    uint8_t b[GSHMEMI_WIRE_ERROR_MAX + 64];
    rng_seed(0x5eed0003);
    for (int round = 0; round < RANDOM_ROUNDS; round++) {
        size_t len = round % 2 ? rng_below(sizeof(b) + 1) : rng_below(16);
        rng_fill(b, sizeof(b));
        if (round % 3 == 0) put32(b, 1 + rng_below(GSHMEMX_STATUS_COUNT));
        if (round % 5 == 0) put32(b + 8, rng_below(5));
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
        want = abort_oracle(b, len);
        err_poison();
        rc = gshmemi_wire_abort_decode(buf, len, &a, err, sizeof(err));
        cr_assert_eq(rc == 0, want == 0, "ABORT round %d (%zu bytes): %s", round, len, rc ? err : "accepted");
        if (rc) assert_reason("random ABORT");
        else cr_assert_eq(a.origin, (int32_t)le32(b + 4));
        free(buf);
    }
}
