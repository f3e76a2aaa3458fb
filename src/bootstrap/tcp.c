/* The TCP bootstrap client: one connection to the rendezvous root (tcp_root.c),
 * HELLO, then allgather rounds through the root. Every wait honours GSHMEM_TIMEOUT. */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bootstrap/bootstrap.h"
#include "bootstrap/tcp.h"
#include "bootstrap/wire.h"
#include "core/env.h"
#include "core/log.h"
#include "gshmem/status.h"

/* abort and BYE are courtesy messages: they never wait long. */
#define TCP_FAREWELL_TIMEOUT_S 5.0
/* After its own GSHMEM_TIMEOUT ran out in a round, how long a PE waits for the root to
 * name the PEs the round lacks (the root's answer is one local decision away). */
#define TCP_VERDICT_TIMEOUT_S 2.0
/* An ABORT or ERROR payload fits here. */
#define TCP_NOTICE_MAX (GSHMEMI_WIRE_ERROR_MAX > GSHMEMI_WIRE_ABORT_MAX ? GSHMEMI_WIRE_ERROR_MAX : GSHMEMI_WIRE_ABORT_MAX)

struct tcp_impl {
    int fd;
    int rank;
    int nranks;
    uint32_t seq;
    double timeout;
    char peer[GSHMEMI_WIRE_NAME_MAX + 32]; /* "bootstrap root host:port" */
    atomic_int failed;                      /* sticky: the job is over (ABORT or lost root) */
    int quiet_lost;                         /* a lost connection is retried: not an error yet */
    struct gshmemi_bootstrap *bs;           /* to report the aborting PE's exit status */
    char job_id[GSHMEMI_WIRE_NAME_MAX];
    uint8_t *secret;                        /* NULL: no job secret */
    size_t secret_len;
    pthread_mutex_t rx_lock;                /* one reader at a time; check() only tries it */
    pthread_mutex_t tx_lock;                /* whole frames on the socket */
};

static void tcp_impl_free(struct tcp_impl *t);

/* Splits "host:port" or "[v6addr]:port". */
int gshmemi_tcp_parse_root(const char *text, char *host, size_t hostlen, char *port, size_t portlen)
{
    const char *colon, *h = text;
    size_t hlen;
    if (text[0] == '[') {
        const char *end = strchr(text, ']');
        if (end == NULL || end[1] != ':') return GSHMEMX_ERR_CONFIG;
        h = text + 1;
        hlen = (size_t)(end - h);
        colon = end + 1;
    } else {
        colon = strrchr(text, ':');
        if (colon == NULL || strchr(text, ':') != colon) return GSHMEMX_ERR_CONFIG;
        hlen = (size_t)(colon - text);
    }
    size_t plen = strlen(colon + 1);
    if (hlen == 0 || hlen >= hostlen || plen == 0 || plen > 5 || plen >= portlen ||
        strspn(colon + 1, "0123456789") != plen || atoi(colon + 1) < 1 || atoi(colon + 1) > 65535)
        return GSHMEMX_ERR_CONFIG;
    memcpy(host, h, hlen);
    host[hlen] = '\0';
    memcpy(port, colon + 1, plen + 1);
    return 0;
}

/* One connect bounded by deadline: a connected (nonblocking) fd, or -errno. */
static int tcp_connect_one(const struct addrinfo *ai, int64_t deadline)
{
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
    if (fd < 0) return -errno;
    int err = 0;
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
        err = errno;
        if (err == EINPROGRESS) {
            struct pollfd pfd = {.fd = fd, .events = POLLOUT};
            int n;
            while ((n = poll(&pfd, 1, gshmemi_wire_poll_ms(deadline))) < 0 && errno == EINTR) {}
            socklen_t sl = sizeof(err);
            if (n == 0) err = ETIMEDOUT;
            else if (n < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &sl) != 0) err = errno;
        }
    }
    if (err != 0) {
        close(fd);
        return -err;
    }
    int flags = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &flags, sizeof(flags));
    return fd;
}

/* Connects to one of the nroots "host:port" addresses, retrying with backoff (the root may
 * not be up yet) until deadline: a connected fd, or -1 with the last reason in why. With
 * several addresses, one that does not answer is given at most 2 s per round. */
