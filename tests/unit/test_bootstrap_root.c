/* The TCP rendezvous root and client: refusals of bad peers (raw sockets), and the
 * collective paths (allgather, mismatch, abort, lost PE, timeout) with real clients. */
#include <criterion/criterion.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bootstrap/bootstrap.h"
#include "bootstrap/tcp_root.h"
#include "bootstrap/wire.h"
#include "core/env.h"
#include "gshmem/status.h"

#define JOB "job-A"

static struct gshmemi_tcp_root *root;
static char err[GSHMEMI_WIRE_ERR_MAX];

static void root_up(int nranks)
{
    struct gshmemi_tcp_root_config cfg = {
        .bind_host = "127.0.0.1", .port = 0, .nranks = nranks, .job_id = JOB, .timeout = 5};
    cr_assert_eq(gshmemi_tcp_root_create(&cfg, &root), 0);
    cr_assert_gt(gshmemi_tcp_root_port(root), 0);
    cr_assert_eq(gshmemi_tcp_root_start_thread(root), 0);
}

static void root_up2(void)
{
    root_up(2);
}

static void root_up3(void)
{
    root_up(3);
}

static void root_down(void)
{
    gshmemi_tcp_root_stop(root);
    gshmemi_tcp_root_join(root);
    gshmemi_tcp_root_destroy(root);
}

/* ---- raw peers ---- */

/* A raw connection to the root; rcvbuf > 0 sets its receive buffer (before connecting,
 * so that the window is small from the start). */
static int raw_connect_rcvbuf(int rcvbuf)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)gshmemi_tcp_root_port(root))};
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    cr_assert_geq(fd, 0);
    if (rcvbuf > 0) cr_assert_eq(setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf)), 0);
    cr_assert_eq(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    return fd;
}

static int raw_connect(void)
{
    return raw_connect_rcvbuf(0);
}

static void raw_send(int fd, unsigned type, int version, const void *payload, uint32_t len)
{
    struct gshmemi_wire_header h;
    uint8_t hdr[GSHMEMI_WIRE_HEADER_SIZE];
    gshmemi_wire_header_init(&h, type, 0, 0, len);
    h.version = (uint16_t)version;
    gshmemi_wire_header_encode(&h, hdr);
    cr_assert_eq(write(fd, hdr, sizeof(hdr)), (ssize_t)sizeof(hdr));
    if (len) cr_assert_eq(write(fd, payload, len), (ssize_t)len);
}

static void raw_hello(int fd, int rank, int nranks, const char *job)
{
    struct gshmemi_wire_hello h = {.rank = rank, .nranks = nranks, .pid = 1};
    uint8_t buf[GSHMEMI_WIRE_HELLO_MAX];
    strcpy(h.host, "test-host");
    strcpy(h.job_id, job);
    raw_send(fd, GSHMEMI_WIRE_HELLO, GSHMEMI_WIRE_VERSION, buf, (uint32_t)gshmemi_wire_hello_encode(&h, buf));
}

/* Reads one frame; asserts it is ERROR (then EOF) and returns its message. */
static const char *raw_expect_refusal(int fd, int status)
{
    static struct gshmemi_wire_error e;
    struct gshmemi_wire_header h;
    void *payload;
    int rc = gshmemi_wire_recv(fd, &h, &payload, gshmemi_wire_deadline(5), "root", err, sizeof(err));
    cr_assert_eq(rc, 0, "%s", err);
    cr_assert_eq(h.type, GSHMEMI_WIRE_ERROR, "got %s", gshmemi_wire_type_name(h.type));
    cr_assert_eq(gshmemi_wire_error_decode(payload, h.length, &e, err, sizeof(err)), 0, "%s", err);
    free(payload);
    cr_assert_eq(e.status, status, "status %d: %s", e.status, e.msg);
    char c;
    cr_assert_eq(read(fd, &c, 1), 0, "the root closes a refused connection");
    close(fd);
    return e.msg;
}

static void raw_expect(int fd, unsigned type)
{
    struct gshmemi_wire_header h;
    void *payload;
    int rc = gshmemi_wire_recv(fd, &h, &payload, gshmemi_wire_deadline(5), "root", err, sizeof(err));
    cr_assert_eq(rc, 0, "%s", err);
    cr_assert_eq(h.type, type, "got %s, expected %s", gshmemi_wire_type_name(h.type), gshmemi_wire_type_name(type));
    free(payload);
}

/* ---- real clients, one thread each ---- */

enum client_op { OP_ALLGATHER, OP_MISMATCH, OP_ABORT, OP_BARRIER, OP_CHECK_UNTIL_ABORT, OP_NODES, OP_INIT_ONLY };

struct client {
    pthread_t thread;
    enum client_op op;
    int rank, nranks;
    double timeout;
    char addr[64];
    const char *node_id;
    int rc;
    int rc2; /* second operation's result */
    struct gshmemi_bootstrap bs;
};

