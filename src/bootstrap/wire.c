/* The bootstrap frame codec and deadline-bounded socket I/O (see wire.h). */
#include "bootstrap/wire.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>

#include "bootstrap/sha256.h"
#include "core/log.h"
#include "gshmem/status.h"

static const char *const wire_type_names[GSHMEMI_WIRE_TYPE_END] = {
    [GSHMEMI_WIRE_HELLO] = "HELLO",   [GSHMEMI_WIRE_WELCOME] = "WELCOME", [GSHMEMI_WIRE_GATHER] = "GATHER",
    [GSHMEMI_WIRE_RESULT] = "RESULT", [GSHMEMI_WIRE_ERROR] = "ERROR",     [GSHMEMI_WIRE_ABORT] = "ABORT",
    [GSHMEMI_WIRE_BYE] = "BYE",       [GSHMEMI_WIRE_CHALLENGE] = "CHALLENGE", [GSHMEMI_WIRE_AUTH] = "AUTH",
};

const char *gshmemi_wire_type_name(unsigned type)
{
    if (type == 0 || type >= GSHMEMI_WIRE_TYPE_END) return "unknown";
    return wire_type_names[type];
}

uint32_t gshmemi_wire_max_payload(unsigned type)
{
    switch (type) {
    case GSHMEMI_WIRE_HELLO: return GSHMEMI_WIRE_HELLO_MAX;
    case GSHMEMI_WIRE_WELCOME: return GSHMEMI_WIRE_WELCOME_SIZE;
    case GSHMEMI_WIRE_GATHER:
    case GSHMEMI_WIRE_RESULT: return GSHMEMI_WIRE_MAX_PAYLOAD;
    case GSHMEMI_WIRE_ERROR: return GSHMEMI_WIRE_ERROR_MAX;
    case GSHMEMI_WIRE_ABORT: return GSHMEMI_WIRE_ABORT_MAX;
    case GSHMEMI_WIRE_BYE: return 0;
    case GSHMEMI_WIRE_CHALLENGE: return GSHMEMI_WIRE_NONCE_SIZE;
    case GSHMEMI_WIRE_AUTH: return GSHMEMI_WIRE_PROOF_SIZE;
    default: return 0;
    }
}

void gshmemi_wire_auth_proof(const void *secret, size_t secret_len, const uint8_t nonce[GSHMEMI_WIRE_NONCE_SIZE],
                             int32_t rank, const char *job_id, uint8_t out[GSHMEMI_WIRE_PROOF_SIZE])
{
    uint8_t rank_le[4];
    for (int i = 0; i < 4; i++) rank_le[i] = (uint8_t)((uint32_t)rank >> (8 * i));
    const void *parts[3] = {nonce, rank_le, job_id};
    size_t lens[3] = {GSHMEMI_WIRE_NONCE_SIZE, sizeof(rank_le), strlen(job_id)};
    gshmemi_hmac_sha256(secret, secret_len, parts, lens, 3, out);
}

int gshmemi_wire_secret_load(const char *text, const char *file, uint8_t *out, size_t *len)
{
    int have_text = text != NULL && text[0] != '\0', have_file = file != NULL && file[0] != '\0';
    *len = 0;
    if (have_text && have_file) {
        GSHMEMI_ERROR(BOOT, "GSHMEM_BOOTSTRAP_SECRET and GSHMEM_BOOTSTRAP_SECRET_FILE are both set: set one");
        return GSHMEMX_ERR_CONFIG;
    }
    if (have_text) {
        size_t n = strlen(text);
        if (n > GSHMEMI_WIRE_SECRET_MAX) {
            GSHMEMI_ERROR(BOOT, "GSHMEM_BOOTSTRAP_SECRET is %zu bytes, longer than %d", n, GSHMEMI_WIRE_SECRET_MAX);
            return GSHMEMX_ERR_CONFIG;
        }
        memcpy(out, text, n);
        *len = n;
        return 0;
    }
    if (!have_file) return 0;
    FILE *f = fopen(file, "rb");
    if (f == NULL) {
        GSHMEMI_ERROR(BOOT, "GSHMEM_BOOTSTRAP_SECRET_FILE=%s: cannot read the job secret: %s", file, strerror(errno));
        return GSHMEMX_ERR_CONFIG;
    }
    size_t n = fread(out, 1, GSHMEMI_WIRE_SECRET_MAX, f);
    int bad = ferror(f), next = bad ? EOF : fgetc(f);
    /* One trailing newline is not part of the secret, also after 4096 bytes. */
    int more = next != EOF && !(next == '\n' && fgetc(f) == EOF);
    fclose(f);
    if (next == EOF && n > 0 && out[n - 1] == '\n') n--;
    if (bad || more || n == 0) {
        GSHMEMI_ERROR(BOOT, "GSHMEM_BOOTSTRAP_SECRET_FILE=%s: the job secret file is %s", file,
                      bad ? "unreadable" : more ? "longer than 4096 bytes" : "empty");
        return GSHMEMX_ERR_CONFIG;
    }
    *len = n;
    return 0;
}

