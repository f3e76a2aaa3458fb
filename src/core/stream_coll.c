/*
 * Stream-ordered collectives (gshmemx_*_on_stream, declared in gshmem/team.h): argument
 * checks and the team here, the kernels in src/device/stream_coll.cu. The rules of
 * gshmem/stream.h hold: device heap only, nothing synchronizes or allocates, and a bad
 * argument ends the job; an invalid team or a root outside it returns nonzero after a
 * log line, as the blocking collectives do.
 */
#include "core/api.h"
#include "core/team.h"

#include <gshmem.h>

#ifdef GSHMEM_HAVE_CUDA
#include "device/stream_coll.h"
#include "device/stream_kernels.h"

/* Whether the GPU reaches some member only through the proxy. */
static int team_proxied(struct gshmemi_state *st, const struct gshmemi_team *t)
{
    for (int i = 0; st->proxy && i < t->size; i++) {
        int pe = gshmemi_team_world_pe(t, i);
        struct gshmemi_transport *tp = st->transport_of_pe[pe];
        if (!tp->ops->ptr(tp, pe, 0)) return 1;
    }
    return 0;
}

static struct gshmemi_stream_coll_args coll_args(struct gshmemi_state *st, const struct gshmemi_team *t,
                                                 gshmem_team_t team, int kind)
{
    return (struct gshmemi_stream_coll_args){
        .kind = kind, .team = team, .team_size = t->size, .my_index = t->my_index, .my_pe = st->my_pe,
        .proxied = team_proxied(st, t)};
}

static int coll_launch(struct gshmemi_state *st, const char *fn, const struct gshmemi_stream_coll_args *args,
                       struct CUstream_st *stream)
{
    int err = gshmemi_stream_coll(st->device, args, stream);
    if (err == 0) return 0;
    GSHMEMI_ERROR(CUDA, "%s: PE %d (team %d): enqueuing on the stream failed: %s (cudaError_t %d)", fn, st->my_pe,
                  args->team, gshmemi_stream_error_string(err), err);
    gshmemi_fatal(st, GSHMEMX_ERR_CUDA);
}

/* dest and source as heap offsets after the range checks; overlap is refused unless
 * in_place allows dest == source. */
static void coll_buffers(struct gshmemi_state *st, const char *fn, struct gshmemi_stream_coll_args *args,
                         const void *dest, size_t dest_len, const void *source, size_t source_len, int in_place)
{
    gshmemi_api_offset(st, fn, "dest", dest, dest_len, st->my_pe);
    gshmemi_api_offset(st, fn, "source", source, source_len, st->my_pe);
    uintptr_t d = (uintptr_t)dest, s = (uintptr_t)source;
    if (!(in_place && d == s) && d < s + source_len && s < d + dest_len) {
        GSHMEMI_ERROR(SYNC, "%s: dest=%p (%zu bytes) and source=%p (%zu bytes) overlap on PE %d%s", fn, dest,
                      dest_len, source, source_len, st->my_pe, in_place ? " (only dest == source is allowed)" : "");
        gshmemi_fatal(st, GSHMEMX_ERR_INVALID_ARG);
    }
    args->dest = (uint64_t)d;
    args->source = (uint64_t)s;
}

static int coll_sync(const char *fn, gshmem_team_t team, int kind, struct CUstream_st *stream)
{
    struct gshmemi_state *st = gshmemi_stream_state(fn);
    const struct gshmemi_team *t = gshmemi_team_get(st, team, fn);
    if (!t) return GSHMEMX_ERR_INVALID_ARG;
    struct gshmemi_stream_coll_args args = coll_args(st, t, team, kind);
    return coll_launch(st, fn, &args, stream);
}

int gshmemx_team_sync_on_stream(gshmem_team_t team, struct CUstream_st *stream)
{
    return coll_sync(__func__, team, GSHMEMI_STREAM_COLL_SYNC, stream);
}

int gshmemx_barrier_on_stream(gshmem_team_t team, struct CUstream_st *stream)
{
    return coll_sync(__func__, team, GSHMEMI_STREAM_COLL_BARRIER, stream);
}

