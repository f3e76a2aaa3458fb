/* The rendezvous server's state, shared by its event loop (tcp_root.c) and its
 * set-up (tcp_root_setup.c). Internal to the tcp bootstrap. */
#ifndef GSHMEMI_TCP_ROOT_IMPL_H
#define GSHMEMI_TCP_ROOT_IMPL_H

#include "bootstrap/tcp_root.h"
#include "bootstrap/wire.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Connections that may wait for their HELLO beyond the job's own nranks: a burst of
 * every PE at once is always served, strangers cannot take more than this. */
#define ROOT_PENDING_MAX 64
/* How long a connection has to say HELLO (at most the root's timeout): a PE sends it
 * as soon as it has connected; anything silent longer only holds a slot. */
#define ROOT_HELLO_S 10.0
#define ROOT_PEER_MAX 160
#define ROOT_ABORT_SEND_TIMEOUT_S 1.0

/* A message's payload; one RESULT goes to every PE, so the queues share it. */
struct root_blob {
    size_t refs;
    size_t len;
    uint8_t data[];
};

/* A message queued for a connection: the root never waits for a PE to read. */
struct root_out {
    struct root_out *next;
    uint8_t hdr[GSHMEMI_WIRE_HEADER_SIZE];
    struct root_blob *blob; /* NULL: no payload */
    size_t sent;            /* bytes of header and payload written */
    double timeout;         /* s without progress before the PE counts as lost */
};

static inline void root_blob_put(struct root_blob *b)
{
    if (b != NULL && --b->refs == 0) free(b);
}

struct root_conn {
    int fd; /* -1: free slot */
    int rank; /* -1 until its HELLO is accepted */
    int bye;
    int64_t hello_deadline;
    int64_t accepted_ms; /* when accepted: the oldest silent connection goes first when full */
    char peer[ROOT_PEER_MAX];
    uint8_t hdr_buf[GSHMEMI_WIRE_HEADER_SIZE];
    size_t hdr_got;
    int have_hdr;
    struct gshmemi_wire_header hdr;
    uint8_t *payload;
    size_t payload_got;
    /* Between CHALLENGE and AUTH: the HELLO being proven and the nonce sent. */
    struct gshmemi_wire_hello *challenged;
    uint8_t nonce[GSHMEMI_WIRE_NONCE_SIZE];
    /* Messages not yet written, oldest first, and when the last byte went out. */
    struct root_out *out_head, *out_tail;
    int64_t out_progress_ms;
};

struct gshmemi_tcp_root {
    int nranks;
    double timeout;
    char job_id[GSHMEMI_WIRE_NAME_MAX];
    char address[GSHMEMI_WIRE_NAME_MAX + 16];
    uint8_t *secret; /* NULL: PEs say HELLO without proof */
    size_t secret_len;
    int port;
    int listen_fd;
    int stop_pipe[2];   /* wakes run: a stop request or gone ranks */
    atomic_int stopping;
    pthread_mutex_t gone_lock; /* guards gone_queue, filled by the launcher's thread */
    int *gone_queue;           /* pairs of rank, wait status */
    int ngone_queued;
    char *rank_gone;           /* the rank's process ended */
    struct root_conn *conns;
    int nslots;
    int *slot_of_rank; /* -1: not connected */
    char *rank_seen;   /* the rank's HELLO was accepted once */
    char *rank_left;   /* the rank said BYE */
    int nleft;         /* ranks whose connection closed after BYE */
    int failed;        /* the job was aborted: nonzero status */
    char abort_reason[96]; /* why, for PEs that come later */
    /* current allgather round */
    uint32_t seq;
    uint8_t **contrib;
    int ncontrib;
    uint32_t round_len;
    int round_first;
    int round_status; /* nonzero: the round failed; round_msg says why */
    int round_doomed; /* it can never complete: PEs were told already */
    char round_msg[GSHMEMI_WIRE_MSG_MAX];
    pthread_t thread;
    int thread_started;
    int thread_result;
};

static inline void root_conn_reset(struct root_conn *c)
{
    free(c->payload);
    free(c->challenged);
    while (c->out_head != NULL) {
        struct root_out *o = c->out_head;
        c->out_head = o->next;
        root_blob_put(o->blob);
        free(o);
    }
    memset(c, 0, sizeof(*c));
    c->fd = -1;
    c->rank = -1;
}

/* tcp_root_out.c: the root's sending side. Each returns 0, or a transport status (logged)
 * once the connection failed; a message the socket cannot take yet waits in c's queue
 * for POLLOUT (gshmemi_root_flush). */
/* A payload of len bytes, one reference; payload NULL: the caller fills it. */
struct root_blob *gshmemi_root_blob_new(const void *payload, size_t len);
int gshmemi_root_flush(struct gshmemi_tcp_root *root, struct root_conn *c);
int gshmemi_root_send_blob(struct gshmemi_tcp_root *root, struct root_conn *c, unsigned type, uint32_t seq,
                           struct root_blob *blob, double timeout);
int gshmemi_root_send_timed(struct gshmemi_tcp_root *root, struct root_conn *c, unsigned type, uint32_t seq,
                            const void *payload, size_t len, double timeout);
int gshmemi_root_send(struct gshmemi_tcp_root *root, struct root_conn *c, unsigned type, uint32_t seq,
                      const void *payload, size_t len);
int gshmemi_root_send_error(struct gshmemi_tcp_root *root, struct root_conn *c, int status, const char *msg);

#endif
