/* The job secret's challenge-response on tcp bootstrap connections: raw peers against an
 * in-process root (no secret, wrong, right, truncated, replayed), real clients that must
 * agree with the root, secret sources, and the unique ID's record. */
#include <criterion/criterion.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bootstrap/bootstrap.h"
#include "bootstrap/tcp_root.h"
#include "bootstrap/uid.h"
#include "bootstrap/wire.h"
#include "core/env.h"
#include "core/log.h"
#include "gshmem/status.h"

#include "root_harness.h"

#define JOB "job-S"
#define SECRET "correct horse battery staple"

static char err[GSHMEMI_WIRE_ERR_MAX];

static void root_up_secret(void)
{
    root_harness_up(JOB, SECRET, 5, "secret");
}

static void root_up_open(void)
{
    root_harness_up(JOB, NULL, 5, "secret");
}

static void raw_send(int fd, unsigned type, const void *payload, uint32_t len)
{
    struct gshmemi_wire_header h;
    gshmemi_wire_header_init(&h, type, 0, 0, len);
    cr_assert_eq(gshmemi_wire_send(fd, &h, payload, gshmemi_wire_deadline(5), "root", err, sizeof(err)), 0, "%s",
                 err);
}

static void raw_hello(int fd, int rank, unsigned method)
{
    struct gshmemi_wire_hello h = {.rank = rank, .nranks = 2, .pid = 1, .auth_method = (uint16_t)method};
    uint8_t buf[GSHMEMI_WIRE_HELLO_MAX];
    strcpy(h.host, "test-host");
    strcpy(h.job_id, JOB);
    raw_send(fd, GSHMEMI_WIRE_HELLO, buf, (uint32_t)gshmemi_wire_hello_encode(&h, buf));
}

/* Reads one frame of type want; its payload (len bytes) lands in out. */
static void raw_expect(int fd, unsigned want, void *out, size_t len)
{
    struct gshmemi_wire_header h;
    void *payload;
    cr_assert_eq(gshmemi_wire_recv(fd, &h, &payload, gshmemi_wire_deadline(5), "root", err, sizeof(err)), 0, "%s",
                 err);
    cr_assert_eq(h.type, want, "got %s, expected %s", gshmemi_wire_type_name(h.type), gshmemi_wire_type_name(want));
    cr_assert_eq(h.length, len);
    if (len) memcpy(out, payload, len);
    free(payload);
}

static const char *raw_expect_refusal(int fd)
{
    static struct gshmemi_wire_error e;
    struct gshmemi_wire_header h;
    void *payload;
    cr_assert_eq(gshmemi_wire_recv(fd, &h, &payload, gshmemi_wire_deadline(5), "root", err, sizeof(err)), 0, "%s",
                 err);
    cr_assert_eq(h.type, GSHMEMI_WIRE_ERROR, "got %s", gshmemi_wire_type_name(h.type));
    cr_assert_eq(gshmemi_wire_error_decode(payload, h.length, &e, err, sizeof(err)), 0, "%s", err);
    free(payload);
    cr_assert_eq(e.status, GSHMEMX_ERR_BOOTSTRAP, "status %d: %s", e.status, e.msg);
    char c;
    cr_assert_eq(read(fd, &c, 1), 0, "the root closes a refused connection");
    close(fd);
    return e.msg;
}

/* HELLO with HMAC, then the CHALLENGE's nonce. */
static int raw_challenged(int rank, uint8_t nonce[GSHMEMI_WIRE_NONCE_SIZE], int *local_port)
{
    int fd = raw_connect(local_port);
    raw_hello(fd, rank, GSHMEMI_WIRE_AUTH_HMAC_SHA256);
    raw_expect(fd, GSHMEMI_WIRE_CHALLENGE, nonce, GSHMEMI_WIRE_NONCE_SIZE);
    return fd;
}

static void proof_of(const char *secret, const uint8_t *nonce, int rank, uint8_t *proof)
{
    gshmemi_wire_auth_proof(secret, strlen(secret), nonce, rank, JOB, proof);
}

TestSuite(secret_root, .init = root_up_secret, .fini = root_down, .timeout = 30);

