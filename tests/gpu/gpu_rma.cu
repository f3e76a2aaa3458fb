/* Device RMA on data, every PE to every PE:
 *  1. putmem/getmem (and _nbi) from a thread, a warp and a block, sizes 1 .. 64 KiB + 13
 *     at offsets that take the 16-byte path (aligned ends, or a head and tail), the 4-byte
 *     path and the byte path; every byte of every destination region is checked, guards
 *     too.
 *  2. Typed p/g/put/get/put_nbi/get_nbi/iput/iget and their _warp/_block forms for
 *     int, long, double, uint8, uint64, char, float, short; sized put8..put128,
 *     get, nbi, iput, iget. Every element of every slot is checked.
 * Each phase: poison, barrier, kernel (ending in gshmem_quiet), host barrier, check. */
#include "gpu_check.cuh"

#include <vector>

static int me, npes;

/* ---- 1. putmem / getmem --------------------------------------------------------------- */

enum { V_THREAD, V_WARP, V_BLOCK, V_THREAD_NBI, V_WARP_NBI, V_BLOCK_NBI, V_COUNT };
static const char *const variant_names[V_COUNT] = {"thread", "warp", "block", "thread_nbi", "warp_nbi", "block_nbi"};

struct mem_case {
    unsigned size, doff, soff, variant;
    size_t region, span; /* the case's bytes in the slab: [region, region + span) */
};

#define MEM_SALT 11u
#define MEM_THREADS 160 /* five warps: block copies over a size that is not a power of two */

__device__ void mem_op(const mem_case &c, bool put, char *dst, const char *src, int pe)
{
    bool warp0 = threadIdx.x < 32, t0 = threadIdx.x == 0;
    switch (c.variant) {
    case V_THREAD:
        if (t0) put ? gshmem_putmem(dst, src, c.size, pe) : gshmem_getmem(dst, src, c.size, pe);
        break;
    case V_THREAD_NBI:
        if (t0) put ? gshmem_putmem_nbi(dst, src, c.size, pe) : gshmem_getmem_nbi(dst, src, c.size, pe);
        break;
    case V_WARP:
        if (warp0) put ? gshmemx_putmem_warp(dst, src, c.size, pe) : gshmemx_getmem_warp(dst, src, c.size, pe);
        break;
    case V_WARP_NBI:
        if (warp0)
            put ? gshmemx_putmem_nbi_warp(dst, src, c.size, pe) : gshmemx_getmem_nbi_warp(dst, src, c.size, pe);
        break;
    case V_BLOCK: put ? gshmemx_putmem_block(dst, src, c.size, pe) : gshmemx_getmem_block(dst, src, c.size, pe); break;
    default: put ? gshmemx_putmem_nbi_block(dst, src, c.size, pe) : gshmemx_getmem_nbi_block(dst, src, c.size, pe);
    }
}

/* Block b runs case b toward every PE. put: src (local) -> slab me of pe's dst;
 * get: slab pe of the local dst <- pe's src. */
__global__ void mem_kernel(const mem_case *cases, bool put, const char *src, char *dst, size_t slab)
{
    const mem_case c = cases[blockIdx.x];
    int n = gshmem_n_pes(), my = gshmem_my_pe();
    for (int i = 0; i < n; i++) {
        int pe = (my + 1 + i) % n;
        char *d = dst + (put ? (size_t)my : (size_t)pe) * slab + c.region + c.doff;
        mem_op(c, put, d, src + c.region + c.soff, pe);
    }
    gshmem_quiet();
}

