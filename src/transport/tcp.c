/*
 * tcp transport: sending, the service thread, pending requests and the net's life
 * (design in tcp_impl.h; opening the connections is tcp_connect.c).
 *
 * Connections are opened at init, one per pair of PEs that tcp reaches: every PE
 * listens on an ephemeral port, publishes its IPv4 addresses, port and a random token
 * in the bootstrap exchange (which the job secret protects), connects to every higher
 * PE and accepts every lower one. A connector proves whom it wants by echoing the
 * acceptor's token; the listener is closed once all are in, so nothing listens after
 * init. PEs on the same node connect over 127.0.0.1.
 */
#include "transport/tcp_impl.h"

#include "bootstrap/bootstrap.h"
#include "core/env.h"
#include "core/heap.h"
#include "core/log.h"
#include "core/relax.h"

#include <gshmem/status.h>

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

/* A thread waiting for an answer pauses this many polls (about 1.5 us), then yields on
 * every poll, as core's waits do (src/core/progress.c). */
#define TCP_SPINS_BEFORE_YIELD 64u
/* The service thread polls without sleeping this long after the last frame. */
#define TCP_BUSY_POLL_S 200e-6

static struct tcp_net *tcp_global; /* one per process; refcounted by the transports */

double gshmemi_tcp_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Milliseconds left until deadline for poll (-1: none; 0: passed). */
int gshmemi_tcp_poll_ms(double deadline)
{
    if (deadline <= 0) return -1;
    double left = deadline - gshmemi_tcp_now();
    if (left <= 0) return 0;
    return left > 1e6 ? 1000000000 : (int)(left * 1e3) + 1;
}

double gshmemi_tcp_deadline(const struct tcp_net *net)
{
    return net->timeout > 0 ? gshmemi_tcp_now() + net->timeout : 0;
}

void gshmemi_tcp_lost(struct tcp_net *net, struct tcp_conn *c, const char *why)
{
    /* Logged by whoever ends the job (gshmemi_transports_loss): after a peer's
     * gshmem_global_exit its close is no error. */
    pthread_mutex_lock(&net->slot_lock);
    if (!net->lost_msg[0])
        snprintf(net->lost_msg, sizeof(net->lost_msg), "tcp: PE %d lost %s: %s", net->my_pe, c->name, why);
    pthread_mutex_unlock(&net->slot_lock);
    int expected = 0;
    atomic_compare_exchange_strong(&net->failed, &expected, GSHMEMX_ERR_PEER_LOST);
}

const char *gshmemi_transport_tcp_loss(void)
{
    return tcp_global && tcp_global->lost_msg[0] ? tcp_global->lost_msg : NULL;
}

/* ---- Sending ---------------------------------------------------------------- */

/* Writes iov (up to 3 parts) fully; blocking writers wait for POLLOUT up to deadline.
 * Returns 0, -EAGAIN when nonblocking and nothing more fits (*done says how much went),
 * or -errno. */
int gshmemi_tcp_writev(int fd, struct iovec *iov, int n, size_t *done, int block, double deadline)
{
    size_t total = 0;
    for (int i = 0; i < n; i++) total += iov[i].iov_len;
    while (*done < total) {
        struct iovec cur[3];
        int k = 0;
        size_t skip = *done;
        for (int i = 0; i < n; i++) {
            if (skip >= iov[i].iov_len) {
                skip -= iov[i].iov_len;
                continue;
            }
            cur[k].iov_base = (char *)iov[i].iov_base + skip;
            cur[k++].iov_len = iov[i].iov_len - skip;
            skip = 0;
        }
        struct msghdr msg = {.msg_iov = cur, .msg_iovlen = (size_t)k};
        ssize_t w = sendmsg(fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w > 0) {
            *done += (size_t)w;
            continue;
        }
        if (w < 0 && errno == EINTR) continue;
        if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK) return -errno;
        if (!block) return -EAGAIN;
        struct pollfd p = {.fd = fd, .events = POLLOUT};
        int ms = gshmemi_tcp_poll_ms(deadline);
        if (ms == 0) return -ETIMEDOUT;
        if (poll(&p, 1, ms) < 0 && errno != EINTR) return -errno;
    }
    return 0;
}

/* Under c->tx: txbuf is empty again. */
static void tcp_uncorked(struct tcp_net *net, struct tcp_conn *c)
{
    c->tx_at = c->tx_len = 0;
    if (!atomic_load_explicit(&c->corked, memory_order_relaxed)) return;
    atomic_store(&c->corked, 0);
    atomic_fetch_sub(&net->ncorked, 1);
}

