/* The rendezvous root fed truncated, oversized and random messages over raw sockets:
 * it refuses each with a clear error naming the peer's address and keeps serving (real
 * clients join afterwards). The codec alone: test_wire_fuzz.c. */
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

static char err[GSHMEMI_WIRE_ERR_MAX];

static void root_up_open(void)
{
    root_harness_up(JOB, NULL, 1, "fuzz");
}

static void root_up_secret(void)
{
    root_harness_up(JOB, SECRET, 1, "fuzz");
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
