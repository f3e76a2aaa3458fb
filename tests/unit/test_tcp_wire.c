/* The tcp transport's frame header codec: layout, every refusal, and random input. */
#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>

#include "gshmem/status.h"
#include "transport/tcp_wire.h"
#include "transport/transport.h"

static char err[256];

static struct gshmemi_tcp_frame sample(unsigned type)
{
    struct gshmemi_tcp_frame f = gshmemi_tcp_frame_make(type, 1);
    return f;
}

static int decode(const struct gshmemi_tcp_frame *f, unsigned nheaps, struct gshmemi_tcp_frame *out)
{
    unsigned char buf[GSHMEMI_TCP_HEADER_SIZE];
    gshmemi_tcp_frame_encode(f, buf);
    err[0] = '\0';
    return gshmemi_tcp_frame_decode(buf, nheaps, out, err, sizeof(err));
}

/* Decoding f must fail, with a reason containing text. */
static void refused(const struct gshmemi_tcp_frame *f, const char *text)
{
    struct gshmemi_tcp_frame out;
    cr_assert_eq(decode(f, 2, &out), GSHMEMX_ERR_PROTOCOL, "a %s frame should be refused (%s)",
                 gshmemi_tcp_type_name(f->type), text);
    cr_assert(strstr(err, text) != NULL, "reason '%s' should mention '%s'", err, text);
}

TestSuite(tcp_wire);

Test(tcp_wire, round_trip_and_byte_layout)
{
    struct gshmemi_tcp_frame f = sample(GSHMEMI_TCP_PUT_SIGNAL), out;
    f.length = 0x01a0b0c0;
    f.aux = 1;
    f.offset = 0x1122334455667788ull;
    f.arg0 = 0x0102030405060708ull & ~7ull;
    f.arg1 = 0xfedcba9876543210ull;
    f.tag = 0x0000000000000abcull;
    unsigned char buf[GSHMEMI_TCP_HEADER_SIZE];
    memset(buf, 0xee, sizeof(buf));
    gshmemi_tcp_frame_encode(&f, buf);
    cr_assert_eq(memcmp(buf, "GSHT", 4), 0, "magic travels as the bytes GSHT");
    cr_assert_eq(buf[4], GSHMEMI_TCP_VERSION);
    cr_assert_eq(buf[5], 0);
    cr_assert_eq(buf[6], GSHMEMI_TCP_PUT_SIGNAL);
    cr_assert_eq(buf[7], 1, "heap index");
    cr_assert_eq(buf[8], 0xc0, "length is little-endian");
    cr_assert_eq(buf[11], 0x01);
    cr_assert_eq(buf[16], 0x88, "offset is little-endian");
    cr_assert_eq(buf[23], 0x11);
    cr_assert_eq(buf[47], 0x00);
    cr_assert_eq(buf[40], 0xbc);
    cr_assert_eq(decode(&f, 2, &out), GSHMEMX_ERR_PROTOCOL, "0x1a0b0c0 bytes is over the payload limit");
    f.length = 4096;
    cr_assert_eq(decode(&f, 2, &out), 0, "%s", err);
    cr_assert_eq(memcmp(&out, &f, sizeof(f)), 0, "every field survives the round trip");
}

Test(tcp_wire, every_type_has_a_name)
{
    for (unsigned t = 1; t < GSHMEMI_TCP_TYPE_END; t++) cr_assert_str_neq(gshmemi_tcp_type_name(t), "?");
    cr_assert_str_eq(gshmemi_tcp_type_name(0), "?");
    cr_assert_str_eq(gshmemi_tcp_type_name(GSHMEMI_TCP_TYPE_END), "?");
    cr_assert_str_eq(gshmemi_tcp_type_name(200), "?");
}