Test(secret_root, right_secret_is_welcomed)
{
    uint8_t nonce[GSHMEMI_WIRE_NONCE_SIZE], proof[GSHMEMI_WIRE_PROOF_SIZE], welcome[GSHMEMI_WIRE_WELCOME_SIZE];
    int fd = raw_challenged(1, nonce, NULL);
    proof_of(SECRET, nonce, 1, proof);
    raw_send(fd, GSHMEMI_WIRE_AUTH, proof, sizeof(proof));
    raw_expect(fd, GSHMEMI_WIRE_WELCOME, welcome, sizeof(welcome));
    cr_assert_eq(welcome[0], 2, "WELCOME carries nranks");
    close(fd);
}

Test(secret_root, no_secret_is_refused_and_logged)
{
    int port;
    int fd = raw_connect(&port);
    raw_hello(fd, 0, GSHMEMI_WIRE_AUTH_NONE);
    const char *msg = raw_expect_refusal(fd);
    cr_assert(strstr(msg, "no job secret: PE 0 did not offer one") != NULL, "%s", msg);
    char peer[64];
    snprintf(peer, sizeof(peer), "refused connection from 127.0.0.1:%d:", port);
    cr_assert(log_has(peer, "no job secret"), "the root's log names the peer's address");
}

Test(secret_root, wrong_secret_is_refused_and_logged)
{
    uint8_t nonce[GSHMEMI_WIRE_NONCE_SIZE], proof[GSHMEMI_WIRE_PROOF_SIZE];
    int port;
    int fd = raw_challenged(1, nonce, &port);
    proof_of("not the secret", nonce, 1, proof);
    raw_send(fd, GSHMEMI_WIRE_AUTH, proof, sizeof(proof));
    const char *msg = raw_expect_refusal(fd);
    cr_assert(strstr(msg, "bad job secret (PE 1)") != NULL, "%s", msg);
    char peer[64];
    snprintf(peer, sizeof(peer), "refused connection from 127.0.0.1:%d: bad job secret", port);
    cr_assert(log_has(peer, "PE 1"), "the root's log names the peer's address");
}

/* The proof binds the rank: right secret, proof made for another rank. */
Test(secret_root, proof_for_another_rank_is_refused)
{
    uint8_t nonce[GSHMEMI_WIRE_NONCE_SIZE], proof[GSHMEMI_WIRE_PROOF_SIZE];
    int fd = raw_challenged(0, nonce, NULL);
    proof_of(SECRET, nonce, 1, proof);
    raw_send(fd, GSHMEMI_WIRE_AUTH, proof, sizeof(proof));
    cr_assert(strstr(raw_expect_refusal(fd), "bad job secret") != NULL);
}

/* Every connection gets a fresh nonce: a recorded answer is useless. */
Test(secret_root, replayed_proof_is_refused)
{
    uint8_t n1[GSHMEMI_WIRE_NONCE_SIZE], n2[GSHMEMI_WIRE_NONCE_SIZE], proof[GSHMEMI_WIRE_PROOF_SIZE];
    int a = raw_challenged(0, n1, NULL);
    int b = raw_challenged(1, n2, NULL);
    cr_assert_neq(memcmp(n1, n2, sizeof(n1)), 0, "nonces repeat");
    proof_of(SECRET, n1, 0, proof);
    raw_send(b, GSHMEMI_WIRE_AUTH, proof, sizeof(proof));
    cr_assert(strstr(raw_expect_refusal(b), "bad job secret") != NULL);
    close(a);
}

Test(secret_root, short_answer_is_refused)
{
    uint8_t nonce[GSHMEMI_WIRE_NONCE_SIZE], proof[GSHMEMI_WIRE_PROOF_SIZE];
    int fd = raw_challenged(0, nonce, NULL);
    proof_of(SECRET, nonce, 0, proof);
    raw_send(fd, GSHMEMI_WIRE_AUTH, proof, 10);
    const char *msg = raw_expect_refusal(fd);
    cr_assert(strstr(msg, "sent a 10-byte proof, expected 32") != NULL, "%s", msg);
}

Test(secret_root, answer_before_hello_is_refused)
{
    uint8_t proof[GSHMEMI_WIRE_PROOF_SIZE] = {0};
    int fd = raw_connect(NULL);
    raw_send(fd, GSHMEMI_WIRE_AUTH, proof, sizeof(proof));
    struct gshmemi_wire_header h;
    void *payload;
    cr_assert_eq(gshmemi_wire_recv(fd, &h, &payload, gshmemi_wire_deadline(5), "root", err, sizeof(err)), 0);
    cr_assert_eq(h.type, GSHMEMI_WIRE_ERROR);
    struct gshmemi_wire_error e;
    cr_assert_eq(gshmemi_wire_error_decode(payload, h.length, &e, err, sizeof(err)), 0);
    free(payload);
    cr_assert(strstr(e.msg, "expected HELLO, got AUTH") != NULL, "%s", e.msg);
    close(fd);
}

