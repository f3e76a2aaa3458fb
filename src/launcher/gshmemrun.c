/*
 * gshmemrun: starts N PEs of a program on this machine and hosts their bootstrap
 * rendezvous. Each PE runs in its own process group; signals sent to gshmemrun are
 * forwarded to every PE; the first PE to fail (exit, signal or stop) ends the job
 * (the others get RUN_SETTLE_MS to end on their own, then SIGTERM, a grace period,
 * SIGKILL) and its status becomes gshmemrun's. A PE that
 * ends without leaving the bootstrap is reported to the root, which releases the
 * others. Each PE is bound to CPUs and memory near its GPU (placement.h) before it
 * execs. PEs never touch gshmemrun's terminal: it relays (run_output.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bootstrap/tcp_root.h"
#include "bootstrap/wire.h"
#include "launcher/placement.h"
#include "launcher/run.h"

/* A PE that has not said HELLO this long after connecting is dropped by the root. */
#define RUN_ROOT_TIMEOUT_S 60.0

extern char **environ;

static const int run_forwarded_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

/* --ppn N (0: not given): the PEs of this pod join a Kubernetes job (k8s bootstrap); no
 * rendezvous here (pod 0's PE 0 hosts it) and the job's secret, size and root come from
 * the pod's environment. */
static long run_ppn;

static void run_usage(FILE *f)
{
    fprintf(f,
            "usage: gshmemrun [options] [--] program [args...]\n"
            "Starts N PEs of program on this machine.\n\n"
            "  -n, -np N           number of PEs (default 1)\n"
            "  --ppn N             in a Kubernetes pod: start N PEs of a job over several pods; PE =\n"
            "                      pod index x N + index in the pod, GSHMEM_NRANKS the job's PEs, and\n"
            "                      pod 0's PE 0 hosts the rendezvous (GSHMEM_BOOTSTRAP=k8s)\n"
            "  -x, --env VAR[=VAL] set VAR in every PE (without =VAL: gshmemrun's own value); repeatable\n"
            "  --tag-output        prefix every output line with \"[pe] \"\n"
            "  --timeout SEC       end the job after SEC seconds and exit with status 124\n"
            "  --grace SEC         after a failure (and 1 s in which the other PEs may end on their own),\n"
            "                      wait SEC seconds between SIGTERM and SIGKILL (default 3)\n"
            "  --bind-to WHAT      bind each PE's CPUs and memory: none, numa (the NUMA node nearest\n"
            "                      the PE's GPU) or core (one core of that node per PE); without GPUs,\n"
            "                      numa takes the NUMA nodes in turn and core gives PE i core i\n"
            "                      (wrapping). Default: numa when there are GPUs and either several\n"
            "                      NUMA nodes or a GPU with a known locality, else none\n"
            "  -v, --verbose       say what gshmemrun does, each PE's binding included\n"
            "  -h, --help          this text\n\n"
            "Exit status: 0 when every PE succeeds; else the first failed PE's status (128+N for\n"
            "signal N; a PE stopped by a signal is a failure too), 124 on timeout (unless a PE\n"
            "failed first), 126/127 when the program cannot be run, 125 for other gshmemrun errors.\n\n"
            "Terminal: PEs run in process groups of their own, so they never read or write the\n"
            "terminal themselves. When stdin is a terminal, gshmemrun reads it (while it is in the\n"
            "foreground) and passes it to PE 0 through a pipe, closed at end of input; the other PEs\n"
            "read /dev/null. When stdout or stderr is a terminal, PE output passes through gshmemrun.\n"
            "PEs see pipes, not a terminal (isatty is false).\n\n"
            "PE i uses GPU i modulo the visible GPUs, or GSHMEM_DEVICE when set (here or with -x);\n"
            "GPUs are the NVIDIA PCI devices in bus order, narrowed by an ordinal CUDA_VISIBLE_DEVICES\n"
            "(a UUID list cannot be matched, so every GPU is taken in bus order).%s\n",
            run_placement_supported() ? "" : "\nThis gshmemrun was built without hwloc: PEs are never bound.");
}

static int run_parse_number(const char *opt, const char *text, double min, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (errno || end == text || *end != '\0' || v < min || v != v) {
        fprintf(stderr, "gshmemrun: %s: invalid value '%s'\n", opt, text);
        return -1;
    }
    *out = v;
    return 0;
}

