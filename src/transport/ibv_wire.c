/* The ibv transport's blobs, chunking and atomic mapping (see ibv_wire.h). Blobs are
 * little-endian whatever the host, so mixed clusters decode them alike. */
#include "transport/ibv_wire.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define IBV_EP_MAGIC 0x56424947u   /* "GIBV" */
#define IBV_KEYS_MAGIC 0x4d424947u /* "GIBM" */
#define IBV_CM_MAGIC 0x4d434947u   /* "GICM" */
#define IBV_EP_HEADER 48

static void put16(unsigned char *p, uint16_t v)
{
    p[0] = (unsigned char)v, p[1] = (unsigned char)(v >> 8);
}
static void put32(unsigned char *p, uint32_t v)
{
    put16(p, (uint16_t)v), put16(p + 2, (uint16_t)(v >> 16));
}
static void put64(unsigned char *p, uint64_t v)
{
    put32(p, (uint32_t)v), put32(p + 4, (uint32_t)(v >> 32));
}
static uint16_t get16(const unsigned char *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}
static uint32_t get32(const unsigned char *p)
{
    return get16(p) | (uint32_t)get16(p + 2) << 16;
}
static uint64_t get64(const unsigned char *p)
{
    return get32(p) | (uint64_t)get32(p + 4) << 32;
}

static int wire_fail(char *why, size_t whylen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, whylen, fmt, ap);
    va_end(ap);
    return -1;
}

/* Chunks of chunk bytes that cover size bytes (without overflow near 2^64). */
static uint64_t chunks_covering(uint64_t size, uint64_t chunk)
{
    return size / chunk + (size % chunk != 0);
}

#define IBV_EP_RAIL 20 /* link, MTU, LID, GID of rails 1..: after the QP numbers */

size_t gshmemi_ibv_endpoint_size(int n_pes)
{
    return IBV_EP_HEADER + 4 * (size_t)n_pes + IBV_EP_RAIL * (GSHMEMI_IBV_MAX_RAILS - 1);
}

/* Where rail r (>= 1) lies in the blob. */
static size_t ep_rail_offset(int n_pes, int r)
{
    return IBV_EP_HEADER + 4 * (size_t)n_pes + IBV_EP_RAIL * (size_t)(r - 1);
}

void gshmemi_ibv_endpoint_encode(const struct gshmemi_ibv_endpoint *ep, unsigned char *out)
{
    memset(out, 0, IBV_EP_HEADER);
    put32(out, IBV_EP_MAGIC);
    put16(out + 4, GSHMEMI_IBV_WIRE_VERSION);
    out[6] = (unsigned char)ep->link;
    out[7] = (unsigned char)ep->mtu;
    put16(out + 8, ep->lid);
    put32(out + 12, (uint32_t)ep->pe);
    put32(out + 16, (uint32_t)ep->n_pes);
    put32(out + 20, ep->psn);
    memcpy(out + 24, ep->gid, 16);
    out[10] = (unsigned char)ep->cm;
    out[11] = (unsigned char)(ep->nrails > 1 ? ep->nrails : 1);
    memcpy(out + 40, ep->cm_ip, 4);
    put16(out + 44, ep->cm_port);
    out[46] = (unsigned char)ep->rd_atomic;
    for (int i = 0; i < ep->n_pes; i++) put32(out + IBV_EP_HEADER + 4 * (size_t)i, ep->qpn[i]);
    for (int r = 1; r < GSHMEMI_IBV_MAX_RAILS; r++) {
        unsigned char *at = out + ep_rail_offset(ep->n_pes, r);
        memset(at, 0, IBV_EP_RAIL);
        if (r >= ep->nrails) continue;
        at[0] = (unsigned char)ep->rails[r].link;
        at[1] = (unsigned char)ep->rails[r].mtu;
        put16(at + 2, ep->rails[r].lid);
        memcpy(at + 4, ep->rails[r].gid, 16);
    }
}

static int gid_is_zero(const uint8_t gid[16])
{
    for (int i = 0; i < 16; i++)
        if (gid[i]) return 0;
    return 1;
}

