/*
 * The host-wide registry: one directory, one small text file per QP ("qp-<qpn>")
 * and per MR ("mr-<rkey>"), so that a process posting a WR can find the peer's
 * pid, its QP's state and the memory behind an rkey. A file is written whole to a
 * temporary name and then linked (create: fails if the key is taken) or renamed
 * (update) into place, so readers never see half a record. Files whose process
 * has died are stale: reused when their key comes up again, swept at open.
 */
#define _GNU_SOURCE
#include "mock_ibv.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

static atomic_uint mock_tmp_seq;

/* Start time (clock ticks since boot) of pid, 0 if there is no such process;
 * *state gets its state letter ('Z': a zombie, as dead as gone). */
static unsigned long long mock_proc_start(pid_t pid, char *state)
{
    char path[64], buf[1024];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    char *p = strrchr(buf, ')'); /* the command name may hold spaces */
    if (!p || p[1] != ' ' || !p[2])
        return 0;
    p += 2; /* field 3, the state */
    *state = *p;
    for (int field = 3; field < 22; field++) { /* field 22: starttime */
        p = strchr(p, ' ');
        if (!p)
            return 0;
        p++;
    }
    return strtoull(p, NULL, 10);
}

static unsigned long long mock_self_start_value;
static pthread_once_t mock_self_start_once = PTHREAD_ONCE_INIT;

static void mock_self_start_init(void)
{
    char state;
    mock_self_start_value = mock_proc_start(getpid(), &state);
}

unsigned long long mock_self_start(void)
{
    pthread_once(&mock_self_start_once, mock_self_start_init);
    return mock_self_start_value;
}

int mock_proc_alive(pid_t pid, unsigned long long start)
{
    char state = '?';
    if (pid <= 0)
        return 0;
    return mock_proc_start(pid, &state) == start && state != 'Z' && state != 'X';
}

static void mock_registry_path(const struct mock_context *c, const char *kind, uint32_t key, char *out,
                               size_t len)
{
    snprintf(out, len, "%s/%s-%08x", c->dir, kind, key);
}

/* content written whole to a fresh temporary file; its name in tmp. */
static int mock_registry_tmp(const struct mock_context *c, const char *content, char *tmp, size_t len)
{
    snprintf(tmp, len, "%s/tmp-%d-%u", c->dir, (int)getpid(), atomic_fetch_add(&mock_tmp_seq, 1));
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    size_t n = strlen(content);
    ssize_t w = write(fd, content, n);
    close(fd);
    if (w != (ssize_t)n) {
        unlink(tmp);
        errno = EIO;
        return -1;
    }
    return 0;
}

static int mock_file_read(const char *path, char *buf, size_t len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, len - 1);
    close(fd);
    if (n < 0)
        return -1;
    buf[n] = '\0';
    return 0;
}

/* Every record starts with "pid P start S": whether that process is gone. */
static int mock_record_stale(const char *path)
{
    char buf[512];
    int pid;
    unsigned long long start;
    if (mock_file_read(path, buf, sizeof(buf)))
        return 0; /* already gone, or unreadable: leave it */
    if (sscanf(buf, "pid %d start %llu", &pid, &start) != 2)
        return 1;
    return !mock_proc_alive(pid, start);
}

static void mock_registry_sweep(struct mock_context *c)
{
    DIR *d = opendir(c->dir);
    struct dirent *e;
    char path[PATH_MAX];
    int pid;
    if (!d)
        return;
    flock(c->registry_fd, LOCK_EX);
    while ((e = readdir(d))) {
        snprintf(path, sizeof(path), "%s/%s", c->dir, e->d_name);
        if (!strncmp(e->d_name, "qp-", 3) || !strncmp(e->d_name, "mr-", 3)) {
            if (mock_record_stale(path))
                unlink(path);
        } else if (sscanf(e->d_name, "tmp-%d-", &pid) == 1 && kill(pid, 0) && errno == ESRCH) {
            unlink(path);
        }
    }
    flock(c->registry_fd, LOCK_UN);
    closedir(d);
}

static int mock_lock_open(const struct mock_context *c, const char *name)
{
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/%s", c->dir, name);
    return open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
}