static void client_env(struct client *c, struct gshmemi_env *env)
{
    memset(env, 0, sizeof(*env));
    env->bootstrap = GSHMEMI_BOOTSTRAP_TCP;
    env->bootstrap_root = c->addr;
    env->rank = c->rank;
    env->nranks = c->nranks;
    env->job_id = JOB;
    env->timeout = c->timeout;
    env->node_id = c->node_id ? c->node_id : "";
}

static int client_allgather_checked(struct gshmemi_bootstrap *bs)
{
    enum { LEN = 29 };
    uint8_t in[LEN], out[8 * LEN];
    for (int i = 0; i < LEN; i++) in[i] = (uint8_t)(bs->rank * 53 + i * 3 + 1);
    memset(out, 0xee, sizeof(out));
    int rc = bs->ops->allgather(bs, in, out, LEN);
    for (int r = 0; rc == 0 && r < bs->nranks; r++)
        for (int i = 0; i < LEN; i++)
            if (out[r * LEN + i] != (uint8_t)(r * 53 + i * 3 + 1)) rc = -1;
    for (size_t i = (size_t)bs->nranks * LEN; rc == 0 && i < sizeof(out); i++)
        if (out[i] != 0xee) rc = -2; /* wrote past the result */
    return rc;
}

static int client_run_op(struct client *c)
{
    struct gshmemi_bootstrap *bs = &c->bs;
    uint8_t buf[64] = {0}, out[3 * 64];
    switch (c->op) {
    case OP_ALLGATHER: return client_allgather_checked(bs);
    case OP_BARRIER: return bs->ops->barrier(bs);
    case OP_MISMATCH:
        c->rc2 = bs->ops->allgather(bs, buf, out, bs->rank == 0 ? 8 : 16);
        return client_allgather_checked(bs); /* the job goes on after a mismatched round */
    case OP_ABORT:
        if (bs->rank == 0) {
            bs->ops->abort(bs, 5);
            return 0;
        }
        return bs->ops->barrier(bs);
    case OP_CHECK_UNTIL_ABORT:
        for (int i = 0; i < 500; i++) {
            int rc = bs->ops->check(bs);
            if (rc) return rc;
            usleep(10000);
        }
        return 0;
    case OP_NODES: return bs->ops->barrier(bs);
    case OP_INIT_ONLY: return 0;
    }
    return -1;
}

static void *client_main(void *arg)
{
    struct client *c = arg;
    struct gshmemi_env env;
    client_env(c, &env);
    c->rc = gshmemi_bootstrap_init(&env, &c->bs);
    if (c->rc == 0) c->rc = client_run_op(c);
    if (c->op != OP_NODES && c->bs.ops != NULL) gshmemi_bootstrap_fini(&c->bs);
    return NULL;
}

/* Starts n clients with ranks first_rank, first_rank + 1, ... */
static void clients_start(struct client *cs, int n, int first_rank, int nranks, enum client_op op, double timeout)
{
    for (int i = 0; i < n; i++) {
        cs[i].rank = first_rank + i;
        cs[i].nranks = nranks;
        cs[i].op = op;
        cs[i].timeout = timeout;
        snprintf(cs[i].addr, sizeof(cs[i].addr), "%s", gshmemi_tcp_root_address(root));
        cr_assert_eq(pthread_create(&cs[i].thread, NULL, client_main, &cs[i]), 0);
    }
}

static void clients_join(struct client *cs, int n)
{
    for (int i = 0; i < n; i++) pthread_join(cs[i].thread, NULL);
}

TestSuite(root_refusal, .init = root_up2, .fini = root_down, .timeout = 30);

Test(root_refusal, garbage)
{
    int fd = raw_connect();
    cr_assert_eq(write(fd, "GET / HTTP/1.1\r\nHost: gshmem\r\n\r\n", 32), 32);
    cr_assert(strstr(raw_expect_refusal(fd, GSHMEMX_ERR_PROTOCOL), "bad magic") != NULL);
}

Test(root_refusal, version_mismatch)
{
    int fd = raw_connect();
    raw_send(fd, GSHMEMI_WIRE_HELLO, GSHMEMI_WIRE_VERSION + 1, NULL, 0);
    const char *msg = raw_expect_refusal(fd, GSHMEMX_ERR_PROTOCOL);
    cr_assert(strstr(msg, "version mismatch") != NULL, "%s", msg);
}

Test(root_refusal, not_hello_first)
{
    int fd = raw_connect();
    raw_send(fd, GSHMEMI_WIRE_GATHER, GSHMEMI_WIRE_VERSION, "abcd", 4);
    cr_assert(strstr(raw_expect_refusal(fd, GSHMEMX_ERR_PROTOCOL), "expected HELLO, got GATHER") != NULL);
}

Test(root_refusal, oversized_hello)
{
    int fd = raw_connect();
    uint8_t hdr[GSHMEMI_WIRE_HEADER_SIZE];
    struct gshmemi_wire_header h;
    gshmemi_wire_header_init(&h, GSHMEMI_WIRE_HELLO, 0, 0, 100u << 20);
    gshmemi_wire_header_encode(&h, hdr);
    cr_assert_eq(write(fd, hdr, sizeof(hdr)), (ssize_t)sizeof(hdr));
    cr_assert(strstr(raw_expect_refusal(fd, GSHMEMX_ERR_PROTOCOL), "exceeds") != NULL);
}

