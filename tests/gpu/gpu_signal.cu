/* Signals on data, around a ring (each PE sends to the right, receives from the left):
 *  1. Device to device: 60 rounds of put-with-signal (putmem_signal and typed/sized
 *     forms; thread, warp, block; blocking and _nbi; SET and ADD), payloads of 1 byte ..
 *     256 KiB at varied offsets. The receiver waits with gshmem_signal_wait_until in
 *     its kernel, checks the returned value, gshmem_signal_fetch and every payload
 *     byte, then acks with gshmemx_signal_op / gshmem_signal_add; a final
 *     gshmem_signal_set is awaited by the host with the host API.
 *  2. Device sender, host receiver: host gshmem_signal_wait_until / signal_fetch on the
 *     device heap while the peer's kernel runs; host acks with gshmem_signal_add.
 *  3. Host sender, device receiver: host gshmem_putmem_signal(_nbi), typed put_signal
 *     and gshmem_signal_set; the receiving kernel checks every byte.
 *  4. Around the one-word-per-thread limits of the device put_signal's short path:
 *     thread, warp and block (blocks of 40, 8x5, 96, 32x3, 256 and 1024 threads), payloads of 0 B
 *     to 16 words per thread and just past it, aligned and unaligned ends. The
 *     receiver checks the payload and 64 bytes either side (poisoned), then poisons
 *     the payload again before it acks. */
#include "gpu_check.cuh"

#include <vector>

static int me, npes, right_pe, left_pe;

#define SIG_THREADS 256
#define DATA_MAX (262144 + 11)
#define DATA_SPAN (DATA_MAX + 16 + 64) /* payload + offset + guard */
#define RING_ROUNDS 60
#define NSIZES 10
#define NVARIANTS 12

__constant__ unsigned ring_sizes[NSIZES] = {1, 8, 13, 16, 100, 1031, 4096, 12345, 65539, DATA_MAX};

/* Element size of each variant's typed form (1: putmem_signal). */
__host__ __device__ inline unsigned variant_esize(int v)
{
    switch (v) {
    case 6: case 9: return 8;
    case 7: case 8: return 4;
    case 11: return 16;
    default: return 1;
    }
}

struct round_shape {
    int variant;
    unsigned bytes, doff, soff;
};

__device__ inline round_shape ring_shape(int r)
{
    round_shape s;
    s.variant = r % NVARIANTS;
    unsigned es = variant_esize(s.variant);
    unsigned size = ring_sizes[(r + r / NVARIANTS) % NSIZES];
    unsigned nelems = size / es ? size / es : 1;
    s.bytes = nelems * es;
    s.doff = ((unsigned)r * 5u % 16u) & ~(es - 1);
    s.soff = (r % 3 == 0 ? s.doff + 4u : s.doff) & ~(es - 1);
    return s;
}

/* Sends this round's payload with its signal; SET writes r + 1, ADD adds 1 (the
 * previous rounds left r), so the receiver waits for r + 1 either way. */
