/*
 * The TCP bootstrap rendezvous ("root"): every PE connects, says HELLO, and the
 * root then serves allgather rounds as a star (gather all contributions of round
 * N, concatenate in rank order, send the result to everyone); a barrier is an
 * allgather of 0 bytes.
 *
 * The root keeps a job from hanging: when a PE's connection closes before it said
 * BYE, or a PE sends ABORT, or the launcher reports that a PE's process ended
 * before BYE (gshmemi_tcp_root_rank_gone: a PE that never joined cannot hang the
 * others), every other PE receives ABORT naming that PE. A connection that is
 * not a well-formed HELLO of this job (garbage, another protocol version, rank out
 * of range, duplicate rank, nranks or job id mismatch, missing or wrong job secret) is refused with a logged
 * reason and an ERROR frame; the root keeps serving. Up to nranks + 64 connections
 * may wait for their HELLO at once; beyond that a connection is closed unanswered
 * (a PE's client then connects once more).
 *
 * Hosted by gshmemrun (in a thread) and later by rank 0 for the unique-ID and
 * Kubernetes front ends. One root serves one job.
 */
#ifndef GSHMEMI_BOOTSTRAP_TCP_ROOT_H
#define GSHMEMI_BOOTSTRAP_TCP_ROOT_H

#include <stddef.h>

struct gshmemi_tcp_root;

struct gshmemi_tcp_root_config {
    const char *bind_host; /* address or name to listen on; NULL or "" for all interfaces */
    int port;              /* 0: an ephemeral port (see gshmemi_tcp_root_port) */
    int nranks;            /* PEs in the job, >= 1 */
    const char *job_id;    /* non-empty: a HELLO must carry this job id; NULL or "": any */
    double timeout;        /* seconds a connection may take to say HELLO, and a send to a
                              PE may stall, before that peer is dropped; <= 0: never */
    const void *secret;    /* job secret every PE must prove it holds (see wire.h); NULL: none */
    size_t secret_len;
};

/* Creates the root and starts listening (so the port is known before any PE starts).
 * Returns 0, GSHMEMX_ERR_INVALID_ARG, GSHMEMX_ERR_SYSTEM (bind/listen, logged) or
 * GSHMEMX_ERR_NOMEM. */
int gshmemi_tcp_root_create(const struct gshmemi_tcp_root_config *cfg, struct gshmemi_tcp_root **out);

/* The same on listen_fd, an already listening socket (the root owns it from now on,
 * also on failure). */
int gshmemi_tcp_root_create_on(const struct gshmemi_tcp_root_config *cfg, int listen_fd,
                               struct gshmemi_tcp_root **out);

/* The port listened on. */
int gshmemi_tcp_root_port(const struct gshmemi_tcp_root *root);

/* "host:port" (IPv6 literals bracketed) for GSHMEM_BOOTSTRAP_ROOT: the bind host, or
 * this machine's host name when bound to all interfaces. */
const char *gshmemi_tcp_root_address(const struct gshmemi_tcp_root *root);

/* Serves the job in the calling thread. Returns 0 once every PE has said BYE and
 * closed, or after gshmemi_tcp_root_stop; GSHMEMX_ERR_ABORTED once the job was
 * aborted (a PE aborted or was lost) and every PE has joined and closed (PEs that
 * connect after an abort are refused, so a root hosting a dying job keeps running
 * until stopped while some PE never came); GSHMEMX_ERR_SYSTEM on a failure of the
 * root itself (logged). */
int gshmemi_tcp_root_run(struct gshmemi_tcp_root *root);

/* Runs gshmemi_tcp_root_run in a new thread; join waits for it and returns its result. */
int gshmemi_tcp_root_start_thread(struct gshmemi_tcp_root *root);
int gshmemi_tcp_root_join(struct gshmemi_tcp_root *root);

/* join, waiting at most timeout_s (<= 0: no limit); past it the root is stopped and
 * GSHMEMX_ERR_TIMEOUT returned. */
int gshmemi_tcp_root_wait(struct gshmemi_tcp_root *root, double timeout_s);

/* The launcher saw rank's process end (wait_status as from waitpid). When the rank
 * never said BYE (it never joined, or it left without finalizing) the job is over:
 * every connected PE gets ABORT (kind LOST) naming it. Thread-safe; ignored for a rank
 * out of range. */
void gshmemi_tcp_root_rank_gone(struct gshmemi_tcp_root *root, int rank, int wait_status);

/* Makes run return soon. Async-signal-safe; callable from any thread. */
void gshmemi_tcp_root_stop(struct gshmemi_tcp_root *root);

/* Closes every connection and frees the root. Call after run returned (or join). */
void gshmemi_tcp_root_destroy(struct gshmemi_tcp_root *root);

#endif