/* Whether one rail's address can be reached; fills the reason. */
static int ep_rail_check(const struct gshmemi_ibv_rail_addr *a, int r, char *why, size_t whylen)
{
    char at[24] = "";
    if (r) snprintf(at, sizeof(at), " (rail %d)", r);
    if (a->link != GSHMEMI_IBV_LINK_IB && a->link != GSHMEMI_IBV_LINK_ETH)
        return wire_fail(why, whylen, "unknown link layer %d%s", a->link, at);
    if (a->mtu < 1 || a->mtu > 5) return wire_fail(why, whylen, "invalid path MTU code %d%s", a->mtu, at);
    if (a->link == GSHMEMI_IBV_LINK_IB && a->lid == 0 && gid_is_zero(a->gid))
        return wire_fail(why, whylen, "InfiniBand port without a LID%s", at);
    if (a->link == GSHMEMI_IBV_LINK_ETH && gid_is_zero(a->gid))
        return wire_fail(why, whylen, "RoCE port without a GID%s", at);
    return 0;
}

int gshmemi_ibv_endpoint_decode(const unsigned char *blob, size_t len, int from, int me, int n_pes,
                                struct gshmemi_ibv_endpoint *ep, char *why, size_t whylen)
{
    if (len < IBV_EP_HEADER) return wire_fail(why, whylen, "%zu bytes, shorter than the header", len);
    if (get32(blob) != IBV_EP_MAGIC) return wire_fail(why, whylen, "not an ibv endpoint (bad magic)");
    unsigned version = get16(blob + 4);
    if (version != GSHMEMI_IBV_WIRE_VERSION)
        return wire_fail(why, whylen, "version %u, this build speaks %d", version, GSHMEMI_IBV_WIRE_VERSION);
    ep->link = blob[6];
    ep->mtu = blob[7];
    ep->lid = get16(blob + 8);
    ep->pe = (int)get32(blob + 12);
    ep->n_pes = (int)get32(blob + 16);
    ep->psn = get32(blob + 20);
    memcpy(ep->gid, blob + 24, 16);
    ep->cm = blob[10];
    memcpy(ep->cm_ip, blob + 40, 4);
    ep->cm_port = get16(blob + 44);
    ep->rd_atomic = blob[46];
    if (ep->pe != from) return wire_fail(why, whylen, "claims to be PE %d", ep->pe);
    if (ep->n_pes != n_pes) return wire_fail(why, whylen, "was built for %d PEs, the job has %d", ep->n_pes, n_pes);
    if (len != gshmemi_ibv_endpoint_size(n_pes))
        return wire_fail(why, whylen, "%zu bytes, %zu expected for %d PEs", len, gshmemi_ibv_endpoint_size(n_pes),
                         n_pes);
    ep->nrails = blob[11];
    if (ep->nrails < 1 || ep->nrails > GSHMEMI_IBV_MAX_RAILS)
        return wire_fail(why, whylen, "%d rails, 1 to %d expected", ep->nrails, GSHMEMI_IBV_MAX_RAILS);
    memset(ep->rails, 0, sizeof(ep->rails));
    ep->rails[0].link = ep->link, ep->rails[0].mtu = ep->mtu, ep->rails[0].lid = ep->lid;
    memcpy(ep->rails[0].gid, ep->gid, 16);
    for (int r = 1; r < ep->nrails; r++) {
        const unsigned char *at = blob + ep_rail_offset(n_pes, r);
        ep->rails[r].link = at[0], ep->rails[r].mtu = at[1], ep->rails[r].lid = get16(at + 2);
        memcpy(ep->rails[r].gid, at + 4, 16);
    }
    for (int r = 0; r < ep->nrails; r++)
        if (ep_rail_check(&ep->rails[r], r, why, whylen) != 0) return -1;
    if (ep->psn > 0xffffff) return wire_fail(why, whylen, "PSN 0x%x wider than 24 bits", ep->psn);
    if (ep->rd_atomic < 1) return wire_fail(why, whylen, "takes no RDMA reads or atomics (depth 0)");
    if (ep->cm != GSHMEMI_IBV_CM_BOOTSTRAP && ep->cm != GSHMEMI_IBV_CM_RDMACM)
        return wire_fail(why, whylen, "unknown connection manager %d", ep->cm);
    if (ep->cm == GSHMEMI_IBV_CM_RDMACM && (!(ep->cm_ip[0] | ep->cm_ip[1] | ep->cm_ip[2] | ep->cm_ip[3]) || !ep->cm_port))
        return wire_fail(why, whylen, "librdmacm address %u.%u.%u.%u port %u cannot be reached", ep->cm_ip[0],
                         ep->cm_ip[1], ep->cm_ip[2], ep->cm_ip[3], ep->cm_port);
    ep->qpn = NULL;
    if (me < 0 || me >= n_pes) return wire_fail(why, whylen, "PE %d outside the job", me);
    uint32_t q = get32(blob + IBV_EP_HEADER + 4 * (size_t)me);
    ep->qpn_to_me = q & 0xffffff;
    ep->rail_to_me = (int)(q >> 24);
    if (ep->qpn_to_me == 0) return wire_fail(why, whylen, "invalid QP number 0x%x for PE %d", q, me);
    if (ep->rail_to_me >= ep->nrails)
        return wire_fail(why, whylen, "QP 0x%x for PE %d on rail %d, but it has %d rail%s", ep->qpn_to_me, me,
                         ep->rail_to_me, ep->nrails, ep->nrails == 1 ? "" : "s");
    /* the fields above: the rail its QP for the decoder is on */
    const struct gshmemi_ibv_rail_addr *a = &ep->rails[ep->rail_to_me];
    ep->link = a->link, ep->mtu = a->mtu, ep->lid = a->lid;
    memcpy(ep->gid, a->gid, 16);
    return 0;
}