static int tcp_write_failed(struct tcp_net *net, struct tcp_conn *c, int rc, const char *what)
{
    char why[160];
    snprintf(why, sizeof(why), "sending %s: %s", what,
             rc == -ETIMEDOUT ? "no progress within GSHMEM_TIMEOUT" : strerror(-rc));
    gshmemi_tcp_lost(net, c, why);
    return GSHMEMX_ERR_PEER_LOST;
}

/* Under c->tx: writes what waits in txbuf; blocking, or (the service thread) as much as
 * fits now. 0 once txbuf is empty, -EAGAIN (nonblocking: txbuf keeps the rest, which
 * every writer finishes before it starts a frame), or GSHMEMX_ERR_PEER_LOST. */
static int tcp_push_locked(struct tcp_net *net, struct tcp_conn *c, int block)
{
    if (c->tx_len == c->tx_at) return 0;
    struct iovec iov = {c->txbuf + c->tx_at, c->tx_len - c->tx_at};
    size_t done = 0;
    int rc = gshmemi_tcp_writev(c->fd, &iov, 1, &done, block, block ? gshmemi_tcp_deadline(net) : 0);
    if (rc == 0) {
        tcp_uncorked(net, c);
        return 0;
    }
    c->tx_at += done;
    return rc == -EAGAIN ? rc : tcp_write_failed(net, c, rc, "held-back puts");
}

/* Writes what connections hold in txbuf: every connection (min_age 0; application
 * threads, blocking) or, for the service thread's backstop, those whose oldest frame has
 * waited min_age, as much as fits now. Skips connections another thread is writing to:
 * its frame takes ours with it, or it only adds one and the backstop comes next. */
static void tcp_push_waiting(struct tcp_net *net, double min_age, int service)
{
    if (atomic_load(&net->ncorked) == 0) return;
    double now = min_age > 0 ? gshmemi_tcp_now() : 0;
    for (int pe = 0; pe < net->n_pes; pe++) {
        struct tcp_conn *c = &net->conns[pe];
        if (!atomic_load_explicit(&c->corked, memory_order_relaxed) || (service && c->tx_held)) continue;
        if (pthread_mutex_trylock(&c->tx) != 0) continue;
        if (atomic_load_explicit(&c->corked, memory_order_relaxed) && (min_age <= 0 || now - c->corked_at >= min_age))
            tcp_push_locked(net, c, !service);
        pthread_mutex_unlock(&c->tx);
    }
}

void gshmemi_tcp_push(struct tcp_net *net)
{
    tcp_push_waiting(net, 0, 0);
}

/* The backstop (service thread): a put followed by no call into gshmem. */
static void tcp_push_held(struct tcp_net *net)
{
    tcp_push_waiting(net, GSHMEMI_TCP_CORK_MAX_S, 1);
}

/* Whether f may wait in txbuf for the next frame: small puts only. Everything else
 * (requests awaiting an answer, signals, atomics, quiet) goes at once, taking whatever
 * waits in txbuf with it. */
static int tcp_may_hold(const struct gshmemi_tcp_frame *f)
{
    return (f->type == GSHMEMI_TCP_PUT || f->type == GSHMEMI_TCP_IPUT) && f->length <= GSHMEMI_TCP_CORK_BYTES;
}

