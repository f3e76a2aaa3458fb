/* Which RDMA device and port the ibv transport uses, and its address (ibv_impl.h). */
#ifdef GSHMEM_HAVE_IBV
#include "transport/ibv_impl.h"
#include "transport/ibv_select.h"

#include "core/env.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IBV_GIDS_MAX 256

/* The GID's type from sysfs (libibverbs without _ibv_query_gid_ex). */
static int port_gid_type_sysfs(const char *dev, int port, int index)
{
    char path[256], text[32] = "";
    snprintf(path, sizeof(path), "/sys/class/infiniband/%s/ports/%d/gid_attrs/types/%d", dev, port, index);
    FILE *f = fopen(path, "r");
    if (f) {
        if (!fgets(text, sizeof(text), f)) text[0] = '\0';
        fclose(f);
    }
    if (strstr(text, "RoCE v2")) return GSHMEMI_GID_ROCE_V2;
    return strstr(text, "RoCE") ? GSHMEMI_GID_ROCE_V1 : GSHMEMI_GID_IB;
}

/* The port's GID table as gshmemi_ib_gid_choose wants it; empty entries stay zero. */
static int port_gids(const struct gshmemi_ibv_api *api, struct ibv_context *ctx, const char *dev, int port, int len,
                     struct gshmemi_ib_gid *gids)
{
    if (len > IBV_GIDS_MAX) len = IBV_GIDS_MAX;
    for (int i = 0; i < len; i++) {
        memset(&gids[i], 0, sizeof(gids[i]));
        gids[i].index = i;
        struct ibv_gid_entry e;
        if (api->_ibv_query_gid_ex) {
            if (api->_ibv_query_gid_ex(ctx, (uint32_t)port, (uint32_t)i, &e, 0, sizeof(e)) != 0) continue;
            memcpy(gids[i].raw, e.gid.raw, 16);
            gids[i].type = e.gid_type == IBV_GID_TYPE_ROCE_V2   ? GSHMEMI_GID_ROCE_V2
                           : e.gid_type == IBV_GID_TYPE_ROCE_V1 ? GSHMEMI_GID_ROCE_V1
                                                                : GSHMEMI_GID_IB;
            continue;
        }
        union ibv_gid gid;
        if (api->ibv_query_gid(ctx, (uint8_t)port, i, &gid) != 0) continue;
        memcpy(gids[i].raw, gid.raw, 16);
        gids[i].type = port_gid_type_sysfs(dev, port, i);
    }
    return len;
}

static void port_pci_path(const char *dev, char *out, size_t outlen)
{
    char link[256], real[PATH_MAX];
    snprintf(link, sizeof(link), "/sys/class/infiniband/%s/device", dev);
    if (!realpath(link, real)) real[0] = '\0';
    snprintf(out, outlen, "%.255s", real);
}

static void why_add(char *why, size_t whylen, const char *fmt, const char *dev, int port, const char *what)
{
    size_t at = strlen(why);
    if (at + 8 < whylen) snprintf(why + at, whylen - at, fmt, at ? "; " : "", dev, port, what);
}

/* Whether port p of ctx can carry the transport; fills c (the GID included). */
static int port_usable(const struct gshmemi_ibv_api *api, const struct gshmemi_env *env, struct ibv_context *ctx,
                       const char *dev, int p, struct ibv_port_choice *c, char *why, size_t whylen)
{
    struct ibv_port_attr pa;
    memset(&pa, 0, sizeof(pa));
    if ((api->ibv_query_port)(ctx, (uint8_t)p, &pa) != 0) {
        why_add(why, whylen, "%s%s:%d %s", dev, p, "cannot be queried");
        return 0;
    }
    if (pa.state != IBV_PORT_ACTIVE) {
        why_add(why, whylen, "%s%s:%d %s", dev, p, "is not active (cable, switch or subnet manager?)");
        return 0;
    }
    memset(c, 0, sizeof(*c));
    snprintf(c->dev, sizeof(c->dev), "%s", dev);
    c->port = p;
    c->link = pa.link_layer == IBV_LINK_LAYER_ETHERNET ? GSHMEMI_IBV_LINK_ETH : GSHMEMI_IBV_LINK_IB;
    c->lid = pa.lid;
    c->mtu = pa.active_mtu;
    c->max_msg_sz = pa.max_msg_sz;
    struct gshmemi_ib_gid *gids = calloc(IBV_GIDS_MAX, sizeof(*gids));
    if (!gids) return 0;
    int n = port_gids(api, ctx, dev, p, pa.gid_tbl_len, gids);
    char gwhy[192] = "";
    int ib = c->link == GSHMEMI_IBV_LINK_IB;
    c->gid_index = gshmemi_ib_gid_choose(gids, n, ib, (int)env->ib_gid_index, gwhy, sizeof(gwhy));
    for (int i = 0; i < n; i++)
        if (gids[i].index == c->gid_index) memcpy(c->gid, gids[i].raw, 16);
    free(gids);
    if (c->gid_index < 0 && !(ib && env->ib_gid_index < 0 && c->lid)) {
        why_add(why, whylen, "%s%s:%d %s", dev, p, gwhy);
        return 0;
    }
    port_pci_path(dev, c->pci, sizeof(c->pci));
    return 1;
}

