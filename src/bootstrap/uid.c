/* The unique-ID front end: an ID record naming the rendezvous and the job secret,
 * and a process that hosts the rendezvous root (tcp_root.c) in a thread. */
#include "bootstrap/uid.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bootstrap/bootstrap.h"
#include "bootstrap/tcp.h"
#include "bootstrap/tcp_root.h"
#include "bootstrap/wire.h"
#include "core/env.h"
#include "core/log.h"

/* Record layout (128 bytes): "GSUI", u8 version, u8 naddrs, u16 port (LE),
 * 4 x IPv4 (network order), 8 job id bytes, u8 secret length, secret. */
#define UID_MAGIC "GSUI"
#define UID_VERSION 1
#define UID_OFF_ADDRS 8
#define UID_OFF_JOB 24
#define UID_JOB_BYTES 8
#define UID_OFF_SECRET_LEN 32
#define UID_OFF_SECRET 33
/* After an abort the hosting process waits this long for the root to tell the others. */
#define UID_ABORT_LINGER_S 2.0

/* What this process made with gshmemx_get_uniqueid and listens for, until its init. */
static pthread_mutex_t uid_lock = PTHREAD_MUTEX_INITIALIZER;
static int uid_listen_fd = -1;
static pid_t uid_listen_pid; /* a child forked after gshmemx_get_uniqueid does not host */
static struct gshmemi_uid_record uid_made;
static const gshmemx_init_attr_t *uid_attr;

/* The root this process hosts while its bootstrap lives (one bootstrap per process). */
static struct {
    struct gshmemi_tcp_root *root;
    const struct gshmemi_bootstrap_ops *tcp_ops;
    double timeout;
    int aborted;
} uid_host;
static struct gshmemi_bootstrap_ops uid_host_ops;

void gshmemi_uid_encode(const struct gshmemi_uid_record *r, gshmemx_uniqueid_t *id)
{
    uint8_t *p = (uint8_t *)id->internal;
    memset(id, 0, sizeof(*id));
    memcpy(p, UID_MAGIC, 4);
    p[4] = UID_VERSION;
    p[5] = (uint8_t)r->naddrs;
    p[6] = (uint8_t)r->port;
    p[7] = (uint8_t)(r->port >> 8);
    memcpy(p + UID_OFF_ADDRS, r->addrs, sizeof(uint32_t) * (size_t)r->naddrs);
    for (int i = 0; i < UID_JOB_BYTES; i++) { /* job_id is "uid-" + 16 hex digits */
        unsigned v = 0;
        sscanf(r->job_id + 4 + 2 * i, "%2x", &v);
        p[UID_OFF_JOB + i] = (uint8_t)v;
    }
    p[UID_OFF_SECRET_LEN] = (uint8_t)r->secret_len;
    memcpy(p + UID_OFF_SECRET, r->secret, r->secret_len);
}

int gshmemi_uid_decode(const gshmemx_uniqueid_t *id, struct gshmemi_uid_record *r, char *err, size_t errlen)
{
    const uint8_t *p = (const uint8_t *)id->internal;
    memset(r, 0, sizeof(*r));
    if (memcmp(p, UID_MAGIC, 4) != 0) {
        snprintf(err, errlen, "not a gshmem unique ID (made by gshmemx_get_uniqueid?)");
        return GSHMEMX_ERR_INVALID_ARG;
    }
    if (p[4] != UID_VERSION) {
        snprintf(err, errlen, "unique ID version %u, this library reads version %d", p[4], UID_VERSION);
        return GSHMEMX_ERR_INVALID_ARG;
    }
    r->naddrs = p[5];
    r->port = p[6] | p[7] << 8;
    r->secret_len = p[UID_OFF_SECRET_LEN];
    if (r->naddrs < 1 || r->naddrs > GSHMEMI_UID_ADDRS_MAX || r->port == 0 || r->secret_len > GSHMEMI_UID_SECRET_MAX) {
        snprintf(err, errlen, "corrupt unique ID (%d addresses, port %d, %zu-byte secret)", r->naddrs, r->port,
                 r->secret_len);
        return GSHMEMX_ERR_INVALID_ARG;
    }
    memcpy(r->addrs, p + UID_OFF_ADDRS, sizeof(uint32_t) * (size_t)r->naddrs);
    int n = snprintf(r->job_id, sizeof(r->job_id), "uid-");
    for (int i = 0; i < UID_JOB_BYTES; i++)
        n += snprintf(r->job_id + n, sizeof(r->job_id) - (size_t)n, "%02x", p[UID_OFF_JOB + i]);
    memcpy(r->secret, p + UID_OFF_SECRET, r->secret_len);
    return 0;
}