static int tcp_connect(const char *const *roots, int nroots, int64_t deadline, char *why, size_t whylen)
{
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    long backoff_ms = 10;
    for (;;) {
        for (int i = 0; i < nroots; i++) {
            char host[GSHMEMI_WIRE_NAME_MAX], port[16];
            struct addrinfo *res;
            if (gshmemi_tcp_parse_root(roots[i], host, sizeof(host), port, sizeof(port)) != 0) {
                snprintf(why, whylen, "'%.200s' is not host:port", roots[i]);
                continue;
            }
            int64_t try_until = deadline;
            if (nroots > 1 && (deadline < 0 || deadline > gshmemi_wire_now_ms() + 2000))
                try_until = gshmemi_wire_now_ms() + 2000;
            int gai = getaddrinfo(host, port, &hints, &res);
            if (gai != 0) {
                snprintf(why, whylen, "cannot resolve '%s': %s", host, gai_strerror(gai));
                continue;
            }
            for (struct addrinfo *ai = res; ai != NULL; ai = ai->ai_next) {
                int fd = tcp_connect_one(ai, try_until);
                if (fd >= 0) {
                    freeaddrinfo(res);
                    return fd;
                }
                snprintf(why, whylen, "connect to %.200s: %s", roots[i], strerror(-fd));
            }
            freeaddrinfo(res);
        }
        int left = gshmemi_wire_poll_ms(deadline);
        if (left == 0) return -1;
        long sleep_ms = (left >= 0 && left < backoff_ms) ? left : backoff_ms;
        nanosleep(&(struct timespec){.tv_sec = sleep_ms / 1000, .tv_nsec = (sleep_ms % 1000) * 1000000}, NULL);
        backoff_ms = backoff_ms * 2 > 1000 ? 1000 : backoff_ms * 2;
    }
}

static int tcp_send(struct tcp_impl *t, unsigned type, uint32_t seq, const void *payload, size_t len,
                    double timeout, char *err, size_t errlen)
{
    struct gshmemi_wire_header h;
    gshmemi_wire_header_init(&h, type, t->rank, seq, (uint32_t)len);
    pthread_mutex_lock(&t->tx_lock);
    int rc = gshmemi_wire_send(t->fd, &h, payload, gshmemi_wire_deadline(timeout), t->peer, err, errlen);
    pthread_mutex_unlock(&t->tx_lock);
    return rc;
}

/* Appends "PE 3" or "PEs 3, 7" (the listed ranks whose joined flag is `joined`) to out. */
static size_t tcp_list_missing(const struct gshmemi_wire_abort *a, uint32_t joined, char *out, size_t outlen)
{
    size_t len = 0;
    int n = 0;
    for (uint32_t i = 0; i < a->nlisted; i++) n += a->missing[i].joined == joined;
    for (uint32_t i = 0, k = 0; i < a->nlisted && len < outlen; i++) {
        if (a->missing[i].joined != joined) continue;
        len += (size_t)snprintf(out + len, outlen - len, "%s%d", k++ == 0 ? (n > 1 ? "PEs " : "PE ") : ", ",
                                (int)a->missing[i].rank);
    }
    return len < outlen ? len : outlen - 1;
}

/* The root's verdict on a round that never completed: who never came. */
static void tcp_log_missing(const struct tcp_impl *t, const struct gshmemi_wire_abort *a)
{
    char never[200] = "", late[200] = "", more[48] = "";
    size_t nnever = tcp_list_missing(a, 0, never, sizeof(never));
    tcp_list_missing(a, 1, late, sizeof(late));
    if (a->nmissing > a->nlisted) snprintf(more, sizeof(more), " (%u PEs missing, %u listed)", a->nmissing, a->nlisted);
    if (nnever > 0 && late[0] != '\0')
        GSHMEMI_ERROR(BOOT, "the job never assembled: %s did not join and %s did not reach allgather round %u within "
                      "GSHMEM_TIMEOUT=%g s%s (%s)", never, late, a->round, t->timeout, more, t->peer);
    else if (nnever > 0)
        GSHMEMI_ERROR(BOOT, "the job never assembled: %s did not join within GSHMEM_TIMEOUT=%g s%s (%s)", never,
                      t->timeout, more, t->peer);
    else
        GSHMEMI_ERROR(BOOT, "bootstrap allgather round %u never completed: %s did not reach it within "
                      "GSHMEM_TIMEOUT=%g s%s (%s)", a->round, late, t->timeout, more, t->peer);
}

