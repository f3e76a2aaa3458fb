/* Stream-ordered collectives (gshmemx_*_on_stream in gshmem/team.h): the kernels
 * libgshmem enqueues for them. They run the device API's collective code
 * (gshmem/impl/device_coll.cuh) against a module-local copy of the device state that
 * the library keeps current like every device library's. The launcher makes `device`
 * current in libgshmem's runtime, enqueues, and returns a cudaError_t as int; it never
 * synchronizes or allocates, so the calls can be captured into CUDA graphs. */
#ifndef GSHMEMI_STREAM_COLL_H
#define GSHMEMI_STREAM_COLL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct CUstream_st;

enum gshmemi_stream_coll_kind {
    GSHMEMI_STREAM_COLL_SYNC,
    GSHMEMI_STREAM_COLL_BARRIER,
    GSHMEMI_STREAM_COLL_BROADCAST,
    GSHMEMI_STREAM_COLL_COLLECT,
    GSHMEMI_STREAM_COLL_FCOLLECT,
    GSHMEMI_STREAM_COLL_ALLTOALL,
    GSHMEMI_STREAM_COLL_REDUCE
};

/* The reductions' operators (GSHMEM_REDUCE_OPS) and element types, by representation:
 * int, long and int64_t reduce alike. */
enum gshmemi_reduce_op {
    GSHMEMI_REDUCE_and,
    GSHMEMI_REDUCE_or,
    GSHMEMI_REDUCE_xor,
    GSHMEMI_REDUCE_max,
    GSHMEMI_REDUCE_min,
    GSHMEMI_REDUCE_sum,
    GSHMEMI_REDUCE_prod
};
enum gshmemi_reduce_type {
    GSHMEMI_REDUCE_INT8,
    GSHMEMI_REDUCE_INT16,
    GSHMEMI_REDUCE_INT32,
    GSHMEMI_REDUCE_INT64,
    GSHMEMI_REDUCE_UINT8,
    GSHMEMI_REDUCE_UINT16,
    GSHMEMI_REDUCE_UINT32,
    GSHMEMI_REDUCE_UINT64,
    GSHMEMI_REDUCE_FLOAT,
    GSHMEMI_REDUCE_DOUBLE
};

/* One collective, checked by the caller: the team is valid with this PE a member,
 * addresses lie in the device heap, the root is a member. Members the GPU cannot map
 * are reached through the proxy. */
struct gshmemi_stream_coll_args {
    uint64_t dest;       /* this PE's dest and source (device heap addresses) */
    uint64_t source;
    uint64_t nelems;     /* bytes per member's block; reductions: elements */
    int32_t kind;        /* enum gshmemi_stream_coll_kind */
    int32_t team;
    int32_t team_size;   /* host copies of the team, to shape the launch */
    int32_t my_index;
    int32_t root;        /* broadcast: team index of the root */
    int32_t op;          /* reductions: enum gshmemi_reduce_op */
    int32_t type;        /* reductions: enum gshmemi_reduce_type */
    int32_t my_pe;       /* for messages */
    int32_t proxied;     /* some member is reached through the proxy: one block */
};

int gshmemi_stream_coll(int device, const struct gshmemi_stream_coll_args *args, struct CUstream_st *stream);

/* Stream-ordered RMA to a PROXY peer (one the GPU cannot map): a one-thread kernel
 * posts the request to the proxy's ring as the device API would. */
enum gshmemi_stream_proxy_kind {
    GSHMEMI_STREAM_PROXY_PUT,        /* blocking put: the source may be reused when the kernel ends */
    GSHMEMI_STREAM_PROXY_GET,        /* dest holds the data when the kernel ends */
    GSHMEMI_STREAM_PROXY_PUT_SIGNAL,
    GSHMEMI_STREAM_PROXY_SIGNAL,
    GSHMEMI_STREAM_PROXY_QUIET       /* every earlier request of this PE is complete */
};
struct gshmemi_stream_proxy_args {
    uint64_t dest;   /* symmetric (put, put_signal) or local (get) address, as the caller passed it */
    uint64_t source; /* local (put) or symmetric (get) */
    uint64_t nelems; /* bytes */
    uint64_t sig_addr;
    uint64_t signal;
    int32_t kind;    /* enum gshmemi_stream_proxy_kind */
    int32_t sig_op;
    int32_t pe;
};
int gshmemi_stream_proxy(int device, const struct gshmemi_stream_proxy_args *args, struct CUstream_st *stream);

#ifdef __cplusplus
}
#endif

#endif
