/*
 * Host collectives: broadcast, collect, fcollect, alltoall(s), and the data mover
 * and private buffers they share with the reductions (coll_reduce.c).
 *
 * Data is pushed: a PE writes its own source into the members' dests and no
 * entry barrier is needed (the program keeps dest untouched while a member may be
 * inside the call); quiet then one team barrier complete the call. Barrier counts
 * and the in-place rules are in docs/DECISIONS.md, "Host collectives".
 */
#include "core/coll.h"

#include "core/api.h"
#include "core/team.h"

#include <gshmem.h>

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

_Static_assert(GSHMEMI_COLL_CHUNK % 64 == 0, "GSHMEMI_COLL_CHUNK keeps every element type aligned");

int gshmemi_coll_init(struct gshmemi_state *st)
{
    /* env.max_teams slots of two GSHMEMI_COLL_CHUNK halves; a page is committed when a
     * collective first touches it. */
    st->coll_area_size = (size_t)st->env.max_teams * 2 * GSHMEMI_COLL_CHUNK;
    void *p = mmap(NULL, st->coll_area_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        GSHMEMI_ERROR(INIT, "collective buffers: mmap of %zu bytes failed on PE %d: %s", st->coll_area_size, st->my_pe,
                      strerror(errno));
        return GSHMEMX_ERR_NOMEM;
    }
    st->coll_area = p;
    return 0;
}

void gshmemi_coll_fini(struct gshmemi_state *st)
{
    if (st->coll_area) munmap(st->coll_area, st->coll_area_size);
    st->coll_area = NULL;
}

int gshmemi_coll_begin(struct gshmemi_coll *c, const char *fn, gshmem_team_t team)
{
    struct gshmemi_state *st = gshmemi_api_state(fn);
    const struct gshmemi_team *t = gshmemi_team_get(st, team, fn);
    if (!t) return GSHMEMX_ERR_INVALID_ARG;
    char *slot = st->coll_area + (size_t)team * 2 * GSHMEMI_COLL_CHUNK;
    *c = (struct gshmemi_coll){.st = st, .t = t, .team = team, .buf = {slot, slot + GSHMEMI_COLL_CHUNK}, .fn = fn};
    return 0;
}

int gshmemi_coll_check_overlap(const struct gshmemi_coll *c, const void *dest, size_t dlen, const void *source,
                               size_t slen, int in_place_ok)
{
    uintptr_t d = (uintptr_t)dest, s = (uintptr_t)source;
    if (dlen == 0 || slen == 0 || d + dlen <= s || s + slen <= d) return 0;
    if (in_place_ok && d == s && dlen == slen) return 0;
    GSHMEMI_ERROR(SYNC, "%s: dest=%p (%zu bytes) and source=%p (%zu bytes) overlap on PE %d%s", c->fn, dest, dlen,
                  source, slen, c->st->my_pe, in_place_ok ? " (only dest == source, in place, is allowed)" : "");
    return GSHMEMX_ERR_INVALID_ARG;
}

/* ---- GSHMEM_CHECK: the same call on every member ---------------------------------------------- */

static void coll_call_describe(const struct gshmemi_coll_call *r, char *buf, size_t len)
{
#define COLL_TYPE_NAME(T, N) #N,
    static const char *const types[] = {GSHMEM_REDUCE_ARITH_TYPES(COLL_TYPE_NAME)}; /* its type order */
#undef COLL_TYPE_NAME
    const int ntypes = (int)(sizeof(types) / sizeof(types[0]));
    const long long *a = (const long long *)r->args;
    switch (r->routine) {
    case GSHMEMI_COLL_SYNC: snprintf(buf, len, "a team barrier or sync"); break;
    case GSHMEMI_COLL_BROADCAST:
        snprintf(buf, len, "a broadcast (PE_root %lld, nelems %lld of %u bytes)", a[0], a[1], r->elem);
        break;
    case GSHMEMI_COLL_COLLECT: snprintf(buf, len, "a collect (elements of %u bytes)", r->elem); break;
    case GSHMEMI_COLL_FCOLLECT: snprintf(buf, len, "an fcollect (nelems %lld of %u bytes)", a[0], r->elem); break;
    case GSHMEMI_COLL_ALLTOALL: snprintf(buf, len, "an alltoall (nelems %lld of %u bytes)", a[0], r->elem); break;
    case GSHMEMI_COLL_ALLTOALLS:
        snprintf(buf, len, "an alltoalls (dst %lld, sst %lld, nelems %lld of %u bytes)", a[0], a[1], a[2], r->elem);
        break;
    case GSHMEMI_COLL_REDUCE: /* a[1] is the type's representation, a[3] the type itself */
        snprintf(buf, len, "a %s reduction of %s (nreduce %lld)", gshmemi_coll_reduce_op_name(a[0]),
                 a[3] >= 0 && a[3] < ntypes ? types[a[3]] : "?", a[2]);
        break;
    default: snprintf(buf, len, "no collective known (routine %u)", r->routine); break;
    }
}