__device__ void ring_send(const round_shape &s, char *dst, const char *src, uint64_t *sig, int r, int pe)
{
    bool t0 = threadIdx.x == 0, warp0 = threadIdx.x < 32;
    size_t nb = s.bytes;
    switch (s.variant) {
    case 0:
        if (t0) gshmem_putmem_signal(dst, src, nb, sig, r + 1, GSHMEM_SIGNAL_SET, pe);
        break;
    case 1:
        if (t0) {
            gshmem_putmem_signal_nbi(dst, src, nb, sig, 1, GSHMEM_SIGNAL_ADD, pe);
            gshmem_quiet();
        }
        break;
    case 2:
        if (warp0) gshmemx_putmem_signal_warp(dst, src, nb, sig, 1, GSHMEM_SIGNAL_ADD, pe);
        break;
    case 3:
        if (warp0) {
            gshmemx_putmem_signal_nbi_warp(dst, src, nb, sig, r + 1, GSHMEM_SIGNAL_SET, pe);
            gshmem_quiet();
        }
        break;
    case 4: gshmemx_putmem_signal_block(dst, src, nb, sig, r + 1, GSHMEM_SIGNAL_SET, pe); break;
    case 5:
        gshmemx_putmem_signal_nbi_block(dst, src, nb, sig, 1, GSHMEM_SIGNAL_ADD, pe);
        gshmem_quiet();
        break;
    case 6:
        if (t0) gshmem_long_put_signal((long *)dst, (const long *)src, nb / 8, sig, 1, GSHMEM_SIGNAL_ADD, pe);
        break;
    case 7:
        gshmemx_int_put_signal_block((int *)dst, (const int *)src, nb / 4, sig, r + 1, GSHMEM_SIGNAL_SET, pe);
        break;
    case 8:
        if (t0) {
            gshmem_put32_signal_nbi(dst, src, nb / 4, sig, 1, GSHMEM_SIGNAL_ADD, pe);
            gshmem_quiet();
        }
        break;
    case 9:
        if (warp0) {
            gshmemx_double_put_signal_nbi_warp((double *)dst, (const double *)src, nb / 8, sig, r + 1,
                                               GSHMEM_SIGNAL_SET, pe);
            gshmem_quiet();
        }
        break;
    case 10:
        gshmemx_char_put_signal_nbi_block(dst, src, nb, sig, 1, GSHMEM_SIGNAL_ADD, pe);
        gshmem_quiet();
        break;
    default:
        if (t0) gshmem_put128_signal(dst, src, nb / 16, sig, r + 1, GSHMEM_SIGNAL_SET, pe);
    }
}

/* data, sig, ack, done: symmetric. src: private staging buffer. */
__global__ void ring_kernel(char *data, uint64_t *sig, uint64_t *ack, uint64_t *done, char *src, gpu_log *log)
{
    int n = gshmem_n_pes(), my = gshmem_my_pe(), right = (my + 1) % n, left = (my + n - 1) % n;
    __shared__ uint64_t seen;
    for (int r = 0; r < RING_ROUNDS; r++) {
        round_shape s = ring_shape(r);
        /* The right-hand PE has checked round r - 1: its buffer may be overwritten. */
        if (threadIdx.x == 0) gshmem_signal_wait_until(ack, GSHMEM_CMP_GE, (uint64_t)r);
        for (unsigned j = threadIdx.x; j < s.bytes; j += blockDim.x) src[s.soff + j] = (char)gpu_pat8(my, j, r);
        __syncthreads();
        ring_send(s, data + s.doff, src + s.soff, sig, r, right);
        __syncthreads();

        if (threadIdx.x == 0) {
            seen = gshmem_signal_wait_until(sig, GSHMEM_CMP_GE, (uint64_t)r + 1);
            GPU_DCHECK(log, left, r, -1, (uint64_t)r + 1, (uint64_t)seen);
            GPU_DCHECK(log, left, r, -2, (uint64_t)r + 1, gshmem_signal_fetch(sig));
        }
        __syncthreads();
        for (unsigned j = threadIdx.x; j < s.bytes; j += blockDim.x)
            GPU_DCHECK(log, left, r * 100 + s.variant, j, gpu_pat8(left, j, r), (uint8_t)data[s.doff + j]);
        __syncthreads();
        if (threadIdx.x == 0) {
            if (r % 2) gshmemx_signal_op(ack, 1, GSHMEM_SIGNAL_ADD, left);
            else gshmem_signal_add(ack, 1, left);
        }
    }
    if (threadIdx.x == 0) gshmem_signal_set(done, 0xD00E0000ull + (uint64_t)my, right);
}

