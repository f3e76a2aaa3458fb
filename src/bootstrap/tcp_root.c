/* The TCP bootstrap rendezvous (see tcp_root.h): one poll loop, nonblocking reads,
 * one frame at a time per connection. */
#include "bootstrap/tcp_root.h"

#include <errno.h>
#include <fcntl.h>
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
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bootstrap/sha256.h"
#include "bootstrap/wire.h"
#include "core/log.h"
#include "gshmem/status.h"

#include "bootstrap/tcp_root_impl.h"

static void root_close_conn(struct gshmemi_tcp_root *root, struct root_conn *c)
{
    if (c->rank >= 0) {
        root->slot_of_rank[c->rank] = -1;
        if (c->bye) root->nleft++;
    }
    if (c->fd >= 0) close(c->fd);
    root_conn_reset(c);
}

/* A connection that is not (yet) a PE of this job is turned away; the job goes on. */
static void root_refuse(struct gshmemi_tcp_root *root, struct root_conn *c, int status, const char *why)
{
    GSHMEMI_ERROR(BOOT, "bootstrap root: refused connection from %s: %s", c->peer, why);
    gshmemi_root_send_error(root, c, status, why);
    /* The ERROR is small, and all of it goes before the close: its rest, if the socket
     * took only part, within ROOT_ABORT_SEND_TIMEOUT_S. */
    for (int64_t until = gshmemi_wire_deadline(ROOT_ABORT_SEND_TIMEOUT_S); c->out_head != NULL;) {
        struct pollfd pfd = {.fd = c->fd, .events = POLLOUT};
        int ms = gshmemi_wire_poll_ms(until);
        if (ms == 0 || poll(&pfd, 1, ms) <= 0 || gshmemi_root_flush(root, c) != 0) break;
    }
    /* Unread input would turn the close into a reset that can destroy the ERROR in flight. */
    shutdown(c->fd, SHUT_WR);
    char sink[4096];
    for (int i = 0; i < 16 && recv(c->fd, sink, sizeof(sink), MSG_DONTWAIT) > 0; i++) {}
    root_close_conn(root, c);
}

/* Tells every connected PE except `except` that the job is over. */
static void root_broadcast(struct gshmemi_tcp_root *root, const struct gshmemi_wire_abort *a, int except)
{
    uint8_t buf[GSHMEMI_WIRE_ABORT_MAX];
    size_t len = gshmemi_wire_abort_encode(a, buf);
    if (!root->failed) {
        root->failed = a->kind == GSHMEMI_WIRE_ABORT_LOST      ? GSHMEMX_ERR_PEER_LOST
                       : a->kind == GSHMEMI_WIRE_ABORT_MISSING ? GSHMEMX_ERR_TIMEOUT
                                                               : GSHMEMX_ERR_ABORTED;
        int said = root->abort_reason[0] != '\0'; /* the caller knew better */
        if (!said && a->kind == GSHMEMI_WIRE_ABORT_LOST)
            snprintf(root->abort_reason, sizeof(root->abort_reason), "PE %d exited or lost its connection",
                     (int)a->origin);
        else if (!said)
            snprintf(root->abort_reason, sizeof(root->abort_reason), "PE %d aborted it with status %d",
                     (int)a->origin, (int)a->status);
    }
    for (int r = 0; r < root->nranks; r++) {
        int s = root->slot_of_rank[r];
        if (r == except || s < 0) continue;
        /* A courtesy to PEs that may be dying too: one that takes nothing for a second is dropped. */
        gshmemi_root_send_timed(root, &root->conns[s], GSHMEMI_WIRE_ABORT, 0, buf, len, ROOT_ABORT_SEND_TIMEOUT_S);
    }
}

static void root_broadcast_abort(struct gshmemi_tcp_root *root, int origin, int status, uint32_t kind, int except)
{
    struct gshmemi_wire_abort a = {.status = status, .origin = origin, .kind = kind};
    root_broadcast(root, &a, except);
}

/* When the job ends inside a round: which PEs the others were waiting for. */
static void root_round_log_missing(const struct gshmemi_tcp_root *root)
{
    char list[256];
    size_t len = 0;
    int missing = 0;
    if (root->ncontrib == 0) return;
    list[0] = '\0';
    for (int r = 0; r < root->nranks; r++) {
        if (root->contrib[r] != NULL) continue;
        if (missing++ < 24 && len < sizeof(list))
            len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%d", missing > 1 ? ", " : "", r);
    }
    GSHMEMI_ERROR(BOOT, "bootstrap root: allgather round %u was waiting for %d of %d PEs: PE %s%s", root->seq,
                  missing, root->nranks, list, missing > 24 ? ", ..." : "");
}

/* A PE's GSHMEM_TIMEOUT ran out in the current round: every PE, that one too, learns
 * which PEs the round lacked, those that never joined first in the reason. */
