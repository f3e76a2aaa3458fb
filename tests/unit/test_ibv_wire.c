/* The ibv transport's blobs (src/transport/ibv_wire.c): the endpoint and heap key
 * blobs: round trips, byte layout, every refusal, random input (fixed-seed generator).
 * Chunking and atomics: test_ibv_amo.c. */
#include "transport/ibv_wire.h"

#include "test_rng.h"

#include <criterion/criterion.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* ---------------------------------------------------------------- endpoint blobs */

/* PE pe's QP for PE i: mixes both, never 0, at most 24 bits. */
static uint32_t qpn_of(int pe, int i)
{
    uint32_t v = ((uint32_t)pe * 0x3d1u + (uint32_t)i * 0x1f3u + 0x10001u) & 0xffffffu;
    return v ? v : 1;
}

struct ep_fixture {
    struct gshmemi_ibv_endpoint ep;
    uint32_t *qpn;
    unsigned char *blob;
    size_t len;
};

static void ep_make(struct ep_fixture *f, int pe, int n_pes, int link)
{
    memset(f, 0, sizeof(*f));
    f->qpn = malloc(sizeof(uint32_t) * (size_t)n_pes);
    cr_assert_not_null(f->qpn);
    f->ep.nrails = 1 + pe % 3; /* PE 0: one rail, PE 1: two, PE 2: three, ... */
    for (int i = 0; i < n_pes; i++) f->qpn[i] = qpn_of(pe, i) | (uint32_t)(i % f->ep.nrails) << 24;
    for (int r = 1; r < f->ep.nrails; r++) {
        f->ep.rails[r].link = r % 2 ? GSHMEMI_IBV_LINK_ETH : link;
        f->ep.rails[r].mtu = 1 + (pe + r) % 5;
        f->ep.rails[r].lid = (uint16_t)(0x1300 + pe * 4 + r);
        for (int i = 0; i < 16; i++) f->ep.rails[r].gid[i] = (uint8_t)(0x90 + pe + r * 7 + i);
    }
    f->ep.pe = pe;
    f->ep.n_pes = n_pes;
    f->ep.link = link;
    f->ep.mtu = 1 + pe % 5;
    f->ep.lid = (uint16_t)(0x1200 + pe);
    for (int i = 0; i < 16; i++) f->ep.gid[i] = (uint8_t)(0x40 + pe * 3 + i);
    f->ep.psn = (0xabcdefu ^ (uint32_t)pe * 0x101u) & 0xffffffu;
    f->ep.rd_atomic = 1 + pe % 16;
    if (pe % 2) { /* odd PEs connect through librdmacm */
        f->ep.cm = GSHMEMI_IBV_CM_RDMACM;
        f->ep.cm_ip[0] = 198, f->ep.cm_ip[1] = 18, f->ep.cm_ip[2] = (uint8_t)(pe >> 8), f->ep.cm_ip[3] = (uint8_t)pe;
        f->ep.cm_port = (uint16_t)(20000 + pe);
    }
    f->ep.qpn = f->qpn;
    f->len = gshmemi_ibv_endpoint_size(n_pes);
    cr_assert_eq(f->len, 48 + 4 * (size_t)n_pes + 60);
    /* poisoned, with 16 bytes past the end that encode must not touch */
    f->blob = malloc(f->len + 16);
    cr_assert_not_null(f->blob);
    memset(f->blob, 0xa5, f->len + 16);
    gshmemi_ibv_endpoint_encode(&f->ep, f->blob);
    for (size_t i = f->len; i < f->len + 16; i++) cr_assert_eq(f->blob[i], 0xa5, "encode wrote byte %zu", i);
}

static void ep_free(struct ep_fixture *f)
{
    free(f->qpn);
    free(f->blob);
}

static void put16le(unsigned char *p, uint16_t v) { p[0] = (unsigned char)v, p[1] = (unsigned char)(v >> 8); }
static void put32le(unsigned char *p, uint32_t v) { put16le(p, (uint16_t)v), put16le(p + 2, (uint16_t)(v >> 16)); }
static uint32_t get32le(const unsigned char *p)
{
    return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t get64le(const unsigned char *p) { return get32le(p) | (uint64_t)get32le(p + 4) << 32; }

static int ep_decode(const unsigned char *blob, size_t len, int from, int me, int n_pes,
                     struct gshmemi_ibv_endpoint *out, char *why, size_t whylen)
{
    memset(out, 0x5a, sizeof(*out));
    why[0] = '\0';
    return gshmemi_ibv_endpoint_decode(blob, len, from, me, n_pes, out, why, whylen);
}

TestSuite(ibv_endpoint, .timeout = 60);

Test(ibv_endpoint, round_trip_as_every_pe)
{
    static const int sizes[] = {1, 2, 7, 1000};
    for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
        int n = sizes[s];
        int publishers[] = {0, n / 2, n - 1};
        for (int p = 0; p < 3; p++) {
            int pe = publishers[p];
            struct ep_fixture f;
            ep_make(&f, pe, n, pe % 2 ? GSHMEMI_IBV_LINK_ETH : GSHMEMI_IBV_LINK_IB);
            for (int me = 0; me < n; me++) {
                struct gshmemi_ibv_endpoint out;
                char why[160];
                cr_assert_eq(ep_decode(f.blob, f.len, pe, me, n, &out, why, sizeof(why)), 0,
                             "n_pes %d, PE %d's blob as PE %d: %s", n, pe, me, why);
                cr_assert_eq(out.pe, pe);
                cr_assert_eq(out.n_pes, n);
                /* the address is that of the rail its QP for `me` is on */
                int r = me % f.ep.nrails;
                cr_assert_eq(out.nrails, f.ep.nrails);
                cr_assert_eq(out.rail_to_me, r, "PE %d's QP for PE %d: rail %d, want %d", pe, me, out.rail_to_me, r);
                cr_assert_eq(out.link, r ? f.ep.rails[r].link : f.ep.link);
                cr_assert_eq(out.mtu, r ? f.ep.rails[r].mtu : f.ep.mtu);
                cr_assert_eq(out.lid, r ? f.ep.rails[r].lid : f.ep.lid);
                cr_assert_arr_eq(out.gid, r ? f.ep.rails[r].gid : f.ep.gid, 16);
                for (int q = 1; q < f.ep.nrails; q++) {
                    cr_assert_eq(out.rails[q].link, f.ep.rails[q].link);
                    cr_assert_eq(out.rails[q].mtu, f.ep.rails[q].mtu);
                    cr_assert_eq(out.rails[q].lid, f.ep.rails[q].lid);
                    cr_assert_arr_eq(out.rails[q].gid, f.ep.rails[q].gid, 16);
                }
                cr_assert_eq(out.psn, f.ep.psn);
                cr_assert_eq(out.rd_atomic, f.ep.rd_atomic);
                cr_assert_eq(out.cm, f.ep.cm);
                cr_assert_arr_eq(out.cm_ip, f.ep.cm_ip, 4);
                cr_assert_eq(out.cm_port, f.ep.cm_port);
                cr_assert_null(out.qpn, "decode hands back no qpn array");
                cr_assert_eq(out.qpn_to_me, qpn_of(pe, me), "n_pes %d, PE %d's QP for PE %d: 0x%x, want 0x%x", n,
                             pe, me, out.qpn_to_me, qpn_of(pe, me));
            }
            ep_free(&f);
        }
    }
}