/* The same call: args[3] is only described, never compared (a reduction's type name,
 * whose representation args[1] holds). */
static int coll_call_same(const struct gshmemi_coll_call *a, const struct gshmemi_coll_call *b)
{
    return a->seq == b->seq && a->gen == b->gen && a->routine == b->routine && a->elem == b->elem &&
           a->args[0] == b->args[0] && a->args[1] == b->args[1] && a->args[2] == b->args[2];
}

void gshmemi_coll_check_call(struct gshmemi_state *st, const char *fn, gshmem_team_t team, unsigned routine,
                             size_t elem, int64_t a0, int64_t a1, int64_t a2, int64_t a3)
{
    struct gshmemi_team *t = &st->teams[team];
    if (!st->check_args || t->size < 2) return;
    struct gshmemi_coll_call mine = {.seq = ++t->coll_calls, .gen = t->gen, .routine = routine, .elem = (uint32_t)elem,
                                     .args = {a0, a1, a2, a3}};
    /* Two records a slot, by parity: a member may write its next call's record while
     * another still reads this one, never the one after (the meeting below). */
    size_t off = GSHMEMI_SYNC_CALLS_OFFSET(st->n_pes) + ((size_t)team * 2 + (mine.seq & 1)) * sizeof(mine);
    memcpy((char *)st->sync_heap.base + off, &mine, sizeof(mine));
    atomic_thread_fence(memory_order_release);
    gshmemi_team_sync_host(st, team, fn);
    if (t->my_index == 0) return; /* member 0's call is the reference; the others say who differs */
    int pe0 = gshmemi_team_world_pe(t, 0);
    struct gshmemi_coll_call theirs;
    struct gshmemi_transport *tp = st->sync_of_pe[pe0];
    gshmemi_api_check_rc(st, fn, tp->ops->get(tp, pe0, &theirs, off, sizeof(theirs)), pe0);
    if (coll_call_same(&theirs, &mine)) return;
    char here[160], there[160];
    coll_call_describe(&mine, here, sizeof(here));
    if (theirs.gen != mine.gen || theirs.seq == 0) /* its record is another team's in this slot, or none */
        snprintf(there, sizeof(there), "no collective on this team that this PE can see (its record is from "
                                       "another team in the slot, or none)");
    else {
        coll_call_describe(&theirs, there, sizeof(there) - 32);
        size_t used = strlen(there);
        snprintf(there + used, sizeof(there) - used, " as its call #%llu", (unsigned long long)theirs.seq);
    }
    GSHMEMI_ERROR(SYNC, "%s: collective call #%llu on team %d differs (GSHMEM_CHECK): PE %d (team PE %d) called %s, "
                        "PE %d (team PE 0) %s%s",
                  fn, (unsigned long long)mine.seq, (int)team, st->my_pe, t->my_index, here, pe0,
                  theirs.gen != mine.gen || theirs.seq == 0 ? "shows " : "called ", there);
    gshmemi_fatal(st, GSHMEMX_ERR_MISMATCH);
}

/* ---- Data mover ------------------------------------------------------------------------------- */

void *gshmemi_coll_ptr(const struct gshmemi_state *st, int pe, size_t off)
{
#ifdef GSHMEMI_COLL_FORCE_TRANSPORT
    /* Test builds: every byte takes the device-heap / remote path on the host heap. */
    (void)st, (void)pe, (void)off;
    return NULL;
#else
    if (!st->heap_host_accessible) return NULL;
    struct gshmemi_transport *tp = st->transport_of_pe[pe];
    return tp->ops->ptr(tp, pe, off);
#endif
}

