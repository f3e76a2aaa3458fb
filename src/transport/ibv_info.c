/* gshmem-info's view of the RDMA stack: devices, ports, GIDs, GPUDirect RDMA paths. */
#ifdef GSHMEM_HAVE_IBV
#include "transport/ibv_impl.h"
#include "transport/ibv_select.h"

#include "core/check.h"
#include "core/env.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static const char *info_port_state(enum ibv_port_state s)
{
    switch (s) {
    case IBV_PORT_ACTIVE: return "ACTIVE";
    case IBV_PORT_DOWN: return "DOWN";
    case IBV_PORT_INIT: return "INIT";
    case IBV_PORT_ARMED: return "ARMED";
    default: return "not usable";
    }
}

static void info_gids(FILE *out, const struct gshmemi_ibv_api *api, struct ibv_context *ctx, int port, int len)
{
    for (int i = 0; i < len && i < 256; i++) {
        struct ibv_gid_entry e;
        union ibv_gid g;
        const char *type = "";
        if (api->_ibv_query_gid_ex) {
            if (api->_ibv_query_gid_ex(ctx, (uint32_t)port, (uint32_t)i, &e, 0, sizeof(e)) != 0) continue;
            g = e.gid;
            type = e.gid_type == IBV_GID_TYPE_ROCE_V2   ? "RoCE v2"
                   : e.gid_type == IBV_GID_TYPE_ROCE_V1 ? "RoCE v1"
                                                        : "IB";
        } else if (api->ibv_query_gid(ctx, (uint8_t)port, i, &g) != 0) {
            continue;
        }
        static const uint8_t zero[16];
        if (memcmp(g.raw, zero, 16) == 0) continue;
        fprintf(out, "      GID %d %s:", i, type);
        for (int b = 0; b < 16; b += 2) fprintf(out, "%s%02x%02x", b ? ":" : " ", g.raw[b], g.raw[b + 1]);
        fprintf(out, "\n");
    }
}

static void info_device(FILE *out, const struct gshmemi_ibv_api *api, struct ibv_device *dev)
{
    const char *name = api->ibv_get_device_name(dev);
    struct ibv_context *ctx = api->ibv_open_device(dev);
    struct ibv_device_attr da;
    if (!ctx || api->ibv_query_device(ctx, &da) != 0) {
        fprintf(out, "  %s: cannot be opened (permissions on /dev/infiniband?)\n", name);
        if (ctx) api->ibv_close_device(ctx);
        return;
    }
    fprintf(out, "  %s: %d port(s), fw %s, max MR %llu bytes, atomics %s\n", name, da.phys_port_cnt, da.fw_ver,
            (unsigned long long)da.max_mr_size, da.atomic_cap == IBV_ATOMIC_NONE ? "none" : "yes");
    for (int p = 1; p <= da.phys_port_cnt; p++) {
        struct ibv_port_attr pa;
        memset(&pa, 0, sizeof(pa));
        if ((api->ibv_query_port)(ctx, (uint8_t)p, &pa) != 0) continue;
        fprintf(out, "    port %d: %s, %s, LID %u, MTU %d\n", p, info_port_state(pa.state),
                pa.link_layer == IBV_LINK_LAYER_ETHERNET ? "RoCE (Ethernet)" : "InfiniBand", pa.lid,
                128 << pa.active_mtu);
        info_gids(out, api, ctx, p, pa.gid_tbl_len);
    }
    api->ibv_close_device(ctx);
}

static int info_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

void gshmemi_transport_ibv_describe(FILE *out)
{
    char why[384] = "";
    const struct gshmemi_ibv_api *api = gshmemi_ibv_api(why, sizeof(why));
    if (!api) {
        fprintf(out, "  ibv: not usable: %s\n", why);
        return;
    }
    fprintf(out, "  libibverbs: %s\n", api->path[0] ? api->path : "libibverbs.so.1");
    const char *cm = gshmemi_ibv_cm_library(why, sizeof(why));
    fprintf(out, "  librdmacm (GSHMEM_IB_CM=rdmacm): %s\n", cm ? (cm[0] ? cm : "librdmacm.so.1") : why);
    int n = 0;
    struct ibv_device **list = api->ibv_get_device_list(&n);
    if (!list || n == 0) fprintf(out, "  no RDMA device (ibv_devices lists none): ibv is not used\n");
    for (int i = 0; list && i < n; i++) info_device(out, api, list[i]);
    if (list) api->ibv_free_device_list(list);
    fprintf(out, "  GPUDirect RDMA: DMA-BUF %s; nvidia-peermem %s\n",
            api->ibv_reg_dmabuf_mr ? "offered by libibverbs (needs Linux 5.12+ and the open GPU kernel modules)"
                                   : "not offered by this libibverbs",
            info_exists("/sys/module/nvidia_peermem") || info_exists("/sys/kernel/mm/memory_peers/nv_mem")
                ? "loaded"
                : "not loaded");
    gshmemi_ibv_cuda_gdr_describe(out);
}