Test(ibv_endpoint, little_endian_layout_at_fixed_offsets)
{
    uint32_t qpn[5] = {0x0a0b0c, 0x01111213, 0, 0xfffffe, 0x01000001}; /* PEs 1 and 4 on rail 1 */
    struct gshmemi_ibv_endpoint ep = {.pe = 3, .n_pes = 5, .link = GSHMEMI_IBV_LINK_ETH, .mtu = 4, .lid = 0xbeef,
                                      .psn = 0x123456, .qpn = qpn, .cm = GSHMEMI_IBV_CM_RDMACM,
                                      .cm_ip = {198, 18, 0, 7}, .cm_port = 0x4e21, .nrails = 2, .rd_atomic = 9};
    for (int i = 0; i < 16; i++) ep.gid[i] = (uint8_t)(0xc0 + i);
    ep.rails[1].link = GSHMEMI_IBV_LINK_IB, ep.rails[1].mtu = 3, ep.rails[1].lid = 0x1234;
    for (int i = 0; i < 16; i++) ep.rails[1].gid[i] = (uint8_t)(0xd0 + i);
    ep.rails[2].link = GSHMEMI_IBV_LINK_ETH, ep.rails[2].mtu = 5; /* beyond nrails: not written */
    unsigned char b[128 + 8];
    memset(b, 0xa5, sizeof(b));
    gshmemi_ibv_endpoint_encode(&ep, b);
    cr_expect_eq(memcmp(b, "GIBV", 4), 0, "magic \"GIBV\" at byte 0");
    cr_expect(b[4] == 3 && b[5] == 0, "version 3, little-endian, at byte 4");
    cr_expect_eq(b[6], GSHMEMI_IBV_LINK_ETH);
    cr_expect_eq(b[7], 4);
    cr_expect(b[8] == 0xef && b[9] == 0xbe, "LID little-endian at byte 8");
    cr_expect_eq(b[10], GSHMEMI_IBV_CM_RDMACM, "connection manager at byte 10");
    cr_expect_eq(b[11], 2, "rails at byte 11");
    static const unsigned char cm_at40[8] = {198, 18, 0, 7, 0x21, 0x4e, 9, 0};
    cr_expect_arr_eq(b + 40, cm_at40, 8, "IPv4 address (network order), port (little-endian), depth, zero at 40");
    static const unsigned char pe_le[4] = {3, 0, 0, 0}, n_le[4] = {5, 0, 0, 0}, psn_le[4] = {0x56, 0x34, 0x12, 0};
    cr_expect_arr_eq(b + 12, pe_le, 4);
    cr_expect_arr_eq(b + 16, n_le, 4);
    cr_expect_arr_eq(b + 20, psn_le, 4);
    cr_expect_arr_eq(b + 24, ep.gid, 16);
    for (int i = 0; i < 5; i++) {
        unsigned char le[4] = {(unsigned char)qpn[i], (unsigned char)(qpn[i] >> 8), (unsigned char)(qpn[i] >> 16),
                               (unsigned char)(qpn[i] >> 24)};
        cr_expect_arr_eq(b + 48 + 4 * i, le, 4, "qpn[%d] little-endian, rail in the high byte, at byte %d", i,
                         48 + 4 * i);
    }
    /* rails 1..3 after the QP numbers, 20 bytes each: link, MTU, LID, GID; unused ones zero */
    unsigned char rail1[20] = {GSHMEMI_IBV_LINK_IB, 3, 0x34, 0x12};
    memcpy(rail1 + 4, ep.rails[1].gid, 16);
    cr_expect_arr_eq(b + 68, rail1, 20, "rail 1 at byte 68");
    for (int i = 88; i < 128; i++) cr_expect_eq(b[i], 0, "unused rail byte %d is zeroed", i);
    for (int i = 128; i < 136; i++) cr_expect_eq(b[i], 0xa5, "byte %d past the blob", i);
}