Test(root_refusal, malformed_hello_payload)
{
    int fd = raw_connect();
    uint8_t junk[GSHMEMI_WIRE_HELLO_FIXED + 4] = {0};
    junk[16] = 200; /* claims a 200-byte host name */
    raw_send(fd, GSHMEMI_WIRE_HELLO, GSHMEMI_WIRE_VERSION, junk, sizeof(junk));
    cr_assert(strstr(raw_expect_refusal(fd, GSHMEMX_ERR_PROTOCOL), "add up") != NULL);
}

Test(root_refusal, rank_out_of_range)
{
    int fd = raw_connect();
    raw_hello(fd, 2, 2, JOB);
    cr_assert(strstr(raw_expect_refusal(fd, GSHMEMX_ERR_BOOTSTRAP), "rank 2 is out of range [0, 2)") != NULL);
    fd = raw_connect();
    raw_hello(fd, -1, 2, JOB);
    cr_assert(strstr(raw_expect_refusal(fd, GSHMEMX_ERR_BOOTSTRAP), "out of range") != NULL);
}

Test(root_refusal, nranks_mismatch)
{
    int fd = raw_connect();
    raw_hello(fd, 0, 3, JOB);
    const char *msg = raw_expect_refusal(fd, GSHMEMX_ERR_BOOTSTRAP);
    cr_assert(strstr(msg, "3 PEs, the root serves 2") != NULL, "%s", msg);
}

Test(root_refusal, other_job)
{
    int fd = raw_connect();
    raw_hello(fd, 0, 2, "job-B");
    cr_assert(strstr(raw_expect_refusal(fd, GSHMEMX_ERR_BOOTSTRAP), "belongs to job 'job-B'") != NULL);
}

Test(root_refusal, duplicate_rank)
{
    int first = raw_connect();
    raw_hello(first, 0, 2, JOB);
    raw_expect(first, GSHMEMI_WIRE_WELCOME);
    int dup = raw_connect();
    raw_hello(dup, 0, 2, JOB);
    const char *msg = raw_expect_refusal(dup, GSHMEMX_ERR_BOOTSTRAP);
    cr_assert(strstr(msg, "duplicate rank 0") != NULL, "%s", msg);
    close(first);
}

/* After strangers of every kind, the job's real PEs are still served. */
Test(root_refusal, keeps_serving_good_clients)
{
    int fd = raw_connect();
    cr_assert_eq(write(fd, "\x00\x01\x02", 3), 3);
    close(fd); /* truncated header, then gone */
    fd = raw_connect();
    raw_send(fd, GSHMEMI_WIRE_HELLO, GSHMEMI_WIRE_VERSION, "short", 5);
    raw_expect_refusal(fd, GSHMEMX_ERR_PROTOCOL);
    fd = raw_connect();
    raw_hello(fd, 7, 2, JOB);
    raw_expect_refusal(fd, GSHMEMX_ERR_BOOTSTRAP);
    int silent = raw_connect(); /* connected, never speaks */
    struct client cs[2] = {0};
    clients_start(cs, 2, 0, 2, OP_ALLGATHER, 10);
    clients_join(cs, 2);
    cr_assert_eq(cs[0].rc, 0, "PE 0: %s", gshmemx_status_name(cs[0].rc));
    cr_assert_eq(cs[1].rc, 0, "PE 1: %s", gshmemx_status_name(cs[1].rc));
    close(silent);
}

TestSuite(root_job, .init = root_up3, .fini = root_down, .timeout = 30);

Test(root_job, allgather_three_pes)
{
    struct client cs[3] = {0};
    clients_start(cs, 3, 0, 3, OP_ALLGATHER, 10);
    clients_join(cs, 3);
    for (int i = 0; i < 3; i++) cr_assert_eq(cs[i].rc, 0, "PE %d: %d", i, cs[i].rc);
}

Test(root_job, length_mismatch_fails_the_round_on_every_pe)
{
    struct client cs[3] = {0};
    clients_start(cs, 3, 0, 3, OP_MISMATCH, 10);
    clients_join(cs, 3);
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(cs[i].rc2, GSHMEMX_ERR_MISMATCH, "PE %d: %s", i, gshmemx_status_name(cs[i].rc2));
        cr_assert_eq(cs[i].rc, 0, "PE %d, next round: %s", i, gshmemx_status_name(cs[i].rc));
    }
}

Test(root_job, abort_reaches_the_others)
{
    struct client cs[3] = {0};
    clients_start(cs, 3, 0, 3, OP_ABORT, 10);
    clients_join(cs, 3);
    cr_assert_eq(cs[1].rc, GSHMEMX_ERR_ABORTED, "%s", gshmemx_status_name(cs[1].rc));
    cr_assert_eq(cs[2].rc, GSHMEMX_ERR_ABORTED, "%s", gshmemx_status_name(cs[2].rc));
}