static void test_ring(void)
{
    char *data = (char *)gshmem_malloc(DATA_SPAN);
    uint64_t *sig = (uint64_t *)gshmem_calloc(3, sizeof(uint64_t)); /* sig, ack, done */
    GPU_CHECK(data && sig, "ring: gshmem allocation failed");
    char *src;
    GPU_CHECK_CUDA(cudaMalloc(&src, DATA_SPAN));
    gpu_log *log = gpu_log_new();
    gpu_poison(data, DATA_SPAN);
    GPU_CHECK_CUDA(cudaMemset(sig, 0, 3 * sizeof(uint64_t)));
    GPU_CHECK_CUDA(cudaDeviceSynchronize());
    gshmem_barrier_all();

    cudaStream_t stream;
    GPU_CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    ring_kernel<<<1, SIG_THREADS, 0, stream>>>(data, &sig[0], &sig[1], &sig[2], src, log);
    GPU_CHECK_CUDA(cudaGetLastError());
    /* The host waits on the device heap while the kernels run. */
    uint64_t expect_done = 0xD00E0000ull + (uint64_t)left_pe;
    uint64_t got = gshmem_signal_wait_until(&sig[2], GSHMEM_CMP_EQ, expect_done);
    GPU_CHECK(got == expect_done, "ring: host signal_wait_until(done) returned 0x%llx, expected 0x%llx",
              (unsigned long long)got, (unsigned long long)expect_done);
    GPU_CHECK_CUDA(cudaStreamSynchronize(stream));
    GPU_CHECK_CUDA(cudaStreamDestroy(stream));
    gpu_log_check(log, "device put_signal ring", __FILE__);
    uint64_t fetched = gshmem_signal_fetch(&sig[0]);
    GPU_CHECK(fetched == RING_ROUNDS, "ring: host signal_fetch after %d rounds: %llu", RING_ROUNDS,
              (unsigned long long)fetched);
    gshmem_barrier_all();

    /* Nothing beyond the largest payload at the largest offset was written. */
    uint8_t guard[64], poison[64];
    memset(poison, GPU_POISON, sizeof(poison));
    GPU_CHECK_CUDA(cudaMemcpy(guard, data + DATA_MAX + 16, sizeof(guard), cudaMemcpyDeviceToHost));
    GPU_CHECK(gpu_cmp_bytes("ring guard after the largest payload", guard, poison, sizeof(guard)) == 0,
              "ring: guard bytes changed");
    GPU_CHECK_CUDA(cudaFree(log));
    GPU_CHECK_CUDA(cudaFree(src));
    gshmem_free(sig);
    gshmem_free(data);
    if (me == 0) printf("device put_signal ring ok (%d rounds, %d variants)\n", RING_ROUNDS, NVARIANTS);
}

/* ---- 2. Device sender, host receiver ---------------------------------------------------- */

#define H_ROUNDS 24
#define H_SIZE(r) (1u + ((unsigned)(r) * 7919u) % 70000u)

__global__ void dev_sender(char *data, uint64_t *sig, uint64_t *ack, char *src)
{
    int n = gshmem_n_pes(), my = gshmem_my_pe(), right = (my + 1) % n;
    for (int r = 0; r < H_ROUNDS; r++) {
        unsigned size = H_SIZE(r);
        if (threadIdx.x == 0) gshmem_signal_wait_until(ack, GSHMEM_CMP_GE, (uint64_t)r);
        for (unsigned j = threadIdx.x; j < size; j += blockDim.x) src[j] = (char)gpu_pat8(my, j, 1000 + r);
        __syncthreads();
        if (r % 2) gshmemx_putmem_signal_block(data, src, size, sig, r + 1, GSHMEM_SIGNAL_SET, right);
        else gshmemx_putmem_signal_nbi_block(data, src, size, sig, 1, GSHMEM_SIGNAL_ADD, right);
        gshmem_quiet();
        __syncthreads();
    }
}