/* Decoding must fail with a reason containing word. */
static void ep_refused(const unsigned char *blob, size_t len, int from, int me, int n_pes, const char *word,
                       const char *what)
{
    struct gshmemi_ibv_endpoint out;
    char why[160];
    memset(why, 'x', sizeof(why));
    cr_assert_eq(ep_decode(blob, len, from, me, n_pes, &out, why, sizeof(why)), -1, "%s should be refused", what);
    cr_assert(why[0] != '\0', "%s: a reason is given", what);
    cr_assert(strstr(why, word) != NULL, "%s: reason '%s' should mention '%s'", what, why, word);
}

Test(ibv_endpoint, malformed_blobs_are_refused_with_a_reason)
{
    struct ep_fixture f;
    ep_make(&f, 1, 4, GSHMEMI_IBV_LINK_IB);
    unsigned char *b = malloc(f.len + 8);
    cr_assert_not_null(b);
    struct gshmemi_ibv_endpoint out;
    char why[160];
#define FRESH() (memset(b, 0, f.len + 8), memcpy(b, f.blob, f.len))
    FRESH();
    cr_assert_eq(ep_decode(b, f.len, 1, 2, 4, &out, why, sizeof(why)), 0, "the unmodified blob decodes: %s", why);

    ep_refused(b, 0, 1, 2, 4, "shorter", "an empty blob");
    ep_refused(b, 47, 1, 2, 4, "shorter", "47 bytes");
    FRESH(), b[0] = 'X';
    ep_refused(b, f.len, 1, 2, 4, "magic", "bad magic");
    FRESH(), memcpy(b, "GIBM", 4);
    ep_refused(b, f.len, 1, 2, 4, "magic", "a heap keys magic");
    FRESH(), put16le(b + 4, 1);
    ep_refused(b, f.len, 1, 2, 4, "version 1", "version 1 (no connection manager field)");
    FRESH(), put16le(b + 4, 2);
    ep_refused(b, f.len, 1, 2, 4, "version 2", "version 2 (no rails, no depth)");
    FRESH(), put16le(b + 4, 4);
    ep_refused(b, f.len, 1, 2, 4, "version 4", "version 4");
    FRESH(), put16le(b + 4, 0x300);
    ep_refused(b, f.len, 1, 2, 4, "version 768", "version 3 read big-endian");
    FRESH();
    ep_refused(b, f.len, 0, 2, 4, "PE 1", "PE 1's blob published as PE 0's");
    FRESH(), put32le(b + 12, 0xffffffffu);
    ep_refused(b, f.len, 1, 2, 4, "claims", "a blob claiming PE -1");
    FRESH();
    ep_refused(b, f.len, 1, 2, 5, "4 PEs", "a 4-PE blob in a 5-PE job");
    ep_refused(b, f.len, 1, 2, 3, "4 PEs", "a 4-PE blob in a 3-PE job");
    FRESH();
    ep_refused(b, f.len - 1, 1, 2, 4, "expected", "one byte short");
    ep_refused(b, f.len + 4, 1, 2, 4, "expected", "four bytes long");
    ep_refused(b, 48, 1, 2, 4, "expected", "the header alone");
    for (int link = 0; link < 256; link += (link < 4 ? 1 : 61)) {
        if (link == GSHMEMI_IBV_LINK_IB || link == GSHMEMI_IBV_LINK_ETH) continue;
        FRESH(), b[6] = (unsigned char)link;
        char what[64];
        snprintf(what, sizeof(what), "link layer %d", link);
        ep_refused(b, f.len, 1, 2, 4, "link", what);
    }
    FRESH(), b[7] = 0;
    ep_refused(b, f.len, 1, 2, 4, "MTU", "MTU code 0");
    FRESH(), b[7] = 6;
    ep_refused(b, f.len, 1, 2, 4, "MTU", "MTU code 6");
    FRESH(), b[7] = 255;
    ep_refused(b, f.len, 1, 2, 4, "MTU", "MTU code 255");
    for (int mtu = 1; mtu <= 5; mtu++) {
        FRESH(), b[7] = (unsigned char)mtu;
        cr_expect_eq(ep_decode(b, f.len, 1, 2, 4, &out, why, sizeof(why)), 0, "MTU code %d: %s", mtu, why);
        cr_expect_eq(out.mtu, mtu);
    }

    /* InfiniBand: a LID or a GID (routed) will do, neither will not */
    FRESH(), b[6] = GSHMEMI_IBV_LINK_IB, put16le(b + 8, 0), memset(b + 24, 0, 16);
    ep_refused(b, f.len, 1, 2, 4, "LID", "InfiniBand with neither LID nor GID");
    FRESH(), b[6] = GSHMEMI_IBV_LINK_IB, put16le(b + 8, 0);
    cr_expect_eq(ep_decode(b, f.len, 1, 2, 4, &out, why, sizeof(why)), 0, "InfiniBand with a GID only: %s", why);
    FRESH(), b[6] = GSHMEMI_IBV_LINK_IB, memset(b + 24, 0, 16);
    cr_expect_eq(ep_decode(b, f.len, 1, 2, 4, &out, why, sizeof(why)), 0, "InfiniBand with a LID only: %s", why);
    cr_expect_eq(out.lid, f.ep.lid);
    /* RoCE: the GID is the address, a LID means nothing */
    FRESH(), b[6] = GSHMEMI_IBV_LINK_ETH, memset(b + 24, 0, 16);
    ep_refused(b, f.len, 1, 2, 4, "GID", "RoCE with a zero GID");
    FRESH(), b[6] = GSHMEMI_IBV_LINK_ETH, put16le(b + 8, 0), memset(b + 24, 0, 16), b[39] = 1;
    cr_expect_eq(ep_decode(b, f.len, 1, 2, 4, &out, why, sizeof(why)), 0, "RoCE, no LID, GID ::1: %s", why);

    FRESH(), put32le(b + 20, 0x1000000);
    ep_refused(b, f.len, 1, 2, 4, "PSN", "PSN 0x1000000");
    FRESH(), put32le(b + 20, 0xffffffffu);
    ep_refused(b, f.len, 1, 2, 4, "PSN", "PSN 0xffffffff");
    FRESH(), put32le(b + 20, 0xffffff);
    cr_expect_eq(ep_decode(b, f.len, 1, 2, 4, &out, why, sizeof(why)), 0, "PSN 0xffffff: %s", why);
    cr_expect_eq(out.psn, 0xffffffu);

    FRESH(), put32le(b + 48 + 4 * 2, 0);
    ep_refused(b, f.len, 1, 2, 4, "QP", "no QP for PE 2");
    cr_expect_eq(ep_decode(b, f.len, 1, 3, 4, &out, why, sizeof(why)), 0, "PE 3 is not bothered by PE 2's 0: %s",
                 why);
    cr_expect_eq(out.qpn_to_me, qpn_of(1, 3));
    FRESH(), put32le(b + 48 + 4 * 2, 0x1000000);
    ep_refused(b, f.len, 1, 2, 4, "QP", "QP number 0x1000000");
    FRESH(), put32le(b + 48 + 4 * 2, 0xffffff);
    cr_expect_eq(ep_decode(b, f.len, 1, 2, 4, &out, why, sizeof(why)), 0, "QP number 0xffffff: %s", why);
    cr_expect_eq(out.qpn_to_me, 0xffffffu);

    /* PE 1 publishes two rails (rail 1 at 48 + 16 = 64); its QP for PE 2 is on rail 0, for PE 3 on rail 1 */
    cr_expect_eq(ep_decode(b, f.len, 1, 3, 4, &out, why, sizeof(why)), 0, "%s", why);
    cr_expect_eq(out.rail_to_me, 1);
    cr_expect_eq(out.link, GSHMEMI_IBV_LINK_ETH, "rail 1's link layer");
    FRESH(), b[11] = 0;
    ep_refused(b, f.len, 1, 2, 4, "0 rails", "no rail");
    FRESH(), b[11] = 5;
    ep_refused(b, f.len, 1, 2, 4, "5 rails", "five rails");
    FRESH(), b[11] = 1;
    ep_refused(b, f.len, 1, 3, 4, "on rail 1, but it has 1 rail", "a QP on a rail it does not have");
    cr_expect_eq(ep_decode(b, f.len, 1, 2, 4, &out, why, sizeof(why)), 0, "PE 2's QP is on rail 0: %s", why);
    FRESH(), b[64] = 7;
    ep_refused(b, f.len, 1, 2, 4, "rail 1", "rail 1 with link layer 7 (even for a PE on rail 0)");
    FRESH(), b[65] = 0;
    ep_refused(b, f.len, 1, 3, 4, "MTU code 0 (rail 1)", "rail 1 with MTU code 0");
    FRESH(), memset(b + 68, 0, 16);
    ep_refused(b, f.len, 1, 3, 4, "RoCE port without a GID (rail 1)", "rail 1 (RoCE) without a GID");

    /* PE 1 (odd) publishes a librdmacm address */
    FRESH(), b[46] = 0;
    ep_refused(b, f.len, 1, 2, 4, "depth 0", "no reads or atomics");
    FRESH(), b[46] = 255;
    cr_expect_eq(ep_decode(b, f.len, 1, 2, 4, &out, why, sizeof(why)), 0, "depth 255: %s", why);
    cr_expect_eq(out.rd_atomic, 255);
    FRESH(), b[10] = 2;
    ep_refused(b, f.len, 1, 2, 4, "connection manager", "connection manager 2");
    FRESH(), b[10] = 255;
    ep_refused(b, f.len, 1, 2, 4, "connection manager", "connection manager 255");
    FRESH(), memset(b + 40, 0, 4);
    ep_refused(b, f.len, 1, 2, 4, "librdmacm address 0.0.0.0", "librdmacm without an address");
    FRESH(), put16le(b + 44, 0);
    ep_refused(b, f.len, 1, 2, 4, "port 0", "librdmacm without a port");
    FRESH(), b[10] = GSHMEMI_IBV_CM_BOOTSTRAP, memset(b + 40, 0, 6);
    cr_expect_eq(ep_decode(b, f.len, 1, 2, 4, &out, why, sizeof(why)), 0, "bootstrap needs no address: %s", why);
    cr_expect_eq(out.cm, GSHMEMI_IBV_CM_BOOTSTRAP);

    FRESH();
    ep_refused(b, f.len, 1, -1, 4, "outside", "decoded as PE -1");
    ep_refused(b, f.len, 1, 4, 4, "outside", "decoded as PE 4 of 4");
    ep_refused(b, f.len, 1, 1000, 4, "outside", "decoded as PE 1000 of 4");
#undef FRESH
    free(b);
    ep_free(&f);
}