Test(root_job, check_sees_an_abort)
{
    struct client cs[3] = {0};
    clients_start(cs + 1, 2, 1, 3, OP_CHECK_UNTIL_ABORT, 10);
    clients_start(cs, 1, 0, 3, OP_ABORT, 10);
    clients_join(cs, 3);
    cr_assert_eq(cs[1].rc, GSHMEMX_ERR_ABORTED, "%s", gshmemx_status_name(cs[1].rc));
    cr_assert_eq(cs[2].rc, GSHMEMX_ERR_ABORTED, "%s", gshmemx_status_name(cs[2].rc));
}

Test(root_job, lost_pe_releases_a_barrier)
{
    int fd = raw_connect();
    raw_hello(fd, 0, 3, JOB);
    raw_expect(fd, GSHMEMI_WIRE_WELCOME);
    struct client cs[2] = {0};
    clients_start(cs, 2, 1, 3, OP_BARRIER, 10);
    usleep(200000);
    close(fd); /* PE 0 dies without BYE */
    clients_join(cs, 2);
    cr_assert_eq(cs[0].rc, GSHMEMX_ERR_PEER_LOST, "%s", gshmemx_status_name(cs[0].rc));
    cr_assert_eq(cs[1].rc, GSHMEMX_ERR_PEER_LOST, "%s", gshmemx_status_name(cs[1].rc));
}

Test(root_job, garbage_from_a_joined_pe_ends_the_job)
{
    int fd = raw_connect();
    raw_hello(fd, 0, 3, JOB);
    raw_expect(fd, GSHMEMI_WIRE_WELCOME);
    struct client cs[2] = {0};
    clients_start(cs, 2, 1, 3, OP_BARRIER, 10);
    usleep(200000);
    cr_assert_eq(write(fd, "this is not a frame!", 20), 20);
    clients_join(cs, 2);
    cr_assert_eq(cs[0].rc, GSHMEMX_ERR_PEER_LOST, "%s", gshmemx_status_name(cs[0].rc));
    cr_assert_eq(cs[1].rc, GSHMEMX_ERR_PEER_LOST, "%s", gshmemx_status_name(cs[1].rc));
    close(fd);
}

/* PE 2 never comes: PE 0's timeout runs out first; the root, told so, names PE 2 to
 * both, so PE 1 (longer timeout) ends at once with the same verdict. */
Test(root_job, missing_pe_is_a_timeout)
{
    struct client cs[2] = {0};
    int64_t t0 = gshmemi_wire_now_ms();
    clients_start(cs, 1, 0, 3, OP_BARRIER, 0.5);
    clients_start(cs + 1, 1, 1, 3, OP_BARRIER, 20);
    clients_join(cs, 2);
    int64_t waited = gshmemi_wire_now_ms() - t0;
    cr_assert_eq(cs[0].rc, GSHMEMX_ERR_TIMEOUT, "%s", gshmemx_status_name(cs[0].rc));
    cr_assert_eq(cs[1].rc, GSHMEMX_ERR_TIMEOUT, "%s", gshmemx_status_name(cs[1].rc));
    cr_assert_lt(waited, 3000, "waited %ld ms", (long)waited);
}

static void raw_frame(int fd, unsigned type, int32_t sender, uint32_t seq, const void *payload, uint32_t len)
{
    struct gshmemi_wire_header h;
    uint8_t hdr[GSHMEMI_WIRE_HEADER_SIZE];
    gshmemi_wire_header_init(&h, type, sender, seq, len);
    gshmemi_wire_header_encode(&h, hdr);
    cr_assert_eq(write(fd, hdr, sizeof(hdr)), (ssize_t)sizeof(hdr));
    if (len) cr_assert_eq(write(fd, payload, len), (ssize_t)len);
}

static void raw_timeout(int fd, int rank, uint32_t seq)
{
    struct gshmemi_wire_abort a = {.status = GSHMEMX_ERR_TIMEOUT, .origin = rank, .kind = GSHMEMI_WIRE_ABORT_TIMEOUT};
    uint8_t buf[GSHMEMI_WIRE_ABORT_MAX];
    raw_frame(fd, GSHMEMI_WIRE_ABORT, rank, seq, buf, (uint32_t)gshmemi_wire_abort_encode(&a, buf));
}

/* Reads the next frame: an ABORT of kind MISSING, decoded into a. */
static void raw_expect_missing(int fd, struct gshmemi_wire_abort *a)
{
    struct gshmemi_wire_header h;
    void *payload;
    int rc = gshmemi_wire_recv(fd, &h, &payload, gshmemi_wire_deadline(5), "root", err, sizeof(err));
    cr_assert_eq(rc, 0, "%s", err);
    cr_assert_eq(h.type, GSHMEMI_WIRE_ABORT, "got %s", gshmemi_wire_type_name(h.type));
    cr_assert_eq(gshmemi_wire_abort_decode(payload, h.length, a, err, sizeof(err)), 0, "%s", err);
    free(payload);
    cr_assert_eq(a->kind, GSHMEMI_WIRE_ABORT_MISSING);
}

/* PE 0 contributed, PE 1 joined but did not, PE 2 never joined. A TIMEOUT for another
 * round, or from a PE not in the round, is stale and ignored; PE 0's own gets every
 * connected PE the list, naming who joined. */
