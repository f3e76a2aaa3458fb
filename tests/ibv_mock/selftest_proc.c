/* Selftest cases across processes, and the mock's fault injection and CQ overrun. */
#define _GNU_SOURCE
#include "selftest.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ST_ATOMICS 2000
#define ST_COUNTER 3072 /* fetch-add counter in the holder's buffer; the CAS counter follows */

static void xsend(int fd, const void *p, size_t n)
{
    CHECK_EQ(send(fd, p, n, MSG_NOSIGNAL), (long long)n);
}

static void xrecv(int fd, void *p, size_t n)
{
    for (size_t got = 0; got < n;) {
        ssize_t r = recv(fd, (char *)p + got, n - got, 0);
        CHECK(r > 0);
        got += (size_t)r;
    }
}

/* n fetch-adds of 1 on the counter at raddr, each old value into olds; n CAS increments on the next word. */
static void run_atomics(struct st_ep *e, uint64_t raddr, uint32_t rkey, uint64_t *olds, int n)
{
    uint64_t *result = (uint64_t *)(e->buf + 3584);
    struct ibv_sge sge = {(uintptr_t)result, 8, e->mr->lkey};
    for (int i = 0; i < n; i++) {
        CHECK_EQ(st_post_atomic(e->qp, IBV_WR_ATOMIC_FETCH_AND_ADD, (uint64_t)i, &sge, raddr, rkey, 1, 0), 0);
        st_expect(e->cq, (uint64_t)i, IBV_WC_SUCCESS);
        olds[i] = *result;
    }
    uint64_t expect = 0;
    for (int done = 0; done < n;) {
        CHECK_EQ(st_post_atomic(e->qp, IBV_WR_ATOMIC_CMP_AND_SWP, 1, &sge, raddr + 8, rkey, expect, expect + 1), 0);
        st_expect(e->cq, 1, IBV_WC_SUCCESS);
        if (*result == expect)
            done++, expect++;
        else
            expect = *result; /* the other side got there first */
    }
}

/* The peer: writes into the holder, serves a READ, races it on atomics, then waits to be killed. */
static void peer_main(int fd)
{
    struct st_ep e;
    struct st_addr mine, holder;
    static uint64_t olds[ST_ATOMICS];
    char go;
    st_ep_create(&e, NULL, 4096, 64, 64);
    st_fill(e.buf, 1000, 7);
    st_fill(e.buf + 2048, 1024, 8);
    st_addr_of(&e, &mine);
    xsend(fd, &mine, sizeof(mine));
    xrecv(fd, &holder, sizeof(holder));
    st_connect(&e, &holder);
    xsend(fd, "r", 1);
    xrecv(fd, &go, 1); /* the holder's QP is in RTS too */
    struct ibv_sge sge = {(uintptr_t)e.buf, 1000, e.mr->lkey};
    CHECK_EQ(st_post(e.qp, IBV_WR_RDMA_WRITE, 1, &sge, 1, holder.addr + 100, holder.rkey, IBV_SEND_SIGNALED), 0);
    st_expect(e.cq, 1, IBV_WC_SUCCESS);
    xsend(fd, "w", 1);
    xrecv(fd, &go, 1);
    run_atomics(&e, holder.addr + ST_COUNTER, holder.rkey, olds, ST_ATOMICS);
    xsend(fd, olds, sizeof(olds));
    xrecv(fd, &go, 1); /* killed while waiting here: its QP and MR files stay behind */
    exit(1);
}

static void check_atomic_results(const uint8_t *buf, const uint64_t *a, const uint64_t *b)
{
    static uint8_t seen[2 * ST_ATOMICS];
    const uint64_t *counter = (const uint64_t *)(buf + ST_COUNTER);
    memset(seen, 0, sizeof(seen));
    for (int i = 0; i < 2 * ST_ATOMICS; i++) {
        uint64_t v = i < ST_ATOMICS ? a[i] : b[i - ST_ATOMICS];
        CHECK(v < 2 * ST_ATOMICS && !seen[v]); /* every old value returned exactly once */
        seen[v] = 1;
    }
    CHECK_EQ(counter[0], 2 * ST_ATOMICS);
    CHECK_EQ(counter[1], 2 * ST_ATOMICS);
}

