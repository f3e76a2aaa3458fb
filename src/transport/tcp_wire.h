/*
 * The tcp transport's wire format: every message between two PEs is one frame, a
 * fixed 48-byte little-endian header followed by `length` payload bytes.
 *
 *   offset 0  u32 magic    GSHMEMI_TCP_MAGIC ("GSHT" on the wire)
 *          4  u16 version  GSHMEMI_TCP_VERSION; bumped on any incompatible change
 *          6  u8  type     enum gshmemi_tcp_type
 *          7  u8  heap     which symmetric heap (0: the sync heap, 1: the user heap)
 *          8  u32 length   payload bytes (<= GSHMEMI_TCP_MAX_PAYLOAD)
 *         12  u32 aux      AMO: op | width << 8 | fetch << 16; PUT_SIGNAL: sig_op
 *         16  u64 offset   target heap offset (PUT, PUT_SIGNAL, GET, AMO, IPUT, IGET)
 *         24  u64 arg0     GET: bytes; AMO: operand; PUT_SIGNAL: signal offset;
 *                          IPUT/IGET: target stride in bytes (two's complement)
 *         32  u64 arg1     AMO: compare; PUT_SIGNAL: signal value; IPUT/IGET: element size
 *         40  u64 tag      requests that are answered: the requester's pending slot
 *
 * Requests: PUT, PUT_SIGNAL, IPUT (no answer), GET, IGET -> DATA, AMO -> VALUE,
 * QUIET -> ACK (every earlier frame on this connection is applied). HELLO/WELCOME
 * open a connection, BYE closes it cleanly. Decoding checks everything that does not
 * need the heap; the receiver checks offsets against its heap.
 */
#ifndef GSHMEMI_TCP_WIRE_H
#define GSHMEMI_TCP_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define GSHMEMI_TCP_MAGIC 0x54485347u /* bytes 'G' 'S' 'H' 'T' */
#define GSHMEMI_TCP_VERSION 1
#define GSHMEMI_TCP_HEADER_SIZE 48
#define GSHMEMI_TCP_MAX_PAYLOAD (16u << 20)
#define GSHMEMI_TCP_MAX_HEAPS 2
#define GSHMEMI_TCP_TOKEN_SIZE 16

enum gshmemi_tcp_type {
    GSHMEMI_TCP_PUT = 1,
    GSHMEMI_TCP_PUT_SIGNAL,
    GSHMEMI_TCP_IPUT,
    GSHMEMI_TCP_GET,
    GSHMEMI_TCP_IGET,
    GSHMEMI_TCP_AMO,
    GSHMEMI_TCP_QUIET,
    GSHMEMI_TCP_DATA,  /* answer to GET/IGET: the bytes */
    GSHMEMI_TCP_VALUE, /* answer to AMO: arg0 = previous value */
    GSHMEMI_TCP_ACK,   /* answer to QUIET */
    GSHMEMI_TCP_HELLO, /* connector -> acceptor: arg0 = from PE, arg1 = to PE, payload = acceptor's token */
    GSHMEMI_TCP_WELCOME,
    GSHMEMI_TCP_BYE,
    GSHMEMI_TCP_TYPE_END
};

struct gshmemi_tcp_frame {
    uint32_t magic;
    uint16_t version;
    uint8_t type;
    uint8_t heap;
    uint32_t length;
    uint32_t aux;
    uint64_t offset;
    uint64_t arg0;
    uint64_t arg1;
    uint64_t tag;
};

/* AMO aux packing. */
static inline uint32_t gshmemi_tcp_amo_aux(int op, unsigned width, int fetch)
{
    return (uint32_t)op | (uint32_t)width << 8 | (uint32_t)(fetch != 0) << 16;
}
static inline int gshmemi_tcp_aux_op(uint32_t aux) { return (int)(aux & 0xff); }
static inline unsigned gshmemi_tcp_aux_width(uint32_t aux) { return (aux >> 8) & 0xff; }
static inline int gshmemi_tcp_aux_fetch(uint32_t aux) { return (int)((aux >> 16) & 1); }

/* A frame of type with the magic and version filled in, everything else zero. */
struct gshmemi_tcp_frame gshmemi_tcp_frame_make(unsigned type, unsigned heap);
void gshmemi_tcp_frame_encode(const struct gshmemi_tcp_frame *f, unsigned char out[GSHMEMI_TCP_HEADER_SIZE]);
/* 0, or GSHMEMX_ERR_PROTOCOL with the reason in err (the caller names the peer).
 * nheaps: heaps the receiver serves. */
int gshmemi_tcp_frame_decode(const unsigned char in[GSHMEMI_TCP_HEADER_SIZE], unsigned nheaps,
                             struct gshmemi_tcp_frame *f, char *err, size_t errlen);
const char *gshmemi_tcp_type_name(unsigned type);

#endif
