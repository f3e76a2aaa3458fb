/*
 * The library under test for the device perftests: gshmem. perftest/nvshmem/nvshmem_api.cuh
 * maps the same names onto NVSHMEM, so both builds run the very same kernels.
 *
 *   SHM(x) / SHMX(x)      gshmem_x / gshmemx_x (device and host calls)
 *   PERF_CMP_GE, PERF_SIGNAL_SET
 *   perf_init(&ms)        initializes the library; ms: wall time of the initialization
 *   perf_heap_kind()      what the symmetric heap is
 *   PERF_TEAM_WORLD, PERF_ALLTOALL_IN_PLACE, PERF_HEAP_ENV, PERF_HEAP_DEFAULT (collectives)
 */
#ifndef GPERF_GSHMEM_API_CUH
#define GPERF_GSHMEM_API_CUH

#include <gshmem.h>

#include <time.h>

#define PERF_LIB "gshmem"
#define SHM(x) gshmem_##x
#define SHMX(x) gshmemx_##x
#define PERF_CMP_GE GSHMEM_CMP_GE
#define PERF_SIGNAL_SET GSHMEM_SIGNAL_SET

/* gshmem_init does everything (CUDA context, device heap, peer mappings). */
static inline void perf_init(double *init_ms)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    gshmem_init();
    clock_gettime(CLOCK_MONOTONIC, &b);
    *init_ms = (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
}

static inline const char *perf_heap_kind(void) { return gshmemx_heap_kind(); }

/* Host gshmemx_putmem_on_stream(dest, source, bytes, pe, stream): CMake defines
 * GSHMEM_PERF_HAVE_PUTMEM_ON_STREAM when the installed headers declare it. */
#ifdef GSHMEM_PERF_HAVE_PUTMEM_ON_STREAM
#define PERF_HAVE_PUTMEM_ON_STREAM 1
#endif

/* Collectives (alltoall.cu, coll.cu): the world team (SHM(team_t) is its type); whether alltoall
 * accepts dest == source; where the heap size is set and its default, to fit the
 * default size range into the heap. */
#define PERF_TEAM_WORLD GSHMEM_TEAM_WORLD
#define PERF_ALLTOALL_IN_PLACE 1
#define PERF_HEAP_ENV "GSHMEM_SYMMETRIC_SIZE"
#define PERF_HEAP_DEFAULT ((size_t)256 << 20)

#endif