void gshmemi_coll_get(const struct gshmemi_coll *c, int pe, size_t off, void *local, size_t len)
{
    const void *p = gshmemi_coll_ptr(c->st, pe, off);
    if (p) {
        memcpy(local, p, len);
        return;
    }
    struct gshmemi_transport *tp = c->st->transport_of_pe[pe];
    gshmemi_api_check_rc(c->st, c->fn, tp->ops->get(tp, pe, local, off, len), pe);
}

void gshmemi_coll_put(const struct gshmemi_coll *c, int pe, size_t off, const void *local, size_t len)
{
    void *p = gshmemi_coll_ptr(c->st, pe, off);
    if (p) {
        memcpy(p, local, len);
        return;
    }
    struct gshmemi_transport *tp = c->st->transport_of_pe[pe];
    gshmemi_api_check_rc(c->st, c->fn, tp->ops->put(tp, pe, off, local, len), pe);
}

const void *gshmemi_coll_read(const struct gshmemi_coll *c, int pe, size_t off, size_t len, void *scratch)
{
    const void *p = gshmemi_coll_ptr(c->st, pe, off);
    if (p) return p;
    gshmemi_coll_get(c, pe, off, scratch, len);
    return scratch;
}

static size_t coll_min(size_t a, size_t b)
{
    return a < b ? a : b;
}

/* This PE's len bytes at src_off to dst_off on team member `only`, or on every
 * member (only < 0; starting after this PE, so members do not all begin with the
 * same target). One bounce read of each chunk serves every target. */
static void coll_push(const struct gshmemi_coll *c, int only, size_t dst_off, size_t src_off, size_t len)
{
    const struct gshmemi_team *t = c->t;
    int first = only >= 0 ? only : t->my_index + 1, count = only >= 0 ? 1 : t->size;
    for (size_t done = 0; done < len; done += GSHMEMI_COLL_CHUNK) {
        size_t n = coll_min(GSHMEMI_COLL_CHUNK, len - done);
        const void *from = gshmemi_coll_read(c, c->st->my_pe, src_off + done, n, c->buf.in);
        for (int k = 0; k < count; k++)
            gshmemi_coll_put(c, gshmemi_team_world_pe(t, (first + k) % t->size), dst_off + done, from, n);
    }
}

/* nelems elements of elem bytes from this PE's heap (src_off, stride sst bytes) to
 * pe's (dst_off, stride dst bytes). */
static void coll_push_strided(const struct gshmemi_coll *c, int pe, size_t dst_off, size_t dst, size_t src_off,
                              size_t sst, size_t elem, size_t nelems)
{
    struct gshmemi_state *st = c->st;
    char *d = gshmemi_coll_ptr(st, pe, dst_off);
    const char *s = gshmemi_coll_ptr(st, st->my_pe, src_off);
    struct gshmemi_transport *tp = st->transport_of_pe[pe], *self = st->transport_of_pe[st->my_pe];
    if (d && s) {
        for (size_t i = 0; i < nelems; i++) memcpy(d + i * dst, s + i * sst, elem);
        return;
    }
    if (s) {
        gshmemi_api_check_rc(st, c->fn, tp->ops->iput(tp, pe, dst_off, (ptrdiff_t)dst, s, (ptrdiff_t)sst, elem, nelems),
                             pe);
        return;
    }
    size_t per = GSHMEMI_COLL_CHUNK / elem;
    for (size_t i = 0; i < nelems; i += per) {
        size_t n = coll_min(per, nelems - i);
        int rc = self->ops->iget(self, st->my_pe, c->buf.in, (ptrdiff_t)elem, src_off + i * sst, (ptrdiff_t)sst, elem, n);
        gshmemi_api_check_rc(st, c->fn, rc, st->my_pe);
        rc = tp->ops->iput(tp, pe, dst_off + i * dst, (ptrdiff_t)dst, c->buf.in, (ptrdiff_t)elem, elem, n);
        gshmemi_api_check_rc(st, c->fn, rc, pe);
    }
}

/* Exchanges len bytes at (pe_a, off_a) and (pe_b, off_b), a chunk at a time. */
static void coll_swap(const struct gshmemi_coll *c, int pe_a, size_t off_a, int pe_b, size_t off_b, size_t len)
{
    for (size_t done = 0; done < len; done += GSHMEMI_COLL_CHUNK) {
        size_t n = coll_min(GSHMEMI_COLL_CHUNK, len - done);
        gshmemi_coll_get(c, pe_a, off_a + done, c->buf.in, n);
        gshmemi_coll_get(c, pe_b, off_b + done, c->buf.acc, n);
        gshmemi_coll_put(c, pe_a, off_a + done, c->buf.acc, n);
        gshmemi_coll_put(c, pe_b, off_b + done, c->buf.in, n);
    }
}