int mock_registry_open(struct mock_context *c)
{
    const char *dir = getenv("GSHMEM_MOCK_IB_DIR");
    int n = dir && *dir ? snprintf(c->dir, sizeof(c->dir), "%s", dir)
                        : snprintf(c->dir, sizeof(c->dir), "/dev/shm/gshmem-mockib-%u", (unsigned)getuid());
    if (n < 0 || (size_t)n >= sizeof(c->dir)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    if (mkdir(c->dir, 0700) && errno != EEXIST) {
        fprintf(stderr, "mock ibv: cannot create the registry %s: %s\n", c->dir, strerror(errno));
        return -1;
    }
    /* Separate descriptors per context: flock excludes other open files, not this one. */
    c->registry_fd = mock_lock_open(c, "registry.lock");
    c->atomic_fd = mock_lock_open(c, "atomic.lock");
    if (c->registry_fd < 0 || c->atomic_fd < 0) {
        fprintf(stderr, "mock ibv: cannot open the locks in %s: %s\n", c->dir, strerror(errno));
        mock_registry_close(c);
        return -1;
    }
    mock_registry_sweep(c);
    return 0;
}

void mock_registry_close(struct mock_context *c)
{
    if (c->registry_fd >= 0)
        close(c->registry_fd);
    if (c->atomic_fd >= 0)
        close(c->atomic_fd);
    c->registry_fd = c->atomic_fd = -1;
}

/* Creates kind-<key> with content under a random key (bits of key_mask, not 0, 1 or
 * key_mask itself: reserved QPNs, and keys that look like uninitialised memory). */
int mock_registry_create(struct mock_context *c, const char *kind, uint32_t key_mask, uint32_t *key,
                         const char *content)
{
    char tmp[PATH_MAX], path[PATH_MAX];
    int rc = -1;
    if (mock_registry_tmp(c, content, tmp, sizeof(tmp)))
        return -1;
    flock(c->registry_fd, LOCK_EX);
    for (int tries = 0; tries < 1000; tries++) {
        uint32_t k;
        if (getrandom(&k, sizeof(k), 0) != sizeof(k))
            break;
        k &= key_mask;
        if (k < 2 || k == key_mask)
            continue;
        mock_registry_path(c, kind, k, path, sizeof(path));
        if (link(tmp, path) == 0 || (errno == EEXIST && mock_record_stale(path) && unlink(path) == 0 &&
                                     link(tmp, path) == 0)) {
            *key = k;
            rc = 0;
            break;
        }
        if (errno != EEXIST)
            break;
    }
    flock(c->registry_fd, LOCK_UN);
    unlink(tmp);
    if (rc)
        errno = ENOMEM;
    return rc;
}

int mock_registry_update(struct mock_context *c, const char *kind, uint32_t key, const char *content)
{
    char tmp[PATH_MAX], path[PATH_MAX];
    if (mock_registry_tmp(c, content, tmp, sizeof(tmp)))
        return -1;
    mock_registry_path(c, kind, key, path, sizeof(path));
    if (rename(tmp, path)) {
        unlink(tmp);
        return -1;
    }
    return 0;
}

int mock_registry_read(struct mock_context *c, const char *kind, uint32_t key, char *buf, size_t len)
{
    char path[PATH_MAX];
    mock_registry_path(c, kind, key, path, sizeof(path));
    return mock_file_read(path, buf, len);
}

void mock_registry_remove(struct mock_context *c, const char *kind, uint32_t key)
{
    char path[PATH_MAX];
    mock_registry_path(c, kind, key, path, sizeof(path));
    unlink(path);
}

static void mock_hex_encode(const uint8_t in[16], char out[33])
{
    for (int i = 0; i < 16; i++)
        snprintf(out + 2 * i, 3, "%02x", in[i]);
}

static int mock_hex_decode(const char *in, uint8_t out[16])
{
    for (int i = 0; i < 16; i++) {
        unsigned v;
        if (sscanf(in + 2 * i, "%2x", &v) != 1)
            return -1;
        out[i] = (uint8_t)v;
    }
    return 0;
}

void mock_qp_rec_format(const struct mock_qp_rec *r, char *buf, size_t len)
{
    char gid[33], dgid[33];
    mock_hex_encode(r->gid, gid);
    mock_hex_encode(r->dgid, dgid);
    snprintf(buf, len,
             "pid %d start %llu pd %llu state %d dest_qpn %u access %u rd_atomic %u rq_psn %u "
             "dev %d ib %d up %d lid %u dlid %u gid_type %d gid %s dgid %s\n",
             (int)r->pid, r->start, r->pd, r->state, r->dest_qpn, r->access, r->max_dest_rd_atomic, r->rq_psn,
             r->dev, r->is_ib, r->up, r->lid, r->dlid, r->gid_type, gid, dgid);
}

int mock_qp_rec_read(struct mock_context *c, uint32_t qpn, struct mock_qp_rec *r)
{
    char buf[512], gid[33], dgid[33];
    int pid;
    if (mock_registry_read(c, "qp", qpn, buf, sizeof(buf)))
        return -1;
    int n = sscanf(buf,
                   "pid %d start %llu pd %llu state %d dest_qpn %u access %u rd_atomic %u rq_psn %u "
                   "dev %d ib %d up %d lid %u dlid %u gid_type %d gid %32s dgid %32s",
                   &pid, &r->start, &r->pd, &r->state, &r->dest_qpn, &r->access, &r->max_dest_rd_atomic,
                   &r->rq_psn, &r->dev, &r->is_ib, &r->up, &r->lid, &r->dlid, &r->gid_type, gid, dgid);
    r->pid = pid;
    if (n != 16 || mock_hex_decode(gid, r->gid) || mock_hex_decode(dgid, r->dgid)) {
        errno = EINVAL;
        return -1;
    }
    return 0;
}

int mock_mr_rec_read(struct mock_context *c, uint32_t rkey, struct mock_mr_rec *r)
{
    char buf[512];
    int pid;
    if (mock_registry_read(c, "mr", rkey, buf, sizeof(buf)))
        return -1;
    int n = sscanf(buf, "pid %d start %llu pd %llu addr %llx iova %llx length %llx access %u", &pid, &r->start,
                   &r->pd, &r->addr, &r->iova, &r->length, &r->access);
    r->pid = pid;
    if (n != 7) {
        errno = EINVAL;
        return -1;
    }
    return 0;
}
