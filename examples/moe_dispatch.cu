/*
 * moe_dispatch: the token exchange of a mixture-of-experts layer, inside ONE kernel.
 * Every PE holds TOKENS tokens of HIDDEN floats; a router sends each token to TOP_K
 * experts, EXPERTS_PER_PE of which live on every PE. Per round the kernel:
 *
 *   dispatch  counts the rows for each destination PE, packs them, and puts each
 *             block's rows into the destination's receive buffer with one
 *             put-with-signal per (block, destination); the row count goes ahead
 *             with its own signal. This is an all-to-all-v.
 *   experts   waits for each source's rows, applies the expert (x * (e + 1) + bias),
 *             and puts every result back to the token's owner, then signals it.
 *   combine   waits for every PE's results and sums each token's TOP_K expert
 *             outputs weighted by the router's weights.
 *
 * Signals are never reset: they carry round numbers (SET round) or count deliveries
 * (ADD 1, so round r is complete at r * BLOCKS), and waits use >=, so the same
 * buffers serve every round. Three rounds with different inputs, the last one
 * routing every token to the last PE's experts (the worst case the buffers are sized
 * for); every output element is compared with the same computation on the host.
 *
 *   gshmemrun -n 4 ./moe_dispatch
 */
#include <gshmem.h>

#include <stdio.h>
#include <stdlib.h>

