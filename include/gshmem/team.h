/*
 * Teams and collectives (OpenSHMEM 1.5 names, the shmem_ prefix replaced by gshmem_),
 * host side. Device twins of the query and collective calls, with _warp and _block
 * forms, are in gshmem/device.cuh; stream-ordered forms (gshmemx_*_on_stream) at the end.
 *
 * Teams
 *   A team is an ordered set of PEs: start, stride and size in GSHMEM_TEAM_WORLD's
 *   numbering. A handle is a small integer, the same on every member, usable in device
 *   code (the porting table from NVSHMEM stays mechanical). Predefined:
 *     GSHMEM_TEAM_WORLD   every PE.
 *     GSHMEM_TEAM_SHARED  the PEs whose heaps this PE reaches by loads and stores (its
 *                         node); when those PEs are not evenly strided in world order,
 *                         this PE alone.
 *     GSHMEMX_TEAM_NODE   the PEs on this PE's node (same rule as SHARED).
 *   Up to GSHMEM_MAX_TEAMS teams exist at once, the predefined three included.
 *   Creating a team (split) is collective over the parent: every parent PE calls with
 *   the same arguments; under GSHMEM_CHECK=1 a PE whose arguments differ is named.
 *   PEs outside the new team get GSHMEM_TEAM_INVALID and a return of 0.
 *
 * Collectives
 *   Every PE of the team calls, with the same team, root and sizes. They return 0, or
 *   a nonzero gshmemx_status_t after logging why (invalid team, a root outside it).
 *   On return the PE's dest holds the result and its source may be reused. As
 *   OpenSHMEM says, dest and source must not be accessed by other means while any team
 *   PE may be inside the call: PEs enter and leave at different times, so a program
 *   that writes a dest right after a collective, before the other PEs are known to
 *   have left it, synchronizes first. dest and source must not overlap, except in
 *   alltoall(mem) and the reductions, which accept dest == source (in place).
 *   No collective allocates per call. Sizes: nelems elements of the type (bytes for
 *   the mem forms); alltoall moves nelems per PE pair; collect takes a different
 *   nelems on each PE and concatenates in team order.
 */
#ifndef GSHMEM_TEAM_H
#define GSHMEM_TEAM_H

#include <stddef.h>
#include <stdint.h>

#include <gshmem/types.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int32_t gshmem_team_t;
#define GSHMEM_TEAM_INVALID ((gshmem_team_t)-1)
#define GSHMEM_TEAM_WORLD ((gshmem_team_t)0)
#define GSHMEM_TEAM_SHARED ((gshmem_team_t)1)
#define GSHMEMX_TEAM_NODE ((gshmem_team_t)2)

typedef struct {
    int num_contexts; /* accepted and reported; contexts are not implemented */
} gshmem_team_config_t;
#define GSHMEM_TEAM_NUM_CONTEXTS (1L << 0)

/* OpenSHMEM 1.5 Table 10, reduction types by operator class. Device code has no long
 * double and gshmem offers no complex reductions. */
#define GSHMEM_REDUCE_BITWISE_TYPES(X)                                                      \
    X(unsigned char, uchar) X(unsigned short, ushort) X(unsigned int, uint)                 \
    X(unsigned long, ulong) X(unsigned long long, ulonglong) X(int8_t, int8)                \
    X(int16_t, int16) X(int32_t, int32) X(int64_t, int64) X(uint8_t, uint8)                 \
    X(uint16_t, uint16) X(uint32_t, uint32) X(uint64_t, uint64) X(size_t, size)
#define GSHMEM_REDUCE_ARITH_TYPES(X)                                                        \
    X(char, char) X(signed char, schar) X(short, short) X(int, int) X(long, long)           \
    X(long long, longlong) X(ptrdiff_t, ptrdiff) GSHMEM_REDUCE_BITWISE_TYPES(X)              \
    X(float, float) X(double, double)
/* X(op name, type table): and/or/xor on the bitwise types; max/min/sum/prod on the
 * arithmetic ones (which include float and double). */
#define GSHMEM_REDUCE_OPS(X)                                                                \
    X(and, GSHMEM_REDUCE_BITWISE_TYPES) X(or, GSHMEM_REDUCE_BITWISE_TYPES)                  \
    X(xor, GSHMEM_REDUCE_BITWISE_TYPES) X(max, GSHMEM_REDUCE_ARITH_TYPES)                   \
    X(min, GSHMEM_REDUCE_ARITH_TYPES) X(sum, GSHMEM_REDUCE_ARITH_TYPES)                     \
    X(prod, GSHMEM_REDUCE_ARITH_TYPES)