static void test_device_to_host(void)
{
    char *data = (char *)gshmem_malloc(70000 + 64);
    uint64_t *sig = (uint64_t *)gshmem_calloc(2, sizeof(uint64_t)); /* sig, ack */
    GPU_CHECK(data && sig, "device-to-host: gshmem allocation failed");
    char *src;
    GPU_CHECK_CUDA(cudaMalloc(&src, 70000 + 64));
    gpu_poison(data, 70000 + 64);
    GPU_CHECK_CUDA(cudaMemset(sig, 0, 2 * sizeof(uint64_t)));
    GPU_CHECK_CUDA(cudaDeviceSynchronize());
    gshmem_barrier_all();

    cudaStream_t run, copy;
    GPU_CHECK_CUDA(cudaStreamCreateWithFlags(&run, cudaStreamNonBlocking));
    GPU_CHECK_CUDA(cudaStreamCreateWithFlags(&copy, cudaStreamNonBlocking));
    dev_sender<<<1, 128, 0, run>>>(data, &sig[0], &sig[1], src);
    GPU_CHECK_CUDA(cudaGetLastError());
    std::vector<uint8_t> got(70000), expect(70000);
    for (int r = 0; r < H_ROUNDS; r++) {
        uint64_t v = gshmem_signal_wait_until(&sig[0], GSHMEM_CMP_GE, (uint64_t)r + 1);
        GPU_CHECK(v == (uint64_t)r + 1, "device-to-host round %d: host signal_wait_until returned %llu", r,
                  (unsigned long long)v);
        uint64_t f = gshmem_signal_fetch(&sig[0]);
        GPU_CHECK(f == (uint64_t)r + 1, "device-to-host round %d: host signal_fetch %llu", r, (unsigned long long)f);
        unsigned size = H_SIZE(r);
        GPU_CHECK_CUDA(cudaMemcpyAsync(got.data(), data, size, cudaMemcpyDeviceToHost, copy));
        GPU_CHECK_CUDA(cudaStreamSynchronize(copy));
        for (unsigned j = 0; j < size; j++) expect[j] = gpu_pat8(left_pe, j, 1000 + r);
        char what[96];
        snprintf(what, sizeof(what), "device-to-host round %d (%u bytes from PE %d)", r, size, left_pe);
        GPU_CHECK(gpu_cmp_bytes(what, got.data(), expect.data(), size) == 0, "%s: payload wrong", what);
        gshmem_signal_add(&sig[1], 1, left_pe);
    }
    GPU_CHECK_CUDA(cudaStreamSynchronize(run));
    GPU_CHECK_CUDA(cudaStreamDestroy(run));
    GPU_CHECK_CUDA(cudaStreamDestroy(copy));
    gshmem_barrier_all();
    GPU_CHECK_CUDA(cudaFree(src));
    gshmem_free(sig);
    gshmem_free(data);
    if (me == 0) printf("device put_signal -> host signal_wait_until ok (%d rounds)\n", H_ROUNDS);
}

/* ---- 3. Host sender, device receiver ---------------------------------------------------- */

__global__ void dev_receiver(const char *data, uint64_t *sig, uint64_t *ack, gpu_log *log)
{
    int n = gshmem_n_pes(), my = gshmem_my_pe(), left = (my + n - 1) % n;
    for (int r = 0; r < H_ROUNDS; r++) {
        unsigned size = H_SIZE(r) & ~7u ? H_SIZE(r) & ~7u : 8; /* whole longs for the typed form */
        if (threadIdx.x == 0) {
            uint64_t v = gshmem_signal_wait_until(sig, GSHMEM_CMP_GE, (uint64_t)r + 1);
            GPU_DCHECK(log, left, r, -1, (uint64_t)r + 1, v);
        }
        __syncthreads();
        for (unsigned j = threadIdx.x; j < size; j += blockDim.x)
            GPU_DCHECK(log, left, r, j, gpu_pat8(left, j, 2000 + r), (uint8_t)data[j]);
        __syncthreads();
        if (threadIdx.x == 0) gshmemx_signal_op(ack, 1, GSHMEM_SIGNAL_ADD, left);
    }
}

