/* The bootstrap root's sending side (see tcp_root_impl.h): every message to a connection
 * goes through its queue and out as the socket takes it, so the root never waits for a
 * PE to read. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "bootstrap/tcp_root_impl.h"
#include "bootstrap/wire.h"
#include "core/log.h"
#include "gshmem/status.h"

/* Writes what c's queue holds until the socket is full: 0 (all written, or the rest
 * waits for POLLOUT), or a transport status, logged, once the connection failed. */
int gshmemi_root_flush(struct gshmemi_tcp_root *root, struct root_conn *c)
{
    while (c->out_head != NULL) {
        struct root_out *o = c->out_head;
        size_t plen = o->blob ? o->blob->len : 0, total = GSHMEMI_WIRE_HEADER_SIZE + plen;
        struct iovec iov[2];
        int n = 0;
        if (o->sent < GSHMEMI_WIRE_HEADER_SIZE)
            iov[n++] = (struct iovec){o->hdr + o->sent, GSHMEMI_WIRE_HEADER_SIZE - o->sent};
        size_t poff = o->sent > GSHMEMI_WIRE_HEADER_SIZE ? o->sent - GSHMEMI_WIRE_HEADER_SIZE : 0;
        if (plen > poff) iov[n++] = (struct iovec){o->blob->data + poff, plen - poff};
        struct msghdr m = {.msg_iov = iov, .msg_iovlen = (size_t)n};
        ssize_t w = sendmsg(c->fd, &m, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
        if (w < 0) {
            int e = errno;
            if (!root->failed) GSHMEMI_WARN(BOOT, "bootstrap root: sending to %s: %s", c->peer, strerror(e));
            else GSHMEMI_INFO(BOOT, "bootstrap root: sending to %s: %s (the job is ending)", c->peer, strerror(e));
            return (e == EPIPE || e == ECONNRESET) ? GSHMEMX_ERR_PEER_LOST : GSHMEMX_ERR_SYSTEM;
        }
        o->sent += (size_t)w;
        c->out_progress_ms = gshmemi_wire_now_ms();
        if (o->sent < total) continue;
        c->out_head = o->next;
        if (c->out_head == NULL) c->out_tail = NULL;
        root_blob_put(o->blob);
        free(o);
    }
    return 0;
}

/* Queues a message for c, sharing blob (NULL: none), and writes what the socket takes
 * now; the poll loop writes the rest. Nonzero only when the connection failed: a PE that
 * stops reading delays nobody, and is lost once `timeout` s pass without progress. */
int gshmemi_root_send_blob(struct gshmemi_tcp_root *root, struct root_conn *c, unsigned type, uint32_t seq,
                          struct root_blob *blob, double timeout)
{
    struct root_out *o = calloc(1, sizeof(*o));
    if (o == NULL) {
        GSHMEMI_WARN(BOOT, "bootstrap root: no memory to queue a %s for %s", gshmemi_wire_type_name(type), c->peer);
        return GSHMEMX_ERR_NOMEM;
    }
    struct gshmemi_wire_header h;
    gshmemi_wire_header_init(&h, type, GSHMEMI_WIRE_ROOT, seq, blob ? (uint32_t)blob->len : 0);
    gshmemi_wire_header_encode(&h, o->hdr);
    o->blob = blob;
    if (blob) blob->refs++;
    o->timeout = timeout;
    if (c->out_head == NULL) {
        c->out_head = o;
        c->out_progress_ms = gshmemi_wire_now_ms();
    } else {
        c->out_tail->next = o;
    }
    c->out_tail = o;
    return gshmemi_root_flush(root, c);
}

struct root_blob *gshmemi_root_blob_new(const void *payload, size_t len)
{
    struct root_blob *b = malloc(sizeof(*b) + len);
    if (b == NULL) return NULL;
    b->refs = 1;
    b->len = len;
    if (payload != NULL && len) memcpy(b->data, payload, len);
    return b;
}

int gshmemi_root_send_timed(struct gshmemi_tcp_root *root, struct root_conn *c, unsigned type, uint32_t seq,
                           const void *payload, size_t len, double timeout)
{
    struct root_blob *b = len ? gshmemi_root_blob_new(payload, len) : NULL;
    if (len && b == NULL) {
        GSHMEMI_WARN(BOOT, "bootstrap root: no memory to queue a %s for %s", gshmemi_wire_type_name(type), c->peer);
        return GSHMEMX_ERR_NOMEM;
    }
    int rc = gshmemi_root_send_blob(root, c, type, seq, b, timeout);
    root_blob_put(b);
    return rc;
}

int gshmemi_root_send(struct gshmemi_tcp_root *root, struct root_conn *c, unsigned type, uint32_t seq,
                     const void *payload, size_t len)
{
    return gshmemi_root_send_timed(root, c, type, seq, payload, len, root->timeout);
}

int gshmemi_root_send_error(struct gshmemi_tcp_root *root, struct root_conn *c, int status, const char *msg)
{
    uint8_t buf[GSHMEMI_WIRE_ERROR_MAX];
    size_t n = gshmemi_wire_error_encode(status, msg, buf);
    return gshmemi_root_send(root, c, GSHMEMI_WIRE_ERROR, 0, buf, n);
}
