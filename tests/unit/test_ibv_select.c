/* The ibv transport's pure choices (src/transport/ibv_select.c): GSHMEM_IB_HCA lists
 * and the GID a RoCE or InfiniBand port is addressed by. */
#include "transport/ibv_select.h"

#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static struct gshmemi_ib_hca_filter parse_ok(const char *text)
{
    struct gshmemi_ib_hca_filter f;
    char why[160] = "";
    cr_assert_eq(gshmemi_ib_hca_parse(text, &f, why, sizeof(why)), 0, "\"%s\" should parse: %s", text, why);
    return f;
}

Test(ib_hca, no_filter_allows_everything)
{
    struct gshmemi_ib_hca_filter f = parse_ok(NULL);
    cr_expect_eq(f.count, 0);
    cr_expect(gshmemi_ib_hca_allows(&f, "mlx5_0", 1));
    f = parse_ok("");
    cr_expect(gshmemi_ib_hca_allows(&f, "irdma3", 2));
}

Test(ib_hca, include_list_with_ports_and_prefixes)
{
    struct gshmemi_ib_hca_filter f = parse_ok("mlx5_0:1,mlx5_1,bnxt");
    cr_assert_eq(f.count, 3);
    cr_expect_str_eq(f.entry[0].name, "mlx5_0");
    cr_expect_eq(f.entry[0].port, 1);
    cr_expect_eq(f.entry[1].port, 0);
    cr_expect(gshmemi_ib_hca_allows(&f, "mlx5_0", 1));
    cr_expect_not(gshmemi_ib_hca_allows(&f, "mlx5_0", 2), "only port 1 of mlx5_0 was named");
    cr_expect(gshmemi_ib_hca_allows(&f, "mlx5_1", 2));
    cr_expect(gshmemi_ib_hca_allows(&f, "bnxt_re0", 1), "without '=' a name matches the devices it prefixes");
    cr_expect(gshmemi_ib_hca_allows(&f, "mlx5_10", 1), "mlx5_1 prefixes mlx5_10 without '='");
    cr_expect_not(gshmemi_ib_hca_allows(&f, "mlx5_2", 1));
    cr_expect_not(gshmemi_ib_hca_allows(&f, "irdma0", 1));
}

Test(ib_hca, exact_names)
{
    struct gshmemi_ib_hca_filter f = parse_ok("=mlx5_1,mlx5_3:2");
    cr_expect(f.exact);
    cr_expect(gshmemi_ib_hca_allows(&f, "mlx5_1", 1));
    cr_expect_not(gshmemi_ib_hca_allows(&f, "mlx5_10", 1), "'=' matches whole names only");
    cr_expect(gshmemi_ib_hca_allows(&f, "mlx5_3", 2));
    cr_expect_not(gshmemi_ib_hca_allows(&f, "mlx5_3", 1));
}

Test(ib_hca, exclusion)
{
    struct gshmemi_ib_hca_filter f = parse_ok("^mlx5_2,mlx5_0:2");
    cr_expect(f.exclude);
    cr_expect_not(gshmemi_ib_hca_allows(&f, "mlx5_2", 1));
    cr_expect_not(gshmemi_ib_hca_allows(&f, "mlx5_0", 2));
    cr_expect(gshmemi_ib_hca_allows(&f, "mlx5_0", 1), "only port 2 of mlx5_0 was excluded");
    cr_expect(gshmemi_ib_hca_allows(&f, "mlx5_1", 1));
    f = parse_ok("^=mlx5_1");
    cr_expect(f.exclude && f.exact);
    cr_expect_not(gshmemi_ib_hca_allows(&f, "mlx5_1", 1));
    cr_expect(gshmemi_ib_hca_allows(&f, "mlx5_11", 1));
}