static void root_round_expire(struct gshmemi_tcp_root *root, const struct root_conn *c)
{
    struct gshmemi_wire_abort a = {.status = GSHMEMX_ERR_TIMEOUT, .origin = c->rank,
                                   .kind = GSHMEMI_WIRE_ABORT_MISSING, .round = root->seq};
    int never = 0, first = -1;
    for (int r = 0; r < root->nranks; r++) {
        if (root->contrib[r] != NULL) continue;
        never += !root->rank_seen[r];
        if (first < 0 || (!root->rank_seen[r] && root->rank_seen[first])) first = r;
        if (a.nlisted < GSHMEMI_WIRE_MISSING_LIST_MAX) {
            a.missing[a.nlisted].rank = r;
            a.missing[a.nlisted++].joined = root->rank_seen[r] != 0;
        }
        a.nmissing++;
    }
    GSHMEMI_ERROR(BOOT, "bootstrap root: %s gave up on allgather round %u after its GSHMEM_TIMEOUT; %d of %d "
                  "PEs never joined: telling every PE who is missing", c->peer, root->seq, never, root->nranks);
    root_round_log_missing(root);
    if (never > 0)
        snprintf(root->abort_reason, sizeof(root->abort_reason), "it never assembled (PE %d did not join in time)",
                 first);
    else
        snprintf(root->abort_reason, sizeof(root->abort_reason), "allgather round %u timed out waiting for PE %d",
                 root->seq, first);
    root_broadcast(root, &a, -1);
}

/* A PE's connection broke (closed without BYE, garbage, send failure): end the job. */
static void root_rank_lost(struct gshmemi_tcp_root *root, struct root_conn *c, const char *why)
{
    int rank = c->rank;
    int first = !root->failed;
    if (first) GSHMEMI_ERROR(BOOT, "bootstrap root: lost %s: %s", c->peer, why);
    else GSHMEMI_INFO(BOOT, "bootstrap root: %s left the aborted job: %s", c->peer, why);
    if (first) root_round_log_missing(root);
    root_close_conn(root, c);
    if (first) root_broadcast_abort(root, rank, GSHMEMX_ERR_PEER_LOST, GSHMEMI_WIRE_ABORT_LOST, -1);
}

static void root_round_reset(struct gshmemi_tcp_root *root)
{
    for (int r = 0; r < root->nranks; r++) {
        free(root->contrib[r]);
        root->contrib[r] = NULL;
    }
    root->ncontrib = 0;
    root->round_len = 0;
    root->round_first = -1;
    root->round_status = 0;
    root->round_doomed = 0;
    root->round_msg[0] = '\0';
    root->seq++;
}

static void root_round_complete(struct gshmemi_tcp_root *root)
{
    size_t len = root->round_len, total = len * (size_t)root->nranks;
    struct root_blob *result = NULL; /* every PE's queue shares it */
    if (root->round_status == 0 && total > 0 && (result = gshmemi_root_blob_new(NULL, total)) == NULL) {
        root->round_status = GSHMEMX_ERR_NOMEM;
        snprintf(root->round_msg, sizeof(root->round_msg), "bootstrap root: no memory for a %zu-byte allgather",
                 total);
    }
    for (int r = 0; r < root->nranks && result != NULL; r++)
        memcpy(result->data + (size_t)r * len, root->contrib[r], len);
    uint32_t seq = root->seq;
    int status = root->round_status;
    char msg[GSHMEMI_WIRE_MSG_MAX];
    snprintf(msg, sizeof(msg), "%s", root->round_msg);
    root_round_reset(root);
    /* A failed round still completes on every PE, so the next round starts in step. */
    for (int r = 0; r < root->nranks; r++) {
        int s = root->slot_of_rank[r];
        if (s < 0) continue;
        struct root_conn *c = &root->conns[s];
        int rc = status ? gshmemi_root_send_error(root, c, status, msg)
                        : gshmemi_root_send_blob(root, c, GSHMEMI_WIRE_RESULT, seq, result, root->timeout);
        if (rc && !root->failed) root_rank_lost(root, c, "could not deliver the allgather result");
    }
    root_blob_put(result);
    GSHMEMI_TRACE(BOOT, "bootstrap root: allgather round %u done (%zu bytes per PE)", seq, len);
}

/* The round cannot complete (a PE has left): contributors get ERROR now, later ones on arrival. */
static void root_round_doom(struct gshmemi_tcp_root *root, int status)
{
    GSHMEMI_ERROR(BOOT, "%s", root->round_msg);
    root->round_status = status;
    root->round_doomed = 1;
    for (int r = 0; r < root->nranks; r++) {
        int s = root->slot_of_rank[r];
        if (root->contrib[r] != NULL && s >= 0) gshmemi_root_send_error(root, &root->conns[s], status, root->round_msg);
    }
}

/* A round some PE can no longer join (it said BYE) would hang the others. */
static void root_round_check_left(struct gshmemi_tcp_root *root)
{
    if (root->ncontrib == 0 || root->round_doomed) return;
    for (int r = 0; r < root->nranks; r++) {
        if (root->rank_left[r] && root->contrib[r] == NULL) {
            snprintf(root->round_msg, sizeof(root->round_msg),
                     "bootstrap allgather round %u cannot complete: PE %d has already finalized", root->seq, r);
            root_round_doom(root, GSHMEMX_ERR_BOOTSTRAP);
            return;
        }
    }
}

