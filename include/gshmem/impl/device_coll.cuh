/* Inline device implementation, part 5: teams and collectives. Internal.
 *
 * Every collective moves data with plain (16-byte when aligned) loads and stores
 * through the members' mapped heaps and synchronizes with a dissemination barrier
 * over the team's words in the device heap's reserved area. The work functions take
 * (rank, size) of the threads sharing the work, so the cooperative forms and
 * libgshmem's multi-block on-stream kernels run the same code.
 *
 * Members the GPU cannot map (PROXY peers: another node, GSHMEM_DISABLE_P2P) are
 * reached through the proxy instead: a part's first thread posts the put, exchange or
 * get for the whole part, and the barriers' quiet completes them. Teams with such a
 * member reduce by chunks fetched into the threads' own memory. */
#ifndef GSHMEM_IMPL_DEVICE_COLL_CUH
#define GSHMEM_IMPL_DEVICE_COLL_CUH

#include <gshmem/impl/device_sync.cuh>
#include <gshmem/status.h>
#include <gshmem/team.h>

namespace gshmemi {

/* A team as this PE sees it: member i is world PE start + i * stride; me is our index. */
struct team_view {
    int start, stride, size, me;
    __device__ __forceinline__ int pe(int i) const { return start + i * stride; }
};

__device__ __forceinline__ bool team_lookup(gshmem_team_t team, team_view *t)
{
    if ((unsigned)team >= GSHMEMI_TEAMS_LIMIT) return false;
    const gshmemi_device_team d = gshmemi_dstate.teams[team];
    *t = team_view{d.start, d.stride, d.size, d.my_index};
    return d.size > 0 && d.my_index >= 0;
}

/* Every member's heap is on this GPU: GPU-scope releases then order everything a
 * collective stored, and no system-scope fence is needed before its barrier. */
__device__ __forceinline__ bool team_on_one_gpu(const team_view &t)
{
    for (int i = 0; i < t.size; i++)
        if (!same_gpu(t.pe(i))) return false;
    return true;
}

/* Some member is reached through the proxy (its heap is not mapped here). */
__device__ __forceinline__ bool team_has_proxy(const team_view &t)
{
    for (int i = 0; i < t.size; i++)
        if (peer_base(t.pe(i)) == 0) return true;
    return false;
}

/* Thread 0's value for the whole group. */
template <int S> __device__ __forceinline__ uint64_t scope_broadcast(uint64_t v)
{
    if (S == SCOPE_WARP) return __shfl_sync(0xffffffffu, v, 0);
    if (S == SCOPE_BLOCK) {
        __shared__ uint64_t slot;
        if (block_rank() == 0) slot = v;
        __syncthreads();
        v = slot;
        __syncthreads();
    }
    return v;
}

/* n bytes from local src to dest (a symmetric address) on pe, by (rank, size): loads
 * and stores through the mapping, or one non-blocking proxy put by rank 0. */
__device__ __forceinline__ void copy_to(int pe, char *dest, const char *src, size_t n, unsigned rank, unsigned size)
{
    if (peer_base(pe) == 0) {
        if (rank == 0) proxy_rma<SCOPE_THREAD>(GSHMEMI_PROXY_PUT, true, dest, src, n, pe);
        return;
    }
    copy(peer(dest, pe), src, n, rank, size);
}

__device__ __noinline__ inline void report_bad_team(const char *fn, int team)
{
    printf("gshmem: PE %d: %s: team %d is not a team of this PE (GSHMEM_TEAM_INVALID, destroyed, never created, "
           "or PE %d is not a member)\n", gshmemi_dstate.my_pe, fn, team, gshmemi_dstate.my_pe);
}

__device__ __noinline__ inline void report_bad_root(const char *fn, int team, int root, int size)
{
    printf("gshmem: PE %d: %s: PE_root=%d is not a PE of team %d (%d PEs)\n", gshmemi_dstate.my_pe, fn, root, team,
           size);
}

/* The team's view, or false after the group's first thread has said why. */
template <int S> __device__ __forceinline__ bool team_enter(gshmem_team_t team, team_view *t, const char *fn)
{
    if (team_lookup(team, t)) return true;
    if (scope_rank<S>() == 0) report_bad_team(fn, team);
    return false;
}

__device__ __forceinline__ gshmemi_team_sync_words *team_words(gshmem_team_t team)
{
    return &((gshmemi_device_sync_area *)gshmemi_dstate.heap_base)->teams[team];
}

/* Dissemination barrier over the team by one thread: in round r member i adds 1 to
 * flags[r] of member i + 2^r and waits for its own flags[r] to reach the epoch. The
 * epoch lives in our own words, so device-API and on-stream collectives on a team
 * continue each other's count. Past GSHMEM_TIMEOUT it reports who it waited for and
 * traps. */
__device__ __forceinline__ void team_barrier(gshmem_team_t team, const team_view &t)
{
    gshmemi_team_sync_words *mine = team_words(team);
    volatile unsigned long long *epoch_word = (volatile unsigned long long *)&mine->epoch;
    unsigned long long epoch = *epoch_word + 1;
    *epoch_word = epoch; /* volatile: another SM may run this team's next barrier */
    int rounds = 0;
    for (int dist = 1; dist < t.size; dist <<= 1) rounds++;
    for (int dist = 1, round = 0; dist < t.size; dist <<= 1, round++) {
        int to_pe = t.pe((t.me + dist) % t.size);
        barrier_arrive(&mine->flags[round], to_pe);
        const volatile unsigned long long *flag = (const volatile unsigned long long *)&mine->flags[round];
        poll_until(flag, [&](unsigned long long x) { return x >= epoch; }, [&]() {
            wait_barrier_slow(flag, epoch, team, round, rounds, t.pe((t.me - dist % t.size + t.size) % t.size));
            return epoch;
        });
        poll_acquired(flag);
    }
}

/* The group meets, its first thread completes the group's puts (complete) and runs
 * the team barrier, and the group leaves together. */
template <int S>
__device__ __forceinline__ void team_sync_group(gshmem_team_t team, const team_view &t, bool complete)
{
    scope_sync<S>();
    if (scope_rank<S>() == 0) {
        if (complete) quiet();
        team_barrier(team, t);
    }
    scope_sync<S>();
}

/* Work of `count` independent items (usually one per member) over a group of `size`
 * threads: up to `count` contiguous parts of at least a warp each, part k taking items
 * k, k + parts, ...; copies to several PEs then proceed side by side instead of one
 * after another, and a group of one warp (or a single item) works as one part. */
struct parts {
    unsigned first, step, rank, size;
};
__device__ __forceinline__ parts split_parts(unsigned count, unsigned rank, unsigned size)
{
    unsigned n = size >= 64 ? min(count, size / 32) : 1;
    if (n == 0) n = 1;
    unsigned k = (unsigned)((unsigned long long)rank * n / size);
    unsigned lo = (unsigned)(((unsigned long long)k * size + n - 1) / n);
    unsigned hi = (unsigned)(((unsigned long long)(k + 1) * size + n - 1) / n);
    return parts{k, n, rank - lo, hi - lo};
}

/* Item k of a push to every member: member (me + 1 + k) % n, so PEs start on different
 * peers and each one's own block comes last. */
__device__ __forceinline__ int push_target(const team_view &t, unsigned k)
{
    return (int)((t.me + 1 + k) % (unsigned)t.size);
}

/* ---- Data movement (no synchronization) ------------------------------------------------- */

__device__ __forceinline__ void alltoall_push(const team_view &t, char *dest, const char *source, size_t nbytes,
                                              unsigned rank, unsigned size)
{
    parts p = split_parts(t.size, rank, size);
    for (unsigned k = p.first; k < (unsigned)t.size; k += p.step) {
        int j = push_target(t, k);
        copy_to(t.pe(j), dest + (size_t)t.me * nbytes, source + (size_t)j * nbytes, nbytes, p.rank, p.size);
    }
}

/* Destination block j of every member gets source; fcollect (j = me) and broadcast. */
__device__ __forceinline__ void push_all(const team_view &t, char *dest, const char *source, size_t nbytes,
                                         unsigned rank, unsigned size)
{
    parts p = split_parts(t.size, rank, size);
    for (unsigned k = p.first; k < (unsigned)t.size; k += p.step)
        copy_to(t.pe(push_target(t, k)), dest, source, nbytes, p.rank, p.size);
}

template <typename W> __device__ __forceinline__ void swap_words(W *a, W *b, size_t words, unsigned rank, unsigned size)
{
    size_t i = rank;
    for (; i + size < words; i += 2 * (size_t)size) { /* two pairs in flight */
        W a0 = a[i], b0 = b[i], a1 = a[i + size], b1 = b[i + size];
        a[i] = b0, b[i] = a0, a[i + size] = b1, b[i + size] = a1;
    }
    for (; i < words; i += size) {
        W x = a[i], y = b[i];
        a[i] = y, b[i] = x;
    }
}

/* Exchanges n bytes between a and b, as copy() splits them. */
__device__ __forceinline__ void swap(char *a, char *b, size_t n, unsigned rank, unsigned size)
{
    uintptr_t rel = (uintptr_t)a ^ (uintptr_t)b;
    size_t word = (rel & 15) == 0 ? 16 : (rel & 7) == 0 ? 8 : (rel & 3) == 0 ? 4 : 1;
    size_t head = (word - ((uintptr_t)a & (word - 1))) & (word - 1);
    if (head > n) head = n;
    size_t body = (n - head) / word, tail = head + body * word;
    if (rank == 0) {
        for (size_t i = 0; i < head; i++) { char x = a[i]; a[i] = b[i]; b[i] = x; }
        for (size_t i = tail; i < n; i++) { char x = a[i]; a[i] = b[i]; b[i] = x; }
    }
    a += head, b += head;
    if (word == 16) swap_words((int4 *)a, (int4 *)b, body, rank, size);
    else if (word == 8) swap_words((unsigned long long *)a, (unsigned long long *)b, body, rank, size);
    else if (word == 4) swap_words((unsigned *)a, (unsigned *)b, body, rank, size);
    else swap_words(a, b, body, rank, size);
}

/* In-place alltoall after an entry barrier: the pair {i, j} is exchanged by i when
 * (j - i) mod n is 1 .. n/2 - 1, so every byte moves once. At distance exactly n/2
 * (even n) both ends qualify and split the blocks: the lower member swaps the first
 * half, the upper one the rest (two PEs thus share their only pair). */
__device__ __forceinline__ void alltoall_swap(const team_view &t, char *dest, size_t nbytes, unsigned rank,
                                              unsigned size)
{
    unsigned pairs = (unsigned)t.size / 2;
    parts p = split_parts(pairs, rank, size);
    for (unsigned k = p.first; k < pairs; k += p.step) {
        int j = (t.me + 1 + (int)k) % t.size;
        size_t lo = 0, hi = nbytes, half = (nbytes / 2) & ~(size_t)15;
        if (2 * (k + 1) == (unsigned)t.size) {
            if (t.me < j) hi = half;
            else lo = half;
        }
        char *mine = dest + (size_t)j * nbytes + lo, *theirs = dest + (size_t)t.me * nbytes + lo;
        if (peer_base(t.pe(j)) == 0) {
            if (p.rank == 0) proxy_exchange(mine, theirs, hi - lo, t.pe(j));
        } else {
            swap(mine, peer(theirs, t.pe(j)), hi - lo, p.rank, p.size);
        }
    }
}

/* Collect: where this PE's block starts (the sizes members published before the barrier). */
__device__ __forceinline__ size_t collect_offset(gshmem_team_t team, const team_view &t)
{
    gshmemi_team_sync_words *mine = team_words(team);
    size_t offset = 0;
    for (int k = 0; k < t.me; k++)
        offset += peer_base(t.pe(k)) == 0 ? proxy_g(&mine->published, sizeof(uint64_t), t.pe(k))
                                          : *(const volatile uint64_t *)&peer(mine, t.pe(k))->published;
    return offset;
}

template <typename T>
__device__ __forceinline__ void alltoalls_push(const team_view &t, T *dest, const T *source, ptrdiff_t dst,
                                               ptrdiff_t sst, size_t nelems, unsigned rank, unsigned size)
{
    parts p = split_parts(t.size, rank, size);
    for (unsigned k = p.first; k < (unsigned)t.size; k += p.step) {
        int j = push_target(t, k);
        T *to = dest + (ptrdiff_t)((size_t)t.me * nelems) * dst;
        const T *from = source + (ptrdiff_t)((size_t)j * nelems) * sst;
        if (peer_base(t.pe(j)) == 0) {
            if (p.rank == 0)
                proxy_strided<SCOPE_THREAD>(GSHMEMI_PROXY_IPUT, to, dst * (ptrdiff_t)sizeof(T), from,
                                            sst * (ptrdiff_t)sizeof(T), sizeof(T), nelems, t.pe(j));
        } else {
            strided(peer(to, t.pe(j)), dst, from, sst, nelems, p.rank, p.size);
        }
    }
}

/* ---- Reductions ------------------------------------------------------------------------------ */

template <typename T> struct op_and { __device__ static T apply(T a, T b) { return (T)(a & b); } };
template <typename T> struct op_or { __device__ static T apply(T a, T b) { return (T)(a | b); } };
template <typename T> struct op_xor { __device__ static T apply(T a, T b) { return (T)(a ^ b); } };
template <typename T> struct op_max { __device__ static T apply(T a, T b) { return a < b ? b : a; } };
template <typename T> struct op_min { __device__ static T apply(T a, T b) { return b < a ? b : a; } };
template <typename T> struct op_sum { __device__ static T apply(T a, T b) { return (T)(a + b); } };
template <typename T> struct op_prod { __device__ static T apply(T a, T b) { return (T)(a * b); } };

/* 16 bytes of T, moved as one vector access. */
template <typename T> union pack {
    int4 raw;
    T v[16 / sizeof(T)];
};

template <typename T, typename Op> __device__ __forceinline__ T combine(T a, T b) { return Op::apply(a, b); }
template <typename T, typename Op> __device__ __forceinline__ pack<T> combine(pack<T> a, pack<T> b)
{
#pragma unroll
    for (unsigned k = 0; k < 16 / sizeof(T); k++) a.v[k] = Op::apply(a.v[k], b.v[k]);
    return a;
}
template <typename T> __device__ __forceinline__ T load_unit(const T *p) { return *p; }
template <typename T> __device__ __forceinline__ pack<T> load_unit(const pack<T> *p)
{
    pack<T> u;
    u.raw = *(const int4 *)p;
    return u;
}
template <typename T> __device__ __forceinline__ void store_unit(T *p, T v) { *p = v; }
template <typename T> __device__ __forceinline__ void store_unit(pack<T> *p, pack<T> v) { *(int4 *)p = v.raw; }

/* Member me reduces units [count * me / n, count * (me + 1) / n) of every member's
 * source, in team order (the same bits on every PE), and stores the result into every
 * member's dest. Only this PE's group touches those units anywhere, so dest == source
 * needs no scratch: each unit is read everywhere before it is written anywhere. */
template <typename T, typename Op, typename U>
__device__ __forceinline__ void reduce_units(const team_view &t, U *dest, const U *source, size_t count,
                                             unsigned rank, unsigned size)
{
    size_t lo = count * (size_t)t.me / (size_t)t.size, hi = count * (size_t)(t.me + 1) / (size_t)t.size;
    for (size_t u = lo + rank; u < hi; u += size) {
        U acc = load_unit(peer(source, t.pe(0)) + u);
        for (int m = 1; m < t.size; m++) acc = combine<T, Op>(acc, load_unit(peer(source, t.pe(m)) + u));
        for (int m = 0; m < t.size; m++) store_unit(peer(dest, t.pe(m)) + u, acc);
    }
}

/* After an entry barrier; 16-byte units when dest and source allow, the tail by elements. */
template <typename T, typename Op>
__device__ __forceinline__ void reduce_slice(const team_view &t, T *dest, const T *source, size_t nreduce,
                                             unsigned rank, unsigned size)
{
    size_t done = 0;
    if ((((uintptr_t)dest | (uintptr_t)source) & 15) == 0) {
        size_t packs = nreduce * sizeof(T) / 16;
        reduce_units<T, Op>(t, (pack<T> *)dest, (const pack<T> *)source, packs, rank, size);
        done = packs * (16 / sizeof(T));
    }
    reduce_units<T, Op>(t, dest + done, source + done, nreduce - done, rank, size);
}

/* Teams with PROXY members: this PE's slice in chunks of up to 256 bytes per thread,
 * every member's part fetched into the thread's memory (through the proxy where not
 * mapped), combined in team order, and stored to every member. */
template <typename T>
__device__ __forceinline__ void proxy_or_load(int pe, const T *sym, T *out, unsigned m)
{
    if (peer_base(pe) == 0) {
        proxy_data_rma(GSHMEMI_PROXY_GET, sym, (char *)out, m * sizeof(T), pe, NULL);
        return;
    }
    const volatile T *from = peer(sym, pe);
    for (unsigned i = 0; i < m; i++) out[i] = from[i];
}

template <typename T, typename Op>
__device__ __noinline__ void reduce_slice_proxy(const team_view &t, T *dest, const T *source, size_t nreduce,
                                                unsigned rank, unsigned size)
{
    const unsigned CH = sizeof(T) >= 256 ? 1 : 256 / sizeof(T);
    size_t lo = nreduce * (size_t)t.me / (size_t)t.size, hi = nreduce * (size_t)(t.me + 1) / (size_t)t.size;
    T acc[CH], part[CH];
    for (size_t c = lo + (size_t)rank * CH; c < hi; c += (size_t)size * CH) {
        unsigned m = hi - c < CH ? (unsigned)(hi - c) : CH;
        proxy_or_load(t.pe(0), source + c, acc, m);
        for (int k = 1; k < t.size; k++) {
            proxy_or_load(t.pe(k), source + c, part, m);
            for (unsigned i = 0; i < m; i++) acc[i] = Op::apply(acc[i], part[i]);
        }
        for (int k = 0; k < t.size; k++) {
            int pe = t.pe(k);
            if (peer_base(pe) == 0) {
                proxy_data_rma(GSHMEMI_PROXY_PUT, dest + c, (char *)acc, m * sizeof(T), pe, NULL);
            } else {
                volatile T *to = peer(dest + c, pe);
                for (unsigned i = 0; i < m; i++) to[i] = acc[i];
            }
        }
    }
}

/* ---- Collectives for a thread, a warp or a block --------------------------------------------- */

template <int S> __device__ __forceinline__ int team_sync(gshmem_team_t team, bool complete, const char *fn)
{
    team_view t;
    if (!team_enter<S>(team, &t, fn)) return GSHMEMX_ERR_INVALID_ARG;
    team_sync_group<S>(team, t, complete);
    return 0;
}

/* Out of place: push and one barrier. In place: entry barrier, swap, exit barrier. */
template <int S>
__device__ __forceinline__ int alltoallmem(gshmem_team_t team, void *dest, const void *source, size_t nbytes,
                                           const char *fn)
{
    team_view t;
    if (!team_enter<S>(team, &t, fn)) return GSHMEMX_ERR_INVALID_ARG;
    if (nbytes == 0) return 0;
    if (dest == source) {
        team_sync_group<S>(team, t, false);
        alltoall_swap(t, (char *)dest, nbytes, scope_rank<S>(), scope_size<S>());
    } else {
        alltoall_push(t, (char *)dest, (const char *)source, nbytes, scope_rank<S>(), scope_size<S>());
    }
    team_sync_group<S>(team, t, true);
    return 0;
}

template <int S>
__device__ __forceinline__ int fcollectmem(gshmem_team_t team, void *dest, const void *source, size_t nbytes,
                                           const char *fn)
{
    team_view t;
    if (!team_enter<S>(team, &t, fn)) return GSHMEMX_ERR_INVALID_ARG;
    if (nbytes == 0) return 0;
    push_all(t, (char *)dest + (size_t)t.me * nbytes, (const char *)source, nbytes, scope_rank<S>(),
             scope_size<S>());
    team_sync_group<S>(team, t, true);
    return 0;
}

/* The root pushes and every member meets once: one barrier instead of the two a pull
 * needs (root's source ready; root's source free again), and every byte leaves the
 * root's memory either way, so pulling would not spread the load on the root's links. */
template <int S>
__device__ __forceinline__ int broadcastmem(gshmem_team_t team, void *dest, const void *source, size_t nbytes,
                                            int root, const char *fn)
{
    team_view t;
    if (!team_enter<S>(team, &t, fn)) return GSHMEMX_ERR_INVALID_ARG;
    if (root < 0 || root >= t.size) {
        if (scope_rank<S>() == 0) report_bad_root(fn, team, root, t.size);
        return GSHMEMX_ERR_INVALID_ARG;
    }
    if (nbytes == 0) return 0;
    if (t.me == root) push_all(t, (char *)dest, (const char *)source, nbytes, scope_rank<S>(), scope_size<S>());
    team_sync_group<S>(team, t, t.me == root);
    return 0;
}

/* Members publish their sizes, meet, push at the prefix sum of the sizes before them,
 * and meet again. The published word is read before the second barrier, so nobody
 * overwrites it (next collect) while another member still needs it. */
template <int S>
__device__ __forceinline__ int collectmem(gshmem_team_t team, void *dest, const void *source, size_t nbytes,
                                          const char *fn)
{
    team_view t;
    if (!team_enter<S>(team, &t, fn)) return GSHMEMX_ERR_INVALID_ARG;
    if (scope_rank<S>() == 0) *(volatile uint64_t *)&team_words(team)->published = nbytes;
    team_sync_group<S>(team, t, false);
    size_t offset;
    if (team_has_proxy(t)) /* one thread asks the proxy, the group shares the answer */
        offset = (size_t)scope_broadcast<S>(scope_rank<S>() == 0 ? collect_offset(team, t) : 0);
    else
        offset = collect_offset(team, t);
    push_all(t, (char *)dest + offset, (const char *)source, nbytes, scope_rank<S>(), scope_size<S>());
    team_sync_group<S>(team, t, true);
    return 0;
}

template <int S, typename T>
__device__ __forceinline__ int alltoalls(gshmem_team_t team, T *dest, const T *source, ptrdiff_t dst, ptrdiff_t sst,
                                         size_t nelems, const char *fn)
{
    team_view t;
    if (!team_enter<S>(team, &t, fn)) return GSHMEMX_ERR_INVALID_ARG;
    if (nelems == 0) return 0;
    alltoalls_push(t, dest, source, dst, sst, nelems, scope_rank<S>(), scope_size<S>());
    team_sync_group<S>(team, t, true);
    return 0;
}

/* Entry barrier (every source ready), the slice, exit barrier (every dest complete,
 * every source free). */
template <int S, typename T, typename Op>
__device__ __forceinline__ int reduce(gshmem_team_t team, T *dest, const T *source, size_t nreduce, const char *fn)
{
    team_view t;
    if (!team_enter<S>(team, &t, fn)) return GSHMEMX_ERR_INVALID_ARG;
    if (nreduce == 0) return 0;
    team_sync_group<S>(team, t, false);
    if (team_has_proxy(t))
        reduce_slice_proxy<T, Op>(t, dest, source, nreduce, scope_rank<S>(), scope_size<S>());
    else
        reduce_slice<T, Op>(t, dest, source, nreduce, scope_rank<S>(), scope_size<S>());
    team_sync_group<S>(team, t, true);
    return 0;
}

} /* namespace gshmemi */

