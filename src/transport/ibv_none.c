/* Builds without <infiniband/verbs.h>: the ibv transport is absent, and says so. */
#ifndef GSHMEM_HAVE_IBV
#include "transport/transport.h"

#include "core/check.h"

#include <gshmem/status.h>

#include <stdio.h>

int gshmemi_transport_ibv_usable(const struct gshmemi_env *env, int gpu, char *why, size_t whylen)
{
    (void)env, (void)gpu;
    snprintf(why, whylen, "this build has no ibv transport (libibverbs-dev was missing when it was built)");
    return 0;
}

int gshmemi_transport_ibv_create(struct gshmemi_bootstrap *bs, struct gshmemi_heap *heap, const struct gshmemi_env *env,
                                 const unsigned char *remote, struct gshmemi_transport **out)
{
    (void)bs, (void)heap, (void)env, (void)remote, (void)out;
    return GSHMEMX_ERR_NOT_SUPPORTED;
}

void gshmemi_transport_ibv_release(void) {}

int gshmemi_transport_ibv_in_use(void)
{
    return 0;
}

const char *gshmemi_transport_ibv_device(void)
{
    return NULL;
}

const char *gshmemi_transport_ibv_loss(void)
{
    return NULL;
}

void gshmemi_transport_ibv_describe(FILE *out)
{
    fprintf(out, "  ibv: not built (libibverbs-dev was missing when this library was built)\n");
}
void gshmemi_transport_ibv_check(FILE *out, const struct gshmemi_env *env, int n_devices, int device_heap, int *fails)
{
    (void)env, (void)device_heap;
    if (n_devices == 0) {
        gshmemi_check_line(out, GSHMEMI_CHECK_OK, "rdma", "no RDMA device: PEs on other nodes use tcp");
        return;
    }
    gshmemi_check_line(out, GSHMEMI_CHECK_WARN, "rdma",
                       "%d RDMA device(s), but this build has no ibv transport: "
                       "PEs on other nodes use tcp",
                       n_devices);
    gshmemi_check_fix(out, "rebuild gshmem with libibverbs-dev installed (apt-get install libibverbs-dev)");
    (void)fails;
}
#endif