int gshmemi_wire_random(void *out, size_t len)
{
    uint8_t *p = out;
    while (len > 0) {
        ssize_t n = getrandom(p, len, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return GSHMEMX_ERR_SYSTEM;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static void wire_put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static void wire_put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static uint16_t wire_get16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (p[1] << 8));
}

static uint32_t wire_get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

void gshmemi_wire_header_init(struct gshmemi_wire_header *h, unsigned type, int32_t sender, uint32_t seq,
                              uint32_t length)
{
    h->magic = GSHMEMI_WIRE_MAGIC;
    h->version = GSHMEMI_WIRE_VERSION;
    h->type = (uint16_t)type;
    h->sender = sender;
    h->seq = seq;
    h->length = length;
}

void gshmemi_wire_header_encode(const struct gshmemi_wire_header *h, uint8_t out[GSHMEMI_WIRE_HEADER_SIZE])
{
    wire_put32(out, h->magic);
    wire_put16(out + 4, h->version);
    wire_put16(out + 6, h->type);
    wire_put32(out + 8, (uint32_t)h->sender);
    wire_put32(out + 12, h->seq);
    wire_put32(out + 16, h->length);
}

int gshmemi_wire_header_decode(const uint8_t *buf, size_t len, struct gshmemi_wire_header *h, char *err,
                               size_t errlen)
{
    memset(h, 0, sizeof(*h));
    if (len < GSHMEMI_WIRE_HEADER_SIZE) {
        snprintf(err, errlen, "truncated header: %zu of %d bytes", len, GSHMEMI_WIRE_HEADER_SIZE);
        return GSHMEMX_ERR_PROTOCOL;
    }
    h->magic = wire_get32(buf);
    if (h->magic != GSHMEMI_WIRE_MAGIC) {
        snprintf(err, errlen, "not a gshmem bootstrap message (bad magic 0x%08x)", h->magic);
        return GSHMEMX_ERR_PROTOCOL;
    }
    h->version = wire_get16(buf + 4);
    if (h->version != GSHMEMI_WIRE_VERSION) {
        snprintf(err, errlen, "bootstrap protocol version mismatch: peer speaks version %u, this library version %u",
                 (unsigned)h->version, (unsigned)GSHMEMI_WIRE_VERSION);
        return GSHMEMX_ERR_PROTOCOL;
    }
    h->type = wire_get16(buf + 6);
    h->sender = (int32_t)wire_get32(buf + 8);
    h->seq = wire_get32(buf + 12);
    h->length = wire_get32(buf + 16);
    if (h->type == 0 || h->type >= GSHMEMI_WIRE_TYPE_END) {
        snprintf(err, errlen, "unknown message type %u", (unsigned)h->type);
        return GSHMEMX_ERR_PROTOCOL;
    }
    if (h->length > gshmemi_wire_max_payload(h->type)) {
        snprintf(err, errlen, "%s payload of %u bytes exceeds the maximum of %u", gshmemi_wire_type_name(h->type),
                 h->length, gshmemi_wire_max_payload(h->type));
        return GSHMEMX_ERR_PROTOCOL;
    }
    return 0;
}

size_t gshmemi_wire_hello_encode(const struct gshmemi_wire_hello *hello, uint8_t *out)
{
    size_t host_len = strnlen(hello->host, GSHMEMI_WIRE_NAME_MAX - 1);
    size_t job_len = strnlen(hello->job_id, GSHMEMI_WIRE_NAME_MAX - 1);
    size_t auth_len = hello->auth_len > GSHMEMI_WIRE_AUTH_MAX ? GSHMEMI_WIRE_AUTH_MAX : hello->auth_len;
    uint8_t *p = out + GSHMEMI_WIRE_HELLO_FIXED;

    wire_put32(out, (uint32_t)hello->rank);
    wire_put32(out + 4, (uint32_t)hello->nranks);
    wire_put32(out + 8, hello->pid);
    wire_put16(out + 12, hello->auth_method);
    wire_put16(out + 14, (uint16_t)auth_len);
    wire_put16(out + 16, (uint16_t)host_len);
    wire_put16(out + 18, (uint16_t)job_len);
    memcpy(p, hello->host, host_len);
    p += host_len;
    memcpy(p, hello->job_id, job_len);
    p += job_len;
    memcpy(p, hello->auth, auth_len);
    p += auth_len;
    return (size_t)(p - out);
}

static int wire_copy_name(char *dst, const uint8_t *src, size_t len, const char *what, char *err, size_t errlen)
{
    if (len >= GSHMEMI_WIRE_NAME_MAX || memchr(src, '\0', len) != NULL) {
        snprintf(err, errlen, "HELLO %s is malformed (%zu bytes)", what, len);
        return GSHMEMX_ERR_PROTOCOL;
    }
    memcpy(dst, src, len);
    dst[len] = '\0';
    return 0;
}

int gshmemi_wire_hello_decode(const uint8_t *buf, size_t len, struct gshmemi_wire_hello *hello, char *err,
                              size_t errlen)
{
    memset(hello, 0, sizeof(*hello));
    if (len < GSHMEMI_WIRE_HELLO_FIXED) {
        snprintf(err, errlen, "truncated HELLO: %zu of at least %d bytes", len, GSHMEMI_WIRE_HELLO_FIXED);
        return GSHMEMX_ERR_PROTOCOL;
    }
    hello->rank = (int32_t)wire_get32(buf);
    hello->nranks = (int32_t)wire_get32(buf + 4);
    hello->pid = wire_get32(buf + 8);
    hello->auth_method = wire_get16(buf + 12);
    hello->auth_len = wire_get16(buf + 14);
    size_t host_len = wire_get16(buf + 16);
    size_t job_len = wire_get16(buf + 18);
    size_t want = GSHMEMI_WIRE_HELLO_FIXED + host_len + job_len + hello->auth_len;
    if (want != len) {
        snprintf(err, errlen, "HELLO lengths add up to %zu bytes but the payload has %zu", want, len);
        return GSHMEMX_ERR_PROTOCOL;
    }
    if (hello->auth_len > GSHMEMI_WIRE_AUTH_MAX) {
        snprintf(err, errlen, "HELLO auth field of %u bytes exceeds %d", (unsigned)hello->auth_len,
                 GSHMEMI_WIRE_AUTH_MAX);
        return GSHMEMX_ERR_PROTOCOL;
    }
    const uint8_t *p = buf + GSHMEMI_WIRE_HELLO_FIXED;
    int rc = wire_copy_name(hello->host, p, host_len, "host name", err, errlen);
    if (rc) return rc;
    rc = wire_copy_name(hello->job_id, p + host_len, job_len, "job id", err, errlen);
    if (rc) return rc;
    memcpy(hello->auth, p + host_len + job_len, hello->auth_len);
    return 0;
}

size_t gshmemi_wire_error_encode(int32_t status, const char *msg, uint8_t *out)
{
    size_t n = strnlen(msg, GSHMEMI_WIRE_MSG_MAX - 1);
    wire_put32(out, (uint32_t)status);
    memcpy(out + 4, msg, n);
    return 4 + n;
}

int gshmemi_wire_error_decode(const uint8_t *buf, size_t len, struct gshmemi_wire_error *e, char *err,
                              size_t errlen)
{
    memset(e, 0, sizeof(*e));
    if (len < 4 || len > GSHMEMI_WIRE_ERROR_MAX) {
        snprintf(err, errlen, "malformed ERROR payload (%zu bytes)", len);
        return GSHMEMX_ERR_PROTOCOL;
    }
    e->status = (int32_t)wire_get32(buf);
    if (e->status <= 0 || e->status >= GSHMEMX_STATUS_COUNT) {
        snprintf(err, errlen, "ERROR carries unknown status %d", (int)e->status);
        return GSHMEMX_ERR_PROTOCOL;
    }
    size_t n = len - 4;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = buf[4 + i];
        e->msg[i] = (c < 0x20 || c > 0x7e) ? '?' : (char)c; /* printable for the log */
    }
    e->msg[n] = '\0';
    return 0;
}