Test(root_job, timeout_report_names_missing_pes)
{
    int fd0 = raw_connect(), fd1 = raw_connect();
    raw_hello(fd0, 0, 3, JOB);
    raw_expect(fd0, GSHMEMI_WIRE_WELCOME);
    raw_hello(fd1, 1, 3, JOB);
    raw_expect(fd1, GSHMEMI_WIRE_WELCOME);
    raw_frame(fd0, GSHMEMI_WIRE_GATHER, 0, 1, "abcd", 4);
    raw_timeout(fd0, 0, 7); /* a round the job is not in */
    raw_timeout(fd1, 1, 1); /* PE 1 is not waiting for round 1 */
    raw_timeout(fd0, 0, 1);
    for (int i = 0; i < 2; i++) {
        struct gshmemi_wire_abort a;
        memset(&a, 0x5a, sizeof(a));
        raw_expect_missing(i == 0 ? fd0 : fd1, &a);
        cr_assert_eq(a.status, GSHMEMX_ERR_TIMEOUT);
        cr_assert_eq(a.origin, 0, "the PE that gave up first, not a stale report");
        cr_assert_eq(a.round, 1u);
        cr_assert_eq(a.nmissing, 2u);
        cr_assert_eq(a.nlisted, 2u);
        cr_assert_eq(a.missing[0].rank, 1);
        cr_assert_eq(a.missing[0].joined, 1u);
        cr_assert_eq(a.missing[1].rank, 2);
        cr_assert_eq(a.missing[1].joined, 0u);
    }
    /* A PE that comes now is told why the job is over. */
    int fd2 = raw_connect();
    raw_hello(fd2, 2, 3, JOB);
    const char *msg = raw_expect_refusal(fd2, GSHMEMX_ERR_BOOTSTRAP);
    cr_assert(strstr(msg, "the job was already aborted: it never assembled (PE 2 did not join in time)") != NULL,
              "%s", msg);
    close(fd0);
    close(fd1);
}

/* Only the root sends MISSING: a PE that does is dropped, and the others learn it was lost. */
Test(root_job, missing_from_a_pe_is_refused)
{
    int fd0 = raw_connect(), fd1 = raw_connect();
    raw_hello(fd0, 0, 3, JOB);
    raw_expect(fd0, GSHMEMI_WIRE_WELCOME);
    raw_hello(fd1, 1, 3, JOB);
    raw_expect(fd1, GSHMEMI_WIRE_WELCOME);
    struct gshmemi_wire_abort a = {.status = 1, .origin = 0, .kind = GSHMEMI_WIRE_ABORT_MISSING, .round = 1,
                                   .nmissing = 1, .nlisted = 1, .missing = {{.rank = 2}}};
    uint8_t buf[GSHMEMI_WIRE_ABORT_MAX];
    raw_frame(fd0, GSHMEMI_WIRE_ABORT, 0, 0, buf, (uint32_t)gshmemi_wire_abort_encode(&a, buf));
    struct gshmemi_wire_header h;
    void *payload;
    cr_assert_eq(gshmemi_wire_recv(fd1, &h, &payload, gshmemi_wire_deadline(5), "root", err, sizeof(err)), 0, "%s",
                 err);
    cr_assert_eq(h.type, GSHMEMI_WIRE_ABORT);
    cr_assert_eq(gshmemi_wire_abort_decode(payload, h.length, &a, err, sizeof(err)), 0, "%s", err);
    free(payload);
    cr_assert_eq(a.kind, GSHMEMI_WIRE_ABORT_LOST);
    cr_assert_eq(a.origin, 0);
    close(fd0);
    close(fd1);
}

/* The launcher says PE 2's process ended before it ever connected: the others are released. */
Test(root_job, rank_gone_before_joining_releases_the_others)
{
    struct client cs[2] = {0};
    int64_t t0 = gshmemi_wire_now_ms();
    clients_start(cs, 2, 0, 3, OP_BARRIER, 20);
    usleep(200000);
    gshmemi_tcp_root_rank_gone(root, 2, 0); /* exited with status 0 */
    clients_join(cs, 2);
    cr_assert_eq(cs[0].rc, GSHMEMX_ERR_PEER_LOST, "%s", gshmemx_status_name(cs[0].rc));
    cr_assert_eq(cs[1].rc, GSHMEMX_ERR_PEER_LOST, "%s", gshmemx_status_name(cs[1].rc));
    cr_assert_lt(gshmemi_wire_now_ms() - t0, 5000);
}

