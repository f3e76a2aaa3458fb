/* Ordering and barriers in kernels:
 *  1. fence: a writer stores four data words, gshmem_fence, then a flag (p, put or
 *     atomic_set), 3000 times without pause; the reader (acquire load of the flag, then
 *     the data) must never see a flag newer than the data.
 *  2. quiet: a block puts 64 KiB (_nbi), every thread calls gshmem_quiet, then one
 *     plain p raises the flag; the reader waits for the flag and checks every byte.
 *  3. gshmem_barrier_all and gshmem_sync_all (after quiet) in a grid started with
 *     gshmemx_collective_launch, 100 rounds each, with skewed arrival (a block of some
 *     PEs spins on clock64 first); every block's data from every PE is checked after
 *     each barrier.
 *  4. gshmemx_barrier_all_block/_warp and gshmemx_sync_all_block/_warp, 200 rounds
 *     each: put to every PE, barrier, check every byte from every PE. */
#include "gpu_check.cuh"

static int me, npes;

/* ---- 1 and 2: fence and quiet ------------------------------------------------------------- */

#define FENCE_ROUNDS 3000
#define QUIET_ROUNDS 50
#define QUIET_BYTES 65536

struct order_area {
    uint64_t data[4];
    uint64_t flag;
    uint64_t qflag; /* quiet phase: round published */
    uint64_t qack;  /* quiet phase: round checked by the right-hand PE */
};

/* Block 0 writes to the right-hand PE, block 1 reads what the left-hand PE writes. */
__global__ void order_kernel(order_area *area, char *payload, char *src, gpu_log *log)
{
    int n = gshmem_n_pes(), my = gshmem_my_pe(), right = (my + 1) % n, left = (my + n - 1) % n;
    bool writer = blockIdx.x == 0;

    /* 1: fence */
    if (threadIdx.x == 0) {
        if (writer) {
            uint64_t v[4];
            for (uint64_t r = 1; r <= FENCE_ROUNDS; r++) {
                switch (r % 3) {
                case 0:
                    for (int k = 0; k < 4; k++) gshmem_uint64_p(&area->data[k], r, right);
                    gshmem_fence();
                    gshmem_uint64_p(&area->flag, r, right);
                    break;
                case 1:
                    for (int k = 0; k < 4; k++) v[k] = r;
                    gshmem_uint64_put(area->data, v, 4, right);
                    gshmem_fence();
                    gshmem_uint64_put(&area->flag, &r, 1, right);
                    break;
                default:
                    for (int k = 0; k < 4; k++) gshmem_uint64_p(&area->data[k], r, right);
                    gshmem_fence();
                    gshmem_uint64_atomic_set(&area->flag, r, right);
                }
            }
        } else {
            uint64_t last = 0;
            while (last < FENCE_ROUNDS) {
                uint64_t f = gshmem_signal_fetch(&area->flag); /* acquire */
                if (f == last) continue;
                if (f < last || f > FENCE_ROUNDS) {
                    gpu_log_fail(log, __LINE__, left, 0, -1, last, f);
                    break;
                }
                for (int k = 0; k < 4; k++) {
                    uint64_t d = *(volatile uint64_t *)&area->data[k];
                    if (d < f) gpu_log_fail(log, __LINE__, left, (int)(f % 3), k, f, d);
                }
                last = f;
            }
        }
    }
    __syncthreads();

    /* 2: quiet */
    for (int r = 1; r <= QUIET_ROUNDS; r++) {
        if (writer) {
            if (threadIdx.x == 0) gshmem_uint64_wait_until(&area->qack, GSHMEM_CMP_GE, (uint64_t)r - 1);
            for (unsigned j = threadIdx.x; j < QUIET_BYTES; j += blockDim.x) src[j] = (char)gpu_pat8(my, j, r);
            __syncthreads();
            gshmemx_putmem_nbi_block(payload, src, QUIET_BYTES, right);
            gshmem_quiet();
            __syncthreads();
            if (threadIdx.x == 0) gshmem_uint64_p(&area->qflag, (uint64_t)r, right);
        } else {
            if (threadIdx.x == 0) gshmem_uint64_wait_until(&area->qflag, GSHMEM_CMP_GE, (uint64_t)r);
            __syncthreads();
            for (unsigned j = threadIdx.x; j < QUIET_BYTES; j += blockDim.x)
                GPU_DCHECK(log, left, 1000 + r, j, gpu_pat8(left, j, r), (uint8_t)payload[j]);
            __syncthreads();
            if (threadIdx.x == 0) gshmem_uint64_p(&area->qack, (uint64_t)r, left);
        }
    }
}