Test(ib_hca, malformed_lists_are_refused_with_a_reason)
{
    static const char *const bad[] = {"mlx5_0,",      ",mlx5_0",       "mlx5_0,,mlx5_1", "^",        "=",
                                      "mlx5_0:",      "mlx5_0:x",      "mlx5_0:0",       ":1",       "mlx5_0:256",
                                      "mlx5_0 ,a",    "mlx5_0,^mlx5_1", "=^mlx5_0",      "a:1:2"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct gshmemi_ib_hca_filter f;
        char why[160] = "";
        cr_expect_eq(gshmemi_ib_hca_parse(bad[i], &f, why, sizeof(why)), -1, "\"%s\" should be refused", bad[i]);
        cr_expect(strstr(why, "GSHMEM_IB_HCA") != NULL, "the reason names the variable: %s", why);
        cr_expect_eq(f.count, 0, "\"%s\": nothing is kept from a refused list", bad[i]);
    }
    char longname[80];
    memset(longname, 'm', 64);
    longname[64] = '\0';
    struct gshmemi_ib_hca_filter f;
    char why[160];
    cr_expect_eq(gshmemi_ib_hca_parse(longname, &f, why, sizeof(why)), -1, "a 64-byte name is too long");
    char many[33 * 4 + 1] = "";
    for (int i = 0; i < 33; i++) strcat(many, i ? ",d" : "d"), strcat(many, i % 2 ? "x" : "y");
    cr_expect_eq(gshmemi_ib_hca_parse(many, &f, why, sizeof(why)), -1, "33 entries are too many");
}

/* A GID table entry: type and the address as 16 bytes. */
static struct gshmemi_ib_gid gid(int index, int type, const char *hex32)
{
    struct gshmemi_ib_gid g = {.index = index, .type = type};
    for (int i = 0; i < 16; i++) {
        unsigned v;
        sscanf(hex32 + 2 * i, "%2x", &v);
        g.raw[i] = (uint8_t)v;
    }
    return g;
}

#define ZERO "00000000000000000000000000000000"
#define LINK_LOCAL "fe800000000000000202c9fffe123456"
#define V4_198_18_0_1 "00000000000000000000ffffc6120001"
#define GLOBAL_V6 "20010db8000000000000000000000042"

Test(ib_gid, roce_prefers_v2_ipv4_then_v2_ipv6_then_v1)
{
    char why[200];
    /* The usual mlx5 RoCE table: v1 and v2 of the link-local address, then of the IPv4 one. */
    struct gshmemi_ib_gid t[] = {gid(0, GSHMEMI_GID_ROCE_V1, LINK_LOCAL), gid(1, GSHMEMI_GID_ROCE_V2, LINK_LOCAL),
                                 gid(2, GSHMEMI_GID_ROCE_V1, V4_198_18_0_1), gid(3, GSHMEMI_GID_ROCE_V2, V4_198_18_0_1)};
    cr_expect_eq(gshmemi_ib_gid_choose(t, 4, 0, -1, why, sizeof(why)), 3);
    struct gshmemi_ib_gid v6[] = {gid(0, GSHMEMI_GID_ROCE_V1, LINK_LOCAL), gid(1, GSHMEMI_GID_ROCE_V2, LINK_LOCAL),
                                  gid(2, GSHMEMI_GID_ROCE_V2, ZERO), gid(5, GSHMEMI_GID_ROCE_V2, GLOBAL_V6)};
    cr_expect_eq(gshmemi_ib_gid_choose(v6, 4, 0, -1, why, sizeof(why)), 5, "no IPv4: the global IPv6 v2 entry");
    struct gshmemi_ib_gid v1[] = {gid(0, GSHMEMI_GID_ROCE_V2, LINK_LOCAL), gid(1, GSHMEMI_GID_ROCE_V1, LINK_LOCAL)};
    cr_expect_eq(gshmemi_ib_gid_choose(v1, 2, 0, -1, why, sizeof(why)), 1, "only link-local: RoCE v1");
}

Test(ib_gid, roce_without_usable_entry_says_why)
{
    char why[200] = "";
    struct gshmemi_ib_gid t[] = {gid(0, GSHMEMI_GID_ROCE_V2, LINK_LOCAL), gid(1, GSHMEMI_GID_ROCE_V2, ZERO)};
    cr_expect_eq(gshmemi_ib_gid_choose(t, 2, 0, -1, why, sizeof(why)), -1);
    cr_expect(strstr(why, "IP address") != NULL, "%s", why);
    cr_expect_eq(gshmemi_ib_gid_choose(t, 0, 0, -1, why, sizeof(why)), -1, "an empty table");
}

