/* wait_until and test on local symmetric objects, every form through one engine. */
#include "core/api.h"

#include <gshmem.h>

#include <stdio.h>
#include <stdlib.h>

/* Loads element i with acquire semantics, sign- or zero-extended to 64 bits. */
static int64_t wait_load(const volatile void *base, size_t i, size_t width, int is_signed)
{
    const volatile char *p = (const volatile char *)base + i * width;
    switch (width) {
    case 2: {
        uint16_t v = __atomic_load_n((const volatile uint16_t *)p, __ATOMIC_ACQUIRE);
        return is_signed ? (int64_t)(int16_t)v : (int64_t)v;
    }
    case 4: {
        uint32_t v = __atomic_load_n((const volatile uint32_t *)p, __ATOMIC_ACQUIRE);
        return is_signed ? (int64_t)(int32_t)v : (int64_t)v;
    }
    default:
        return (int64_t)__atomic_load_n((const volatile uint64_t *)p, __ATOMIC_ACQUIRE);
    }
}

static int wait_compare(int64_t value, int cmp, int64_t target, int is_signed)
{
    if (cmp == GSHMEM_CMP_EQ) return value == target;
    if (cmp == GSHMEM_CMP_NE) return value != target;
    int order = is_signed ? (value > target) - (value < target)
                          : ((uint64_t)value > (uint64_t)target) - ((uint64_t)value < (uint64_t)target);
    switch (cmp) {
    case GSHMEM_CMP_GT: return order > 0;
    case GSHMEM_CMP_GE: return order >= 0;
    case GSHMEM_CMP_LT: return order < 0;
    default: return order <= 0; /* GSHMEM_CMP_LE; validated before */
    }
}

static int wait_satisfied(const struct gshmemi_wait_args *a, size_t i)
{
    int64_t target = wait_load(a->values, a->vector ? i : 0, a->width, a->is_signed);
    int64_t value = wait_load(a->ivars, i, a->width, a->is_signed);
    if (a->value_out && i == 0) *a->value_out = (uint64_t)value;
    return wait_compare(value, a->cmp, target, a->is_signed);
}

size_t gshmemi_wait_test(const struct gshmemi_wait_args *a)
{
    size_t count = 0, active = 0;
    for (size_t i = 0; i < a->nelems; i++) {
        if (a->status && a->status[i]) continue;
        active++;
        if (!wait_satisfied(a, i)) {
            if (a->mode == GSHMEMI_WAIT_ALL) return 0;
            continue;
        }
        if (a->mode == GSHMEMI_WAIT_ANY) return i;
        if (a->mode == GSHMEMI_WAIT_SOME) a->indices[count] = i;
        count++;
    }
    if (a->mode == GSHMEMI_WAIT_ALL) return 1;
    if (a->mode == GSHMEMI_WAIT_ANY) return SIZE_MAX;
    return active == 0 ? 0 : count;
}

/* What a wait evaluates: the ivars themselves on a host heap, else a host mirror
 * refreshed by a copy from the device heap before each test. */
struct wait_view {
    struct gshmemi_wait_args args;
    struct gshmemi_state *st;
    size_t offset;
    void *mirror;
    size_t result; /* of the pass that satisfied the wait */
};

static size_t wait_view_test(struct wait_view *v)
{
    if (v->mirror) {
        struct gshmemi_transport *tp = v->st->transport_of_pe[v->st->my_pe];
        int rc = tp->ops->get(tp, v->st->my_pe, v->mirror, v->offset, v->args.nelems * v->args.width);
        gshmemi_api_check_rc(v->st, v->args.fn, rc, v->st->my_pe);
    }
    return gshmemi_wait_test(&v->args);
}

static int wait_done(void *arg)
{
    struct wait_view *v = arg;
    size_t r = wait_view_test(v);
    int mode = v->args.mode;
    v->result = r;
    return mode == GSHMEMI_WAIT_ALL ? r == 1 : mode == GSHMEMI_WAIT_ANY ? r != SIZE_MAX : r > 0;
}

static void wait_describe(void *arg, char *buf, size_t len)
{
    static const char *const cmp_names[] = {"EQ", "NE", "GT", "GE", "LT", "LE"};
    const struct gshmemi_wait_args *a = &((struct wait_view *)arg)->args;
    size_t first = 0;
    while (first < a->nelems && a->status && a->status[first]) first++;
    long long value = first < a->nelems ? (long long)wait_load(a->ivars, first, a->width, a->is_signed) : 0;
    long long target = (long long)wait_load(a->values, a->vector ? first : 0, a->width, a->is_signed);
    snprintf(buf, len, "%s: waiting for ivars (%zu elements) %s %lld; element %zu is %lld", a->fn, a->nelems,
             cmp_names[a->cmp], target, first, value);
}

