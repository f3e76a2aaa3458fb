/*
 * The bootstrap contract: how PEs learn their rank, find each other and
 * exchange small blobs before the heap and transports exist. Kept tiny.
 * Implementations: single (one PE), tcp (gshmemrun / unique ID / Kubernetes), pmix.
 */
#ifndef GSHMEMI_BOOTSTRAP_H
#define GSHMEMI_BOOTSTRAP_H

#include <stddef.h>

struct gshmemi_env;
struct gshmemi_bootstrap;

struct gshmemi_bootstrap_ops {
    size_t size; /* sizeof(struct gshmemi_bootstrap_ops) */
    const char *name;
    /* Every rank contributes len bytes; out receives nranks * len bytes in rank order.
     * A rank contributing a different len is GSHMEMX_ERR_MISMATCH naming both ranks. */
    int (*allgather)(struct gshmemi_bootstrap *bs, const void *in, void *out, size_t len);
    int (*barrier)(struct gshmemi_bootstrap *bs);
    /* Nonblocking health check for long waits: 0, or GSHMEMX_ERR_ABORTED /
     * GSHMEMX_ERR_PEER_LOST (logged, naming the PE) when the job is ending. */
    int (*check)(struct gshmemi_bootstrap *bs);
    /* Tells every other PE to exit with status; returns once the message is sent. */
    void (*abort)(struct gshmemi_bootstrap *bs, int status);
    /* Releases the connection; not collective. */
    int (*finalize)(struct gshmemi_bootstrap *bs);
    /* Optional, on the way out of an ended job (after abort, or an ABORT received): a
     * process that hosts the root gives it a moment to tell the other PEs before the
     * process, and the root with it, is gone. */
    void (*linger)(struct gshmemi_bootstrap *bs);
};

struct gshmemi_bootstrap {
    const struct gshmemi_bootstrap_ops *ops;
    void *impl;
    int rank;
    int nranks;
    /* Filled by gshmemi_bootstrap_init from an allgather of node ids. */
    int local_rank;
    int local_nranks;
    int *node_of_rank;  /* nranks entries: dense node index of each rank */
    int *local_ranks;   /* local_nranks entries: world ranks on this node, ascending */
    /* Exit status for this PE once check() or a collective reported GSHMEMX_ERR_ABORTED:
     * the status another PE passed to gshmem_global_exit (1 otherwise). */
    int abort_status;
};

/* Picks and starts an implementation (GSHMEM_BOOTSTRAP, then detection), then
 * computes the node-local view. node_id identifies this node (hostname and boot id,
 * or GSHMEM_NODE_ID). */
int gshmemi_bootstrap_init(const struct gshmemi_env *env, struct gshmemi_bootstrap *bs);
void gshmemi_bootstrap_fini(struct gshmemi_bootstrap *bs);

/* Implementations. Each fills ops, impl, rank, nranks. */
int gshmemi_bootstrap_single_init(struct gshmemi_bootstrap *bs);
int gshmemi_bootstrap_tcp_init(const struct gshmemi_env *env, struct gshmemi_bootstrap *bs);
int gshmemi_bootstrap_pmix_init(const struct gshmemi_env *env, struct gshmemi_bootstrap *bs);
/* Kubernetes (k8s.c): pod index and size from the controller's variables, root at pod 0. */
int gshmemi_bootstrap_k8s_init(const struct gshmemi_env *env, struct gshmemi_bootstrap *bs);
/* Why this looks like such a pod (KUBERNETES_SERVICE_HOST and an index variable), or NULL. */
const char *gshmemi_bootstrap_k8s_detect(void);
/* What GSHMEM_BOOTSTRAP=auto picks here ("pmix", "k8s", "tcp", "single") and why, for gshmem-info. */
const char *gshmemi_bootstrap_detect(const struct gshmemi_env *env, const char **why);

/* This node's identity: GSHMEM_NODE_ID, else "<hostname>/<boot id>". */
void gshmemi_bootstrap_node_id(const struct gshmemi_env *env, char *out, size_t outlen);

#endif