/* ---- Team management (host only) -------------------------------------------------------- */

/* Collective over parent: the team of parent's PEs start, start + stride, ... (size of
 * them, in parent's numbering). stride >= 1, size >= 1, every member inside parent.
 * Returns 0 (new_team: the team, or GSHMEM_TEAM_INVALID on PEs outside it) or a
 * nonzero gshmemx_status_t with the reason logged (new_team: GSHMEM_TEAM_INVALID). */
int gshmem_team_split_strided(gshmem_team_t parent_team, int start, int stride, int size,
                              const gshmem_team_config_t *config, long config_mask, gshmem_team_t *new_team);
/* Collective over parent: parent's PEs as a 2-D grid, xrange PEs per row; every PE gets
 * its row (xaxis_team) and its column (yaxis_team). */
int gshmem_team_split_2d(gshmem_team_t parent_team, int xrange, const gshmem_team_config_t *xaxis_config,
                         long xaxis_mask, gshmem_team_t *xaxis_team, const gshmem_team_config_t *yaxis_config,
                         long yaxis_mask, gshmem_team_t *yaxis_team);
/* Collective over the team; the predefined teams and GSHMEM_TEAM_INVALID are ignored. */
void gshmem_team_destroy(gshmem_team_t team);
/* 0 and the config the team was created with (mask bits GSHMEM_TEAM_*), nonzero for an invalid team. */
int gshmem_team_get_config(gshmem_team_t team, long config_mask, gshmem_team_config_t *config);

#define GSHMEMI_DECLARE_COLL(T, N)                                                                        \
    int gshmem_##N##_broadcast(gshmem_team_t team, T *dest, const T *source, size_t nelems, int PE_root); \
    int gshmem_##N##_collect(gshmem_team_t team, T *dest, const T *source, size_t nelems);               \
    int gshmem_##N##_fcollect(gshmem_team_t team, T *dest, const T *source, size_t nelems);              \
    int gshmem_##N##_alltoall(gshmem_team_t team, T *dest, const T *source, size_t nelems);              \
    int gshmem_##N##_alltoalls(gshmem_team_t team, T *dest, const T *source, ptrdiff_t dst,              \
                               ptrdiff_t sst, size_t nelems);

/*
 * Everything below has a device twin (gshmem/device.cuh).
 */
#if !defined(__CUDA_ARCH__)

/* This PE's number in team, -1 when it is not a member or team is invalid. */
int gshmem_team_my_pe(gshmem_team_t team);
/* Members of team, -1 when team is invalid. */
int gshmem_team_n_pes(gshmem_team_t team);
/* src_pe of src_team as numbered in dest_team, -1 when it is not a member or a team is invalid. */
int gshmem_team_translate_pe(gshmem_team_t src_team, int src_pe, gshmem_team_t dest_team);

/* ---- Collectives -------------------------------------------------------------------------- */

/* Waits until every team PE has called; orders nothing by itself. */
int gshmem_team_sync(gshmem_team_t team);
int gshmem_sync(gshmem_team_t team);
/* quiet, then team_sync. */
int gshmem_barrier(gshmem_team_t team);

int gshmem_broadcastmem(gshmem_team_t team, void *dest, const void *source, size_t nelems, int PE_root);
int gshmem_collectmem(gshmem_team_t team, void *dest, const void *source, size_t nelems);
int gshmem_fcollectmem(gshmem_team_t team, void *dest, const void *source, size_t nelems);
int gshmem_alltoallmem(gshmem_team_t team, void *dest, const void *source, size_t nelems);
/* Strided alltoall of bytes: byte i for team PE j is read at source[(j * nelems + i) *
 * sst] and lands at dest[(me * nelems + i) * dst] on PE j; typed forms count elements. */
int gshmem_alltoallsmem(gshmem_team_t team, void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,
                        size_t nelems);

GSHMEM_RMA_DEVICE_TYPES(GSHMEMI_DECLARE_COLL)

/* gshmem_<type>_<op>_reduce: dest[i] = op over the team of source[i], i < nreduce. */
#define GSHMEMI_DECLARE_REDUCE_T(T, N, OP) \
    int gshmem_##N##_##OP##_reduce(gshmem_team_t team, T *dest, const T *source, size_t nreduce);