int gshmemi_tcp_send(struct tcp_net *net, struct tcp_conn *c, struct gshmemi_tcp_frame *f, const void *payload)
{
    int failed = atomic_load(&net->failed);
    if (failed) return failed;
    if (atomic_load(&c->bye)) {
        GSHMEMI_ERROR(TRANSPORT, "tcp: PE %d sends %s to %s, which has already finalized", net->my_pe,
                      gshmemi_tcp_type_name(f->type), c->name);
        return GSHMEMX_ERR_PEER_LOST;
    }
    unsigned char hdr[GSHMEMI_TCP_HEADER_SIZE];
    gshmemi_tcp_frame_encode(f, hdr);
    const size_t need = sizeof(hdr) + f->length;
    pthread_mutex_lock(&c->tx);
    int hold = tcp_may_hold(f) && c->tx_len + need <= GSHMEMI_TCP_TXBUF; /* full: this frame takes it along */
    if (hold && !c->txbuf && !(c->txbuf = malloc(GSHMEMI_TCP_TXBUF))) hold = 0;
    if (hold && !atomic_load_explicit(&c->corked, memory_order_relaxed)) {
        c->corked_at = gshmemi_tcp_now();
        atomic_store(&c->corked, 1);
        atomic_fetch_add(&net->ncorked, 1); /* before reading sleeping: see tcp_service */
    }
    int wake = 0, rc = 0;
    if (hold && atomic_load(&net->sleeping)) {
        hold = 0; /* nobody would push it: send it now, and wake the thread so the next ones may wait */
        wake = !atomic_exchange(&net->wake_asked, 1);
    }
    if (hold) {
        memcpy(c->txbuf + c->tx_len, hdr, sizeof(hdr));
        if (f->length) memcpy(c->txbuf + c->tx_len + sizeof(hdr), payload, f->length);
        c->tx_len += need;
    } else { /* what waits, then this frame: one sendmsg */
        struct iovec iov[3];
        int n = 0;
        if (c->tx_len > c->tx_at) iov[n++] = (struct iovec){c->txbuf + c->tx_at, c->tx_len - c->tx_at};
        iov[n++] = (struct iovec){hdr, sizeof(hdr)};
        if (f->length) iov[n++] = (struct iovec){(void *)payload, f->length};
        size_t done = 0;
        rc = gshmemi_tcp_writev(c->fd, iov, n, &done, 1, gshmemi_tcp_deadline(net));
        if (rc == 0) tcp_uncorked(net, c);
    }
    pthread_mutex_unlock(&c->tx);
    if (wake && write(net->wake[1], "h", 1) < 0) {} /* after our frame: not on its path */
    if (rc == 0) {
        atomic_fetch_add_explicit(&net->frames_out, 1, memory_order_relaxed);
        return 0;
    }
    char what[64];
    snprintf(what, sizeof(what), "%s (%u bytes)", gshmemi_tcp_type_name(f->type), f->length);
    return tcp_write_failed(net, c, rc, what);
}

/* Service thread: writes queued answers while they fit; keeps tx across turns while a
 * frame is half written, so no other writer can interleave. */
static int tcp_flush(struct tcp_net *net, struct tcp_conn *c)
{
    while (c->out_head) {
        if (!c->tx_held) {
            if (pthread_mutex_trylock(&c->tx) != 0) return 0; /* a sender is busy: next turn */
            c->tx_held = 1;
        }
        struct tcp_out *o = c->out_head;
        if (o->done == 0 && !o->started) { /* not started: what waits in txbuf goes first */
            int prc = tcp_push_locked(net, c, 0);
            if (prc == -EAGAIN) {
                pthread_mutex_unlock(&c->tx);
                c->tx_held = 0;
                return 0;
            }
            if (prc != 0) return prc;
        }
        struct iovec iov = {o->data, o->len};
        int rc = gshmemi_tcp_writev(c->fd, &iov, 1, &o->done, 0, 0);
        if (rc == -EAGAIN) {
            if (o->done == 0 && !o->started) { /* nothing of it went: others may write meanwhile */
                pthread_mutex_unlock(&c->tx);
                c->tx_held = 0;
            }
            return 0;
        }
        if (rc != 0) return tcp_write_failed(net, c, rc, "an answer");
        c->out_head = o->next;
        if (!c->out_head) c->out_tail = NULL;
        free(o);
        pthread_mutex_unlock(&c->tx);
        c->tx_held = 0;
    }
    return 0;
}

int gshmemi_tcp_answer(struct tcp_net *net, struct tcp_conn *c, struct gshmemi_tcp_frame *f, const void *payload)
{
    unsigned char hdr[GSHMEMI_TCP_HEADER_SIZE];
    gshmemi_tcp_frame_encode(f, hdr);
    size_t total = sizeof(hdr) + f->length, done = 0;
    atomic_fetch_add_explicit(&net->frames_out, 1, memory_order_relaxed);
    if (!c->out_head && !c->tx_held && pthread_mutex_trylock(&c->tx) == 0) {
        int rc = tcp_push_locked(net, c, 0); /* what waits in txbuf goes first */
        if (rc == 0) {
            struct iovec iov[2] = {{hdr, sizeof(hdr)}, {(void *)payload, f->length}};
            rc = gshmemi_tcp_writev(c->fd, iov, f->length ? 2 : 1, &done, 0, 0);
            if (rc != 0 && rc != -EAGAIN) {
                pthread_mutex_unlock(&c->tx);
                return tcp_write_failed(net, c, rc, gshmemi_tcp_type_name(f->type));
            }
            c->tx_held = rc == -EAGAIN && done > 0; /* half a frame went: keep the stream until the rest has */
        }
        if (!c->tx_held) pthread_mutex_unlock(&c->tx);
        if (rc == 0) return 0;
        if (rc != -EAGAIN) return rc;
    }
    struct tcp_out *o = malloc(sizeof(*o) + total - done);
    if (!o) return GSHMEMX_ERR_NOMEM;
    o->next = NULL;
    o->len = total - done;
    o->done = 0;
    o->started = done > 0;
    size_t from_hdr = done < sizeof(hdr) ? sizeof(hdr) - done : 0;
    memcpy(o->data, hdr + (sizeof(hdr) - from_hdr), from_hdr);
    size_t pay_done = done > sizeof(hdr) ? done - sizeof(hdr) : 0;
    if (f->length) memcpy(o->data + from_hdr, (const char *)payload + pay_done, f->length - pay_done);
    if (c->out_tail) c->out_tail->next = o;
    else c->out_head = o;
    c->out_tail = o;
    return 0;
}