/* Checks a contribution's length against the round's first; a failure is reported at completion. */
static void root_round_check_len(struct gshmemi_tcp_root *root, int r, uint32_t len)
{
    if (root->round_first < 0) {
        root->round_first = r;
        root->round_len = len;
        if ((uint64_t)len * (uint64_t)root->nranks <= GSHMEMI_WIRE_MAX_PAYLOAD) return;
        snprintf(root->round_msg, sizeof(root->round_msg),
                 "bootstrap allgather round %u: %u bytes from each of %d PEs exceeds the %u-byte limit", root->seq,
                 len, root->nranks, GSHMEMI_WIRE_MAX_PAYLOAD);
        root->round_status = GSHMEMX_ERR_INVALID_ARG;
    } else if (len != root->round_len && root->round_status == 0) {
        snprintf(root->round_msg, sizeof(root->round_msg),
                 "bootstrap allgather round %u: PE %d contributed %u bytes but PE %d contributed %u", root->seq, r,
                 len, root->round_first, root->round_len);
        root->round_status = GSHMEMX_ERR_MISMATCH;
    } else {
        return;
    }
    GSHMEMI_ERROR(BOOT, "%s", root->round_msg);
}

static void root_handle_gather(struct gshmemi_tcp_root *root, struct root_conn *c)
{
    int r = c->rank;
    char why[GSHMEMI_WIRE_MSG_MAX];
    if (root->failed) return; /* the PE has or will get ABORT */
    if (c->hdr.seq != root->seq || root->contrib[r] != NULL || root->rank_left[r]) {
        snprintf(why, sizeof(why), "sent allgather round %u while the job is in round %u%s", c->hdr.seq,
                 root->seq, root->contrib[r] ? " and it already contributed" : "");
        root_rank_lost(root, c, why);
        return;
    }
    root->contrib[r] = c->payload;
    c->payload = NULL;
    root->ncontrib++;
    root_round_check_len(root, r, c->hdr.length);
    if (root->round_doomed) gshmemi_root_send_error(root, c, root->round_status, root->round_msg);
    root_round_check_left(root);
    if (root->ncontrib == root->nranks) root_round_complete(root);
}

/* A PE's ABORT: it called abort (CALLED), or its wait for round hdr.seq ran out (TIMEOUT). */
static void root_handle_abort(struct gshmemi_tcp_root *root, struct root_conn *c)
{
    struct gshmemi_wire_abort a;
    char err[GSHMEMI_WIRE_ERR_MAX];
    if (gshmemi_wire_abort_decode(c->payload, c->hdr.length, &a, err, sizeof(err))) {
        root_rank_lost(root, c, err);
        return;
    }
    if (a.kind != GSHMEMI_WIRE_ABORT_CALLED && a.kind != GSHMEMI_WIRE_ABORT_TIMEOUT) {
        snprintf(err, sizeof(err), "sent an ABORT of kind %u, which only the root sends", a.kind);
        root_rank_lost(root, c, err);
        return;
    }
    if (root->failed) return;
    if (a.kind == GSHMEMI_WIRE_ABORT_TIMEOUT) {
        /* Else the round completed meanwhile and its RESULT is on the way to the PE. */
        if (c->hdr.seq == root->seq && root->contrib[c->rank] != NULL && !root->round_doomed)
            root_round_expire(root, c);
        return;
    }
    GSHMEMI_ERROR(BOOT, "bootstrap root: %s aborted the job with status %d", c->peer, (int)a.status);
    root_round_log_missing(root);
    root_broadcast_abort(root, c->rank, a.status, GSHMEMI_WIRE_ABORT_CALLED, c->rank);
    c->bye = 1; /* its close is expected now */
}