/* Handles an ABORT or ERROR frame whose header was read; logs once. */
static int tcp_handle_notice(struct tcp_impl *t, const struct gshmemi_wire_header *h, int64_t deadline,
                             const char *waiting_for)
{
    uint8_t buf[TCP_NOTICE_MAX + 1];
    char err[GSHMEMI_WIRE_ERR_MAX];
    int rc = gshmemi_wire_read_all(t->fd, buf, h->length, deadline, t->peer, err, sizeof(err));
    if (rc == 0 && h->type == GSHMEMI_WIRE_ABORT) {
        struct gshmemi_wire_abort a;
        rc = gshmemi_wire_abort_decode(buf, h->length, &a, err, sizeof(err));
        if (rc == 0 && a.kind == GSHMEMI_WIRE_ABORT_MISSING) {
            tcp_log_missing(t, &a);
            atomic_store(&t->failed, GSHMEMX_ERR_TIMEOUT);
            return GSHMEMX_ERR_TIMEOUT;
        }
        if (rc == 0 && a.kind == GSHMEMI_WIRE_ABORT_TIMEOUT) {
            snprintf(err, sizeof(err), "%s sent an ABORT of kind TIMEOUT, which only PEs send", t->peer);
            rc = GSHMEMX_ERR_PROTOCOL;
        } else if (rc == 0) {
            if (a.kind == GSHMEMI_WIRE_ABORT_LOST)
                GSHMEMI_ERROR(BOOT, "job aborted while %s: PE %d exited or lost its connection to the %s",
                              waiting_for, (int)a.origin, t->peer);
            else
                GSHMEMI_ERROR(BOOT, "job ending while %s: PE %d called gshmem_global_exit(%d)", waiting_for,
                              (int)a.origin, (int)a.status);
            if (a.kind != GSHMEMI_WIRE_ABORT_LOST) t->bs->abort_status = (int)a.status;
            atomic_store(&t->failed, a.kind == GSHMEMI_WIRE_ABORT_LOST ? GSHMEMX_ERR_PEER_LOST : GSHMEMX_ERR_ABORTED);
            return atomic_load(&t->failed);
        }
    } else if (rc == 0) {
        struct gshmemi_wire_error e;
        rc = gshmemi_wire_error_decode(buf, h->length, &e, err, sizeof(err));
        if (rc == 0) {
            GSHMEMI_ERROR(BOOT, "%s refused while %s: %s", t->peer, waiting_for, e.msg);
            return e.status;
        }
    }
    GSHMEMI_ERROR(BOOT, "while %s: %s", waiting_for, err);
    atomic_store(&t->failed, rc);
    return rc;
}

/* Reports a failed receive or send once, naming what was awaited; the connection is unusable after. */
static int tcp_fail(struct tcp_impl *t, int rc, const char *waiting_for, const char *err)
{
    if (rc == GSHMEMX_ERR_PEER_LOST && t->quiet_lost)
        GSHMEMI_INFO(BOOT, "while %s: %s; connecting again", waiting_for, err);
    else if (rc == GSHMEMX_ERR_TIMEOUT)
        GSHMEMI_ERROR(BOOT, "timed out after %g s %s (GSHMEM_TIMEOUT): %s", t->timeout, waiting_for, err);
    else
        GSHMEMI_ERROR(BOOT, "while %s: %s", waiting_for, err);
    atomic_store(&t->failed, rc);
    return rc;
}

/* 0 once fd has input, 1 when the deadline passed first. */
static int tcp_wait_input(int fd, int64_t deadline)
{
    struct pollfd pfd = {.fd = fd, .events = POLLIN};
    for (;;) {
        int ms = gshmemi_wire_poll_ms(deadline);
        int n = poll(&pfd, 1, ms);
        if (n > 0 || (n < 0 && errno != EINTR)) return 0; /* the read that follows reports an error */
        if (n == 0 && ms == 0) return 1;
    }
}