Test(ibv_endpoint, small_reason_buffers_stay_terminated)
{
    struct ep_fixture f;
    ep_make(&f, 0, 3, GSHMEMI_IBV_LINK_IB);
    f.blob[0] ^= 1;
    for (size_t whylen = 1; whylen < 12; whylen++) {
        char why[32];
        memset(why, 'z', sizeof(why));
        struct gshmemi_ibv_endpoint out;
        cr_expect_eq(gshmemi_ibv_endpoint_decode(f.blob, f.len, 0, 1, 3, &out, why, whylen), -1);
        cr_expect_eq(why[whylen - 1], '\0', "a %zu-byte reason buffer ends in NUL", whylen);
        for (size_t i = whylen; i < sizeof(why); i++)
            cr_expect_eq(why[i], 'z', "byte %zu past a %zu-byte buffer", i, whylen);
    }
    ep_free(&f);
}

/* Whatever the bytes, decode answers 0 with a consistent endpoint or -1 with a reason. */
static void ep_fuzz_one(const unsigned char *blob, size_t len, int from, int me, int n_pes, const char *what)
{
    struct gshmemi_ibv_endpoint out;
    char why[160];
    int rc = ep_decode(blob, len, from, me, n_pes, &out, why, sizeof(why));
    if (rc == -1) {
        cr_assert(why[0] != '\0', "%s: refused without a reason", what);
        return;
    }
    cr_assert_eq(rc, 0, "%s: decode returned %d", what, rc);
    cr_assert_eq(len, gshmemi_ibv_endpoint_size(n_pes), "%s: accepted a blob of %zu bytes", what, len);
    cr_assert(me >= 0 && me < n_pes, "%s: accepted as PE %d of %d", what, me, n_pes);
    cr_assert_eq(out.pe, from, "%s", what);
    cr_assert_eq(out.n_pes, n_pes, "%s", what);
    cr_assert(out.link == GSHMEMI_IBV_LINK_IB || out.link == GSHMEMI_IBV_LINK_ETH, "%s: link %d", what, out.link);
    cr_assert(out.mtu >= 1 && out.mtu <= 5, "%s: MTU %d", what, out.mtu);
    cr_assert(out.psn <= 0xffffff, "%s: PSN 0x%x", what, out.psn);
    cr_assert(out.rd_atomic >= 1 && out.rd_atomic <= 255, "%s: depth %d", what, out.rd_atomic);
    cr_assert(out.cm == GSHMEMI_IBV_CM_BOOTSTRAP || out.cm == GSHMEMI_IBV_CM_RDMACM, "%s: CM %d", what, out.cm);
    if (out.cm == GSHMEMI_IBV_CM_RDMACM)
        cr_assert((out.cm_ip[0] | out.cm_ip[1] | out.cm_ip[2] | out.cm_ip[3]) && out.cm_port, "%s: address", what);
    cr_assert(out.qpn_to_me >= 1 && out.qpn_to_me <= 0xffffff, "%s: QP 0x%x", what, out.qpn_to_me);
    cr_assert_eq(out.qpn_to_me, get32le(blob + 48 + 4 * (size_t)me) & 0xffffff, "%s", what);
    cr_assert(out.nrails >= 1 && out.nrails <= 4, "%s: %d rails", what, out.nrails);
    cr_assert_eq(out.rail_to_me, (int)(get32le(blob + 48 + 4 * (size_t)me) >> 24), "%s", what);
    cr_assert(out.rail_to_me < out.nrails, "%s: rail %d of %d", what, out.rail_to_me, out.nrails);
}