/* Returns the reason a HELLO cannot join, or NULL. */
static const char *root_hello_problem(struct gshmemi_tcp_root *root, const struct gshmemi_wire_hello *h,
                                      char *why, size_t whylen)
{
    if (h->nranks != root->nranks)
        snprintf(why, whylen, "PE %d says the job has %d PEs, the root serves %d", (int)h->rank, (int)h->nranks,
                 root->nranks);
    else if (h->rank < 0 || h->rank >= root->nranks)
        snprintf(why, whylen, "rank %d is out of range [0, %d)", (int)h->rank, root->nranks);
    else if (root->job_id[0] != '\0' && strcmp(h->job_id, root->job_id) != 0)
        snprintf(why, whylen, "PE %d belongs to job '%.100s', the root serves job '%.100s'", (int)h->rank, h->job_id,
                 root->job_id);
    else if (h->auth_method != GSHMEMI_WIRE_AUTH_NONE && h->auth_method != GSHMEMI_WIRE_AUTH_HMAC_SHA256)
        snprintf(why, whylen, "PE %d uses unsupported authentication method %u", (int)h->rank,
                 (unsigned)h->auth_method);
    else if (root->secret != NULL && h->auth_method == GSHMEMI_WIRE_AUTH_NONE)
        snprintf(why, whylen, "no job secret: PE %d did not offer one and this job requires it "
                 "(GSHMEM_BOOTSTRAP_SECRET)", (int)h->rank);
    else if (root->secret == NULL && h->auth_method != GSHMEMI_WIRE_AUTH_NONE)
        snprintf(why, whylen, "PE %d has a job secret but this root was started without one", (int)h->rank);
    else if (root->rank_seen[h->rank] && root->slot_of_rank[h->rank] >= 0)
        snprintf(why, whylen, "duplicate rank %d (already connected: %s)", (int)h->rank,
                 root->conns[root->slot_of_rank[h->rank]].peer);
    else if (root->rank_seen[h->rank])
        snprintf(why, whylen, "duplicate rank %d (it already joined this job and left)", (int)h->rank);
    else if (root->failed)
        snprintf(why, whylen, "the job was already aborted: %s", root->abort_reason);
    else
        return NULL;
    return why;
}

/* h is this job's PE (and proved it holds the secret, if one is required). */
static void root_admit(struct gshmemi_tcp_root *root, struct root_conn *c, const struct gshmemi_wire_hello *h)
{
    char addr[ROOT_PEER_MAX];
    snprintf(addr, sizeof(addr), "%s", c->peer);
    snprintf(c->peer, sizeof(c->peer), "PE %d (%.60s pid %u, %.40s)", (int)h->rank, h->host, (unsigned)h->pid, addr);
    c->rank = h->rank;
    root->rank_seen[h->rank] = 1;
    root->slot_of_rank[h->rank] = (int)(c - root->conns);
    uint8_t welcome[GSHMEMI_WIRE_WELCOME_SIZE] = {0}; /* u32 nranks, u32 flags: informational */
    for (int i = 0; i < 4; i++) welcome[i] = (uint8_t)((uint32_t)root->nranks >> (8 * i));
    GSHMEMI_INFO(BOOT, "bootstrap root: %s joined", c->peer);
    if (gshmemi_root_send(root, c, GSHMEMI_WIRE_WELCOME, 0, welcome, sizeof(welcome)))
        root_rank_lost(root, c, "could not send WELCOME");
}

/* Sends a fresh nonce; the HELLO waits in c for the AUTH that answers it. */
static void root_challenge(struct gshmemi_tcp_root *root, struct root_conn *c, const struct gshmemi_wire_hello *h)
{
    c->challenged = malloc(sizeof(*c->challenged));
    if (c->challenged == NULL || gshmemi_wire_random(c->nonce, sizeof(c->nonce)) != 0) {
        root_refuse(root, c, GSHMEMX_ERR_SYSTEM, "the root could not make a challenge");
        return;
    }
    *c->challenged = *h;
    if (gshmemi_root_send(root, c, GSHMEMI_WIRE_CHALLENGE, 0, c->nonce, sizeof(c->nonce))) root_close_conn(root, c);
}

static void root_handle_hello(struct gshmemi_tcp_root *root, struct root_conn *c)
{
    struct gshmemi_wire_hello h;
    char why[GSHMEMI_WIRE_MSG_MAX];
    if (gshmemi_wire_hello_decode(c->payload, c->hdr.length, &h, why, sizeof(why))) {
        root_refuse(root, c, GSHMEMX_ERR_PROTOCOL, why);
        return;
    }
    if (root_hello_problem(root, &h, why, sizeof(why)) != NULL) {
        root_refuse(root, c, GSHMEMX_ERR_BOOTSTRAP, why);
        return;
    }
    if (root->secret != NULL) root_challenge(root, c, &h);
    else root_admit(root, c, &h);
}

static void root_handle_auth(struct gshmemi_tcp_root *root, struct root_conn *c)
{
    struct gshmemi_wire_hello h = *c->challenged;
    uint8_t want[GSHMEMI_WIRE_PROOF_SIZE];
    char why[GSHMEMI_WIRE_MSG_MAX];
    if (c->hdr.length != GSHMEMI_WIRE_PROOF_SIZE) {
        snprintf(why, sizeof(why), "bad job secret: PE %d sent a %u-byte proof, expected %d", (int)h.rank,
                 c->hdr.length, GSHMEMI_WIRE_PROOF_SIZE);
        root_refuse(root, c, GSHMEMX_ERR_BOOTSTRAP, why);
        return;
    }
    gshmemi_wire_auth_proof(root->secret, root->secret_len, c->nonce, h.rank, h.job_id, want);
    if (!gshmemi_hmac_equal(want, c->payload, sizeof(want))) {
        snprintf(why, sizeof(why), "bad job secret (PE %d)", (int)h.rank);
        root_refuse(root, c, GSHMEMX_ERR_BOOTSTRAP, why);
        return;
    }
    /* Another connection may have taken the rank while this one answered. */
    if (root_hello_problem(root, &h, why, sizeof(why)) != NULL) {
        root_refuse(root, c, GSHMEMX_ERR_BOOTSTRAP, why);
        return;
    }
    free(c->challenged);
    c->challenged = NULL;
    root_admit(root, c, &h);
}