/* ---- real clients ---- */

struct client {
    pthread_t thread;
    int rank;
    const char *secret, *secret_file;
    char addr[64];
    int rc;
};

static void *client_main(void *arg)
{
    struct client *c = arg;
    struct gshmemi_env env = {.bootstrap = GSHMEMI_BOOTSTRAP_TCP, .bootstrap_root = c->addr, .rank = c->rank,
                              .nranks = 2, .job_id = JOB, .timeout = 10, .node_id = "n",
                              .bootstrap_secret = c->secret, .bootstrap_secret_file = c->secret_file};
    struct gshmemi_bootstrap bs;
    c->rc = gshmemi_bootstrap_init(&env, &bs);
    if (c->rc == 0) {
        int in = 100 + c->rank, out[2] = {-1, -1};
        c->rc = bs.ops->allgather(&bs, &in, out, sizeof(in));
        if (c->rc == 0 && (out[0] != 100 || out[1] != 101)) c->rc = -1;
        gshmemi_bootstrap_fini(&bs);
    }
    return NULL;
}

static void clients_run(struct client *cs, int n)
{
    for (int i = 0; i < n; i++) {
        snprintf(cs[i].addr, sizeof(cs[i].addr), "%s", gshmemi_tcp_root_address(root));
        cr_assert_eq(pthread_create(&cs[i].thread, NULL, client_main, &cs[i]), 0);
    }
    for (int i = 0; i < n; i++) pthread_join(cs[i].thread, NULL);
}

/* A refused PE does not stop the job: the right PEs still join and exchange. */
Test(secret_root, clients_with_the_secret_join_after_a_wrong_one)
{
    struct client bad = {.rank = 1, .secret = "guess"};
    clients_run(&bad, 1);
    cr_assert_eq(bad.rc, GSHMEMX_ERR_BOOTSTRAP, "%s", gshmemx_status_name(bad.rc));
    cr_assert(log_has("refused connection from 127.0.0.1:", "bad job secret (PE 1)"));
    char path[64];
    snprintf(path, sizeof(path), "/tmp/gshmem-secret-file-%d", (int)getpid());
    FILE *f = fopen(path, "w");
    fputs(SECRET "\n", f); /* a file written by echo: the newline is not part of the secret */
    fclose(f);
    struct client cs[2] = {{.rank = 0, .secret = SECRET}, {.rank = 1, .secret_file = path}};
    clients_run(cs, 2);
    unlink(path);
    cr_assert_eq(cs[0].rc, 0, "PE 0: %s", gshmemx_status_name(cs[0].rc));
    cr_assert_eq(cs[1].rc, 0, "PE 1: %s", gshmemx_status_name(cs[1].rc));
}

Test(secret_root, client_without_secret_fails_clearly)
{
    struct client c = {.rank = 0};
    clients_run(&c, 1);
    cr_assert_eq(c.rc, GSHMEMX_ERR_BOOTSTRAP, "%s", gshmemx_status_name(c.rc));
    cr_assert(log_has("refused while joining", "no job secret"), "the PE says why it was refused");
}

TestSuite(open_root, .init = root_up_open, .fini = root_down, .timeout = 30);

Test(open_root, client_with_secret_fails_clearly)
{
    struct client c = {.rank = 0, .secret = SECRET};
    clients_run(&c, 1);
    cr_assert_eq(c.rc, GSHMEMX_ERR_BOOTSTRAP, "%s", gshmemx_status_name(c.rc));
    cr_assert(log_has("refused while joining", "has a job secret but this root was started without one"));
}

/* More silent connections than the root keeps waiting for a HELLO (nranks + 64): the
 * oldest make room for newer ones, and the PEs, retrying when closed, still join. The
 * root once dropped every new connection instead, and both PEs failed at once. */
Test(open_root, clients_join_past_silent_connections)
{
    int silent[70];
    for (int i = 0; i < 70; i++) silent[i] = raw_connect(NULL);
    struct client cs[2] = {{.rank = 0}, {.rank = 1}};
    clients_run(cs, 2);
    cr_assert_eq(cs[0].rc, 0, "PE 0: %s", gshmemx_status_name(cs[0].rc));
    cr_assert_eq(cs[1].rc, 0, "PE 1: %s", gshmemx_status_name(cs[1].rc));
    for (int i = 0; i < 70; i++) close(silent[i]);
}

