/* Stream-ordered work libgshmem enqueues on the caller's stream for gshmemx_*_on_stream
 * (compiled into the library without relocatable device code). Every launcher first
 * makes `device` current in libgshmem's CUDA runtime, enqueues, and returns a
 * cudaError_t as int; none synchronizes or allocates, so all of them can be captured
 * into a CUDA graph. `stream` is a cudaStream_t (a driver CUstream, valid across
 * CUDA runtime instances). */
#ifndef GSHMEMI_STREAM_KERNELS_H
#define GSHMEMI_STREAM_KERNELS_H

#include <gshmem/impl/device_state.h>

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct CUstream_st;

/* What the one-thread barrier kernel needs: addresses in this GPU's address space of
 * the device sync areas it touches (offset 0 of each heap). */
struct gshmemi_stream_barrier_args {
    uint64_t mine;                                  /* this PE's sync area */
    uint64_t to[GSHMEMI_DEVICE_BARRIER_ROUNDS];     /* round r: the area of PE (me + 2^r) % n */
    uint64_t timeout_ns;                            /* 0: wait forever */
    int32_t rounds;
    int32_t my_pe;
    int32_t complete;                               /* barrier_all: quiet first */
    int32_t reserved;
};

/* Copy of len bytes between any two device-accessible addresses (cudaMemcpyDefault). */
int gshmemi_stream_copy(int device, void *dst, const void *src, size_t len, struct CUstream_st *stream);
/* Release SET (op 0) or ADD (op 1) of value on the 64-bit word at sig (a peer address),
 * at system scope, after everything earlier on the stream. */
int gshmemi_stream_signal(int device, uint64_t *sig, uint64_t value, int op, struct CUstream_st *stream);
/* Holds the stream until the local word at sig satisfies cmp (GSHMEM_CMP_*) against
 * value, with acquire loads. After timeout_ns (0: never) the kernel prints what it
 * waited for, naming my_pe, and traps. */
int gshmemi_stream_wait(int device, const uint64_t *sig, int cmp, uint64_t value, uint64_t timeout_ns, int my_pe,
                        struct CUstream_st *stream);
/* A system-scope sequentially consistent fence, ordered on the stream. */
int gshmemi_stream_quiet(int device, struct CUstream_st *stream);
/* The device API's dissemination barrier (same words, same epoch), on the stream. */
int gshmemi_stream_barrier(int device, const struct gshmemi_stream_barrier_args *args, struct CUstream_st *stream);
/* cudaGetErrorString of libgshmem's runtime. */
const char *gshmemi_stream_error_string(int err);

#ifdef __cplusplus
}
#endif

#endif
