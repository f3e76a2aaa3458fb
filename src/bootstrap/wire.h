/*
 * The bootstrap wire format: every message between a PE and the rendezvous root
 * is one frame, a fixed little-endian header followed by `length` payload bytes.
 *
 *   offset 0  u32 magic     GSHMEMI_WIRE_MAGIC ("GSHB" on the wire)
 *          4  u16 version   GSHMEMI_WIRE_VERSION; bumped on any incompatible change
 *          6  u16 type      enum gshmemi_wire_type
 *          8  i32 sender    world rank, or GSHMEMI_WIRE_ROOT
 *         12  u32 seq       allgather round (GATHER/RESULT), else 0
 *         16  u32 length    payload bytes, at most gshmemi_wire_max_payload(type)
 *
 * magic and version stay at these offsets in every future version, so a peer
 * speaking another version is reported as such instead of as garbage.
 * Decoders validate everything and describe what is wrong in an error string;
 * they never trust a length before checking it.
 */
#ifndef GSHMEMI_BOOTSTRAP_WIRE_H
#define GSHMEMI_BOOTSTRAP_WIRE_H

#include <stddef.h>
#include <stdint.h>

#define GSHMEMI_WIRE_MAGIC 0x42485347u /* bytes 'G' 'S' 'H' 'B' */
/* 3: ABORT grew the TIMEOUT and MISSING kinds and MISSING's longer payload. A version 2
 * peer would refuse those frames only once a job is already failing, garbling the one
 * message meant to explain it; with the bump a mixed job is refused at its first
 * HELLO, naming both versions. */
#define GSHMEMI_WIRE_VERSION 3
#define GSHMEMI_WIRE_HEADER_SIZE 20
#define GSHMEMI_WIRE_ROOT (-1)
/* Largest GATHER/RESULT payload (a whole allgather result). */
#define GSHMEMI_WIRE_MAX_PAYLOAD (256u << 20)
/* Longest host name / job id carried in HELLO, including the NUL. */
#define GSHMEMI_WIRE_NAME_MAX 256
/* Room for HELLO's auth bytes (unused: the job secret's proof travels in AUTH). */
#define GSHMEMI_WIRE_AUTH_MAX 512
/* Longest ERROR message, including the NUL. */
#define GSHMEMI_WIRE_MSG_MAX 512
/* Size of an error string buffer that holds any wire diagnostic. */
#define GSHMEMI_WIRE_ERR_MAX 640

enum gshmemi_wire_type {
    GSHMEMI_WIRE_HELLO = 1, /* PE -> root: who I am (struct gshmemi_wire_hello) */
    GSHMEMI_WIRE_WELCOME,   /* root -> PE: accepted (u32 nranks, u32 flags) */
    GSHMEMI_WIRE_GATHER,    /* PE -> root: this round's contribution */
    GSHMEMI_WIRE_RESULT,    /* root -> PE: every contribution, in rank order */
    GSHMEMI_WIRE_ERROR,     /* root -> PE: refusal or collective error (struct gshmemi_wire_error) */
    GSHMEMI_WIRE_ABORT,     /* both ways: the job is ending (struct gshmemi_wire_abort) */
    GSHMEMI_WIRE_BYE,       /* PE -> root: clean disconnect follows */
    GSHMEMI_WIRE_CHALLENGE, /* root -> PE, after an HMAC HELLO: GSHMEMI_WIRE_NONCE_SIZE random bytes */
    GSHMEMI_WIRE_AUTH,      /* PE -> root: gshmemi_wire_auth_proof over that nonce */
    GSHMEMI_WIRE_TYPE_END
};

struct gshmemi_wire_header {
    uint32_t magic;
    uint16_t version;
    uint16_t type;
    int32_t sender;
    uint32_t seq;
    uint32_t length;
};

/*
 * How a HELLO proves it belongs to the job. With a job secret configured
 * (GSHMEM_BOOTSTRAP_SECRET / _FILE) a PE says HELLO with method HMAC_SHA256; the
 * root answers CHALLENGE (a fresh random nonce), the PE answers AUTH with
 * HMAC-SHA256(secret, nonce || u32 rank (LE) || job id), and the root checks it
 * before WELCOME. The secret never travels. Root and PEs must agree: a root with a
 * secret refuses a NONE HELLO, a root without one refuses an HMAC HELLO.
 */
enum gshmemi_wire_auth { GSHMEMI_WIRE_AUTH_NONE = 0, GSHMEMI_WIRE_AUTH_HMAC_SHA256 = 1 };
#define GSHMEMI_WIRE_NONCE_SIZE 32
#define GSHMEMI_WIRE_PROOF_SIZE 32
/* Longest job secret, in bytes. */
#define GSHMEMI_WIRE_SECRET_MAX 4096

