/* The tcp transport's frame header codec (format in tcp_wire.h). */
#include "transport/tcp_wire.h"

#include "transport/transport.h"

#include <gshmem/status.h>

#include <stdio.h>
#include <string.h>

static void put_u16(unsigned char *p, uint16_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
}
static void put_u32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static void put_u64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (unsigned char)(v >> (8 * i));
}
static uint16_t get_u16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t get_u32(const unsigned char *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--) v = v << 8 | p[i];
    return v;
}
static uint64_t get_u64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
    return v;
}

struct gshmemi_tcp_frame gshmemi_tcp_frame_make(unsigned type, unsigned heap)
{
    struct gshmemi_tcp_frame f;
    memset(&f, 0, sizeof(f));
    f.magic = GSHMEMI_TCP_MAGIC;
    f.version = GSHMEMI_TCP_VERSION;
    f.type = (uint8_t)type;
    f.heap = (uint8_t)heap;
    return f;
}

void gshmemi_tcp_frame_encode(const struct gshmemi_tcp_frame *f, unsigned char out[GSHMEMI_TCP_HEADER_SIZE])
{
    put_u32(out, f->magic);
    put_u16(out + 4, f->version);
    out[6] = f->type;
    out[7] = f->heap;
    put_u32(out + 8, f->length);
    put_u32(out + 12, f->aux);
    put_u64(out + 16, f->offset);
    put_u64(out + 24, f->arg0);
    put_u64(out + 32, f->arg1);
    put_u64(out + 40, f->tag);
}

const char *gshmemi_tcp_type_name(unsigned type)
{
    static const char *const names[] = {"?",     "PUT", "PUT_SIGNAL", "IPUT",  "GET",     "IGET", "AMO",
                                        "QUIET", "DATA", "VALUE",     "ACK",   "HELLO",   "WELCOME", "BYE"};
    return type < GSHMEMI_TCP_TYPE_END ? names[type] : "?";
}

static int bad(char *err, size_t errlen, const char *what, unsigned long long value)
{
    snprintf(err, errlen, "%s %llu", what, value);
    return GSHMEMX_ERR_PROTOCOL;
}

int gshmemi_tcp_frame_decode(const unsigned char in[GSHMEMI_TCP_HEADER_SIZE], unsigned nheaps,
                             struct gshmemi_tcp_frame *f, char *err, size_t errlen)
{
    f->magic = get_u32(in);
    f->version = get_u16(in + 4);
    f->type = in[6];
    f->heap = in[7];
    f->length = get_u32(in + 8);
    f->aux = get_u32(in + 12);
    f->offset = get_u64(in + 16);
    f->arg0 = get_u64(in + 24);
    f->arg1 = get_u64(in + 32);
    f->tag = get_u64(in + 40);
    if (f->magic != GSHMEMI_TCP_MAGIC) {
        snprintf(err, errlen, "bad magic 0x%08x (not a gshmem tcp peer?)", f->magic);
        return GSHMEMX_ERR_PROTOCOL;
    }
    if (f->version != GSHMEMI_TCP_VERSION) {
        snprintf(err, errlen, "wire version %u, this PE speaks %u (mixed gshmem versions?)", f->version,
                 GSHMEMI_TCP_VERSION);
        return GSHMEMX_ERR_PROTOCOL;
    }
    if (f->type == 0 || f->type >= GSHMEMI_TCP_TYPE_END) return bad(err, errlen, "unknown frame type", f->type);
    if (f->length > GSHMEMI_TCP_MAX_PAYLOAD) return bad(err, errlen, "payload too long:", f->length);
    int heap_op = f->type <= GSHMEMI_TCP_QUIET;
    if (heap_op && f->heap >= nheaps) return bad(err, errlen, "no such heap:", f->heap);
    switch (f->type) {
    case GSHMEMI_TCP_PUT_SIGNAL:
        if (f->aux > 1) return bad(err, errlen, "bad signal operation", f->aux);
        if (f->arg0 % 8) return bad(err, errlen, "misaligned signal offset", f->arg0);
        break;
    case GSHMEMI_TCP_IPUT:
    case GSHMEMI_TCP_IGET:
        if (f->arg1 == 0 || f->arg1 > GSHMEMI_TCP_MAX_PAYLOAD) return bad(err, errlen, "bad element size", f->arg1);
        if (f->type == GSHMEMI_TCP_IPUT && f->length % f->arg1)
            return bad(err, errlen, "strided payload is not whole elements:", f->length);
        if (f->type == GSHMEMI_TCP_IGET &&
            (f->length != 0 || f->aux == 0 || (uint64_t)f->aux * f->arg1 > GSHMEMI_TCP_MAX_PAYLOAD))
            return bad(err, errlen, "bad strided get of elements:", f->aux);
        break;
    case GSHMEMI_TCP_GET:
        if (f->length != 0 || f->arg0 > GSHMEMI_TCP_MAX_PAYLOAD) return bad(err, errlen, "bad get length", f->arg0);
        break;
    case GSHMEMI_TCP_AMO: {
        unsigned width = gshmemi_tcp_aux_width(f->aux);
        int op = gshmemi_tcp_aux_op(f->aux);
        if (width != 4 && width != 8) return bad(err, errlen, "bad atomic width", width);
        if (op > GSHMEMI_AMO_XOR || f->aux >> 17) return bad(err, errlen, "bad atomic operation", (unsigned)op);
        if (f->offset % width) return bad(err, errlen, "misaligned atomic offset", f->offset);
        if (f->length != 0) return bad(err, errlen, "atomic with payload", f->length);
        break;
    }
    case GSHMEMI_TCP_HELLO:
        if (f->length != GSHMEMI_TCP_TOKEN_SIZE) return bad(err, errlen, "bad hello length", f->length);
        break;
    case GSHMEMI_TCP_QUIET:
    case GSHMEMI_TCP_VALUE:
    case GSHMEMI_TCP_ACK:
    case GSHMEMI_TCP_WELCOME:
    case GSHMEMI_TCP_BYE:
        if (f->length != 0) return bad(err, errlen, "unexpected payload of", f->length);
        break;
    default:
        break;
    }
    return 0;
}
