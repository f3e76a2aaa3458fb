/* Signals: 64-bit words updated atomically after the data they announce. */
#include "core/api.h"

#include <gshmem.h>

uint64_t gshmem_signal_fetch(const uint64_t *sig_addr)
{
    struct gshmemi_state *st = gshmemi_api_state(__func__);
    if (st->check_args || !st->heap_host_accessible)
        gshmemi_api_offset(st, __func__, "sig_addr", sig_addr, sizeof(*sig_addr), st->my_pe);
    if (st->heap_host_accessible) return __atomic_load_n(sig_addr, __ATOMIC_ACQUIRE);
    return gshmemi_amo(__func__, (void *)sig_addr, GSHMEMI_AMO_FETCH, sizeof(*sig_addr), 0, 0, st->my_pe);
}

void gshmem_signal_add(uint64_t *sig_addr, uint64_t signal, int pe)
{
    gshmemi_amo(__func__, sig_addr, GSHMEMI_AMO_ADD, sizeof(*sig_addr), signal, 0, pe);
}

void gshmem_signal_set(uint64_t *sig_addr, uint64_t signal, int pe)
{
    gshmemi_amo(__func__, sig_addr, GSHMEMI_AMO_SET, sizeof(*sig_addr), signal, 0, pe);
}

uint64_t gshmem_signal_wait_until(uint64_t *sig_addr, int cmp, uint64_t cmp_value)
{
    uint64_t satisfied = 0;
    struct gshmemi_wait_args a = {.fn = __func__, .ivars = sig_addr, .nelems = 1, .width = sizeof(uint64_t),
                                  .cmp = cmp, .values = &cmp_value, .mode = GSHMEMI_WAIT_ALL,
                                  .value_out = &satisfied};
    gshmemi_wait_until(&a);
    return satisfied;
}