/* PE 2 finalized (BYE), then its process ended: the job goes on and ends cleanly. */
Test(root_job, rank_gone_after_bye_is_fine)
{
    struct client cs[3] = {0};
    clients_start(cs, 2, 0, 3, OP_CHECK_UNTIL_ABORT, 10);
    clients_start(cs + 2, 1, 2, 3, OP_INIT_ONLY, 10);
    pthread_join(cs[2].thread, NULL);
    cr_assert_eq(cs[2].rc, 0, "%s", gshmemx_status_name(cs[2].rc));
    gshmemi_tcp_root_rank_gone(root, 2, 0);
    pthread_join(cs[0].thread, NULL);
    pthread_join(cs[1].thread, NULL);
    cr_assert_eq(cs[0].rc, 0, "%s", gshmemx_status_name(cs[0].rc));
    cr_assert_eq(cs[1].rc, 0, "%s", gshmemx_status_name(cs[1].rc));
    cr_assert_eq(gshmemi_tcp_root_join(root), 0, "every PE left after BYE: the root ends cleanly");
    cr_assert_eq(gshmemi_tcp_root_start_thread(root), 0); /* for the fixture's stop and join */
}

Test(root_job, node_local_view)
{
    struct client cs[3] = {{.node_id = "node-b"}, {.node_id = "node-a"}, {.node_id = "node-b"}};
    clients_start(cs, 3, 0, 3, OP_NODES, 10);
    clients_join(cs, 3);
    for (int i = 0; i < 3; i++) {
        struct gshmemi_bootstrap *bs = &cs[i].bs;
        cr_assert_eq(cs[i].rc, 0, "PE %d: %d", i, cs[i].rc);
        cr_assert_eq(bs->node_of_rank[0], 0, "nodes are numbered by their lowest rank");
        cr_assert_eq(bs->node_of_rank[1], 1);
        cr_assert_eq(bs->node_of_rank[2], 0);
    }
    cr_assert_eq(cs[0].bs.local_nranks, 2);
    cr_assert_eq(cs[0].bs.local_rank, 0);
    cr_assert_eq(cs[1].bs.local_nranks, 1);
    cr_assert_eq(cs[1].bs.local_rank, 0);
    cr_assert_eq(cs[1].bs.local_ranks[0], 1);
    cr_assert_eq(cs[2].bs.local_rank, 1);
    cr_assert_eq(cs[2].bs.local_ranks[0], 0);
    cr_assert_eq(cs[2].bs.local_ranks[1], 2);
    for (int i = 0; i < 3; i++) gshmemi_bootstrap_fini(&cs[i].bs);
}

/* PE 1 stops reading (stopped in a debugger, say) while a round's RESULT is larger than
 * its socket buffers. The root once wrote each PE's RESULT with a blocking write, in rank
 * order: PE 2 got nothing until the write to PE 1 timed out, and then only an ABORT. Now
 * PE 0 and PE 2 get the whole RESULT at once, and after the root's timeout (5 s) both
 * learn that PE 1 was lost. */
Test(root_job, a_pe_that_stops_reading_delays_nobody)
{
    enum { LEN = 4 << 20 }; /* a 12 MiB RESULT: beyond the usual 4 MiB send buffer limit */
    int fd[3];
    for (int r = 0; r < 3; r++) {
        fd[r] = raw_connect_rcvbuf(r == 1 ? 4096 : 0);
        raw_hello(fd[r], r, 3, JOB);
        raw_expect(fd[r], GSHMEMI_WIRE_WELCOME);
    }
    uint8_t *in = malloc(LEN);
    cr_assert_not_null(in);
    for (int r = 0; r < 3; r++) {
        for (size_t i = 0; i < LEN; i++) in[i] = (uint8_t)(r * 31 + i * 7 + (i >> 12));
        raw_frame(fd[r], GSHMEMI_WIRE_GATHER, r, 1, in, LEN);
    }
    free(in);
    int64_t t0 = gshmemi_wire_now_ms();
    uint8_t *out[3] = {NULL, NULL, NULL};
    for (int r = 0; r < 3; r += 2) {
        struct gshmemi_wire_header h;
        int rc = gshmemi_wire_recv(fd[r], &h, (void **)&out[r], gshmemi_wire_deadline(10), "root", err, sizeof(err));
        cr_assert_eq(rc, 0, "PE %d: %s", r, err);
        cr_assert_eq(h.type, GSHMEMI_WIRE_RESULT, "PE %d got %s", r, gshmemi_wire_type_name(h.type));
        cr_assert_eq(h.length, 3u * LEN);
    }
    int64_t got = gshmemi_wire_now_ms() - t0; /* the stall was 5 s, the root's timeout */
    cr_assert_lt(got, 3500, "PE 0 and PE 2 waited %ld ms for their RESULT behind PE 1", (long)got);
    for (int r = 0; r < 3; r += 2) {
        for (size_t k = 0; k < 3u * LEN; k++) {
            size_t q = k / LEN, i = k % LEN;
            if (out[r][k] != (uint8_t)(q * 31 + i * 7 + (i >> 12)))
                cr_assert_fail("PE %d: RESULT byte %zu (PE %zu's byte %zu) is %u", r, k, q, i, out[r][k]);
        }
        free(out[r]);
    }
    for (int r = 0; r < 3; r += 2) {
        struct gshmemi_wire_header h;
        struct gshmemi_wire_abort a;
        void *payload;
        int rc = gshmemi_wire_recv(fd[r], &h, &payload, gshmemi_wire_deadline(10), "root", err, sizeof(err));
        cr_assert_eq(rc, 0, "PE %d: %s", r, err);
        cr_assert_eq(h.type, GSHMEMI_WIRE_ABORT, "PE %d got %s", r, gshmemi_wire_type_name(h.type));
        cr_assert_eq(gshmemi_wire_abort_decode(payload, h.length, &a, err, sizeof(err)), 0, "%s", err);
        free(payload);
        cr_assert_eq(a.kind, GSHMEMI_WIRE_ABORT_LOST);
        cr_assert_eq(a.origin, 1, "PE %d was told PE %d was lost", r, (int)a.origin);
    }
    for (int r = 0; r < 3; r++) close(fd[r]);
}

