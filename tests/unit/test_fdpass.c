/*
 * Heap descriptors between node-local PEs (transport/p2p_fdpass.c): one descriptor and
 * the sender's rank arrive; a malformed message (more descriptors, a short payload)
 * is refused with EPROTO and every descriptor it carried is closed, not left open in
 * the receiver.
 */
#include "transport/p2p_fdpass.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    cr_assert_not_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

/* Sends payload_len bytes of rank and nfds descriptors to the listener called name. */
static void send_raw(const char *name, int32_t rank, size_t payload_len, const int *fds, int nfds)
{
    int sock = socket(AF_UNIX, SOCK_STREAM, 0);
    cr_assert_geq(sock, 0);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    size_t len = strlen(name);
    memcpy(addr.sun_path + 1, name, len);
    cr_assert_eq(connect(sock, (struct sockaddr *)&addr, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + len)),
                 0, "connect: %s", strerror(errno));
    struct iovec iov = {&rank, payload_len};
    union {
        char buf[CMSG_SPACE(4 * sizeof(int))];
        struct cmsghdr align;
    } control;
    memset(&control, 0, sizeof(control));
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
                         .msg_controllen = CMSG_SPACE((size_t)nfds * sizeof(int))};
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN((size_t)nfds * sizeof(int));
    memcpy(CMSG_DATA(c), fds, (size_t)nfds * sizeof(int));
    cr_assert_eq(sendmsg(sock, &msg, 0), (ssize_t)payload_len, "sendmsg: %s", strerror(errno));
    close(sock);
}

/* A listener (its name in name) and a pipe whose ends are the descriptors to pass. */
static int listener_and_pipe(char name[GSHMEMI_FDPASS_NAME_LEN], int pipefd[2])
{
    int listener = gshmemi_fdpass_listen(name, 4);
    cr_assert_geq(listener, 0);
    cr_assert_eq(pipe(pipefd), 0);
    return listener;
}

Test(fdpass, one_descriptor_and_the_rank_arrive)
{
    char name[GSHMEMI_FDPASS_NAME_LEN];
    int pipefd[2];
    int listener = listener_and_pipe(name, pipefd);
    cr_assert_eq(gshmemi_fdpass_send(name, 7, pipefd[1]), 0);
    int rank = -1, fd = -1, pid = 0;
    cr_assert_eq(gshmemi_fdpass_recv(listener, 5, &rank, &fd, &pid), 0, "recv: %s", strerror(errno));
    cr_assert_eq(rank, 7);
    cr_assert_eq(pid, (int)getpid());
    cr_assert_neq(fd, pipefd[1], "a new descriptor for the same pipe");
    cr_assert_eq(write(fd, "x", 1), 1);
    char got = 0;
    cr_assert_eq(read(pipefd[0], &got, 1), 1);
    cr_assert_eq(got, 'x');
    close(fd);
    close(pipefd[0]);
    close(pipefd[1]);
    close(listener);
}

Test(fdpass, malformed_messages_are_refused_and_their_descriptors_closed)
{
    char name[GSHMEMI_FDPASS_NAME_LEN];
    int pipefd[2];
    int listener = listener_and_pipe(name, pipefd);
    int fds[3] = {pipefd[0], pipefd[1], pipefd[1]};
    int before = open_fds();
    struct {
        const char *what;
        size_t payload;
        int nfds;
    } cases[] = {{"three descriptors", 4, 3}, {"a 2-byte payload", 2, 1}, {"two descriptors", 4, 2}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        send_raw(name, 3, cases[i].payload, fds, cases[i].nfds);
        int rank = -1, fd = -1, pid = 0;
        errno = 0;
        cr_assert_eq(gshmemi_fdpass_recv(listener, 5, &rank, &fd, &pid), -1, "%s accepted", cases[i].what);
        cr_assert_eq(errno, EPROTO, "%s: errno %d", cases[i].what, errno);
        cr_assert_eq(fd, -1, "%s: a descriptor handed out", cases[i].what);
        cr_assert_eq(open_fds(), before, "%s: %d descriptors left open", cases[i].what, open_fds() - before);
    }
    close(pipefd[0]);
    close(pipefd[1]);
    close(listener);
}