/* Service thread, while a frame is half read: writes the answers queued for every peer.
 * The rest of our frame may come from a peer whose service thread is itself half-way
 * through reading one of those answers (two PEs getting from each other, or a ring of
 * them, with more in flight than the socket buffers hold): without this both waited
 * until GSHMEM_TIMEOUT. Fills pfd (when given) with a POLLOUT entry for each connection
 * whose answers still wait; returns how many, or -status. */
static int tcp_flush_all(struct tcp_net *net, struct pollfd *pfd)
{
    int n = 0;
    for (int pe = 0; pe < net->n_pes; pe++) {
        struct tcp_conn *c = &net->conns[pe];
        if (c->fd < 0 || c->closed || !c->out_head) continue;
        int rc = tcp_flush(net, c);
        if (rc != 0) return -rc;
        if (c->out_head && pfd) pfd[n++] = (struct pollfd){.fd = c->fd, .events = POLLOUT};
    }
    return n;
}

/* ---- Receiving (service thread) ------------------------------------------------ */

/* Moves up to len buffered bytes to p; returns how many. */
static size_t tcp_take_buffered(struct tcp_conn *c, char *p, size_t len)
{
    size_t n = c->rx_len - c->rx_at < len ? c->rx_len - c->rx_at : len;
    memcpy(p, c->rxbuf + c->rx_at, n);
    c->rx_at += n;
    if (c->rx_at == c->rx_len) c->rx_at = c->rx_len = 0;
    return n;
}

int gshmemi_tcp_read(struct tcp_net *net, struct tcp_conn *c, void *buf, size_t len)
{
    char *p = buf;
    size_t n = tcp_take_buffered(c, p, len);
    p += n;
    len -= n;
    double deadline = len ? gshmemi_tcp_deadline(net) : 0;
    while (len > 0) { /* the buffer is empty here */
        int direct = len >= sizeof(c->rxbuf);
        ssize_t r = recv(c->fd, direct ? (void *)p : (void *)c->rxbuf, direct ? len : sizeof(c->rxbuf), MSG_DONTWAIT);
        if (r > 0 && !direct) {
            c->rx_len = (size_t)r;
            r = (ssize_t)tcp_take_buffered(c, p, len);
        }
        if (r > 0) {
            p += r;
            len -= (size_t)r;
            continue;
        }
        if (r == 0) {
            gshmemi_tcp_lost(net, c, atomic_load(&c->bye) ? "closed after BYE in the middle of a frame"
                                                          : "connection closed (the process exited or its node went away)");
            return GSHMEMX_ERR_PEER_LOST;
        }
        if (errno == EINTR) continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) {
            char why[96];
            snprintf(why, sizeof(why), "receiving: %s", strerror(errno));
            gshmemi_tcp_lost(net, c, why);
            return GSHMEMX_ERR_PEER_LOST;
        }
        int ms = gshmemi_tcp_poll_ms(deadline);
        if (ms == 0) {
            gshmemi_tcp_lost(net, c, "a frame stopped arriving half-way (GSHMEM_TIMEOUT)");
            return GSHMEMX_ERR_PEER_LOST;
        }
        /* The rest of the frame may be held back by a peer whose service thread waits
         * the same way for ours: keep writing our answers, and pushing what we hold,
         * while we wait; poll wakes for our data or for room for those answers. */
        struct pollfd *pf = net->read_pfd; /* the service thread's, made before its first read */
        pf[0] = (struct pollfd){.fd = c->fd, .events = POLLIN};
        int waiting = tcp_flush_all(net, pf + 1);
        if (waiting < 0) return -waiting;
        if (atomic_load(&net->ncorked) > 0) {
            tcp_push_held(net);
            if (atomic_load(&net->ncorked) > 0) ms = 0; /* still held: look again soon */
        }
        if (poll(pf, (nfds_t)(1 + waiting), ms) == 0 && ms == 0) sched_yield(); /* let the others run meanwhile */
    }
    return 0;
}