struct ibv_port_candidate {
    int dev, score;
    struct ibv_port_choice c;
};

int gshmemi_ibv_ports_open(const struct gshmemi_ibv_api *api, const struct gshmemi_env *env, const char *gpu_pci,
                           int max, struct ibv_context **ctx, struct ibv_port_choice *out, char *why, size_t whylen)
{
    struct gshmemi_ib_hca_filter filter;
    why[0] = '\0';
    if (gshmemi_ib_hca_parse(env->ib_hca, &filter, why, whylen) != 0) return 0;
    int ndev = 0;
    struct ibv_device **list = api->ibv_get_device_list(&ndev);
    if (!list || ndev == 0) {
        snprintf(why, whylen,
                 "no RDMA device (ibv_get_device_list: %s; is an RDMA driver loaded? see /sys/class/infiniband)",
                 list ? "none" : strerror(errno));
        if (list) api->ibv_free_device_list(list);
        return 0;
    }
    /* every usable port and how near the GPU it is; the nearest ones keep the context
     * their device was queried with (a second port of one device opens another: each
     * rail owns its context) */
    struct ibv_port_candidate *cand = NULL;
    struct ibv_context **opened = calloc((size_t)ndev, sizeof(*opened));
    int ncand = 0, allowed = 0, best = -1;
    for (int d = 0; opened && d < ndev; d++) {
        const char *dev = api->ibv_get_device_name(list[d]);
        struct ibv_context *c = api->ibv_open_device(list[d]);
        struct ibv_device_attr da;
        if (!c || api->ibv_query_device(c, &da) != 0) {
            why_add(why, whylen, "%s%s:%d %s", dev, 0, "cannot be opened");
            if (c) api->ibv_close_device(c);
            continue;
        }
        /* a device that cannot answer reads and atomics cannot be a rail (gshmem's atomics and flushes need them) */
        if (da.atomic_cap == IBV_ATOMIC_NONE || da.max_qp_rd_atom < 1 || da.max_qp_init_rd_atom < 1) {
            why_add(why, whylen, "%s%s:%d %s", dev, 0, "offers no remote atomics or RDMA reads in flight");
            api->ibv_close_device(c);
            continue;
        }
        for (int p = 1; p <= da.phys_port_cnt; p++) {
            struct ibv_port_choice pc;
            if (!gshmemi_ib_hca_allows(&filter, dev, p)) continue;
            allowed++;
            if (!port_usable(api, env, c, dev, p, &pc, why, whylen)) continue;
            struct ibv_port_candidate *grown = realloc(cand, (size_t)(ncand + 1) * sizeof(*cand));
            if (!grown) continue;
            cand = grown;
            cand[ncand].dev = d, cand[ncand].c = pc;
            cand[ncand].score = gshmemi_ib_pci_closeness(pc.pci, gpu_pci);
            if (cand[ncand].score > best) best = cand[ncand].score;
            ncand++;
        }
        opened[d] = c;
    }
    int n = 0;
    for (int i = 0; i < ncand && n < max; i++) {
        if (cand[i].score != best) continue;
        struct ibv_context **c = &opened[cand[i].dev];
        if (!(ctx[n] = *c ? *c : api->ibv_open_device(list[cand[i].dev]))) continue;
        *c = NULL;
        out[n++] = cand[i].c;
    }
    for (int d = 0; opened && d < ndev; d++)
        if (opened[d]) api->ibv_close_device(opened[d]);
    free(opened);
    free(cand);
    if (!allowed) {
        snprintf(why, whylen, "GSHMEM_IB_HCA=\"%s\" allows none of the %d RDMA devices' ports", env->ib_hca, ndev);
    } else if (!n) {
        char ports[384];
        snprintf(ports, sizeof(ports), "%s", why);
        snprintf(why, whylen, "no usable RDMA port: %s", ports);
    }
    api->ibv_free_device_list(list);
    return n;
}
#endif
