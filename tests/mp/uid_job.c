/*
 * A job started without gshmemrun: the process forks N-1 others; rank 0 makes a
 * unique ID (gshmemx_get_uniqueid) and passes it through a file; every rank calls
 * gshmemx_init_attr, checks its PE number, does a barrier, a sum reduction and a ring
 * of puts, and finalizes.
 *
 * usage: uid_job N [MODE]
 *   ok            (default) as above
 *   wrong B       rank B first joins with a corrupted secret in its copy of the ID: it
 *                 must be refused (the root logs it) and then join with the right ID
 *   refused B     rank B joins with a corrupted secret only and exits 3 once refused: the
 *                 others must end (GSHMEM_TIMEOUT) with a diagnostic naming PE B, not hang
 *   env [H0 [H]]  GSHMEM_BOOTSTRAP=uid, GSHMEM_BOOTSTRAP_UID=H0:PORT on rank 0 and H:PORT
 *                 on the others (both 127.0.0.1 unless given; H defaults to H0), and
 *                 GSHMEM_RANK/NRANKS instead of the API; rank 0 hosts the root. A name for
 *                 H0 that resolves to loopback while the others use another address of
 *                 the host is the Debian case (hostname -> 127.0.1.1): rank 0 must listen
 *                 on every interface for a name
 * Exit status 0 when every rank succeeded.
 */
#define _POSIX_C_SOURCE 200809L
#include <gshmem.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define UID_FAIL(rank, ...)                                                                        \
    do {                                                                                           \
        fprintf(stderr, "uid_job: rank %d: ", rank);                                               \
        fprintf(stderr, __VA_ARGS__);                                                              \
        fprintf(stderr, "\n");                                                                     \
        return 1;                                                                                  \
    } while (0)

static char id_path[256];

static int publish_id(const gshmemx_uniqueid_t *id)
{
    char tmp[300];
    snprintf(tmp, sizeof(tmp), "%s.tmp", id_path);
    FILE *f = fopen(tmp, "wb");
    if (f == NULL || fwrite(id, sizeof(*id), 1, f) != 1 || fclose(f) != 0) return -1;
    return rename(tmp, id_path); /* readers see the whole ID or none */
}

static int fetch_id(gshmemx_uniqueid_t *id)
{
    for (int i = 0; i < 3000; i++) { /* 30 s */
        FILE *f = fopen(id_path, "rb");
        if (f != NULL) {
            size_t n = fread(id, sizeof(*id), 1, f);
            fclose(f);
            return n == 1 ? 0 : -1;
        }
        nanosleep(&(struct timespec){.tv_nsec = 10000000}, NULL);
    }
    return -1;
}

/* The work every rank does once initialized. */
static int run_job(int rank, int n)
{
    if (gshmem_my_pe() != rank || gshmem_n_pes() != n)
        UID_FAIL(rank, "my_pe %d n_pes %d, expected %d of %d", gshmem_my_pe(), gshmem_n_pes(), rank, n);
    gshmem_barrier_all();
    int *src = gshmem_malloc(sizeof(int) * 2), *dst = gshmem_malloc(sizeof(int) * 2);
    int *ring = gshmem_malloc(sizeof(int));
    if (!src || !dst || !ring) UID_FAIL(rank, "gshmem_malloc failed");
    src[0] = rank + 1;
    src[1] = 1000 * rank;
    dst[0] = dst[1] = -1;
    *ring = -1;
    if (gshmem_int_sum_reduce(GSHMEM_TEAM_WORLD, dst, src, 2) != 0) UID_FAIL(rank, "sum_reduce failed");
    if (dst[0] != n * (n + 1) / 2 || dst[1] != 1000 * n * (n - 1) / 2)
        UID_FAIL(rank, "sum_reduce gave %d, %d; expected %d, %d", dst[0], dst[1], n * (n + 1) / 2,
                 1000 * n * (n - 1) / 2);
    gshmem_int_p(ring, 7 * rank + 3, (rank + 1) % n);
    gshmem_barrier_all();
    int from = (rank + n - 1) % n;
    if (*ring != 7 * from + 3) UID_FAIL(rank, "ring put from PE %d gave %d, expected %d", from, *ring, 7 * from + 3);
    gshmem_free(ring);
    gshmem_free(dst);
    gshmem_free(src);
    gshmem_finalize();
    return 0;
}