static void test_mem(void)
{
    /* 288 .. 10256: whole 16-byte words past the short path, a thread's, a warp's and a
     * block's last one to three words a thread (copy_words' tail) */
    static const unsigned sizes[] = {1,    2,    3,    7,    15,   16,   17,   31,    32,   33,   63,
                                     64,   65,   127,  255,  256,  257,  288,  1000,  1040, 1536, 3120,
                                     4095, 4096, 4097, 10256, 65536 + 13};
    /* (dst, src) offsets modulo 16: equal (16-byte path, heads 0/9/1), both 4-aligned
     * but different (word path), neither (byte path). */
    static const unsigned offs[][2] = {{0, 0}, {7, 7}, {15, 15}, {4, 12}, {5, 13}};
    std::vector<mem_case> cases;
    size_t slab = 0;
    for (unsigned v = 0; v < V_COUNT; v++)
        for (unsigned s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
            for (unsigned o = 0; o < sizeof(offs) / sizeof(offs[0]); o++) {
                mem_case c = {sizes[s], offs[o][0], offs[o][1], v, slab, 0};
                c.span = ((size_t)c.size + 16 + 48 + 15) & ~(size_t)15;
                slab += c.span;
                cases.push_back(c);
            }
    size_t ncases = cases.size();

    char *src = (char *)gshmem_malloc(slab);
    char *pdst = (char *)gshmem_malloc((size_t)npes * slab);
    GPU_CHECK(src && pdst, "gshmem_malloc of %zu and %zu bytes failed", slab, (size_t)npes * slab);
    char *gdst;
    mem_case *dcases;
    GPU_CHECK_CUDA(cudaMalloc(&gdst, (size_t)npes * slab));
    GPU_CHECK_CUDA(cudaMalloc(&dcases, ncases * sizeof(mem_case)));
    GPU_CHECK_CUDA(cudaMemcpy(dcases, cases.data(), ncases * sizeof(mem_case), cudaMemcpyHostToDevice));

    std::vector<uint8_t> h(slab);
    for (size_t i = 0; i < slab; i++) h[i] = gpu_pat8(me, i, MEM_SALT);
    GPU_CHECK_CUDA(cudaMemcpy(src, h.data(), slab, cudaMemcpyHostToDevice));
    gpu_poison(pdst, (size_t)npes * slab);
    gpu_poison(gdst, (size_t)npes * slab);
    gshmem_barrier_all();

    mem_kernel<<<(unsigned)ncases, MEM_THREADS>>>(dcases, true, src, pdst, slab);
    GPU_CHECK_KERNEL();
    mem_kernel<<<(unsigned)ncases, MEM_THREADS>>>(dcases, false, src, gdst, slab);
    GPU_CHECK_KERNEL();
    gshmem_barrier_all();

    uint8_t *pgot = (uint8_t *)gpu_fetch(pdst, (size_t)npes * slab);
    uint8_t *ggot = (uint8_t *)gpu_fetch(gdst, (size_t)npes * slab);
    std::vector<uint8_t> expect(slab);
    size_t bad = 0;
    for (int pe = 0; pe < npes; pe++) {
        /* Slab pe of either buffer holds what PE pe's source had: its pattern. */
        memset(expect.data(), GPU_POISON, slab);
        for (const mem_case &c : cases)
            for (unsigned j = 0; j < c.size; j++) expect[c.region + c.doff + j] = gpu_pat8(pe, c.region + c.soff + j, MEM_SALT);
        for (int dir = 0; dir < 2; dir++) {
            const uint8_t *got = (dir == 0 ? pgot : ggot) + (size_t)pe * slab;
            for (const mem_case &c : cases) {
                if (memcmp(got + c.region, &expect[c.region], c.span) == 0) continue;
                char what[160];
                snprintf(what, sizeof(what), "%s %s, %u bytes, dst offset %u, src offset %u, %s PE %d (region byte 0 = dst - %u)",
                         dir == 0 ? "putmem" : "getmem", variant_names[c.variant], c.size, c.doff, c.soff,
                         dir == 0 ? "from" : "of", pe, c.doff);
                bad += gpu_cmp_bytes(what, got + c.region, &expect[c.region], c.span);
            }
        }
    }
    GPU_CHECK(bad == 0, "putmem/getmem: %zu bytes wrong", bad);
    free(pgot);
    free(ggot);
    GPU_CHECK_CUDA(cudaFree(gdst));
    GPU_CHECK_CUDA(cudaFree(dcases));
    gshmem_free(pdst);
    gshmem_free(src);
    if (me == 0) printf("putmem/getmem: %zu cases x %d PEs ok\n", ncases, npes);
}

/* ---- 2. Typed and sized RMA ---------------------------------------------------------- */

/* Every type's operations behind one name, so one kernel template covers them all. */
#define RMA_TYPED(T, N)                                                                                             \
    struct rma_##N {                                                                                                \
        typedef T type;                                                                                             \
        static constexpr bool sized = false;                                                                        \
        static const char *name() { return #N; }                                                                    \
        __device__ static void p(T *d, T v, int pe) { gshmem_##N##_p(d, v, pe); }                                   \
        __device__ static T g(const T *s, int pe) { return gshmem_##N##_g(s, pe); }                                 \
        __device__ static void put(T *d, const T *s, size_t n, int pe) { gshmem_##N##_put(d, s, n, pe); }           \
        __device__ static void get(T *d, const T *s, size_t n, int pe) { gshmem_##N##_get(d, s, n, pe); }           \
        __device__ static void put_nbi(T *d, const T *s, size_t n, int pe) { gshmem_##N##_put_nbi(d, s, n, pe); }   \
        __device__ static void get_nbi(T *d, const T *s, size_t n, int pe) { gshmem_##N##_get_nbi(d, s, n, pe); }   \
        __device__ static void iput(T *d, const T *s, ptrdiff_t ds, ptrdiff_t ss, size_t n, int pe)                \
        {                                                                                                           \
            gshmem_##N##_iput(d, s, ds, ss, n, pe);                                                                 \
        }                                                                                                           \
        __device__ static void iget(T *d, const T *s, ptrdiff_t ds, ptrdiff_t ss, size_t n, int pe)                \
        {                                                                                                           \
            gshmem_##N##_iget(d, s, ds, ss, n, pe);                                                                 \
        }                                                                                                           \
        __device__ static void put_warp(T *d, const T *s, size_t n, int pe) { gshmemx_##N##_put_warp(d, s, n, pe); } \
        __device__ static void get_warp(T *d, const T *s, size_t n, int pe) { gshmemx_##N##_get_warp(d, s, n, pe); } \
        __device__ static void put_nbi_warp(T *d, const T *s, size_t n, int pe)                                     \
        {                                                                                                           \
            gshmemx_##N##_put_nbi_warp(d, s, n, pe);                                                                \
        }                                                                                                           \
        __device__ static void get_nbi_warp(T *d, const T *s, size_t n, int pe)                                     \
        {                                                                                                           \
            gshmemx_##N##_get_nbi_warp(d, s, n, pe);                                                                \
        }                                                                                                           \
        __device__ static void iput_warp(T *d, const T *s, ptrdiff_t ds, ptrdiff_t ss, size_t n, int pe)           \
        {                                                                                                           \
            gshmemx_##N##_iput_warp(d, s, ds, ss, n, pe);                                                           \
        }                                                                                                           \
        __device__ static void iget_warp(T *d, const T *s, ptrdiff_t ds, ptrdiff_t ss, size_t n, int pe)           \
        {                                                                                                           \
            gshmemx_##N##_iget_warp(d, s, ds, ss, n, pe);                                                           \
        }                                                                                                           \
        __device__ static void put_block(T *d, const T *s, size_t n, int pe)                                        \
        {                                                                                                           \
            gshmemx_##N##_put_block(d, s, n, pe);                                                                   \
        }                                                                                                           \
        __device__ static void get_block(T *d, const T *s, size_t n, int pe)                                        \
        {                                                                                                           \
            gshmemx_##N##_get_block(d, s, n, pe);                                                                   \
        }                                                                                                           \
        __device__ static void put_nbi_block(T *d, const T *s, size_t n, int pe)                                    \
        {                                                                                                           \
            gshmemx_##N##_put_nbi_block(d, s, n, pe);                                                               \
        }                                                                                                           \
        __device__ static void get_nbi_block(T *d, const T *s, size_t n, int pe)                                    \
        {                                                                                                           \
            gshmemx_##N##_get_nbi_block(d, s, n, pe);                                                               \
        }                                                                                                           \
        __device__ static void iput_block(T *d, const T *s, ptrdiff_t ds, ptrdiff_t ss, size_t n, int pe)          \
        {                                                                                                           \
            gshmemx_##N##_iput_block(d, s, ds, ss, n, pe);                                                          \
        }                                                                                                           \
        __device__ static void iget_block(T *d, const T *s, ptrdiff_t ds, ptrdiff_t ss, size_t n, int pe)          \
        {                                                                                                           \
            gshmemx_##N##_iget_block(d, s, ds, ss, n, pe);                                                          \
        }                                                                                                           \
    };
RMA_TYPED(int, int)
RMA_TYPED(long, long)
RMA_TYPED(double, double)
RMA_TYPED(uint8_t, uint8)
RMA_TYPED(uint64_t, uint64)
RMA_TYPED(char, char)
RMA_TYPED(float, float)
RMA_TYPED(short, short)
#undef RMA_TYPED

/* Sized forms have no p/g and no group variants; the kernel never calls those here. */
#define RMA_SIZED(BITS, T)                                                                                          \
    struct rma_sized##BITS {                                                                                        \
        typedef T type;                                                                                             \
        static constexpr bool sized = true;                                                                         \
        static const char *name() { return "put" #BITS "/get" #BITS; }                                             \
        __device__ static void p(T *, T, int) { __trap(); }                                                         \
        __device__ static T g(const T *s, int) { __trap(); return *s; }                                             \
        __device__ static void put(T *d, const T *s, size_t n, int pe) { gshmem_put##BITS(d, s, n, pe); }           \
        __device__ static void get(T *d, const T *s, size_t n, int pe) { gshmem_get##BITS(d, s, n, pe); }           \
        __device__ static void put_nbi(T *d, const T *s, size_t n, int pe) { gshmem_put##BITS##_nbi(d, s, n, pe); } \
        __device__ static void get_nbi(T *d, const T *s, size_t n, int pe) { gshmem_get##BITS##_nbi(d, s, n, pe); } \
        __device__ static void iput(T *d, const T *s, ptrdiff_t ds, ptrdiff_t ss, size_t n, int pe)                \
        {                                                                                                           \
            gshmem_iput##BITS(d, s, ds, ss, n, pe);                                                                 \
        }                                                                                                           \
        __device__ static void iget(T *d, const T *s, ptrdiff_t ds, ptrdiff_t ss, size_t n, int pe)                \
        {                                                                                                           \
            gshmem_iget##BITS(d, s, ds, ss, n, pe);                                                                 \
        }                                                                                                           \
        __device__ static void put_warp(T *, const T *, size_t, int) { __trap(); }                                  \
        __device__ static void get_warp(T *, const T *, size_t, int) { __trap(); }                                  \
        __device__ static void put_nbi_warp(T *, const T *, size_t, int) { __trap(); }                              \
        __device__ static void get_nbi_warp(T *, const T *, size_t, int) { __trap(); }                              \
        __device__ static void iput_warp(T *, const T *, ptrdiff_t, ptrdiff_t, size_t, int) { __trap(); }           \
        __device__ static void iget_warp(T *, const T *, ptrdiff_t, ptrdiff_t, size_t, int) { __trap(); }           \
        __device__ static void put_block(T *, const T *, size_t, int) { __trap(); }                                 \
        __device__ static void get_block(T *, const T *, size_t, int) { __trap(); }                                 \
        __device__ static void put_nbi_block(T *, const T *, size_t, int) { __trap(); }                             \
        __device__ static void get_nbi_block(T *, const T *, size_t, int) { __trap(); }                             \
        __device__ static void iput_block(T *, const T *, ptrdiff_t, ptrdiff_t, size_t, int) { __trap(); }          \
        __device__ static void iget_block(T *, const T *, ptrdiff_t, ptrdiff_t, size_t, int) { __trap(); }          \
    };
RMA_SIZED(8, uint8_t)
RMA_SIZED(16, uint16_t)
RMA_SIZED(32, uint32_t)
RMA_SIZED(64, uint64_t)
RMA_SIZED(128, gpu_u128)
#undef RMA_SIZED

/* Operations: the first T_OPS write into the peer (put side), the next T_OPS read
 * from it into a local buffer (get side), in the same order. */
enum {
    T_ONE, /* p or g, one element per thread */
    T_CONTIG,
    T_CONTIG_NBI,
    T_STRIDED,
    T_CONTIG_WARP,
    T_CONTIG_NBI_WARP,
    T_STRIDED_WARP,
    T_CONTIG_BLOCK,
    T_CONTIG_NBI_BLOCK,
    T_STRIDED_BLOCK,
    T_OPS
};
static const char *const put_names[T_OPS] = {"p",        "put",          "put_nbi",    "iput",
                                             "put_warp", "put_nbi_warp", "iput_warp",  "put_block",
                                             "put_nbi_block", "iput_block"};
static const char *const get_names[T_OPS] = {"g",        "get",          "get_nbi",    "iget",
                                             "get_warp", "get_nbi_warp", "iget_warp",  "get_block",
                                             "get_nbi_block", "iget_block"};

#define T_SLOT 512      /* elements per (op, PE) slot */
#define T_DOFF 1        /* destination offset in the slot, elements */
#define T_SOFF 17       /* source offset: the same alignment mod 16 as T_DOFF for 1-byte types */
#define T_DSTRIDE 3
#define T_SSTRIDE 2
#define T_SALT 23u

__host__ __device__ inline bool t_group(int op) { return op >= T_CONTIG_WARP; }
__host__ __device__ inline bool t_strided(int op)
{
    return op == T_STRIDED || op == T_STRIDED_WARP || op == T_STRIDED_BLOCK;
}
/* Odd counts: 37 elements for one thread, 301 for a group; 17 for strided (or 150). */
__host__ __device__ inline size_t t_count(int op)
{
    return t_strided(op) ? (t_group(op) ? 150 : 17) : (t_group(op) ? 301 : 37);
}
__host__ __device__ inline bool t_supported(bool sized, int op) { return !sized || (op >= T_CONTIG && op <= T_STRIDED); }

template <class Tr>
__device__ void typed_op(int op, bool put, typename Tr::type *d, const typename Tr::type *s, int pe)
{
    bool warp0 = threadIdx.x < 32, t0 = threadIdx.x == 0;
    size_t n = t_count(op);
    switch (op) {
    case T_ONE:
        for (size_t j = threadIdx.x; j < n; j += blockDim.x) {
            if (put) Tr::p(d + j, s[j], pe);
            else d[j] = Tr::g(s + j, pe);
        }
        break;
    case T_CONTIG:
        if (t0) put ? Tr::put(d, s, n, pe) : Tr::get(d, s, n, pe);
        break;
    case T_CONTIG_NBI:
        if (t0) put ? Tr::put_nbi(d, s, n, pe) : Tr::get_nbi(d, s, n, pe);
        break;
    case T_STRIDED:
        if (t0) put ? Tr::iput(d, s, T_DSTRIDE, T_SSTRIDE, n, pe) : Tr::iget(d, s, T_DSTRIDE, T_SSTRIDE, n, pe);
        break;
    case T_CONTIG_WARP:
        if (warp0) put ? Tr::put_warp(d, s, n, pe) : Tr::get_warp(d, s, n, pe);
        break;
    case T_CONTIG_NBI_WARP:
        if (warp0) put ? Tr::put_nbi_warp(d, s, n, pe) : Tr::get_nbi_warp(d, s, n, pe);
        break;
    case T_STRIDED_WARP:
        if (warp0)
            put ? Tr::iput_warp(d, s, T_DSTRIDE, T_SSTRIDE, n, pe) : Tr::iget_warp(d, s, T_DSTRIDE, T_SSTRIDE, n, pe);
        break;
    case T_CONTIG_BLOCK: put ? Tr::put_block(d, s, n, pe) : Tr::get_block(d, s, n, pe); break;
    case T_CONTIG_NBI_BLOCK: put ? Tr::put_nbi_block(d, s, n, pe) : Tr::get_nbi_block(d, s, n, pe); break;
    default:
        put ? Tr::iput_block(d, s, T_DSTRIDE, T_SSTRIDE, n, pe) : Tr::iget_block(d, s, T_DSTRIDE, T_SSTRIDE, n, pe);
    }
}

/* Block b < T_OPS does put op b to every PE (into slot (b, me) of the peer's pdst);
 * block T_OPS + b does get op b from every PE (into slot (b, pe) of the local gdst). */
template <class Tr>
__global__ void typed_kernel(const typename Tr::type *src, typename Tr::type *pdst, typename Tr::type *gdst)
{
    int n = gshmem_n_pes(), my = gshmem_my_pe();
    bool put = blockIdx.x < T_OPS;
    int op = (int)(blockIdx.x % T_OPS);
    if (!t_supported(Tr::sized, op)) return;
    for (int i = 0; i < n; i++) {
        int pe = (my + 1 + i) % n;
        if (put) typed_op<Tr>(op, true, pdst + ((size_t)op * n + my) * T_SLOT + T_DOFF, src + T_SOFF, pe);
        else typed_op<Tr>(op, false, gdst + ((size_t)op * n + pe) * T_SLOT + T_DOFF, src + T_SOFF, pe);
        __syncthreads(); /* T_ONE: one thread's g results before the next PE (keeps races out) */
    }
    gshmem_quiet();
}

template <class Tr> static void test_typed(void)
{
    typedef typename Tr::type T;
    size_t slots = (size_t)T_OPS * npes * T_SLOT;
    T *src = (T *)gshmem_malloc(T_SLOT * sizeof(T));
    T *pdst = (T *)gshmem_malloc(slots * sizeof(T));
    GPU_CHECK(src && pdst, "%s: gshmem_malloc failed", Tr::name());
    T *gdst;
    GPU_CHECK_CUDA(cudaMalloc(&gdst, slots * sizeof(T)));
    std::vector<T> h(T_SLOT);
    for (size_t i = 0; i < T_SLOT; i++) h[i] = gpu_pat<T>(me, i, T_SALT + sizeof(T));
    GPU_CHECK_CUDA(cudaMemcpy(src, h.data(), T_SLOT * sizeof(T), cudaMemcpyHostToDevice));
    gpu_poison(pdst, slots * sizeof(T));
    gpu_poison(gdst, slots * sizeof(T));
    gshmem_barrier_all();

    typed_kernel<Tr><<<2 * T_OPS, 96>>>(src, pdst, gdst);
    GPU_CHECK_KERNEL();
    gshmem_barrier_all();

    T *pgot = (T *)gpu_fetch(pdst, slots * sizeof(T));
    T *ggot = (T *)gpu_fetch(gdst, slots * sizeof(T));
    std::vector<T> expect(T_SLOT);
    size_t bad = 0;
    for (int op = 0; op < T_OPS; op++)
        for (int pe = 0; pe < npes; pe++) {
            memset((void *)expect.data(), GPU_POISON, T_SLOT * sizeof(T));
            if (t_supported(Tr::sized, op)) {
                const size_t count = t_count(op);
                const size_t dstep = t_strided(op) ? T_DSTRIDE : 1, sstep = t_strided(op) ? T_SSTRIDE : 1;
                for (size_t j = 0; j < count; j++) {
                    T value = gpu_pat<T>(pe, T_SOFF + j * sstep, T_SALT + sizeof(T));
                    memcpy((void *)&expect[T_DOFF + j * dstep], (const void *)&value, sizeof(T));
                }
            }
            for (int dir = 0; dir < 2; dir++) {
                const T *got = (dir == 0 ? pgot : ggot) + ((size_t)op * npes + pe) * T_SLOT;
                if (memcmp((const void *)got, (const void *)expect.data(), T_SLOT * sizeof(T)) == 0) continue;
                char what[160];
                snprintf(what, sizeof(what), "%s %s %s PE %d (slot element 0 = dst - %d)", Tr::name(),
                         dir == 0 ? put_names[op] : get_names[op], dir == 0 ? "from" : "of", pe, T_DOFF);
                bad += gpu_cmp_elems(what, got, expect.data(), sizeof(T), T_SLOT);
            }
        }
    GPU_CHECK(bad == 0, "%s: %zu elements wrong", Tr::name(), bad);
    free(pgot);
    free(ggot);
    GPU_CHECK_CUDA(cudaFree(gdst));
    gshmem_free(pdst);
    gshmem_free(src);
    if (me == 0) printf("typed RMA %s ok\n", Tr::name());
}

int main(void)
{
    gpu_test_init("gpu_rma");
    me = gshmem_my_pe();
    npes = gshmem_n_pes();
    test_mem();
    test_typed<rma_int>();
    test_typed<rma_long>();
    test_typed<rma_double>();
    test_typed<rma_uint8>();
    test_typed<rma_uint64>();
    test_typed<rma_char>();
    test_typed<rma_float>();
    test_typed<rma_short>();
    test_typed<rma_sized8>();
    test_typed<rma_sized16>();
    test_typed<rma_sized32>();
    test_typed<rma_sized64>();
    test_typed<rma_sized128>();
    gpu_test_pass("gpu_rma");
    return 0;
}
