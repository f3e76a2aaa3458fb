/*
 * Asynchronous events. Each queued event writes one byte to the socket pair whose
 * other end is context->async_fd, so callers can poll() it as they would the
 * kernel's event file; ibv_get_async_event reads a byte, then takes the event.
 */
#define _GNU_SOURCE
#include "mock_ibv.h"

#include <errno.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

/* With the context lock held. */
void mock_event_push(struct mock_context *c, enum ibv_event_type type, struct ibv_qp *qp)
{
    char b = 1;
    if (c->event_count == MOCK_EVENTS_MAX) {
        fprintf(stderr, "mock ibv: async event queue full, %d unread: event %d dropped\n", c->event_count, type);
        return;
    }
    struct ibv_async_event *e = &c->events[(c->event_head + c->event_count++) % MOCK_EVENTS_MAX];
    e->event_type = type;
    e->element.qp = qp;
    if (send(c->event_fd, &b, 1, MSG_DONTWAIT | MSG_NOSIGNAL) != 1)
        fprintf(stderr, "mock ibv: cannot signal an async event: %m\n");
}

/* Drops events about qp not read yet (it is being destroyed), and their bytes. */
void mock_event_forget_qp(struct mock_context *c, struct ibv_qp *qp)
{
    int kept = 0;
    char b;
    for (int i = 0; i < c->event_count; i++) {
        struct ibv_async_event e = c->events[(c->event_head + i) % MOCK_EVENTS_MAX];
        if (e.element.qp == qp && e.event_type == IBV_EVENT_QP_FATAL)
            recv(c->ctx.async_fd, &b, 1, MSG_DONTWAIT);
        else
            c->events[(c->event_head + kept++) % MOCK_EVENTS_MAX] = e;
    }
    c->event_count = kept;
}

/* Blocks unless the caller made async_fd non-blocking (then EAGAIN), like the real one. */
MOCK_EXPORT int ibv_get_async_event(struct ibv_context *context, struct ibv_async_event *event)
{
    struct mock_context *c = mock_ctx(context);
    char b;
    for (;;) {
        ssize_t n = read(context->async_fd, &b, 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n != 1)
            return -1;
        pthread_mutex_lock(&c->lock);
        int have = c->event_count > 0;
        if (have) {
            *event = c->events[c->event_head];
            c->event_head = (c->event_head + 1) % MOCK_EVENTS_MAX;
            c->event_count--;
        }
        pthread_mutex_unlock(&c->lock);
        if (have)
            return 0;
    }
}

MOCK_EXPORT void ibv_ack_async_event(struct ibv_async_event *event) { (void)event; }