/* Reads the rest of a frame whose header h arrived: a notice, or the awaited one. */
static int tcp_take_frame(struct tcp_impl *t, const struct gshmemi_wire_header *h, unsigned want, uint32_t seq,
                          void *out, size_t len, int64_t deadline, const char *waiting_for)
{
    char err[GSHMEMI_WIRE_ERR_MAX];
    /* A header that came at the deadline is followed by its payload: give that a moment. */
    int64_t rest = gshmemi_wire_deadline(TCP_VERDICT_TIMEOUT_S);
    if (deadline >= 0 && deadline < rest) deadline = rest;
    if (h->type == GSHMEMI_WIRE_ABORT || h->type == GSHMEMI_WIRE_ERROR)
        return tcp_handle_notice(t, h, deadline, waiting_for);
    if (h->type != want || h->seq != seq || h->length != len) {
        snprintf(err, sizeof(err), "%s sent %s (round %u, %u bytes), expected %s (round %u, %zu bytes)", t->peer,
                 gshmemi_wire_type_name(h->type), h->seq, h->length, gshmemi_wire_type_name(want), seq, len);
        return tcp_fail(t, GSHMEMX_ERR_PROTOCOL, waiting_for, err);
    }
    int rc = gshmemi_wire_read_all(t->fd, out, len, deadline, t->peer, err, sizeof(err));
    return rc ? tcp_fail(t, rc, waiting_for, err) : 0;
}

/* This PE's GSHMEM_TIMEOUT ran out waiting for round seq's RESULT: the root, told so,
 * answers every PE with the PEs the round lacks (or the RESULT was already on its way). */
static int tcp_round_timed_out(struct tcp_impl *t, uint32_t seq, void *out, size_t len, const char *waiting_for)
{
    struct gshmemi_wire_abort a = {.status = GSHMEMX_ERR_TIMEOUT, .origin = t->rank,
                                   .kind = GSHMEMI_WIRE_ABORT_TIMEOUT};
    uint8_t buf[GSHMEMI_WIRE_ABORT_MAX];
    struct gshmemi_wire_header h;
    char err[GSHMEMI_WIRE_ERR_MAX];
    size_t n = gshmemi_wire_abort_encode(&a, buf);
    int64_t deadline = gshmemi_wire_deadline(TCP_VERDICT_TIMEOUT_S);
    int rc = tcp_send(t, GSHMEMI_WIRE_ABORT, seq, buf, n, TCP_VERDICT_TIMEOUT_S, err, sizeof(err));
    if (rc == 0 && tcp_wait_input(t->fd, deadline) == 0)
        rc = gshmemi_wire_recv_header(t->fd, &h, deadline, t->peer, err, sizeof(err));
    else if (rc == 0)
        rc = GSHMEMX_ERR_TIMEOUT;
    if (rc == 0) return tcp_take_frame(t, &h, GSHMEMI_WIRE_RESULT, seq, out, len, deadline, waiting_for);
    if (rc == GSHMEMX_ERR_TIMEOUT)
        snprintf(err, sizeof(err), "no answer from the %s, and no word from it on which PEs are missing", t->peer);
    return tcp_fail(t, GSHMEMX_ERR_TIMEOUT, waiting_for, err);
}

/* Waits for a frame of type `want` (seq and length as given); ABORT/ERROR end the wait.
 * The payload lands in out. */
static int tcp_await(struct tcp_impl *t, unsigned want, uint32_t seq, void *out, size_t len, const char *waiting_for)
{
    int64_t deadline = gshmemi_wire_deadline(t->timeout);
    struct gshmemi_wire_header h;
    char err[GSHMEMI_WIRE_ERR_MAX];
    if (want == GSHMEMI_WIRE_RESULT && tcp_wait_input(t->fd, deadline) == 1)
        return tcp_round_timed_out(t, seq, out, len, waiting_for);
    int rc = gshmemi_wire_recv_header(t->fd, &h, deadline, t->peer, err, sizeof(err));
    if (rc) return tcp_fail(t, rc, waiting_for, err);
    return tcp_take_frame(t, &h, want, seq, out, len, deadline, waiting_for);
}