/* Dispatches c's complete frame. */
static void root_handle_frame(struct gshmemi_tcp_root *root, struct root_conn *c)
{
    char why[GSHMEMI_WIRE_MSG_MAX];
    if (c->rank < 0) {
        if (c->challenged != NULL) root_handle_auth(root, c);
        else root_handle_hello(root, c);
        return;
    }
    switch (c->hdr.type) {
    case GSHMEMI_WIRE_GATHER: root_handle_gather(root, c); break;
    case GSHMEMI_WIRE_ABORT: root_handle_abort(root, c); break;
    case GSHMEMI_WIRE_BYE:
        c->bye = 1;
        root->rank_left[c->rank] = 1;
        root_round_check_left(root);
        break;
    default:
        snprintf(why, sizeof(why), "unexpected %s message", gshmemi_wire_type_name(c->hdr.type));
        root_rank_lost(root, c, why);
    }
}

/* Validates a complete header; -1 when the connection was dropped. */
static int root_take_header(struct gshmemi_tcp_root *root, struct root_conn *c)
{
    char why[GSHMEMI_WIRE_ERR_MAX];
    int rc = gshmemi_wire_header_decode(c->hdr_buf, GSHMEMI_WIRE_HEADER_SIZE, &c->hdr, why, sizeof(why));
    unsigned want = c->challenged != NULL ? GSHMEMI_WIRE_AUTH : GSHMEMI_WIRE_HELLO;
    if (rc == 0 && c->rank < 0 && c->hdr.type != want) {
        snprintf(why, sizeof(why), "expected %s, got %s", gshmemi_wire_type_name(want),
                 gshmemi_wire_type_name(c->hdr.type));
        rc = GSHMEMX_ERR_PROTOCOL;
    }
    if (rc == 0 && (c->payload = malloc((size_t)c->hdr.length + 1)) == NULL) { /* never NULL, even for 0 bytes */
        snprintf(why, sizeof(why), "no memory for a %u-byte message", c->hdr.length);
        rc = GSHMEMX_ERR_NOMEM;
    }
    if (rc == 0) {
        c->have_hdr = 1;
        return 0;
    }
    if (c->rank < 0) root_refuse(root, c, rc, why);
    else root_rank_lost(root, c, why);
    return -1;
}

static void root_conn_closed(struct gshmemi_tcp_root *root, struct root_conn *c, ssize_t n)
{
    char why[GSHMEMI_WIRE_MSG_MAX];
    size_t got = c->hdr_got + c->payload_got;
    if (n < 0) snprintf(why, sizeof(why), "receive failed: %s", strerror(errno));
    else if (got > 0) snprintf(why, sizeof(why), "connection closed inside a message (%zu bytes in)", got);
    else snprintf(why, sizeof(why), "connection closed without BYE");
    if (c->rank >= 0 && !(c->bye && n == 0 && got == 0)) root_rank_lost(root, c, why);
    else if (c->rank < 0 && got > 0) GSHMEMI_WARN(BOOT, "bootstrap root: %s: %s", c->peer, why);
    if (c->fd >= 0) root_close_conn(root, c);
}

/* Reads what is available into c's frame buffer: 1 with a whole frame, 0 for more
 * later, -1 once the connection was dropped. */
static int root_read_frame(struct gshmemi_tcp_root *root, struct root_conn *c)
{
    for (;;) {
        size_t want = c->have_hdr ? c->hdr.length - c->payload_got : GSHMEMI_WIRE_HEADER_SIZE - c->hdr_got;
        if (want == 0) return 1;
        uint8_t *dst = c->have_hdr ? c->payload + c->payload_got : c->hdr_buf + c->hdr_got;
        ssize_t n = recv(c->fd, dst, want, MSG_DONTWAIT);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
        if (n <= 0) {
            root_conn_closed(root, c, n);
            return -1;
        }
        if (c->have_hdr) {
            c->payload_got += (size_t)n;
        } else {
            c->hdr_got += (size_t)n;
            if (c->hdr_got == GSHMEMI_WIRE_HEADER_SIZE && root_take_header(root, c) < 0) return -1;
        }
    }
}

static void root_service_conn(struct gshmemi_tcp_root *root, struct root_conn *c)
{
    /* A bounded number of frames per wakeup keeps one chatty peer from starving others. */
    for (int frames = 0; frames < 16 && c->fd >= 0; frames++) {
        if (root_read_frame(root, c) <= 0) return;
        root_handle_frame(root, c);
        if (c->fd < 0) return;
        free(c->payload);
        c->payload = NULL;
        c->payload_got = 0;
        c->hdr_got = 0;
        c->have_hdr = 0;
    }
}

