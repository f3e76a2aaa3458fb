/* init, finalize and exit: the process state's lifetime. */
#include "bootstrap/uid.h"
#include "core/api.h"
#include "core/proxy.h"
#include "core/team.h"

#include "device/cuda_probe.h"
#include "device/device_publish.h"
#include "device/mps.h"

#include <gshmem.h>

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct gshmemi_state gshmemi_state;

void gshmemi_transport_fatal(int status)
{
    gshmemi_fatal(&gshmemi_state, status);
}

/* A peer's connection broke: if the job is ending anyway (gshmem_global_exit, or a
 * death the bootstrap reports), that is the story to tell; else the transport's. */
static int fatal_peer_lost(struct gshmemi_state *st)
{
    for (int i = 0; i < 200 && st->boot.ops; i++) {
        int rc = st->boot.ops->check(&st->boot);
        if (rc != 0) return rc;
        nanosleep(&(struct timespec){.tv_nsec = 10 * 1000 * 1000}, NULL);
    }
    const char *why = gshmemi_transports_loss();
    if (why) GSHMEMI_ERROR(TRANSPORT, "%s", why);
    return GSHMEMX_ERR_PEER_LOST;
}

/* Set by the first thread that ends the job (a fatal error or gshmem_global_exit): any
 * other waits for the process to exit, so the bootstrap's abort and linger run once. */
static atomic_int init_ending;

static void init_claim_ending(void)
{
    if (atomic_exchange(&init_ending, 1))
        for (;;) pause();
}

_Noreturn void gshmemi_fatal(struct gshmemi_state *st, int status)
{
    init_claim_ending();
    gshmemi_device_wait_report_print();
    GSHMEMI_TRACE(INIT, "ending the job after a fatal error: %s", gshmemx_strerror(status));
    if (status == GSHMEMX_ERR_PEER_LOST) status = fatal_peer_lost(st);
    fflush(NULL);
    /* Another PE's gshmem_global_exit: leave with its status, quietly. */
    if (status != GSHMEMX_ERR_ABORTED && st->boot.ops) st->boot.ops->abort(&st->boot, 1);
    if (st->boot.ops && st->boot.ops->linger) st->boot.ops->linger(&st->boot);
    _exit(status == GSHMEMX_ERR_ABORTED ? st->boot.abort_status : 1);
}

static int init_env(struct gshmemi_state *st)
{
    char err[512];
    int rc = gshmemi_env_load(&st->env, gshmemi_env_getenv, err, sizeof(err));
    if (rc != 0) {
        GSHMEMI_ERROR(ENV, "%s", err);
        return rc;
    }
    /* GSHMEM_DEBUG's values NONE|WARN|INFO|TRACE are the log levels 0..3 in order. */
    rc = gshmemi_log_configure(st->env.debug, st->env.debug_subsys, st->env.debug_file);
    st->check_args = st->env.check;
#ifndef NDEBUG
    st->check_args = 1;
#endif
    return rc;
}

static int init_pick_device(struct gshmemi_state *st, int gpus)
{
    if (st->env.device < 0) return st->boot.local_rank % gpus;
    if (st->env.device >= gpus) {
        GSHMEMI_ERROR(HEAP, "GSHMEM_DEVICE=%ld but only %d GPUs are visible", st->env.device, gpus);
        return -1;
    }
    return (int)st->env.device;
}

static int init_host_heap(struct gshmemi_state *st)
{
    return gshmemi_heap_create(&st->env, &st->heap);
}

/* CUDA loads a kernel at its first launch by default (lazy loading), and such a load can
 * wait for the GPU's running kernels. A running kernel may be waiting on the proxy
 * thread, whose CUDA copies then stall behind the load: every PE hangs (an H200 showed
 * it on the first kernel launched behind an on-stream put through the proxy). So when a
 * proxy is likely (GSHMEM_DISABLE_P2P, or PEs on other nodes) and the user has not
 * chosen, gshmem asks for eager loading before its first CUDA call. It takes effect only
 * where CUDA is not initialised yet; the proxy warns otherwise. */
static void init_module_loading(struct gshmemi_state *st)
{
    if (st->env.heap == GSHMEMI_HEAP_HOST || getenv("CUDA_MODULE_LOADING")) return;
    if (!st->env.disable_p2p && st->boot.local_nranks == st->n_pes) return;
    if (setenv("CUDA_MODULE_LOADING", "EAGER", 0) == 0)
        GSHMEMI_INFO(INIT, "CUDA_MODULE_LOADING=EAGER: some peers will be reached through the proxy");
}

