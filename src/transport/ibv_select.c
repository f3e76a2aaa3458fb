/* GSHMEM_IB_HCA parsing and matching, the GID choice, a port's netdev (ibv_select.h). */
#include "transport/ibv_select.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int hca_bad(char *why, size_t whylen, const char *text, const char *what)
{
    snprintf(why, whylen, "GSHMEM_IB_HCA=\"%s\": %s", text, what);
    return -1;
}

/* One entry "name" or "name:port" of len bytes at p. */
static int hca_entry(const char *text, const char *p, size_t len, struct gshmemi_ib_hca_filter *f, char *why,
                     size_t whylen)
{
    if (len == 0) return hca_bad(why, whylen, text, "an empty entry (two commas, or a comma at an end)");
    if (f->count == GSHMEMI_IB_HCA_MAX) return hca_bad(why, whylen, text, "more than 32 entries");
    const char *colon = memchr(p, ':', len);
    size_t name_len = colon ? (size_t)(colon - p) : len;
    if (name_len == 0) return hca_bad(why, whylen, text, "an entry without a device name");
    if (name_len >= GSHMEMI_IB_HCA_NAME_MAX) return hca_bad(why, whylen, text, "a device name longer than 63 bytes");
    int port = 0;
    if (colon) {
        const char *q = colon + 1, *end = p + len;
        if (q == end) return hca_bad(why, whylen, text, "a ':' without a port number");
        for (; q < end; q++) {
            if (*q < '0' || *q > '9') return hca_bad(why, whylen, text, "a port that is not a number");
            port = port * 10 + (*q - '0');
            if (port > 255) return hca_bad(why, whylen, text, "a port above 255");
        }
        if (port == 0) return hca_bad(why, whylen, text, "port 0 (ports count from 1)");
    }
    memcpy(f->entry[f->count].name, p, name_len);
    f->entry[f->count].name[name_len] = '\0';
    f->entry[f->count].port = port;
    f->count++;
    return 0;
}

int gshmemi_ib_hca_parse(const char *text, struct gshmemi_ib_hca_filter *f, char *why, size_t whylen)
{
    memset(f, 0, sizeof(*f));
    if (!text || !*text) return 0;
    const char *p = text;
    if (*p == '^') f->exclude = 1, p++;
    if (*p == '=') f->exact = 1, p++;
    if (!*p) return hca_bad(why, whylen, text, "no device after the prefix");
    for (;;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        for (size_t i = 0; i < len; i++)
            if (p[i] == ' ' || p[i] == '\t' || p[i] == '^' || p[i] == '=') {
                memset(f, 0, sizeof(*f));
                return hca_bad(why, whylen, text, "a space, '^' or '=' inside the list ('^' and '=' go first)");
            }
        if (hca_entry(text, p, len, f, why, whylen) != 0) {
            memset(f, 0, sizeof(*f));
            return -1;
        }
        if (!comma) return 0;
        p = comma + 1;
    }
}

static int hca_entry_matches(const struct gshmemi_ib_hca_filter *f, int i, const char *name, int port)
{
    const char *want = f->entry[i].name;
    int named = f->exact ? strcmp(name, want) == 0 : strncmp(name, want, strlen(want)) == 0;
    return named && (f->entry[i].port == 0 || f->entry[i].port == port);
}

int gshmemi_ib_hca_allows(const struct gshmemi_ib_hca_filter *f, const char *name, int port)
{
    if (f->count == 0) return 1;
    for (int i = 0; i < f->count; i++)
        if (hca_entry_matches(f, i, name, port)) return !f->exclude;
    return f->exclude;
}

static int gid_zero(const struct gshmemi_ib_gid *g)
{
    for (int i = 0; i < 16; i++)
        if (g->raw[i]) return 0;
    return 1;
}

static int gid_ipv4_mapped(const struct gshmemi_ib_gid *g)
{
    static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    return memcmp(g->raw, prefix, sizeof(prefix)) == 0;
}

static int gid_link_local(const struct gshmemi_ib_gid *g)
{
    return g->raw[0] == 0xfe && (g->raw[1] & 0xc0) == 0x80;
}

/* The first valid entry of type that passes keep (NULL: any address), or -1. */
static int gid_first(const struct gshmemi_ib_gid *gids, int n, int type, int (*keep)(const struct gshmemi_ib_gid *))
{
    for (int i = 0; i < n; i++)
        if (gids[i].type == type && !gid_zero(&gids[i]) && (!keep || keep(&gids[i]))) return gids[i].index;
    return -1;
}