/* Value of option `name` at argv[*i]: "name=value" or the next argument. */
static const char *run_opt_value(int argc, char **argv, int *i, const char *name)
{
    size_t n = strlen(name);
    if (strncmp(argv[*i], name, n) == 0 && argv[*i][n] == '=') return argv[*i] + n + 1;
    if (*i + 1 >= argc) {
        fprintf(stderr, "gshmemrun: %s needs a value\n", name);
        return NULL;
    }
    return argv[++*i];
}

static int run_is_opt(const char *arg, const char *name)
{
    size_t n = strlen(name);
    return strncmp(arg, name, n) == 0 && (arg[n] == '\0' || (arg[n] == '=' && name[1] == '-'));
}

static int run_parse_one(struct run_opts *o, int argc, char **argv, int *i)
{
    const char *a = argv[*i], *v;
    double d;
    if (run_is_opt(a, "-n") || run_is_opt(a, "-np") || run_is_opt(a, "--np")) {
        if ((v = run_opt_value(argc, argv, i, a[1] == '-' ? "--np" : a)) == NULL) return -1;
        if (run_parse_number("-n", v, 1, &d) != 0 || d != (long)d || d > 1e6) {
            fprintf(stderr, "gshmemrun: -n needs a whole number of PEs >= 1\n");
            return -1;
        }
        o->np = (long)d;
    } else if (run_is_opt(a, "--ppn")) {
        if ((v = run_opt_value(argc, argv, i, "--ppn")) == NULL) return -1;
        if (run_parse_number("--ppn", v, 1, &d) != 0 || d != (long)d || d > 1e4) {
            fprintf(stderr, "gshmemrun: --ppn needs a whole number of PEs per pod >= 1\n");
            return -1;
        }
        run_ppn = (long)d;
    } else if (run_is_opt(a, "-x") || run_is_opt(a, "--env")) {
        if ((v = run_opt_value(argc, argv, i, a[1] == '-' ? "--env" : "-x")) == NULL) return -1;
        if (v[0] == '\0' || v[0] == '=') {
            fprintf(stderr, "gshmemrun: -x needs VAR or VAR=VALUE\n");
            return -1;
        }
        o->xvars[o->nx++] = v;
    } else if (run_is_opt(a, "--timeout")) {
        if ((v = run_opt_value(argc, argv, i, "--timeout")) == NULL || run_parse_number(a, v, 0, &o->timeout))
            return -1;
    } else if (run_is_opt(a, "--grace")) {
        if ((v = run_opt_value(argc, argv, i, "--grace")) == NULL || run_parse_number(a, v, 0, &o->grace))
            return -1;
    } else if (run_is_opt(a, "--bind-to")) {
        if ((v = run_opt_value(argc, argv, i, "--bind-to")) == NULL) return -1;
        if (run_bind_parse(v, &o->bind) != 0) {
            fprintf(stderr, "gshmemrun: --bind-to: invalid value '%s' (none, numa or core)\n", v);
            return -1;
        }
    } else if (!strcmp(a, "--tag-output")) {
        o->tag_output = 1;
    } else if (!strcmp(a, "-v") || !strcmp(a, "--verbose")) {
        o->verbose = 1;
    } else {
        fprintf(stderr, "gshmemrun: unknown option '%s' (see gshmemrun --help)\n", a);
        return -1;
    }
    return 0;
}

/* 0 to run, 1 when help was printed, -1 on a usage error (already reported). */
static int run_parse_args(struct run_opts *o, int argc, char **argv)
{
    *o = (struct run_opts){.np = 1, .grace = 3.0, .bind = RUN_BIND_AUTO};
    o->xvars = calloc((size_t)argc, sizeof(*o->xvars));
    if (o->xvars == NULL) return -1;
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (!strcmp(argv[i], "--")) {
            i++;
            break;
        }
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            run_usage(stdout);
            return 1;
        }
        if (run_parse_one(o, argc, argv, &i) != 0) return -1;
    }
    if (i >= argc) {
        fprintf(stderr, "gshmemrun: no program to run (see gshmemrun --help)\n");
        return -1;
    }
    if (run_ppn > 0 && o->np != 1 && o->np != run_ppn) {
        fprintf(stderr, "gshmemrun: -n %ld and --ppn %ld: with --ppn, this pod starts --ppn PEs\n", o->np, run_ppn);
        return -1;
    }
    if (run_ppn > 0) o->np = run_ppn;
    o->argv = argv + i;
    return 0;
}