struct gshmemi_wire_hello {
    int32_t rank;
    int32_t nranks;
    uint32_t pid;
    uint16_t auth_method;
    uint16_t auth_len;
    char host[GSHMEMI_WIRE_NAME_MAX];   /* NUL-terminated, for diagnostics */
    char job_id[GSHMEMI_WIRE_NAME_MAX]; /* NUL-terminated; may be empty */
    uint8_t auth[GSHMEMI_WIRE_AUTH_MAX];
};
/* HELLO payload: i32 rank, i32 nranks, u32 pid, u16 auth_method, u16 auth_len,
 * u16 host_len, u16 job_len, then host, job id and auth bytes (no NULs). */
#define GSHMEMI_WIRE_HELLO_FIXED 20
#define GSHMEMI_WIRE_HELLO_MAX \
    (GSHMEMI_WIRE_HELLO_FIXED + 2 * (GSHMEMI_WIRE_NAME_MAX - 1) + GSHMEMI_WIRE_AUTH_MAX)

struct gshmemi_wire_error {
    int32_t status; /* a GSHMEMX_ERR_* code */
    char msg[GSHMEMI_WIRE_MSG_MAX];
};
#define GSHMEMI_WIRE_ERROR_MAX (4 + GSHMEMI_WIRE_MSG_MAX - 1)

enum gshmemi_wire_abort_kind {
    GSHMEMI_WIRE_ABORT_CALLED = 0,  /* origin called abort(status) */
    GSHMEMI_WIRE_ABORT_LOST = 1,    /* origin's connection closed without BYE */
    GSHMEMI_WIRE_ABORT_TIMEOUT = 2, /* PE -> root: origin's GSHMEM_TIMEOUT ran out waiting for
                                       allgather round `seq` (the header's): who is missing? */
    GSHMEMI_WIRE_ABORT_MISSING = 3  /* root -> PE: that round never completed; the payload
                                       names the PEs it lacked (origin gave up first) */
};
/* Longest list of missing PEs a MISSING abort carries; nmissing counts them all. */
#define GSHMEMI_WIRE_MISSING_LIST_MAX 32
struct gshmemi_wire_abort {
    int32_t status;
    int32_t origin; /* the rank that aborted, was lost or timed out */
    uint32_t kind;  /* enum gshmemi_wire_abort_kind */
    /* MISSING only */
    uint32_t round;    /* the allgather round that never completed */
    uint32_t nmissing; /* PEs it lacked, >= 1; the first nlisted are listed */
    uint32_t nlisted;  /* <= GSHMEMI_WIRE_MISSING_LIST_MAX and <= nmissing */
    struct {
        int32_t rank;    /* ascending */
        uint32_t joined; /* 0: never joined the job; 1: joined, never reached the round */
    } missing[GSHMEMI_WIRE_MISSING_LIST_MAX];
};
/* ABORT payload: i32 status, i32 origin, u32 kind; MISSING adds u32 round, u32 nmissing,
 * u32 nlisted and nlisted x (i32 rank, u32 joined). */
#define GSHMEMI_WIRE_ABORT_SIZE 12
#define GSHMEMI_WIRE_ABORT_MISSING_FIXED 24
#define GSHMEMI_WIRE_ABORT_MAX (GSHMEMI_WIRE_ABORT_MISSING_FIXED + 8 * GSHMEMI_WIRE_MISSING_LIST_MAX)
#define GSHMEMI_WIRE_WELCOME_SIZE 8

/* The AUTH payload for rank in job_id answering nonce. */
void gshmemi_wire_auth_proof(const void *secret, size_t secret_len, const uint8_t nonce[GSHMEMI_WIRE_NONCE_SIZE],
                             int32_t rank, const char *job_id, uint8_t out[GSHMEMI_WIRE_PROOF_SIZE]);
/* The job secret: text (GSHMEM_BOOTSTRAP_SECRET) or the contents of file
 * (GSHMEM_BOOTSTRAP_SECRET_FILE, one trailing newline stripped); NULL or "" is unset.
 * out holds GSHMEMI_WIRE_SECRET_MAX bytes; *len is 0 when neither is set. Returns 0, or
 * GSHMEMX_ERR_CONFIG (logged, naming the variable or the file) when both are set, or
 * the file is unreadable, empty or too long. */
