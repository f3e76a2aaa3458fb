/*
 * The host-side transport contract. One ops table per transport, size first, every
 * entry filled (an operation a transport cannot do returns GSHMEMX_ERR_NOT_SUPPORTED
 * from an explicit stub, never NULL). Core picks one transport per peer at init and
 * calls it with heap offsets, never with peer addresses.
 */
#ifndef GSHMEMI_TRANSPORT_H
#define GSHMEMI_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct gshmemi_bootstrap;
struct gshmemi_env;
struct gshmemi_heap;
struct gshmemi_transport;

/* Atomic operations; fetching variants return the previous value. */
enum gshmemi_amo_op {
    GSHMEMI_AMO_FETCH,
    GSHMEMI_AMO_SET,
    GSHMEMI_AMO_SWAP,
    GSHMEMI_AMO_COMPARE_SWAP,
    GSHMEMI_AMO_ADD,
    GSHMEMI_AMO_AND,
    GSHMEMI_AMO_OR,
    GSHMEMI_AMO_XOR
};

/* One atomic request. width is 4 or 8 bytes; values travel zero-extended in 64 bits. */
struct gshmemi_amo {
    int op;
    unsigned width;
    size_t offset;
    uint64_t operand;
    uint64_t compare;
};

struct gshmemi_transport_ops {
    size_t size; /* sizeof(struct gshmemi_transport_ops) */
    const char *name;
    int (*put)(struct gshmemi_transport *tp, int pe, size_t offset, const void *src, size_t len);
    int (*get)(struct gshmemi_transport *tp, int pe, void *dst, size_t offset, size_t len);
    /* Non-blocking forms: complete at the next quiet. */
    int (*put_nbi)(struct gshmemi_transport *tp, int pe, size_t offset, const void *src, size_t len);
    int (*get_nbi)(struct gshmemi_transport *tp, int pe, void *dst, size_t offset, size_t len);
    /* Strided: nelems elements of elem bytes; strides in bytes. */
    int (*iput)(struct gshmemi_transport *tp, int pe, size_t offset, ptrdiff_t dst_stride, const void *src,
                ptrdiff_t src_stride, size_t elem, size_t nelems);
    int (*iget)(struct gshmemi_transport *tp, int pe, void *dst, ptrdiff_t dst_stride, size_t offset,
                ptrdiff_t src_stride, size_t elem, size_t nelems);
    /* fetched may be NULL for non-fetching operations. */
    int (*amo)(struct gshmemi_transport *tp, int pe, const struct gshmemi_amo *amo, uint64_t *fetched);
    /* A fetching atomic whose answer comes later: done(arg, tag, value) runs once the
     * fetched value is known (on the transport's own thread, or before this returns);
     * the caller does not wait. Remotely complete, like a put, at the next quiet, which
     * also waits for done to have run. For the proxy, which keeps serving meanwhile. */
    int (*amo_async)(struct gshmemi_transport *tp, int pe, const struct gshmemi_amo *amo,
                     void (*done)(void *arg, uint64_t tag, uint64_t value), void *arg, uint64_t tag);
    /* Data, then a 64-bit SET/ADD of the signal ordered after it. */
    int (*put_signal)(struct gshmemi_transport *tp, int pe, size_t offset, const void *src, size_t len,
                      size_t sig_offset, uint64_t signal, int sig_op);
    int (*fence)(struct gshmemi_transport *tp, int pe);
    int (*quiet)(struct gshmemi_transport *tp);
    /* Sends what the transport holds back to batch small puts (tcp), so it arrives
     * without a quiet; core calls it before every wait, the proxy after each pass.
     * Errors surface at the next operation that waits (a lost peer ends the job anyway). */
    void (*flush)(struct gshmemi_transport *tp);
    /* Load/store address of pe's heap at offset, or NULL when not mapped here. */
    void *(*ptr)(struct gshmemi_transport *tp, int pe, size_t offset);
    void (*destroy)(struct gshmemi_transport *tp);
};

struct gshmemi_transport {
    const struct gshmemi_transport_ops *ops;
    void *impl;
};

/* The distinct transports a heap uses (quiet and fence visit each). */
#define GSHMEMI_MAX_TRANSPORTS 4
struct gshmemi_transport_set {
    struct gshmemi_transport *list[GSHMEMI_MAX_TRANSPORTS];
    int count;
    /* The one agent for host atomics and signals on every PE, or NULL (each PE's own
     * transport). ibv's atomics run in the NIC, which is not atomic against CPU atomics
     * on the same word: while ibv reaches any PE, every host atomic goes through it,
     * node-local and self included. */
    struct gshmemi_transport *amo;
};