static void test_host_to_device(void)
{
    char *data = (char *)gshmem_malloc(70000 + 64);
    uint64_t *sig = (uint64_t *)gshmem_calloc(2, sizeof(uint64_t)); /* sig, ack */
    GPU_CHECK(data && sig, "host-to-device: gshmem allocation failed");
    gpu_log *log = gpu_log_new();
    gpu_poison(data, 70000 + 64);
    GPU_CHECK_CUDA(cudaMemset(sig, 0, 2 * sizeof(uint64_t)));
    GPU_CHECK_CUDA(cudaDeviceSynchronize());
    gshmem_barrier_all();

    cudaStream_t run;
    GPU_CHECK_CUDA(cudaStreamCreateWithFlags(&run, cudaStreamNonBlocking));
    dev_receiver<<<1, 128, 0, run>>>(data, &sig[0], &sig[1], log);
    GPU_CHECK_CUDA(cudaGetLastError());
    std::vector<uint8_t> src(70000);
    for (int r = 0; r < H_ROUNDS; r++) {
        unsigned size = H_SIZE(r) & ~7u ? H_SIZE(r) & ~7u : 8;
        /* The right-hand PE's kernel has checked round r - 1. */
        uint64_t a = gshmem_signal_wait_until(&sig[1], GSHMEM_CMP_GE, (uint64_t)r);
        GPU_CHECK(a >= (uint64_t)r, "host-to-device round %d: ack wait returned %llu", r, (unsigned long long)a);
        for (unsigned j = 0; j < size; j++) src[j] = gpu_pat8(me, j, 2000 + r);
        switch (r % 4) {
        case 0: gshmem_putmem_signal(data, src.data(), size, &sig[0], 1, GSHMEM_SIGNAL_ADD, right_pe); break;
        case 1:
            gshmem_putmem_signal_nbi(data, src.data(), size, &sig[0], r + 1, GSHMEM_SIGNAL_SET, right_pe);
            gshmem_quiet();
            break;
        case 2:
            gshmem_long_put_signal((long *)data, (const long *)src.data(), size / 8, &sig[0], 1, GSHMEM_SIGNAL_ADD,
                                   right_pe);
            break;
        default:
            gshmem_putmem(data, src.data(), size, right_pe);
            gshmem_fence();
            gshmem_signal_set(&sig[0], r + 1, right_pe);
        }
    }
    GPU_CHECK_CUDA(cudaStreamSynchronize(run));
    GPU_CHECK_CUDA(cudaStreamDestroy(run));
    gpu_log_check(log, "host put_signal -> device signal_wait_until", __FILE__);
    gshmem_barrier_all();
    GPU_CHECK_CUDA(cudaFree(log));
    gshmem_free(sig);
    gshmem_free(data);
    if (me == 0) printf("host put_signal -> device signal_wait_until ok (%d rounds)\n", H_ROUNDS);
}

/* ---- 4. The short path's limits -------------------------------------------------------- */

#define W_SIZES 12
#define W_OFFSETS 5
#define W_ROUNDS (3 * W_SIZES * W_OFFSETS)
#define W_SPAN (16 * 1024 + 256) /* guard, largest offset and payload, guard */
#define W_GUARD 64

__device__ inline unsigned words_size(int k, unsigned g)
{
    const unsigned sizes[W_SIZES] = {0,         8,           16,     24,          8 * g - 8, 8 * g,
                                     8 * g + 8, 16 * g - 16, 16 * g, 16 * g + 16, 33 * 8,    33 * 16};
    return sizes[k];
}

/* Round r of this launch: scope r % 3, then size, then offsets (dest, source). */
__global__ void __launch_bounds__(1024)
    words_kernel(char *data, uint64_t *sig, uint64_t *ack, char *src, int r0, gpu_log *log)
{
    const unsigned doffs[W_OFFSETS] = {0, 8, 16, 8, 4}, soffs[W_OFFSETS] = {0, 8, 0, 24, 4};
    int n = gshmem_n_pes(), my = gshmem_my_pe(), right = (my + 1) % n, left = (my + n - 1) % n;
    /* Blocks may be 2-D or 3-D: the calls number threads x-fastest, as CUDA forms warps. */
    const unsigned tid = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z),
                   nt = blockDim.x * blockDim.y * blockDim.z;
    for (int i = 0; i < W_ROUNDS; i++) {
        int r = r0 + i, sc = i % 3, k = (i / 3) % W_SIZES, o = i / (3 * W_SIZES);
        if (sc == 1 && nt < 32) sc = 0; /* no whole warp: a thread instead */
        unsigned g = sc == 0 ? 1 : sc == 1 ? 32 : nt;
        unsigned bytes = words_size(k, g), doff = doffs[o] + W_GUARD, soff = soffs[o];
        if (bytes > 16 * 1024 + 16) bytes = 16 * 1024 + 16;
        /* SET/ADD and blocking/nbi vary with the size, the offsets and the launch */
        int mode = (k + o + r0 / W_ROUNDS) % 4;
        bool set = mode % 2 == 0, nbi = mode / 2 == 1;
        uint64_t value = set ? (uint64_t)r + 1 : 1;
        int op = set ? GSHMEM_SIGNAL_SET : GSHMEM_SIGNAL_ADD;

        if (tid == 0) gshmem_signal_wait_until(ack, GSHMEM_CMP_GE, (uint64_t)r);
        for (unsigned j = tid; j < bytes; j += nt) src[soff + j] = (char)gpu_pat8(my, j, r);
        __syncthreads();
        char *d = data + doff, *s = src + soff;
        if (sc == 0 && tid == 0) {
            if (nbi) {
                gshmem_putmem_signal_nbi(d, s, bytes, sig, value, op, right);
                gshmem_quiet();
            } else {
                gshmem_putmem_signal(d, s, bytes, sig, value, op, right);
            }
        } else if (sc == 1 && tid < 32) {
            if (nbi) {
                gshmemx_putmem_signal_nbi_warp(d, s, bytes, sig, value, op, right);
                gshmem_quiet();
            } else {
                gshmemx_putmem_signal_warp(d, s, bytes, sig, value, op, right);
            }
        } else if (sc == 2) {
            if (nbi) {
                gshmemx_putmem_signal_nbi_block(d, s, bytes, sig, value, op, right);
                gshmem_quiet();
            } else {
                gshmemx_putmem_signal_block(d, s, bytes, sig, value, op, right);
            }
        }
        /* Once the call (or its quiet) returns, the source is the caller's again: the
         * group overwrites it at once, so a path that returned before reading all of
         * it would send the overwritten bytes. */
        if (tid < g)
            for (unsigned j = tid; j < bytes; j += g) s[j] = (char)~gpu_pat8(my, j, r);
        __syncthreads();

        if (tid == 0) {
            uint64_t v = gshmem_signal_wait_until(sig, GSHMEM_CMP_GE, (uint64_t)r + 1);
            GPU_DCHECK(log, left, r, -1, (uint64_t)r + 1, v);
        }
        __syncthreads();
        /* The payload, and the guards either side still poison. */
        for (unsigned j = tid; j < doff + bytes + W_GUARD; j += nt) {
            uint8_t expect = j >= doff && j < doff + bytes ? gpu_pat8(left, j - doff, r) : (uint8_t)GPU_POISON;
            GPU_DCHECK(log, left, r * 100 + (int)bytes % 100, (long long)j, expect, (uint8_t)data[j]);
        }
        __syncthreads();
        for (unsigned j = tid; j < bytes; j += nt) data[doff + j] = (char)GPU_POISON;
        __syncthreads();
        if (tid == 0) gshmem_signal_add(ack, 1, left);
    }
}

