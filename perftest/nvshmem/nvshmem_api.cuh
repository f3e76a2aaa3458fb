/*
 * NVSHMEM behind the perftests' names (see perftest/gpu/gshmem_api.cuh): the NVSHMEM
 * builds of the perftest/gpu sources, made and run only by perftest/gpu/run.sh --nvshmem on a
 * GPU machine, never by CMake.
 *
 * Start-up without MPI or PMI: the PEs are started by gshmemrun, which sets GSHMEM_RANK,
 * GSHMEM_NRANKS and GSHMEM_JOB_ID; rank 0 writes an NVSHMEM unique ID to a file in
 * /tmp (GSHMEM_PERF_UID_DIR overrides), the others read it, and every rank calls
 * nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID).
 */
#ifndef GPERF_NVSHMEM_API_CUH
#define GPERF_NVSHMEM_API_CUH

#include <nvshmem.h>
#include <nvshmemx.h>

#include <cuda_runtime.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define PERF_LIB "nvshmem"
#define SHM(x) nvshmem_##x
#define SHMX(x) nvshmemx_##x
#define PERF_CMP_GE NVSHMEM_CMP_GE
#define PERF_SIGNAL_SET NVSHMEM_SIGNAL_SET
#define PERF_HAVE_PUTMEM_ON_STREAM 1
/* Collectives: see gshmem_api.cuh. NVSHMEM's alltoall takes no dest == source, so
 * the in-place columns stay empty. */
#define PERF_TEAM_WORLD NVSHMEM_TEAM_WORLD
#define PERF_ALLTOALL_IN_PLACE 0
#define PERF_HEAP_ENV "NVSHMEM_SYMMETRIC_SIZE"
#define PERF_HEAP_DEFAULT ((size_t)1 << 30)

static inline double perf_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static inline int perf_env_int(const char *name, int dflt)
{
    const char *v = getenv(name);
    return v && *v ? atoi(v) : dflt;
}

/* Timed from before the first CUDA call to the return of nvshmemx_init_attr: device
 * selection, unique ID creation and exchange, and NVSHMEM's initialization (the same
 * span gshmem_init covers). Device: GSHMEM_DEVICE, else node rank modulo GPUs. */
static inline void perf_init(double *init_ms)
{
    double t0 = perf_now_ms();
    int rank = perf_env_int("GSHMEM_RANK", 0), nranks = perf_env_int("GSHMEM_NRANKS", 1);
    const char *job = getenv("GSHMEM_JOB_ID"), *dir = getenv("GSHMEM_PERF_UID_DIR");
    int ngpus = 0;
    if (cudaGetDeviceCount(&ngpus) != cudaSuccess || ngpus < 1) {
        fprintf(stderr, "nvshmem perftest: rank %d: no usable GPU\n", rank);
        exit(1);
    }
    int device = perf_env_int("GSHMEM_DEVICE", rank % ngpus);
    if (cudaSetDevice(device) != cudaSuccess || cudaFree(0) != cudaSuccess) {
        fprintf(stderr, "nvshmem perftest: rank %d: cannot use GPU %d\n", rank, device);
        exit(1);
    }
    char path[512], tmp[540];
    snprintf(path, sizeof path, "%s/gshmem-perf-nvshmem-uid.%s", dir && *dir ? dir : "/tmp", job ? job : "nojob");
    snprintf(tmp, sizeof tmp, "%s.%d.tmp", path, (int)getpid());
    nvshmemx_uniqueid_t id = NVSHMEMX_UNIQUEID_INITIALIZER;
    if (rank == 0) {
        if (nvshmemx_get_uniqueid(&id) != 0) {
            fprintf(stderr, "nvshmem perftest: nvshmemx_get_uniqueid failed\n");
            exit(1);
        }
        FILE *f = fopen(tmp, "wb");
        if (!f || fwrite(&id, sizeof id, 1, f) != 1 || fclose(f) != 0 || rename(tmp, path) != 0) {
            fprintf(stderr, "nvshmem perftest: cannot write %s: %s\n", path, strerror(errno));
            exit(1);
        }
    } else {
        FILE *f = NULL;
        for (int tries = 0; (f = fopen(path, "rb")) == NULL; tries++) {
            if (tries > 60000) { /* 60 s */
                fprintf(stderr, "nvshmem perftest: rank %d: no unique ID in %s\n", rank, path);
                exit(1);
            }
            usleep(1000);
        }
        size_t got = fread(&id, sizeof id, 1, f);
        fclose(f);
        if (got != 1) {
            fprintf(stderr, "nvshmem perftest: rank %d: short unique ID file %s\n", rank, path);
            exit(1);
        }
    }
    nvshmemx_init_attr_t attr = NVSHMEMX_INIT_ATTR_INITIALIZER;
    nvshmemx_set_attr_uniqueid_args(rank, nranks, &id, &attr);
    nvshmemx_init_attr(NVSHMEMX_INIT_WITH_UNIQUEID, &attr);
    *init_ms = perf_now_ms() - t0;
    if (rank == 0) unlink(path); /* every rank has read it: init is collective */
}

static inline const char *perf_heap_kind(void) { return "nvshmem"; }

#endif