static void root_peer_name(const struct sockaddr_storage *ss, socklen_t len, char *out, size_t outlen)
{
    char host[NI_MAXHOST], serv[NI_MAXSERV];
    const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;
    struct sockaddr_storage v4;
    if (ss->ss_family == AF_INET6 && IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr)) { /* an IPv4 PE on the dual-stack port */
        struct sockaddr_in *s4 = (struct sockaddr_in *)&v4;
        memset(&v4, 0, sizeof(v4));
        s4->sin_family = AF_INET;
        s4->sin_port = s6->sin6_port;
        memcpy(&s4->sin_addr, &s6->sin6_addr.s6_addr[12], 4);
        ss = &v4;
        len = sizeof(*s4);
    }
    if (getnameinfo((const struct sockaddr *)ss, len, host, sizeof(host), serv, sizeof(serv),
                    NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
        snprintf(out, outlen, "an unknown address");
        return;
    }
    if (ss->ss_family == AF_INET6) snprintf(out, outlen, "[%.100s]:%.8s", host, serv);
    else snprintf(out, outlen, "%.100s:%.8s", host, serv);
}

/* A slot for a new connection. When nranks + ROOT_PENDING_MAX connections already wait
 * for their HELLO, the oldest of them is turned away for it: dropping the new one
 * instead let a few dozen silent connections keep every PE out for the root's whole
 * timeout (found by review 2026-12-05). */
static struct root_conn *root_free_slot(struct gshmemi_tcp_root *root)
{
    int pending = 0;
    struct root_conn *free_slot = NULL, *oldest = NULL;
    for (int i = 0; i < root->nslots; i++) {
        struct root_conn *c = &root->conns[i];
        if (c->fd >= 0 && c->rank < 0 && !c->challenged) {
            pending++;
            if (!oldest || c->accepted_ms < oldest->accepted_ms) oldest = c;
        } else if (c->fd >= 0 && c->rank < 0) {
            pending++;
        }
        if (c->fd < 0 && free_slot == NULL) free_slot = c;
    }
    if (pending < root->nranks + ROOT_PENDING_MAX) return free_slot;
    if (!oldest) return NULL;
    /* Closed without an ERROR: a PE that was slow to say HELLO sees the connection
     * close, and connects again. */
    GSHMEMI_WARN(BOOT, "bootstrap root: closed the connection from %s: no HELLO yet, the oldest of %d connections "
                       "without one, and another came", oldest->peer, pending);
    root_close_conn(root, oldest);
    return oldest; /* its slot is free */
}

static void root_accept(struct gshmemi_tcp_root *root)
{
    for (;;) {
        struct sockaddr_storage ss;
        socklen_t sl = sizeof(ss);
        int fd = accept4(root->listen_fd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0 && errno == EINTR) continue;
        if (fd < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
        if (fd < 0) {
            GSHMEMI_WARN(BOOT, "bootstrap root: accept failed: %s", strerror(errno));
            if (errno == EMFILE || errno == ENFILE) nanosleep(&(struct timespec){.tv_nsec = 10000000}, NULL);
            return;
        }
        struct root_conn *c = root_free_slot(root);
        char peer[ROOT_PEER_MAX];
        root_peer_name(&ss, sl, peer, sizeof(peer));
        if (c == NULL) {
            GSHMEMI_WARN(BOOT, "bootstrap root: dropped connection from %s: too many connections without HELLO",
                         peer);
            close(fd);
            continue;
        }
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &(int){1}, sizeof(int));
        c->fd = fd;
        c->accepted_ms = gshmemi_wire_now_ms();
        c->hello_deadline =
            gshmemi_wire_deadline(root->timeout > 0 && root->timeout < ROOT_HELLO_S ? root->timeout : ROOT_HELLO_S);
        snprintf(c->peer, sizeof(c->peer), "%s", peer);
        GSHMEMI_TRACE(BOOT, "bootstrap root: connection from %s", peer);
        root_service_conn(root, c); /* a HELLO already here frees the pending slot at once */
    }
}

/* Drops connections that did not say HELLO in time; returns ms until the next such deadline. */
static int root_expire_pending(struct gshmemi_tcp_root *root)
{
    int next = -1;
    for (int i = 0; i < root->nslots; i++) {
        struct root_conn *c = &root->conns[i];
        if (c->fd < 0 || c->rank >= 0 || c->hello_deadline < 0) continue;
        int ms = gshmemi_wire_poll_ms(c->hello_deadline);
        if (ms == 0) {
            char why[GSHMEMI_WIRE_MSG_MAX];
            snprintf(why, sizeof(why), "no HELLO within %g s",
                     root->timeout > 0 && root->timeout < ROOT_HELLO_S ? root->timeout : ROOT_HELLO_S);
            root_refuse(root, c, GSHMEMX_ERR_TIMEOUT, why);
        } else if (next < 0 || ms < next) {
            next = ms;
        }
    }
    return next;
}

/* Drops connections whose queued output made no progress within its timeout (a PE that
 * stopped reading); returns ms until the next such deadline, or -1. */