/* GSHMEM_HEAP=auto picks the device heap when a GPU is usable. */
/* The first node-local PE whose host heap fell back to normal pages says so, once
 * (all: every PE's heap kind). */
static void init_report_fallback(struct gshmemi_state *st, const int32_t *all)
{
    int first = -1, count = 0;
    for (int i = 0; i < st->boot.local_nranks; i++) {
        if (all[st->boot.local_ranks[i]] != GSHMEMI_HEAP_KIND_HOST_THP) continue;
        if (first < 0) first = st->boot.local_ranks[i];
        count++;
    }
    if (first == st->my_pe && st->env.hugepages == GSHMEMI_HUGEPAGES_AUTO) {
        char thp[64];
        gshmemi_heap_describe_thp(thp, sizeof(thp));
        GSHMEMI_WARN(HEAP, "%d of %d PEs on this node have their host heap on %zu-byte pages (THP advice; shmem "
                           "THP is %s): %s; reserve hugepages with 'echo N > /proc/sys/vm/nr_hugepages' "
                           "(N >= PEs per node x heap size / 2 MiB)",
                     count, st->boot.local_nranks, st->heap.page_size, thp, st->heap.fallback_reason);
    }
}

/* One round right after the heap, the same on every PE whatever its heap: every PE's
 * kind. Every heap must be device memory or none: the two set up different transports
 * (and meet in different bootstrap rounds), so a job where GSHMEM_HEAP=auto found a
 * usable GPU on one node and none on another would otherwise fail later on a
 * mismatched round. Host heaps then report a fallback to normal pages. */
static int init_heap_agree(struct gshmemi_state *st, const char *why)
{
    int32_t mine = st->heap.kind, *all = calloc((size_t)st->n_pes, sizeof(*all));
    if (!all) return GSHMEMX_ERR_NOMEM;
    int rc = st->boot.ops->allgather(&st->boot, &mine, all, sizeof(mine));
    int device = mine == GSHMEMI_HEAP_KIND_DEVICE;
    for (int pe = 0; rc == 0 && pe < st->n_pes; pe++) {
        if ((all[pe] == GSHMEMI_HEAP_KIND_DEVICE) == device) continue;
        int dev = device ? st->my_pe : pe, host = device ? pe : st->my_pe;
        int say_why = !device && why[0] != '\0';
        GSHMEMI_ERROR(HEAP, "PE %d has a device heap but PE %d a host heap%s%s%s: every PE's heap must be of one "
                            "kind; set GSHMEM_HEAP=device (or host) on every PE, and check that every node has a "
                            "usable GPU (gshmem-info --check)",
                      dev, host, say_why ? " (no usable GPU here: " : "", say_why ? why : "", say_why ? ")" : "");
        rc = GSHMEMX_ERR_CONFIG;
        break; /* one line is enough */
    }
    if (rc == 0 && !device) init_report_fallback(st, all);
    free(all);
    return rc;
}

static int init_heap(struct gshmemi_state *st)
{
    char why[256] = "";
    init_module_loading(st);
    int gpus = st->env.heap == GSHMEMI_HEAP_HOST ? 0 : gshmemi_cuda_probe(why, sizeof(why));
    st->device = -1;
    if (st->env.heap == GSHMEMI_HEAP_DEVICE && gpus == 0) {
        GSHMEMI_ERROR(HEAP, "GSHMEM_HEAP=device but no GPU is usable: %s", why);
        return GSHMEMX_ERR_NOT_SUPPORTED;
    }
    int rc;
    if (gpus > 0) {
        if ((st->device = init_pick_device(st, gpus)) < 0) return GSHMEMX_ERR_CONFIG;
        rc = gshmemi_heap_device_create(&st->env, st->device, st->boot.local_rank, st->boot.local_nranks,
                                        &st->heap);
        if (rc == 0) GSHMEMI_INFO(HEAP, "PE %d uses GPU %d of %d", st->my_pe, st->device, gpus);
        if (rc == GSHMEMX_ERR_NOT_SUPPORTED && st->env.heap == GSHMEMI_HEAP_AUTO) {
            /* A GPU without VMM or its fd export (said above): auto means "device when usable". */
            GSHMEMI_WARN(HEAP, "PE %d: GPU %d cannot hold a device heap; GSHMEM_HEAP=auto uses the host heap",
                         st->my_pe, st->device);
            snprintf(why, sizeof(why), "GPU %d cannot hold a device heap", st->device);
            st->device = -1;
            rc = init_host_heap(st);
        }
    } else {
        if (st->env.heap == GSHMEMI_HEAP_AUTO) GSHMEMI_INFO(HEAP, "no usable GPU (%s): host heap", why);
        rc = init_host_heap(st);
    }
    if (rc != 0) return rc;
    st->heap_host_accessible = gshmemi_heap_host_accessible(&st->heap);
    GSHMEMI_INFO(HEAP, "heap: %s, %zu bytes at %p, %zu-byte pages", gshmemi_heap_kind_name(st->heap.kind),
                 st->heap.size, st->heap.base, st->heap.page_size);
    return init_heap_agree(st, why);
}