size_t gshmemi_wire_abort_encode(const struct gshmemi_wire_abort *a, uint8_t *out)
{
    wire_put32(out, (uint32_t)a->status);
    wire_put32(out + 4, (uint32_t)a->origin);
    wire_put32(out + 8, a->kind);
    if (a->kind != GSHMEMI_WIRE_ABORT_MISSING) return GSHMEMI_WIRE_ABORT_SIZE;
    uint32_t n = a->nlisted < GSHMEMI_WIRE_MISSING_LIST_MAX ? a->nlisted : GSHMEMI_WIRE_MISSING_LIST_MAX;
    wire_put32(out + 12, a->round);
    wire_put32(out + 16, a->nmissing);
    wire_put32(out + 20, n);
    for (uint32_t i = 0; i < n; i++) {
        wire_put32(out + GSHMEMI_WIRE_ABORT_MISSING_FIXED + 8 * i, (uint32_t)a->missing[i].rank);
        wire_put32(out + GSHMEMI_WIRE_ABORT_MISSING_FIXED + 8 * i + 4, a->missing[i].joined);
    }
    return GSHMEMI_WIRE_ABORT_MISSING_FIXED + 8 * (size_t)n;
}

/* The list of a MISSING abort whose fixed part is in a. */
static int wire_missing_decode(const uint8_t *buf, size_t len, struct gshmemi_wire_abort *a, char *err,
                               size_t errlen)
{
    if (len < GSHMEMI_WIRE_ABORT_MISSING_FIXED) {
        snprintf(err, errlen, "malformed ABORT payload (%zu bytes, a MISSING abort has at least %d)", len,
                 GSHMEMI_WIRE_ABORT_MISSING_FIXED);
        return GSHMEMX_ERR_PROTOCOL;
    }
    a->round = wire_get32(buf + 12);
    a->nmissing = wire_get32(buf + 16);
    a->nlisted = wire_get32(buf + 20);
    if (a->nmissing == 0 || a->nlisted > a->nmissing || a->nlisted > GSHMEMI_WIRE_MISSING_LIST_MAX) {
        snprintf(err, errlen, "ABORT lists %u of %u missing PEs (at most %d listed, at least 1 missing)", a->nlisted,
                 a->nmissing, GSHMEMI_WIRE_MISSING_LIST_MAX);
        return GSHMEMX_ERR_PROTOCOL;
    }
    size_t want = GSHMEMI_WIRE_ABORT_MISSING_FIXED + 8 * (size_t)a->nlisted;
    if (len != want) {
        snprintf(err, errlen, "malformed ABORT payload (%zu bytes, %u missing PEs listed make %zu)", len, a->nlisted,
                 want);
        return GSHMEMX_ERR_PROTOCOL;
    }
    for (uint32_t i = 0; i < a->nlisted; i++) {
        const uint8_t *p = buf + GSHMEMI_WIRE_ABORT_MISSING_FIXED + 8 * i;
        a->missing[i].rank = (int32_t)wire_get32(p);
        a->missing[i].joined = wire_get32(p + 4);
        if (a->missing[i].rank < 0 || (i > 0 && a->missing[i].rank <= a->missing[i - 1].rank) ||
            a->missing[i].joined > 1) {
            snprintf(err, errlen, "ABORT missing PE entry %u is invalid (rank %d, joined %u)", i,
                     (int)a->missing[i].rank, a->missing[i].joined);
            return GSHMEMX_ERR_PROTOCOL;
        }
    }
    return 0;
}

