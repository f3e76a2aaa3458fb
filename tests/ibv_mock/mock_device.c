/*
 * Devices, contexts and what they report: the device list, open/close, and the
 * device, port and GID queries. Each context reads its configuration from the
 * environment when it is opened.
 */
#define _GNU_SOURCE
#include "mock_ibv.h"

#include <endian.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#undef ibv_get_device_list
#undef ibv_query_port

static struct mock_device mock_devices[MOCK_MAX_DEVICES];
static pthread_once_t mock_devices_once = PTHREAD_ONCE_INIT;

static void mock_devices_init(void)
{
    for (int i = 0; i < MOCK_MAX_DEVICES; i++) {
        struct ibv_device *d = &mock_devices[i].dev;
        mock_devices[i].index = i;
        d->node_type = IBV_NODE_CA;
        d->transport_type = IBV_TRANSPORT_IB;
        snprintf(d->name, sizeof(d->name), "mockib%d", i);
        snprintf(d->dev_name, sizeof(d->dev_name), "uverbs%d", i);
        snprintf(d->dev_path, sizeof(d->dev_path), "/sys/class/infiniband_verbs/uverbs%d", i);
        snprintf(d->ibdev_path, sizeof(d->ibdev_path), "/sys/class/infiniband/mockib%d", i);
    }
}

/* A whole-number variable in [lo, hi]; def when unset, -1 (with a message) when bad. */
static long mock_env_long(const char *name, long def, long lo, long hi)
{
    const char *s = getenv(name);
    char *end;
    if (!s || !*s)
        return def;
    long v = strtol(s, &end, 10);
    if (*end || v < lo || v > hi) {
        fprintf(stderr, "mock ibv: %s=%s is not a number in [%ld, %ld]\n", name, s, lo, hi);
        return -1;
    }
    return v;
}

/* GSHMEM_MOCK_IB_DEVICES is read at each call; the device structs live as long as the process. */
MOCK_EXPORT struct ibv_device **ibv_get_device_list(int *num_devices)
{
    pthread_once(&mock_devices_once, mock_devices_init);
    long n = mock_env_long("GSHMEM_MOCK_IB_DEVICES", 1, 0, MOCK_MAX_DEVICES);
    if (n < 0) {
        errno = EINVAL;
        return NULL;
    }
    struct ibv_device **list = calloc((size_t)n + 1, sizeof(*list));
    if (!list) {
        errno = ENOMEM;
        return NULL;
    }
    for (long i = 0; i < n; i++)
        list[i] = &mock_devices[i].dev;
    if (num_devices)
        *num_devices = (int)n;
    return list;
}

MOCK_EXPORT void ibv_free_device_list(struct ibv_device **list) { free(list); }

MOCK_EXPORT const char *ibv_get_device_name(struct ibv_device *device) { return device->name; }

/* The EUI-64 of the port's made-up MAC 02:4d:4b:00:00:<dev+1>: GUID and link-local GID. */
static void mock_eui64(int dev, uint8_t out[8])
{
    const uint8_t eui[8] = {0x00, 0x4d, 0x4b, 0xff, 0xfe, 0x00, 0x00, (uint8_t)(dev + 1)};
    memcpy(out, eui, 8);
}

MOCK_EXPORT __be64 ibv_get_device_guid(struct ibv_device *device)
{
    uint8_t eui[8];
    __be64 guid;
    mock_eui64(((struct mock_device *)device)->index, eui);
    memcpy(&guid, eui, 8); /* already in network order */
    return guid;
}

/* Fills e for entry index of device dev's GID table: 0, ENODATA (unused) or EINVAL. */
int mock_gid_entry(int dev, int is_ib, uint32_t index, struct ibv_gid_entry *e)
{
    if (index >= MOCK_GID_TBL_LEN)
        return EINVAL;
    memset(e, 0, sizeof(*e));
    e->gid_index = index;
    e->port_num = 1;
    if (is_ib) {
        if (index != 0)
            return ENODATA;
        e->gid.raw[0] = 0xfe, e->gid.raw[1] = 0x80;
        mock_eui64(dev, &e->gid.raw[8]);
        e->gid_type = IBV_GID_TYPE_IB;
        return 0;
    }
    /* Like an mlx5 RoCE port: each address twice, RoCE v1 then v2. */
    if (index / 2 == 0) {
        e->gid.raw[0] = 0xfe, e->gid.raw[1] = 0x80;
        mock_eui64(dev, &e->gid.raw[8]);
    } else if (index / 2 == 1) {
        const uint8_t v4[4] = {198, 18, 0, (uint8_t)(dev + 1)};
        e->gid.raw[10] = 0xff, e->gid.raw[11] = 0xff;
        memcpy(&e->gid.raw[12], v4, 4);
    } else {
        return ENODATA;
    }
    e->gid_type = index % 2 ? IBV_GID_TYPE_ROCE_V2 : IBV_GID_TYPE_ROCE_V1;
    e->ndev_ifindex = 100 + (uint32_t)dev;
    return 0;
}