/* One frame from c; 1 when the connection closed cleanly after BYE. */
static int tcp_service_frame(struct tcp_net *net, struct tcp_conn *c)
{
    unsigned char hdr[GSHMEMI_TCP_HEADER_SIZE];
    if (atomic_load(&c->bye) && c->rx_at == c->rx_len) {
        char probe;
        ssize_t r = recv(c->fd, &probe, 1, MSG_DONTWAIT | MSG_PEEK);
        if (r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) return 1;
    }
    int rc = gshmemi_tcp_read(net, c, hdr, sizeof(hdr));
    if (rc != 0) return rc;
    struct gshmemi_tcp_frame f;
    char err[160];
    if (gshmemi_tcp_frame_decode(hdr, (unsigned)__atomic_load_n(&net->nheaps, __ATOMIC_ACQUIRE), &f, err, sizeof(err)) != 0) {
        GSHMEMI_ERROR(TRANSPORT, "tcp: malformed frame from %s on PE %d: %s", c->name, net->my_pe, err);
        gshmemi_tcp_lost(net, c, "malformed frame");
        return GSHMEMX_ERR_PROTOCOL;
    }
    atomic_fetch_add_explicit(&net->frames_in, 1, memory_order_relaxed);
    GSHMEMI_TRACE(TRANSPORT, "tcp: %s from %s: tag %llu, %u bytes, heap offset %llu, aux 0x%x",
                  gshmemi_tcp_type_name(f.type), c->name, (unsigned long long)f.tag, f.length,
                  (unsigned long long)f.offset, (unsigned)f.aux);
    switch (f.type) {
    case GSHMEMI_TCP_DATA:
    case GSHMEMI_TCP_VALUE:
    case GSHMEMI_TCP_ACK:
        return gshmemi_tcp_complete(net, c, &f);
    case GSHMEMI_TCP_BYE:
        atomic_store(&c->bye, 1);
        return 0;
    case GSHMEMI_TCP_HELLO:
    case GSHMEMI_TCP_WELCOME:
        GSHMEMI_ERROR(TRANSPORT, "tcp: %s sent %s after the connection was set up (PE %d)", c->name,
                      gshmemi_tcp_type_name(f.type), net->my_pe);
        gshmemi_tcp_lost(net, c, "unexpected frame");
        return GSHMEMX_ERR_PROTOCOL;
    default:
        return gshmemi_tcp_apply(net, c, &f);
    }
}

static __thread int tcp_service_thread; /* set on the service thread */

int gshmemi_tcp_on_service_thread(void)
{
    return tcp_service_thread;
}