/* ---- Names shared with the host API: device versions exist only in the device pass. */
#ifdef __CUDA_ARCH__
GSHMEMI_DEVICE_INLINE int gshmem_team_my_pe(gshmem_team_t team)
{
    gshmemi::team_view t;
    return gshmemi::team_lookup(team, &t) ? t.me : -1;
}
GSHMEMI_DEVICE_INLINE int gshmem_team_n_pes(gshmem_team_t team)
{
    gshmemi::team_view t;
    return gshmemi::team_lookup(team, &t) ? t.size : -1;
}
GSHMEMI_DEVICE_INLINE int gshmem_team_translate_pe(gshmem_team_t src_team, int src_pe, gshmem_team_t dest_team)
{
    gshmemi::team_view s, d;
    if (!gshmemi::team_lookup(src_team, &s) || !gshmemi::team_lookup(dest_team, &d)) return -1;
    if (src_pe < 0 || src_pe >= s.size) return -1;
    int diff = s.pe(src_pe) - d.start;
    if (diff < 0 || diff % d.stride != 0 || diff / d.stride >= d.size) return -1;
    return diff / d.stride;
}
#endif

/* The collectives of one scope: PREFIX gshmem_ with an empty SUFFIX for the thread
 * forms (the host API's names, device pass only), gshmemx_ with _warp or _block for
 * the cooperative ones. Each passes its own name for messages. */
