/*
 * Placement of PEs on this machine: which GPU each PE will use, and the CPUs and
 * memory (NUMA nodes) it is bound to. Computed once in gshmemrun from the hwloc
 * topology; applied in each PE's process between fork and exec so the program and
 * everything it starts inherit it.
 */
#ifndef GSHMEMRUN_PLACEMENT_H
#define GSHMEMRUN_PLACEMENT_H

#include <sched.h>
#include <stddef.h>

enum run_bind {
    RUN_BIND_AUTO, /* numa where GPU locality matters, else none (decided by run_placement_create) */
    RUN_BIND_NONE,
    RUN_BIND_NUMA,
    RUN_BIND_CORE
};

/* One PE's binding, ready for run_binding_apply. */
struct run_binding {
    cpu_set_t *cpus; /* NULL: CPUs not bound */
    size_t cpus_size;
    unsigned long *nodes; /* NULL: memory not bound; else a MPOL_BIND node mask */
    unsigned long maxnode; /* as set_mempolicy wants it */
    int gpu; /* CUDA ordinal the PE will pick; -1: none known */
    char cpus_text[128]; /* "0-15" */
    char nodes_text[64]; /* "0", or "-" when the memory is not bound */
};

struct run_placement {
    enum run_bind bind; /* never AUTO once created */
    long np;
    struct run_binding *pes;
};

/* Parses a --bind-to value; -1 when it is not one of none|numa|core. */
int run_bind_parse(const char *text, enum run_bind *out);
const char *run_bind_name(enum run_bind bind);

/* Whether this gshmemrun was built with hwloc (binding support). */
int run_placement_supported(void);

/*
 * Computes the placement of np PEs whose environment is env (GSHMEM_DEVICE and
 * CUDA_VISIBLE_DEVICES are read from it, as the PEs will see them). With verbose,
 * says on stderr what it decided and each PE's binding. Returns 0, or -1 after
 * reporting the error.
 */
int run_placement_create(enum run_bind bind, long np, char *const *env, int verbose, struct run_placement *out);
void run_placement_destroy(struct run_placement *p);

enum run_bind_step { RUN_BIND_STEP_CPUS = 1, RUN_BIND_STEP_MEMORY };

/* In the child after fork: async-signal-safe. 0, or the errno of the failed call
 * with *step saying which one it was. */
int run_binding_apply(const struct run_binding *b, enum run_bind_step *step);

/* Shared by the two run_placement_create implementations (with and without hwloc). */
void run_cpus_format(const cpu_set_t *set, size_t size, char *out, size_t outlen);
void run_own_cpus_text(char *out, size_t outlen);
void run_placement_report(const struct run_placement *p);
const char *run_env_value(char *const *env, const char *name);

#endif