static void *tcp_service(void *arg)
{
    struct tcp_net *net = arg;
    tcp_service_thread = 1;
    struct pollfd *pfd = calloc((size_t)net->n_pes + 1, sizeof(*pfd));
    int *conn_of = calloc((size_t)net->n_pes + 1, sizeof(int));
    net->read_pfd = calloc((size_t)net->n_pes + 1, sizeof(*net->read_pfd));
    if (!pfd || !conn_of || !net->read_pfd) {
        GSHMEMI_ERROR(TRANSPORT, "tcp: PE %d: no memory for the service thread", net->my_pe);
        atomic_store(&net->failed, GSHMEMX_ERR_NOMEM);
        free(pfd);
        free(conn_of);
        free(net->read_pfd);
        net->read_pfd = NULL;
        return NULL;
    }
    double last_activity = gshmemi_tcp_now();
    while (!atomic_load(&net->stop)) {
        int n = 0;
        pfd[n++] = (struct pollfd){.fd = net->wake[0], .events = POLLIN};
        for (int pe = 0; pe < net->n_pes; pe++) {
            struct tcp_conn *c = &net->conns[pe];
            if (c->fd < 0 || c->closed) continue;
            conn_of[n] = pe;
            pfd[n++] = (struct pollfd){.fd = c->fd, .events = (short)(POLLIN | (c->out_head ? POLLOUT : 0))};
        }
        double now = gshmemi_tcp_now();
        tcp_push_held(net);
        int busy = now - last_activity < TCP_BUSY_POLL_S || atomic_load(&net->ncorked) > 0;
        int dozing = !busy;
        if (dozing) {
            /* Senders hold nothing back while we sleep. One that read sleeping as 0 has
             * counted its connection in ncorked first, so we see it and stay awake. */
            atomic_store(&net->wake_asked, 0);
            atomic_store(&net->sleeping, 1);
            busy = atomic_load(&net->ncorked) > 0;
        }
        int ready = poll(pfd, (nfds_t)n, busy ? 0 : 100);
        if (dozing) atomic_store(&net->sleeping, 0);
        if (ready == 0 && busy) sched_yield(); /* more threads than cores: let them run */
        if (ready <= 0) continue;
        if (pfd[0].revents) { /* a sender that found us asleep: traffic is coming */
            char sink[64];
            while (read(net->wake[0], sink, sizeof(sink)) > 0) {}
            last_activity = gshmemi_tcp_now();
        }
        for (int i = 1; i < n; i++) {
            struct tcp_conn *c = &net->conns[conn_of[i]];
            if (!pfd[i].revents) continue;
            last_activity = gshmemi_tcp_now();
            if (pfd[i].revents & (POLLIN | POLLHUP | POLLERR)) {
                int rc;
                do { /* every whole frame the last read brought in */
                    rc = tcp_service_frame(net, c);
                } while (rc == 0 && c->rx_at < c->rx_len && !atomic_load(&net->failed));
                if (rc == 1) { /* clean close after BYE; the fd is closed with the net */
                    if (c->tx_held) pthread_mutex_unlock(&c->tx);
                    c->tx_held = 0;
                    c->closed = 1;
                    continue;
                }
                if (rc != 0 || atomic_load(&net->failed)) {
                    /* A broken connection or a bad frame has its story in lost_msg; anything
                     * else (no memory, a CUDA copy) is told here, or the PE would end silently. */
                    if (rc != 0 && !atomic_load(&net->failed)) {
                        GSHMEMI_ERROR(TRANSPORT, "tcp: PE %d could not serve a frame from %s: %s", net->my_pe,
                                      c->name, gshmemx_strerror(rc));
                        atomic_store(&net->failed, rc);
                        gshmemi_transport_fatal(rc);
                    }
                    gshmemi_transport_fatal(GSHMEMX_ERR_PEER_LOST);
                    goto out;
                }
            }
            if (tcp_flush(net, c) != 0) {
                gshmemi_transport_fatal(GSHMEMX_ERR_PEER_LOST);
                goto out;
            }
        }
    }
out:
    free(pfd);
    free(conn_of);
    free(net->read_pfd);
    net->read_pfd = NULL;
    return NULL;
}

/* ---- Pending requests ----------------------------------------------------------- */

int gshmemi_tcp_slot_try(struct tcp_net *net, unsigned type, int pe)
{
    pthread_mutex_lock(&net->slot_lock);
    int s = net->nfree > 0 ? net->free_slots[--net->nfree] : -1;
    pthread_mutex_unlock(&net->slot_lock);
    if (s < 0) return -1;
    struct tcp_slot *slot = &net->slots[s];
    slot->type = type;
    slot->pe = pe;
    slot->dst = NULL;
    slot->len = 0;
    slot->dst_device = 0;
    slot->dst_stride = 0;
    slot->elem = 0;
    slot->value = 0;
    slot->done = NULL;
    atomic_store(&slot->state, TCP_SLOT_WAITING);
    return s;
}

int gshmemi_tcp_slot_get(struct tcp_net *net, unsigned type, int pe)
{
    double deadline = 0;
    for (unsigned tries = 0;; tries++) {
        int s = gshmemi_tcp_slot_try(net, type, pe);
        if (s >= 0) return s;
        int failed = atomic_load(&net->failed);
        if (failed) return -failed;
        if (tries % 256 == 0) {
            double now = gshmemi_tcp_now();
            if (deadline == 0) deadline = net->timeout > 0 ? now + net->timeout : -1;
            else if (deadline > 0 && now > deadline) {
                const char *what = type == GSHMEMI_TCP_DATA ? "get" : type == GSHMEMI_TCP_VALUE ? "fetching atomic"
                                                                                                 : "quiet";
                GSHMEMI_ERROR(TRANSPORT, "tcp: PE %d: all %d request slots stayed taken for %g s (GSHMEM_TIMEOUT) "
                              "while a %s to PE %d waited for one: gets, fetching atomics and quiets in flight "
                              "wait for answers that do not come (GSHMEM_TCP_REQUESTS sets how many)",
                              net->my_pe, net->nslots, net->timeout, what, pe);
                return -GSHMEMX_ERR_TIMEOUT;
            }
        }
        sched_yield(); /* every slot is out: others' answers will free some */
    }
}