/* Whether device dev's table holds gid with GID type `type`. */
int mock_gid_find(int dev, int is_ib, const uint8_t gid[16], int type)
{
    struct ibv_gid_entry e;
    for (uint32_t i = 0; i < MOCK_GID_TBL_LEN; i++)
        if (mock_gid_entry(dev, is_ib, i, &e) == 0 && (int)e.gid_type == type && !memcmp(e.gid.raw, gid, 16))
            return 1;
    return 0;
}

/* GSHMEM_MOCK_IB_* for a context being opened; -1 when one is malformed. */
static int mock_context_configure(struct mock_context *c, int dev)
{
    const char *link = getenv("GSHMEM_MOCK_IB_LINK");
    const char *port = getenv("GSHMEM_MOCK_IB_PORT");
    c->port.dev = dev;
    c->port.is_ib = link && !strcmp(link, "ib");
    if (link && *link && !c->port.is_ib && strcmp(link, "roce") && strcmp(link, "eth")) {
        fprintf(stderr, "mock ibv: GSHMEM_MOCK_IB_LINK=%s: expected ib, roce or eth\n", link);
        return -1;
    }
    c->port.up = !(port && !strcmp(port, "down"));
    if (port && *port && c->port.up && strcmp(port, "up")) {
        fprintf(stderr, "mock ibv: GSHMEM_MOCK_IB_PORT=%s: expected up or down\n", port);
        return -1;
    }
    c->port.lid = c->port.is_ib ? (uint16_t)(1 + dev) : 0;
    c->fail_after = mock_env_long("GSHMEM_MOCK_IB_FAIL_AFTER", 0, 0, LONG_MAX);
    c->quiet = (int)mock_env_long("GSHMEM_MOCK_IB_QUIET", 0, 0, 1);
    c->relaxed_ms = mock_env_long("GSHMEM_MOCK_IB_RELAXED", 0, 0, 60000);
    c->rd_atom = mock_env_long("GSHMEM_MOCK_IB_RD_ATOM", MOCK_MAX_RD_ATOM, 1, MOCK_MAX_RD_ATOM);
    c->max_cqe = mock_env_long("GSHMEM_MOCK_IB_MAX_CQE", MOCK_MAX_CQE, 1, MOCK_MAX_CQE);
    c->mr_fail_from = mock_env_long("GSHMEM_MOCK_IB_MR_FAIL_FROM", 0, 0, LONG_MAX);
    c->max_qps = getenv("GSHMEM_MOCK_IB_MAX_QPS") ? mock_env_long("GSHMEM_MOCK_IB_MAX_QPS", 0, 0, LONG_MAX) : -2;
    if (c->max_qps == -2)
        c->max_qps = LONG_MAX;
    return c->fail_after < 0 || c->quiet < 0 || c->max_qps < 0 || c->relaxed_ms < 0 || c->rd_atom < 0 ||
                   c->max_cqe < 0 || c->mr_fail_from < 0
               ? -1
               : 0;
}

MOCK_EXPORT struct ibv_context *ibv_open_device(struct ibv_device *device)
{
    struct mock_device *d = (struct mock_device *)device;
    struct mock_context *c = calloc(1, sizeof(*c));
    int sv[2];
    if (!c) {
        errno = ENOMEM;
        return NULL;
    }
    if (mock_context_configure(c, d->index)) {
        errno = EINVAL;
        goto err_free;
    }
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
        goto err_free;
    c->ctx.async_fd = sv[0];
    c->event_fd = sv[1];
    if (mock_registry_open(c))
        goto err_sockets;
    /* Peers write into this process with process_vm_writev; Yama would refuse them. */
    prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
    pthread_mutex_init(&c->lock, NULL);
    pthread_mutex_init(&c->ctx.mutex, NULL);
    c->ctx.device = device;
    c->ctx.cmd_fd = -1;
    c->ctx.num_comp_vectors = 1;
    c->ctx.abi_compat = NULL; /* not a verbs_context: the inline verbs use ctx->ops */
    c->ctx.ops.post_send = mock_post_send;
    c->ctx.ops.post_recv = mock_post_recv;
    c->ctx.ops.poll_cq = mock_poll_cq;
    c->ctx.ops.req_notify_cq = mock_req_notify_cq;
    return &c->ctx;

err_sockets: {
    int err = errno;
    close(sv[0]);
    close(sv[1]);
    errno = err;
}
err_free:
    free(c);
    return NULL;
}

/* Objects still open are the kernel's to clean up on a real device: drop their files. */
MOCK_EXPORT int ibv_close_device(struct ibv_context *context)
{
    struct mock_context *c = mock_ctx(context);
    mock_late_stop(c);
    for (struct mock_qp *q = c->qps, *next; q; q = next) {
        next = q->next;
        mock_late_drain(c, q);
        mock_registry_remove(c, "qp", q->qp.qp_num);
        free(q);
    }
    for (struct mock_mr *m = c->mrs, *next; m; m = next) {
        next = m->next;
        mock_registry_remove(c, "mr", m->mr.rkey);
        free(m);
    }
    mock_registry_close(c);
    close(c->ctx.async_fd);
    close(c->event_fd);
    pthread_mutex_destroy(&c->lock);
    pthread_mutex_destroy(&c->ctx.mutex);
    free(c);
    return 0;
}