static int root_expire_output(struct gshmemi_tcp_root *root)
{
    int next = -1;
    int64_t now = gshmemi_wire_now_ms();
    for (int i = 0; i < root->nslots; i++) {
        struct root_conn *c = &root->conns[i];
        if (c->fd < 0 || c->out_head == NULL || c->out_head->timeout <= 0) continue;
        const struct root_out *o = c->out_head;
        int64_t left = c->out_progress_ms + (int64_t)(o->timeout * 1000.0 + 0.5) - now;
        if (left > 0) {
            int ms = left > 60000 ? 60000 : (int)left;
            if (next < 0 || ms < next) next = ms;
            continue;
        }
        struct gshmemi_wire_header h;
        char why[GSHMEMI_WIRE_MSG_MAX], type[32] = "message";
        if (gshmemi_wire_header_decode(o->hdr, sizeof(o->hdr), &h, why, sizeof(why)) == 0)
            snprintf(type, sizeof(type), "%s", gshmemi_wire_type_name(h.type));
        snprintf(why, sizeof(why), "it stopped reading: %zu of %zu bytes of a %s sent, none taken for %g s", o->sent,
                 GSHMEMI_WIRE_HEADER_SIZE + (o->blob ? o->blob->len : 0), type, o->timeout);
        if (c->rank >= 0) root_rank_lost(root, c, why);
        else root_close_conn(root, c);
    }
    return next;
}

static void root_describe_exit(int wait_status, char *out, size_t outlen)
{
    if (WIFEXITED(wait_status)) snprintf(out, outlen, "exited with status %d", WEXITSTATUS(wait_status));
    else if (WIFSIGNALED(wait_status)) snprintf(out, outlen, "was killed by signal %d", WTERMSIG(wait_status));
    else snprintf(out, outlen, "ended (wait status %#x)", (unsigned)wait_status);
}

/* rank's process ended: fine after BYE; else the job cannot go on. */
static void root_rank_ended(struct gshmemi_tcp_root *root, int rank, int wait_status)
{
    char how[64], why[GSHMEMI_WIRE_MSG_MAX];
    int s = root->slot_of_rank[rank];
    /* What the process sent before it ended (its BYE, its EOF) is read first. */
    if (s >= 0) root_service_conn(root, &root->conns[s]);
    root->rank_gone[rank] = 1;
    if (root->rank_left[rank] || root->failed) return;
    root_describe_exit(wait_status, how, sizeof(how));
    s = root->slot_of_rank[rank];
    if (s >= 0) {
        snprintf(why, sizeof(why), "its process %s without BYE", how);
        root_rank_lost(root, &root->conns[s], why);
    } else if (!root->rank_seen[rank]) {
        int waited_for = 0; /* else perhaps no PE uses gshmem: later ones are refused, naming it */
        for (int r = 0; r < root->nranks; r++) waited_for |= root->slot_of_rank[r] >= 0;
        if (waited_for) GSHMEMI_ERROR(BOOT, "bootstrap root: PE %d %s without joining the job", rank, how);
        else GSHMEMI_INFO(BOOT, "bootstrap root: PE %d %s without joining the job", rank, how);
        snprintf(root->abort_reason, sizeof(root->abort_reason), "PE %d %s without joining the job", rank, how);
        root_round_log_missing(root);
        root_broadcast_abort(root, rank, GSHMEMX_ERR_PEER_LOST, GSHMEMI_WIRE_ABORT_LOST, -1);
    }
}

/* Empties the wakeup pipe; 1 on a stop request, else handles the ranks reported gone. */
static int root_wakeup(struct gshmemi_tcp_root *root)
{
    char sink[64];
    while (read(root->stop_pipe[0], sink, sizeof(sink)) > 0) {}
    if (atomic_load(&root->stopping)) return 1;
    pthread_mutex_lock(&root->gone_lock);
    int n = root->ngone_queued, *queue = malloc(sizeof(int) * 2 * (size_t)(n > 0 ? n : 1));
    if (queue != NULL) memcpy(queue, root->gone_queue, sizeof(int) * 2 * (size_t)n);
    if (queue != NULL) root->ngone_queued = 0;
    pthread_mutex_unlock(&root->gone_lock);
    for (int i = 0; queue != NULL && i < n; i++) root_rank_ended(root, queue[2 * i], queue[2 * i + 1]);
    free(queue);
    return 0;
}

/* 1 when the job is over: everyone left after BYE, or an aborted job with everyone gone. */
static int root_finished(const struct gshmemi_tcp_root *root, int *result)
{
    if (!root->failed) {
        *result = 0;
        return root->nleft == root->nranks;
    }
    for (int r = 0; r < root->nranks; r++)
        if (!(root->rank_seen[r] || root->rank_gone[r]) || root->slot_of_rank[r] >= 0) return 0;
    *result = GSHMEMX_ERR_ABORTED;
    return 1;
}