Test(ib_gid, infiniband_takes_the_first_valid_entry)
{
    char why[200];
    struct gshmemi_ib_gid t[] = {gid(0, GSHMEMI_GID_IB, ZERO), gid(1, GSHMEMI_GID_IB, LINK_LOCAL)};
    cr_expect_eq(gshmemi_ib_gid_choose(t, 2, 1, -1, why, sizeof(why)), 1);
    struct gshmemi_ib_gid none[] = {gid(0, GSHMEMI_GID_IB, ZERO)};
    cr_expect_eq(gshmemi_ib_gid_choose(none, 1, 1, -1, why, sizeof(why)), -1);
    cr_expect(strstr(why, "no valid entry") != NULL, "%s", why);
}

Test(ib_gid, explicit_index_is_checked)
{
    char why[200] = "";
    struct gshmemi_ib_gid t[] = {gid(0, GSHMEMI_GID_ROCE_V1, LINK_LOCAL), gid(1, GSHMEMI_GID_ROCE_V2, ZERO),
                                 gid(3, GSHMEMI_GID_ROCE_V2, V4_198_18_0_1)};
    cr_expect_eq(gshmemi_ib_gid_choose(t, 3, 0, 0, why, sizeof(why)), 0, "the user's index wins over the auto choice");
    cr_expect_eq(gshmemi_ib_gid_choose(t, 3, 0, 1, why, sizeof(why)), -1, "an empty entry");
    cr_expect(strstr(why, "GSHMEM_IB_GID_INDEX=1") != NULL && strstr(why, "empty") != NULL, "%s", why);
    cr_expect_eq(gshmemi_ib_gid_choose(t, 3, 0, 2, why, sizeof(why)), -1, "no entry 2");
    cr_expect(strstr(why, "no such entry") != NULL, "%s", why);
}

/* Sysfs paths as a two-socket host with PCIe switches lays them out. */
#define ROOT0 "/sys/devices/pci0000:17"
#define SWITCH0 ROOT0 "/0000:17:00.0/0000:18:00.0" /* root port, then the switch's upstream port */
#define GPU0 SWITCH0 "/0000:19:01.0/0000:1b:00.0"
#define NIC0 SWITCH0 "/0000:19:02.0/0000:1c:00.0"
#define NIC_OTHER_PORT ROOT0 "/0000:17:02.0/0000:20:00.0/0000:21:00.0/0000:22:00.0"
#define NIC_OTHER_SOCKET "/sys/devices/pci0000:5d/0000:5d:00.0/0000:5e:00.0/0000:5f:01.0/0000:61:00.0"
#define NIC_OTHER_DOMAIN "/sys/devices/pci0001:17/0001:17:00.0/0001:18:00.0/0001:19:01.0/0001:1b:00.0"

/* closeness(a, b), checked to be symmetric. */
static int closeness(const char *a, const char *b)
{
    int ab = gshmemi_ib_pci_closeness(a, b), ba = gshmemi_ib_pci_closeness(b, a);
    cr_expect_eq(ab, ba, "closeness is symmetric: %d one way, %d the other (\"%s\", \"%s\")", ab, ba, a ? a : "NULL",
                 b ? b : "NULL");
    return ab;
}

Test(ib_pci, same_path_shares_every_component)
{
    cr_expect_eq(closeness(GPU0, GPU0), 7, "sys, devices, pci0000:17 and four bridges/devices");
    cr_expect_eq(closeness("/sys/devices/pci0000:00", "/sys/devices/pci0000:00"), 3);
    cr_expect_eq(closeness("/sys", "/sys"), 1);
}

