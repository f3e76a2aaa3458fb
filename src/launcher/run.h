/*
 * gshmemrun's job: the options, the PEs it started and the relays between them and
 * gshmemrun's own standard streams. gshmemrun.c parses options and runs the event
 * loop; run_children.c starts, signals and reaps PEs; run_output.c relays output
 * and terminal input.
 */
#ifndef GSHMEM_LAUNCHER_RUN_H
#define GSHMEM_LAUNCHER_RUN_H

#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "launcher/placement.h"

#define RUN_EXIT_TIMEOUT 124
#define RUN_EXIT_LAUNCHER 125 /* gshmemrun itself failed (usage, resources) */
#define RUN_EXIT_CANNOT_EXEC 126
#define RUN_EXIT_NOT_FOUND 127
#define RUN_LINE_MAX 8192
#define RUN_INPUT_MAX 4096
/* How long PE output may keep flowing from leftover descendants after every PE exited. */
#define RUN_DRAIN_MS 1000
/* After the first failure, how long the other PEs get to end on their own before SIGTERM:
 * a gshmem_global_exit or a lost PE reaches them through the bootstrap root within
 * milliseconds, and under --ppn the root lives in PE 0 (killing it at once could cut
 * that message off). */
#define RUN_SETTLE_MS 1000

struct gshmemi_tcp_root;

struct run_opts {
    long np;
    double timeout; /* 0: none */
    double grace;
    int verbose;
    int tag_output;
    enum run_bind bind;
    const char **xvars; /* "VAR" or "VAR=VAL" */
    int nx;
    char **argv; /* the program and its arguments */
};

/* One PE's stdout or stderr, read from a pipe and written to gshmemrun's own. */
struct run_linebuf {
    int fd; /* read end of the PE's pipe; -1 once closed */
    int out_fd;
    int rank;
    int tag; /* whole lines prefixed with "[rank] "; else bytes pass through as they come */
    char buf[RUN_LINE_MAX];
    size_t len;
};

/* gshmemrun's terminal stdin, copied to a pipe that is PE 0's stdin. */
struct run_input {
    int src;    /* STDIN_FILENO while relaying, else -1 */
    int pipe_w; /* nonblocking; -1 once closed */
    int eof;    /* src said EOF: close pipe_w once buf is written */
    char buf[RUN_INPUT_MAX];
    size_t len;
};

struct run_pe {
    pid_t pid;
    int reaped;
    struct run_linebuf out, err;
};

struct run_job {
    struct run_opts opts;
    struct run_placement placement;
    struct run_pe *pes;
    struct gshmemi_tcp_root *root;
    pid_t launcher_pid;
    int relay_out, relay_err; /* PEs' stdout/stderr go through pipes (tag-output or a terminal) */
    struct run_input input;
    int live; /* PEs not yet reaped */
    int sigfd;
    sigset_t saved_mask;
    int exit_code;
    int failed; /* a PE failed or the timeout fired: the job is ending */
    int64_t timeout_at, term_at, kill_at, drain_at;
};

/* run_children.c */
/* Starts every PE; on a failure kills the ones already started and returns the status. */
int run_spawn_all(struct run_job *job, const char *path, char **env, int rank_slot);
/* Signals the process group of every PE not yet reaped. */
void run_signal_all(struct run_job *job, int sig);
/* The job is over: SIGTERM (and SIGCONT, for stopped PEs) now, SIGKILL after the grace period. */
void run_terminate(struct run_job *job);
/* Collects ended and stopped PEs; the first failure decides the job's status. */
void run_reap(struct run_job *job);

/* run_output.c */
/* Reads what a PE wrote and passes it on; closes lb->fd at EOF. */
void run_output_drain(struct run_linebuf *lb);
/* Passes on what is buffered and stops listening. */
void run_output_close(struct run_linebuf *lb);
/* Reads what a PE's pipe already holds, without waiting (a bounded amount), so that a
 * message about the PE comes after the lines it printed before it ended. */
void run_output_catch_up(struct run_linebuf *lb);
/* gshmemrun's own message while the job runs: queued on stderr behind the PE output
 * already queued there, so it reads in order with it, never lands inside a long write
 * of theirs, and never holds up the event loop when the reader stops. */
void run_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* 1 while so much output for fd (stdout or stderr) waits for its reader that the PEs'
 * pipes for it should not be read. */
int run_output_backlogged(int fd);
/* Waits until every queued byte is written (the reader may be slow); a SIGINT, SIGTERM or
 * SIGHUP read from sigfd meanwhile ends the wait: 128 + its number, else 0. */
int run_output_finish(int sigfd);
/* Sets up the relay when stdin is a terminal (PE 0 must not read it from a background
 * process group); *pe0_stdin is then the pipe's read end, else -1. 0 or -1 (reported). */
int run_input_create(struct run_input *in, int *pe0_stdin);
/* Adds the relay's descriptors to pfds; may shorten *timeout_ms. Returns the count added. */
nfds_t run_input_pollfds(struct run_input *in, struct pollfd *pfds, int *timeout_ms);
/* Acts on poll's answer for the n descriptors run_input_pollfds added. */
void run_input_service(struct run_input *in, const struct pollfd *pfds, nfds_t n);
void run_input_destroy(struct run_input *in);

#endif