int gshmemi_wire_abort_decode(const uint8_t *buf, size_t len, struct gshmemi_wire_abort *a, char *err,
                              size_t errlen)
{
    memset(a, 0, sizeof(*a));
    if (len < GSHMEMI_WIRE_ABORT_SIZE || len > GSHMEMI_WIRE_ABORT_MAX) {
        snprintf(err, errlen, "malformed ABORT payload (%zu bytes, expected %d to %d)", len, GSHMEMI_WIRE_ABORT_SIZE,
                 GSHMEMI_WIRE_ABORT_MAX);
        return GSHMEMX_ERR_PROTOCOL;
    }
    a->status = (int32_t)wire_get32(buf);
    a->origin = (int32_t)wire_get32(buf + 4);
    a->kind = wire_get32(buf + 8);
    if (a->kind > GSHMEMI_WIRE_ABORT_MISSING) {
        snprintf(err, errlen, "ABORT carries unknown kind %u", a->kind);
        return GSHMEMX_ERR_PROTOCOL;
    }
    if (a->kind == GSHMEMI_WIRE_ABORT_MISSING) return wire_missing_decode(buf, len, a, err, errlen);
    if (len != GSHMEMI_WIRE_ABORT_SIZE) {
        snprintf(err, errlen, "malformed ABORT payload (%zu bytes, expected %d)", len, GSHMEMI_WIRE_ABORT_SIZE);
        return GSHMEMX_ERR_PROTOCOL;
    }
    return 0;
}