Test(ib_pci, the_same_switch_is_closer_than_another_root_port_or_socket)
{
    int sw = closeness(GPU0, NIC0), port = closeness(GPU0, NIC_OTHER_PORT), sock = closeness(GPU0, NIC_OTHER_SOCKET);
    cr_expect_eq(sw, 5, "up to the switch's upstream port");
    cr_expect_eq(port, 3, "up to the host bridge");
    cr_expect_eq(sock, 2, "/sys/devices only");
    cr_expect(sw > port && port > sock);
    cr_expect_eq(closeness(GPU0, NIC_OTHER_DOMAIN), 2, "another PCI domain shares /sys/devices only");
    cr_expect_eq(closeness("/sys/devices/pci0000:00/0000:00:01.0", "/sys/devices/pci0001:00/0000:00:01.0"), 2,
                 "the same bus numbers in another domain share nothing past /sys/devices");
    cr_expect_eq(closeness(SWITCH0, GPU0), 5, "a bridge and a device below it: the whole bridge path");
}

Test(ib_pci, null_or_empty_is_0)
{
    cr_expect_eq(closeness(NULL, GPU0), 0);
    cr_expect_eq(closeness("", GPU0), 0);
    cr_expect_eq(closeness(NULL, NULL), 0);
    cr_expect_eq(closeness("", ""), 0);
    cr_expect_eq(closeness("", NULL), 0);
}

Test(ib_pci, a_component_prefixing_another_does_not_count)
{
    cr_expect_eq(closeness("/sys/devices/pci0000:00/0000:00:01.0", "/sys/devices/pci0000:00/0000:00:01.01"), 3,
                 "0000:00:01.0 and 0000:00:01.01 are different ports");
    cr_expect_eq(closeness("/sys/devices/pci0000:00/0000:00:01.0/0000:01:00.0",
                           "/sys/devices/pci0000:00/0000:00:01.01/0000:01:00.0"),
                 3, "and nothing after the differing component counts");
    cr_expect_eq(closeness("/sys/devices/pci0000:0", "/sys/devices/pci0000:00"), 2);
    cr_expect_eq(closeness("/sys/devices/pci0000:00", "/sys/devices/pci0000:00/0000:00:01.0"), 3,
                 "a path and a device below it share the whole shorter path");
    cr_expect_eq(closeness("/sys/devices/pci0000:00/", "/sys/devices/pci0000:00/0000:00:01.0"), 3,
                 "a trailing slash adds no component");
}

/* ---- librdmacm addresses: the IPv4 address of a GID, a port's network interface ---- */

Test(ib_addr, ipv4_mapped_gids_give_their_address)
{
    uint8_t gid[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 198, 18, 3, 9}, ip[4] = {1, 2, 3, 4};
    cr_assert_eq(gshmemi_ib_gid_ipv4(gid, ip), 1);
    cr_assert(ip[0] == 198 && ip[1] == 18 && ip[2] == 3 && ip[3] == 9);
    static const uint8_t not_mapped[][16] = {
        {0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0x02, 0x4d, 0x4b, 0xff, 0xfe, 0, 0, 1}, /* link-local */
        {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xfe, 198, 18, 3, 9},            /* one bit off */
        {0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0xff, 0xff, 198, 18, 3, 9},
        {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 198, 18, 3, 9},
    };
    for (size_t i = 0; i < sizeof(not_mapped) / 16; i++) {
        uint8_t keep[4] = {7, 7, 7, 7};
        cr_assert_eq(gshmemi_ib_gid_ipv4(not_mapped[i], keep), 0, "GID %zu is not IPv4-mapped", i);
        cr_assert(keep[0] == 7 && keep[3] == 7, "GID %zu: the address is left alone", i);
    }
}

/* A fake /sys/class/net: name -> (device it belongs to, dev_port, dev_id; -1: no file). */
static void netdev_add(const char *root, const char *name, const char *dev, int dev_port, int dev_id)
{
    char path[512], cmd[1024];
    snprintf(path, sizeof(path), "%s/%s/device/infiniband/%s", root, name, dev);
    snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", path);
    cr_assert_eq(system(cmd), 0);
    int v[2] = {dev_port, dev_id};
    const char *file[2] = {"dev_port", "dev_id"};
    for (int i = 0; i < 2; i++) {
        if (v[i] < 0) continue;
        snprintf(path, sizeof(path), "%s/%s/%s", root, name, file[i]);
        FILE *f = fopen(path, "w");
        cr_assert_not_null(f);
        fprintf(f, i ? "0x%x\n" : "%d\n", v[i]);
        fclose(f);
    }
}