/* IPv4 address of host ("" or "*": any). */
static int uid_resolve4(const char *host, uint32_t *addr)
{
    if (host[0] == '\0' || strcmp(host, "*") == 0) {
        *addr = htonl(INADDR_ANY);
        return 0;
    }
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *res;
    int gai = getaddrinfo(host, NULL, &hints, &res);
    if (gai != 0) {
        GSHMEMI_ERROR(BOOT, "GSHMEM_BOOTSTRAP_UID: cannot resolve '%s' to an IPv4 address: %s", host,
                      gai_strerror(gai));
        return GSHMEMX_ERR_CONFIG;
    }
    *addr = ((struct sockaddr_in *)res->ai_addr)->sin_addr.s_addr;
    freeaddrinfo(res);
    return 0;
}

/* Splits GSHMEM_BOOTSTRAP_UID's "host:port" (either may be empty: any interface, any port). */
static int uid_parse_bind(const char *text, uint32_t *addr, int *port)
{
    char host[256];
    const char *colon = strrchr(text, ':');
    char *end;
    *addr = htonl(INADDR_ANY);
    *port = 0;
    if (text[0] == '\0') return 0;
    long p = colon ? strtol(colon + 1, &end, 10) : -1;
    if (colon == NULL || (size_t)(colon - text) >= sizeof(host) || (colon[1] != '\0' && *end != '\0') || p < 0 ||
        p > 65535) {
        GSHMEMI_ERROR(BOOT, "GSHMEM_BOOTSTRAP_UID=%s: expected host:port (IPv4)", text);
        return GSHMEMX_ERR_CONFIG;
    }
    memcpy(host, text, (size_t)(colon - text));
    host[colon - text] = '\0';
    *port = (int)p;
    return uid_resolve4(host, addr);
}

static int uid_listen(uint32_t addr, int port, int *fd_out)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr.s_addr = addr};
    socklen_t sl = sizeof(sa);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) goto fail;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &(int){1}, sizeof(int));
    /* PEs may connect before this process calls gshmemx_init_attr: they wait in the backlog. */
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(fd, SOMAXCONN) != 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &sl) != 0)
        goto fail;
    *fd_out = fd;
    return ntohs(sa.sin_port);
fail:;
    char a[INET_ADDRSTRLEN];
    GSHMEMI_ERROR(BOOT, "gshmemx_get_uniqueid: cannot listen on %s:%d: %s", inet_ntop(AF_INET, &addr, a, sizeof(a)),
                  port, strerror(errno));
    if (fd >= 0) close(fd);
    return -1;
}

/* The addresses other hosts may reach a wildcard listener at: up interfaces first,
 * loopback last (for PEs on this host). */
static void uid_local_addrs(struct gshmemi_uid_record *r)
{
    struct ifaddrs *ifs = NULL;
    r->naddrs = 0;
    if (getifaddrs(&ifs) == 0) {
        for (struct ifaddrs *i = ifs; i != NULL && r->naddrs < GSHMEMI_UID_ADDRS_MAX - 1; i = i->ifa_next) {
            if (i->ifa_addr == NULL || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP) ||
                (i->ifa_flags & IFF_LOOPBACK))
                continue;
            r->addrs[r->naddrs++] = ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr;
        }
        freeifaddrs(ifs);
    }
    r->addrs[r->naddrs++] = htonl(INADDR_LOOPBACK);
}