int64_t gshmemi_wire_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t gshmemi_wire_deadline(double timeout_s)
{
    if (timeout_s <= 0) return -1;
    return gshmemi_wire_now_ms() + (int64_t)(timeout_s * 1000.0 + 0.5);
}

int gshmemi_wire_poll_ms(int64_t deadline)
{
    if (deadline < 0) return -1;
    int64_t left = deadline - gshmemi_wire_now_ms();
    if (left <= 0) return 0;
    return left > 60000 ? 60000 : (int)left;
}

/* Waits until fd is ready for events or the deadline passes: 0, 1 on timeout, or -errno. */
static int wire_wait(int fd, short events, int64_t deadline)
{
    for (;;) {
        struct pollfd pfd = {.fd = fd, .events = events};
        int ms = gshmemi_wire_poll_ms(deadline);
        int n = poll(&pfd, 1, ms);
        if (n > 0) return 0;
        if (n < 0 && errno != EINTR) return -errno;
        if (n == 0 && ms == 0) return 1; /* else poll's 60 s cap ran out: go around */
    }
}

int gshmemi_wire_write_all(int fd, const void *buf, size_t len, int64_t deadline, const char *peer, char *err,
                           size_t errlen)
{
    const char *p = buf;
    size_t done = 0;
    while (done < len) {
        ssize_t n = send(fd, p + done, len - done, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            done += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
            int e = errno;
            snprintf(err, errlen, "sending to %s: %s", peer, strerror(e));
            return (e == EPIPE || e == ECONNRESET) ? GSHMEMX_ERR_PEER_LOST : GSHMEMX_ERR_SYSTEM;
        }
        int w = wire_wait(fd, POLLOUT, deadline);
        if (w == 1) {
            snprintf(err, errlen, "timed out sending to %s (%zu of %zu bytes sent)", peer, done, len);
            return GSHMEMX_ERR_TIMEOUT;
        }
        if (w < 0) {
            snprintf(err, errlen, "waiting to send to %s: %s", peer, strerror(-w));
            return GSHMEMX_ERR_SYSTEM;
        }
    }
    return 0;
}