/* Writes to peers are complete, then every member has done its share. */
static void coll_finish(const struct gshmemi_coll *c)
{
    gshmemi_sync_quiet(c->st, c->fn);
    gshmemi_team_sync_host(c->st, c->team, c->fn);
}

/* ---- Broadcast, fcollect, collect -------------------------------------------------------------- */

/* The root pushes to every member (its own dest too) and one barrier ends the call:
 * pulling would need an entry barrier (the root's source ready) on top. */
static int coll_broadcast(const char *fn, gshmem_team_t team, void *dest, const void *source, size_t nelems,
                          size_t elem, int root)
{
    struct gshmemi_coll c;
    int rc = gshmemi_coll_begin(&c, fn, team);
    if (rc != 0) return rc;
    gshmemi_coll_check_call(c.st, fn, team, GSHMEMI_COLL_BROADCAST, elem, root, (int64_t)nelems, 0, 0);
    if (root < 0 || root >= c.t->size) {
        GSHMEMI_ERROR(SYNC, "%s: PE_root=%d is not a PE of team %d, which has %d PEs (PE %d)", fn, root, (int)team,
                      c.t->size, c.st->my_pe);
        return GSHMEMX_ERR_INVALID_ARG;
    }
    size_t len = gshmemi_api_bytes(c.st, fn, nelems, elem);
    if (len == 0) return 0;
    size_t dst_off = gshmemi_api_offset(c.st, fn, "dest", dest, len, c.st->my_pe);
    size_t src_off = gshmemi_api_offset(c.st, fn, "source", source, len, c.st->my_pe);
    if ((rc = gshmemi_coll_check_overlap(&c, dest, len, source, len, 0)) != 0) return rc;
    if (c.t->my_index == root) coll_push(&c, -1, dst_off, src_off, len);
    coll_finish(&c);
    return 0;
}

/* The arguments of the collectives that move one len-byte block per member: dest holds
 * a block per member, source one block (fcollect) or a block per member (alltoall,
 * which may work in place). len == 0 means there is nothing to do. */
struct coll_blocks {
    size_t len, dst_off, src_off;
};

static int coll_blocks_begin(struct gshmemi_coll *c, const char *fn, gshmem_team_t team, void *dest,
                             const void *source, size_t nelems, size_t elem, int source_per_member,
                             struct coll_blocks *b)
{
    int rc = gshmemi_coll_begin(c, fn, team);
    if (rc != 0) return rc;
    gshmemi_coll_check_call(c->st, fn, team, source_per_member ? GSHMEMI_COLL_ALLTOALL : GSHMEMI_COLL_FCOLLECT, elem,
                            (int64_t)nelems, 0, 0, 0);
    b->len = gshmemi_api_bytes(c->st, fn, nelems, elem);
    if (b->len == 0) return 0;
    size_t total = gshmemi_api_bytes(c->st, fn, b->len, (size_t)c->t->size);
    size_t source_len = source_per_member ? total : b->len;
    b->dst_off = gshmemi_api_offset(c->st, fn, "dest", dest, total, c->st->my_pe);
    b->src_off = gshmemi_api_offset(c->st, fn, "source", source, source_len, c->st->my_pe);
    return gshmemi_coll_check_overlap(c, dest, total, source, source_len, source_per_member);
}

static int coll_fcollect(const char *fn, gshmem_team_t team, void *dest, const void *source, size_t nelems,
                         size_t elem)
{
    struct gshmemi_coll c;
    struct coll_blocks b;
    int rc = coll_blocks_begin(&c, fn, team, dest, source, nelems, elem, 0, &b);
    if (rc != 0 || b.len == 0) return rc;
    coll_push(&c, -1, b.dst_off + (size_t)c.t->my_index * b.len, b.src_off, b.len);
    coll_finish(&c);
    return 0;
}

/* Every member's published byte count: *before, the sum below this PE, and *total.
 * Each count fits its PE's heap (checked there), so the sums cannot overflow. */
