/* A PE for the launcher tests: argv[1] picks a behaviour (see main). Uses the
 * bootstrap directly so the tests do not depend on gshmem_init. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <linux/mempolicy.h>

#include "bootstrap/bootstrap.h"
#include "core/env.h"
#include "gshmem/status.h"

static int pe_rank(void)
{
    const char *r = getenv("GSHMEM_RANK");
    return r ? atoi(r) : -1;
}

static const char *pe_lookup(const char *name)
{
    return getenv(name);
}

static double pe_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int pe_bootstrap(struct gshmemi_env *env, struct gshmemi_bootstrap *bs)
{
    char err[256];
    if (gshmemi_env_load(env, pe_lookup, err, sizeof(err)) != 0) {
        fprintf(stderr, "env: %s\n", err);
        return 1;
    }
    int rc = gshmemi_bootstrap_init(env, bs);
    if (rc) fprintf(stderr, "bootstrap init: %s\n", gshmemx_status_name(rc));
    return rc;
}

/* exit_deaf: each deaf PE leaves a file once it ignores SIGTERM, and the exiting PE
 * waits for all of them: otherwise the launcher's SIGTERM can reach a PE that has not
 * got that far yet, and the job ends before the grace period the test is about. */
static void pe_deaf_path(char *buf, size_t len, int rank)
{
    const char *job = getenv("GSHMEM_JOB_ID");
    snprintf(buf, len, "%s/gshmem-deaf-%s-%d", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", job ? job : "nojob",
             rank);
}

static void pe_deaf_mark(int rank)
{
    char path[512];
    pe_deaf_path(path, sizeof(path), rank);
    FILE *f = fopen(path, "w");
    if (f) fclose(f);
}

static int pe_deaf_wait(void)
{
    const char *n = getenv("GSHMEM_NRANKS");
    int nranks = n ? atoi(n) : 1, me = pe_rank();
    double deadline = pe_now() + 20;
    for (int r = 0; r < nranks; r++) {
        if (r == me) continue;
        char path[512];
        pe_deaf_path(path, sizeof(path), r);
        while (access(path, F_OK) != 0) {
            if (pe_now() > deadline) {
                fprintf(stderr, "exit_deaf: PE %d never ignored SIGTERM\n", r);
                return -1;
            }
            usleep(1000);
        }
        unlink(path);
    }
    return 0;
}

/* Every PE contributes a rank-dependent pattern; each checks every byte it got. */
static int pe_allgather(void)
{
    struct gshmemi_env env;
    struct gshmemi_bootstrap bs;
    if (pe_bootstrap(&env, &bs)) return 1;
    enum { LEN = 37 };
    unsigned char in[LEN], *out = malloc((size_t)bs.nranks * LEN);
    for (int i = 0; i < LEN; i++) in[i] = (unsigned char)(bs.rank * 31 + i * 7 + 1);
    memset(out, 0xee, (size_t)bs.nranks * LEN);
    int rc = bs.ops->allgather(&bs, in, out, LEN);
    for (int r = 0; rc == 0 && r < bs.nranks; r++)
        for (int i = 0; i < LEN; i++)
            if (out[r * LEN + i] != (unsigned char)(r * 31 + i * 7 + 1)) rc = -1;
    if (rc == 0) rc = bs.ops->barrier(&bs);
    printf("PE %d %s local %d/%d node %d\n", bs.rank, rc == 0 ? "ok" : "FAILED", bs.local_rank, bs.local_nranks,
           bs.node_of_rank[bs.rank]);
    free(out);
    gshmemi_bootstrap_fini(&bs);
    return rc != 0;
}

/* PE 0 dies between two barriers; the others (deaf to SIGTERM) must be released by the bootstrap. */
static int pe_barrier_die(void)
{
    struct gshmemi_env env;
    struct gshmemi_bootstrap bs;
    if (pe_bootstrap(&env, &bs)) return 1;
    if (bs.ops->barrier(&bs) != 0) return 1;
    if (bs.rank == 0) {
        usleep(200000);
        _exit(7);
    }
    signal(SIGTERM, SIG_IGN);
    double t0 = pe_now();
    int rc = bs.ops->barrier(&bs);
    printf("PE %d: barrier returned %s after %.1f s\n", bs.rank, gshmemx_status_name(rc), pe_now() - t0);
    fflush(stdout);
    gshmemi_bootstrap_fini(&bs);
    /* Success here means the bootstrap released us with an error. _exit, not return:
     * LeakSanitizer's stop-the-world at exit can hang for good when the launcher's SIGTERM
     * (ignored here) arrives while it attaches (seen 1 run in ~30 under ASan; the launcher
     * then waited out its 30 s grace). */
    fflush(NULL);
    _exit(rc == 0);
}

/* PE `who` leaves at once without joining (exit 0); the others' barrier must fail soon. */
static int pe_exit_early(int who)
{
    struct gshmemi_env env;
    struct gshmemi_bootstrap bs;
    if (pe_rank() == who) return 0;
    if (pe_bootstrap(&env, &bs)) return 1;
    int rc = bs.ops->barrier(&bs);
    printf("PE %d: barrier returned %s\n", bs.rank, gshmemx_status_name(rc));
    fflush(stdout);
    gshmemi_bootstrap_fini(&bs);
    return rc != 0;
}

/* PE `who` never joins and stays; the others time out (GSHMEM_TIMEOUT) and leave. */
static int pe_never_join(int who)
{
    struct gshmemi_env env;
    struct gshmemi_bootstrap bs;
    if (pe_rank() == who) {
        sleep(30);
        return 0;
    }
    if (pe_bootstrap(&env, &bs)) return 1;
    gshmemi_bootstrap_fini(&bs);
    return 0;
}

