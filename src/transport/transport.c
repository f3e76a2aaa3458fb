/* Transport selection: which transport reaches each PE. Core calls only this. */
#include "transport/transport.h"

#include "bootstrap/bootstrap.h"
#include "core/log.h"

#include <gshmem/status.h>

int gshmemi_transports_create(struct gshmemi_bootstrap *bs, struct gshmemi_heap *heap, double timeout_s,
                              struct gshmemi_transport **per_pe, struct gshmemi_transport_set *set)
{
    struct gshmemi_transport *p2p = NULL;
    set->count = 0;
    int rc = gshmemi_transport_p2p_create(bs, heap, timeout_s, &p2p);
    if (rc != 0) return rc;
    set->list[set->count++] = p2p;
    for (int pe = 0; pe < bs->nranks; pe++) {
        if (!gshmemi_transport_p2p_reaches(p2p, pe)) {
            GSHMEMI_ERROR(TRANSPORT, "PE %d is on another node than PE %d and this version has no remote "
                                     "transport yet", pe, bs->rank);
            return GSHMEMX_ERR_NOT_SUPPORTED;
        }
        per_pe[pe] = p2p;
    }
    return 0;
}

void gshmemi_transports_destroy(struct gshmemi_transport_set *set)
{
    for (int i = 0; i < set->count; i++) set->list[i]->ops->destroy(set->list[i]);
    set->count = 0;
}