Test(open_root, clients_without_secret_join)
{
    struct client cs[2] = {{.rank = 0}, {.rank = 1}};
    clients_run(cs, 2);
    cr_assert_eq(cs[0].rc, 0);
    cr_assert_eq(cs[1].rc, 0);
}

/* ---- where the secret comes from ---- */

static const char *write_file(const char *content, size_t len)
{
    static char path[64];
    snprintf(path, sizeof(path), "/tmp/gshmem-secret-src-%d", (int)getpid());
    FILE *f = fopen(path, "w");
    fwrite(content, 1, len, f);
    fclose(f);
    return path;
}

Test(secret_source, text_file_and_refusals)
{
    static uint8_t buf[GSHMEMI_WIRE_SECRET_MAX];
    size_t len = 99;
    cr_assert_eq(gshmemi_wire_secret_load(NULL, "", buf, &len), 0);
    cr_assert_eq(len, 0, "unset: no secret");
    cr_assert_eq(gshmemi_wire_secret_load("abc", NULL, buf, &len), 0);
    cr_assert_eq(len, 3);
    const char *path = write_file("s3cret\n\n", 8);
    cr_assert_eq(gshmemi_wire_secret_load(NULL, path, buf, &len), 0);
    cr_assert_eq(len, 7, "one trailing newline stripped, not two");
    cr_assert_eq(memcmp(buf, "s3cret\n", 7), 0);
    /* The longest secret, with and without the newline echo adds; one byte more is refused. */
    static char longest[GSHMEMI_WIRE_SECRET_MAX + 2];
    memset(longest, 'k', sizeof(longest));
    longest[GSHMEMI_WIRE_SECRET_MAX] = '\n';
    write_file(longest, GSHMEMI_WIRE_SECRET_MAX + 1);
    cr_assert_eq(gshmemi_wire_secret_load(NULL, path, buf, &len), 0, "4096 bytes and a newline");
    cr_assert_eq(len, GSHMEMI_WIRE_SECRET_MAX);
    write_file(longest, GSHMEMI_WIRE_SECRET_MAX);
    cr_assert_eq(gshmemi_wire_secret_load(NULL, path, buf, &len), 0, "4096 bytes");
    cr_assert_eq(len, GSHMEMI_WIRE_SECRET_MAX);
    longest[GSHMEMI_WIRE_SECRET_MAX] = 'k';
    write_file(longest, GSHMEMI_WIRE_SECRET_MAX + 1);
    cr_assert_eq(gshmemi_wire_secret_load(NULL, path, buf, &len), GSHMEMX_ERR_CONFIG, "4097 bytes");
    longest[GSHMEMI_WIRE_SECRET_MAX + 1] = '\n';
    write_file(longest, GSHMEMI_WIRE_SECRET_MAX + 2);
    cr_assert_eq(gshmemi_wire_secret_load(NULL, path, buf, &len), GSHMEMX_ERR_CONFIG, "4097 bytes and a newline");
    write_file("\n", 1);
    cr_assert_eq(gshmemi_wire_secret_load(NULL, path, buf, &len), GSHMEMX_ERR_CONFIG, "empty secret");
    cr_assert_eq(gshmemi_wire_secret_load("abc", path, buf, &len), GSHMEMX_ERR_CONFIG, "both set");
    unlink(path);
    cr_assert_eq(gshmemi_wire_secret_load(NULL, path, buf, &len), GSHMEMX_ERR_CONFIG, "missing file");
}

/* ---- the unique ID's record ---- */