static int root_build_pollfds(struct gshmemi_tcp_root *root, struct pollfd *pfds, int *slot_of_pfd)
{
    int n = 0;
    pfds[n++] = (struct pollfd){.fd = root->stop_pipe[0], .events = POLLIN};
    pfds[n++] = (struct pollfd){.fd = root->listen_fd, .events = POLLIN};
    for (int i = 0; i < root->nslots; i++) {
        if (root->conns[i].fd < 0) continue;
        slot_of_pfd[n] = i;
        short events = (short)(POLLIN | (root->conns[i].out_head != NULL ? POLLOUT : 0));
        pfds[n++] = (struct pollfd){.fd = root->conns[i].fd, .events = events};
    }
    return n;
}

int gshmemi_tcp_root_run(struct gshmemi_tcp_root *root)
{
    struct pollfd *pfds = malloc(sizeof(*pfds) * (size_t)(root->nslots + 2));
    int *slot_of_pfd = malloc(sizeof(int) * (size_t)(root->nslots + 2));
    int result = GSHMEMX_ERR_NOMEM;
    if (pfds == NULL || slot_of_pfd == NULL) goto out;
    while (!root_finished(root, &result)) {
        int timeout_ms = root_expire_pending(root), out_ms = root_expire_output(root);
        if (out_ms >= 0 && (timeout_ms < 0 || out_ms < timeout_ms)) timeout_ms = out_ms;
        int n = root_build_pollfds(root, pfds, slot_of_pfd);
        if (poll(pfds, (nfds_t)n, timeout_ms) < 0) {
            if (errno == EINTR) continue;
            GSHMEMI_ERROR(BOOT, "bootstrap root: poll failed: %s", strerror(errno));
            result = GSHMEMX_ERR_SYSTEM;
            break;
        }
        if (pfds[0].revents && root_wakeup(root)) {
            result = 0;
            break;
        }
        if (pfds[1].revents) root_accept(root);
        for (int i = 2; i < n; i++) {
            struct root_conn *c = &root->conns[slot_of_pfd[i]];
            /* what it sent first: a BYE and a close are a clean end, not a failed send */
            if ((pfds[i].revents & ~POLLOUT) && c->fd == pfds[i].fd) root_service_conn(root, c);
            if ((pfds[i].revents & POLLOUT) && c->fd == pfds[i].fd && gshmemi_root_flush(root, c)) {
                if (c->rank >= 0) root_rank_lost(root, c, "could not send to it");
                else root_close_conn(root, c);
            }
        }
    }
out:
    free(pfds);
    free(slot_of_pfd);
    return result;
}

static void *root_thread_main(void *arg)
{
    struct gshmemi_tcp_root *root = arg;
    root->thread_result = gshmemi_tcp_root_run(root);
    return NULL;
}

int gshmemi_tcp_root_start_thread(struct gshmemi_tcp_root *root)
{
    int rc = pthread_create(&root->thread, NULL, root_thread_main, root);
    if (rc != 0) {
        GSHMEMI_ERROR(BOOT, "bootstrap root: cannot start its thread: %s", strerror(rc));
        return GSHMEMX_ERR_SYSTEM;
    }
    root->thread_started = 1;
    return 0;
}

int gshmemi_tcp_root_join(struct gshmemi_tcp_root *root)
{
    if (!root->thread_started) return GSHMEMX_ERR_INVALID_ARG;
    pthread_join(root->thread, NULL);
    root->thread_started = 0;
    return root->thread_result;
}

int gshmemi_tcp_root_wait(struct gshmemi_tcp_root *root, double timeout_s)
{
    if (!root->thread_started) return GSHMEMX_ERR_INVALID_ARG;
    if (timeout_s <= 0) return gshmemi_tcp_root_join(root);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += (time_t)timeout_s;
    ts.tv_nsec += (long)((timeout_s - (double)(time_t)timeout_s) * 1e9);
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    if (pthread_timedjoin_np(root->thread, NULL, &ts) == 0) {
        root->thread_started = 0;
        return root->thread_result;
    }
    GSHMEMI_INFO(BOOT, "bootstrap root: stopped after %g s with PEs still connected", timeout_s);
    gshmemi_tcp_root_stop(root);
    gshmemi_tcp_root_join(root);
    return GSHMEMX_ERR_TIMEOUT;
}

void gshmemi_tcp_root_stop(struct gshmemi_tcp_root *root)
{
    atomic_store(&root->stopping, 1);
    ssize_t rc = write(root->stop_pipe[1], "x", 1);
    (void)rc; /* a full pipe already holds a wakeup */
}

void gshmemi_tcp_root_rank_gone(struct gshmemi_tcp_root *root, int rank, int wait_status)
{
    if (rank < 0 || rank >= root->nranks) return;
    pthread_mutex_lock(&root->gone_lock);
    if (root->ngone_queued < root->nranks) { /* a rank's process ends once */
        root->gone_queue[2 * root->ngone_queued] = rank;
        root->gone_queue[2 * root->ngone_queued + 1] = wait_status;
        root->ngone_queued++;
    }
    pthread_mutex_unlock(&root->gone_lock);
    ssize_t rc = write(root->stop_pipe[1], "g", 1);
    (void)rc;
}