static void coll_collect_sizes(const struct gshmemi_coll *c, size_t *before, size_t *total)
{
    size_t off = gshmemi_team_published_offset(c->team);
    *before = *total = 0;
    for (int i = 0; i < c->t->size; i++) {
        int pe = gshmemi_team_world_pe(c->t, i);
        struct gshmemi_transport *tp = c->st->sync_of_pe[pe];
        uint64_t n;
        gshmemi_api_check_rc(c->st, c->fn, tp->ops->get(tp, pe, &n, off, sizeof(n)), pe);
        if (i == c->t->my_index) *before = *total;
        *total += (size_t)n;
    }
}

/* Counts differ per PE: publish ours, barrier, read everyone's, push, barrier. The
 * closing barrier also keeps the published word stable until every member has read
 * it, so the next collect may overwrite it. */
static int coll_collect(const char *fn, gshmem_team_t team, void *dest, const void *source, size_t nelems,
                        size_t elem)
{
    struct gshmemi_coll c;
    int rc = gshmemi_coll_begin(&c, fn, team);
    if (rc != 0) return rc;
    gshmemi_coll_check_call(c.st, fn, team, GSHMEMI_COLL_COLLECT, elem, 0, 0, 0, 0); /* counts may differ */
    size_t len = gshmemi_api_bytes(c.st, fn, nelems, elem);
    size_t src_off = len ? gshmemi_api_offset(c.st, fn, "source", source, len, c.st->my_pe) : 0;
    uint64_t *published = (uint64_t *)((char *)c.st->sync_heap.base + gshmemi_team_published_offset(team));
    __atomic_store_n(published, (uint64_t)len, __ATOMIC_RELAXED); /* the barrier's atomics publish it */
    gshmemi_team_sync_host(c.st, team, fn);
    size_t before, total;
    coll_collect_sizes(&c, &before, &total);
    size_t dst_off = total ? gshmemi_api_offset(c.st, fn, "dest", dest, total, c.st->my_pe) : 0;
    /* An overlap may show on some members only (counts differ): all still meet at the barrier. */
    rc = gshmemi_coll_check_overlap(&c, dest, total, source, len, 0);
    if (rc == 0) coll_push(&c, -1, dst_off + before, src_off, len);
    coll_finish(&c);
    return rc;
}

/* ---- Alltoall ------------------------------------------------------------------------------------ */

/* Whether team member i swaps the pair {i, j}: exactly one of the two does, and each
 * member gets (n - 1) / 2 or n / 2 pairs. */
static int coll_swaps_pair(int i, int j, int n)
{
    int d = (j - i + n) % n;
    return d != 0 && (2 * d < n || (2 * d == n && i < j));
}

/* dest == source: block j here and block me on member j trade places. The entry
 * barrier makes sure member j's buffer still holds its source. */
static void coll_alltoall_in_place(const struct gshmemi_coll *c, size_t off, size_t len)
{
    const struct gshmemi_team *t = c->t;
    gshmemi_team_sync_host(c->st, c->team, c->fn);
    for (int j = 0; j < t->size; j++)
        if (coll_swaps_pair(t->my_index, j, t->size))
            coll_swap(c, c->st->my_pe, off + (size_t)j * len, gshmemi_team_world_pe(t, j),
                      off + (size_t)t->my_index * len, len);
    coll_finish(c);
}

static int coll_alltoall(const char *fn, gshmem_team_t team, void *dest, const void *source, size_t nelems,
                         size_t elem)
{
    struct gshmemi_coll c;
    struct coll_blocks b;
    int rc = coll_blocks_begin(&c, fn, team, dest, source, nelems, elem, 1, &b);
    if (rc != 0 || b.len == 0) return rc;
    if (dest == source) {
        coll_alltoall_in_place(&c, b.dst_off, b.len);
        return 0;
    }
    int me = c.t->my_index, n = c.t->size;
    for (int k = 1; k <= n; k++)
        coll_push(&c, (me + k) % n, b.dst_off + (size_t)me * b.len, b.src_off + (size_t)((me + k) % n) * b.len,
                  b.len);
    coll_finish(&c);
    return 0;
}

/* Bytes from the first to the last of count elements at stride elements. */
static size_t coll_strided_span(struct gshmemi_state *st, const char *fn, size_t count, size_t stride, size_t elem)
{
    return gshmemi_api_bytes(st, fn, gshmemi_api_bytes(st, fn, count - 1, stride) + 1, elem);
}

