/* Queries and the argument checks every API call shares. */
#include "core/api.h"

#include <gshmem.h>

#include <stdio.h>
#include <string.h>

struct gshmemi_state *gshmemi_api_state(const char *fn)
{
    struct gshmemi_state *st = &gshmemi_state;
    if (!st->initialized) {
        GSHMEMI_ERROR(INIT, "%s called before gshmem_init (or after gshmem_finalize)", fn);
        gshmemi_fatal(st, GSHMEMX_ERR_NOT_INITIALIZED);
    }
    return st;
}

struct gshmemi_transport *gshmemi_api_peer(struct gshmemi_state *st, const char *fn, int pe)
{
    if (pe < 0 || pe >= st->n_pes) {
        GSHMEMI_ERROR(RMA, "%s: pe=%d is out of range (the job has %d PEs)", fn, pe, st->n_pes);
        gshmemi_fatal(st, GSHMEMX_ERR_INVALID_ARG);
    }
    return st->transport_of_pe[pe];
}

size_t gshmemi_api_offset(struct gshmemi_state *st, const char *fn, const char *arg, const void *addr, size_t len,
                          int pe)
{
    size_t off = gshmemi_heap_offset(st, addr, len);
    if (off == SIZE_MAX) {
        char *base = st->heap.base;
        GSHMEMI_ERROR(RMA, "%s: %s=%p (%zu bytes) is outside the symmetric heap [%p, %p) (peer PE %d)", fn, arg,
                      addr, len, (void *)base, (void *)(base + st->heap.size), pe);
        gshmemi_fatal(st, GSHMEMX_ERR_INVALID_ARG);
    }
    return off;
}

size_t gshmemi_api_bytes(struct gshmemi_state *st, const char *fn, size_t nelems, size_t elem)
{
    if (elem && nelems > SIZE_MAX / elem) {
        GSHMEMI_ERROR(RMA, "%s: nelems=%zu elements of %zu bytes overflow size_t", fn, nelems, elem);
        gshmemi_fatal(st, GSHMEMX_ERR_INVALID_ARG);
    }
    return nelems * elem;
}

void gshmemi_api_check_rc(struct gshmemi_state *st, const char *fn, int rc, int pe)
{
    if (rc == 0) return;
    /* A lost peer is told by gshmemi_fatal, once it knows whether the job is ending anyway. */
    if (rc != GSHMEMX_ERR_PEER_LOST) GSHMEMI_ERROR(TRANSPORT, "%s to PE %d failed: %s", fn, pe, gshmemx_strerror(rc));
    gshmemi_fatal(st, rc);
}

int gshmem_my_pe(void)
{
    return gshmemi_api_state(__func__)->my_pe;
}

int gshmem_n_pes(void)
{
    return gshmemi_api_state(__func__)->n_pes;
}

int gshmem_pe_accessible(int pe)
{
    struct gshmemi_state *st = gshmemi_api_state(__func__);
    return pe >= 0 && pe < st->n_pes && st->transport_of_pe[pe] != NULL;
}

int gshmem_addr_accessible(const void *addr, int pe)
{
    struct gshmemi_state *st = gshmemi_api_state(__func__);
    return gshmem_pe_accessible(pe) && gshmemi_heap_offset(st, addr, 1) != SIZE_MAX;
}

void *gshmem_ptr(const void *dest, int pe)
{
    struct gshmemi_state *st = gshmemi_api_state(__func__);
    size_t off = gshmemi_heap_offset(st, dest, 1);
    if (pe < 0 || pe >= st->n_pes || off == SIZE_MAX) return NULL;
    struct gshmemi_transport *tp = st->transport_of_pe[pe];
    return tp->ops->ptr(tp, pe, off);
}

void gshmem_info_get_version(int *major, int *minor)
{
    if (major) *major = GSHMEM_MAJOR_VERSION;
    if (minor) *minor = GSHMEM_MINOR_VERSION;
}

void gshmem_info_get_name(char *name)
{
    if (!name) return;
    snprintf(name, GSHMEM_MAX_NAME_LEN, "%s %d.%d.%d", GSHMEM_VENDOR_STRING, GSHMEMX_VERSION_MAJOR,
             GSHMEMX_VERSION_MINOR, GSHMEMX_VERSION_PATCH);
}

size_t gshmemx_heap_page_size(void)
{
    return gshmemi_api_state(__func__)->heap.page_size;
}

const char *gshmemx_heap_kind(void)
{
    return gshmemi_heap_kind_name(gshmemi_api_state(__func__)->heap.kind);
}