/* The sync heap: a small host heap for host-side barrier words, whatever the user heap is. */
static int init_sync_heap(struct gshmemi_state *st)
{
    struct gshmemi_env small = st->env;
    /* After the reserved area: two banks of split records (team.c). */
    small.symmetric_size = 2 * (size_t)st->n_pes * sizeof(struct gshmemi_split_record) + GSHMEMI_SYNC_CALLS_BYTES;
    small.hugepages = GSHMEMI_HUGEPAGES_OFF;
    st->sync_of_pe = calloc((size_t)st->n_pes, sizeof(*st->sync_of_pe));
    if (!st->sync_of_pe) return GSHMEMX_ERR_NOMEM;
    int rc = gshmemi_heap_create(&small, &st->sync_heap);
    if (rc == 0)
        rc = gshmemi_transports_create(&st->boot, &st->sync_heap, &st->env, st->sync_of_pe,
                                       &st->sync_transports);
    gshmemi_heap_close_fd(&st->sync_heap);
    return rc;
}

static int init_transports(struct gshmemi_state *st)
{
    st->transport_of_pe = calloc((size_t)st->n_pes, sizeof(*st->transport_of_pe));
    if (!st->transport_of_pe) return GSHMEMX_ERR_NOMEM;
    return gshmemi_transports_create(&st->boot, &st->heap, &st->env, st->transport_of_pe, &st->transports);
}

static void init_print_config(const struct gshmemi_state *st)
{
    if (!st->env.info || st->my_pe != 0) return;
    for (size_t i = 0; i < gshmemi_env_row_count(); i++) {
        const struct gshmemi_env_row *row = gshmemi_env_row(i);
        const char *raw = gshmemi_env_shown(i);
        fprintf(stderr, "gshmem: %-24s = %s%s\n", row->name, raw ? raw : row->def, raw ? "" : " (default)");
    }
}

static void init_teardown(struct gshmemi_state *st)
{
    gshmemi_device_state_fini(st);
    gshmemi_coll_fini(st);
    gshmemi_proxy_fini(st);
    gshmemi_transports_destroy(&st->transports);
    gshmemi_transports_destroy(&st->sync_transports);
    gshmemi_heap_destroy(&st->sync_heap);
    free(st->transport_of_pe);
    free(st->sync_of_pe);
    st->transport_of_pe = st->sync_of_pe = NULL;
    if (st->alloc.buckets) gshmemi_alloc_fini(&st->alloc);
    gshmemi_heap_destroy(&st->heap);
}