#define GSHMEMI_DECLARE_REDUCE_and(T, N) GSHMEMI_DECLARE_REDUCE_T(T, N, and)
#define GSHMEMI_DECLARE_REDUCE_or(T, N) GSHMEMI_DECLARE_REDUCE_T(T, N, or)
#define GSHMEMI_DECLARE_REDUCE_xor(T, N) GSHMEMI_DECLARE_REDUCE_T(T, N, xor)
#define GSHMEMI_DECLARE_REDUCE_max(T, N) GSHMEMI_DECLARE_REDUCE_T(T, N, max)
#define GSHMEMI_DECLARE_REDUCE_min(T, N) GSHMEMI_DECLARE_REDUCE_T(T, N, min)
#define GSHMEMI_DECLARE_REDUCE_sum(T, N) GSHMEMI_DECLARE_REDUCE_T(T, N, sum)
#define GSHMEMI_DECLARE_REDUCE_prod(T, N) GSHMEMI_DECLARE_REDUCE_T(T, N, prod)
#define GSHMEMI_DECLARE_REDUCE_OP(OP, TYPES) TYPES(GSHMEMI_DECLARE_REDUCE_##OP)
GSHMEM_REDUCE_OPS(GSHMEMI_DECLARE_REDUCE_OP)

#endif /* !__CUDA_ARCH__ */

/* long double has no device twin. */
GSHMEMI_DECLARE_COLL(long double, longdouble)
#undef GSHMEMI_DECLARE_COLL

/* ---- Stream-ordered collectives (device heap; the rules of gshmem/stream.h) ------------- */

struct CUstream_st;
int gshmemx_team_sync_on_stream(gshmem_team_t team, struct CUstream_st *stream);
int gshmemx_barrier_on_stream(gshmem_team_t team, struct CUstream_st *stream);
int gshmemx_broadcastmem_on_stream(gshmem_team_t team, void *dest, const void *source, size_t nelems, int PE_root,
                                   struct CUstream_st *stream);
int gshmemx_collectmem_on_stream(gshmem_team_t team, void *dest, const void *source, size_t nelems,
                                 struct CUstream_st *stream);
int gshmemx_fcollectmem_on_stream(gshmem_team_t team, void *dest, const void *source, size_t nelems,
                                  struct CUstream_st *stream);
int gshmemx_alltoallmem_on_stream(gshmem_team_t team, void *dest, const void *source, size_t nelems,
                                  struct CUstream_st *stream);
#define GSHMEMI_DECLARE_REDUCE_STREAM_T(T, N, OP)                                                    \
    int gshmemx_##N##_##OP##_reduce_on_stream(gshmem_team_t team, T *dest, const T *source, size_t nreduce, \
                                              struct CUstream_st *stream);
#define GSHMEMI_DECLARE_REDUCE_STREAM_and(T, N) GSHMEMI_DECLARE_REDUCE_STREAM_T(T, N, and)
#define GSHMEMI_DECLARE_REDUCE_STREAM_or(T, N) GSHMEMI_DECLARE_REDUCE_STREAM_T(T, N, or)
#define GSHMEMI_DECLARE_REDUCE_STREAM_xor(T, N) GSHMEMI_DECLARE_REDUCE_STREAM_T(T, N, xor)
#define GSHMEMI_DECLARE_REDUCE_STREAM_max(T, N) GSHMEMI_DECLARE_REDUCE_STREAM_T(T, N, max)
#define GSHMEMI_DECLARE_REDUCE_STREAM_min(T, N) GSHMEMI_DECLARE_REDUCE_STREAM_T(T, N, min)
#define GSHMEMI_DECLARE_REDUCE_STREAM_sum(T, N) GSHMEMI_DECLARE_REDUCE_STREAM_T(T, N, sum)
#define GSHMEMI_DECLARE_REDUCE_STREAM_prod(T, N) GSHMEMI_DECLARE_REDUCE_STREAM_T(T, N, prod)
#define GSHMEMI_DECLARE_REDUCE_STREAM_OP(OP, TYPES) TYPES(GSHMEMI_DECLARE_REDUCE_STREAM_##OP)
GSHMEM_REDUCE_OPS(GSHMEMI_DECLARE_REDUCE_STREAM_OP)

#ifdef __cplusplus
}
#endif

#endif /* GSHMEM_TEAM_H */