Test(tcp_wire, amo_aux_packs_and_unpacks)
{
    for (int op = GSHMEMI_AMO_FETCH; op <= GSHMEMI_AMO_XOR; op++)
        for (unsigned w = 4; w <= 8; w += 4)
            for (int fetch = 0; fetch < 2; fetch++) {
                uint32_t aux = gshmemi_tcp_amo_aux(op, w, fetch);
                cr_assert_eq(gshmemi_tcp_aux_op(aux), op);
                cr_assert_eq(gshmemi_tcp_aux_width(aux), w);
                cr_assert_eq(gshmemi_tcp_aux_fetch(aux), fetch);
                struct gshmemi_tcp_frame f = sample(GSHMEMI_TCP_AMO), out;
                f.aux = aux;
                f.offset = 8 * 1000;
                cr_assert_eq(decode(&f, 2, &out), 0, "op %d width %u: %s", op, w, err);
            }
}

Test(tcp_wire, header_refusals)
{
    struct gshmemi_tcp_frame f = sample(GSHMEMI_TCP_PUT);
    f.magic = 0x42485347u; /* the bootstrap's magic: the wrong socket */
    refused(&f, "magic");
    f = sample(GSHMEMI_TCP_PUT);
    f.version = GSHMEMI_TCP_VERSION + 1;
    refused(&f, "version");
    f = sample(0);
    refused(&f, "type");
    f = sample(GSHMEMI_TCP_TYPE_END);
    refused(&f, "type");
    f = sample(GSHMEMI_TCP_PUT);
    f.length = GSHMEMI_TCP_MAX_PAYLOAD + 1;
    refused(&f, "too long");
    f = sample(GSHMEMI_TCP_PUT);
    f.heap = 2;
    refused(&f, "heap");
    struct gshmemi_tcp_frame out;
    f.heap = 1;
    cr_assert_eq(decode(&f, 1, &out), GSHMEMX_ERR_PROTOCOL, "heap 1 when the receiver serves only one");
    f = sample(GSHMEMI_TCP_DATA);
    f.heap = 7; /* answers name no heap of the receiver's */
    cr_assert_eq(decode(&f, 2, &out), 0, "%s", err);
}

Test(tcp_wire, request_refusals)
{
    struct gshmemi_tcp_frame f = sample(GSHMEMI_TCP_PUT_SIGNAL), out;
    f.aux = 2;
    refused(&f, "signal operation");
    f = sample(GSHMEMI_TCP_PUT_SIGNAL);
    f.arg0 = 12;
    refused(&f, "misaligned signal");
    f = sample(GSHMEMI_TCP_IPUT);
    f.arg1 = 0;
    refused(&f, "element size");
    f = sample(GSHMEMI_TCP_IPUT);
    f.arg1 = 8;
    f.length = 20;
    refused(&f, "whole elements");
    f = sample(GSHMEMI_TCP_IGET);
    f.arg1 = 4;
    f.aux = 0;
    refused(&f, "strided get");
    f.aux = 4;
    f.length = 16;
    refused(&f, "strided get");
    f.length = 0;
    f.arg1 = GSHMEMI_TCP_MAX_PAYLOAD;
    refused(&f, "strided get");
    f = sample(GSHMEMI_TCP_GET);
    f.length = 8;
    refused(&f, "get length");
    f.length = 0;
    f.arg0 = (uint64_t)GSHMEMI_TCP_MAX_PAYLOAD + 1;
    refused(&f, "get length");
    f = sample(GSHMEMI_TCP_AMO);
    f.aux = gshmemi_tcp_amo_aux(GSHMEMI_AMO_ADD, 2, 0);
    refused(&f, "width");
    f.aux = gshmemi_tcp_amo_aux(GSHMEMI_AMO_XOR + 1, 8, 0);
    refused(&f, "atomic operation");
    f.aux = gshmemi_tcp_amo_aux(GSHMEMI_AMO_ADD, 8, 0) | 1u << 20;
    refused(&f, "atomic operation");
    f.aux = gshmemi_tcp_amo_aux(GSHMEMI_AMO_ADD, 8, 1);
    f.offset = 4;
    refused(&f, "misaligned atomic");
    f.offset = 8;
    f.length = 8;
    refused(&f, "payload");
    f = sample(GSHMEMI_TCP_HELLO);
    f.length = GSHMEMI_TCP_TOKEN_SIZE - 1;
    refused(&f, "hello");
    unsigned no_payload[] = {GSHMEMI_TCP_QUIET, GSHMEMI_TCP_VALUE, GSHMEMI_TCP_ACK, GSHMEMI_TCP_WELCOME,
                             GSHMEMI_TCP_BYE};
    for (size_t i = 0; i < sizeof(no_payload) / sizeof(no_payload[0]); i++) {
        f = sample(no_payload[i]);
        f.length = 1;
        refused(&f, "unexpected payload");
        f.length = 0;
        cr_assert_eq(decode(&f, 2, &out), 0, "%s: %s", gshmemi_tcp_type_name(no_payload[i]), err);
    }
}

