/* Kernels libgshmem launches itself (compiled into the library, not the device
 * library): atomics on device heap words for host-initiated AMOs and signals. */
#ifndef GSHMEMI_HOST_KERNELS_H
#define GSHMEMI_HOST_KERNELS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Applies one gshmemi_amo_op to the word at addr (4 or 8 bytes, device memory reachable
 * from the current GPU) with system scope; the previous value goes to *fetched (pinned
 * host memory, may be NULL). Enqueued on stream; returns a cudaError_t. */
int gshmemi_kernel_amo(void *addr, int op, unsigned width, uint64_t operand, uint64_t compare, uint64_t *fetched,
                       void *stream);

/* Loads the kernels above now (CUDA loads modules lazily by default, and loading one
 * while a kernel runs may wait for that kernel: a service thread applying a peer's
 * atomic for a kernel that spins on it would deadlock). Returns a cudaError_t. */
int gshmemi_kernels_preload(void);

/* A non-blocking stream at the highest priority for work libgshmem's own threads
 * enqueue while application kernels may spin waiting for it (the proxy's and the tcp
 * transport's copies and atomics): such work should never queue behind those
 * kernels. Returns a cudaError_t. */
int gshmemi_helper_stream_create(void **stream);

/* Sets the calling thread's stream capture mode to relaxed, once per thread: for
 * libgshmem's own threads (the proxy, the tcp service thread), whose copies,
 * synchronizations and kernels on their helper streams would otherwise fail with
 * "operation not permitted when stream is capturing" while an application thread
 * captures a graph in cudaStreamCaptureModeGlobal, as a peer's traffic may arrive at
 * any time. Never for an application thread. Returns a cudaError_t. */
int gshmemi_helper_thread_relax_capture(void);

#ifdef __cplusplus
}
#endif

#endif
