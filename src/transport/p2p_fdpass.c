/* SCM_RIGHTS over abstract unix sockets: no files to clean up, gone with the process. */
#include "transport/p2p_fdpass.h"

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static socklen_t fdpass_address(const char *name, struct sockaddr_un *addr)
{
    memset(addr, 0, sizeof(*addr));
    addr->sun_family = AF_UNIX;
    size_t len = strnlen(name, GSHMEMI_FDPASS_NAME_LEN - 1);
    memcpy(addr->sun_path + 1, name, len); /* sun_path[0] == 0: abstract namespace */
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + len);
}

int gshmemi_fdpass_listen(char name[GSHMEMI_FDPASS_NAME_LEN], int backlog)
{
    uint64_t nonce = 0;
    if (getrandom(&nonce, sizeof(nonce), 0) != sizeof(nonce)) nonce = (uint64_t)time(NULL) ^ (uint64_t)clock();
    snprintf(name, GSHMEMI_FDPASS_NAME_LEN, "gshmem-%d-%016llx", (int)getpid(), (unsigned long long)nonce);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    struct sockaddr_un addr;
    socklen_t len = fdpass_address(name, &addr);
    if (bind(fd, (struct sockaddr *)&addr, len) != 0 || listen(fd, backlog) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

int gshmemi_fdpass_send(const char *name, int rank, int fd)
{
    int sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (sock < 0) return -1;
    struct sockaddr_un addr;
    socklen_t len = fdpass_address(name, &addr);
    int32_t payload = rank;
    struct iovec iov = {&payload, sizeof(payload)};
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } control;
    memset(&control, 0, sizeof(control));
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
                         .msg_controllen = sizeof(control.buf)};
    struct cmsghdr *cmsg = CMSG_FIRSTHDR(&msg);
    cmsg->cmsg_level = SOL_SOCKET;
    cmsg->cmsg_type = SCM_RIGHTS;
    cmsg->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(cmsg), &fd, sizeof(int));
    int rc = -1;
    if (connect(sock, (struct sockaddr *)&addr, len) == 0 && sendmsg(sock, &msg, MSG_NOSIGNAL) == sizeof(payload))
        rc = 0;
    int saved = errno;
    close(sock);
    errno = saved;
    return rc;
}

static int fdpass_receive(int sock, int *rank, int *fd)
{
    int32_t payload = -1;
    struct iovec iov = {&payload, sizeof(payload)};
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } control;
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
                         .msg_controllen = sizeof(control.buf)};
    ssize_t n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
    /* Whatever came with a malformed message is closed: descriptors passed to us are
     * ours from here on, a bad message or not. */
    for (struct cmsghdr *c = n >= 0 ? CMSG_FIRSTHDR(&msg) : NULL; c != NULL; c = CMSG_NXTHDR(&msg, c)) {
        int ok = n == sizeof(payload) && !(msg.msg_flags & (MSG_CTRUNC | MSG_TRUNC)) && c == CMSG_FIRSTHDR(&msg) &&
                 c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && c->cmsg_len == CMSG_LEN(sizeof(int)) &&
                 CMSG_NXTHDR(&msg, c) == NULL;
        if (ok) {
            memcpy(fd, CMSG_DATA(c), sizeof(int));
            *rank = payload;
            return 0;
        }
        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && c->cmsg_len > CMSG_LEN(0)) {
            size_t nfds = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            for (size_t i = 0; i < nfds; i++) {
                int passed;
                memcpy(&passed, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
                close(passed);
            }
        }
    }
    errno = EPROTO;
    return -1;
}

int gshmemi_fdpass_recv(int listen_fd, double timeout_s, int *rank, int *fd, int *pid)
{
    struct pollfd pfd = {listen_fd, POLLIN, 0};
    int wait_ms = timeout_s <= 0 ? -1 : timeout_s >= 2e6 ? 2000000000 : (int)(timeout_s * 1000.0);
    int ready;
    do {
        ready = poll(&pfd, 1, wait_ms);
    } while (ready < 0 && errno == EINTR);
    if (ready == 0) errno = ETIMEDOUT;
    if (ready <= 0) return -1;
    int sock = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
    if (sock < 0) return -1;
    struct timeval tv = {.tv_sec = timeout_s > 0 && timeout_s < 1e9 ? (time_t)timeout_s + 1 : 0};
    setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    struct ucred cred = {0};
    socklen_t cred_len = sizeof(cred);
    *pid = getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cred, &cred_len) == 0 ? (int)cred.pid : -1;
    int rc = fdpass_receive(sock, rank, fd);
    int saved = errno;
    close(sock);
    errno = saved;
    return rc;
}