/* The program's path as execve wants it (PATH is searched here, before any fork). */
static char *run_find_program(const char *name)
{
    if (strchr(name, '/') != NULL) return strdup(name);
    const char *path = getenv("PATH");
    if (path == NULL || path[0] == '\0') path = "/usr/local/bin:/usr/bin:/bin";
    for (const char *p = path;; p++) {
        const char *end = strchrnul(p, ':');
        char cand[PATH_MAX];
        int n = snprintf(cand, sizeof(cand), "%.*s%s%s", (int)(end - p), p, end == p ? "" : "/", name);
        struct stat st;
        if (n > 0 && (size_t)n < sizeof(cand) && stat(cand, &st) == 0 && S_ISREG(st.st_mode) &&
            access(cand, X_OK) == 0)
            return strdup(cand);
        if (*end == '\0') return NULL;
        p = end;
    }
}

/* Whether environment entry "NAME=..." is named by one of names ("NAME" or "NAME=VAL"). */
static int run_env_overridden(const char *entry, const char *const *names, int nnames)
{
    for (int k = 0; k < nnames; k++) {
        size_t n = strcspn(names[k], "=");
        if (strncmp(entry, names[k], n) == 0 && entry[n] == '=') return 1;
    }
    return 0;
}

/* Set by gshmemrun in every PE; neither inherited nor taken from -x. */
/* GSHMEM_BOOTSTRAP_SECRET: the PEs get the root's, the user's (from gshmemrun's environment) or a random one. */
static const char *const run_launcher_vars[] = {"GSHMEM_BOOTSTRAP", "GSHMEM_BOOTSTRAP_ROOT", "GSHMEM_RANK",
                                                "GSHMEM_NRANKS", "GSHMEM_JOB_ID", "GSHMEM_BOOTSTRAP_SECRET"};
#define RUN_NLAUNCHER_VARS ((int)(sizeof(run_launcher_vars) / sizeof(run_launcher_vars[0])))
/* With --ppn only these are gshmemrun's; the job's size, root and secret are the pod's. */
static const char *const run_ppn_vars[] = {"GSHMEM_BOOTSTRAP", "GSHMEM_RANK", "GSHMEM_PPN"};
#define RUN_NPPN_VARS ((int)(sizeof(run_ppn_vars) / sizeof(run_ppn_vars[0])))

/* The "VAR=VAL" entry for one -x argument, allocated; NULL when it is skipped (said why) or on ENOMEM. */
static char *run_xvar_entry(const char *xvar)
{
    size_t name_len = strcspn(xvar, "=");
    const char *const *own = run_ppn ? run_ppn_vars : run_launcher_vars;
    for (int j = 0; j < (run_ppn ? RUN_NPPN_VARS : RUN_NLAUNCHER_VARS); j++) {
        if (strlen(own[j]) == name_len && !strncmp(own[j], xvar, name_len)) {
            fprintf(stderr, "gshmemrun: warning: -x %.*s: set by gshmemrun itself, ignored\n", (int)name_len, xvar);
            return NULL;
        }
    }
    if (xvar[name_len] == '=') return strdup(xvar);
    const char *val = getenv(xvar);
    char *entry = NULL;
    if (val == NULL) fprintf(stderr, "gshmemrun: warning: -x %s: not set here, not passed\n", xvar);
    else if (asprintf(&entry, "%s=%s", xvar, val) < 0) entry = NULL;
    return entry;
}

/* Builds the PEs' environment: inherited entries, then [*owned_from, *rank_slot) allocated
 * here, then the slot for each PE's GSHMEM_RANK. */
