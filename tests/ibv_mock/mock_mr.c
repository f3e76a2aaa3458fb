/*
 * Protection domains and memory regions. An MR is published as mr-<rkey> so that
 * other processes can check an rkey, its range and its access flags; lkey == rkey.
 */
#define _GNU_SOURCE
#include "mock_ibv.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#undef ibv_reg_mr

static atomic_ullong mock_pd_seq;

MOCK_EXPORT struct ibv_pd *ibv_alloc_pd(struct ibv_context *context)
{
    struct mock_context *c = mock_ctx(context);
    struct mock_pd *p = calloc(1, sizeof(*p));
    if (!p) {
        errno = ENOMEM;
        return NULL;
    }
    p->pd.context = context;
    p->id = atomic_fetch_add(&mock_pd_seq, 1) + 1;
    pthread_mutex_lock(&c->lock);
    p->pd.handle = ++c->next_handle;
    pthread_mutex_unlock(&c->lock);
    return &p->pd;
}

MOCK_EXPORT int ibv_dealloc_pd(struct ibv_pd *pd)
{
    struct mock_context *c = mock_ctx(pd->context);
    struct mock_pd *p = (struct mock_pd *)pd;
    pthread_mutex_lock(&c->lock);
    int busy = p->users > 0;
    pthread_mutex_unlock(&c->lock);
    if (busy)
        return EBUSY; /* MRs or QPs still use it, as the kernel says */
    free(p);
    return 0;
}

/* Whether every page of [addr, addr+len) is mapped (what pinning would demand). */
int mock_range_mapped(const void *addr, size_t len)
{
    const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t start = (uintptr_t)addr & ~(page - 1), end = (uintptr_t)addr + len;
    unsigned char vec[4096];
    if (end < (uintptr_t)addr)
        return 0;
    while (start < end) {
        size_t chunk = end - start < page * sizeof(vec) ? end - start : page * sizeof(vec);
        if (mincore((void *)start, chunk, vec) && errno == ENOMEM)
            return 0;
        start += chunk;
    }
    return 1;
}

/* Whether the process can read the range's first and last byte through
 * process_vm_readv, as the mock's data movement will: GPU memory mapped into the
 * process (CUDA's unified addresses) is mapped but not readable, and the mock cannot
 * reach it, so registering it fails as without nvidia-peermem. */
static int mock_range_readable(const void *addr, size_t len)
{
    unsigned char b[2];
    struct iovec local[2] = {{&b[0], 1}, {&b[1], 1}};
    struct iovec remote[2] = {{(void *)addr, 1}, {(char *)addr + len - 1, 1}};
    return process_vm_readv(getpid(), local, 2, remote, 2, 0) == 2;
}

/* The flags a registration may carry; the optional range is ignored, as by rdma-core. */
#define MOCK_MR_ACCESS                                                                                   \
    (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC | \
     IBV_ACCESS_OPTIONAL_RANGE)

static int mock_mr_check(void *addr, size_t length, unsigned access)
{
    if (!length || (access & ~(unsigned)MOCK_MR_ACCESS))
        return EINVAL;
    /* Remote writers need the local-write permission too (IB spec, and the kernel). */
    if ((access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) && !(access & IBV_ACCESS_LOCAL_WRITE))
        return EINVAL;
    if (!mock_range_mapped(addr, length) || !mock_range_readable(addr, length))
        return EFAULT;
    return 0;
}

MOCK_EXPORT struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova,
                                            unsigned int access)
{
    struct mock_context *c = mock_ctx(pd->context);
    struct mock_pd *p = (struct mock_pd *)pd;
    char content[256];
    int err = mock_mr_check(addr, length, access);
    if (!err && c->mr_fail_from > 0 && ++c->mr_count >= c->mr_fail_from)
        err = ENOMEM; /* as a low RLIMIT_MEMLOCK would */
    if (err) {
        errno = err;
        return NULL;
    }
    struct mock_mr *m = calloc(1, sizeof(*m));
    if (!m) {
        errno = ENOMEM;
        return NULL;
    }
    snprintf(content, sizeof(content), "pid %d start %llu pd %llu addr %llx iova %llx length %llx access %u\n",
             (int)getpid(), mock_self_start(), (unsigned long long)p->id, (unsigned long long)(uintptr_t)addr,
             (unsigned long long)iova, (unsigned long long)length, access);
    if (mock_registry_create(c, "mr", UINT32_MAX, &m->mr.rkey, content)) {
        free(m);
        return NULL;
    }
    m->mr.context = pd->context;
    m->mr.pd = pd;
    m->mr.addr = addr;
    m->mr.length = length;
    m->mr.lkey = m->mr.rkey;
    m->iova = iova;
    m->access = access;
    pthread_mutex_lock(&c->lock);
    m->mr.handle = ++c->next_handle;
    m->next = c->mrs;
    c->mrs = m;
    p->users++;
    pthread_mutex_unlock(&c->lock);
    return &m->mr;
}

MOCK_EXPORT struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access)
{
    return ibv_reg_mr_iova2(pd, addr, length, (uintptr_t)addr, (unsigned)access);
}

/* GPU memory is out of reach of process_vm_*: callers must fall back or fail. */
MOCK_EXPORT struct ibv_mr *ibv_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length, uint64_t iova,
                                             int fd, int access)
{
    (void)pd, (void)offset, (void)length, (void)iova, (void)fd, (void)access;
    errno = EOPNOTSUPP;
    return NULL;
}

MOCK_EXPORT int ibv_dereg_mr(struct ibv_mr *mr)
{
    struct mock_context *c = mock_ctx(mr->context);
    struct mock_mr *m = (struct mock_mr *)mr;
    pthread_mutex_lock(&c->lock);
    for (struct mock_mr **pp = &c->mrs; *pp; pp = &(*pp)->next)
        if (*pp == m) {
            *pp = m->next;
            break;
        }
    ((struct mock_pd *)mr->pd)->users--;
    pthread_mutex_unlock(&c->lock);
    mock_registry_remove(c, "mr", mr->rkey);
    free(m);
    return 0;
}

/* Called with the context lock held. */
struct mock_mr *mock_mr_find(struct mock_context *c, uint32_t lkey)
{
    for (struct mock_mr *m = c->mrs; m; m = m->next)
        if (m->mr.lkey == lkey)
            return m;
    return NULL;
}