/* One round through the root; `kind` names it in diagnostics ("allgather", "barrier"). */
static int tcp_exchange(struct tcp_impl *t, const void *in, void *out, size_t len, const char *kind)
{
    char what[128], err[GSHMEMI_WIRE_ERR_MAX];
    int rc = atomic_load(&t->failed);
    if (rc) return rc;
    if (len > GSHMEMI_WIRE_MAX_PAYLOAD / (size_t)t->nranks) {
        GSHMEMI_ERROR(BOOT, "bootstrap allgather of %zu bytes from each of %d PEs exceeds the %u-byte limit", len,
                      t->nranks, GSHMEMI_WIRE_MAX_PAYLOAD);
        return GSHMEMX_ERR_INVALID_ARG;
    }
    pthread_mutex_lock(&t->rx_lock);
    uint32_t seq = ++t->seq;
    snprintf(what, sizeof(what), "waiting for bootstrap %s (round %u, %zu bytes per PE)", kind, seq, len);
    rc = tcp_send(t, GSHMEMI_WIRE_GATHER, seq, in, len, t->timeout, err, sizeof(err));
    if (rc) rc = tcp_fail(t, rc, what, err);
    else rc = tcp_await(t, GSHMEMI_WIRE_RESULT, seq, out, len * (size_t)t->nranks, what);
    pthread_mutex_unlock(&t->rx_lock);
    return rc;
}

static int tcp_allgather(struct gshmemi_bootstrap *bs, const void *in, void *out, size_t len)
{
    return tcp_exchange(bs->impl, in, out, len, "allgather");
}

static int tcp_barrier(struct gshmemi_bootstrap *bs)
{
    return tcp_exchange(bs->impl, NULL, NULL, 0, "barrier");
}

/* Looks at the socket without blocking: an ABORT/ERROR frame or EOF ends the job. */
static int tcp_check(struct gshmemi_bootstrap *bs)
{
    struct tcp_impl *t = bs->impl;
    int rc = atomic_load(&t->failed);
    if (rc || pthread_mutex_trylock(&t->rx_lock) != 0) return rc; /* a reader is busy: it will notice */
    struct pollfd pfd = {.fd = t->fd, .events = POLLIN};
    if (poll(&pfd, 1, 0) > 0) {
        char c;
        ssize_t n = recv(t->fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
            GSHMEMI_ERROR(BOOT, "lost the connection to the %s: the launcher or the root exited", t->peer);
            atomic_store(&t->failed, GSHMEMX_ERR_PEER_LOST);
            rc = GSHMEMX_ERR_PEER_LOST;
        } else if (n > 0) {
            struct gshmemi_wire_header h;
            char err[GSHMEMI_WIRE_ERR_MAX];
            int64_t deadline = gshmemi_wire_deadline(TCP_FAREWELL_TIMEOUT_S);
            const char *what = "checking the bootstrap connection";
            rc = gshmemi_wire_recv_header(t->fd, &h, deadline, t->peer, err, sizeof(err));
            if (rc) rc = tcp_fail(t, rc, what, err);
            else if (h.type == GSHMEMI_WIRE_ABORT || h.type == GSHMEMI_WIRE_ERROR)
                rc = tcp_handle_notice(t, &h, deadline, what);
            else {
                snprintf(err, sizeof(err), "%s sent an unexpected %s", t->peer, gshmemi_wire_type_name(h.type));
                rc = tcp_fail(t, GSHMEMX_ERR_PROTOCOL, what, err);
            }
        }
    }
    pthread_mutex_unlock(&t->rx_lock);
    return rc;
}

static void tcp_abort(struct gshmemi_bootstrap *bs, int status)
{
    struct tcp_impl *t = bs->impl;
    struct gshmemi_wire_abort a = {.status = status, .origin = t->rank, .kind = GSHMEMI_WIRE_ABORT_CALLED};
    uint8_t buf[GSHMEMI_WIRE_ABORT_MAX];
    char err[GSHMEMI_WIRE_ERR_MAX];
    int expected = 0;
    if (atomic_compare_exchange_strong(&t->failed, &expected, GSHMEMX_ERR_ABORTED))
        bs->abort_status = status; /* a thread that sees the job end exits with it too */
    size_t n = gshmemi_wire_abort_encode(&a, buf);
    if (tcp_send(t, GSHMEMI_WIRE_ABORT, 0, buf, n, TCP_FAREWELL_TIMEOUT_S, err, sizeof(err)) != 0)
        GSHMEMI_WARN(BOOT, "could not tell the others about the abort: %s", err);
}