static char **run_build_env(const struct run_opts *o, const char *root_addr, const char *job_id,
                            const char *secret, int *owned_from, int *rank_slot)
{
    size_t n = 0, k = 0;
    while (environ[n] != NULL) n++;
    char **env = calloc(n + (size_t)o->nx + RUN_NLAUNCHER_VARS + 2, sizeof(char *));
    if (env == NULL) return NULL;
    const char *const *own = run_ppn ? run_ppn_vars : run_launcher_vars;
    for (size_t i = 0; i < n; i++)
        if (!run_env_overridden(environ[i], own, run_ppn ? RUN_NPPN_VARS : RUN_NLAUNCHER_VARS) &&
            !run_env_overridden(environ[i], o->xvars, o->nx))
            env[k++] = environ[i];
    *owned_from = (int)k;
    for (int i = 0; i < o->nx; i++)
        if ((env[k] = run_xvar_entry(o->xvars[i])) != NULL) k++;
    if (run_ppn > 0) {
        if (asprintf(&env[k++], "GSHMEM_BOOTSTRAP=k8s") < 0 || asprintf(&env[k++], "GSHMEM_PPN=%ld", run_ppn) < 0)
            return NULL;
        *rank_slot = (int)k++;
        env[k] = NULL;
        return env;
    }
    if (asprintf(&env[k++], "GSHMEM_BOOTSTRAP=tcp") < 0 ||
        asprintf(&env[k++], "GSHMEM_BOOTSTRAP_ROOT=%s", root_addr) < 0 ||
        asprintf(&env[k++], "GSHMEM_NRANKS=%ld", o->np) < 0 || asprintf(&env[k++], "GSHMEM_JOB_ID=%s", job_id) < 0 ||
        (secret != NULL && asprintf(&env[k++], "GSHMEM_BOOTSTRAP_SECRET=%s", secret) < 0))
        return NULL; /* out of memory: gshmemrun exits at once */
    *rank_slot = (int)k++;
    env[k] = NULL;
    return env;
}

static void run_free_env(char **env, int owned_from, int rank_slot)
{
    for (int i = owned_from; env != NULL && i < rank_slot; i++) free(env[i]);
    free(env);
}

static void run_make_job_id(char *out, size_t outlen)
{
    unsigned int rnd = 0;
    if (getrandom(&rnd, sizeof(rnd), GRND_NONBLOCK) != (ssize_t)sizeof(rnd)) rnd = (unsigned)clock();
    snprintf(out, outlen, "gshmemrun-%ld-%lx-%08x", (long)getpid(), (long)time(NULL), rnd);
}

