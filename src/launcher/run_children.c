/* Starting, signalling and reaping the PEs. Each PE runs in its own process group, so
 * signals reach its descendants too; it dies with gshmemrun (PR_SET_PDEATHSIG). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bootstrap/tcp_root.h"
#include "bootstrap/wire.h"
#include "launcher/run.h"

/* What a child that could not become its PE tells gshmemrun through the report pipe. */
struct run_child_report {
    int err;
    int step; /* 0: execve, else an enum run_bind_step */
};

/* The child's standard streams: stdin is the relay's pipe for PE 0, /dev/null for the others. */
static void run_child_stdio(int rank, int in_r, int out_w, int err_w)
{
    if (rank > 0 || in_r >= 0) {
        int fd = in_r >= 0 ? in_r : open("/dev/null", O_RDONLY | O_CLOEXEC); /* only stdin stays */
        if (fd >= 0) dup2(fd, STDIN_FILENO);
    }
    if (out_w >= 0) dup2(out_w, STDOUT_FILENO);
    if (err_w >= 0) dup2(err_w, STDERR_FILENO);
}

/* In the child after fork: only async-signal-safe calls. */
static void run_child_exec(struct run_job *job, const char *path, char **env, int rank, const int fds[4])
{
    struct run_child_report report = {0};
    /* gshmemrun may die without a chance to end its PEs (SIGKILL); they go with it. The
     * check closes the window in which it died before the request was made. */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != job->launcher_pid) _exit(RUN_EXIT_LAUNCHER);
    setpgid(0, 0);
    signal(SIGPIPE, SIG_DFL);
    signal(SIGTTIN, SIG_DFL);
    run_child_stdio(rank, fds[0], fds[1], fds[2]);
    sigprocmask(SIG_SETMASK, &job->saved_mask, NULL);
    enum run_bind_step step = 0;
    if ((report.err = run_binding_apply(&job->placement.pes[rank], &step)) == 0) {
        execve(path, job->opts.argv, env);
        report.err = errno;
    }
    report.step = (int)step;
    ssize_t rc = write(fds[3], &report, sizeof(report));
    (void)rc;
    _exit(RUN_EXIT_NOT_FOUND);
}

static int run_pipe(int fds[2], int wanted)
{
    fds[0] = fds[1] = -1;
    return wanted ? pipe2(fds, O_CLOEXEC) : 0;
}

static int run_report_child_failure(const struct run_job *job, const char *path, int rank,
                                    const struct run_child_report *rep)
{
    const struct run_binding *b = &job->placement.pes[rank];
    if (rep->step == RUN_BIND_STEP_CPUS) {
        fprintf(stderr, "gshmemrun: PE %d: cannot bind to CPUs %s: %s\n", rank, b->cpus_text, strerror(rep->err));
        return RUN_EXIT_LAUNCHER;
    }
    if (rep->step == RUN_BIND_STEP_MEMORY) {
        fprintf(stderr, "gshmemrun: PE %d: cannot bind memory to NUMA node %s: %s\n", rank, b->nodes_text,
                strerror(rep->err));
        return RUN_EXIT_LAUNCHER;
    }
    fprintf(stderr, "gshmemrun: cannot execute '%s': %s\n", path, strerror(rep->err));
    return rep->err == ENOENT ? RUN_EXIT_NOT_FOUND : RUN_EXIT_CANNOT_EXEC;
}

/* Waits for the child's exec: returns 0, or the failure's exit status (reported). */
static int run_await_exec(struct run_job *job, const char *path, int rank, int report_r)
{
    struct run_child_report rep;
    ssize_t n;
    while ((n = read(report_r, &rep, sizeof(rep))) < 0 && errno == EINTR) {}
    close(report_r);
    if (n == (ssize_t)sizeof(rep)) return run_report_child_failure(job, path, rank, &rep);
    if (job->opts.verbose) fprintf(stderr, "gshmemrun: started PE %d (pid %ld)\n", rank, (long)job->pes[rank].pid);
    return 0;
}

/* Starts PE rank; returns 0, or the exec failure's exit status (reported). */
static int run_spawn(struct run_job *job, const char *path, char **env, int rank, int in_r)
{
    struct run_pe *pe = &job->pes[rank];
    int out[2], err[2], report[2];
    if (run_pipe(out, job->relay_out) || run_pipe(err, job->relay_err) || pipe2(report, O_CLOEXEC)) {
        fprintf(stderr, "gshmemrun: pipe: %s\n", strerror(errno));
        return RUN_EXIT_LAUNCHER;
    }
    pid_t pid = fork();
    if (pid == 0) run_child_exec(job, path, env, rank, (const int[4]){in_r, out[1], err[1], report[1]});
    int fork_errno = errno;
    close(report[1]);
    if (out[1] >= 0) close(out[1]);
    if (err[1] >= 0) close(err[1]);
    int tag = job->opts.tag_output;
    pe->out = (struct run_linebuf){.fd = out[0], .out_fd = STDOUT_FILENO, .rank = rank, .tag = tag};
    pe->err = (struct run_linebuf){.fd = err[0], .out_fd = STDERR_FILENO, .rank = rank, .tag = tag};
    if (pid < 0) {
        close(report[0]);
        fprintf(stderr, "gshmemrun: fork: %s\n", strerror(fork_errno));
        return RUN_EXIT_LAUNCHER;
    }
    setpgid(pid, pid); /* also done by the child: whichever runs first */
    pe->pid = pid;
    job->live++;
    return run_await_exec(job, path, rank, report[0]);
}