static double init_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int init_all(struct gshmemi_state *st, const gshmemx_init_attr_t *attr)
{
    double t[6];
    t[0] = init_ms();
    /* Nothing to tear down yet: a failure before the heaps exist must not close fd 0 (the
     * zeroed state's descriptor), which is the application's stdin or whatever it opened
     * since. */
    st->heap = (struct gshmemi_heap){.fd = -1};
    st->sync_heap = (struct gshmemi_heap){.fd = -1};
    int rc = init_env(st);
    if (rc != 0) return rc;
    if (attr != NULL) {
        st->env.bootstrap = GSHMEMI_BOOTSTRAP_UID;
        gshmemi_bootstrap_uid_attach(attr);
    }
    if ((rc = gshmemi_bootstrap_init(&st->env, &st->boot)) != 0) return rc;
    st->my_pe = st->boot.rank;
    st->n_pes = st->boot.nranks;
    gshmemi_log_set_pe(st->my_pe);
    t[1] = init_ms();
    /* The user heap first: it sets CUDA_MODULE_LOADING before anything may touch CUDA,
     * and picks the GPU whose nearest NIC the remote transport (set up with the sync
     * heap) should use. */
    if ((rc = init_heap(st)) != 0) return rc;
    if ((rc = gshmemi_heap_memset(&st->heap, 0, 0, GSHMEMI_HEAP_RESERVED)) != 0) return rc;
    gshmemi_transports_prefer_gpu(st->device);
    t[2] = init_ms();
    if ((rc = init_sync_heap(st)) != 0) return rc;
    t[3] = init_ms();
    if ((rc = init_transports(st)) != 0 || (rc = gshmemi_mps_check(st)) != 0) return rc;
    gshmemi_heap_close_fd(&st->heap);
    t[4] = init_ms();
    size_t user = (st->heap.size - GSHMEMI_HEAP_RESERVED) & ~(GSHMEMI_ALLOC_GRANULE - 1);
    if ((rc = gshmemi_alloc_init(&st->alloc, GSHMEMI_HEAP_RESERVED, user)) != 0) return rc;
    if ((rc = gshmemi_team_init(st)) != 0) return rc;
    if ((rc = gshmemi_coll_init(st)) != 0) return rc;
    if ((rc = gshmemi_proxy_init(st)) != 0) return rc;
    if ((rc = gshmemi_device_state_publish(st)) != 0) return rc;
    st->barrier_epoch = 0;
    st->alloc_seq = 0;
    /* The closing barrier, as an allgather of what must agree: the check setting
     * (checked collectives meet once more per call, so PEs that differ in it would pair
     * the wrong barriers) and the heap's size (identical allocators; only node-local
     * peers mapped over p2p compared it before). */
    struct init_agree {
        int32_t check;
        int32_t pad;
        uint64_t heap_size;
    } mine = {.check = st->check_args, .heap_size = st->heap.size}, *all = calloc((size_t)st->n_pes, sizeof(*all));
    if (!all) return GSHMEMX_ERR_NOMEM;
    rc = st->boot.ops->allgather(&st->boot, &mine, all, sizeof(mine));
    for (int pe = 0; rc == 0 && pe < st->n_pes; pe++) {
        if (all[pe].check != mine.check) {
            GSHMEMI_ERROR(INIT, "PE %d checks collective arguments (GSHMEM_CHECK=1 or a debug build of gshmem) but PE %d "
                                "does not: set GSHMEM_CHECK alike on every PE",
                          mine.check ? st->my_pe : pe, mine.check ? pe : st->my_pe);
            rc = GSHMEMX_ERR_CONFIG;
        } else if (all[pe].heap_size != mine.heap_size) {
            GSHMEMI_ERROR(INIT, "PE %d's symmetric heap has %llu bytes but PE %d's has %llu (each the size asked for, "
                                "rounded, plus the library's reserved area): set GSHMEM_SYMMETRIC_SIZE (and "
                                "GSHMEM_HEAP) alike on every PE",
                          pe, (unsigned long long)all[pe].heap_size, st->my_pe, (unsigned long long)mine.heap_size);
            rc = GSHMEMX_ERR_CONFIG; /* one line is enough: the loop ends here */
        }
    }
    free(all);
    if (rc != 0) return rc;
    t[5] = init_ms();
    init_print_config(st);
    GSHMEMI_INFO(INIT, "PE %d of %d ready (node-local %d of %d) in %.1f ms: bootstrap %.1f, "
                       "GPU and heap %.1f, sync heap %.1f, transports %.1f, device state and barrier %.1f",
                 st->my_pe, st->n_pes, st->boot.local_rank, st->boot.local_nranks, t[5] - t[0], t[1] - t[0],
                 t[2] - t[1], t[3] - t[2], t[4] - t[3], t[5] - t[4]);
    return 0;
}

/* OpenSHMEM 1.5: init may be called again while initialized, and each call needs its own
 * finalize; only the last finalize ends the library. The lock makes a count that two
 * threads' calls (a library and its application, say) cannot tear. */
static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;