/* Its IPoIB partition key (sysfs_net/<name>/pkey). */
static void netdev_pkey(const char *root, const char *name, int pkey)
{
    char path[512];
    snprintf(path, sizeof(path), "%s/%s/pkey", root, name);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f, "0x%04x\n", pkey);
    fclose(f);
}

Test(ib_addr, the_port_netdev_is_found_by_device_and_port)
{
    char root[] = "/tmp/gshmem-netdev-XXXXXX";
    cr_assert_not_null(mkdtemp(root));
    char cmd[256];
    snprintf(cmd, sizeof(cmd), "mkdir -p '%s/lo' '%s/eth0/device'", root, root);
    cr_assert_eq(system(cmd), 0);
    netdev_add(root, "ib0", "mlx5_0", 0, 0);
    netdev_add(root, "ib1", "mlx5_0", 1, 1);
    netdev_add(root, "ib2", "mlx5_1", -1, -1); /* no dev_port, no dev_id: port 1 */
    netdev_add(root, "ib3", "mlx4_0", 0, 1);   /* an old kernel: the port in dev_id */
    /* mlx5_2 port 1: partition children whose names sort before the default partition's
     * interface (the answer must not be the first name or readdir's first) */
    netdev_add(root, "iba.8001", "mlx5_2", 0, 0);
    netdev_pkey(root, "iba.8001", 0x8001);
    netdev_add(root, "ibz", "mlx5_2", 0, 0);
    netdev_pkey(root, "ibz", 0xffff);
    netdev_add(root, "ibb.8002", "mlx5_2", 0, 0);
    netdev_pkey(root, "ibb.8002", 0x8002);
    /* mlx5_3 port 1: only a partition child (then it is the one) */
    netdev_add(root, "ib5.8003", "mlx5_3", 0, 0);
    netdev_pkey(root, "ib5.8003", 0x8003);
    struct {
        const char *dev;
        int port;
        const char *want; /* NULL: not found */
        const char *word;
    } cases[] = {
        {"mlx5_0", 1, "ib0", NULL},          {"mlx5_0", 2, "ib1", NULL},
        {"mlx5_1", 1, "ib2", NULL},          {"mlx4_0", 2, "ib3", NULL},
        {"mlx5_2", 1, "ibz", NULL},          {"mlx5_3", 1, "ib5.8003", NULL},
        {"mlx5_0", 3, NULL, "none for port 3"}, {"mlx5_9", 1, NULL, "no network interface of mlx5_9"},
        {"mlx5", 1, NULL, "no network interface"}, /* a prefix is not the device */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char ifname[32] = "untouched", why[256] = "";
        int rc = gshmemi_ib_port_netdev(root, cases[i].dev, cases[i].port, ifname, sizeof(ifname), why, sizeof(why));
        if (cases[i].want) {
            cr_assert_eq(rc, 0, "%s:%d: %s", cases[i].dev, cases[i].port, why);
            cr_assert_str_eq(ifname, cases[i].want, "%s:%d", cases[i].dev, cases[i].port);
        } else {
            cr_assert_eq(rc, -1, "%s:%d found %s", cases[i].dev, cases[i].port, ifname);
            cr_assert_str_eq(ifname, "untouched");
            cr_assert(strstr(why, cases[i].word), "%s:%d: '%s' should say '%s'", cases[i].dev, cases[i].port, why,
                      cases[i].word);
        }
    }
    char ifname[32], why[256];
    cr_assert_eq(gshmemi_ib_port_netdev("/nonexistent-gshmem", "mlx5_0", 1, ifname, sizeof(ifname), why, sizeof(why)),
                 -1);
    cr_assert(strstr(why, "/nonexistent-gshmem"), "%s", why);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
    cr_assert_eq(system(cmd), 0);
}