static void check_gpudirect(FILE *out, const struct gshmemi_ibv_api *api, int device_heap)
{
    int peermem = info_exists("/sys/module/nvidia_peermem") || info_exists("/sys/kernel/mm/memory_peers/nv_mem");
    if (!device_heap) {
        gshmemi_check_line(out, GSHMEMI_CHECK_OK, "gpudirect", "not needed: heaps are in host memory here");
    } else if (peermem || api->ibv_reg_dmabuf_mr) {
        gshmemi_check_line(out, GSHMEMI_CHECK_OK, "gpudirect", "%s%s%s",
                           api->ibv_reg_dmabuf_mr ? "DMA-BUF offered by libibverbs (tried first; "
                                                    "needs Linux 5.12+ and NVIDIA's open kernel modules)"
                                                  : "",
                           api->ibv_reg_dmabuf_mr && peermem ? "; " : "", peermem ? "nvidia-peermem loaded" : "");
    } else {
        gshmemi_check_line(out, GSHMEMI_CHECK_WARN, "gpudirect",
                           "no GPUDirect RDMA path: libibverbs has no "
                           "ibv_reg_dmabuf_mr and nvidia-peermem is not loaded; a device heap cannot be registered");
        gshmemi_check_fix(out, "modprobe nvidia-peermem (or rdma-core 34+ with Linux 5.12+ for DMA-BUF)");
    }
}

/* GSHMEM_IB_CM=rdmacm: the library, and an IPv4 address on the port. */
static void check_rdmacm(FILE *out, const struct ibv_port_choice *port, int *fails)
{
    char why[384];
    uint8_t ip[4];
    const char *lib = gshmemi_ibv_cm_library(why, sizeof(why));
    if (!lib) {
        *fails += gshmemi_check_line(out, GSHMEMI_CHECK_FAIL, "rdmacm", "GSHMEM_IB_CM=rdmacm, but %s", why);
        gshmemi_check_fix(out, "apt-get install librdmacm1 (rdma-core), or unset GSHMEM_IB_CM");
    } else if (gshmemi_ibv_cm_port_address(port, ip, why, sizeof(why)) != 0) {
        *fails += gshmemi_check_line(out, GSHMEMI_CHECK_FAIL, "rdmacm", "GSHMEM_IB_CM=rdmacm: %s port %d: %s",
                                     port->dev, port->port, why);
        gshmemi_check_fix(out, "give the port's netdev (IPoIB on InfiniBand) an IPv4 address: ip addr add ... dev ...");
    } else {
        gshmemi_check_line(out, GSHMEMI_CHECK_OK, "rdmacm", "%s; connections to %u.%u.%u.%u (%s port %d)",
                           lib[0] ? lib : "librdmacm.so.1", ip[0], ip[1], ip[2], ip[3], port->dev, port->port);
    }
}

void gshmemi_transport_ibv_check(FILE *out, const struct gshmemi_env *env, int n_devices, int device_heap, int *fails)
{
    char why[384] = "";
    const struct gshmemi_ibv_api *api = gshmemi_ibv_api(why, sizeof(why));
    if (n_devices == 0 && !api) {
        gshmemi_check_line(out, GSHMEMI_CHECK_OK, "rdma",
                           "no RDMA device and no libibverbs: PEs on other nodes use tcp");
        return;
    }
    if (!api) {
        *fails += gshmemi_check_line(out, GSHMEMI_CHECK_FAIL, "rdma", "%d RDMA device(s), but %s", n_devices, why);
        gshmemi_check_fix(out, "apt-get install libibverbs1 ibverbs-providers (or the vendor's OFED/DOCA)");
        return;
    }
    struct ibv_port_choice port[GSHMEMI_IBV_MAX_RAILS];
    struct ibv_context *ctx[GSHMEMI_IBV_MAX_RAILS];
    int max = env->ib_cm == GSHMEMI_IBV_CM_RDMACM ? 1 : (int)env->ib_max_rails;
    int n = gshmemi_ibv_ports_open(api, env, NULL, max, ctx, port, why, sizeof(why));
    if (!n && n_devices == 0) {
        gshmemi_check_line(out, GSHMEMI_CHECK_OK, "rdma", "no RDMA device: PEs on other nodes use tcp");
        return;
    }
    if (!n) {
        gshmemi_check_line(out, GSHMEMI_CHECK_WARN, "rdma", "ibv cannot be used, PEs on other nodes use tcp: %s", why);
        gshmemi_check_fix(out, "ibstat / ibv_devinfo show the ports; InfiniBand needs a subnet manager, RoCE an IP "
                               "address on the port's netdev; GSHMEM_IB_HCA and GSHMEM_IB_GID_INDEX select others");
    }
    for (int r = 0; r < n; r++) {
        /* without a GPU to be near, every allowed port ties: a PE near a GPU may use fewer */
        gshmemi_check_line(out, GSHMEMI_CHECK_OK, "rdma", "ibv %s %s port %d (%s, MTU %d, GID index %d)",
                           n > 1 ? "may use" : "uses", port[r].dev, port[r].port,
                           port[r].link == GSHMEMI_IBV_LINK_ETH ? "RoCE" : "InfiniBand", 128 << port[r].mtu,
                           port[r].gid_index);
        api->ibv_close_device(ctx[r]);
    }
    if (n && env->ib_cm == GSHMEMI_IBV_CM_RDMACM) check_rdmacm(out, &port[0], fails);
    check_gpudirect(out, api, device_heap);
}
#endif
