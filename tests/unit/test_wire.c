/* The bootstrap frame codec and its deadline-bounded socket helpers. */
#include <criterion/criterion.h>

#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bootstrap/wire.h"
#include "gshmem/status.h"

static char err[GSHMEMI_WIRE_ERR_MAX];

static void encode(unsigned type, int32_t sender, uint32_t seq, uint32_t length, uint8_t out[GSHMEMI_WIRE_HEADER_SIZE])
{
    struct gshmemi_wire_header h;
    gshmemi_wire_header_init(&h, type, sender, seq, length);
    gshmemi_wire_header_encode(&h, out);
}

TestSuite(wire_header);

Test(wire_header, round_trip_and_byte_layout)
{
    uint8_t buf[GSHMEMI_WIRE_HEADER_SIZE];
    struct gshmemi_wire_header h;
    encode(GSHMEMI_WIRE_GATHER, 0x01020304, 0xa1b2c3d4, 0x00010203, buf);
    cr_assert_eq(memcmp(buf, "GSHB", 4), 0, "magic travels as the bytes GSHB");
    cr_assert_eq(buf[4], GSHMEMI_WIRE_VERSION);
    cr_assert_eq(buf[5], 0);
    cr_assert_eq(buf[6], GSHMEMI_WIRE_GATHER);
    cr_assert_eq(buf[8], 0x04, "sender is little-endian");
    cr_assert_eq(buf[11], 0x01);
    cr_assert_eq(buf[12], 0xd4, "seq is little-endian");
    cr_assert_eq(buf[16], 0x03, "length is little-endian");
    cr_assert_eq(buf[19], 0x00);
    cr_assert_eq(gshmemi_wire_header_decode(buf, sizeof(buf), &h, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(h.magic, GSHMEMI_WIRE_MAGIC);
    cr_assert_eq(h.version, GSHMEMI_WIRE_VERSION);
    cr_assert_eq(h.type, GSHMEMI_WIRE_GATHER);
    cr_assert_eq(h.sender, 0x01020304);
    cr_assert_eq(h.seq, 0xa1b2c3d4u);
    cr_assert_eq(h.length, 0x00010203u);
}

Test(wire_header, root_sender_is_negative)
{
    uint8_t buf[GSHMEMI_WIRE_HEADER_SIZE];
    struct gshmemi_wire_header h;
    encode(GSHMEMI_WIRE_RESULT, GSHMEMI_WIRE_ROOT, 7, 0, buf);
    cr_assert_eq(gshmemi_wire_header_decode(buf, sizeof(buf), &h, err, sizeof(err)), 0);
    cr_assert_eq(h.sender, GSHMEMI_WIRE_ROOT);
}

Test(wire_header, bad_magic)
{
    uint8_t buf[GSHMEMI_WIRE_HEADER_SIZE];
    struct gshmemi_wire_header h;
    encode(GSHMEMI_WIRE_HELLO, 0, 0, 0, buf);
    buf[0] = 'X';
    cr_assert_eq(gshmemi_wire_header_decode(buf, sizeof(buf), &h, err, sizeof(err)), GSHMEMX_ERR_PROTOCOL);
    cr_assert(strstr(err, "bad magic") != NULL, "%s", err);
}

Test(wire_header, version_mismatch_names_both_versions)
{
    uint8_t buf[GSHMEMI_WIRE_HEADER_SIZE];
    struct gshmemi_wire_header h;
    encode(GSHMEMI_WIRE_HELLO, 0, 0, 0, buf);
    buf[4] = GSHMEMI_WIRE_VERSION + 1;
    cr_assert_eq(gshmemi_wire_header_decode(buf, sizeof(buf), &h, err, sizeof(err)), GSHMEMX_ERR_PROTOCOL);
    char want[128];
    snprintf(want, sizeof(want), "peer speaks version %d, this library version %d", GSHMEMI_WIRE_VERSION + 1,
             GSHMEMI_WIRE_VERSION);
    cr_assert(strstr(err, "version mismatch") != NULL, "%s", err);
    cr_assert(strstr(err, want) != NULL, "%s", err);
}

Test(wire_header, unknown_types)
{
    uint8_t buf[GSHMEMI_WIRE_HEADER_SIZE];
    struct gshmemi_wire_header h;
    unsigned bad[] = {0, GSHMEMI_WIRE_TYPE_END, 0xffff};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        encode(bad[i], 0, 0, 0, buf);
        cr_assert_eq(gshmemi_wire_header_decode(buf, sizeof(buf), &h, err, sizeof(err)), GSHMEMX_ERR_PROTOCOL);
        cr_assert(strstr(err, "unknown message type") != NULL, "%s", err);
    }
    for (unsigned t = GSHMEMI_WIRE_HELLO; t < GSHMEMI_WIRE_TYPE_END; t++) {
        encode(t, 0, 0, 0, buf);
        cr_assert_eq(gshmemi_wire_header_decode(buf, sizeof(buf), &h, err, sizeof(err)), 0, "type %u: %s", t, err);
        cr_assert_str_neq(gshmemi_wire_type_name(t), "unknown");
    }
}

Test(wire_header, oversized_lengths)
{
    uint8_t buf[GSHMEMI_WIRE_HEADER_SIZE];
    struct gshmemi_wire_header h;
    encode(GSHMEMI_WIRE_HELLO, 0, 0, GSHMEMI_WIRE_HELLO_MAX + 1, buf);
    cr_assert_eq(gshmemi_wire_header_decode(buf, sizeof(buf), &h, err, sizeof(err)), GSHMEMX_ERR_PROTOCOL);
    cr_assert(strstr(err, "HELLO payload") != NULL && strstr(err, "exceeds") != NULL, "%s", err);
    encode(GSHMEMI_WIRE_GATHER, 0, 0, GSHMEMI_WIRE_MAX_PAYLOAD + 1u, buf);
    cr_assert_eq(gshmemi_wire_header_decode(buf, sizeof(buf), &h, err, sizeof(err)), GSHMEMX_ERR_PROTOCOL);
    encode(GSHMEMI_WIRE_GATHER, 0, 0, GSHMEMI_WIRE_MAX_PAYLOAD, buf);
    cr_assert_eq(gshmemi_wire_header_decode(buf, sizeof(buf), &h, err, sizeof(err)), 0, "%s", err);
    encode(GSHMEMI_WIRE_BYE, 0, 0, 1, buf);
    cr_assert_eq(gshmemi_wire_header_decode(buf, sizeof(buf), &h, err, sizeof(err)), GSHMEMX_ERR_PROTOCOL);
    encode(GSHMEMI_WIRE_ABORT, 0, 0, 0xffffffffu, buf);
    cr_assert_eq(gshmemi_wire_header_decode(buf, sizeof(buf), &h, err, sizeof(err)), GSHMEMX_ERR_PROTOCOL);
}

Test(wire_header, truncated_buffer)
{
    uint8_t buf[GSHMEMI_WIRE_HEADER_SIZE];
    struct gshmemi_wire_header h;
    encode(GSHMEMI_WIRE_HELLO, 0, 0, 0, buf);
    for (size_t len = 0; len < GSHMEMI_WIRE_HEADER_SIZE; len++) {
        cr_assert_eq(gshmemi_wire_header_decode(buf, len, &h, err, sizeof(err)), GSHMEMX_ERR_PROTOCOL);
        cr_assert(strstr(err, "truncated") != NULL, "%s", err);
    }
}

TestSuite(wire_payload);

static struct gshmemi_wire_hello sample_hello(void)
{
    struct gshmemi_wire_hello h = {.rank = 3, .nranks = 8, .pid = 4242, .auth_len = 5};
    strcpy(h.host, "node-17.example");
    strcpy(h.job_id, "job:xyz");
    memcpy(h.auth, "\x01\x02\x00\xff\x7f", 5);
    return h;
}

Test(wire_payload, hello_round_trip)
{
    struct gshmemi_wire_hello in = sample_hello(), out;
    uint8_t buf[GSHMEMI_WIRE_HELLO_MAX];
    memset(&out, 0x5a, sizeof(out));
    size_t n = gshmemi_wire_hello_encode(&in, buf);
    cr_assert_eq(n, GSHMEMI_WIRE_HELLO_FIXED + strlen(in.host) + strlen(in.job_id) + 5);
    cr_assert_eq(gshmemi_wire_hello_decode(buf, n, &out, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(out.rank, 3);
    cr_assert_eq(out.nranks, 8);
    cr_assert_eq(out.pid, 4242u);
    cr_assert_eq(out.auth_method, GSHMEMI_WIRE_AUTH_NONE);
    cr_assert_str_eq(out.host, in.host);
    cr_assert_str_eq(out.job_id, in.job_id);
    cr_assert_eq(out.auth_len, 5);
    cr_assert_eq(memcmp(out.auth, in.auth, 5), 0);
}

Test(wire_payload, hello_malformed)
{
    struct gshmemi_wire_hello in = sample_hello(), out;
    uint8_t buf[GSHMEMI_WIRE_HELLO_MAX];
    size_t n = gshmemi_wire_hello_encode(&in, buf);
    cr_assert_eq(gshmemi_wire_hello_decode(buf, 10, &out, err, sizeof(err)), GSHMEMX_ERR_PROTOCOL);
    cr_assert(strstr(err, "truncated HELLO") != NULL, "%s", err);
    cr_assert_eq(gshmemi_wire_hello_decode(buf, n - 1, &out, err, sizeof(err)), GSHMEMX_ERR_PROTOCOL);
    cr_assert(strstr(err, "add up") != NULL, "%s", err);
    buf[GSHMEMI_WIRE_HELLO_FIXED + 2] = '\0'; /* a NUL inside the host name */
    cr_assert_eq(gshmemi_wire_hello_decode(buf, n, &out, err, sizeof(err)), GSHMEMX_ERR_PROTOCOL);
    cr_assert(strstr(err, "host name") != NULL, "%s", err);
}

Test(wire_payload, hello_oversized_auth)
{
    uint8_t buf[GSHMEMI_WIRE_HELLO_FIXED + GSHMEMI_WIRE_AUTH_MAX + 1] = {0};
    struct gshmemi_wire_hello out;
    buf[14] = (GSHMEMI_WIRE_AUTH_MAX + 1) & 0xff;
    buf[15] = (GSHMEMI_WIRE_AUTH_MAX + 1) >> 8;
    cr_assert_eq(gshmemi_wire_hello_decode(buf, sizeof(buf), &out, err, sizeof(err)), GSHMEMX_ERR_PROTOCOL);
    cr_assert(strstr(err, "auth") != NULL, "%s", err);
}

Test(wire_payload, error_round_trip_and_checks)
{
    uint8_t buf[GSHMEMI_WIRE_ERROR_MAX];
    struct gshmemi_wire_error e;
    size_t n = gshmemi_wire_error_encode(GSHMEMX_ERR_MISMATCH, "PE 1 sent 8 bytes\n", buf);
    cr_assert_eq(gshmemi_wire_error_decode(buf, n, &e, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(e.status, GSHMEMX_ERR_MISMATCH);
    cr_assert_str_eq(e.msg, "PE 1 sent 8 bytes?", "control characters are neutralised");
    n = gshmemi_wire_error_encode(0, "not an error", buf);
    cr_assert_eq(gshmemi_wire_error_decode(buf, n, &e, err, sizeof(err)), GSHMEMX_ERR_PROTOCOL);
    n = gshmemi_wire_error_encode(GSHMEMX_STATUS_COUNT, "x", buf);
    cr_assert_eq(gshmemi_wire_error_decode(buf, n, &e, err, sizeof(err)), GSHMEMX_ERR_PROTOCOL);
    cr_assert_eq(gshmemi_wire_error_decode(buf, 3, &e, err, sizeof(err)), GSHMEMX_ERR_PROTOCOL);
}

Test(wire_payload, abort_round_trip_and_checks)
{
    struct gshmemi_wire_abort in = {.status = -5, .origin = 12, .kind = GSHMEMI_WIRE_ABORT_LOST}, out;
    uint8_t buf[GSHMEMI_WIRE_ABORT_SIZE];
    cr_assert_eq(gshmemi_wire_abort_encode(&in, buf), GSHMEMI_WIRE_ABORT_SIZE);
    cr_assert_eq(gshmemi_wire_abort_decode(buf, sizeof(buf), &out, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(out.status, -5);
    cr_assert_eq(out.origin, 12);
    cr_assert_eq(out.kind, GSHMEMI_WIRE_ABORT_LOST);
    cr_assert_eq(gshmemi_wire_abort_decode(buf, sizeof(buf) - 1, &out, err, sizeof(err)), GSHMEMX_ERR_PROTOCOL);
    buf[8] = 9;
    cr_assert_eq(gshmemi_wire_abort_decode(buf, sizeof(buf), &out, err, sizeof(err)), GSHMEMX_ERR_PROTOCOL);
    cr_assert(strstr(err, "kind") != NULL, "%s", err);
}

static struct gshmemi_wire_abort sample_missing(void)
{
    struct gshmemi_wire_abort a = {.status = GSHMEMX_ERR_TIMEOUT, .origin = 4, .kind = GSHMEMI_WIRE_ABORT_MISSING,
                                   .round = 0x01020304, .nmissing = 40, .nlisted = 3};
    a.missing[0].rank = 1;
    a.missing[0].joined = 1;
    a.missing[1].rank = 6;
    a.missing[2].rank = 0x01000007;
    a.missing[2].joined = 1;
    return a;
}

Test(wire_payload, abort_missing_round_trip_and_layout)
{
    struct gshmemi_wire_abort in = sample_missing(), out;
    uint8_t buf[GSHMEMI_WIRE_ABORT_MAX + 8];
    memset(buf, 0xcc, sizeof(buf));
    memset(&out, 0x5a, sizeof(out));
    size_t n = gshmemi_wire_abort_encode(&in, buf);
    cr_assert_eq(n, GSHMEMI_WIRE_ABORT_MISSING_FIXED + 3 * 8);
    cr_assert_eq(buf[n], 0xcc, "nothing written past the encoded length");
    cr_assert_eq(buf[8], GSHMEMI_WIRE_ABORT_MISSING);
    cr_assert_eq(buf[12], 0x04, "round is little-endian");
    cr_assert_eq(buf[16], 40);
    cr_assert_eq(buf[20], 3);
    cr_assert_eq(buf[24 + 16 + 3], 0x01, "the third rank's top byte");
    cr_assert_eq(gshmemi_wire_abort_decode(buf, n, &out, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(out.status, GSHMEMX_ERR_TIMEOUT);
    cr_assert_eq(out.origin, 4);
    cr_assert_eq(out.kind, GSHMEMI_WIRE_ABORT_MISSING);
    cr_assert_eq(out.round, 0x01020304u);
    cr_assert_eq(out.nmissing, 40u);
    cr_assert_eq(out.nlisted, 3u);
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(out.missing[i].rank, in.missing[i].rank, "entry %d", i);
        cr_assert_eq(out.missing[i].joined, in.missing[i].joined, "entry %d", i);
    }
    cr_assert_eq(out.missing[3].rank, 0, "unlisted entries are cleared, not left over");
}

Test(wire_payload, abort_missing_list_is_capped)
{
    struct gshmemi_wire_abort in = {.kind = GSHMEMI_WIRE_ABORT_MISSING, .nmissing = 1000,
                                    .nlisted = GSHMEMI_WIRE_MISSING_LIST_MAX + 5},
                              out;
    for (int i = 0; i < GSHMEMI_WIRE_MISSING_LIST_MAX; i++) in.missing[i].rank = 3 * i + 2;
    uint8_t buf[GSHMEMI_WIRE_ABORT_MAX];
    size_t n = gshmemi_wire_abort_encode(&in, buf);
    cr_assert_eq(n, (size_t)GSHMEMI_WIRE_ABORT_MAX);
    cr_assert_eq(gshmemi_wire_abort_decode(buf, n, &out, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(out.nlisted, (uint32_t)GSHMEMI_WIRE_MISSING_LIST_MAX);
    cr_assert_eq(out.missing[GSHMEMI_WIRE_MISSING_LIST_MAX - 1].rank, 3 * (GSHMEMI_WIRE_MISSING_LIST_MAX - 1) + 2);
    struct gshmemi_wire_header h;
    uint8_t hdr[GSHMEMI_WIRE_HEADER_SIZE];
    gshmemi_wire_header_init(&h, GSHMEMI_WIRE_ABORT, GSHMEMI_WIRE_ROOT, 0, (uint32_t)n);
    gshmemi_wire_header_encode(&h, hdr);
    cr_assert_eq(gshmemi_wire_header_decode(hdr, sizeof(hdr), &h, err, sizeof(err)), 0, "%s", err);
}

/* Each field of a MISSING abort broken in turn; the reason names what is wrong. */
Test(wire_payload, abort_missing_malformed)
{
    struct gshmemi_wire_abort in = sample_missing(), out;
    uint8_t good[GSHMEMI_WIRE_ABORT_MAX], buf[GSHMEMI_WIRE_ABORT_MAX + 8];
    size_t n = gshmemi_wire_abort_encode(&in, good);
    static const struct {
        size_t off;     /* byte to set */
        uint8_t value;
        int len_delta;  /* payload length change */
        const char *why;
    } cases[] = {
        {0, 0, -1, "(47 bytes, 3 missing PEs listed make 48)"},
        {0, 0, +8, "(56 bytes, 3 missing PEs listed make 48)"},
        {16, 0, 0, "lists 3 of 0 missing PEs"},        /* nmissing 0 */
        {16, 2, 0, "lists 3 of 2 missing PEs"},        /* fewer missing than listed */
        {20, 33, 0, "lists 33 of 40 missing PEs"},     /* over the list maximum */
        {20, 2, 0, "(48 bytes, 2 missing PEs listed make 40)"},
        {24 + 8 + 3, 0x80, 0, "entry 1 is invalid (rank -2147483642"}, /* negative rank */
        {24 + 8, 1, 0, "entry 1 is invalid (rank 1, joined 0)"},       /* not ascending */
        {24 + 8 + 4, 2, 0, "entry 1 is invalid (rank 6, joined 2)"},
        {8, 4, 0, "unknown kind 4"},
        {8, GSHMEMI_WIRE_ABORT_TIMEOUT, 0, "(48 bytes, expected 12)"}, /* other kinds are 12 bytes */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        memcpy(buf, good, n);
        memset(buf + n, 0, 8);
        buf[cases[i].off] = cases[i].value;
        size_t len = (size_t)((int)n + cases[i].len_delta);
        memset(err, 0, sizeof(err));
        cr_assert_eq(gshmemi_wire_abort_decode(buf, len, &out, err, sizeof(err)), GSHMEMX_ERR_PROTOCOL, "case %zu", i);
        cr_assert(strstr(err, cases[i].why) != NULL, "case %zu: '%s' lacks '%s'", i, err, cases[i].why);
    }
    for (size_t len = GSHMEMI_WIRE_ABORT_SIZE; len < GSHMEMI_WIRE_ABORT_MISSING_FIXED; len++) {
        cr_assert_eq(gshmemi_wire_abort_decode(good, len, &out, err, sizeof(err)), GSHMEMX_ERR_PROTOCOL);
        cr_assert(strstr(err, "a MISSING abort has at least 24") != NULL, "%s", err);
    }
    struct gshmemi_wire_abort timeout = {.status = GSHMEMX_ERR_TIMEOUT, .origin = 2,
                                         .kind = GSHMEMI_WIRE_ABORT_TIMEOUT};
    cr_assert_eq(gshmemi_wire_abort_encode(&timeout, buf), GSHMEMI_WIRE_ABORT_SIZE, "TIMEOUT has no list");
    cr_assert_eq(gshmemi_wire_abort_decode(buf, GSHMEMI_WIRE_ABORT_SIZE, &out, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(out.kind, GSHMEMI_WIRE_ABORT_TIMEOUT);
    cr_assert_eq(out.origin, 2);
}

/* Socket helpers over a socketpair: sv[0] is "us", sv[1] the peer. */
static int sv[2];

static void pair_open(void)
{
    cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
}

static void pair_close(void)
{
    close(sv[0]);
    if (sv[1] >= 0) close(sv[1]);
}

TestSuite(wire_socket, .init = pair_open, .fini = pair_close);

Test(wire_socket, frame_round_trip)
{
    uint8_t payload[3000];
    for (size_t i = 0; i < sizeof(payload); i++) payload[i] = (uint8_t)(i * 13 + 5);
    struct gshmemi_wire_header h, got;
    gshmemi_wire_header_init(&h, GSHMEMI_WIRE_GATHER, 6, 41, sizeof(payload));
    int64_t deadline = gshmemi_wire_deadline(5);
    cr_assert_eq(gshmemi_wire_send(sv[1], &h, payload, deadline, "PE 6", err, sizeof(err)), 0, "%s", err);
    void *in = NULL;
    cr_assert_eq(gshmemi_wire_recv(sv[0], &got, &in, deadline, "PE 6", err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(got.type, GSHMEMI_WIRE_GATHER);
    cr_assert_eq(got.sender, 6);
    cr_assert_eq(got.seq, 41u);
    cr_assert_eq(got.length, sizeof(payload));
    cr_assert_eq(memcmp(in, payload, sizeof(payload)), 0);
    free(in);
}

Test(wire_socket, truncated_frame_is_protocol_error_naming_peer)
{
    uint8_t hdr[GSHMEMI_WIRE_HEADER_SIZE];
    encode(GSHMEMI_WIRE_GATHER, 1, 1, 10, hdr);
    cr_assert_eq(write(sv[1], hdr, sizeof(hdr)), (ssize_t)sizeof(hdr));
    cr_assert_eq(write(sv[1], "abc", 3), 3);
    close(sv[1]);
    sv[1] = -1;
    struct gshmemi_wire_header h;
    void *in = (void *)1;
    int rc = gshmemi_wire_recv(sv[0], &h, &in, gshmemi_wire_deadline(5), "PE 1", err, sizeof(err));
    cr_assert_eq(rc, GSHMEMX_ERR_PROTOCOL, "%s", err);
    cr_assert_null(in);
    cr_assert(strstr(err, "truncated message from PE 1") != NULL, "%s", err);
    cr_assert(strstr(err, "23 of 30 bytes") != NULL, "%s", err);
}

Test(wire_socket, truncated_header)
{
    cr_assert_eq(write(sv[1], "GSHB\x01", 5), 5);
    close(sv[1]);
    sv[1] = -1;
    struct gshmemi_wire_header h;
    int rc = gshmemi_wire_recv_header(sv[0], &h, gshmemi_wire_deadline(5), "the root", err, sizeof(err));
    cr_assert_eq(rc, GSHMEMX_ERR_PROTOCOL, "%s", err);
    cr_assert(strstr(err, "5 of 20 bytes") != NULL, "%s", err);
}

Test(wire_socket, closed_between_frames_is_peer_lost)
{
    close(sv[1]);
    sv[1] = -1;
    struct gshmemi_wire_header h;
    int rc = gshmemi_wire_recv_header(sv[0], &h, gshmemi_wire_deadline(5), "PE 4", err, sizeof(err));
    cr_assert_eq(rc, GSHMEMX_ERR_PEER_LOST, "%s", err);
    cr_assert(strstr(err, "PE 4 closed the connection") != NULL, "%s", err);
}

Test(wire_socket, silent_peer_times_out)
{
    struct gshmemi_wire_header h;
    int64_t t0 = gshmemi_wire_now_ms();
    int rc = gshmemi_wire_recv_header(sv[0], &h, gshmemi_wire_deadline(0.2), "PE 2", err, sizeof(err));
    int64_t waited = gshmemi_wire_now_ms() - t0;
    cr_assert_eq(rc, GSHMEMX_ERR_TIMEOUT, "%s", err);
    cr_assert(strstr(err, "PE 2") != NULL, "%s", err);
    cr_assert(waited >= 150 && waited < 2000, "waited %ld ms", (long)waited);
}

Test(wire_socket, garbage_header_is_rejected)
{
    cr_assert_eq(write(sv[1], "GET / HTTP/1.1\r\nHost: x\r\n\r\n", 27), 27);
    struct gshmemi_wire_header h;
    int rc = gshmemi_wire_recv_header(sv[0], &h, gshmemi_wire_deadline(5), "a stranger", err, sizeof(err));
    cr_assert_eq(rc, GSHMEMX_ERR_PROTOCOL, "%s", err);
    cr_assert(strstr(err, "a stranger") != NULL && strstr(err, "bad magic") != NULL, "%s", err);
}

Test(wire_socket, send_to_closed_peer_is_peer_lost)
{
    close(sv[1]);
    sv[1] = -1;
    struct gshmemi_wire_header h;
    gshmemi_wire_header_init(&h, GSHMEMI_WIRE_BYE, 0, 0, 0);
    int rc = gshmemi_wire_send(sv[0], &h, NULL, gshmemi_wire_deadline(5), "the root", err, sizeof(err));
    cr_assert_eq(rc, GSHMEMX_ERR_PEER_LOST, "%s", err);
}
