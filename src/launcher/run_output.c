/* PE output to gshmemrun's stdout/stderr, and gshmemrun's terminal stdin to PE 0. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "launcher/run.h"

/* While in the background, how often to look whether the terminal came back. */
#define RUN_INPUT_RECHECK_MS 250

/* gshmemrun's stdout and stderr, each written by a thread of its own: the event loop
 * only queues what the PEs print, so a reader that stops (a pager, a terminal after
 * Ctrl-S) never holds up the timeout, signal forwarding or reaping. Past
 * RUN_SINK_HIGH bytes queued on one, the loop stops reading the PEs' pipes for it and
 * the PEs block, as they would writing to a terminal directly. */
#define RUN_SINK_HIGH (1u << 20)

struct run_sink {
    int fd;
    pthread_mutex_t lock;
    pthread_cond_t more;
    char *buf; /* queued, not yet taken by the writer */
    size_t len, cap;
    int busy;   /* the writer holds bytes it has not finished writing */
    int broken; /* the fd is gone: drop what comes */
    int stop;
    int started;
    pthread_t thread;
};

static struct run_sink run_sinks[2] = {
    {.fd = STDOUT_FILENO, .lock = PTHREAD_MUTEX_INITIALIZER, .more = PTHREAD_COND_INITIALIZER},
    {.fd = STDERR_FILENO, .lock = PTHREAD_MUTEX_INITIALIZER, .more = PTHREAD_COND_INITIALIZER},
};

static struct run_sink *run_sink_of(int fd)
{
    return fd == STDERR_FILENO ? &run_sinks[1] : &run_sinks[0];
}

static void run_write_fd(int fd, const char *p, size_t len, int *broken)
{
    while (len > 0 && !*broken) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) { /* our stdout is gone: drop the output */
            *broken = 1;
            return;
        }
        p += n;
        len -= (size_t)n;
    }
}

static void *run_sink_main(void *arg)
{
    struct run_sink *k = arg;
    char *mine = NULL;
    size_t mine_cap = 0;
    pthread_mutex_lock(&k->lock);
    for (;;) {
        while (k->len == 0 && !k->stop) pthread_cond_wait(&k->more, &k->lock);
        if (k->len == 0) break;
        /* take the queue whole, leave an empty buffer in its place */
        char *b = k->buf;
        size_t len = k->len, cap = k->cap;
        k->buf = mine;
        k->cap = mine_cap;
        k->len = 0;
        k->busy = 1;
        int broken = k->broken;
        pthread_mutex_unlock(&k->lock);
        run_write_fd(k->fd, b, len, &broken);
        mine = b;
        mine_cap = cap;
        pthread_mutex_lock(&k->lock);
        k->broken = broken;
        k->busy = 0;
        pthread_cond_broadcast(&k->more);
    }
    pthread_mutex_unlock(&k->lock);
    free(mine);
    return NULL;
}

/* Queues len bytes for fd; written at once (blocking) when its thread could not start. */
static void run_write_all(int fd, const char *p, size_t len)
{
    struct run_sink *k = run_sink_of(fd);
    if (len == 0) return;
    pthread_mutex_lock(&k->lock);
    if (!k->started && !k->stop) {
        k->started = pthread_create(&k->thread, NULL, run_sink_main, k) == 0 ? 1 : -1;
    }
    if (k->started != 1 || k->broken) {
        int broken = k->broken;
        pthread_mutex_unlock(&k->lock);
        if (!broken) run_write_fd(fd, p, len, &broken);
        return;
    }
    if (k->len + len > k->cap) {
        size_t cap = k->cap ? k->cap : 65536;
        while (cap < k->len + len) cap *= 2;
        char *b = realloc(k->buf, cap);
        if (b == NULL) { /* no memory: write it ourselves, in order after the queue */
            while (k->len > 0 || k->busy) pthread_cond_wait(&k->more, &k->lock);
            int broken = k->broken;
            run_write_fd(fd, p, len, &broken);
            k->broken = broken;
            pthread_mutex_unlock(&k->lock);
            return;
        }
        k->buf = b;
        k->cap = cap;
    }
    memcpy(k->buf + k->len, p, len);
    k->len += len;
    pthread_cond_signal(&k->more);
    pthread_mutex_unlock(&k->lock);
}

