/*
 * gshmem host API: OpenSHMEM 1.5 names with the shmem_ prefix replaced by gshmem_.
 *
 * Semantics follow the specification. Where it leaves a choice, gshmem does:
 *  - Errors in calls that return nothing (a PE out of range, an address outside
 *    the symmetric heap) are reported once with the calling PE, the peer and the
 *    argument, and end the job through gshmem_global_exit(1): they are program
 *    bugs, and continuing would corrupt memory.
 *  - Blocking waits give up after GSHMEM_TIMEOUT seconds (0: never) with a
 *    diagnostic naming the PE, the address and the awaited condition, then end
 *    the job.
 *  - Atomics are atomic against other gshmem atomics on the same object issued
 *    through gshmem, not against plain loads and stores by other PEs.
 */
#ifndef GSHMEM_HOST_H
#define GSHMEM_HOST_H

#include <stddef.h>
#include <stdint.h>

#include <gshmem/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Setup, query, exit ---------------------------------------------------------------- */

/* Collective over every PE. On failure prints why and exits the process with status 1. */
void gshmem_init(void);
/* As gshmem_init; returns 0 on success, a gshmemx_status_t otherwise (the reason is logged). */
int gshmem_init_thread(int requested, int *provided);
void gshmem_query_thread(int *provided);
/* Nonzero between a successful init and finalize. */
int gshmem_query_initialized(void);
/* Collective: completes outstanding operations, synchronizes, releases the heap. */
void gshmem_finalize(void);
/* Ends every PE of the job with this status. Does not return. */
void gshmem_global_exit(int status);

/* Nonzero when pe is in range and reachable by this PE. */
int gshmem_pe_accessible(int pe);
/* Nonzero when addr lies in the symmetric heap and pe is accessible. */
int gshmem_addr_accessible(const void *addr, int pe);
void gshmem_info_get_version(int *major, int *minor);
/* Copies at most GSHMEM_MAX_NAME_LEN bytes, NUL included. */
void gshmem_info_get_name(char *name);

/* ---- Symmetric heap (collective; same arguments on every PE, in the same order) --------- */

/* NULL on exhaustion (logged with the size and what is free); size 0 gives NULL. */
void *gshmem_malloc(size_t size);
void *gshmem_calloc(size_t count, size_t size);
/* alignment must be a power of two. */
void *gshmem_align(size_t alignment, size_t size);
void *gshmem_realloc(void *ptr, size_t size);
void gshmem_free(void *ptr);

/* ---- Extensions ------------------------------------------------------------------------ */

/* Page size backing this PE's symmetric heap (2 MiB with hugepages, else the base page;
 * the allocation granularity for the device heap). */
size_t gshmemx_heap_page_size(void);
/* "host-hugetlb", "host-thp" or "device". */
const char *gshmemx_heap_kind(void);

/*
 * Unique-ID start-up (NVSHMEM's nvshmemx_get_uniqueid / nvshmemx_init_attr shape), for
 * applications that start their own processes: one process calls gshmemx_get_uniqueid,
 * which starts the bootstrap rendezvous in a thread of that process (listening on all
 * interfaces, or on GSHMEM_BOOTSTRAP_UID=host:port), and hands the ID to the others by
 * any means (a file, MPI_Bcast, ...); then every process, the one that made the ID
 * included, calls gshmemx_set_attr_uniqueid_args and gshmemx_init_attr. The root runs
 * from that process's gshmemx_init_attr until its gshmem_finalize: until then the others
 * wait (at most GSHMEM_TIMEOUT). A process forked after gshmemx_get_uniqueid does not
 * host the root.
 *
 * The ID is a credential: besides the root's IPv4 address(es), port and a job id it
 * carries the job secret (GSHMEM_BOOTSTRAP_SECRET / _FILE when set, up to 95 bytes,
 * else a random one), so whoever holds it can join the job. Pass it only over channels
 * the job's processes alone can read.
 */
typedef struct {
    char internal[128];
} gshmemx_uniqueid_t;