void gshmemi_bootstrap_tcp_hang_up(struct gshmemi_bootstrap *bs)
{
    struct tcp_impl *t = bs->impl;
    if (t != NULL && t->fd >= 0) shutdown(t->fd, SHUT_WR);
}

static int tcp_finalize(struct gshmemi_bootstrap *bs)
{
    struct tcp_impl *t = bs->impl;
    char err[GSHMEMI_WIRE_ERR_MAX];
    if (t == NULL) return 0;
    if (atomic_load(&t->failed) == 0 &&
        tcp_send(t, GSHMEMI_WIRE_BYE, 0, NULL, 0, TCP_FAREWELL_TIMEOUT_S, err, sizeof(err)) != 0)
        GSHMEMI_WARN(BOOT, "finalize: %s", err);
    close(t->fd);
    tcp_impl_free(t);
    bs->impl = NULL;
    return 0;
}

static const struct gshmemi_bootstrap_ops tcp_ops = {
    .size = sizeof(struct gshmemi_bootstrap_ops),
    .name = "tcp",
    .allgather = tcp_allgather,
    .barrier = tcp_barrier,
    .check = tcp_check,
    .abort = tcp_abort,
    .finalize = tcp_finalize,
};

/* Answers the root's CHALLENGE (its header read) with the proof of the job secret. */
static int tcp_answer_challenge(struct tcp_impl *t, const struct gshmemi_wire_header *h, const char *what)
{
    uint8_t nonce[GSHMEMI_WIRE_NONCE_SIZE], proof[GSHMEMI_WIRE_PROOF_SIZE];
    char err[GSHMEMI_WIRE_ERR_MAX];
    if (h->length != sizeof(nonce)) {
        snprintf(err, sizeof(err), "%s sent a %u-byte CHALLENGE, expected %zu", t->peer, h->length, sizeof(nonce));
        return tcp_fail(t, GSHMEMX_ERR_PROTOCOL, what, err);
    }
    int rc = gshmemi_wire_read_all(t->fd, nonce, sizeof(nonce), gshmemi_wire_deadline(t->timeout), t->peer, err,
                                   sizeof(err));
    if (rc) return tcp_fail(t, rc, what, err);
    gshmemi_wire_auth_proof(t->secret, t->secret_len, nonce, t->rank, t->job_id, proof);
    rc = tcp_send(t, GSHMEMI_WIRE_AUTH, 0, proof, sizeof(proof), t->timeout, err, sizeof(err));
    return rc ? tcp_fail(t, rc, what, err) : 0;
}

/* HELLO, then (with a job secret) CHALLENGE and AUTH, then WELCOME, or the root's
 * reason for refusing us. */
static int tcp_hello(struct tcp_impl *t)
{
    struct gshmemi_wire_hello hello = {.rank = t->rank, .nranks = t->nranks, .pid = (uint32_t)getpid()};
    uint8_t buf[GSHMEMI_WIRE_HELLO_MAX], welcome[GSHMEMI_WIRE_WELCOME_SIZE];
    char err[GSHMEMI_WIRE_ERR_MAX];
    const char *what = "joining the job at the bootstrap root";
    gethostname(hello.host, sizeof(hello.host) - 1);
    snprintf(hello.job_id, sizeof(hello.job_id), "%s", t->job_id);
    hello.auth_method = t->secret_len > 0 ? GSHMEMI_WIRE_AUTH_HMAC_SHA256 : GSHMEMI_WIRE_AUTH_NONE;
    size_t n = gshmemi_wire_hello_encode(&hello, buf);
    int rc = tcp_send(t, GSHMEMI_WIRE_HELLO, 0, buf, n, t->timeout, err, sizeof(err));
    if (rc) return tcp_fail(t, rc, what, err);
    if (t->secret_len == 0) return tcp_await(t, GSHMEMI_WIRE_WELCOME, 0, welcome, sizeof(welcome), what);
    struct gshmemi_wire_header h;
    int64_t deadline = gshmemi_wire_deadline(t->timeout);
    rc = gshmemi_wire_recv_header(t->fd, &h, deadline, t->peer, err, sizeof(err));
    if (rc) return tcp_fail(t, rc, what, err);
    if (h.type == GSHMEMI_WIRE_ABORT || h.type == GSHMEMI_WIRE_ERROR) return tcp_handle_notice(t, &h, deadline, what);
    if (h.type != GSHMEMI_WIRE_CHALLENGE) {
        snprintf(err, sizeof(err), "%s sent %s, expected CHALLENGE for the job secret", t->peer,
                 gshmemi_wire_type_name(h.type));
        return tcp_fail(t, GSHMEMX_ERR_PROTOCOL, what, err);
    }
    if ((rc = tcp_answer_challenge(t, &h, what)) != 0) return rc;
    return tcp_await(t, GSHMEMI_WIRE_WELCOME, 0, welcome, sizeof(welcome), what);
}