Test(ibv_endpoint, fuzz_corruptions_and_random_bytes)
{
    rng_seed(0x1b5eed01);
    struct ep_fixture f;
    ep_make(&f, 3, 7, GSHMEMI_IBV_LINK_ETH);
    char what[96];
    /* every single byte of the blob, every value */
    unsigned char *b = malloc(f.len);
    cr_assert_not_null(b);
    for (size_t at = 0; at < f.len; at++)
        for (int v = 0; v < 256; v++) {
            memcpy(b, f.blob, f.len);
            b[at] = (unsigned char)v;
            snprintf(what, sizeof(what), "byte %zu set to 0x%02x", at, v);
            ep_fuzz_one(b, f.len, 3, (int)(at + (size_t)v) % 7, 7, what);
        }
    /* a few random corruptions at once, random truncations, random callers */
    for (int round = 0; round < 20000; round++) {
        memcpy(b, f.blob, f.len);
        int n = 1 + (int)(rng() % 4);
        for (int i = 0; i < n; i++) b[rng() % f.len] = (unsigned char)rng();
        size_t len = rng() % 4 ? f.len : (size_t)(rng() % (f.len + 1));
        int me = (int)(rng() % 10) - 1;
        int n_pes = rng() % 8 ? 7 : (int)(rng() % 9);
        int from = rng() % 8 ? 3 : (int)(rng() % 8);
        snprintf(what, sizeof(what), "corruption round %d (len %zu, PE %d of %d)", round, len, me, n_pes);
        unsigned char *exact = malloc(len ? len : 1); /* no slack past len */
        cr_assert_not_null(exact);
        memcpy(exact, b, len);
        ep_fuzz_one(exact, len, from, me, n_pes, what);
        free(exact);
    }
    free(b);
    /* random bytes, sometimes behind a valid magic and version so the later checks run */
    for (int round = 0; round < 20000; round++) {
        size_t len = (size_t)(rng() % 200);
        unsigned char *r = malloc(len ? len : 1);
        cr_assert_not_null(r);
        for (size_t i = 0; i < len; i++) r[i] = (unsigned char)rng();
        if (len >= 6 && rng() % 2) memcpy(r, "GIBV\3\0", 6);
        int n_pes = len >= 108 && rng() % 2 ? (int)((len - 108) / 4) : (int)(rng() % 20);
        int from = len >= 16 && rng() % 2 ? (int)get32le(r + 12) : (int)(rng() % 20);
        if (len >= 20 && rng() % 2) put32le(r + 16, (uint32_t)n_pes);
        int me = (int)(rng() % 22) - 1;
        snprintf(what, sizeof(what), "random round %d (len %zu)", round, len);
        ep_fuzz_one(r, len, from, me, n_pes, what);
        free(r);
    }
    ep_free(&f);
}

/* ------------------------------------------------ librdmacm connection private data */

TestSuite(ibv_cm_private, .timeout = 60);