/* A root on 0.0.0.0 (the k8s bootstrap's PE 0) listens on IPv6 too: PE 0 on 0.0.0.0
 * alone refused every PE of an IPv6-only cluster. Skipped where the host has no ::1. */
TestSuite(root_listen, .timeout = 20);

Test(root_listen, wildcard_takes_ipv6_and_ipv4)
{
    int probe = socket(AF_INET6, SOCK_STREAM, 0);
    struct sockaddr_in6 lo6 = {.sin6_family = AF_INET6, .sin6_addr = in6addr_loopback};
    if (probe < 0 || bind(probe, (struct sockaddr *)&lo6, sizeof(lo6)) != 0) {
        if (probe >= 0) close(probe);
        cr_skip_test("no IPv6 loopback here");
    }
    close(probe);
    struct gshmemi_tcp_root_config cfg = {.bind_host = "0.0.0.0", .port = 0, .nranks = 2, .job_id = JOB, .timeout = 5};
    cr_assert_eq(gshmemi_tcp_root_create(&cfg, &root), 0);
    cr_assert_eq(gshmemi_tcp_root_start_thread(root), 0);
    int fd4 = raw_connect();
    lo6.sin6_port = htons((uint16_t)gshmemi_tcp_root_port(root));
    int fd6 = socket(AF_INET6, SOCK_STREAM, 0);
    cr_assert_geq(fd6, 0);
    cr_assert_eq(connect(fd6, (struct sockaddr *)&lo6, sizeof(lo6)), 0, "connect to [::1]: %s", strerror(errno));
    raw_hello(fd4, 0, 2, JOB);
    raw_expect(fd4, GSHMEMI_WIRE_WELCOME);
    raw_hello(fd6, 1, 2, JOB);
    raw_expect(fd6, GSHMEMI_WIRE_WELCOME);
    close(fd4);
    close(fd6);
    root_down();
}

TestSuite(bootstrap_select, .timeout = 10);

Test(bootstrap_select, single_pe)
{
    struct gshmemi_env env = {.bootstrap = GSHMEMI_BOOTSTRAP_AUTO, .bootstrap_root = "", .rank = -1,
                              .node_id = "solo", .job_id = ""};
    struct gshmemi_bootstrap bs;
    cr_assert_eq(gshmemi_bootstrap_init(&env, &bs), 0);
    cr_assert_str_eq(bs.ops->name, "single");
    cr_assert_eq(bs.rank, 0);
    cr_assert_eq(bs.nranks, 1);
    cr_assert_eq(bs.local_nranks, 1);
    cr_assert_eq(bs.local_ranks[0], 0);
    uint8_t in[5] = {1, 2, 3, 4, 5}, out[6] = {0, 0, 0, 0, 0, 0xee};
    cr_assert_eq(bs.ops->allgather(&bs, in, out, 5), 0);
    cr_assert_eq(memcmp(in, out, 5), 0);
    cr_assert_eq(out[5], 0xee);
    cr_assert_eq(bs.ops->barrier(&bs), 0);
    cr_assert_eq(bs.ops->check(&bs), 0);
    gshmemi_bootstrap_fini(&bs);
}

Test(bootstrap_select, k8s_outside_a_pod)
{
    /* GSHMEM_BOOTSTRAP=k8s without a pod index (JOB_COMPLETION_INDEX and friends). */
    struct gshmemi_env env = {.bootstrap = GSHMEMI_BOOTSTRAP_K8S, .bootstrap_root = "", .node_id = "", .job_id = ""};
    struct gshmemi_bootstrap bs;
    cr_assert_eq(gshmemi_bootstrap_init(&env, &bs), GSHMEMX_ERR_NOT_SUPPORTED);
}

Test(bootstrap_select, tcp_bad_config)
{
    const char *roots[] = {"", "nohostport", "host:", ":5", "::1:5000", "[::1]5000", "h:12x", "h:0", "h:65536"};
    for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++) {
        struct gshmemi_env env = {.bootstrap = GSHMEMI_BOOTSTRAP_TCP, .bootstrap_root = roots[i], .rank = 0,
                                  .nranks = 2, .node_id = "", .job_id = "", .timeout = 1};
        struct gshmemi_bootstrap bs;
        cr_assert_eq(gshmemi_bootstrap_init(&env, &bs), GSHMEMX_ERR_CONFIG, "root '%s'", roots[i]);
    }
    struct gshmemi_env env = {.bootstrap = GSHMEMI_BOOTSTRAP_TCP, .bootstrap_root = "127.0.0.1:1", .rank = 2,
                              .nranks = 2, .node_id = "", .job_id = "", .timeout = 1};
    struct gshmemi_bootstrap bs;
    cr_assert_eq(gshmemi_bootstrap_init(&env, &bs), GSHMEMX_ERR_CONFIG, "rank out of range");
}