int gshmemx_broadcastmem_on_stream(gshmem_team_t team, void *dest, const void *source, size_t nelems, int PE_root,
                                   struct CUstream_st *stream)
{
    struct gshmemi_state *st = gshmemi_stream_state(__func__);
    const struct gshmemi_team *t = gshmemi_team_get(st, team, __func__);
    if (!t) return GSHMEMX_ERR_INVALID_ARG;
    if (PE_root < 0 || PE_root >= t->size) {
        GSHMEMI_ERROR(SYNC, "%s: PE_root=%d is not a PE of team %d (%d PEs) (PE %d)", __func__, PE_root, (int)team,
                      t->size, st->my_pe);
        return GSHMEMX_ERR_INVALID_ARG;
    }
    if (nelems == 0) return 0;
    struct gshmemi_stream_coll_args args = coll_args(st, t, team, GSHMEMI_STREAM_COLL_BROADCAST);
    coll_buffers(st, __func__, &args, dest, nelems, source, nelems, 0);
    args.nelems = nelems;
    args.root = PE_root;
    return coll_launch(st, __func__, &args, stream);
}

/* Every member's block has the size nelems; `blocks` of them in dest (fcollect,
 * alltoall) and in source (alltoall). */
static int coll_blocks(const char *fn, gshmem_team_t team, void *dest, const void *source, size_t nelems, int kind,
                       struct CUstream_st *stream)
{
    struct gshmemi_state *st = gshmemi_stream_state(fn);
    const struct gshmemi_team *t = gshmemi_team_get(st, team, fn);
    if (!t) return GSHMEMX_ERR_INVALID_ARG;
    if (nelems == 0) return 0;
    size_t all = gshmemi_api_bytes(st, fn, nelems, (size_t)t->size);
    int alltoall = kind == GSHMEMI_STREAM_COLL_ALLTOALL;
    struct gshmemi_stream_coll_args args = coll_args(st, t, team, kind);
    coll_buffers(st, fn, &args, dest, all, source, alltoall ? all : nelems, alltoall);
    args.nelems = nelems;
    return coll_launch(st, fn, &args, stream);
}

int gshmemx_fcollectmem_on_stream(gshmem_team_t team, void *dest, const void *source, size_t nelems,
                                  struct CUstream_st *stream)
{
    return coll_blocks(__func__, team, dest, source, nelems, GSHMEMI_STREAM_COLL_FCOLLECT, stream);
}

int gshmemx_alltoallmem_on_stream(gshmem_team_t team, void *dest, const void *source, size_t nelems,
                                  struct CUstream_st *stream)
{
    return coll_blocks(__func__, team, dest, source, nelems, GSHMEMI_STREAM_COLL_ALLTOALL, stream);
}

/* Only this PE's part of dest is known here (the others' sizes arrive on the GPU), so
 * dest is checked for nelems bytes and the kernel trusts the rest. */
int gshmemx_collectmem_on_stream(gshmem_team_t team, void *dest, const void *source, size_t nelems,
                                 struct CUstream_st *stream)
{
    struct gshmemi_state *st = gshmemi_stream_state(__func__);
    const struct gshmemi_team *t = gshmemi_team_get(st, team, __func__);
    if (!t) return GSHMEMX_ERR_INVALID_ARG;
    struct gshmemi_stream_coll_args args = coll_args(st, t, team, GSHMEMI_STREAM_COLL_COLLECT);
    if (nelems) coll_buffers(st, __func__, &args, dest, nelems, source, nelems, 0);
    else args.dest = (uint64_t)(uintptr_t)dest;
    args.nelems = nelems;
    return coll_launch(st, __func__, &args, stream);
}

static int coll_reduce(const char *fn, gshmem_team_t team, void *dest, const void *source, size_t nreduce,
                       size_t elem, int type, int op, struct CUstream_st *stream)
{
    struct gshmemi_state *st = gshmemi_stream_state(fn);
    const struct gshmemi_team *t = gshmemi_team_get(st, team, fn);
    if (!t) return GSHMEMX_ERR_INVALID_ARG;
    if (nreduce == 0) return 0;
    size_t bytes = gshmemi_api_bytes(st, fn, nreduce, elem);
    struct gshmemi_stream_coll_args args = coll_args(st, t, team, GSHMEMI_STREAM_COLL_REDUCE);
    coll_buffers(st, fn, &args, dest, bytes, source, bytes, 1);
    args.nelems = nreduce;
    args.op = op;
    args.type = type;
    return coll_launch(st, fn, &args, stream);
}

