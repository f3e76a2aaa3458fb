/*
 * Stream-ordered host calls: gshmem work enqueued on a CUDA stream, ordered with the
 * kernels and copies around it, without the host waiting.
 *
 * `stream` is a cudaStream_t (declared here as struct CUstream_st *, the same type, so
 * C programs need no CUDA headers); 0 is the legacy default stream. Any stream of the
 * PE's GPU works, including streams created by another CUDA runtime than libgshmem's.
 *
 * Rules:
 *   - The device heap only. On a host heap (GSHMEM_HEAP=host, or no usable GPU) and in
 *     builds without CUDA every call logs why and ends the job: synchronize the stream
 *     and use the blocking host call instead.
 *   - Peers are node-local PEs, reached through their heaps mapped into this GPU.
 *   - Calls return once the work is enqueued; it happens when the stream reaches it.
 *     Argument errors (PE out of range, address outside the heap, bad sig_op or cmp)
 *     end the job with a message naming the call, the argument, this PE and the peer.
 *   - Nothing here synchronizes or allocates, so every call can be captured into a CUDA
 *     graph and replayed. Local buffers (`source` of a put, `dest` of a get) must then be
 *     device memory or pinned host memory; pageable host memory is not capturable.
 *   - Waits on the stream (signal_wait_until, barriers) spin in a one-thread kernel and
 *     honour GSHMEM_TIMEOUT: past it the kernel prints what it waited for and traps,
 *     and the stream reports an error at its next synchronization.
 */
#ifndef GSHMEM_STREAM_H
#define GSHMEM_STREAM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct CUstream_st;

/* Copies nelems bytes from source (device or host memory) to dest on PE pe. */
void gshmemx_putmem_on_stream(void *dest, const void *source, size_t nelems, int pe, struct CUstream_st *stream);
/* Copies nelems bytes from source on PE pe to dest (device or host memory). */
void gshmemx_getmem_on_stream(void *dest, const void *source, size_t nelems, int pe, struct CUstream_st *stream);
/* putmem, then a GSHMEM_SIGNAL_SET or GSHMEM_SIGNAL_ADD of signal on pe's sig_addr with
 * release semantics: a PE that observes the signal observes the data. */
void gshmemx_putmem_signal_on_stream(void *dest, const void *source, size_t nelems, uint64_t *sig_addr,
                                     uint64_t signal, int sig_op, int pe, struct CUstream_st *stream);
/* GSHMEM_SIGNAL_SET or GSHMEM_SIGNAL_ADD of signal on pe's sig_addr, after earlier work on the stream. */
void gshmemx_signal_op_on_stream(uint64_t *sig_addr, uint64_t signal, int sig_op, int pe, struct CUstream_st *stream);
/* Later work on the stream waits until the local sig_addr satisfies cmp (GSHMEM_CMP_*)
 * against cmp_value; what arrived before the signal is then visible to it. */
void gshmemx_signal_wait_until_on_stream(uint64_t *sig_addr, int cmp, uint64_t cmp_value, struct CUstream_st *stream);
/* Puts, signals and AMOs issued earlier on the stream, by kernels or by these calls,
 * are complete and visible on every PE before later work on the stream starts. */
void gshmemx_quiet_on_stream(struct CUstream_st *stream);
/* quiet, then a barrier over all PEs, in stream order. It shares its counters with the
 * device API's barriers (gshmem_barrier_all and the _warp/_block forms in kernels), so
 * the two may alternate as long as no two of them run at once on one PE; the host's
 * gshmem_barrier_all uses separate counters and mixes freely. */
void gshmemx_barrier_all_on_stream(struct CUstream_st *stream);
/* As barrier_all_on_stream without the quiet: a synchronization point only. */
void gshmemx_sync_all_on_stream(struct CUstream_st *stream);

#ifdef __cplusplus
}
#endif

#endif /* GSHMEM_STREAM_H */