int run_output_backlogged(int fd)
{
    struct run_sink *k = run_sink_of(fd);
    pthread_mutex_lock(&k->lock);
    int full = k->len >= RUN_SINK_HIGH;
    pthread_mutex_unlock(&k->lock);
    return full;
}

int run_output_finish(int sigfd)
{
    for (int i = 0; i < 2; i++) {
        struct run_sink *k = &run_sinks[i];
        pthread_mutex_lock(&k->lock);
        k->stop = 1;
        int started = k->started == 1;
        pthread_cond_broadcast(&k->more);
        pthread_mutex_unlock(&k->lock);
        if (!started) continue;
        /* A reader still paging through the output is waited for, as a blocking write
         * would; SIGINT, SIGTERM or SIGHUP ends the wait (and gshmemrun). */
        for (;;) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            ts.tv_nsec += 100 * 1000 * 1000;
            if (ts.tv_nsec >= 1000000000L) {
                ts.tv_sec++;
                ts.tv_nsec -= 1000000000L;
            }
            if (pthread_timedjoin_np(k->thread, NULL, &ts) == 0) {
                pthread_mutex_lock(&k->lock);
                k->started = 2; /* joined: anything later is written directly */
                pthread_mutex_unlock(&k->lock);
                break;
            }
            struct signalfd_siginfo si;
            while (sigfd >= 0 && read(sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
                if (si.ssi_signo == SIGINT || si.ssi_signo == SIGTERM || si.ssi_signo == SIGHUP)
                    return 128 + (int)si.ssi_signo;
        }
    }
    return 0;
}

static void run_emit_line(int rank, int fd, const char *line, size_t len)
{
    char prefix[32];
    int n = snprintf(prefix, sizeof(prefix), "[%d] ", rank);
    run_write_all(fd, prefix, (size_t)n);
    run_write_all(fd, line, len);
    if (len == 0 || line[len - 1] != '\n') run_write_all(fd, "\n", 1);
}

/* Prints the complete lines in lb; with `flush`, the last partial one too. */
static void run_emit_lines(struct run_linebuf *lb, int flush)
{
    size_t start = 0;
    for (size_t i = 0; i < lb->len; i++) {
        if (lb->buf[i] != '\n') continue;
        run_emit_line(lb->rank, lb->out_fd, lb->buf + start, i + 1 - start);
        start = i + 1;
    }
    memmove(lb->buf, lb->buf + start, lb->len - start);
    lb->len -= start;
    if ((flush && lb->len > 0) || lb->len == sizeof(lb->buf)) {
        run_emit_line(lb->rank, lb->out_fd, lb->buf, lb->len);
        lb->len = 0;
    }
}

void run_output_drain(struct run_linebuf *lb)
{
    ssize_t n = read(lb->fd, lb->buf + lb->len, sizeof(lb->buf) - lb->len);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
    if (n > 0) lb->len += (size_t)n;
    if (lb->tag) {
        run_emit_lines(lb, n <= 0);
    } else {
        run_write_all(lb->out_fd, lb->buf, lb->len);
        lb->len = 0;
    }
    if (n <= 0) {
        close(lb->fd);
        lb->fd = -1;
    }
}

void run_output_catch_up(struct run_linebuf *lb)
{
    /* At most 16 reads of a pipe buffer each: a descendant of the PE that keeps the
     * pipe open and keeps writing must not hold the loop here. */
    for (int i = 0; i < 16 && lb->fd >= 0 && !run_output_backlogged(lb->out_fd); i++) {
        struct pollfd p = {.fd = lb->fd, .events = POLLIN};
        if (poll(&p, 1, 0) != 1) return;
        run_output_drain(lb);
    }
}

void run_say(const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n >= sizeof(line)) { /* cut short: still one whole line */
        n = (int)sizeof(line) - 1;
        line[n - 1] = '\n';
    }
    run_write_all(STDERR_FILENO, line, (size_t)n);
}