static int tcp_check_env(const struct gshmemi_env *env)
{
    if (env->bootstrap_root == NULL || env->bootstrap_root[0] == '\0') {
        GSHMEMI_ERROR(BOOT, "the tcp bootstrap needs GSHMEM_BOOTSTRAP_ROOT=host:port (set by gshmemrun)");
        return GSHMEMX_ERR_CONFIG;
    }
    if (env->nranks < 1 || env->rank < 0 || env->rank >= env->nranks) {
        GSHMEMI_ERROR(BOOT, "the tcp bootstrap needs 0 <= GSHMEM_RANK < GSHMEM_NRANKS; got GSHMEM_RANK=%ld, "
                      "GSHMEM_NRANKS=%ld", env->rank, env->nranks);
        return GSHMEMX_ERR_CONFIG;
    }
    if (env->nranks > 0x7fffffffL) {
        GSHMEMI_ERROR(BOOT, "GSHMEM_NRANKS=%ld is too large", env->nranks);
        return GSHMEMX_ERR_CONFIG;
    }
    return 0;
}

static void tcp_impl_free(struct tcp_impl *t)
{
    pthread_mutex_destroy(&t->rx_lock);
    pthread_mutex_destroy(&t->tx_lock);
    if (t->secret != NULL) memset(t->secret, 0, t->secret_len);
    free(t->secret);
    free(t);
}

static int tcp_impl_create(const struct gshmemi_tcp_join *j, struct tcp_impl **out)
{
    struct tcp_impl *t = calloc(1, sizeof(*t));
    if (t == NULL) return GSHMEMX_ERR_NOMEM;
    t->fd = -1;
    t->rank = j->rank;
    t->nranks = j->nranks;
    t->timeout = j->timeout;
    atomic_init(&t->failed, 0);
    pthread_mutex_init(&t->rx_lock, NULL);
    pthread_mutex_init(&t->tx_lock, NULL);
    snprintf(t->job_id, sizeof(t->job_id), "%s", j->job_id ? j->job_id : "");
    snprintf(t->peer, sizeof(t->peer), "bootstrap root %s%s", j->roots[0], j->nroots > 1 ? " (or another of its addresses)" : "");
    if (j->secret_len > 0 && (t->secret = malloc(j->secret_len)) == NULL) {
        tcp_impl_free(t);
        return GSHMEMX_ERR_NOMEM;
    }
    if (j->secret_len > 0) memcpy(t->secret, j->secret, j->secret_len);
    t->secret_len = j->secret_len;
    *out = t;
    return 0;
}