Test(ibv_cm_private, round_trip_layout_and_padding)
{
    static const int sizes[] = {1, 2, 5, 4096};
    for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
        for (int pe = 0; pe < sizes[s]; pe += 1 + pe * 3) {
            unsigned char b[56];
            memset(b, 0xa5, sizeof(b));
            gshmemi_ibv_cm_private_encode(pe, sizes[s], b);
            cr_assert_eq(memcmp(b, "GICM", 4), 0);
            cr_assert(b[4] == 3 && b[5] == 0 && b[6] == 0 && b[7] == 0, "version 3, then zeros");
            cr_assert_eq(get32le(b + 8), (uint32_t)pe);
            cr_assert_eq(get32le(b + 12), (uint32_t)sizes[s]);
            for (int i = GSHMEMI_IBV_CM_PRIVATE_SIZE; i < 56; i++) cr_assert_eq(b[i], 0xa5, "byte %d written", i);
            /* an InfiniBand CM pads private data with zeros to its fixed size */
            memset(b + GSHMEMI_IBV_CM_PRIVATE_SIZE, 0, 56 - GSHMEMI_IBV_CM_PRIVATE_SIZE);
            for (size_t len = GSHMEMI_IBV_CM_PRIVATE_SIZE; len <= 56; len += 40) {
                int got = -7;
                char why[128] = "";
                cr_assert_eq(gshmemi_ibv_cm_private_decode(b, len, sizes[s], &got, why, sizeof(why)), 0, "%s", why);
                cr_assert_eq(got, pe);
            }
        }
}

static void cm_refused(const void *b, size_t len, int n_pes, const char *word, const char *what)
{
    int pe = -7;
    char why[128] = "";
    cr_assert_eq(gshmemi_ibv_cm_private_decode(b, len, n_pes, &pe, why, sizeof(why)), -1, "%s accepted", what);
    cr_assert_eq(pe, -7, "%s: the PE is left alone", what);
    cr_assert(strstr(why, word) != NULL, "%s: reason '%s' should mention '%s'", what, why, word);
}

Test(ibv_cm_private, strangers_are_refused_with_a_reason)
{
    unsigned char b[GSHMEMI_IBV_CM_PRIVATE_SIZE];
    gshmemi_ibv_cm_private_encode(3, 8, b);
    cm_refused(NULL, 0, 8, "0 bytes", "no private data");
    cm_refused(b, GSHMEMI_IBV_CM_PRIVATE_SIZE - 1, 8, "15 bytes", "one byte short");
    cm_refused(b, sizeof(b), 9, "8 PEs", "another job size");
    b[0] = 'X';
    cm_refused(b, sizeof(b), 8, "magic", "bad magic");
    gshmemi_ibv_cm_private_encode(3, 8, b), put16le(b + 4, 1);
    cm_refused(b, sizeof(b), 8, "version 1", "version 1");
    gshmemi_ibv_cm_private_encode(3, 8, b), memcpy(b, "GIBV", 4);
    cm_refused(b, sizeof(b), 8, "magic", "an endpoint's magic");
    gshmemi_ibv_cm_private_encode(8, 8, b);
    cm_refused(b, sizeof(b), 8, "PE 8", "PE 8 of 8");
    gshmemi_ibv_cm_private_encode(-1, 8, b);
    cm_refused(b, sizeof(b), 8, "outside", "PE -1");
}

/* ---------------------------------------------------------------- heap key blobs */

static uint32_t rkey_of(unsigned heap, int i) { return 0x5a000000u ^ (heap << 16) ^ (uint32_t)i * 0x0101u ^ 0x77u; }

static struct gshmemi_ibv_heapkeys keys_make(unsigned heap, uint64_t addr, uint64_t size, uint64_t chunk, int nchunks)
{
    struct gshmemi_ibv_heapkeys k;
    memset(&k, 0, sizeof(k));
    k.heap_index = heap, k.addr = addr, k.size = size, k.chunk = chunk, k.nchunks = nchunks;
    for (int i = 0; i < nchunks && i < GSHMEMI_IBV_MAX_CHUNKS; i++) k.rkey[i] = rkey_of(heap, i);
    return k;
}

static void keys_encode(const struct gshmemi_ibv_heapkeys *k, unsigned char *b /* [SIZE + 8] */)
{
    memset(b, 0xa5, GSHMEMI_IBV_HEAPKEYS_SIZE + 8);
    gshmemi_ibv_heapkeys_encode(k, b);
    for (int i = GSHMEMI_IBV_HEAPKEYS_SIZE; i < GSHMEMI_IBV_HEAPKEYS_SIZE + 8; i++)
        cr_assert_eq(b[i], 0xa5, "encode wrote byte %d past the blob", i);
}

static int keys_decode(const unsigned char *b, size_t len, unsigned heap, uint64_t min_size,
                       struct gshmemi_ibv_heapkeys *out, char *why, size_t whylen)
{
    memset(out, 0x5a, sizeof(*out));
    why[0] = '\0';
    return gshmemi_ibv_heapkeys_decode(b, len, heap, min_size, out, why, whylen);
}

static void keys_refused(const unsigned char *b, size_t len, unsigned heap, uint64_t min_size, const char *word,
                         const char *what)
{
    struct gshmemi_ibv_heapkeys out;
    char why[200];
    cr_assert_eq(keys_decode(b, len, heap, min_size, &out, why, sizeof(why)), -1, "%s should be refused", what);
    cr_assert(why[0] != '\0', "%s: a reason is given", what);
    cr_assert(strstr(why, word) != NULL, "%s: reason '%s' should mention '%s'", what, why, word);
}

TestSuite(ibv_heapkeys, .timeout = 60);