/* Waits until pid is a zombie: dead, not yet reaped. */
static void wait_zombie(pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    for (int i = 0; i < 2000; i++) {
        int fd = open(path, O_RDONLY);
        ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
        if (fd >= 0)
            close(fd);
        buf[n > 0 ? n : 0] = '\0';
        char *p = strrchr(buf, ')');
        if (p && p[1] == ' ' && p[2] == 'Z')
            return;
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    CHECK(!"the killed peer never became a zombie");
}

/* After the peer is killed: its QP reads as dead, even unreaped, and a new open sweeps its files. */
static void check_dead_peer(struct st_ep *h, pid_t peer, const struct st_addr *pa)
{
    struct ibv_sge sge = {(uintptr_t)h->buf, 8, h->mr->lkey};
    CHECK_EQ(kill(peer, SIGKILL), 0);
    wait_zombie(peer);
    CHECK_EQ(st_post(h->qp, IBV_WR_RDMA_WRITE, 90, &sge, 1, pa->addr, pa->rkey, 0), 0);
    CHECK_EQ(st_expect(h->cq, 90, IBV_WC_RETRY_EXC_ERR).vendor_err, ST_VENDOR(0x31));
    CHECK_EQ(waitpid(peer, NULL, 0), peer);
    CHECK(st_registry_has("qp", pa->qpn) && st_registry_has("mr", pa->rkey));
    struct ibv_context *ctx = st_open("mockib0");
    CHECK(!st_registry_has("qp", pa->qpn) && !st_registry_has("mr", pa->rkey));
    CHECK_EQ(ibv_close_device(ctx), 0);
}

void case_two_processes(void)
{
    int sv[2];
    CHECK_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    fflush(NULL);
    pid_t peer = fork();
    CHECK(peer >= 0);
    if (peer == 0) {
        close(sv[0]);
        peer_main(sv[1]);
    }
    close(sv[1]);
    int fd = sv[0];
    struct st_ep h, l1, l2;
    struct st_addr mine, pa;
    static uint64_t my_olds[ST_ATOMICS], peer_olds[ST_ATOMICS];
    char c;
    st_ep_create(&h, NULL, 4096, 64, 64);
    memset(h.buf + ST_COUNTER, 0, 16);
    st_addr_of(&h, &mine);
    xrecv(fd, &pa, sizeof(pa));
    xsend(fd, &mine, sizeof(mine));
    st_connect(&h, &pa);
    xrecv(fd, &c, 1);
    xsend(fd, "g", 1);
    xrecv(fd, &c, 1); /* the peer's WRITE has completed */

    struct ibv_sge sge = {(uintptr_t)h.buf + 1200, 1024, h.mr->lkey};
    CHECK_EQ(st_post(h.qp, IBV_WR_RDMA_READ, 2, &sge, 1, pa.addr + 2048, pa.rkey, IBV_SEND_SIGNALED), 0);
    st_expect(h.cq, 2, IBV_WC_SUCCESS);
    static uint8_t want[4096];
    memset(want, ST_POISON, sizeof(want));
    st_fill(want + 100, 1000, 7);
    st_fill(want + 1200, 1024, 8);
    memset(want + ST_COUNTER, 0, 16);
    st_check_same(h.buf, want, sizeof(want));

    /* Atomics from both processes on the same words: the holder through a loopback pair,
     * its responder MR over the same memory in the loopback PD. */
    st_ep_create(&l1, h.ctx, 4096, 16, 16);
    st_ep_create(&l2, h.ctx, 64, 16, 16);
    st_pair(&l1, &l2);
    struct ibv_mr *alias = ibv_reg_mr(l2.pd, h.buf + ST_COUNTER, 16, ST_ALL_ACCESS);
    CHECK(alias);
    xsend(fd, "a", 1);
    run_atomics(&l1, (uintptr_t)h.buf + ST_COUNTER, alias->rkey, my_olds, ST_ATOMICS);
    xrecv(fd, peer_olds, sizeof(peer_olds));
    check_atomic_results(h.buf, my_olds, peer_olds);

    check_dead_peer(&h, peer, &pa);
    close(fd);
    CHECK_EQ(ibv_dereg_mr(alias), 0);
    st_ep_destroy(&l2);
    st_ep_destroy(&l1);
    st_ep_destroy(&h);
}

void case_fault_injection(void)
{
    struct st_ep a, b;
    struct ibv_async_event ev;
    unsetenv("GSHMEM_MOCK_IB_QUIET"); /* the one expected error report, for the log */
    setenv("GSHMEM_MOCK_IB_FAIL_AFTER", "3", 1);
    st_ep_create(&a, NULL, 64, 8, 8);
    unsetenv("GSHMEM_MOCK_IB_FAIL_AFTER");
    st_ep_create(&b, a.ctx, 64, 8, 8);
    st_pair(&a, &b);
    struct ibv_sge sge = {(uintptr_t)a.buf, 8, a.mr->lkey};
    for (uint64_t i = 1; i <= 3; i++)
        CHECK_EQ(st_post(a.qp, IBV_WR_RDMA_WRITE, i, &sge, 1, (uintptr_t)b.buf, b.mr->rkey, IBV_SEND_SIGNALED), 0);
    st_expect(a.cq, 1, IBV_WC_SUCCESS);
    st_expect(a.cq, 2, IBV_WC_SUCCESS);
    CHECK_EQ(st_expect(a.cq, 3, IBV_WC_RETRY_EXC_ERR).vendor_err, ST_VENDOR(0x37));
    CHECK_EQ(a.qp->state, IBV_QPS_ERR);

    struct pollfd pfd = {.fd = a.ctx->async_fd, .events = POLLIN};
    CHECK_EQ(poll(&pfd, 1, 1000), 1);
    CHECK_EQ(ibv_get_async_event(a.ctx, &ev), 0);
    CHECK_EQ(ev.event_type, IBV_EVENT_QP_FATAL);
    CHECK(ev.element.qp == a.qp);
    ibv_ack_async_event(&ev);
    CHECK_EQ(fcntl(a.ctx->async_fd, F_SETFL, O_NONBLOCK), 0);
    errno = 0;
    CHECK(ibv_get_async_event(a.ctx, &ev) == -1 && errno == EAGAIN);

    st_pair(&a, &b); /* only the third WR fails */
    CHECK_EQ(st_post(a.qp, IBV_WR_RDMA_WRITE, 4, &sge, 1, (uintptr_t)b.buf, b.mr->rkey, IBV_SEND_SIGNALED), 0);
    st_expect(a.cq, 4, IBV_WC_SUCCESS);
    st_ep_destroy(&b);
    st_ep_destroy(&a);
}

/* A transport that lets completions pile up past cqe is told so, loudly. */
void case_cq_overrun(void)
{
    int p[2];
    static char err[4096];
    size_t got = 0;
    int status;
    CHECK_EQ(pipe(p), 0);
    fflush(NULL);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        struct st_ep a, b;
        dup2(p[1], 2);
        st_ep_create(&a, NULL, 64, 8, 2);
        st_ep_create(&b, a.ctx, 64, 8, 2);
        st_pair(&a, &b);
        struct ibv_sge sge = {(uintptr_t)a.buf, 8, a.mr->lkey};
        for (uint64_t i = 0; i < 3; i++)
            st_post(a.qp, IBV_WR_RDMA_WRITE, i, &sge, 1, (uintptr_t)b.buf, b.mr->rkey, IBV_SEND_SIGNALED);
        exit(0);
    }
    close(p[1]);
    for (ssize_t n; (n = read(p[0], err + got, sizeof(err) - 1 - got)) > 0;)
        got += (size_t)n;
    err[got] = '\0';
    CHECK_EQ(waitpid(child, &status, 0), child);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
    CHECK(strstr(err, "mock ibv: CQ overrun (cqe 2)"));
    CHECK_EQ(ibv_close_device(st_open("mockib0")), 0); /* sweeps the aborted child's files */
}