int gshmemi_bootstrap_tcp_join(const struct gshmemi_tcp_join *j, struct gshmemi_bootstrap *bs)
{
    char why[GSHMEMI_WIRE_ERR_MAX] = "no address to try";
    struct tcp_impl *t;
    int rc;
    if (j->nroots < 1 || j->nroots > GSHMEMI_TCP_JOIN_ROOTS_MAX || j->nranks < 1 || j->rank < 0 ||
        j->rank >= j->nranks) {
        GSHMEMI_ERROR(BOOT, "tcp bootstrap: bad join request (rank %d of %d, %d root addresses)", j->rank, j->nranks,
                      j->nroots);
        return GSHMEMX_ERR_INVALID_ARG;
    }
    for (int i = 0; i < j->nroots; i++) { /* a typo never becomes a wait of GSHMEM_TIMEOUT */
        char host[GSHMEMI_WIRE_NAME_MAX], port[16];
        if (gshmemi_tcp_parse_root(j->roots[i], host, sizeof(host), port, sizeof(port)) != 0) {
            GSHMEMI_ERROR(BOOT, "tcp bootstrap: root address '%.200s' is not host:port, [IPv6]:port or "
                          "IPv4:port with a port in 1..65535", j->roots[i]);
            return GSHMEMX_ERR_CONFIG;
        }
    }
    if ((rc = tcp_impl_create(j, &t)) != 0) return rc;
    /* A root flooded with connections may close ours before reading the HELLO: again,
     * backing off from 20 ms to 1 s, until GSHMEM_TIMEOUT (the last attempt says why). */
    int64_t deadline = gshmemi_wire_deadline(j->timeout);
    long pause_ms = 20;
    for (int attempt = 0;; attempt++) {
        if (t->fd >= 0) close(t->fd);
        atomic_store(&t->failed, 0);
        t->fd = tcp_connect(j->roots, j->nroots, deadline, why, sizeof(why));
        if (t->fd < 0) {
            GSHMEMI_ERROR(BOOT, "could not reach the %s within %g s (GSHMEM_TIMEOUT): %s", t->peer, j->timeout,
                          why);
            rc = GSHMEMX_ERR_TIMEOUT;
            goto err_free;
        }
        int last = deadline >= 0 && gshmemi_wire_now_ms() + pause_ms >= deadline;
        t->quiet_lost = !last;
        rc = tcp_hello(t);
        t->quiet_lost = 0;
        if (rc != GSHMEMX_ERR_PEER_LOST || last) break;
        if (attempt == 0)
            GSHMEMI_INFO(BOOT, "the %s closed the connection before answering; trying again", t->peer);
        nanosleep(&(struct timespec){.tv_sec = pause_ms / 1000, .tv_nsec = (pause_ms % 1000) * 1000000L}, NULL);
        pause_ms = pause_ms * 2 > 1000 ? 1000 : pause_ms * 2;
    }
    if (rc != 0) goto err_close;
    bs->ops = &tcp_ops;
    bs->impl = t;
    t->bs = bs;
    bs->rank = t->rank;
    bs->nranks = t->nranks;
    GSHMEMI_INFO(BOOT, "joined the job through the %s as PE %d of %d%s", t->peer, t->rank, t->nranks,
                 t->secret_len ? " (job secret accepted)" : "");
    return 0;
err_close:
    close(t->fd);
err_free:
    tcp_impl_free(t);
    return rc;
}

int gshmemi_bootstrap_tcp_init(const struct gshmemi_env *env, struct gshmemi_bootstrap *bs)
{
    char host[GSHMEMI_WIRE_NAME_MAX], port[16];
    uint8_t *secret = malloc(GSHMEMI_WIRE_SECRET_MAX);
    int rc = tcp_check_env(env);
    if (rc == 0 && gshmemi_tcp_parse_root(env->bootstrap_root, host, sizeof(host), port, sizeof(port)) != 0) {
        GSHMEMI_ERROR(BOOT, "GSHMEM_BOOTSTRAP_ROOT=%s: expected host:port or [ipv6]:port with a port in 1..65535", env->bootstrap_root);
        rc = GSHMEMX_ERR_CONFIG;
    }
    if (rc == 0 && secret == NULL) rc = GSHMEMX_ERR_NOMEM;
    struct gshmemi_tcp_join j = {.roots = {env->bootstrap_root}, .nroots = 1, .rank = (int)env->rank,
                                 .nranks = (int)env->nranks, .job_id = env->job_id ? env->job_id : "",
                                 .secret = secret, .timeout = env->timeout};
    if (rc == 0) rc = gshmemi_wire_secret_load(env->bootstrap_secret, env->bootstrap_secret_file, secret, &j.secret_len);
    if (rc == 0) rc = gshmemi_bootstrap_tcp_join(&j, bs);
    if (secret != NULL) memset(secret, 0, GSHMEMI_WIRE_SECRET_MAX);
    free(secret);
    return rc;
}