MOCK_EXPORT int ibv_query_device(struct ibv_context *context, struct ibv_device_attr *a)
{
    memset(a, 0, sizeof(*a));
    snprintf(a->fw_ver, sizeof(a->fw_ver), "mock-1.0");
    a->node_guid = ibv_get_device_guid(context->device);
    a->sys_image_guid = a->node_guid;
    a->max_mr_size = UINT64_MAX;
    a->page_size_cap = 0xfffff000;
    a->vendor_id = 0x02c9;
    a->vendor_part_id = 4123; /* ConnectX-6 */
    a->hw_ver = 0;
    a->max_qp = 1 << 17;
    a->max_qp_wr = MOCK_MAX_QP_WR;
    a->device_cap_flags = IBV_DEVICE_RC_RNR_NAK_GEN | IBV_DEVICE_PORT_ACTIVE_EVENT;
    a->max_sge = MOCK_MAX_SGE;
    a->max_sge_rd = MOCK_MAX_SGE;
    a->max_cq = 1 << 16;
    a->max_cqe = (int)mock_ctx(context)->max_cqe;
    a->max_mr = 1 << 20;
    a->max_pd = 1 << 16;
    a->max_qp_rd_atom = (int)mock_ctx(context)->rd_atom;
    a->max_res_rd_atom = MOCK_MAX_RD_ATOM << 17;
    a->max_qp_init_rd_atom = (int)mock_ctx(context)->rd_atom;
    a->atomic_cap = IBV_ATOMIC_HCA;
    a->max_pkeys = 1;
    a->local_ca_ack_delay = 16;
    a->phys_port_cnt = 1;
    return 0;
}

/* The compat layout: fields up to link_layer and flags, never port_cap_flags2. */
MOCK_EXPORT int ibv_query_port(struct ibv_context *context, uint8_t port_num,
                               struct _compat_ibv_port_attr *port_attr)
{
    struct mock_context *c = mock_ctx(context);
    struct ibv_port_attr *p = (struct ibv_port_attr *)port_attr;
    if (port_num != 1)
        return EINVAL;
    p->state = c->port.up ? IBV_PORT_ACTIVE : IBV_PORT_DOWN;
    p->max_mtu = IBV_MTU_4096;
    p->active_mtu = c->port.is_ib ? IBV_MTU_4096 : IBV_MTU_1024;
    p->gid_tbl_len = MOCK_GID_TBL_LEN;
    p->port_cap_flags = c->port.is_ib ? 0x2651e848 : 0x04010000;
    p->max_msg_sz = MOCK_MAX_MSG_SZ;
    p->bad_pkey_cntr = 0;
    p->qkey_viol_cntr = 0;
    p->pkey_tbl_len = 1;
    p->lid = c->port.lid;
    p->sm_lid = c->port.is_ib ? 1 : 0;
    p->lmc = 0;
    p->max_vl_num = 4;
    p->sm_sl = 0;
    p->subnet_timeout = c->port.is_ib ? 18 : 0;
    p->init_type_reply = 0;
    p->active_width = 2;  /* 4x */
    p->active_speed = 32; /* EDR */
    p->phys_state = c->port.up ? 5 : 3; /* LinkUp : Disabled */
    p->link_layer = c->port.is_ib ? IBV_LINK_LAYER_INFINIBAND : IBV_LINK_LAYER_ETHERNET;
    p->flags = 0;
    return 0;
}

/* Like libibverbs: an unused entry reads as zeros, a bad index fails with -1. */
MOCK_EXPORT int ibv_query_gid(struct ibv_context *context, uint8_t port_num, int index, union ibv_gid *gid)
{
    struct mock_context *c = mock_ctx(context);
    struct ibv_gid_entry e;
    if (port_num != 1 || index < 0)
        return -1;
    int rc = mock_gid_entry(c->port.dev, c->port.is_ib, (uint32_t)index, &e);
    if (rc == EINVAL)
        return -1;
    memcpy(gid, &e.gid, sizeof(*gid)); /* zeros when ENODATA */
    return 0;
}

MOCK_EXPORT int _ibv_query_gid_ex(struct ibv_context *context, uint32_t port_num, uint32_t gid_index,
                                  struct ibv_gid_entry *entry, uint32_t flags, size_t entry_size)
{
    struct mock_context *c = mock_ctx(context);
    struct ibv_gid_entry e;
    if (port_num != 1 || flags)
        return EINVAL;
    int rc = mock_gid_entry(c->port.dev, c->port.is_ib, gid_index, &e);
    if (rc)
        return rc;
    memcpy(entry, &e, entry_size < sizeof(e) ? entry_size : sizeof(e));
    return 0;
}