/* Random and mutated headers: never a crash, and whatever is accepted keeps the
 * invariants the receiver relies on before it reads a payload. */
Test(tcp_wire, random_headers_keep_invariants)
{
    srand(12345);
    struct gshmemi_tcp_frame valid = sample(GSHMEMI_TCP_PUT);
    valid.length = 64;
    unsigned char base[GSHMEMI_TCP_HEADER_SIZE];
    gshmemi_tcp_frame_encode(&valid, base);
    int accepted = 0;
    for (int iter = 0; iter < 200000; iter++) {
        unsigned char buf[GSHMEMI_TCP_HEADER_SIZE];
        if (iter % 2) {
            for (size_t i = 0; i < sizeof(buf); i++) buf[i] = (unsigned char)rand();
            memcpy(buf, "GSHT", 4); /* get past the magic often */
            buf[4] = GSHMEMI_TCP_VERSION;
            buf[5] = 0;
            buf[6] = (unsigned char)(rand() % (GSHMEMI_TCP_TYPE_END + 2));
        } else {
            memcpy(buf, base, sizeof(buf));
            for (int k = 0; k < 1 + rand() % 4; k++) buf[rand() % sizeof(buf)] ^= (unsigned char)(1u << (rand() % 8));
        }
        struct gshmemi_tcp_frame f;
        err[0] = '\0';
        if (gshmemi_tcp_frame_decode(buf, 2, &f, err, sizeof(err)) != 0) {
            cr_assert(err[0] != '\0', "a refusal says why");
            continue;
        }
        accepted++;
        cr_assert_eq(f.magic, GSHMEMI_TCP_MAGIC);
        cr_assert(f.type >= 1 && f.type < GSHMEMI_TCP_TYPE_END);
        cr_assert(f.length <= GSHMEMI_TCP_MAX_PAYLOAD);
        if (f.type <= GSHMEMI_TCP_QUIET) cr_assert(f.heap < 2);
        if (f.type == GSHMEMI_TCP_AMO) {
            unsigned w = gshmemi_tcp_aux_width(f.aux);
            cr_assert((w == 4 || w == 8) && f.offset % w == 0 && f.length == 0);
        }
        if (f.type == GSHMEMI_TCP_IPUT) cr_assert(f.arg1 > 0 && f.length % f.arg1 == 0);
        if (f.type == GSHMEMI_TCP_IGET) cr_assert((uint64_t)f.aux * f.arg1 <= GSHMEMI_TCP_MAX_PAYLOAD && f.aux > 0);
        if (f.type == GSHMEMI_TCP_GET) cr_assert(f.arg0 <= GSHMEMI_TCP_MAX_PAYLOAD && f.length == 0);
        if (f.type == GSHMEMI_TCP_HELLO) cr_assert_eq(f.length, GSHMEMI_TCP_TOKEN_SIZE);
    }
    cr_assert_gt(accepted, 1000, "the generator reaches the accepting paths (%d accepted)", accepted);
}