static int coll_alltoalls(const char *fn, gshmem_team_t team, void *dest, const void *source, ptrdiff_t dst,
                          ptrdiff_t sst, size_t nelems, size_t elem)
{
    struct gshmemi_coll c;
    int rc = gshmemi_coll_begin(&c, fn, team);
    if (rc != 0) return rc;
    gshmemi_coll_check_call(c.st, fn, team, GSHMEMI_COLL_ALLTOALLS, elem, dst, sst, (int64_t)nelems, 0);
    if (dst < 1 || sst < 1) {
        GSHMEMI_ERROR(SYNC, "%s: dst=%td, sst=%td: both strides must be >= 1 (PE %d)", fn, dst, sst, c.st->my_pe);
        return GSHMEMX_ERR_INVALID_ARG;
    }
    if (nelems == 0) return 0;
    if (dest == source) {
        GSHMEMI_ERROR(SYNC, "%s: dest == source (%p) on PE %d: alltoalls does not work in place", fn, dest,
                      c.st->my_pe);
        return GSHMEMX_ERR_INVALID_ARG;
    }
    size_t count = gshmemi_api_bytes(c.st, fn, nelems, (size_t)c.t->size), ds = (size_t)dst, ss = (size_t)sst;
    size_t dst_off = gshmemi_api_offset(c.st, fn, "dest", dest, coll_strided_span(c.st, fn, count, ds, elem),
                                        c.st->my_pe);
    size_t src_off = gshmemi_api_offset(c.st, fn, "source", source, coll_strided_span(c.st, fn, count, ss, elem),
                                        c.st->my_pe);
    int me = c.t->my_index, n = c.t->size;
    for (int k = 1; k <= n; k++) {
        int j = (me + k) % n;
        coll_push_strided(&c, gshmemi_team_world_pe(c.t, j), dst_off + (size_t)me * nelems * ds * elem, ds * elem,
                          src_off + (size_t)j * nelems * ss * elem, ss * elem, elem, nelems);
    }
    coll_finish(&c);
    return 0;
}

/* ---- Public entry points ------------------------------------------------------------------------ */

int gshmem_broadcastmem(gshmem_team_t team, void *dest, const void *source, size_t nelems, int PE_root)
{
    return coll_broadcast(__func__, team, dest, source, nelems, 1, PE_root);
}

int gshmem_collectmem(gshmem_team_t team, void *dest, const void *source, size_t nelems)
{
    return coll_collect(__func__, team, dest, source, nelems, 1);
}

int gshmem_fcollectmem(gshmem_team_t team, void *dest, const void *source, size_t nelems)
{
    return coll_fcollect(__func__, team, dest, source, nelems, 1);
}

int gshmem_alltoallmem(gshmem_team_t team, void *dest, const void *source, size_t nelems)
{
    return coll_alltoall(__func__, team, dest, source, nelems, 1);
}

int gshmem_alltoallsmem(gshmem_team_t team, void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,
                        size_t nelems)
{
    return coll_alltoalls(__func__, team, dest, source, dst, sst, nelems, 1);
}

#define GSHMEMI_DEFINE_COLL(T, N)                                                                        \
    int gshmem_##N##_broadcast(gshmem_team_t team, T *dest, const T *source, size_t nelems, int PE_root) \
    {                                                                                                    \
        return coll_broadcast(__func__, team, dest, source, nelems, sizeof(T), PE_root);                 \
    }                                                                                                    \
    int gshmem_##N##_collect(gshmem_team_t team, T *dest, const T *source, size_t nelems)                \
    {                                                                                                    \
        return coll_collect(__func__, team, dest, source, nelems, sizeof(T));                            \
    }                                                                                                    \
    int gshmem_##N##_fcollect(gshmem_team_t team, T *dest, const T *source, size_t nelems)               \
    {                                                                                                    \
        return coll_fcollect(__func__, team, dest, source, nelems, sizeof(T));                           \
    }                                                                                                    \
    int gshmem_##N##_alltoall(gshmem_team_t team, T *dest, const T *source, size_t nelems)               \
    {                                                                                                    \
        return coll_alltoall(__func__, team, dest, source, nelems, sizeof(T));                           \
    }                                                                                                    \
    int gshmem_##N##_alltoalls(gshmem_team_t team, T *dest, const T *source, ptrdiff_t dst,              \
                               ptrdiff_t sst, size_t nelems)                                             \
    {                                                                                                    \
        return coll_alltoalls(__func__, team, dest, source, dst, sst, nelems, sizeof(T));                \
    }
GSHMEM_RMA_TYPES(GSHMEMI_DEFINE_COLL)
#undef GSHMEMI_DEFINE_COLL