/* Checks arguments (an invalid comparison or an ivar outside the heap ends the job)
 * and sets up the view the wait evaluates. */
static void wait_view_init(struct wait_view *v, const struct gshmemi_wait_args *a)
{
    struct gshmemi_state *st = gshmemi_api_state(a->fn);
    if (a->cmp < GSHMEM_CMP_EQ || a->cmp > GSHMEM_CMP_LE) {
        GSHMEMI_ERROR(SYNC, "%s: cmp=%d is not a GSHMEM_CMP_* value", a->fn, a->cmp);
        gshmemi_fatal(st, GSHMEMX_ERR_INVALID_ARG);
    }
    *v = (struct wait_view){.args = *a, .st = st};
    if (a->nelems == 0) return;
    /* In every build, as RMA and atomics check theirs: a private ivar would otherwise
     * just wait until GSHMEM_TIMEOUT, whose message does not say why. */
    size_t len = gshmemi_api_bytes(st, a->fn, a->nelems, a->width);
    v->offset = gshmemi_api_offset(st, a->fn, "ivars", (const void *)a->ivars, len, st->my_pe);
    if (st->heap_host_accessible) return;
    v->mirror = malloc(len);
    if (!v->mirror) gshmemi_fatal(st, GSHMEMX_ERR_NOMEM);
    v->args.ivars = v->mirror;
}

size_t gshmemi_wait_until(const struct gshmemi_wait_args *a)
{
    struct wait_view v;
    wait_view_init(&v, a);
    size_t result;
    size_t active = 0;
    for (size_t i = 0; i < a->nelems; i++) active += !(a->status && a->status[i]);
    if (a->mode != GSHMEMI_WAIT_ALL && active == 0) {
        result = a->mode == GSHMEMI_WAIT_ANY ? SIZE_MAX : 0;
    } else {
        gshmemi_progress_wait(v.st, wait_done, &v, wait_describe);
        result = v.result; /* never re-scan: the values may have moved on */
    }
    free(v.mirror);
    return result;
}

size_t gshmemi_wait_poll(const struct gshmemi_wait_args *a)
{
    struct wait_view v;
    wait_view_init(&v, a);
    gshmemi_sync_flush(v.st); /* callers poll in a loop: what they wait for may answer what we sent */
    size_t result = wait_view_test(&v);
    free(v.mirror);
    return result;
}

#define WAIT_ARGS(T, mode_, ivars_, n_, indices_, status_, values_, vector_)                          \
    {.fn = __func__, .ivars = (ivars_), .nelems = (n_), .width = sizeof(T), .is_signed = (T)-1 < (T)1, \
     .status = (status_), .cmp = cmp, .values = (values_), .vector = (vector_), .mode = (mode_),       \
     .indices = (indices_)}

