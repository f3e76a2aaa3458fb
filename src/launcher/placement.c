/* Placement parts that do not need hwloc: option values, applying a binding, reporting. */
#include "launcher/placement.h"

#include <errno.h>
#include <linux/mempolicy.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static const char *const run_bind_names[] = {"auto", "none", "numa", "core"};

int run_bind_parse(const char *text, enum run_bind *out)
{
    for (int b = RUN_BIND_NONE; b <= RUN_BIND_CORE; b++) {
        if (!strcmp(text, run_bind_names[b])) {
            *out = (enum run_bind)b;
            return 0;
        }
    }
    return -1;
}

const char *run_bind_name(enum run_bind bind)
{
    return run_bind_names[bind];
}

void run_placement_destroy(struct run_placement *p)
{
    for (long r = 0; p->pes != NULL && r < p->np; r++) {
        if (p->pes[r].cpus != NULL) CPU_FREE(p->pes[r].cpus);
        free(p->pes[r].nodes);
    }
    free(p->pes);
    p->pes = NULL;
}

/* Raw system calls only: this runs between fork and exec of a threaded process. */
int run_binding_apply(const struct run_binding *b, enum run_bind_step *step)
{
    if (b->cpus != NULL && sched_setaffinity(0, b->cpus_size, b->cpus) != 0) {
        *step = RUN_BIND_STEP_CPUS;
        return errno;
    }
    if (b->nodes != NULL && syscall(SYS_set_mempolicy, MPOL_BIND, b->nodes, b->maxnode) != 0) {
        *step = RUN_BIND_STEP_MEMORY;
        return errno;
    }
    return 0;
}

/* "0-3,8,10-11" for the CPUs in set. */
void run_cpus_format(const cpu_set_t *set, size_t size, char *out, size_t outlen)
{
    size_t n = 0, ncpus = size * 8;
    out[0] = '\0';
    for (size_t i = 0; i < ncpus; i++) {
        if (!CPU_ISSET_S(i, size, set)) continue;
        size_t j = i;
        while (j + 1 < ncpus && CPU_ISSET_S(j + 1, size, set)) j++;
        int w = j == i ? snprintf(out + n, outlen - n, "%s%zu", n ? "," : "", i)
                       : snprintf(out + n, outlen - n, "%s%zu-%zu", n ? "," : "", i, j);
        if (w < 0 || (size_t)w >= outlen - n) {
            snprintf(out + (outlen > 4 ? outlen - 4 : 0), outlen > 4 ? 4 : outlen, "...");
            return;
        }
        n += (size_t)w;
        i = j;
    }
}

void run_placement_report(const struct run_placement *p)
{
    for (long r = 0; r < p->np; r++) {
        const struct run_binding *b = &p->pes[r];
        char gpu[16] = "none";
        if (b->gpu >= 0) snprintf(gpu, sizeof(gpu), "%d", b->gpu);
        fprintf(stderr, "gshmemrun: PE %ld binding (%s): GPU %s, CPUs %s, NUMA node %s\n", r, run_bind_name(p->bind),
                gpu, b->cpus_text, b->nodes_text);
    }
}

/* The CPUs gshmemrun itself may run on, as text: what an unbound PE inherits. */
void run_own_cpus_text(char *out, size_t outlen)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0) run_cpus_format(&set, sizeof(set), out, outlen);
    else snprintf(out, outlen, "?");
}

/* Value of NAME in a "NAME=VALUE" environment array, or NULL. */
const char *run_env_value(char *const *env, const char *name)
{
    size_t n = strlen(name);
    for (; *env != NULL; env++)
        if (!strncmp(*env, name, n) && (*env)[n] == '=') return *env + n + 1;
    return NULL;
}