void gshmemi_ibv_cm_private_encode(int pe, int n_pes, unsigned char out[GSHMEMI_IBV_CM_PRIVATE_SIZE])
{
    memset(out, 0, GSHMEMI_IBV_CM_PRIVATE_SIZE);
    put32(out, IBV_CM_MAGIC);
    put16(out + 4, GSHMEMI_IBV_WIRE_VERSION);
    put32(out + 8, (uint32_t)pe);
    put32(out + 12, (uint32_t)n_pes);
}

int gshmemi_ibv_cm_private_decode(const void *data, size_t len, int n_pes, int *pe, char *why, size_t whylen)
{
    const unsigned char *b = data;
    /* the CM may pad the private data with zeros (InfiniBand CM messages have a fixed size) */
    if (!b || len < GSHMEMI_IBV_CM_PRIVATE_SIZE)
        return wire_fail(why, whylen, "%zu bytes of private data, %d expected", b ? len : 0,
                         GSHMEMI_IBV_CM_PRIVATE_SIZE);
    if (get32(b) != IBV_CM_MAGIC) return wire_fail(why, whylen, "not a gshmem connection (bad magic)");
    unsigned version = get16(b + 4);
    if (version != GSHMEMI_IBV_WIRE_VERSION)
        return wire_fail(why, whylen, "version %u, this build speaks %d", version, GSHMEMI_IBV_WIRE_VERSION);
    uint32_t from = get32(b + 8), n = get32(b + 12);
    if (n != (uint32_t)n_pes) return wire_fail(why, whylen, "from a job of %u PEs, this one has %d", n, n_pes);
    if (from >= n) return wire_fail(why, whylen, "from PE %u, outside the job", from);
    *pe = (int)from;
    return 0;
}

void gshmemi_ibv_heapkeys_encode(const struct gshmemi_ibv_heapkeys *k, unsigned char *out)
{
    memset(out, 0, GSHMEMI_IBV_HEAPKEYS_SIZE);
    put32(out, IBV_KEYS_MAGIC);
    put16(out + 4, GSHMEMI_IBV_WIRE_VERSION);
    out[6] = (unsigned char)k->heap_index;
    out[7] = (unsigned char)k->nchunks;
    put64(out + 8, k->addr);
    put64(out + 16, k->size);
    put64(out + 24, k->chunk);
    for (int i = 0; i < k->nchunks && i < GSHMEMI_IBV_MAX_CHUNKS; i++) put32(out + 40 + 4 * (size_t)i, k->rkey[i]);
}