int gshmemi_wire_secret_load(const char *text, const char *file, uint8_t *out, size_t *len);
/* Fills out with len unpredictable bytes (getrandom); 0 or GSHMEMX_ERR_SYSTEM. */
int gshmemi_wire_random(void *out, size_t len);

/* "HELLO", "GATHER", ...; "unknown" outside the enum. */
const char *gshmemi_wire_type_name(unsigned type);
/* Largest payload a frame of this type may carry (0 for an unknown type). */
uint32_t gshmemi_wire_max_payload(unsigned type);

/* Fills magic and version. */
void gshmemi_wire_header_init(struct gshmemi_wire_header *h, unsigned type, int32_t sender, uint32_t seq,
                              uint32_t length);
void gshmemi_wire_header_encode(const struct gshmemi_wire_header *h, uint8_t out[GSHMEMI_WIRE_HEADER_SIZE]);
/* Decodes and validates len bytes. Returns 0, or GSHMEMX_ERR_PROTOCOL with the reason
 * in err (truncated, bad magic, version mismatch naming both versions, unknown type,
 * length over the type's maximum). h is filled as far as it could be decoded. */
int gshmemi_wire_header_decode(const uint8_t *buf, size_t len, struct gshmemi_wire_header *h, char *err,
                               size_t errlen);

/* Payload codecs. Encoders return the encoded length (out holds at least the _MAX
 * size). Decoders return 0 or GSHMEMX_ERR_PROTOCOL with the reason in err. */
size_t gshmemi_wire_hello_encode(const struct gshmemi_wire_hello *hello, uint8_t *out);
int gshmemi_wire_hello_decode(const uint8_t *buf, size_t len, struct gshmemi_wire_hello *hello, char *err,
                              size_t errlen);
size_t gshmemi_wire_error_encode(int32_t status, const char *msg, uint8_t *out);
int gshmemi_wire_error_decode(const uint8_t *buf, size_t len, struct gshmemi_wire_error *e, char *err,
                              size_t errlen);
/* out holds GSHMEMI_WIRE_ABORT_MAX bytes (GSHMEMI_WIRE_ABORT_SIZE for kinds other than
 * MISSING). The decoder accepts exactly the layout above: ranks >= 0, strictly ascending,
 * joined 0 or 1, 1 <= nmissing, nlisted <= both limits. */
size_t gshmemi_wire_abort_encode(const struct gshmemi_wire_abort *a, uint8_t *out);
int gshmemi_wire_abort_decode(const uint8_t *buf, size_t len, struct gshmemi_wire_abort *a, char *err,
                              size_t errlen);

/*
 * Socket helpers. A deadline is an absolute CLOCK_MONOTONIC time in milliseconds,
 * or -1 for never. They work on blocking and nonblocking sockets, never raise
 * SIGPIPE, and return 0 or:
 *   GSHMEMX_ERR_TIMEOUT    the deadline passed (err says how many bytes had arrived)
 *   GSHMEMX_ERR_PEER_LOST  the peer closed or reset the connection between frames
 *   GSHMEMX_ERR_PROTOCOL   the connection closed inside a frame, or the frame is invalid
 *   GSHMEMX_ERR_SYSTEM     another socket error
 * err always names peer (e.g. "root 10.0.0.1:4000" or "PE 3").
 */
int64_t gshmemi_wire_now_ms(void);
/* timeout_s <= 0 means never. */
int64_t gshmemi_wire_deadline(double timeout_s);
/* Milliseconds left for poll(): -1 for never, 0 once passed. */
int gshmemi_wire_poll_ms(int64_t deadline);

int gshmemi_wire_write_all(int fd, const void *buf, size_t len, int64_t deadline, const char *peer, char *err,
                           size_t errlen);
int gshmemi_wire_read_all(int fd, void *buf, size_t len, int64_t deadline, const char *peer, char *err,
                          size_t errlen);
/* Sends header (h->length must be payload's size) and payload as one frame. */
int gshmemi_wire_send(int fd, const struct gshmemi_wire_header *h, const void *payload, int64_t deadline,
                      const char *peer, char *err, size_t errlen);
/* Receives and validates one header; the payload is still on the socket. */
int gshmemi_wire_recv_header(int fd, struct gshmemi_wire_header *h, int64_t deadline, const char *peer, char *err,
                             size_t errlen);
/* Receives one whole frame; *payload is malloc'ed (NULL when length is 0), freed by the caller. */
int gshmemi_wire_recv(int fd, struct gshmemi_wire_header *h, void **payload, int64_t deadline, const char *peer,
                      char *err, size_t errlen);

#endif