Test(uid_record, round_trip_and_refusals)
{
    struct gshmemi_uid_record r = {.naddrs = 2, .port = 41234, .job_id = "uid-0123456789abcdef", .secret_len = 95};
    r.addrs[0] = htonl(0xc6120005); /* 198.18.0.5 */
    r.addrs[1] = htonl(INADDR_LOOPBACK);
    for (int i = 0; i < 95; i++) r.secret[i] = (uint8_t)(i * 31 + 7);
    gshmemx_uniqueid_t id;
    memset(&id, 0x5a, sizeof(id));
    gshmemi_uid_encode(&r, &id);
    struct gshmemi_uid_record back;
    char why[256];
    cr_assert_eq(gshmemi_uid_decode(&id, &back, why, sizeof(why)), 0, "%s", why);
    cr_assert_eq(back.naddrs, 2);
    cr_assert_eq(back.port, 41234);
    cr_assert_eq(back.addrs[0], r.addrs[0]);
    cr_assert_eq(back.addrs[1], r.addrs[1]);
    cr_assert_str_eq(back.job_id, r.job_id);
    cr_assert_eq(back.secret_len, 95);
    cr_assert_eq(memcmp(back.secret, r.secret, 95), 0);
    gshmemx_uniqueid_t bad = id;
    bad.internal[0] = 'X';
    cr_assert_eq(gshmemi_uid_decode(&bad, &back, why, sizeof(why)), GSHMEMX_ERR_INVALID_ARG);
    cr_assert(strstr(why, "not a gshmem unique ID") != NULL, "%s", why);
    bad = id;
    bad.internal[4] = 9;
    cr_assert_eq(gshmemi_uid_decode(&bad, &back, why, sizeof(why)), GSHMEMX_ERR_INVALID_ARG);
    cr_assert(strstr(why, "version 9") != NULL, "%s", why);
    bad = id;
    bad.internal[5] = 0;
    cr_assert_eq(gshmemi_uid_decode(&bad, &back, why, sizeof(why)), GSHMEMX_ERR_INVALID_ARG);
    cr_assert(strstr(why, "corrupt") != NULL, "%s", why);
}

Test(uid_record, attr_args_are_checked)
{
    gshmemx_uniqueid_t id = {{0}};
    gshmemx_init_attr_t attr;
    cr_assert_eq(gshmemx_set_attr_uniqueid_args(2, 2, &id, &attr), GSHMEMX_ERR_INVALID_ARG);
    cr_assert_eq(gshmemx_set_attr_uniqueid_args(-1, 2, &id, &attr), GSHMEMX_ERR_INVALID_ARG);
    cr_assert_eq(gshmemx_set_attr_uniqueid_args(0, 2, NULL, &attr), GSHMEMX_ERR_INVALID_ARG);
    id.internal[7] = 42;
    cr_assert_eq(gshmemx_set_attr_uniqueid_args(1, 3, &id, &attr), 0);
    cr_assert_eq(attr.rank, 1);
    cr_assert_eq(attr.nranks, 3);
    cr_assert_eq(attr.uid.internal[7], 42);
}

/* ---- GSHMEM_BOOTSTRAP=uid from the environment ---- */

Test(uid_env, bad_configuration_is_named)
{
    const char *uids[] = {"", "nohostport", "127.0.0.1:", ":5000", "127.0.0.1:0", "127.0.0.1:70000", "h:12x"};
    for (size_t i = 0; i < sizeof(uids) / sizeof(uids[0]); i++) {
        struct gshmemi_env env = {.bootstrap = GSHMEMI_BOOTSTRAP_UID, .bootstrap_uid = uids[i], .rank = 1,
                                  .nranks = 2, .node_id = "", .job_id = "", .timeout = 1};
        struct gshmemi_bootstrap bs;
        cr_assert_eq(gshmemi_bootstrap_init(&env, &bs), GSHMEMX_ERR_CONFIG, "GSHMEM_BOOTSTRAP_UID='%s'", uids[i]);
    }
    struct gshmemi_env env = {.bootstrap = GSHMEMI_BOOTSTRAP_UID, .bootstrap_uid = "127.0.0.1:5000", .rank = 2,
                              .nranks = 2, .node_id = "", .job_id = "", .timeout = 1};
    struct gshmemi_bootstrap bs;
    cr_assert_eq(gshmemi_bootstrap_init(&env, &bs), GSHMEMX_ERR_CONFIG, "rank out of range");
}

/* A unique ID that does not decode is refused before any connection. */
Test(uid_env, init_attr_with_garbage_id)
{
    gshmemx_init_attr_t attr;
    gshmemx_uniqueid_t id;
    memset(&id, 0x33, sizeof(id));
    cr_assert_eq(gshmemx_set_attr_uniqueid_args(0, 1, &id, &attr), 0);
    cr_assert_eq(gshmemx_init_attr(GSHMEMX_INIT_WITH_UNIQUEID, &attr), GSHMEMX_ERR_INVALID_ARG);
    cr_assert_eq(gshmemx_init_attr(0, &attr), GSHMEMX_ERR_INVALID_ARG, "unknown flags");
}
