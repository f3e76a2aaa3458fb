/* Passing heap file descriptors between node-local PEs over abstract unix sockets. */
#ifndef GSHMEMI_P2P_FDPASS_H
#define GSHMEMI_P2P_FDPASS_H

#include <stddef.h>

#define GSHMEMI_FDPASS_NAME_LEN 48

/* Listens on a fresh abstract name (written to name, NUL-terminated); returns the fd or -1. */
int gshmemi_fdpass_listen(char name[GSHMEMI_FDPASS_NAME_LEN], int backlog);
/* Connects to name and sends fd with the sender's rank; 0 or -1 (errno set). */
int gshmemi_fdpass_send(const char *name, int rank, int fd);
/* Accepts one connection within timeout_s (0: forever) and receives (rank, fd) and the
 * sender's pid as the kernel reports it (SO_PEERCRED). Returns 0, or -1 with errno
 * (ETIMEDOUT on timeout, EPROTO on a malformed message). */
int gshmemi_fdpass_recv(int listen_fd, double timeout_s, int *rank, int *fd, int *pid);

#endif