static int gid_global_ipv6(const struct gshmemi_ib_gid *g)
{
    return !gid_ipv4_mapped(g) && !gid_link_local(g);
}

int gshmemi_ib_gid_choose(const struct gshmemi_ib_gid *gids, int n, int is_ib, int want, char *why, size_t whylen)
{
    if (want >= 0) {
        for (int i = 0; i < n; i++) {
            if (gids[i].index != want) continue;
            if (!gid_zero(&gids[i])) return want;
            snprintf(why, whylen, "GSHMEM_IB_GID_INDEX=%d: that entry of the port's GID table is empty", want);
            return -1;
        }
        snprintf(why, whylen, "GSHMEM_IB_GID_INDEX=%d: the port's GID table has no such entry (%d entries)", want, n);
        return -1;
    }
    int idx =
        is_ib ? gid_first(gids, n, GSHMEMI_GID_IB, NULL) : gid_first(gids, n, GSHMEMI_GID_ROCE_V2, gid_ipv4_mapped);
    if (idx < 0 && !is_ib) idx = gid_first(gids, n, GSHMEMI_GID_ROCE_V2, gid_global_ipv6);
    if (idx < 0 && !is_ib) idx = gid_first(gids, n, GSHMEMI_GID_ROCE_V1, NULL);
    if (idx < 0)
        snprintf(why, whylen,
                 is_ib ? "the port's GID table has no valid entry"
                       : "the port has no RoCE v2 GID with an IPv4 or global IPv6 address and no RoCE v1 "
                         "GID (is an IP address configured on its netdev?)");
    return idx;
}

int gshmemi_ib_pci_closeness(const char *a, const char *b)
{
    if (!a || !b || !*a || !*b) return 0;
    int shared = 0;
    for (;;) {
        size_t la = strcspn(a, "/"), lb = strcspn(b, "/");
        if (la != lb || strncmp(a, b, la) != 0) return shared;
        if (la) shared++;
        if (!a[la] || !b[lb]) return shared;
        a += la + 1, b += lb + 1;
    }
}

int gshmemi_ib_gid_ipv4(const uint8_t gid[16], uint8_t ip[4])
{
    static const uint8_t mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    if (memcmp(gid, mapped, 12) != 0) return 0;
    memcpy(ip, gid + 12, 4);
    return 1;
}

/* The number in file path, or -1. */
static long netdev_number(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    char text[32] = "";
    if (!fgets(text, sizeof(text), f)) text[0] = '\0';
    fclose(f);
    char *end;
    long v = strtol(text, &end, 0);
    return end == text ? -1 : v;
}

int gshmemi_ib_port_netdev(const char *sysfs_net, const char *dev, int port, char *ifname, size_t iflen, char *why,
                           size_t whylen)
{
    DIR *d = opendir(sysfs_net);
    if (!d) {
        snprintf(why, whylen, "cannot list %s: %s", sysfs_net, strerror(errno));
        return -1;
    }
    /* the port's interface of the default partition (IPoIB pkey 0xffff or 0x7fff, or no
     * pkey: Ethernet) before a partition's child interface (ib0.8001) */
    int found = 0, others = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        char path[1024];
        struct stat st;
        snprintf(path, sizeof(path), "%s/%s/device/infiniband/%s", sysfs_net, e->d_name, dev);
        if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) continue;
        /* dev_port counts a device's ports from 0; old kernels put it in dev_id */
        snprintf(path, sizeof(path), "%s/%s/dev_port", sysfs_net, e->d_name);
        long at = netdev_number(path);
        snprintf(path, sizeof(path), "%s/%s/dev_id", sysfs_net, e->d_name);
        long id = netdev_number(path);
        if (at <= 0 && id > 0) at = id;
        if (at < 0) at = 0;
        if (at != port - 1) {
            others++;
            continue;
        }
        snprintf(path, sizeof(path), "%s/%s/pkey", sysfs_net, e->d_name);
        long pkey = netdev_number(path);
        int rank = pkey < 0 || (pkey & 0x7fff) == 0x7fff ? 2 : 1;
        /* among equals the smallest name, so that the answer does not hang on readdir's order */
        if (rank < found || (rank == found && strcmp(e->d_name, ifname) >= 0)) continue;
        snprintf(ifname, iflen, "%s", e->d_name);
        found = rank;
    }
    closedir(d);
    if (found) return 0;
    if (others)
        snprintf(why, whylen, "%d network interface%s of %s, none for port %d", others, others == 1 ? "" : "s", dev,
                 port);
    else
        snprintf(why, whylen, "no network interface of %s in %s (IPoIB not loaded, or no netdev for the port)", dev,
                 sysfs_net);
    return -1;
}