Test(bootstrap_select, unreachable_root_times_out)
{
    /* A port nobody listens on: retries with backoff, then a timeout. */
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET};
    socklen_t sl = sizeof(sa);
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    cr_assert_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    getsockname(fd, (struct sockaddr *)&sa, &sl);
    char root_addr[64];
    snprintf(root_addr, sizeof(root_addr), "127.0.0.1:%d", ntohs(sa.sin_port));
    struct gshmemi_env env = {.bootstrap = GSHMEMI_BOOTSTRAP_TCP, .bootstrap_root = root_addr, .rank = 0,
                              .nranks = 2, .node_id = "", .job_id = "", .timeout = 0.3};
    struct gshmemi_bootstrap bs;
    int64_t t0 = gshmemi_wire_now_ms();
    cr_assert_eq(gshmemi_bootstrap_init(&env, &bs), GSHMEMX_ERR_TIMEOUT);
    cr_assert_lt(gshmemi_wire_now_ms() - t0, 3000);
    close(fd);
}

/* Every PE of a large job connects before any says HELLO: none may be turned away. */
static void root_up_burst(void)
{
    root_up(100);
}

TestSuite(root_burst, .init = root_up_burst, .fini = root_down, .timeout = 30);

Test(root_burst, every_pe_connecting_at_once_is_served)
{
    enum { N = 100 };
    int fds[N];
    for (int r = 0; r < N; r++) fds[r] = raw_connect();
    usleep(100000); /* the root has accepted them all, none has spoken */
    for (int r = 0; r < N; r++) raw_hello(fds[r], r, N, JOB);
    for (int r = 0; r < N; r++) raw_expect(fds[r], GSHMEMI_WIRE_WELCOME);
    for (int r = 0; r < N; r++) close(fds[r]);
}

/* A root that closes the first connection before WELCOME, then serves a 1-PE job. */
static void *fake_root_main(void *arg)
{
    int lfd = *(int *)arg, fd;
    struct gshmemi_wire_header h;
    void *payload = NULL;
    uint8_t welcome[GSHMEMI_WIRE_WELCOME_SIZE] = {1};
    char e[GSHMEMI_WIRE_ERR_MAX];
    fd = accept(lfd, NULL, NULL);
    gshmemi_wire_recv(fd, &h, &payload, gshmemi_wire_deadline(5), "PE", e, sizeof(e));
    free(payload);
    close(fd);
    fd = accept(lfd, NULL, NULL);
    gshmemi_wire_recv(fd, &h, &payload, gshmemi_wire_deadline(5), "PE", e, sizeof(e));
    free(payload);
    gshmemi_wire_header_init(&h, GSHMEMI_WIRE_WELCOME, GSHMEMI_WIRE_ROOT, 0, sizeof(welcome));
    gshmemi_wire_send(fd, &h, welcome, gshmemi_wire_deadline(5), "PE", e, sizeof(e));
    /* The node-id allgather of one PE: the result is its own contribution. */
    if (gshmemi_wire_recv(fd, &h, &payload, gshmemi_wire_deadline(5), "PE", e, sizeof(e)) == 0) {
        gshmemi_wire_header_init(&h, GSHMEMI_WIRE_RESULT, GSHMEMI_WIRE_ROOT, h.seq, h.length);
        gshmemi_wire_send(fd, &h, payload, gshmemi_wire_deadline(5), "PE", e, sizeof(e));
        free(payload);
    }
    char c;
    while (read(fd, &c, 1) > 0) {} /* BYE, then the client closes */
    close(fd);
    return NULL;
}

TestSuite(client_join, .timeout = 20);

Test(client_join, connects_again_when_closed_before_welcome)
{
    struct sockaddr_in sa = {.sin_family = AF_INET};
    socklen_t sl = sizeof(sa);
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    cr_assert_eq(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    cr_assert_eq(listen(lfd, 4), 0);
    getsockname(lfd, (struct sockaddr *)&sa, &sl);
    pthread_t fake;
    cr_assert_eq(pthread_create(&fake, NULL, fake_root_main, &lfd), 0);
    char addr[64];
    snprintf(addr, sizeof(addr), "127.0.0.1:%d", ntohs(sa.sin_port));
    struct gshmemi_env env = {.bootstrap = GSHMEMI_BOOTSTRAP_TCP, .bootstrap_root = addr, .rank = 0, .nranks = 1,
                              .node_id = "n", .job_id = JOB, .timeout = 5};
    struct gshmemi_bootstrap bs;
    int rc = gshmemi_bootstrap_init(&env, &bs);
    cr_assert_eq(rc, 0, "%s", gshmemx_status_name(rc));
    cr_assert_eq(bs.rank, 0);
    gshmemi_bootstrap_fini(&bs);
    pthread_join(fake, NULL);
    close(lfd);
}