#define CHECK_CUDA(call)                                                                                    \
    do {                                                                                                    \
        cudaError_t err_ = (call);                                                                          \
        if (err_ != cudaSuccess) {                                                                          \
            fprintf(stderr, "PE %d: %s failed: %s\n", gshmem_my_pe(), #call, cudaGetErrorString(err_));      \
            gshmem_global_exit(1);                                                                          \
        }                                                                                                   \
    } while (0)

#define TOKENS 512
#define HIDDEN 256
#define TOP_K 2
#define EXPERTS_PER_PE 4
#define ROUTES (TOKENS * TOP_K) /* (token, k) pairs: one row each on the wire */
#define BLOCKS 8
#define THREADS 256
#define ROUTES_PER_BLOCK (ROUTES / BLOCKS) /* a block owns TOKENS / BLOCKS whole tokens */
#define MAX_PES 64
#define ROUNDS 3
static_assert(TOKENS % BLOCKS == 0 && HIDDEN % 4 == 0, "a block owns whole tokens; rows move as float4");

/* One token on the wire. The header tells the receiver which expert to apply and
 * where the result goes back; it keeps x 16-byte aligned for 16-byte copies. */
struct row {
    int expert; /* global expert id */
    int route;  /* token * TOP_K + k on the sending PE */
    int pad[2];
    float x[HIDDEN];
};

struct moe {
    /* ordinary device memory: this PE's inputs, output and send staging */
    const float *x;       /* [TOKENS][HIDDEN] */
    const int *topk_idx;  /* [TOKENS][TOP_K] global expert ids */
    const float *topk_w;  /* [TOKENS][TOP_K] */
    float *out;           /* [TOKENS][HIDDEN] */
    struct row *staging;  /* [ROUTES], grouped by destination PE */
    /* symmetric: written by peers */
    struct row *recv;     /* [n_pes][ROUTES]: a region per source, room for all its rows */
    float *back;          /* [ROUTES][HIDDEN]: expert outputs for our routes */
    uint64_t *recv_count; /* [n_pes] rows each source sent us this round */
    uint64_t *count_sig;  /* [n_pes] SET round after recv_count[source] */
    uint64_t *rows_sig;   /* [n_pes] ADD 1 per source block whose rows have landed */
    uint64_t *done_sig;   /* [n_pes] ADD 1 per expert block that sent our results back */
};

/* The expert's work, identical on the host. Inputs are multiples of 1/8 and weights
 * multiples of 1/16, so every product and sum is exact in float: the GPU must match
 * the host bit for bit, whatever the order or fused multiply-adds. */
__host__ __device__ inline float expert_apply(int e, float v)
{
    return v * (float)(e + 1) + (float)(e % 8) * 0.25f - 1.0f;
}

__device__ void dispatch(const struct moe &m, uint64_t round)
{
    __shared__ int start[MAX_PES], count[MAX_PES], base[MAX_PES], slot[ROUTES_PER_BLOCK];
    int me = gshmem_my_pe(), n = gshmem_n_pes(), first = blockIdx.x * ROUTES_PER_BLOCK;
    /* Counting pass. Thread d numbers the routes to PE d in token order, so this
     * block's rows for d get consecutive places [start, start + count) in d's region
     * for us. Every block walks the whole table (ROUTES ints) instead of synchronising
     * the grid. */
    if ((int)threadIdx.x < n) {
        int d = threadIdx.x, pos = 0, before = 0, mine = 0;
        for (int r = 0; r < ROUTES; r++) {
            if (m.topk_idx[r] / EXPERTS_PER_PE != d) continue;
            if (r < first) {
                before++;
            } else if (r < first + ROUTES_PER_BLOCK) {
                slot[r - first] = pos;
                mine++;
            }
            pos++;
        }
        start[d] = before;
        count[d] = mine;
        base[d] = pos; /* the total for d, turned into offsets below */
        if (blockIdx.x == 0) { /* block 0 also tells d the total, with its own signal */
            gshmem_uint64_p(&m.recv_count[me], (uint64_t)pos, d);
            gshmem_fence();
            gshmemx_signal_op(&m.count_sig[me], round, GSHMEM_SIGNAL_SET, d);
        }
    }
    __syncthreads();
    if (threadIdx.x == 0) /* staging holds destination 0's rows, then 1's, ... */
        for (int d = 0, sum = 0; d < n; d++) {
            int total = base[d];
            base[d] = sum;
            sum += total;
        }
    __syncthreads();
    /* Pack: a warp per row. */
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    for (int i = warp; i < ROUTES_PER_BLOCK; i += THREADS / 32) {
        int r = first + i, e = m.topk_idx[r], d = e / EXPERTS_PER_PE;
        struct row *dst = &m.staging[base[d] + slot[i]];
        const float4 *src = (const float4 *)&m.x[(r / TOP_K) * HIDDEN];
        for (int h = lane; h < HIDDEN / 4; h += 32) ((float4 *)dst->x)[h] = src[h];
        if (lane == 0) {
            dst->expert = e;
            dst->route = r;
        }
    }
    __syncthreads();
    /* One put-with-signal per destination, even an empty one: the receiver counts
     * BLOCKS signals per round. Staging may be reused next round without a quiet:
     * the round ends only after every destination has answered these rows. */
    for (int i = 1; i <= n; i++) {
        int d = (me + i) % n;
        gshmemx_putmem_signal_nbi_block(&m.recv[me * ROUTES + start[d]], &m.staging[base[d] + start[d]],
                                        count[d] * sizeof(struct row), &m.rows_sig[me], 1, GSHMEM_SIGNAL_ADD, d);
    }
}

__device__ void experts(const struct moe &m, uint64_t round)
{
    __shared__ uint64_t rows;
    int me = gshmem_my_pe(), n = gshmem_n_pes(), warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    for (int i = 0; i < n; i++) {
        int s = (me + i) % n; /* our own rows first: they are ready soonest */
        if (threadIdx.x == 0) {
            gshmem_signal_wait_until(&m.count_sig[s], GSHMEM_CMP_GE, round);
            gshmem_signal_wait_until(&m.rows_sig[s], GSHMEM_CMP_GE, round * BLOCKS);
            rows = *(volatile uint64_t *)&m.recv_count[s];
        }
        __syncthreads(); /* what thread 0 acquired is visible to the whole block */
        /* This block's share of s's rows, a warp per row, results straight back. */
        for (uint64_t j = rows * blockIdx.x / BLOCKS + warp; j < rows * (blockIdx.x + 1) / BLOCKS;
             j += THREADS / 32) {
            struct row *in = &m.recv[s * ROUTES + j];
            int e = in->expert, route = in->route;
            for (int h = lane; h < HIDDEN; h += 32) in->x[h] = expert_apply(e, in->x[h]); /* in place */
            __syncwarp();
            gshmemx_putmem_nbi_warp(&m.back[route * HIDDEN], in->x, sizeof in->x, s);
        }
        __syncthreads(); /* every warp's results are out before the signal below */
        if (threadIdx.x == 0) {
            gshmem_fence();
            gshmemx_signal_op(&m.done_sig[me], 1, GSHMEM_SIGNAL_ADD, s);
        }
    }
}

__device__ void combine(const struct moe &m, uint64_t round)
{
    if (threadIdx.x == 0)
        for (int d = 0; d < gshmem_n_pes(); d++)
            gshmem_signal_wait_until(&m.done_sig[d], GSHMEM_CMP_GE, round * BLOCKS);
    __syncthreads();
    int t0 = blockIdx.x * (TOKENS / BLOCKS);
    for (int i = threadIdx.x; i < (TOKENS / BLOCKS) * HIDDEN; i += THREADS) {
        int t = t0 + i / HIDDEN, h = i % HIDDEN;
        float sum = 0.0f;
        for (int k = 0; k < TOP_K; k++) sum += m.topk_w[t * TOP_K + k] * m.back[(t * TOP_K + k) * HIDDEN + h];
        m.out[t * HIDDEN + h] = sum;
    }
}

/* Blocks wait for other blocks (ours and the peers'), so all must be resident at
 * once: launched with gshmemx_collective_launch, which guarantees it. */
__global__ void moe_round(struct moe m, uint64_t round)
{
    dispatch(m, round);
    experts(m, round);
    combine(m, round);
}

static unsigned mix(unsigned a)
{
    a ^= a >> 16;
    a *= 0x7feb352du;
    a ^= a >> 15;
    a *= 0x846ca68bu;
    return a ^ (a >> 16);
}

/* Round `round`'s inputs on PE me. The router stands in for a gate's top-k: two
 * distinct experts per token and weights summing to 1; uniform over all experts,
 * except in the last round, where every token goes to the last PE's experts. */
static void make_inputs(int me, int n, int round, float *x, int *idx, float *w)
{
    int hot = round == ROUNDS, lo = hot ? (n - 1) * EXPERTS_PER_PE : 0;
    int size = hot ? EXPERTS_PER_PE : n * EXPERTS_PER_PE;
    for (int t = 0; t < TOKENS; t++) {
        for (int h = 0; h < HIDDEN; h++)
            x[t * HIDDEN + h] = (float)((me * 131 + round * 71 + t * 7 + h * 3) % 64 - 32) / 8;
        unsigned r = mix((unsigned)(me * 1000003 + round * 7919 + t));
        int e0 = (int)(r % size), e1 = (e0 + 1 + (int)((r >> 8) % (size - 1))) % size;
        idx[t * TOP_K] = lo + e0;
        idx[t * TOP_K + 1] = lo + e1;
        w[t * TOP_K] = (float)(8 + (r >> 16) % 8) / 16;
        w[t * TOP_K + 1] = 1.0f - w[t * TOP_K];
    }
}

/* Compares out with the host's MoE layer; prints the first mismatch. */
static int check(int me, int round, const float *x, const int *idx, const float *w, const float *out)
{
    for (int t = 0; t < TOKENS; t++)
        for (int h = 0; h < HIDDEN; h++) {
            float want = 0.0f;
            for (int k = 0; k < TOP_K; k++)
                want += w[t * TOP_K + k] * expert_apply(idx[t * TOP_K + k], x[t * HIDDEN + h]);
            float got = out[t * HIDDEN + h];
            if (got != want) { /* also catches the NaN poison */
                printf("moe_dispatch: FAIL on PE %d, round %d: token %d element %d is %g, expected %g "
                       "(experts %d and %d)\n", me, round, t, h, got, want, idx[t * TOP_K], idx[t * TOP_K + 1]);
                return 0;
            }
        }
    return 1;
}

int main(void)
{
    gshmem_init();
    int me = gshmem_my_pe(), n = gshmem_n_pes();
    if (n > MAX_PES) {
        if (me == 0) fprintf(stderr, "moe_dispatch: at most %d PEs\n", MAX_PES);
        gshmem_global_exit(1);
    }

    /* Symmetric buffers, allocated once and sized for the worst case: every PE
     * sending all its rows to one PE. */
    struct moe m;
    m.recv = (struct row *)gshmem_malloc((size_t)n * ROUTES * sizeof(struct row));
    m.back = (float *)gshmem_malloc((size_t)ROUTES * HIDDEN * sizeof(float));
    uint64_t *sigs = (uint64_t *)gshmem_calloc(4 * (size_t)n, sizeof(uint64_t));
    int *failed = (int *)gshmem_calloc(1, sizeof(int));
    if (!m.recv || !m.back || !sigs || !failed) gshmem_global_exit(1);
    m.recv_count = sigs, m.count_sig = sigs + n, m.rows_sig = sigs + 2 * n, m.done_sig = sigs + 3 * n;

    float *x, *w, *out;
    int *idx;
    CHECK_CUDA(cudaMalloc(&x, TOKENS * HIDDEN * sizeof(float)));
    CHECK_CUDA(cudaMalloc(&idx, ROUTES * sizeof(int)));
    CHECK_CUDA(cudaMalloc(&w, ROUTES * sizeof(float)));
    CHECK_CUDA(cudaMalloc(&out, TOKENS * HIDDEN * sizeof(float)));
    CHECK_CUDA(cudaMalloc(&m.staging, ROUTES * sizeof(struct row)));
    m.x = x, m.topk_idx = idx, m.topk_w = w, m.out = out;
    float *hx = (float *)malloc(TOKENS * HIDDEN * sizeof(float)), *hw = (float *)malloc(ROUTES * sizeof(float));
    float *hout = (float *)malloc(TOKENS * HIDDEN * sizeof(float));
    int *hidx = (int *)malloc(ROUTES * sizeof(int));
    if (!hx || !hw || !hout || !hidx) gshmem_global_exit(1);
    gshmem_barrier_all(); /* every PE's signals are zero before anyone sends */

    int ok = 1;
    for (int round = 1; round <= ROUNDS; round++) { /* every round even after a failure: peers wait for us */
        make_inputs(me, n, round, hx, hidx, hw);
        CHECK_CUDA(cudaMemcpy(x, hx, TOKENS * HIDDEN * sizeof(float), cudaMemcpyHostToDevice));
        CHECK_CUDA(cudaMemcpy(idx, hidx, ROUTES * sizeof(int), cudaMemcpyHostToDevice));
        CHECK_CUDA(cudaMemcpy(w, hw, ROUTES * sizeof(float), cudaMemcpyHostToDevice));
        /* Poison (NaN) what the round must write. No peer writes our back buffer
         * before this round's rows from us have reached it. */
        CHECK_CUDA(cudaMemset(out, 0xff, TOKENS * HIDDEN * sizeof(float)));
        CHECK_CUDA(cudaMemset(m.back, 0xff, ROUTES * HIDDEN * sizeof(float)));
        uint64_t r = (uint64_t)round;
        void *args[] = {&m, &r};
        if (gshmemx_collective_launch((const void *)moe_round, dim3(BLOCKS), dim3(THREADS), args, 0, 0) != 0)
            gshmem_global_exit(1);
        CHECK_CUDA(cudaDeviceSynchronize());
        CHECK_CUDA(cudaMemcpy(hout, out, TOKENS * HIDDEN * sizeof(float), cudaMemcpyDeviceToHost));
        if (ok) ok = check(me, round, hx, hidx, hw, hout);
    }

    if (!ok) gshmem_int_atomic_add(failed, 1, 0);
    gshmem_barrier_all(); /* the failure counts have landed on PE 0 */
    int bad = me == 0 ? gshmem_int_g(failed, 0) : 0;
    if (me == 0 && bad == 0)
        printf("moe_dispatch: OK (%d PEs, %d tokens x %d floats per PE, %d experts, top-%d, %d rounds, "
               "every element matches the host)\n", n, TOKENS, HIDDEN, n * EXPERTS_PER_PE, TOP_K, ROUNDS);
    else if (me == 0)
        printf("moe_dispatch: FAIL (%d of %d PEs got wrong results)\n", bad, n);

    free(hidx), free(hout), free(hw), free(hx);
    CHECK_CUDA(cudaFree(m.staging));
    CHECK_CUDA(cudaFree(out));
    CHECK_CUDA(cudaFree(w));
    CHECK_CUDA(cudaFree(idx));
    CHECK_CUDA(cudaFree(x));
    gshmem_free(failed);
    gshmem_free(sigs);
    gshmem_free(m.back);
    gshmem_free(m.recv);
    gshmem_finalize();
    return ok ? 0 : 1;
}