int gshmemi_tcp_slot_wait(struct tcp_net *net, int s, const char *what, uint64_t *value)
{
    gshmemi_tcp_push(net); /* what we wait for may depend on puts held on other connections */
    struct tcp_slot *slot = &net->slots[s];
    double start = 0;
    int rc = 0;
    for (unsigned spins = 0; atomic_load_explicit(&slot->state, memory_order_acquire) != TCP_SLOT_DONE; spins++) {
        if ((rc = atomic_load(&net->failed)) != 0) break;
        if (spins < TCP_SPINS_BEFORE_YIELD) {
            gshmemi_cpu_relax();
            continue;
        }
        sched_yield(); /* our service thread, which must receive the answer, may need this core */
        if (spins % 256) continue;
        double now = gshmemi_tcp_now();
        if (start == 0) start = now;
        if (net->timeout > 0 && now - start > net->timeout) {
            GSHMEMI_ERROR(TRANSPORT, "tcp: PE %d waited %.1f s for PE %d to answer %s (GSHMEM_TIMEOUT=%g)",
                          net->my_pe, now - start, slot->pe, what, net->timeout);
            rc = GSHMEMX_ERR_TIMEOUT;
            break;
        }
    }
    if (rc != 0) return rc; /* the slot stays taken: an answer may still land in it */
    if (value) *value = slot->value; /* before the slot is free: another thread may take it at once */
    gshmemi_tcp_slot_free(net, s);
    return 0;
}

void gshmemi_tcp_slot_free(struct tcp_net *net, int s)
{
    atomic_store(&net->slots[s].state, TCP_SLOT_FREE);
    pthread_mutex_lock(&net->slot_lock);
    net->free_slots[net->nfree++] = s;
    pthread_mutex_unlock(&net->slot_lock);
}

/* ---- Creation ----------------------------------------------------------------- */

static void tcp_net_free(struct tcp_net *net)
{
    if (net->thread_started) {
        atomic_store(&net->stop, 1);
        if (write(net->wake[1], "x", 1) < 0) {}
        pthread_join(net->thread, NULL);
    }
    gshmemi_tcp_apply_fini(net);
    for (int pe = 0; net->conns && pe < net->n_pes; pe++) {
        struct tcp_conn *c = &net->conns[pe];
        while (c->out_head) {
            struct tcp_out *o = c->out_head;
            c->out_head = o->next;
            free(o);
        }
        if (c->fd >= 0) close(c->fd);
        pthread_mutex_destroy(&c->tx);
        free(c->txbuf);
    }
    free(net->conns);
    free(net->slots);
    free(net->free_slots);
    if (net->wake[0] >= 0) close(net->wake[0]);
    if (net->wake[1] >= 0) close(net->wake[1]);
    pthread_mutex_destroy(&net->slot_lock);
    pthread_mutex_destroy(&net->tx_stage_lock);
    free(net);
}

static int tcp_net_create(struct gshmemi_bootstrap *bs, const struct gshmemi_env *env, const unsigned char *remote,
                          struct tcp_net **out)
{
    struct tcp_net *net = calloc(1, sizeof(*net));
    if (!net) return GSHMEMX_ERR_NOMEM;
    net->my_pe = bs->rank;
    net->n_pes = bs->nranks;
    net->timeout = env->timeout;
    net->sockbuf = (int)env->tcp_sockbuf; /* at most 1G: env.c */
    net->device = -1;
    net->wake[0] = net->wake[1] = -1;
    pthread_mutex_init(&net->slot_lock, NULL);
    pthread_mutex_init(&net->tx_stage_lock, NULL);
    net->nslots = (int)env->tcp_requests;
    net->free_slots = calloc((size_t)net->nslots, sizeof(*net->free_slots));
    net->slots = calloc((size_t)net->nslots, sizeof(*net->slots));
    for (int i = 0; net->free_slots && i < net->nslots; i++) net->free_slots[i] = net->nslots - 1 - i;
    net->nfree = net->nslots;
    net->conns = calloc((size_t)net->n_pes, sizeof(*net->conns));
    int rc = net->conns && net->free_slots && net->slots ? 0 : GSHMEMX_ERR_NOMEM;
    for (int pe = 0; rc == 0 && pe < net->n_pes; pe++) {
        net->conns[pe].fd = -1;
        net->conns[pe].pe = pe;
        pthread_mutex_init(&net->conns[pe].tx, NULL);
        snprintf(net->conns[pe].name, sizeof(net->conns[pe].name), "PE %d", pe);
    }
    if (rc == 0 && getrandom(net->token, sizeof(net->token), 0) != (ssize_t)sizeof(net->token)) rc = GSHMEMX_ERR_SYSTEM;
    if (rc == 0 && pipe2(net->wake, O_CLOEXEC | O_NONBLOCK) != 0) rc = GSHMEMX_ERR_SYSTEM;
    if (rc == 0) rc = gshmemi_tcp_connect_all(net, bs, env, remote);
    if (rc == 0 && pthread_create(&net->thread, NULL, tcp_service, net) != 0) rc = GSHMEMX_ERR_SYSTEM;
    if (rc == 0) net->thread_started = 1;
    if (rc != 0) {
        tcp_net_free(net);
        return rc;
    }
    *out = net;
    return 0;
}