static void test_order(void)
{
    order_area *area = (order_area *)gshmem_calloc(1, sizeof(order_area));
    char *payload = (char *)gshmem_malloc(QUIET_BYTES);
    GPU_CHECK(area && payload, "order: gshmem allocation failed");
    char *src;
    GPU_CHECK_CUDA(cudaMalloc(&src, QUIET_BYTES));
    GPU_CHECK_CUDA(cudaMemset(area, 0, sizeof(order_area)));
    gpu_poison(payload, QUIET_BYTES);
    gpu_log *log = gpu_log_new();
    gshmem_barrier_all();
    order_kernel<<<2, 128>>>(area, payload, src, log);
    GPU_CHECK_KERNEL();
    gpu_log_check(log, "fence (what = round % 3) / quiet (what = 1000 + round) ordering", __FILE__);
    gshmem_barrier_all();
    GPU_CHECK_CUDA(cudaFree(log));
    GPU_CHECK_CUDA(cudaFree(src));
    gshmem_free(payload);
    gshmem_free(area);
    if (me == 0) printf("fence and quiet ordering ok\n");
}

/* ---- 3. Grid-wide barrier_all / sync_all -------------------------------------------------- */

#define COLL_BLOCKS 4
#define COLL_THREADS 128
#define COLL_ROUNDS 100

/* arr: 2 parities x n PEs x COLL_BLOCKS ints. Round it: thread 0 of each block writes
 * stamp(it) into its cell on every PE, then the barrier, then every block checks all
 * cells of the parity. */
__device__ inline int coll_stamp(int it, int pe, int b) { return (it + 1) * 1000 + pe * COLL_BLOCKS + b; }

__global__ void coll_kernel(int *arr, gpu_log *log, int sync_only)
{
    int n = gshmem_n_pes(), my = gshmem_my_pe(), b = (int)blockIdx.x;
    for (int it = 0; it < COLL_ROUNDS; it++) {
        int *plane = arr + (size_t)(it & 1) * n * COLL_BLOCKS;
        if (threadIdx.x == 0) {
            /* Skewed arrival: one block of each PE idles a varying while. */
            if (b == (it + my) % COLL_BLOCKS) gpu_spin((long long)((my * 7 + it) % 5) * 20000);
            for (int i = 0; i < n; i++) {
                int pe = (my + i) % n;
                gshmem_int_p(&plane[my * COLL_BLOCKS + b], coll_stamp(it, my, b), pe);
            }
        }
        if (sync_only) {
            gshmem_quiet();
            gshmem_sync_all();
        } else {
            gshmem_barrier_all();
        }
        for (int c = (int)threadIdx.x; c < n * COLL_BLOCKS; c += (int)blockDim.x) {
            int got = *(volatile int *)&plane[c];
            GPU_DCHECK(log, c / COLL_BLOCKS, it, c, coll_stamp(it, c / COLL_BLOCKS, c % COLL_BLOCKS), got);
        }
    }
}

static void test_collective(int sync_only)
{
    int *arr = (int *)gshmem_malloc(2 * (size_t)npes * COLL_BLOCKS * sizeof(int));
    GPU_CHECK(arr != NULL, "collective: gshmem_malloc failed");
    gpu_poison(arr, 2 * (size_t)npes * COLL_BLOCKS * sizeof(int));
    gpu_log *log = gpu_log_new();
    gshmem_barrier_all();
    int most = 0;
    void *args[] = {&arr, &log, &sync_only};
    GPU_CHECK(gshmemx_collective_launch_query_gridsize((const void *)coll_kernel, dim3(COLL_THREADS), args, 0, &most) ==
                  0,
              "gshmemx_collective_launch_query_gridsize failed");
    GPU_CHECK(most >= COLL_BLOCKS, "collective launch allows only %d blocks of %d threads, need %d", most,
              COLL_THREADS, COLL_BLOCKS);
    int rc = gshmemx_collective_launch((const void *)coll_kernel, dim3(COLL_BLOCKS), dim3(COLL_THREADS), args, 0, 0);
    GPU_CHECK(rc == 0, "gshmemx_collective_launch returned %d", rc);
    GPU_CHECK_KERNEL();
    gpu_log_check(log, sync_only ? "quiet + sync_all in a collective launch (what = round)"
                                 : "barrier_all in a collective launch (what = round)",
                  __FILE__);
    gshmem_barrier_all();
    GPU_CHECK_CUDA(cudaFree(log));
    gshmem_free(arr);
    if (me == 0)
        printf("device %s with skewed arrival ok (%d rounds, %d blocks, query says up to %d)\n",
               sync_only ? "quiet + sync_all" : "barrier_all", COLL_ROUNDS, COLL_BLOCKS, most);
}