/* Fills *id and starts listening. Returns 0 or a gshmemx_status_t (logged). */
int gshmemx_get_uniqueid(gshmemx_uniqueid_t *id);

typedef struct {
    int rank, nranks;
    gshmemx_uniqueid_t uid;
} gshmemx_init_attr_t;

/* gshmemx_init_attr: join the job named by attr->uid as attr->rank of attr->nranks. */
#define GSHMEMX_INIT_WITH_UNIQUEID 1u

/* Fills attr for GSHMEMX_INIT_WITH_UNIQUEID; 0, or GSHMEMX_ERR_INVALID_ARG when
 * 0 <= rank < nranks does not hold or a pointer is NULL. */
int gshmemx_set_attr_uniqueid_args(int rank, int nranks, const gshmemx_uniqueid_t *id, gshmemx_init_attr_t *attr);

/* As gshmem_init_thread(GSHMEM_THREAD_MULTIPLE, NULL), with the bootstrap given by flags
 * and attr. Returns 0 or a gshmemx_status_t (logged). */
int gshmemx_init_attr(unsigned flags, gshmemx_init_attr_t *attr);

/* ---- RMA declarations per type ------------------------------------------------------- */
#define GSHMEMI_DECLARE_RMA(T, N)                                                               \
    void gshmem_##N##_put(T *dest, const T *source, size_t nelems, int pe);                      \
    void gshmem_##N##_get(T *dest, const T *source, size_t nelems, int pe);                      \
    void gshmem_##N##_put_nbi(T *dest, const T *source, size_t nelems, int pe);                  \
    void gshmem_##N##_get_nbi(T *dest, const T *source, size_t nelems, int pe);                  \
    void gshmem_##N##_p(T *dest, T value, int pe);                                               \
    T gshmem_##N##_g(const T *source, int pe);                                                   \
    void gshmem_##N##_iput(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, \
                           int pe);                                                              \
    void gshmem_##N##_iget(T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, \
                           int pe);                                                              \
    void gshmem_##N##_put_signal(T *dest, const T *source, size_t nelems, uint64_t *sig_addr,    \
                                 uint64_t signal, int sig_op, int pe);                           \
    void gshmem_##N##_put_signal_nbi(T *dest, const T *source, size_t nelems, uint64_t *sig_addr, \
                                     uint64_t signal, int sig_op, int pe);

/* long double has no device twin (device code has no long double). */
GSHMEMI_DECLARE_RMA(long double, longdouble)

/*
 * Everything below has a device twin of the same name (gshmem/device.cuh). In nvcc's
 * device pass these host declarations step aside for the device definitions.
 */
#if !defined(__CUDA_ARCH__)

int gshmem_my_pe(void);
int gshmem_n_pes(void);
/* Address through which this PE can reach pe's copy of dest, or NULL when pe's heap is
 * not mapped into this process. With the device heap it is a device address, for
 * kernels; the host cannot dereference it. */
void *gshmem_ptr(const void *dest, int pe);

/* ---- RMA ------------------------------------------------------------------------------- */

void gshmem_putmem(void *dest, const void *source, size_t nelems, int pe);
void gshmem_getmem(void *dest, const void *source, size_t nelems, int pe);
void gshmem_putmem_nbi(void *dest, const void *source, size_t nelems, int pe);
void gshmem_getmem_nbi(void *dest, const void *source, size_t nelems, int pe);

GSHMEM_RMA_DEVICE_TYPES(GSHMEMI_DECLARE_RMA)

/* Sized forms: gshmem_put8 .. gshmem_put128 take nelems elements of BITS/8 bytes. */
#define GSHMEMI_DECLARE_SIZED(BITS, T)                                                              \
    void gshmem_put##BITS(void *dest, const void *source, size_t nelems, int pe);                   \
    void gshmem_get##BITS(void *dest, const void *source, size_t nelems, int pe);                   \
    void gshmem_put##BITS##_nbi(void *dest, const void *source, size_t nelems, int pe);             \
    void gshmem_get##BITS##_nbi(void *dest, const void *source, size_t nelems, int pe);             \
    void gshmem_iput##BITS(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,            \
                           size_t nelems, int pe);                                                  \
    void gshmem_iget##BITS(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,            \
                           size_t nelems, int pe);                                                  \
    void gshmem_put##BITS##_signal(void *dest, const void *source, size_t nelems, uint64_t *sig_addr, \
                                   uint64_t signal, int sig_op, int pe);                            \
    void gshmem_put##BITS##_signal_nbi(void *dest, const void *source, size_t nelems,               \
                                       uint64_t *sig_addr, uint64_t signal, int sig_op, int pe);