Test(ibv_heapkeys, round_trip_with_1_3_and_64_chunks)
{
    struct gshmemi_ibv_heapkeys in[] = {
        keys_make(0, 0x7f0012340000ull, 1 << 20, 1 << 20, 1),
        keys_make(2, 0x7f0100000000ull, (5ull << 20) / 2, 1 << 20, 3),
        keys_make(255, 0x10000000000ull, 64 * (1ull << 30) - 12345, 1ull << 30, 64),
        keys_make(1, 0x1000, 64 * 4096, 4096, 64),
    };
    for (size_t t = 0; t < sizeof(in) / sizeof(in[0]); t++) {
        unsigned char b[GSHMEMI_IBV_HEAPKEYS_SIZE + 8];
        keys_encode(&in[t], b);
        cr_expect_eq(memcmp(b, "GIBM", 4), 0, "magic \"GIBM\" at byte 0");
        cr_expect(b[4] == 3 && b[5] == 0, "version 3 little-endian at byte 4");
        cr_expect_eq(b[6], in[t].heap_index);
        cr_expect_eq(b[7], in[t].nchunks);
        cr_expect_eq(get64le(b + 8), in[t].addr, "address little-endian at byte 8");
        cr_expect_eq(get64le(b + 16), in[t].size, "size little-endian at byte 16");
        cr_expect_eq(get64le(b + 24), in[t].chunk, "chunk little-endian at byte 24");
        for (int i = 32; i < 40; i++) cr_expect_eq(b[i], 0, "reserved byte %d", i);
        for (int i = 0; i < in[t].nchunks; i++) cr_expect_eq(get32le(b + 40 + 4 * i), rkey_of(in[t].heap_index, i));
        for (int i = 40 + 4 * in[t].nchunks; i < GSHMEMI_IBV_HEAPKEYS_SIZE; i++)
            cr_expect_eq(b[i], 0, "unused rkey byte %d is zeroed", i);

        uint64_t mins[] = {0, 1, in[t].size - 1, in[t].size};
        for (int m = 0; m < 4; m++) {
            struct gshmemi_ibv_heapkeys out;
            char why[200];
            cr_assert_eq(keys_decode(b, GSHMEMI_IBV_HEAPKEYS_SIZE, in[t].heap_index, mins[m], &out, why, sizeof(why)),
                         0, "case %zu, min_size %llu: %s", t, (unsigned long long)mins[m], why);
            cr_expect_eq(out.heap_index, in[t].heap_index);
            cr_expect_eq(out.addr, in[t].addr);
            cr_expect_eq(out.size, in[t].size);
            cr_expect_eq(out.chunk, in[t].chunk);
            cr_expect_eq(out.nchunks, in[t].nchunks);
            for (int i = 0; i < in[t].nchunks; i++)
                cr_expect_eq(out.rkey[i], rkey_of(in[t].heap_index, i), "case %zu, rkey %d", t, i);
            for (int i = in[t].nchunks; i < GSHMEMI_IBV_MAX_CHUNKS; i++)
                cr_expect_eq(out.rkey[i], 0x5a5a5a5au, "case %zu: rkey slot %d past nchunks left alone", t, i);
        }
    }
}

Test(ibv_heapkeys, malformed_blobs_are_refused_with_a_reason)
{
    const unsigned H = 2;
    struct gshmemi_ibv_heapkeys good = keys_make(H, 0x7f0000000000ull, 3ull << 20, 1 << 20, 3), k;
    unsigned char b[GSHMEMI_IBV_HEAPKEYS_SIZE + 8];
    keys_encode(&good, b);
    keys_refused(b, GSHMEMI_IBV_HEAPKEYS_SIZE - 1, H, 0, "expected", "one byte short");
    keys_refused(b, GSHMEMI_IBV_HEAPKEYS_SIZE + 1, H, 0, "expected", "one byte long");
    keys_refused(b, 0, H, 0, "expected", "empty");
    keys_refused(b, 40, H, 0, "expected", "the header alone");
    b[3] ^= 0x20;
    keys_refused(b, GSHMEMI_IBV_HEAPKEYS_SIZE, H, 0, "magic", "bad magic");
    keys_encode(&good, b), memcpy(b, "GIBV", 4);
    keys_refused(b, GSHMEMI_IBV_HEAPKEYS_SIZE, H, 0, "magic", "an endpoint's magic");
    keys_encode(&good, b), put16le(b + 4, 1);
    keys_refused(b, GSHMEMI_IBV_HEAPKEYS_SIZE, H, 0, "version 1", "version 1");
    keys_encode(&good, b), put16le(b + 4, 2);
    keys_refused(b, GSHMEMI_IBV_HEAPKEYS_SIZE, H, 0, "version 2", "version 2");
    keys_encode(&good, b), put16le(b + 4, 4);
    keys_refused(b, GSHMEMI_IBV_HEAPKEYS_SIZE, H, 0, "version 4", "version 4");
    keys_encode(&good, b);
    keys_refused(b, GSHMEMI_IBV_HEAPKEYS_SIZE, 3, 0, "heap", "heap 2's keys taken for heap 3");
    keys_refused(b, GSHMEMI_IBV_HEAPKEYS_SIZE, H + 256, 0, "heap", "heap 258 (its index does not fit a byte)");
    keys_refused(b, GSHMEMI_IBV_HEAPKEYS_SIZE, H, (3ull << 20) + 1, "smaller", "a heap smaller than ours");

    k = good, k.nchunks = 0, keys_encode(&k, b);
    keys_refused(b, GSHMEMI_IBV_HEAPKEYS_SIZE, H, 0, "registrations", "0 chunks");
    keys_encode(&good, b), b[7] = 65;
    keys_refused(b, GSHMEMI_IBV_HEAPKEYS_SIZE, H, 0, "registrations", "65 chunks");
    keys_encode(&good, b), b[7] = 255;
    keys_refused(b, GSHMEMI_IBV_HEAPKEYS_SIZE, H, 0, "registrations", "255 chunks");
    k = keys_make(H, 0x10000, 3ull << 20, 3ull << 19, 2), keys_encode(&k, b);
    keys_refused(b, GSHMEMI_IBV_HEAPKEYS_SIZE, H, 0, "registrations", "1.5 MiB chunks");
    k = keys_make(H, 0x10000, 3ull << 20, 0, 3), keys_encode(&k, b);
    keys_refused(b, GSHMEMI_IBV_HEAPKEYS_SIZE, H, 0, "registrations", "0-byte chunks");
    k = keys_make(H, 0x10000, 3, 3, 1), keys_encode(&k, b);
    keys_refused(b, GSHMEMI_IBV_HEAPKEYS_SIZE, H, 0, "registrations", "3-byte chunks");

    k = keys_make(H, 0x10000, (3ull << 20) + 1, 1 << 20, 3), keys_encode(&k, b);
    keys_refused(b, GSHMEMI_IBV_HEAPKEYS_SIZE, H, 0, "do not match", "chunks one byte short of the heap");
    k = keys_make(H, 0x10000, 2ull << 20, 1 << 20, 3), keys_encode(&k, b);
    keys_refused(b, GSHMEMI_IBV_HEAPKEYS_SIZE, H, 0, "do not match", "an extra chunk");
    k = keys_make(H, 0x10000, 1 << 20, 1 << 20, 64), keys_encode(&k, b);
    keys_refused(b, GSHMEMI_IBV_HEAPKEYS_SIZE, H, 0, "do not match", "63 extra chunks");
    k = keys_make(H, 0x10000, 0, 1 << 20, 1), keys_encode(&k, b);
    keys_refused(b, GSHMEMI_IBV_HEAPKEYS_SIZE, H, 0, "do not match", "a chunk for an empty heap");
    k = keys_make(H, 0x10000, 1ull << 20, 1ull << 19, 2), keys_encode(&k, b);
    char why[200];
    cr_expect_eq(keys_decode(b, GSHMEMI_IBV_HEAPKEYS_SIZE, H, 0, &k, why, sizeof(why)), 0,
                 "two chunks exactly covering the heap: %s", why);

    k = keys_make(H, UINT64_MAX - 4095, 8192, 8192, 1), keys_encode(&k, b);
    keys_refused(b, GSHMEMI_IBV_HEAPKEYS_SIZE, H, 0, "wraps", "a heap past the top of the address space");
    k = keys_make(H, UINT64_MAX - 8192, 8192, 8192, 1), keys_encode(&k, b);
    cr_expect_eq(keys_decode(b, GSHMEMI_IBV_HEAPKEYS_SIZE, H, 0, &k, why, sizeof(why)), 0,
                 "a heap whose end address is 2^64-1: %s", why);
}