void gshmemi_tcp_destroy(struct gshmemi_transport *tp)
{
    struct tcp_transport *t = tcp_of(tp);
    struct tcp_net *net = t->net;
    free(t);
    if (--net->refs > 0) return;
    /* Say BYE so peers take our close for what it is (even to those that said theirs:
     * errors are moot now), then wait briefly for theirs. */
    for (int pe = 0; pe < net->n_pes && !atomic_load(&net->failed); pe++) {
        struct tcp_conn *c = &net->conns[pe];
        if (c->fd < 0) continue;
        struct gshmemi_tcp_frame f = gshmemi_tcp_frame_make(GSHMEMI_TCP_BYE, 0);
        unsigned char hdr[GSHMEMI_TCP_HEADER_SIZE];
        gshmemi_tcp_frame_encode(&f, hdr);
        struct iovec iov = {hdr, sizeof(hdr)};
        size_t done = 0;
        pthread_mutex_lock(&c->tx);
        if (tcp_push_locked(net, c, 1) == 0) gshmemi_tcp_writev(c->fd, &iov, 1, &done, 1, gshmemi_tcp_now() + 2.0);
        pthread_mutex_unlock(&c->tx);
    }
    double until = gshmemi_tcp_now() + 2.0;
    for (int pe = 0; pe < net->n_pes; pe++)
        while (net->conns[pe].fd >= 0 && !atomic_load(&net->conns[pe].bye) && !atomic_load(&net->failed) &&
               gshmemi_tcp_now() < until)
            sched_yield();
    if (tcp_global == net) tcp_global = NULL;
    tcp_net_free(net);
}

int gshmemi_transport_tcp_create(struct gshmemi_bootstrap *bs, struct gshmemi_heap *heap,
                                 const struct gshmemi_env *env, const unsigned char *remote,
                                 struct gshmemi_transport **out)
{
    int rc = 0;
    if (!tcp_global) rc = tcp_net_create(bs, env, remote, &tcp_global);
    if (rc != 0) return rc;
    struct tcp_net *net = tcp_global;
    struct tcp_transport *t = calloc(1, sizeof(*t));
    if (!t || net->nheaps == GSHMEMI_TCP_MAX_HEAPS) {
        free(t);
        return t ? GSHMEMX_ERR_INTERNAL : GSHMEMX_ERR_NOMEM;
    }
    t->tp.ops = &gshmemi_tcp_ops;
    t->tp.impl = t;
    t->net = net;
    t->heap = heap;
    t->heap_index = (unsigned)net->nheaps;
    if (heap->kind == GSHMEMI_HEAP_KIND_DEVICE) {
        net->device = heap->device;
        int rc = gshmemi_tcp_cuda_prepare(net);
        if (rc != 0) {
            free(t);
            return rc;
        }
    }
    net->heaps[net->nheaps] = heap;
    __atomic_store_n(&net->nheaps, net->nheaps + 1, __ATOMIC_RELEASE); /* the service thread may be reading it */
    net->refs++;
    *out = &t->tp;
    /* Peers may send to this heap only once every PE has registered it. */
    return bs->ops->barrier(bs);
}

void gshmemi_transport_tcp_counters(unsigned long long *frames_in, unsigned long long *frames_out)
{
    *frames_in = tcp_global ? atomic_load(&tcp_global->frames_in) : 0;
    *frames_out = tcp_global ? atomic_load(&tcp_global->frames_out) : 0;
}