static void run_handle_signals(struct run_job *job)
{
    struct signalfd_siginfo si;
    while (read(job->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
        if ((int)si.ssi_signo == SIGCHLD) continue; /* reaped below, every round */
        if (job->opts.verbose)
            run_say("gshmemrun: forwarding signal %u (%s) to every PE\n", si.ssi_signo, strsignal((int)si.ssi_signo));
        run_signal_all(job, (int)si.ssi_signo);
    }
}

/* Acts on the timeout and grace deadlines; returns poll's timeout until the next one. */
static int run_deadlines(struct run_job *job)
{
    int64_t now = gshmemi_wire_now_ms();
    if (job->failed) job->timeout_at = -1; /* the first failure's status stands */
    if (job->timeout_at >= 0 && now >= job->timeout_at && job->live > 0) {
        run_say("gshmemrun: timeout after %g s: terminating %d running PE%s\n", job->opts.timeout, job->live,
                job->live == 1 ? "" : "s");
        job->timeout_at = -1;
        job->failed = 1;
        job->exit_code = RUN_EXIT_TIMEOUT;
        run_terminate(job);
    }
    if (job->term_at >= 0 && now >= job->term_at) {
        if (job->live > 0) run_terminate(job);
        job->term_at = INT64_MAX; /* done; never again */
    }
    if (job->kill_at >= 0 && now >= job->kill_at) {
        if (job->live > 0 && job->opts.verbose)
            run_say("gshmemrun: grace period over: killing %d PE%s\n", job->live, job->live == 1 ? "" : "s");
        run_signal_all(job, SIGKILL);
        job->kill_at = INT64_MAX; /* done; never again */
    }
    int64_t next = -1;
    int64_t cands[4] = {job->timeout_at, job->term_at == INT64_MAX ? -1 : job->term_at,
                        job->kill_at == INT64_MAX ? -1 : job->kill_at, job->drain_at};
    for (int i = 0; i < 4; i++)
        if (cands[i] >= 0 && (next < 0 || cands[i] < next)) next = cands[i];
    return gshmemi_wire_poll_ms(next);
}

/* Output of descendants that outlived their PE: print what arrived, stop listening. */
static void run_flush_leftovers(struct run_job *job)
{
    for (long r = 0; r < job->opts.np; r++) {
        run_output_close(&job->pes[r].out);
        run_output_close(&job->pes[r].err);
    }
    run_input_destroy(&job->input);
}

/* The PEs' open output pipes into pfds/bufs from index n; returns the new count. */
static nfds_t run_output_pollfds(struct run_job *job, struct pollfd *pfds, struct run_linebuf **bufs, nfds_t n,
                                 int *timeout_ms)
{
    int backlog[2] = {run_output_backlogged(STDOUT_FILENO), run_output_backlogged(STDERR_FILENO)};
    for (long r = 0; r < job->opts.np; r++) {
        struct run_linebuf *lbs[2] = {&job->pes[r].out, &job->pes[r].err};
        for (int k = 0; k < 2; k++) {
            if (lbs[k]->fd < 0) continue;
            if (backlog[lbs[k]->out_fd == STDERR_FILENO]) { /* its reader is behind: look again soon */
                if (*timeout_ms < 0 || *timeout_ms > 50) *timeout_ms = 50;
                /* the drain of ended PEs' pipes waits too: what they hold is not lost */
                if (job->drain_at >= 0) job->drain_at = gshmemi_wire_now_ms() + RUN_DRAIN_MS;
                continue;
            }
            bufs[n] = lbs[k];
            pfds[n++] = (struct pollfd){.fd = lbs[k]->fd, .events = POLLIN};
        }
    }
    return n;
}

/* Whether any PE's output pipe is still open. */
static int run_pipes_open(const struct run_job *job)
{
    for (long r = 0; r < job->opts.np; r++)
        if (job->pes[r].out.fd >= 0 || job->pes[r].err.fd >= 0) return 1;
    return 0;
}

static int run_event_loop(struct run_job *job)
{
    size_t max = 3 + 2 * (size_t)job->opts.np;
    struct pollfd *pfds = calloc(max, sizeof(*pfds));
    struct run_linebuf **bufs = calloc(max, sizeof(*bufs));
    if (pfds == NULL || bufs == NULL) return RUN_EXIT_LAUNCHER;
    for (;;) {
        run_reap(job);
        int timeout_ms = run_deadlines(job);
        if (job->live == 0) run_input_destroy(&job->input);
        pfds[0] = (struct pollfd){.fd = job->sigfd, .events = POLLIN};
        nfds_t nin = run_input_pollfds(&job->input, pfds + 1, &timeout_ms);
        nfds_t n = run_output_pollfds(job, pfds, bufs, 1 + nin, &timeout_ms);
        int draining_done = job->drain_at >= 0 && gshmemi_wire_now_ms() >= job->drain_at;
        if (job->live == 0 && ((nin == 0 && !run_pipes_open(job)) || draining_done)) break;
        if (poll(pfds, n, timeout_ms) < 0 && errno != EINTR) {
            run_say("gshmemrun: poll: %s\n", strerror(errno));
            break;
        }
        if (pfds[0].revents) run_handle_signals(job);
        if (nin > 0) run_input_service(&job->input, pfds + 1, nin);
        for (nfds_t i = 1 + nin; i < n; i++)
            if (pfds[i].revents) run_output_drain(bufs[i]);
    }
    run_flush_leftovers(job);
    free(pfds);
    free(bufs);
    int interrupted = run_output_finish(job->sigfd);
    return interrupted && job->exit_code == 0 ? interrupted : job->exit_code;
}

static int run_setup_signals(struct run_job *job)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGCHLD);
    for (size_t i = 0; i < sizeof(run_forwarded_signals) / sizeof(run_forwarded_signals[0]); i++)
        sigaddset(&set, run_forwarded_signals[i]);
    signal(SIGPIPE, SIG_IGN); /* a closed stdout must not kill the launcher */
    /* Blocked before the rendezvous thread starts, so every thread has them blocked. */
    if (sigprocmask(SIG_BLOCK, &set, &job->saved_mask) != 0 ||
        (job->sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK)) < 0) {
        fprintf(stderr, "gshmemrun: signal setup: %s\n", strerror(errno));
        return -1;
    }
    return 0;
}

/* The job secret: the user's (GSHMEM_BOOTSTRAP_SECRET or _FILE in gshmemrun's environment), else
 * a random one, also written in hex to secret_hex for the PEs' environment. */
static int run_job_secret(uint8_t *secret, size_t *len, char *secret_hex, size_t hexlen)
{
    secret_hex[0] = '\0';
    if (gshmemi_wire_secret_load(getenv("GSHMEM_BOOTSTRAP_SECRET"), getenv("GSHMEM_BOOTSTRAP_SECRET_FILE"), secret,
                                 len) != 0)
        return -1;
    if (*len > 0) return 0;
    uint8_t rnd[32];
    if (gshmemi_wire_random(rnd, sizeof(rnd)) != 0 || hexlen < 2 * sizeof(rnd) + 1) {
        fprintf(stderr, "gshmemrun: cannot make a job secret: no randomness\n");
        return -1;
    }
    for (size_t i = 0; i < sizeof(rnd); i++) snprintf(secret_hex + 2 * i, 3, "%02x", rnd[i]);
    *len = 2 * sizeof(rnd);
    memcpy(secret, secret_hex, *len);
    return 0;
}