/* Creates the transports reaching every PE's copy of heap (collective); per_pe[pe]
 * gets the one for each PE: p2p for node-local PEs (unless GSHMEM_DISABLE_P2P), the
 * remote transport (GSHMEM_REMOTE_TRANSPORT) for the others. The only entry point
 * core uses; called for the sync heap first, then the user heap, on every PE. */
int gshmemi_transports_create(struct gshmemi_bootstrap *bs, struct gshmemi_heap *heap, const struct gshmemi_env *env,
                              struct gshmemi_transport **per_pe, struct gshmemi_transport_set *set);
void gshmemi_transports_destroy(struct gshmemi_transport_set *set);
/* The GPU this PE uses (-1: none), so the remote transport picks the NIC nearest it
 * even when it is set up for a host heap first. Call before gshmemi_transports_create. */
void gshmemi_transports_prefer_gpu(int device);
/* Why the remote transport lost a peer (to log when the job ends), or NULL. */
const char *gshmemi_transports_loss(void);
/* Which remote transport GSHMEM_REMOTE_TRANSPORT=auto picks here, and why (gshmem-info). */
const char *gshmemi_transports_remote_choice(const struct gshmemi_env *env, const char **why);

/* Ends the job from a transport's own thread (core provides it; never returns). */
void gshmemi_transport_fatal(int status);

/* p2p: maps every node-local peer's heap (host or device; fd passing over a unix
 * socket with a random abstract name), or only this PE's own when self_only.
 * Collective over the job's PEs. */
int gshmemi_transport_p2p_create(struct gshmemi_bootstrap *bs, struct gshmemi_heap *heap, double timeout_s,
                                 int self_only, struct gshmemi_transport **out);
/* Whether pe is reachable through this p2p transport. */
int gshmemi_transport_p2p_reaches(const struct gshmemi_transport *tp, int pe);

/* tcp: connects to every PE with remote[pe] set (collective: every PE calls it when
 * any pair of PEs needs it); one set of connections serves both heaps. */
int gshmemi_transport_tcp_create(struct gshmemi_bootstrap *bs, struct gshmemi_heap *heap,
                                 const struct gshmemi_env *env, const unsigned char *remote,
                                 struct gshmemi_transport **out);
const char *gshmemi_transport_tcp_loss(void);

/* ibv: whether this PE can use the ibv transport (libibverbs loads, an allowed port is
 * active and has a usable address); the port nearest GPU gpu (-1: none) is opened and
 * kept for gshmemi_transport_ibv_create. 0 with the reason in why. */
int gshmemi_transport_ibv_usable(const struct gshmemi_env *env, int gpu, char *why, size_t whylen);
/* As gshmemi_transport_tcp_create, over RC queue pairs (collective). */
int gshmemi_transport_ibv_create(struct gshmemi_bootstrap *bs, struct gshmemi_heap *heap,
                                 const struct gshmemi_env *env, const unsigned char *remote,
                                 struct gshmemi_transport **out);
const char *gshmemi_transport_ibv_loss(void);
/* Closes the port gshmemi_transport_ibv_usable kept open (the job uses tcp). */
void gshmemi_transport_ibv_release(void);
/* Whether an ibv net exists (set up for an earlier heap). */
int gshmemi_transport_ibv_in_use(void);
/* The RDMA device the ibv net uses ("mlx5_0"), or NULL when none is in use. */
const char *gshmemi_transport_ibv_device(void);
/* gshmem-info: the RDMA devices, their ports and addresses, and the GPUDirect RDMA
 * paths, one indented line each. */
void gshmemi_transport_ibv_describe(FILE *out);
/* gshmem-info --check: the "rdma" and "gpudirect" items (src/core/check.h's format)
 * for a node with n_devices RDMA devices in sysfs; device_heap: PEs would put their
 * heap on a GPU. Adds the FAIL lines to *fails. */
void gshmemi_transport_ibv_check(FILE *out, const struct gshmemi_env *env, int n_devices, int device_heap,
                                 int *fails);
void gshmemi_transport_tcp_counters(unsigned long long *frames_in, unsigned long long *frames_out);

#endif
