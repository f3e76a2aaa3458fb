/*
 * The ibv transport's pure parts, tested without an RDMA device: the endpoint and heap
 * blobs every PE publishes through the bootstrap (versioned, length-checked, decoded
 * with a reason naming what is wrong), the split of transfers at registration chunk
 * boundaries, and how each gshmem atomic maps onto the verbs' two 64-bit atomics.
 */
#ifndef GSHMEMI_IBV_WIRE_H
#define GSHMEMI_IBV_WIRE_H

#include "transport/transport.h"

#include <stddef.h>
#include <stdint.h>

/* 2: the endpoint carries the connection manager and its address; 3: rails and depths */
#define GSHMEMI_IBV_WIRE_VERSION 3
#define GSHMEMI_IBV_MAX_CHUNKS 64 /* registrations per heap */
#define GSHMEMI_IBV_MAX_RAILS 4   /* RDMA ports one PE uses */

enum gshmemi_ibv_link { GSHMEMI_IBV_LINK_IB = 1, GSHMEMI_IBV_LINK_ETH = 2 };
/* How queue pairs are connected (GSHMEM_IB_CM): every PE must use the same. */
enum gshmemi_ibv_cm { GSHMEMI_IBV_CM_BOOTSTRAP = 0, GSHMEMI_IBV_CM_RDMACM = 1 };

/* The address of one of a PE's ports (a rail). */
struct gshmemi_ibv_rail_addr {
    int link;        /* enum gshmemi_ibv_link */
    int mtu;         /* enum ibv_mtu: 1 (256) .. 5 (4096) */
    uint16_t lid;    /* InfiniBand */
    uint8_t gid[16]; /* RoCE (and routed InfiniBand) */
};

/* One PE's address: how to reach its ports, and the QP it created for each PE. With
 * several rails, link/mtu/lid/gid are rail 0's when encoding (rails[1..nrails) the
 * others) and, when decoding, those of the rail that PE's QP for the decoder is on. */
struct gshmemi_ibv_endpoint {
    int pe, n_pes;
    int link;            /* enum gshmemi_ibv_link */
    int mtu;             /* enum ibv_mtu: 1 (256) .. 5 (4096) */
    uint16_t lid;        /* InfiniBand */
    uint8_t gid[16];     /* RoCE (and routed InfiniBand) */
    int nrails;          /* 1 .. GSHMEMI_IBV_MAX_RAILS (0 encodes as 1) */
    struct gshmemi_ibv_rail_addr rails[GSHMEMI_IBV_MAX_RAILS]; /* [0] unused: rail 0 is the fields above */
    uint32_t psn;        /* first packet sequence number of all its QPs */
    int cm;              /* enum gshmemi_ibv_cm */
    uint8_t cm_ip[4];    /* rdmacm: the IPv4 address it listens on (network order) */
    uint16_t cm_port;    /* rdmacm: and the port */
    int rd_atomic;       /* reads/atomics its QPs answer and issue at once (1..255) */
    const uint32_t *qpn; /* encode: [n_pes], 0 where it has no QP (itself, PEs it does not reach); the
                            QP number in the low 24 bits, its rail in the high 8 */
    uint32_t qpn_to_me;  /* decode: its QP for the decoding PE */
    int rail_to_me;      /* decode: the rail that QP is on */
};

/* Bytes of an endpoint blob for n_pes PEs (the same whatever the rails). */
size_t gshmemi_ibv_endpoint_size(int n_pes);
void gshmemi_ibv_endpoint_encode(const struct gshmemi_ibv_endpoint *ep, unsigned char *out);
/* Decodes the blob PE `from` published, as seen by PE `me`.
 * 0, or -1 with the reason in why ("version 2, this build speaks 1", ...). */
int gshmemi_ibv_endpoint_decode(const unsigned char *blob, size_t len, int from, int me, int n_pes,
                                struct gshmemi_ibv_endpoint *ep, char *why, size_t whylen);

/* The private data of a librdmacm connection request and of its answer: who is
 * calling (or answering). */
#define GSHMEMI_IBV_CM_PRIVATE_SIZE 16
void gshmemi_ibv_cm_private_encode(int pe, int n_pes, unsigned char out[GSHMEMI_IBV_CM_PRIVATE_SIZE]);
/* 0 with the caller's PE, or -1 with the reason (not ours, another version, another
 * job size, a PE outside the job). */
int gshmemi_ibv_cm_private_decode(const void *data, size_t len, int n_pes, int *pe, char *why, size_t whylen);

/* One PE's registration of one heap: chunk i covers [addr + i*chunk, ...). */
struct gshmemi_ibv_heapkeys {
    unsigned heap_index;
    uint64_t addr, size, chunk;
    int nchunks;
    uint32_t rkey[GSHMEMI_IBV_MAX_CHUNKS];
};

#define GSHMEMI_IBV_HEAPKEYS_SIZE (40 + 4 * GSHMEMI_IBV_MAX_CHUNKS)
void gshmemi_ibv_heapkeys_encode(const struct gshmemi_ibv_heapkeys *k, unsigned char *out);
/* Checks the blob against what PE `from` must have registered: the same heap, a size
 * of at least min_size, chunks that cover it. */
int gshmemi_ibv_heapkeys_decode(const unsigned char *blob, size_t len, unsigned heap_index, uint64_t min_size,
                                struct gshmemi_ibv_heapkeys *k, char *why, size_t whylen);

/* Chunk size for a heap of size bytes when one registration may cover at most max_mr
 * bytes (0: no limit): a power of two, at most GSHMEMI_IBV_MAX_CHUNKS chunks. 0 when
 * the heap cannot be covered. */
uint64_t gshmemi_ibv_chunk_size(uint64_t size, uint64_t max_mr);
/* Bytes of [offset, offset + len) that lie in offset's chunk. */
size_t gshmemi_ibv_chunk_span(uint64_t offset, size_t len, uint64_t chunk);

/* How one atomic runs: a native fetch-add, a native compare-swap, or a compare-swap
 * loop over the aligned 64-bit word that holds the target (the verbs have no 32-bit
 * atomics and no SET/SWAP/AND/OR/XOR). */
enum gshmemi_ibv_amo_kind { GSHMEMI_IBV_AMO_FADD, GSHMEMI_IBV_AMO_CAS, GSHMEMI_IBV_AMO_LOOP };

struct gshmemi_ibv_amo_plan {
    int kind;
    uint64_t word_offset;   /* heap offset of the aligned 64-bit word */
    unsigned shift;         /* bit position of the target inside the word (0 or 32) */
    uint64_t add;           /* FADD: the word-sized addend */
    uint64_t compare, swap; /* CAS */
};

/* 0, or -1 when the offset is not aligned to the width or the width is not 4 or 8. */
int gshmemi_ibv_amo_plan(const struct gshmemi_amo *amo, struct gshmemi_ibv_amo_plan *plan);
/* The value a native FADD/CAS or the loop fetched, from the word it returned. */
uint64_t gshmemi_ibv_amo_fetched(const struct gshmemi_amo *amo, unsigned shift, uint64_t word);
/* One step of the loop: the word to compare-swap in given that the word now holds
 * `word`. Returns 0 when no write is needed (a FETCH, or a COMPARE_SWAP whose compare
 * fails): `word` is then the answer. */
int gshmemi_ibv_amo_next(const struct gshmemi_amo *amo, unsigned shift, uint64_t word, uint64_t *next);

#endif