void run_output_close(struct run_linebuf *lb)
{
    if (lb->len > 0) {
        if (lb->tag) run_emit_line(lb->rank, lb->out_fd, lb->buf, lb->len);
        else run_write_all(lb->out_fd, lb->buf, lb->len);
    }
    lb->len = 0;
    if (lb->fd >= 0) close(lb->fd);
    lb->fd = -1;
}

int run_input_create(struct run_input *in, int *pe0_stdin)
{
    int fds[2];
    *in = (struct run_input){.src = -1, .pipe_w = -1};
    *pe0_stdin = -1;
    if (!isatty(STDIN_FILENO)) return 0;
    if (pipe2(fds, O_CLOEXEC) != 0 || fcntl(fds[1], F_SETFL, O_NONBLOCK) != 0) {
        fprintf(stderr, "gshmemrun: pipe for stdin: %s\n", strerror(errno));
        return -1;
    }
    /* Reading the terminal from the background then fails with EIO instead of stopping us. */
    signal(SIGTTIN, SIG_IGN);
    in->src = STDIN_FILENO;
    in->pipe_w = fds[1];
    *pe0_stdin = fds[0];
    return 0;
}

void run_input_destroy(struct run_input *in)
{
    if (in->pipe_w >= 0) close(in->pipe_w);
    in->pipe_w = -1;
    in->src = -1;
}

nfds_t run_input_pollfds(struct run_input *in, struct pollfd *pfds, int *timeout_ms)
{
    if (in->pipe_w < 0) return 0;
    /* POLLERR on the write end says PE 0 closed its stdin or exited. */
    pfds[0] = (struct pollfd){.fd = in->pipe_w, .events = in->len > 0 ? POLLOUT : 0};
    if (in->eof || in->len == sizeof(in->buf)) return 1;
    pid_t foreground = tcgetpgrp(in->src);
    if (foreground < 0) { /* the terminal is gone */
        in->eof = 1;
        return 1;
    }
    if (foreground != getpgrp()) { /* a background job: the terminal is not ours to read */
        if (*timeout_ms < 0 || *timeout_ms > RUN_INPUT_RECHECK_MS) *timeout_ms = RUN_INPUT_RECHECK_MS;
        return 1;
    }
    pfds[1] = (struct pollfd){.fd = in->src, .events = POLLIN};
    return 2;
}

static void run_input_flush(struct run_input *in)
{
    while (in->len > 0) {
        ssize_t n = write(in->pipe_w, in->buf, in->len);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) return;
        if (n <= 0) { /* EPIPE: PE 0 will read no more */
            run_input_destroy(in);
            return;
        }
        memmove(in->buf, in->buf + n, in->len - (size_t)n);
        in->len -= (size_t)n;
    }
    if (in->eof) run_input_destroy(in);
}

void run_input_service(struct run_input *in, const struct pollfd *pfds, nfds_t n)
{
    if (n > 1 && (pfds[1].revents & (POLLERR | POLLHUP | POLLNVAL))) {
        in->eof = 1; /* the terminal hung up */
    } else if (n > 1 && pfds[1].revents) {
        ssize_t got = read(in->src, in->buf + in->len, sizeof(in->buf) - in->len);
        if (got > 0) in->len += (size_t)got;
        else if (got == 0 || (errno != EINTR && errno != EAGAIN && errno != EIO)) in->eof = 1;
    }
    if (n > 0 && (pfds[0].revents & (POLLERR | POLLHUP)) && in->len == 0) {
        run_input_destroy(in);
        return;
    }
    run_input_flush(in);
}