/* chunk * nchunks computed in 64 bits: chunks so large that the product wraps must not
 * let extra chunks (or too few) through. */
Test(ibv_heapkeys, huge_chunks_whose_product_wraps_are_refused)
{
    const unsigned H = 0;
    unsigned char b[GSHMEMI_IBV_HEAPKEYS_SIZE + 8];
    struct gshmemi_ibv_heapkeys k;
    char why[200];
    static const struct {
        uint64_t size, chunk;
        int nchunks;
    } bad[] = {
        {4096, 1ull << 59, 33},                /* 33 * 2^59 wraps to 2^59, 32 * 2^59 to 0 */
        {4096, 1ull << 63, 3},                 /* 3 * 2^63 wraps to 2^63, 2 * 2^63 to 0 */
        {1ull << 62, 1ull << 62, 5},           /* 5 * 2^62 wraps to 2^62, 4 * 2^62 to 0 */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        k = keys_make(H, 0x1000, bad[i].size, bad[i].chunk, bad[i].nchunks), keys_encode(&k, b);
        struct gshmemi_ibv_heapkeys out;
        cr_expect_eq(keys_decode(b, GSHMEMI_IBV_HEAPKEYS_SIZE, H, 0, &out, why, sizeof(why)), -1,
                     "%d chunks of 2^%d bytes for a heap of %llu bytes should be refused (extra chunks)",
                     bad[i].nchunks, __builtin_ctzll(bad[i].chunk), (unsigned long long)bad[i].size);
    }
}

Test(ibv_heapkeys, fuzz_corruptions)
{
    rng_seed(0x1b5eed02);
    struct gshmemi_ibv_heapkeys good = keys_make(1, 0x7f0000000000ull, 5ull << 20, 1 << 20, 5), out;
    unsigned char b[GSHMEMI_IBV_HEAPKEYS_SIZE + 8];
    for (int round = 0; round < 50000; round++) {
        keys_encode(&good, b);
        int n = 1 + (int)(rng() % 3);
        for (int i = 0; i < n; i++) b[rng() % 40] = (unsigned char)rng(); /* the header: where the checks are */
        char why[200];
        int rc = keys_decode(b, GSHMEMI_IBV_HEAPKEYS_SIZE, 1, 1 << 20, &out, why, sizeof(why));
        if (rc == -1) {
            cr_assert(why[0] != '\0', "round %d: refused without a reason", round);
            continue;
        }
        cr_assert_eq(rc, 0);
        cr_assert_eq(out.heap_index, 1u);
        cr_assert(out.size >= 1 << 20);
        cr_assert(out.nchunks >= 1 && out.nchunks <= GSHMEMI_IBV_MAX_CHUNKS);
        cr_assert(out.chunk && !(out.chunk & (out.chunk - 1)));
        cr_assert(out.addr + out.size >= out.addr);
        /* the chunks cover the heap, without one to spare (in exact arithmetic) */
        unsigned __int128 all = (unsigned __int128)out.chunk * (unsigned)out.nchunks;
        unsigned __int128 but_one = (unsigned __int128)out.chunk * (unsigned)(out.nchunks - 1);
        cr_assert(all >= out.size && but_one < out.size, "round %d: %d chunks of %llu for %llu bytes accepted",
                  round, out.nchunks, (unsigned long long)out.chunk, (unsigned long long)out.size);
    }
}