#define GSHMEMI_DEFINE_P2P_SYNC(T, N)                                                                        \
    void gshmem_##N##_wait_until(T *ivar, int cmp, T cmp_value)                                              \
    {                                                                                                        \
        struct gshmemi_wait_args a = WAIT_ARGS(T, GSHMEMI_WAIT_ALL, ivar, 1, NULL, NULL, &cmp_value, 0);      \
        gshmemi_wait_until(&a);                                                                              \
    }                                                                                                        \
    void gshmem_##N##_wait_until_all(T *ivars, size_t nelems, const int *status, int cmp, T cmp_value)       \
    {                                                                                                        \
        struct gshmemi_wait_args a = WAIT_ARGS(T, GSHMEMI_WAIT_ALL, ivars, nelems, NULL, status, &cmp_value, 0); \
        gshmemi_wait_until(&a);                                                                              \
    }                                                                                                        \
    size_t gshmem_##N##_wait_until_any(T *ivars, size_t nelems, const int *status, int cmp, T cmp_value)     \
    {                                                                                                        \
        struct gshmemi_wait_args a = WAIT_ARGS(T, GSHMEMI_WAIT_ANY, ivars, nelems, NULL, status, &cmp_value, 0); \
        return gshmemi_wait_until(&a);                                                                       \
    }                                                                                                        \
    size_t gshmem_##N##_wait_until_some(T *ivars, size_t nelems, size_t *indices, const int *status, int cmp, \
                                        T cmp_value)                                                         \
    {                                                                                                        \
        struct gshmemi_wait_args a = WAIT_ARGS(T, GSHMEMI_WAIT_SOME, ivars, nelems, indices, status, &cmp_value, 0); \
        return gshmemi_wait_until(&a);                                                                       \
    }                                                                                                        \
    void gshmem_##N##_wait_until_all_vector(T *ivars, size_t nelems, const int *status, int cmp,             \
                                            T *cmp_values)                                                   \
    {                                                                                                        \
        struct gshmemi_wait_args a = WAIT_ARGS(T, GSHMEMI_WAIT_ALL, ivars, nelems, NULL, status, cmp_values, 1); \
        gshmemi_wait_until(&a);                                                                              \
    }                                                                                                        \
    size_t gshmem_##N##_wait_until_any_vector(T *ivars, size_t nelems, const int *status, int cmp,           \
                                              T *cmp_values)                                                 \
    {                                                                                                        \
        struct gshmemi_wait_args a = WAIT_ARGS(T, GSHMEMI_WAIT_ANY, ivars, nelems, NULL, status, cmp_values, 1); \
        return gshmemi_wait_until(&a);                                                                       \
    }                                                                                                        \
    size_t gshmem_##N##_wait_until_some_vector(T *ivars, size_t nelems, size_t *indices, const int *status,  \
                                               int cmp, T *cmp_values)                                       \
    {                                                                                                        \
        struct gshmemi_wait_args a = WAIT_ARGS(T, GSHMEMI_WAIT_SOME, ivars, nelems, indices, status, cmp_values, 1); \
        return gshmemi_wait_until(&a);                                                                       \
    }                                                                                                        \
    int gshmem_##N##_test(T *ivar, int cmp, T cmp_value)                                                     \
    {                                                                                                        \
        struct gshmemi_wait_args a = WAIT_ARGS(T, GSHMEMI_WAIT_ALL, ivar, 1, NULL, NULL, &cmp_value, 0);      \
        return (int)gshmemi_wait_poll(&a);                                                                   \
    }                                                                                                        \
    int gshmem_##N##_test_all(T *ivars, size_t nelems, const int *status, int cmp, T cmp_value)              \
    {                                                                                                        \
        struct gshmemi_wait_args a = WAIT_ARGS(T, GSHMEMI_WAIT_ALL, ivars, nelems, NULL, status, &cmp_value, 0); \
        return (int)gshmemi_wait_poll(&a);                                                                   \
    }                                                                                                        \
    size_t gshmem_##N##_test_any(T *ivars, size_t nelems, const int *status, int cmp, T cmp_value)           \
    {                                                                                                        \
        struct gshmemi_wait_args a = WAIT_ARGS(T, GSHMEMI_WAIT_ANY, ivars, nelems, NULL, status, &cmp_value, 0); \
        return gshmemi_wait_poll(&a);                                                                        \
    }                                                                                                        \
    size_t gshmem_##N##_test_some(T *ivars, size_t nelems, size_t *indices, const int *status, int cmp,      \
                                  T cmp_value)                                                               \
    {                                                                                                        \
        struct gshmemi_wait_args a = WAIT_ARGS(T, GSHMEMI_WAIT_SOME, ivars, nelems, indices, status, &cmp_value, 0); \
        return gshmemi_wait_poll(&a);                                                                        \
    }                                                                                                        \
    int gshmem_##N##_test_all_vector(T *ivars, size_t nelems, const int *status, int cmp, T *cmp_values)     \
    {                                                                                                        \
        struct gshmemi_wait_args a = WAIT_ARGS(T, GSHMEMI_WAIT_ALL, ivars, nelems, NULL, status, cmp_values, 1); \
        return (int)gshmemi_wait_poll(&a);                                                                   \
    }                                                                                                        \
    size_t gshmem_##N##_test_any_vector(T *ivars, size_t nelems, const int *status, int cmp, T *cmp_values)  \
    {                                                                                                        \
        struct gshmemi_wait_args a = WAIT_ARGS(T, GSHMEMI_WAIT_ANY, ivars, nelems, NULL, status, cmp_values, 1); \
        return gshmemi_wait_poll(&a);                                                                        \
    }                                                                                                        \
    size_t gshmem_##N##_test_some_vector(T *ivars, size_t nelems, size_t *indices, const int *status,        \
                                         int cmp, T *cmp_values)                                             \
    {                                                                                                        \
        struct gshmemi_wait_args a = WAIT_ARGS(T, GSHMEMI_WAIT_SOME, ivars, nelems, indices, status, cmp_values, 1); \
        return gshmemi_wait_poll(&a);                                                                        \
    }
GSHMEM_P2P_SYNC_TYPES(GSHMEMI_DEFINE_P2P_SYNC)
#undef GSHMEMI_DEFINE_P2P_SYNC