/* The job secret for a new ID: the configured one, else random. */
static int uid_make_secret(const struct gshmemi_env *env, struct gshmemi_uid_record *r)
{
    uint8_t *buf = malloc(GSHMEMI_WIRE_SECRET_MAX);
    size_t len = 0;
    int rc = buf ? gshmemi_wire_secret_load(env->bootstrap_secret, env->bootstrap_secret_file, buf, &len)
                 : GSHMEMX_ERR_NOMEM;
    if (rc == 0 && len > GSHMEMI_UID_SECRET_MAX) {
        GSHMEMI_ERROR(BOOT, "gshmemx_get_uniqueid: the job secret is %zu bytes; a unique ID carries at most %d", len,
                      GSHMEMI_UID_SECRET_MAX);
        rc = GSHMEMX_ERR_CONFIG;
    }
    if (rc == 0 && len > 0) {
        memcpy(r->secret, buf, len);
        r->secret_len = len;
    } else if (rc == 0) {
        r->secret_len = 32;
        rc = gshmemi_wire_random(r->secret, r->secret_len);
    }
    if (buf) memset(buf, 0, GSHMEMI_WIRE_SECRET_MAX);
    free(buf);
    return rc;
}

int gshmemx_get_uniqueid(gshmemx_uniqueid_t *id)
{
    struct gshmemi_env env;
    struct gshmemi_uid_record r = {0};
    uint8_t job[UID_JOB_BYTES];
    char err[512];
    uint32_t addr;
    int port, fd = -1;
    if (id == NULL) {
        GSHMEMI_ERROR(BOOT, "gshmemx_get_uniqueid: id is NULL");
        return GSHMEMX_ERR_INVALID_ARG;
    }
    int rc = gshmemi_env_load(&env, gshmemi_env_getenv, err, sizeof(err));
    if (rc != 0) GSHMEMI_ERROR(ENV, "%s", err);
    if (rc == 0) rc = uid_parse_bind(env.bootstrap_uid, &addr, &port);
    if (rc == 0) rc = uid_make_secret(&env, &r);
    if (rc == 0 && gshmemi_wire_random(job, sizeof(job)) != 0) rc = GSHMEMX_ERR_SYSTEM;
    if (rc == 0 && (r.port = uid_listen(addr, port, &fd)) < 0) rc = GSHMEMX_ERR_SYSTEM;
    if (rc != 0) return rc;
    if (addr == htonl(INADDR_ANY)) uid_local_addrs(&r);
    else r.addrs[r.naddrs++] = addr;
    int n = snprintf(r.job_id, sizeof(r.job_id), "uid-");
    for (int i = 0; i < UID_JOB_BYTES; i++) n += snprintf(r.job_id + n, sizeof(r.job_id) - (size_t)n, "%02x", job[i]);
    gshmemi_uid_encode(&r, id);
    pthread_mutex_lock(&uid_lock);
    if (uid_listen_fd >= 0) close(uid_listen_fd); /* an earlier ID nobody used */
    uid_listen_fd = fd;
    uid_listen_pid = getpid();
    uid_made = r;
    pthread_mutex_unlock(&uid_lock);
    GSHMEMI_INFO(BOOT, "unique ID for job %s: rendezvous on port %d (%d addresses)", r.job_id, r.port, r.naddrs);
    return 0;
}

int gshmemx_set_attr_uniqueid_args(int rank, int nranks, const gshmemx_uniqueid_t *id, gshmemx_init_attr_t *attr)
{
    if (id == NULL || attr == NULL || nranks < 1 || rank < 0 || rank >= nranks) {
        GSHMEMI_ERROR(BOOT, "gshmemx_set_attr_uniqueid_args: need 0 <= rank < nranks and an id and attr; got rank %d, "
                      "nranks %d%s%s", rank, nranks, id ? "" : ", id NULL", attr ? "" : ", attr NULL");
        return GSHMEMX_ERR_INVALID_ARG;
    }
    attr->rank = rank;
    attr->nranks = nranks;
    attr->uid = *id;
    return 0;
}

void gshmemi_bootstrap_uid_attach(const gshmemx_init_attr_t *attr)
{
    pthread_mutex_lock(&uid_lock);
    uid_attr = attr;
    pthread_mutex_unlock(&uid_lock);
}

static void uid_host_abort(struct gshmemi_bootstrap *bs, int status)
{
    uid_host.aborted = 1;
    uid_host.tcp_ops->abort(bs, status);
}

static void uid_host_stop(void);