GSHMEM_SIZED_TYPES(GSHMEMI_DECLARE_SIZED)
#undef GSHMEMI_DECLARE_SIZED

/* ---- Signals --------------------------------------------------------------------------- */

/* Writes the data, then updates sig_addr on pe (SET or ADD) so that a PE that observes
 * the new signal value also observes the data. */
void gshmem_putmem_signal(void *dest, const void *source, size_t nelems, uint64_t *sig_addr,
                          uint64_t signal, int sig_op, int pe);
void gshmem_putmem_signal_nbi(void *dest, const void *source, size_t nelems, uint64_t *sig_addr,
                              uint64_t signal, int sig_op, int pe);
uint64_t gshmem_signal_fetch(const uint64_t *sig_addr);
/* OpenSHMEM 1.6 additions: atomic signal updates without data. */
void gshmem_signal_add(uint64_t *sig_addr, uint64_t signal, int pe);
void gshmem_signal_set(uint64_t *sig_addr, uint64_t signal, int pe);
/* Waits on the local sig_addr; returns the value that satisfied the comparison. */
uint64_t gshmem_signal_wait_until(uint64_t *sig_addr, int cmp, uint64_t cmp_value);

/* ---- Atomic memory operations ---------------------------------------------------------- */

#define GSHMEMI_DECLARE_AMO_EXTENDED(T, N)                                                      \
    T gshmem_##N##_atomic_fetch(const T *source, int pe);                                        \
    void gshmem_##N##_atomic_set(T *dest, T value, int pe);                                      \
    T gshmem_##N##_atomic_swap(T *dest, T value, int pe);                                        \
    void gshmem_##N##_atomic_fetch_nbi(T *fetch, const T *source, int pe);                       \
    void gshmem_##N##_atomic_swap_nbi(T *fetch, T *dest, T value, int pe);
GSHMEM_AMO_EXTENDED_TYPES(GSHMEMI_DECLARE_AMO_EXTENDED)
#undef GSHMEMI_DECLARE_AMO_EXTENDED

#define GSHMEMI_DECLARE_AMO_STANDARD(T, N)                                                      \
    T gshmem_##N##_atomic_compare_swap(T *dest, T cond, T value, int pe);                        \
    T gshmem_##N##_atomic_fetch_inc(T *dest, int pe);                                            \
    void gshmem_##N##_atomic_inc(T *dest, int pe);                                               \
    T gshmem_##N##_atomic_fetch_add(T *dest, T value, int pe);                                   \
    void gshmem_##N##_atomic_add(T *dest, T value, int pe);                                      \
    void gshmem_##N##_atomic_compare_swap_nbi(T *fetch, T *dest, T cond, T value, int pe);       \
    void gshmem_##N##_atomic_fetch_inc_nbi(T *fetch, T *dest, int pe);                           \
    void gshmem_##N##_atomic_fetch_add_nbi(T *fetch, T *dest, T value, int pe);
GSHMEM_AMO_STANDARD_TYPES(GSHMEMI_DECLARE_AMO_STANDARD)
#undef GSHMEMI_DECLARE_AMO_STANDARD