int gshmemi_ibv_heapkeys_decode(const unsigned char *blob, size_t len, unsigned heap_index, uint64_t min_size,
                                struct gshmemi_ibv_heapkeys *k, char *why, size_t whylen)
{
    if (len != GSHMEMI_IBV_HEAPKEYS_SIZE)
        return wire_fail(why, whylen, "%zu bytes, %d expected", len, GSHMEMI_IBV_HEAPKEYS_SIZE);
    if (get32(blob) != IBV_KEYS_MAGIC) return wire_fail(why, whylen, "not an ibv heap registration (bad magic)");
    unsigned version = get16(blob + 4);
    if (version != GSHMEMI_IBV_WIRE_VERSION)
        return wire_fail(why, whylen, "version %u, this build speaks %d", version, GSHMEMI_IBV_WIRE_VERSION);
    k->heap_index = blob[6];
    k->nchunks = blob[7];
    k->addr = get64(blob + 8);
    k->size = get64(blob + 16);
    k->chunk = get64(blob + 24);
    if (k->heap_index != heap_index)
        return wire_fail(why, whylen, "for heap %u, expected heap %u", k->heap_index, heap_index);
    if (k->size < min_size)
        return wire_fail(why, whylen, "heap of %llu bytes, smaller than this PE's %llu", (unsigned long long)k->size,
                         (unsigned long long)min_size);
    if (k->nchunks < 1 || k->nchunks > GSHMEMI_IBV_MAX_CHUNKS || k->chunk == 0 || (k->chunk & (k->chunk - 1)))
        return wire_fail(why, whylen, "%d registrations of %llu bytes", k->nchunks, (unsigned long long)k->chunk);
    if ((uint64_t)k->nchunks != chunks_covering(k->size, k->chunk))
        return wire_fail(why, whylen, "%d registrations of %llu bytes do not match a heap of %llu", k->nchunks,
                         (unsigned long long)k->chunk, (unsigned long long)k->size);
    if (k->addr + k->size < k->addr) return wire_fail(why, whylen, "heap wraps the address space");
    for (int i = 0; i < k->nchunks; i++) k->rkey[i] = get32(blob + 40 + 4 * (size_t)i);
    return 0;
}

uint64_t gshmemi_ibv_chunk_size(uint64_t size, uint64_t max_mr)
{
    uint64_t chunk = 1;
    while (chunk < size && chunk < ((uint64_t)1 << 62)) chunk <<= 1;
    if (max_mr)
        while (chunk > max_mr) chunk >>= 1;
    if (chunk == 0 || chunks_covering(size, chunk) > GSHMEMI_IBV_MAX_CHUNKS) return 0;
    return chunk;
}

size_t gshmemi_ibv_chunk_span(uint64_t offset, size_t len, uint64_t chunk)
{
    uint64_t room = chunk - offset % chunk;
    return len < room ? len : (size_t)room;
}

int gshmemi_ibv_amo_plan(const struct gshmemi_amo *amo, struct gshmemi_ibv_amo_plan *plan)
{
    if ((amo->width != 4 && amo->width != 8) || amo->offset % amo->width) return -1;
    memset(plan, 0, sizeof(*plan));
    plan->word_offset = amo->offset & ~(uint64_t)7;
    plan->shift = (unsigned)(amo->offset & 7) * 8; /* little-endian lanes */
    plan->kind = GSHMEMI_IBV_AMO_LOOP;
    if (amo->op == GSHMEMI_AMO_FETCH || (amo->op == GSHMEMI_AMO_ADD && (amo->width == 8 || plan->shift == 32))) {
        /* an addend in the high lane drops its carry out of the word, as a 32-bit add would */
        plan->kind = GSHMEMI_IBV_AMO_FADD;
        plan->add = amo->op == GSHMEMI_AMO_ADD ? amo->operand << plan->shift : 0;
    } else if (amo->op == GSHMEMI_AMO_COMPARE_SWAP && amo->width == 8) {
        plan->kind = GSHMEMI_IBV_AMO_CAS;
        plan->compare = amo->compare;
        plan->swap = amo->operand;
    }
    return 0;
}

uint64_t gshmemi_ibv_amo_fetched(const struct gshmemi_amo *amo, unsigned shift, uint64_t word)
{
    return amo->width == 8 ? word : (word >> shift) & 0xffffffffu;
}

int gshmemi_ibv_amo_next(const struct gshmemi_amo *amo, unsigned shift, uint64_t word, uint64_t *next)
{
    uint64_t mask = amo->width == 8 ? ~(uint64_t)0 : (uint64_t)0xffffffffu;
    uint64_t old = gshmemi_ibv_amo_fetched(amo, shift, word), val = old;
    uint64_t operand = amo->operand & mask;
    switch (amo->op) {
    case GSHMEMI_AMO_FETCH: return 0;
    case GSHMEMI_AMO_COMPARE_SWAP:
        if (old != (amo->compare & mask)) return 0;
        val = operand;
        break;
    case GSHMEMI_AMO_SET:
    case GSHMEMI_AMO_SWAP: val = operand; break;
    case GSHMEMI_AMO_ADD: val = (old + operand) & mask; break;
    case GSHMEMI_AMO_AND: val = old & operand; break;
    case GSHMEMI_AMO_OR: val = old | operand; break;
    case GSHMEMI_AMO_XOR: val = old ^ operand; break;
    default: return 0;
    }
    *next = (word & ~(mask << shift)) | val << shift;
    return 1;
}