/* ---- 4. Block and warp barriers ----------------------------------------------------------- */

#define GRP_ROUNDS 200
#define GRP_CHUNK 1003 /* bytes each PE puts to each PE per round: odd, unaligned tail */

enum { G_BARRIER_BLOCK, G_SYNC_BLOCK, G_BARRIER_WARP, G_SYNC_WARP };
static const char *const grp_names[] = {"barrier_all_block", "quiet + sync_all_block", "barrier_all_warp",
                                        "quiet + sync_all_warp"};

/* buf: 2 parities x n PEs x GRP_CHUNK bytes. One block (or one warp) per PE. */
__global__ void group_kernel(char *buf, char *src, int mode, gpu_log *log)
{
    int n = gshmem_n_pes(), my = gshmem_my_pe();
    bool warp = mode == G_BARRIER_WARP || mode == G_SYNC_WARP;
    for (int it = 0; it < GRP_ROUNDS; it++) {
        char *plane = buf + (size_t)(it & 1) * n * GRP_CHUNK;
        for (unsigned j = threadIdx.x; j < GRP_CHUNK; j += blockDim.x) src[j] = (char)gpu_pat8(my, j, it);
        if (warp) __syncwarp();
        else __syncthreads();
        for (int i = 0; i < n; i++) {
            int pe = (my + 1 + i) % n;
            if (warp) gshmemx_putmem_warp(plane + (size_t)my * GRP_CHUNK, src, GRP_CHUNK, pe);
            else gshmemx_putmem_block(plane + (size_t)my * GRP_CHUNK, src, GRP_CHUNK, pe);
        }
        switch (mode) {
        case G_BARRIER_BLOCK: gshmemx_barrier_all_block(); break;
        case G_SYNC_BLOCK:
            gshmem_quiet();
            gshmemx_sync_all_block();
            break;
        case G_BARRIER_WARP: gshmemx_barrier_all_warp(); break;
        default:
            gshmem_quiet();
            gshmemx_sync_all_warp();
        }
        for (size_t c = threadIdx.x; c < (size_t)n * GRP_CHUNK; c += blockDim.x) {
            int from = (int)(c / GRP_CHUNK);
            GPU_DCHECK(log, from, it, c % GRP_CHUNK, gpu_pat8(from, c % GRP_CHUNK, it), (uint8_t)plane[c]);
        }
        if (warp) __syncwarp();
        else __syncthreads();
    }
}

static void test_group(int mode)
{
    size_t bytes = 2 * (size_t)npes * GRP_CHUNK;
    char *buf = (char *)gshmem_malloc(bytes);
    GPU_CHECK(buf != NULL, "group barrier: gshmem_malloc failed");
    char *src;
    GPU_CHECK_CUDA(cudaMalloc(&src, GRP_CHUNK));
    gpu_poison(buf, bytes);
    gpu_log *log = gpu_log_new();
    gshmem_barrier_all();
    bool warp = mode == G_BARRIER_WARP || mode == G_SYNC_WARP;
    group_kernel<<<1, warp ? 32 : 96>>>(buf, src, mode, log);
    GPU_CHECK_KERNEL();
    char what[96];
    snprintf(what, sizeof(what), "%s (what = round)", grp_names[mode]);
    gpu_log_check(log, what, __FILE__);
    gshmem_barrier_all();
    GPU_CHECK_CUDA(cudaFree(log));
    GPU_CHECK_CUDA(cudaFree(src));
    gshmem_free(buf);
    if (me == 0) printf("%s ok (%d rounds)\n", grp_names[mode], GRP_ROUNDS);
}

int main(void)
{
    gpu_test_init("gpu_sync");
    me = gshmem_my_pe();
    npes = gshmem_n_pes();
    test_order();
    test_collective(0);
    test_collective(1);
    test_group(G_BARRIER_BLOCK);
    test_group(G_SYNC_BLOCK);
    test_group(G_BARRIER_WARP);
    test_group(G_SYNC_WARP);
    gpu_test_pass("gpu_sync");
    return 0;
}