#define GSHMEMI_DEVICE_COLL_SCOPE(PREFIX, SUFFIX, S)                                                            \
    GSHMEMI_DEVICE_INLINE int PREFIX##team_sync##SUFFIX(gshmem_team_t team)                                     \
    {                                                                                                           \
        return gshmemi::team_sync<S>(team, false, #PREFIX "team_sync" #SUFFIX);                                  \
    }                                                                                                           \
    GSHMEMI_DEVICE_INLINE int PREFIX##sync##SUFFIX(gshmem_team_t team)                                          \
    {                                                                                                           \
        return gshmemi::team_sync<S>(team, false, #PREFIX "sync" #SUFFIX);                                       \
    }                                                                                                           \
    GSHMEMI_DEVICE_INLINE int PREFIX##barrier##SUFFIX(gshmem_team_t team)                                       \
    {                                                                                                           \
        return gshmemi::team_sync<S>(team, true, #PREFIX "barrier" #SUFFIX);                                     \
    }                                                                                                           \
    GSHMEMI_DEVICE_INLINE int PREFIX##broadcastmem##SUFFIX(gshmem_team_t team, void *dest, const void *source,   \
                                                           size_t nelems, int PE_root)                          \
    {                                                                                                           \
        return gshmemi::broadcastmem<S>(team, dest, source, nelems, PE_root, #PREFIX "broadcastmem" #SUFFIX);    \
    }                                                                                                           \
    GSHMEMI_DEVICE_INLINE int PREFIX##collectmem##SUFFIX(gshmem_team_t team, void *dest, const void *source,     \
                                                         size_t nelems)                                         \
    {                                                                                                           \
        return gshmemi::collectmem<S>(team, dest, source, nelems, #PREFIX "collectmem" #SUFFIX);                 \
    }                                                                                                           \
    GSHMEMI_DEVICE_INLINE int PREFIX##fcollectmem##SUFFIX(gshmem_team_t team, void *dest, const void *source,    \
                                                          size_t nelems)                                        \
    {                                                                                                           \
        return gshmemi::fcollectmem<S>(team, dest, source, nelems, #PREFIX "fcollectmem" #SUFFIX);               \
    }                                                                                                           \
    GSHMEMI_DEVICE_INLINE int PREFIX##alltoallmem##SUFFIX(gshmem_team_t team, void *dest, const void *source,    \
                                                          size_t nelems)                                        \
    {                                                                                                           \
        return gshmemi::alltoallmem<S>(team, dest, source, nelems, #PREFIX "alltoallmem" #SUFFIX);               \
    }                                                                                                           \
    GSHMEMI_DEVICE_INLINE int PREFIX##alltoallsmem##SUFFIX(gshmem_team_t team, void *dest, const void *source,   \
                                                           ptrdiff_t dst, ptrdiff_t sst, size_t nelems)         \
    {                                                                                                           \
        return gshmemi::alltoalls<S>(team, (char *)dest, (const char *)source, dst, sst, nelems,                 \
                                     #PREFIX "alltoallsmem" #SUFFIX);                                           \
    }

/* Typed forms: sizes and strides count elements of T. */
#define GSHMEMI_DEVICE_COLL_TYPED_SCOPE(T, N, PREFIX, SUFFIX, S)                                                \
    GSHMEMI_DEVICE_INLINE int PREFIX##N##_broadcast##SUFFIX(gshmem_team_t team, T *dest, const T *source,        \
                                                            size_t nelems, int PE_root)                         \
    {                                                                                                           \
        return gshmemi::broadcastmem<S>(team, dest, source, nelems * sizeof(T), PE_root,                        \
                                        #PREFIX #N "_broadcast" #SUFFIX);                                       \
    }                                                                                                           \
    GSHMEMI_DEVICE_INLINE int PREFIX##N##_collect##SUFFIX(gshmem_team_t team, T *dest, const T *source,          \
                                                          size_t nelems)                                        \
    {                                                                                                           \
        return gshmemi::collectmem<S>(team, dest, source, nelems * sizeof(T), #PREFIX #N "_collect" #SUFFIX);    \
    }                                                                                                           \
    GSHMEMI_DEVICE_INLINE int PREFIX##N##_fcollect##SUFFIX(gshmem_team_t team, T *dest, const T *source,         \
                                                           size_t nelems)                                       \
    {                                                                                                           \
        return gshmemi::fcollectmem<S>(team, dest, source, nelems * sizeof(T), #PREFIX #N "_fcollect" #SUFFIX);  \
    }                                                                                                           \
    GSHMEMI_DEVICE_INLINE int PREFIX##N##_alltoall##SUFFIX(gshmem_team_t team, T *dest, const T *source,         \
                                                           size_t nelems)                                       \
    {                                                                                                           \
        return gshmemi::alltoallmem<S>(team, dest, source, nelems * sizeof(T), #PREFIX #N "_alltoall" #SUFFIX);  \
    }                                                                                                           \
    GSHMEMI_DEVICE_INLINE int PREFIX##N##_alltoalls##SUFFIX(gshmem_team_t team, T *dest, const T *source,        \
                                                            ptrdiff_t dst, ptrdiff_t sst, size_t nelems)        \
    {                                                                                                           \
        return gshmemi::alltoalls<S>(team, dest, source, dst, sst, nelems, #PREFIX #N "_alltoalls" #SUFFIX);     \
    }

#define GSHMEMI_DEVICE_REDUCE_SCOPE(T, N, OP, PREFIX, SUFFIX, S)                                                \
    GSHMEMI_DEVICE_INLINE int PREFIX##N##_##OP##_reduce##SUFFIX(gshmem_team_t team, T *dest, const T *source,    \
                                                                size_t nreduce)                                 \
    {                                                                                                           \
        return gshmemi::reduce<S, T, gshmemi::op_##OP<T> >(team, dest, source, nreduce,                          \
                                                           #PREFIX #N "_" #OP "_reduce" #SUFFIX);               \
    }

#ifdef __CUDA_ARCH__
GSHMEMI_DEVICE_COLL_SCOPE(gshmem_, , gshmemi::SCOPE_THREAD)
#define GSHMEMI_DEVICE_COLL_TYPED_THREAD(T, N) GSHMEMI_DEVICE_COLL_TYPED_SCOPE(T, N, gshmem_, , gshmemi::SCOPE_THREAD)
#define GSHMEMI_DEVICE_REDUCE_THREAD(T, N, OP) GSHMEMI_DEVICE_REDUCE_SCOPE(T, N, OP, gshmem_, , gshmemi::SCOPE_THREAD)
#else
#define GSHMEMI_DEVICE_COLL_TYPED_THREAD(T, N)
#define GSHMEMI_DEVICE_REDUCE_THREAD(T, N, OP)
#endif
GSHMEMI_DEVICE_COLL_SCOPE(gshmemx_, _warp, gshmemi::SCOPE_WARP)
GSHMEMI_DEVICE_COLL_SCOPE(gshmemx_, _block, gshmemi::SCOPE_BLOCK)

#define GSHMEMI_DEVICE_COLL_TYPED(T, N)                                                                         \
    GSHMEMI_DEVICE_COLL_TYPED_THREAD(T, N)                                                                      \
    GSHMEMI_DEVICE_COLL_TYPED_SCOPE(T, N, gshmemx_, _warp, gshmemi::SCOPE_WARP)                                 \
    GSHMEMI_DEVICE_COLL_TYPED_SCOPE(T, N, gshmemx_, _block, gshmemi::SCOPE_BLOCK)
GSHMEM_RMA_DEVICE_TYPES(GSHMEMI_DEVICE_COLL_TYPED)

#define GSHMEMI_DEVICE_REDUCE_T(T, N, OP)                                                                       \
    GSHMEMI_DEVICE_REDUCE_THREAD(T, N, OP)                                                                      \
    GSHMEMI_DEVICE_REDUCE_SCOPE(T, N, OP, gshmemx_, _warp, gshmemi::SCOPE_WARP)                                 \
    GSHMEMI_DEVICE_REDUCE_SCOPE(T, N, OP, gshmemx_, _block, gshmemi::SCOPE_BLOCK)
#define GSHMEMI_DEVICE_REDUCE_and(T, N) GSHMEMI_DEVICE_REDUCE_T(T, N, and)
#define GSHMEMI_DEVICE_REDUCE_or(T, N) GSHMEMI_DEVICE_REDUCE_T(T, N, or)
#define GSHMEMI_DEVICE_REDUCE_xor(T, N) GSHMEMI_DEVICE_REDUCE_T(T, N, xor)
#define GSHMEMI_DEVICE_REDUCE_max(T, N) GSHMEMI_DEVICE_REDUCE_T(T, N, max)
#define GSHMEMI_DEVICE_REDUCE_min(T, N) GSHMEMI_DEVICE_REDUCE_T(T, N, min)
#define GSHMEMI_DEVICE_REDUCE_sum(T, N) GSHMEMI_DEVICE_REDUCE_T(T, N, sum)
#define GSHMEMI_DEVICE_REDUCE_prod(T, N) GSHMEMI_DEVICE_REDUCE_T(T, N, prod)
#define GSHMEMI_DEVICE_REDUCE_OP(OP, TYPES) TYPES(GSHMEMI_DEVICE_REDUCE_##OP)
GSHMEM_REDUCE_OPS(GSHMEMI_DEVICE_REDUCE_OP)

#undef GSHMEMI_DEVICE_REDUCE_OP
#undef GSHMEMI_DEVICE_REDUCE_and
#undef GSHMEMI_DEVICE_REDUCE_or
#undef GSHMEMI_DEVICE_REDUCE_xor
#undef GSHMEMI_DEVICE_REDUCE_max
#undef GSHMEMI_DEVICE_REDUCE_min
#undef GSHMEMI_DEVICE_REDUCE_sum
#undef GSHMEMI_DEVICE_REDUCE_prod
#undef GSHMEMI_DEVICE_REDUCE_T
#undef GSHMEMI_DEVICE_COLL_TYPED
#undef GSHMEMI_DEVICE_REDUCE_THREAD
#undef GSHMEMI_DEVICE_COLL_TYPED_THREAD
#undef GSHMEMI_DEVICE_REDUCE_SCOPE
#undef GSHMEMI_DEVICE_COLL_TYPED_SCOPE
#undef GSHMEMI_DEVICE_COLL_SCOPE

#endif