int run_spawn_all(struct run_job *job, const char *path, char **env, int rank_slot)
{
    int pe0_stdin;
    if (run_input_create(&job->input, &pe0_stdin) != 0) return RUN_EXIT_LAUNCHER;
    job->launcher_pid = getpid();
    for (long r = 0; r < job->opts.np; r++) {
        char rank_var[48];
        snprintf(rank_var, sizeof(rank_var), "GSHMEM_RANK=%ld", r);
        env[rank_slot] = rank_var; /* copied into the child by fork */
        int rc = run_spawn(job, path, env, (int)r, r == 0 ? pe0_stdin : -1);
        if (r == 0 && pe0_stdin >= 0) close(pe0_stdin);
        if (rc != 0) {
            run_signal_all(job, SIGKILL);
            while (job->live > 0 && wait(NULL) > 0) job->live--;
            return rc;
        }
    }
    env[rank_slot] = NULL;
    return 0;
}

void run_signal_all(struct run_job *job, int sig)
{
    /* A reaped PE's pid, and so its group id, may belong to someone else by now. */
    for (long r = 0; r < job->opts.np; r++)
        if (job->pes[r].pid > 0 && !job->pes[r].reaped) kill(-job->pes[r].pid, sig);
}

void run_terminate(struct run_job *job)
{
    if (job->kill_at >= 0) return;
    run_signal_all(job, SIGTERM);
    run_signal_all(job, SIGCONT); /* a stopped PE acts on SIGTERM only once it runs */
    job->kill_at = gshmemi_wire_now_ms() + (int64_t)(job->opts.grace * 1000.0);
}

/* Passes on what PE rank printed before the message about it that follows. */
static void run_catch_up(struct run_job *job, int rank)
{
    run_output_catch_up(&job->pes[rank].out);
    run_output_catch_up(&job->pes[rank].err);
}

/* The first failure: said once, its status becomes the job's, and the job ends. */
static void run_fail(struct run_job *job, int rank, pid_t pid, int status)
{
    run_catch_up(job, rank);
    if (WIFEXITED(status)) {
        run_say("gshmemrun: PE %d (pid %ld) exited with status %d\n", rank, (long)pid, WEXITSTATUS(status));
        job->exit_code = WEXITSTATUS(status);
    } else if (WIFSTOPPED(status)) {
        int sig = WSTOPSIG(status);
        const char *abbrev = sigabbrev_np(sig);
        run_say("gshmemrun: PE %d (pid %ld) stopped by signal SIG%s%s\n", rank, (long)pid,
                abbrev ? abbrev : "?",
                sig == SIGTTIN || sig == SIGTTOU ? " (it used the terminal from a background process group)" : "");
        job->exit_code = 128 + sig;
    } else {
        int sig = WTERMSIG(status);
        run_say("gshmemrun: PE %d (pid %ld) was killed by signal %d (%s)\n", rank, (long)pid, sig, strsignal(sig));
        job->exit_code = 128 + sig;
    }
    job->failed = 1;
    if (job->term_at < 0) job->term_at = gshmemi_wire_now_ms() + RUN_SETTLE_MS;
}

static int run_rank_of(const struct run_job *job, pid_t pid)
{
    for (long r = 0; r < job->opts.np; r++)
        if (job->pes[r].pid == pid && !job->pes[r].reaped) return (int)r;
    return -1;
}

void run_reap(struct run_job *job)
{
    int status;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG | WUNTRACED)) > 0) {
        int rank = run_rank_of(job, pid);
        if (rank < 0) continue;
        if (WIFSTOPPED(status)) { /* stopped PEs hang the job: one is a failure */
            if (!job->failed) run_fail(job, rank, pid, status);
            continue;
        }
        job->pes[rank].reaped = 1;
        job->live--;
        /* The root releases the others when this PE never said BYE. */
        if (job->root != NULL) gshmemi_tcp_root_rank_gone(job->root, rank, status);
        int ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
        if (!ok && !job->failed) {
            run_fail(job, rank, pid, status);
        } else if (job->opts.verbose) {
            int exited = WIFEXITED(status);
            run_catch_up(job, rank);
            run_say("gshmemrun: PE %d (pid %ld) ended (%s %d)\n", rank, (long)pid, exited ? "status" : "signal",
                    exited ? WEXITSTATUS(status) : WTERMSIG(status));
        }
    }
    if (job->live == 0 && job->drain_at < 0) job->drain_at = gshmemi_wire_now_ms() + RUN_DRAIN_MS;
}