/* The job is over and this process is about to exit: the root it hosts may still be
 * sending the ABORT to the other PEs (this PE, which got its copy first, would otherwise
 * take the root down mid-broadcast and they would see a lost root, not the abort). This
 * PE leaves, and the root gets up to UID_ABORT_LINGER_S for the others to leave too. */
static void uid_host_linger(struct gshmemi_bootstrap *bs)
{
    if (__atomic_load_n(&uid_host.root, __ATOMIC_ACQUIRE) == NULL) return;
    uid_host.aborted = 1;
    gshmemi_bootstrap_tcp_hang_up(bs);
    uid_host_stop();
}

/* Waits for the root to see every PE leave (briefly after an abort), then frees it.
 * Whoever takes the root first stops it; a second caller finds none. */
static void uid_host_stop(void)
{
    struct gshmemi_tcp_root *root = __atomic_exchange_n(&uid_host.root, NULL, __ATOMIC_ACQ_REL);
    if (root == NULL) return;
    double wait_s = uid_host.aborted ? UID_ABORT_LINGER_S : uid_host.timeout;
    int rc = gshmemi_tcp_root_wait(root, wait_s);
    if (rc != 0 && !uid_host.aborted)
        GSHMEMI_WARN(BOOT, "the bootstrap root hosted here ended with: %s", gshmemx_strerror(rc));
    gshmemi_tcp_root_destroy(root);
}

static int uid_host_finalize(struct gshmemi_bootstrap *bs)
{
    int rc = uid_host.tcp_ops->finalize(bs);
    uid_host_stop();
    return rc;
}

static int uid_host_start(const struct gshmemi_tcp_root_config *cfg, int listen_fd)
{
    int rc = listen_fd >= 0 ? gshmemi_tcp_root_create_on(cfg, listen_fd, &uid_host.root)
                            : gshmemi_tcp_root_create(cfg, &uid_host.root);
    if (rc == 0 && (rc = gshmemi_tcp_root_start_thread(uid_host.root)) != 0) {
        gshmemi_tcp_root_destroy(uid_host.root);
        uid_host.root = NULL;
    }
    uid_host.timeout = cfg->timeout;
    uid_host.aborted = 0;
    return rc;
}

/* Joins through tcp; while hosting, the bootstrap's abort and finalize also mind the root. */
static int uid_join(const struct gshmemi_tcp_join *j, struct gshmemi_bootstrap *bs)
{
    int rc = gshmemi_bootstrap_tcp_join(j, bs);
    if (uid_host.root == NULL) return rc;
    if (rc != 0) {
        uid_host.aborted = 1;
        uid_host_stop();
        return rc;
    }
    uid_host.tcp_ops = bs->ops;
    uid_host_ops = *bs->ops;
    uid_host_ops.name = "uid";
    uid_host_ops.abort = uid_host_abort;
    uid_host_ops.finalize = uid_host_finalize;
    uid_host_ops.linger = uid_host_linger;
    bs->ops = &uid_host_ops;
    return 0;
}

static int uid_init_from_attr(const struct gshmemi_env *env, const gshmemx_init_attr_t *attr,
                              struct gshmemi_bootstrap *bs)
{
    struct gshmemi_uid_record r;
    char err[256], roots[GSHMEMI_UID_ADDRS_MAX][INET_ADDRSTRLEN + 8];
    if (gshmemi_uid_decode(&attr->uid, &r, err, sizeof(err)) != 0) {
        GSHMEMI_ERROR(BOOT, "gshmemx_init_attr: %s", err);
        return GSHMEMX_ERR_INVALID_ARG;
    }
    struct gshmemi_tcp_join j = {.nroots = r.naddrs, .rank = attr->rank, .nranks = attr->nranks, .job_id = r.job_id,
                                 .secret = r.secret, .secret_len = r.secret_len, .timeout = env->timeout};
    for (int i = 0; i < r.naddrs; i++) {
        char a[INET_ADDRSTRLEN];
        snprintf(roots[i], sizeof(roots[i]), "%s:%d", inet_ntop(AF_INET, &r.addrs[i], a, sizeof(a)), r.port);
        j.roots[i] = roots[i];
    }
    pthread_mutex_lock(&uid_lock);
    int fd = -1;
    if (uid_listen_fd >= 0 && uid_listen_pid == getpid() && strcmp(uid_made.job_id, r.job_id) == 0) {
        fd = uid_listen_fd; /* this process made the ID: it hosts the root */
        uid_listen_fd = -1;
    }
    pthread_mutex_unlock(&uid_lock);
    if (fd >= 0) {
        struct gshmemi_tcp_root_config cfg = {.bind_host = NULL, .nranks = attr->nranks, .job_id = r.job_id,
                                              .timeout = env->timeout, .secret = r.secret,
                                              .secret_len = r.secret_len};
        int rc = uid_host_start(&cfg, fd);
        if (rc != 0) return rc;
    }
    return uid_join(&j, bs);
}