/* Reads len bytes; `before` bytes of the same frame were read already (for messages). */
static int wire_read_frame_part(int fd, void *buf, size_t len, size_t before, size_t frame_len, int64_t deadline,
                                const char *peer, char *err, size_t errlen)
{
    char *p = buf;
    size_t done = 0;
    while (done < len) {
        ssize_t n = recv(fd, p + done, len - done, MSG_DONTWAIT);
        if (n > 0) {
            done += (size_t)n;
            continue;
        }
        size_t got = before + done;
        if (n == 0 || (errno == ECONNRESET)) {
            if (got == 0) {
                snprintf(err, errlen, "%s closed the connection", peer);
                return GSHMEMX_ERR_PEER_LOST;
            }
            snprintf(err, errlen, "truncated message from %s: connection closed after %zu of %zu bytes", peer,
                     got, frame_len);
            return GSHMEMX_ERR_PROTOCOL;
        }
        if (errno == EINTR) continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) {
            snprintf(err, errlen, "receiving from %s: %s", peer, strerror(errno));
            return GSHMEMX_ERR_SYSTEM;
        }
        int w = wire_wait(fd, POLLIN, deadline);
        if (w == 1) {
            snprintf(err, errlen, "timed out waiting for %s (%zu of %zu bytes of a message received)", peer, got,
                     frame_len);
            return GSHMEMX_ERR_TIMEOUT;
        }
        if (w < 0) {
            snprintf(err, errlen, "waiting for %s: %s", peer, strerror(-w));
            return GSHMEMX_ERR_SYSTEM;
        }
    }
    return 0;
}

int gshmemi_wire_read_all(int fd, void *buf, size_t len, int64_t deadline, const char *peer, char *err,
                          size_t errlen)
{
    return wire_read_frame_part(fd, buf, len, 0, len, deadline, peer, err, errlen);
}

int gshmemi_wire_send(int fd, const struct gshmemi_wire_header *h, const void *payload, int64_t deadline,
                      const char *peer, char *err, size_t errlen)
{
    uint8_t hdr[GSHMEMI_WIRE_HEADER_SIZE];
    gshmemi_wire_header_encode(h, hdr);
    int rc = gshmemi_wire_write_all(fd, hdr, sizeof(hdr), deadline, peer, err, errlen);
    if (rc == 0 && h->length > 0) rc = gshmemi_wire_write_all(fd, payload, h->length, deadline, peer, err, errlen);
    return rc;
}

int gshmemi_wire_recv_header(int fd, struct gshmemi_wire_header *h, int64_t deadline, const char *peer, char *err,
                             size_t errlen)
{
    uint8_t hdr[GSHMEMI_WIRE_HEADER_SIZE];
    int rc = wire_read_frame_part(fd, hdr, sizeof(hdr), 0, sizeof(hdr), deadline, peer, err, errlen);
    if (rc) return rc;
    char why[GSHMEMI_WIRE_ERR_MAX];
    rc = gshmemi_wire_header_decode(hdr, sizeof(hdr), h, why, sizeof(why));
    if (rc) snprintf(err, errlen, "from %s: %s", peer, why);
    return rc;
}

int gshmemi_wire_recv(int fd, struct gshmemi_wire_header *h, void **payload, int64_t deadline, const char *peer,
                      char *err, size_t errlen)
{
    *payload = NULL;
    int rc = gshmemi_wire_recv_header(fd, h, deadline, peer, err, errlen);
    if (rc || h->length == 0) return rc;
    void *buf = malloc(h->length);
    if (buf == NULL) {
        snprintf(err, errlen, "no memory for a %u-byte message from %s", h->length, peer);
        return GSHMEMX_ERR_NOMEM;
    }
    rc = wire_read_frame_part(fd, buf, h->length, GSHMEMI_WIRE_HEADER_SIZE,
                              GSHMEMI_WIRE_HEADER_SIZE + (size_t)h->length, deadline, peer, err, errlen);
    if (rc) {
        free(buf);
        return rc;
    }
    *payload = buf;
    return 0;
}
