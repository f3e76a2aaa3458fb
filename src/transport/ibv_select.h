/*
 * The ibv transport's choices that need no verbs: which HCAs and ports the user allows
 * (GSHMEM_IB_HCA) and which GID of a RoCE port to address (GSHMEM_IB_GID_INDEX or
 * automatic). Pure functions over plain data, so they are tested without an RDMA
 * device; the transport feeds them what the verbs report.
 */
#ifndef GSHMEMI_IBV_SELECT_H
#define GSHMEMI_IBV_SELECT_H

#include <stddef.h>
#include <stdint.h>

#define GSHMEMI_IB_HCA_MAX 32      /* entries in one GSHMEM_IB_HCA list */
#define GSHMEMI_IB_HCA_NAME_MAX 64 /* IB_DEVICE_NAME_MAX in the kernel */

/* GSHMEM_IB_HCA, parsed: "mlx5_0:1,mlx5_1" (use these), "^mlx5_2" (all but these),
 * "=mlx5_0" (exact names; without '=' a name also matches devices it prefixes, so
 * "mlx5" means every mlx5_N). A port suffix limits an entry to that port. */
struct gshmemi_ib_hca_filter {
    int exclude; /* '^': the entries are excluded */
    int exact;   /* '=': names match exactly */
    int count;   /* 0: no filter (every HCA and port) */
    struct {
        char name[GSHMEMI_IB_HCA_NAME_MAX];
        int port; /* 0: every port */
    } entry[GSHMEMI_IB_HCA_MAX];
};

/* Parses text (NULL or empty: no filter). 0, or -1 with the reason in why. */
int gshmemi_ib_hca_parse(const char *text, struct gshmemi_ib_hca_filter *f, char *why, size_t whylen);

/* Whether port `port` of device `name` may be used. */
int gshmemi_ib_hca_allows(const struct gshmemi_ib_hca_filter *f, const char *name, int port);

/* What kind of address a GID table entry is (the kernel's gid_attrs/types). */
enum gshmemi_ib_gid_type { GSHMEMI_GID_IB, GSHMEMI_GID_ROCE_V1, GSHMEMI_GID_ROCE_V2 };

struct gshmemi_ib_gid {
    int index;
    int type; /* enum gshmemi_ib_gid_type */
    uint8_t raw[16];
};

/* The GID index to use on a port whose table is gids[0..n). want >= 0: that index,
 * which must be in the table and not all zeros. want < 0 (auto): on InfiniBand
 * (is_ib) the first valid entry; on RoCE the first RoCE v2 entry with an IPv4-mapped
 * address (::ffff:a.b.c.d, routable and what RoCE fabrics are set up for), else the
 * first RoCE v2 entry with a global IPv6 address, else the first RoCE v1 entry.
 * -1 when there is none, with the reason in why. */
int gshmemi_ib_gid_choose(const struct gshmemi_ib_gid *gids, int n, int is_ib, int want, char *why, size_t whylen);

/* Closeness of two sysfs device paths ("/sys/devices/pci0000:00/0000:00:01.0/..."):
 * the number of leading path components they share. A NIC under the same PCIe switch as
 * a GPU shares more than one behind another root port or socket. */
int gshmemi_ib_pci_closeness(const char *a, const char *b);

/* The IPv4 address in an IPv4-mapped GID (::ffff:a.b.c.d), the address librdmacm
 * resolves for a RoCE port: 1 with ip filled, 0 when the GID holds none. */
int gshmemi_ib_gid_ipv4(const uint8_t gid[16], uint8_t ip[4]);

/* The network interface of port `port` of RDMA device `dev` (an IPoIB or Ethernet
 * netdev whose sysfs entry sysfs_net/<if>/device/infiniband/<dev> exists and whose
 * dev_port is port - 1), looked up under sysfs_net ("/sys/class/net"); the default
 * partition's interface before a partition's child (ib0 before ib0.8001). 0 with its
 * name, or -1 with the reason. */
int gshmemi_ib_port_netdev(const char *sysfs_net, const char *dev, int port, char *ifname, size_t iflen, char *why,
                           size_t whylen);

#endif