static int uid_init_from_env(const struct gshmemi_env *env, struct gshmemi_bootstrap *bs)
{
    char host[256];
    if (env->bootstrap_uid == NULL || env->bootstrap_uid[0] == '\0' || env->nranks < 1 || env->rank < 0 ||
        env->rank >= env->nranks) {
        GSHMEMI_ERROR(BOOT, "GSHMEM_BOOTSTRAP=uid needs GSHMEM_BOOTSTRAP_UID=host:port and 0 <= GSHMEM_RANK < "
                      "GSHMEM_NRANKS (got '%s', %ld, %ld), or gshmemx_init_attr",
                      env->bootstrap_uid ? env->bootstrap_uid : "", env->rank, env->nranks);
        return GSHMEMX_ERR_CONFIG;
    }
    char portstr[16];
    if (gshmemi_tcp_parse_root(env->bootstrap_uid, host, sizeof(host), portstr, sizeof(portstr)) != 0) {
        GSHMEMI_ERROR(BOOT, "GSHMEM_BOOTSTRAP_UID=%s: expected host:port or [IPv6]:port with a port in 1..65535",
                      env->bootstrap_uid);
        return GSHMEMX_ERR_CONFIG;
    }
    long port = atol(portstr);
    /* Rank 0 listens on that address when it is a numeric one (or "localhost": a job of
     * this host only), else on every interface: its own resolver may map its name to
     * loopback (Debian's 127.0.1.1) while the other hosts reach it by the name's real
     * address. */
    struct in6_addr any;
    int numeric = inet_pton(AF_INET, host, &any) == 1 || inet_pton(AF_INET6, host, &any) == 1 ||
                  strcmp(host, "localhost") == 0;
    uint8_t *secret = malloc(GSHMEMI_WIRE_SECRET_MAX);
    struct gshmemi_tcp_join j = {.roots = {env->bootstrap_uid}, .nroots = 1, .rank = (int)env->rank,
                                 .nranks = (int)env->nranks, .job_id = env->job_id ? env->job_id : "",
                                 .secret = secret, .timeout = env->timeout};
    int rc = secret ? gshmemi_wire_secret_load(env->bootstrap_secret, env->bootstrap_secret_file, secret,
                                               &j.secret_len)
                    : GSHMEMX_ERR_NOMEM;
    if (rc == 0 && env->rank == 0) {
        if (!numeric)
            GSHMEMI_INFO(BOOT, "GSHMEM_BOOTSTRAP_UID=%s names a host: the root listens on every interface, port %ld",
                         env->bootstrap_uid, port);
        struct gshmemi_tcp_root_config cfg = {.bind_host = numeric ? host : NULL, .port = (int)port,
                                              .nranks = (int)env->nranks,
                                              .job_id = j.job_id, .timeout = env->timeout, .secret = secret,
                                              .secret_len = j.secret_len};
        rc = uid_host_start(&cfg, -1);
    }
    if (rc == 0) rc = uid_join(&j, bs);
    if (secret) memset(secret, 0, GSHMEMI_WIRE_SECRET_MAX);
    free(secret);
    return rc;
}

int gshmemi_bootstrap_uid_init(const struct gshmemi_env *env, struct gshmemi_bootstrap *bs)
{
    pthread_mutex_lock(&uid_lock);
    const gshmemx_init_attr_t *attr = uid_attr;
    pthread_mutex_unlock(&uid_lock);
    if (attr != NULL) return uid_init_from_attr(env, attr, bs);
    return uid_init_from_env(env, bs);
}