/* PE 0 reads one line of stdin; the others find theirs empty. */
static int pe_read_stdin(void)
{
    char line[256];
    if (fgets(line, sizeof(line), stdin) == NULL) {
        printf("PE %d read: EOF\n", pe_rank());
        return pe_rank() == 0;
    }
    line[strcspn(line, "\r\n")] = '\0';
    printf("PE %d read: %s\n", pe_rank(), line);
    return pe_rank() != 0;
}

/* PE 1 leaves a child behind in its process group that says whether SIGTERM reached it. */
static void pe_orphan_on_term(int sig)
{
    (void)sig;
    static const char msg[] = "orphan got SIGTERM\n";
    ssize_t rc = write(STDOUT_FILENO, msg, sizeof(msg) - 1);
    (void)rc;
}

static int pe_orphan(void)
{
    if (pe_rank() == 0) {
        sleep(1);
        return 5;
    }
    if (fork() == 0) {
        signal(SIGTERM, pe_orphan_on_term);
        sleep(3);
        printf("orphan done\n");
        return 0;
    }
    return 0;
}

static volatile sig_atomic_t pe_got_term;

static void pe_on_term(int sig)
{
    (void)sig;
    pe_got_term = 1;
}

static int pe_wait_sigterm(void)
{
    struct sigaction sa = {.sa_handler = pe_on_term};
    sigaction(SIGTERM, &sa, NULL);
    printf("PE %d ready\n", pe_rank());
    fflush(stdout);
    for (int i = 0; i < 300 && !pe_got_term; i++) usleep(100000);
    printf("PE %d %s\n", pe_rank(), pe_got_term ? "got SIGTERM" : "never got SIGTERM");
    return pe_got_term ? 0 : 1;
}

/* "PE r cpus LIST mem POLICY": the CPUs this process may run on and its memory policy
 * ("default", or "bind:" and the node numbers). */
static int pe_binding(void)
{
    char line[512], cpus[256] = "?";
    FILE *f = fopen("/proc/self/status", "r");
    while (f != NULL && fgets(line, sizeof(line), f) != NULL)
        if (sscanf(line, "Cpus_allowed_list: %255s", cpus) == 1) break;
    if (f != NULL) fclose(f);
    int mode = -1;
    unsigned long nodes[16] = {0};
    if (syscall(SYS_get_mempolicy, &mode, nodes, 8 * sizeof(nodes), NULL, 0UL) != 0) return 1;
    const char *policy = mode == MPOL_DEFAULT ? "default" : mode == MPOL_BIND ? "bind:" : "other";
    printf("PE %d cpus %s mem %s", pe_rank(), cpus, policy);
    for (unsigned i = 0, first = 1; mode == MPOL_BIND && i < 8 * sizeof(nodes); i++) {
        if (!(nodes[i / (8 * sizeof(long))] >> (i % (8 * sizeof(long))) & 1)) continue;
        printf("%s%u", first ? "" : ",", i);
        first = 0;
    }
    printf("\n");
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    int rank = pe_rank();
    if (!strcmp(mode, "exit") && argc > 3) { /* exit CODE RANK */
        if (rank == atoi(argv[3])) return atoi(argv[2]);
        sleep(30);
        return 0;
    }
    if (!strcmp(mode, "kill") && argc > 2) { /* kill RANK */
        if (rank == atoi(argv[2])) raise(SIGKILL);
        sleep(30);
        return 0;
    }
    if (!strcmp(mode, "exit_deaf") && argc > 3) { /* exit_deaf CODE RANK: the others ignore SIGTERM */
        signal(SIGTERM, SIG_IGN);
        if (rank == atoi(argv[3])) return pe_deaf_wait() ? 99 : atoi(argv[2]);
        pe_deaf_mark(rank);
        sleep(30);
        return 0;
    }
    if (!strcmp(mode, "stop") && argc > 2) { /* stop RANK */
        if (rank == atoi(argv[2])) raise(SIGSTOP);
        sleep(30);
        return 0;
    }
    if (!strcmp(mode, "pid_sleep")) {
        printf("PE %d pid %ld\n", rank, (long)getpid());
        fflush(stdout);
        sleep(30);
        return 0;
    }
    if (!strcmp(mode, "exit_early") && argc > 2) return pe_exit_early(atoi(argv[2]));
    if (!strcmp(mode, "never_join") && argc > 2) return pe_never_join(atoi(argv[2]));
    if (!strcmp(mode, "read_stdin")) return pe_read_stdin();
    if (!strcmp(mode, "orphan")) return pe_orphan();
    if (!strcmp(mode, "sleep") && argc > 2) {
        sleep((unsigned)atoi(argv[2]));
        return 0;
    }
    if (!strcmp(mode, "hello")) {
        printf("hello from PE %d\n", rank);
        fflush(stdout);
        fprintf(stderr, "err from PE %d\n", rank);
        printf("partial %d", rank);
        return 0;
    }
    if (!strcmp(mode, "env")) {
        for (int i = 2; i < argc; i++) {
            const char *v = getenv(argv[i]);
            printf("PE %d %s=%s\n", rank, argv[i], v ? v : "(unset)");
        }
        return 0;
    }
    if (!strcmp(mode, "sigterm")) return pe_wait_sigterm();
    if (!strcmp(mode, "binding")) return pe_binding();
    if (!strcmp(mode, "allgather")) return pe_allgather();
    if (!strcmp(mode, "barrier_die")) return pe_barrier_die();
    fprintf(stderr, "launcher_pe: unknown mode '%s'\n", mode);
    return 2;
}