static int rank_main_api(int rank, int n, int wrong_rank, int give_up)
{
    gshmemx_uniqueid_t id;
    gshmemx_init_attr_t attr;
    if (rank == 0) {
        if (gshmemx_get_uniqueid(&id) != 0) UID_FAIL(rank, "gshmemx_get_uniqueid failed");
        if (publish_id(&id) != 0) UID_FAIL(rank, "cannot write %s: %s", id_path, strerror(errno));
    } else if (fetch_id(&id) != 0) {
        UID_FAIL(rank, "no unique ID in %s", id_path);
    }
    if (rank == wrong_rank) {
        gshmemx_uniqueid_t forged = id;
        forged.internal[40] ^= 0x55; /* inside the secret */
        if (gshmemx_set_attr_uniqueid_args(rank, n, &forged, &attr) != 0) UID_FAIL(rank, "set_attr failed");
        int rc = gshmemx_init_attr(GSHMEMX_INIT_WITH_UNIQUEID, &attr);
        if (rc != GSHMEMX_ERR_BOOTSTRAP)
            UID_FAIL(rank, "a wrong secret gave %s, expected GSHMEMX_ERR_BOOTSTRAP", gshmemx_status_name(rc));
        if (give_up) {
            fprintf(stderr, "uid_job: rank %d: refused with a wrong secret, as expected; leaving\n", rank);
            return 3;
        }
        fprintf(stderr, "uid_job: rank %d: refused with a wrong secret, as expected; joining with the right one\n",
                rank);
    }
    if (gshmemx_set_attr_uniqueid_args(rank, n, &id, &attr) != 0) UID_FAIL(rank, "set_attr failed");
    int rc = gshmemx_init_attr(GSHMEMX_INIT_WITH_UNIQUEID, &attr);
    if (rc != 0) UID_FAIL(rank, "gshmemx_init_attr: %s", gshmemx_status_name(rc));
    return run_job(rank, n);
}

static int rank_main_env(int rank, int n, int port, const char *host)
{
    char v[300];
    setenv("GSHMEM_BOOTSTRAP", "uid", 1);
    snprintf(v, sizeof(v), "%s:%d", host, port);
    setenv("GSHMEM_BOOTSTRAP_UID", v, 1);
    snprintf(v, sizeof(v), "%d", rank);
    setenv("GSHMEM_RANK", v, 1);
    snprintf(v, sizeof(v), "%d", n);
    setenv("GSHMEM_NRANKS", v, 1);
    setenv("GSHMEM_BOOTSTRAP_SECRET", "uid-env-test-secret", 1);
    int rc = gshmem_init_thread(GSHMEM_THREAD_SINGLE, NULL);
    if (rc != 0) UID_FAIL(rank, "gshmem_init_thread: %s", gshmemx_status_name(rc));
    return run_job(rank, n);
}

/* A port that was free a moment ago (the env mode's root binds it). */
static int free_port(void)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t sl = sizeof(sa);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &sl) != 0)
        return -1;
    close(fd);
    return ntohs(sa.sin_port);
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 0;
    const char *mode = argc > 2 ? argv[2] : "ok";
    int give_up = strcmp(mode, "refused") == 0, forged = give_up || strcmp(mode, "wrong") == 0;
    int wrong_rank = forged && argc > 3 ? atoi(argv[3]) : -1;
    int env_mode = strcmp(mode, "env") == 0, port = env_mode ? free_port() : 0;
    const char *host0 = env_mode && argc > 3 ? argv[3] : "127.0.0.1", *host = env_mode && argc > 4 ? argv[4] : host0;
    if (strchr(host0, ':') || strchr(host, ':')) { /* an IPv6 address: skipped where the host has no ::1 */
        struct sockaddr_in6 lo6 = {.sin6_family = AF_INET6, .sin6_addr = in6addr_loopback};
        int probe = socket(AF_INET6, SOCK_STREAM, 0);
        int ok = probe >= 0 && bind(probe, (struct sockaddr *)&lo6, sizeof(lo6)) == 0;
        if (probe >= 0) close(probe);
        if (!ok) {
            printf("uid_job: no IPv6 loopback here: skipped\n");
            return 77;
        }
    }
    if (n < 1 || n > 64 || (forged && (wrong_rank < 1 || wrong_rank >= n)) || port < 0) {
        fprintf(stderr, "usage: uid_job N [ok | wrong B | refused B (0 < B < N) | env [H0 [H]]]\n");
        return 2;
    }
    snprintf(id_path, sizeof(id_path), "/tmp/gshmem-uid-%d.id", (int)getpid());
    unlink(id_path);
    pid_t pids[64];
    for (int r = 1; r < n; r++) {
        if ((pids[r] = fork()) == 0) {
            alarm(90); /* a stuck rank must not outlive the test */
            _exit(env_mode ? rank_main_env(r, n, port, host) : rank_main_api(r, n, wrong_rank, give_up));
        }
    }
    alarm(90);
    int failed = env_mode ? rank_main_env(0, n, port, host0) : rank_main_api(0, n, wrong_rank, give_up);
    for (int r = 1; r < n; r++) {
        int st;
        waitpid(pids[r], &st, 0);
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            fprintf(stderr, "uid_job: rank %d ended with wait status %#x\n", r, (unsigned)st);
            failed = 1;
        }
    }
    unlink(id_path);
    if (!failed) printf("uid_job: %d ranks OK (%s)\n", n, mode);
    return failed;
}
