/* The one spin-wait loop: cheap while the condition comes soon, polite when it does not. */
#include "core/api.h"
#include "core/relax.h"

#include <gshmem/status.h>

#include <sched.h>
#include <time.h>

static double progress_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* About 1.5 us of pause (AMD EPYC) before the first yield: shorter waits stay on the
 * core; longer ones let a thread that needs it run (the tcp service thread, which must
 * apply what we wait for; another PE when there are more PEs than cores). A yield with
 * nothing else to run costs one short system call. docs/DECISIONS.md, "Synchronization". */
#define PROGRESS_SPINS_BEFORE_YIELD 64u
#define PROGRESS_CLOCK_EVERY 64u
#define PROGRESS_HEALTH_EVERY_S 0.01

void gshmemi_progress_wait(struct gshmemi_state *st, int (*done)(void *arg), void *arg,
                           void (*describe)(void *arg, char *buf, size_t len))
{
    gshmemi_sync_flush(st); /* what we wait for may answer what we sent */
    if (done(arg)) return;
    double start = progress_now(), next_health = start + PROGRESS_HEALTH_EVERY_S;
    for (unsigned spins = 1;; spins++) {
        if (done(arg)) return;
        if (spins < PROGRESS_SPINS_BEFORE_YIELD) gshmemi_cpu_relax();
        else sched_yield(); /* more PEs than cores: let the writer run */
        if (spins % PROGRESS_CLOCK_EVERY) continue;
        double now = progress_now();
        if (now < next_health) continue;
        next_health = now + PROGRESS_HEALTH_EVERY_S;
        int rc = st->boot.ops->check(&st->boot);
        if (rc != 0) gshmemi_fatal(st, rc);
        if (st->env.timeout > 0 && now - start > st->env.timeout) {
            char what[512];
            describe(arg, what, sizeof(what));
            GSHMEMI_ERROR(SYNC, "%s timed out after %.1f s (GSHMEM_TIMEOUT=%g) on PE %d", what, now - start,
                          st->env.timeout, st->my_pe);
            gshmemi_fatal(st, GSHMEMX_ERR_TIMEOUT);
        }
    }
}