static void test_short_path(void)
{
    char *data = (char *)gshmem_malloc(W_SPAN);
    uint64_t *sig = (uint64_t *)gshmem_calloc(2, sizeof(uint64_t)); /* sig, ack */
    GPU_CHECK(data && sig, "short path: gshmem allocation failed");
    char *src;
    GPU_CHECK_CUDA(cudaMalloc(&src, W_SPAN));
    gpu_log *log = gpu_log_new();
    gpu_poison(data, W_SPAN);
    GPU_CHECK_CUDA(cudaMemset(sig, 0, 2 * sizeof(uint64_t)));
    GPU_CHECK_CUDA(cudaDeviceSynchronize());
    gshmem_barrier_all();
    /* 24 and 8x3 threads: blocks under a warp; 200: several copying warps and a partial
     * last warp; 8x4x3: 3-D. */
    const dim3 blocks[] = {dim3(40),  dim3(8, 5), dim3(96),      dim3(32, 3), dim3(256),
                           dim3(1024), dim3(24),  dim3(8, 3), dim3(200), dim3(8, 4, 3)};
    int r0 = 0;
    for (dim3 b : blocks) {
        words_kernel<<<1, b>>>(data, &sig[0], &sig[1], src, r0, log);
        GPU_CHECK_CUDA(cudaGetLastError());
        r0 += W_ROUNDS;
    }
    gpu_log_check(log, "device put_signal short path", __FILE__);
    gshmem_barrier_all();
    GPU_CHECK_CUDA(cudaFree(log));
    GPU_CHECK_CUDA(cudaFree(src));
    gshmem_free(sig);
    gshmem_free(data);
    if (me == 0) printf("device put_signal short path ok (%d rounds, blocks of 24..1024 threads, 1-D, 2-D and 3-D)\n", r0);
}

int main(void)
{
    gpu_test_init("gpu_signal");
    me = gshmem_my_pe();
    npes = gshmem_n_pes();
    right_pe = (me + 1) % npes;
    left_pe = (me + npes - 1) % npes;
    test_ring();
    test_device_to_host();
    test_host_to_device();
    test_short_path();
    gpu_test_pass("gpu_signal");
    return 0;
}