static int init_thread_locked(struct gshmemi_state *st, int requested, int *provided,
                              const gshmemx_init_attr_t *attr)
{
    if (requested < GSHMEM_THREAD_SINGLE || requested > GSHMEM_THREAD_MULTIPLE) {
        GSHMEMI_ERROR(INIT, "gshmem_init_thread: requested=%d is not a GSHMEM_THREAD_* level", requested);
        return GSHMEMX_ERR_INVALID_ARG;
    }
    if (st->initialized) {
        if (st->init_calls == INT_MAX) {
            GSHMEMI_ERROR(INIT, "gshmem_init: called %d times without a gshmem_finalize", INT_MAX);
            return GSHMEMX_ERR_INVALID_ARG;
        }
        st->init_calls++;
        if (provided) *provided = st->thread_level;
        return 0;
    }
    /* gshmemrun's, a unique ID's and Kubernetes' bootstrap roots take each PE once: a
     * second join is refused, or waits GSHMEM_TIMEOUT for a root that is gone. */
    if (st->ended_boot && strcmp(st->ended_boot, "pmix") != 0 && strcmp(st->ended_boot, "single") != 0 &&
        attr == NULL) { /* a fresh unique ID (attr) makes a fresh root: that one works */
        GSHMEMI_ERROR(INIT, "gshmem_init after the last gshmem_finalize: this process's job was found through "
                            "the %s bootstrap, whose root takes each PE once; starting gshmem again in one process "
                            "works under PMIx (mpirun, srun), as a single PE, or with a fresh unique ID "
                            "(gshmemx_init_attr)",
                      st->ended_boot);
        return GSHMEMX_ERR_NOT_SUPPORTED;
    }
    int rc = init_all(st, attr);
    gshmemi_bootstrap_uid_attach(NULL);
    if (rc != 0) {
        GSHMEMI_ERROR(INIT, "initialization failed: %s", gshmemx_strerror(rc));
        init_teardown(st);
        if (st->boot.ops) {
            st->boot.ops->abort(&st->boot, 1);
            gshmemi_bootstrap_fini(&st->boot);
        }
        memset(&st->boot, 0, sizeof(st->boot));
        return rc;
    }
    /* Every host operation is thread-safe, so MULTIPLE is always provided. */
    st->thread_level = GSHMEM_THREAD_MULTIPLE;
    st->init_calls = 1;
    st->initialized = 1;
    if (provided) *provided = st->thread_level;
    return 0;
}

static int init_thread(int requested, int *provided, const gshmemx_init_attr_t *attr)
{
    pthread_mutex_lock(&init_lock);
    int rc = init_thread_locked(&gshmemi_state, requested, provided, attr);
    pthread_mutex_unlock(&init_lock);
    return rc;
}

int gshmem_init_thread(int requested, int *provided)
{
    return init_thread(requested, provided, NULL);
}

int gshmemx_init_attr(unsigned flags, gshmemx_init_attr_t *attr)
{
    if (flags != GSHMEMX_INIT_WITH_UNIQUEID || attr == NULL) {
        GSHMEMI_ERROR(INIT, "gshmemx_init_attr: flags=%#x (only GSHMEMX_INIT_WITH_UNIQUEID is supported), attr %s",
                      flags, attr ? "given" : "NULL");
        return GSHMEMX_ERR_INVALID_ARG;
    }
    return init_thread(GSHMEM_THREAD_MULTIPLE, NULL, attr);
}

void gshmem_init(void)
{
    if (gshmem_init_thread(GSHMEM_THREAD_SINGLE, NULL) != 0) {
        fflush(NULL);
        exit(1);
    }
}

void gshmem_query_thread(int *provided)
{
    struct gshmemi_state *st = gshmemi_api_state(__func__);
    if (provided) *provided = st->thread_level;
}

int gshmem_query_initialized(void)
{
    return gshmemi_state.initialized;
}

void gshmem_finalize(void)
{
    struct gshmemi_state *st = &gshmemi_state;
    pthread_mutex_lock(&init_lock);
    if (!st->initialized || --st->init_calls > 0) {
        pthread_mutex_unlock(&init_lock);
        return;
    }
    gshmemi_device_wait_report_print(); /* a kernel's wait timed out: say so before a CUDA call fails */
    gshmemi_sync_quiet(st, __func__);
    gshmemi_sync_barrier(st, __func__);
    st->initialized = 0;
    st->ended_boot = st->boot.ops ? st->boot.ops->name : NULL;
    init_teardown(st);
    gshmemi_bootstrap_fini(&st->boot);
    memset(&st->boot, 0, sizeof(st->boot));
    gshmemi_log_close();
    pthread_mutex_unlock(&init_lock);
}

void gshmem_global_exit(int status)
{
    struct gshmemi_state *st = &gshmemi_state;
    init_claim_ending();
    gshmemi_device_wait_report_print();
    fflush(NULL);
    gshmemi_sync_flush(st); /* puts tcp still holds leave before our sockets close */
    if (st->boot.ops) st->boot.ops->abort(&st->boot, status);
    if (st->boot.ops && st->boot.ops->linger) st->boot.ops->linger(&st->boot);
    _exit(status);
}