static int run_start_root(struct run_job *job, const char *job_id, const uint8_t *secret, size_t secret_len,
                          struct gshmemi_tcp_root **root)
{
    struct gshmemi_tcp_root_config cfg = {
        .bind_host = "127.0.0.1", .port = 0, .nranks = (int)job->opts.np, .job_id = job_id,
        .timeout = RUN_ROOT_TIMEOUT_S, .secret = secret, .secret_len = secret_len};
    if (gshmemi_tcp_root_create(&cfg, root) != 0) {
        fprintf(stderr, "gshmemrun: cannot start the bootstrap rendezvous\n");
        return -1;
    }
    if (gshmemi_tcp_root_start_thread(*root) != 0) {
        gshmemi_tcp_root_destroy(*root);
        *root = NULL;
        return -1;
    }
    if (job->opts.verbose)
        fprintf(stderr, "gshmemrun: job %s, rendezvous at %s\n", job_id, gshmemi_tcp_root_address(*root));
    return 0;
}

int main(int argc, char **argv)
{
    struct run_job job = {.timeout_at = -1, .term_at = -1, .kill_at = -1, .drain_at = -1, .sigfd = -1};
    struct gshmemi_tcp_root *root = NULL;
    char job_id[96];
    int owned_from = 0, rank_slot = 0, rc = run_parse_args(&job.opts, argc, argv);
    char *path = NULL;
    char **env = NULL;
    uint8_t *secret = NULL;
    size_t secret_len = 0;
    char secret_hex[80] = "";
    if (rc != 0) {
        rc = rc > 0 ? 0 : RUN_EXIT_LAUNCHER;
        goto out;
    }
    if ((path = run_find_program(job.opts.argv[0])) == NULL) {
        fprintf(stderr, "gshmemrun: %s: command not found\n", job.opts.argv[0]);
        rc = RUN_EXIT_NOT_FOUND;
        goto out;
    }
    run_make_job_id(job_id, sizeof(job_id));
    job.pes = calloc((size_t)job.opts.np, sizeof(*job.pes));
    secret = malloc(GSHMEMI_WIRE_SECRET_MAX);
    if (job.pes == NULL || secret == NULL ||
        (run_ppn == 0 && run_job_secret(secret, &secret_len, secret_hex, sizeof(secret_hex)) != 0) ||
        run_setup_signals(&job) != 0 || (run_ppn == 0 && run_start_root(&job, job_id, secret, secret_len, &root) != 0)) {
        rc = RUN_EXIT_LAUNCHER;
        goto out;
    }
    env = run_build_env(&job.opts, root ? gshmemi_tcp_root_address(root) : "", job_id,
                        secret_hex[0] ? secret_hex : getenv("GSHMEM_BOOTSTRAP_SECRET"), &owned_from, &rank_slot);
    if (env == NULL) {
        fprintf(stderr, "gshmemrun: out of memory\n");
        rc = RUN_EXIT_LAUNCHER;
    } else if (run_placement_create(job.opts.bind, job.opts.np, env, job.opts.verbose, &job.placement) != 0) {
        rc = RUN_EXIT_LAUNCHER;
    } else {
        if (job.opts.timeout > 0) job.timeout_at = gshmemi_wire_deadline(job.opts.timeout);
        job.root = root;
        job.relay_out = job.opts.tag_output || isatty(STDOUT_FILENO);
        job.relay_err = job.opts.tag_output || isatty(STDERR_FILENO);
        rc = run_spawn_all(&job, path, env, rank_slot);
        if (rc == 0) rc = run_event_loop(&job);
    }
    run_input_destroy(&job.input);
    if (root != NULL) {
        gshmemi_tcp_root_stop(root);
        gshmemi_tcp_root_join(root);
        gshmemi_tcp_root_destroy(root);
    }
    if (job.opts.verbose) fprintf(stderr, "gshmemrun: exit status %d\n", rc);
out:
    run_free_env(env, owned_from, rank_slot);
    run_placement_destroy(&job.placement);
    free(job.pes);
    free(secret);
    free(job.opts.xvars);
    free(path);
    if (job.sigfd >= 0) close(job.sigfd);
    return rc;
}