/* Reduction types by representation: floating point first, then signedness and size. */
static int coll_int_type(size_t size, int is_signed)
{
    int log2 = size == 1 ? 0 : size == 2 ? 1 : size == 4 ? 2 : 3;
    return (is_signed ? GSHMEMI_REDUCE_INT8 : GSHMEMI_REDUCE_UINT8) + log2;
}
#define COLL_TYPE(T)                                                                                   \
    ((T)0.5 != (T)0 ? (sizeof(T) == sizeof(float) ? GSHMEMI_REDUCE_FLOAT : GSHMEMI_REDUCE_DOUBLE)     \
                    : coll_int_type(sizeof(T), (T)-1 < (T)1))

#define COLL_REDUCE_T(T, N, OP)                                                                        \
    int gshmemx_##N##_##OP##_reduce_on_stream(gshmem_team_t team, T *dest, const T *source, size_t nreduce, \
                                              struct CUstream_st *stream)                               \
    {                                                                                                  \
        return coll_reduce(__func__, team, dest, source, nreduce, sizeof(T), COLL_TYPE(T),             \
                           GSHMEMI_REDUCE_##OP, stream);                                               \
    }
#else
/* Without CUDA there are no streams and no device heap: every call says so and ends the job. */
_Noreturn static void coll_not_built(const char *fn)
{
    struct gshmemi_state *st = gshmemi_api_state(fn);
    GSHMEMI_ERROR(SYNC, "%s: PE %d: stream-ordered collectives need a CUDA build of gshmem and the device heap; "
                        "this build has no CUDA support (%s)", fn, st->my_pe,
                  gshmemx_strerror(GSHMEMX_ERR_NOT_SUPPORTED));
    gshmemi_fatal(st, GSHMEMX_ERR_NOT_SUPPORTED);
}

int gshmemx_team_sync_on_stream(gshmem_team_t team, struct CUstream_st *stream)
{
    (void)team, (void)stream;
    coll_not_built(__func__);
}

int gshmemx_barrier_on_stream(gshmem_team_t team, struct CUstream_st *stream)
{
    (void)team, (void)stream;
    coll_not_built(__func__);
}

int gshmemx_broadcastmem_on_stream(gshmem_team_t team, void *dest, const void *source, size_t nelems, int PE_root,
                                   struct CUstream_st *stream)
{
    (void)team, (void)dest, (void)source, (void)nelems, (void)PE_root, (void)stream;
    coll_not_built(__func__);
}

int gshmemx_collectmem_on_stream(gshmem_team_t team, void *dest, const void *source, size_t nelems,
                                 struct CUstream_st *stream)
{
    (void)team, (void)dest, (void)source, (void)nelems, (void)stream;
    coll_not_built(__func__);
}

int gshmemx_fcollectmem_on_stream(gshmem_team_t team, void *dest, const void *source, size_t nelems,
                                  struct CUstream_st *stream)
{
    (void)team, (void)dest, (void)source, (void)nelems, (void)stream;
    coll_not_built(__func__);
}

int gshmemx_alltoallmem_on_stream(gshmem_team_t team, void *dest, const void *source, size_t nelems,
                                  struct CUstream_st *stream)
{
    (void)team, (void)dest, (void)source, (void)nelems, (void)stream;
    coll_not_built(__func__);
}

#define COLL_REDUCE_T(T, N, OP)                                                                        \
    int gshmemx_##N##_##OP##_reduce_on_stream(gshmem_team_t team, T *dest, const T *source, size_t nreduce, \
                                              struct CUstream_st *stream)                               \
    {                                                                                                  \
        (void)team, (void)dest, (void)source, (void)nreduce, (void)stream;                             \
        coll_not_built(__func__);                                                                      \
    }
#endif

#define COLL_REDUCE_and(T, N) COLL_REDUCE_T(T, N, and)
#define COLL_REDUCE_or(T, N) COLL_REDUCE_T(T, N, or)
#define COLL_REDUCE_xor(T, N) COLL_REDUCE_T(T, N, xor)
#define COLL_REDUCE_max(T, N) COLL_REDUCE_T(T, N, max)
#define COLL_REDUCE_min(T, N) COLL_REDUCE_T(T, N, min)
#define COLL_REDUCE_sum(T, N) COLL_REDUCE_T(T, N, sum)
#define COLL_REDUCE_prod(T, N) COLL_REDUCE_T(T, N, prod)
#define COLL_REDUCE_OP(OP, TYPES) TYPES(COLL_REDUCE_##OP)
GSHMEM_REDUCE_OPS(COLL_REDUCE_OP)