#define GSHMEMI_DECLARE_AMO_BITWISE(T, N)                                                       \
    T gshmem_##N##_atomic_fetch_and(T *dest, T value, int pe);                                   \
    void gshmem_##N##_atomic_and(T *dest, T value, int pe);                                      \
    T gshmem_##N##_atomic_fetch_or(T *dest, T value, int pe);                                    \
    void gshmem_##N##_atomic_or(T *dest, T value, int pe);                                       \
    T gshmem_##N##_atomic_fetch_xor(T *dest, T value, int pe);                                   \
    void gshmem_##N##_atomic_xor(T *dest, T value, int pe);                                      \
    void gshmem_##N##_atomic_fetch_and_nbi(T *fetch, T *dest, T value, int pe);                  \
    void gshmem_##N##_atomic_fetch_or_nbi(T *fetch, T *dest, T value, int pe);                   \
    void gshmem_##N##_atomic_fetch_xor_nbi(T *fetch, T *dest, T value, int pe);
GSHMEM_AMO_BITWISE_TYPES(GSHMEMI_DECLARE_AMO_BITWISE)
#undef GSHMEMI_DECLARE_AMO_BITWISE

/* ---- Point-to-point synchronization ---------------------------------------------------- */
/* ivars are local symmetric objects updated by other PEs. status (may be NULL) excludes
 * element i when status[i] != 0. _any returns the index satisfied or SIZE_MAX when every
 * element is excluded; _some stores satisfied indices and returns how many. */

#define GSHMEMI_DECLARE_P2P_SYNC(T, N)                                                          \
    void gshmem_##N##_wait_until(T *ivar, int cmp, T cmp_value);                                 \
    void gshmem_##N##_wait_until_all(T *ivars, size_t nelems, const int *status, int cmp,        \
                                     T cmp_value);                                               \
    size_t gshmem_##N##_wait_until_any(T *ivars, size_t nelems, const int *status, int cmp,      \
                                       T cmp_value);                                             \
    size_t gshmem_##N##_wait_until_some(T *ivars, size_t nelems, size_t *indices,                \
                                        const int *status, int cmp, T cmp_value);                \
    void gshmem_##N##_wait_until_all_vector(T *ivars, size_t nelems, const int *status, int cmp, \
                                            T *cmp_values);                                      \
    size_t gshmem_##N##_wait_until_any_vector(T *ivars, size_t nelems, const int *status,        \
                                              int cmp, T *cmp_values);                           \
    size_t gshmem_##N##_wait_until_some_vector(T *ivars, size_t nelems, size_t *indices,         \
                                               const int *status, int cmp, T *cmp_values);       \
    int gshmem_##N##_test(T *ivar, int cmp, T cmp_value);                                        \
    int gshmem_##N##_test_all(T *ivars, size_t nelems, const int *status, int cmp, T cmp_value); \
    size_t gshmem_##N##_test_any(T *ivars, size_t nelems, const int *status, int cmp,            \
                                 T cmp_value);                                                   \
    size_t gshmem_##N##_test_some(T *ivars, size_t nelems, size_t *indices, const int *status,   \
                                  int cmp, T cmp_value);                                         \
    int gshmem_##N##_test_all_vector(T *ivars, size_t nelems, const int *status, int cmp,        \
                                     T *cmp_values);                                             \
    size_t gshmem_##N##_test_any_vector(T *ivars, size_t nelems, const int *status, int cmp,     \
                                        T *cmp_values);                                          \
    size_t gshmem_##N##_test_some_vector(T *ivars, size_t nelems, size_t *indices,               \
                                         const int *status, int cmp, T *cmp_values);
GSHMEM_P2P_SYNC_TYPES(GSHMEMI_DECLARE_P2P_SYNC)
#undef GSHMEMI_DECLARE_P2P_SYNC

/* ---- Ordering and synchronization ------------------------------------------------------ */

/* Orders puts, AMOs and signals to each PE: those issued before arrive before those after. */
void gshmem_fence(void);
/* Completes every outstanding put, AMO, signal and nbi get issued by this PE. */
void gshmem_quiet(void);
/* quiet, then sync_all. */
void gshmem_barrier_all(void);
/* Waits until every PE has called it; orders nothing by itself. */
void gshmem_sync_all(void);

#undef GSHMEMI_DECLARE_RMA
#endif /* !__CUDA_ARCH__ */

#ifdef __cplusplus
}
#endif

#endif /* GSHMEM_HOST_H */
