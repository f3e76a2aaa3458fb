/*
 * CPU lists as Linux writes them (sysfs local_cpulist, /proc/self/status
 * Cpus_allowed_list): "0-3,8,10-11". Used to bind the proxy thread near its GPU.
 */
#ifndef GSHMEMI_CPULIST_H
#define GSHMEMI_CPULIST_H

#include <sched.h>
#include <stddef.h>

/* Parses text (a trailing newline is allowed) into *set. 0, or -1 when the text is
 * not a CPU list or names a CPU beyond CPU_SETSIZE; *set is then empty. */
int gshmemi_cpulist_parse(const char *text, cpu_set_t *set);
/* Writes set as a CPU list ("none" when empty), truncated to len. */
void gshmemi_cpulist_format(const cpu_set_t *set, char *buf, size_t len);

/* Where the proxy thread runs: which of the process's allowed CPUs are near its GPU
 * and near the NIC the remote transport uses (either may be NULL: unknown or none). */
enum gshmemi_cpus_near {
    GSHMEMI_CPUS_NEAR_NONE,     /* *out empty: keep the process's binding */
    GSHMEMI_CPUS_NEAR_BOTH,     /* allowed CPUs near the GPU and the NIC */
    GSHMEMI_CPUS_NEAR_NIC,      /* none near both: allowed CPUs near the NIC */
    GSHMEMI_CPUS_NEAR_GPU,      /* no NIC, or none of the allowed CPUs near it */
};
/* The NIC comes before the GPU when no CPU is near both: a proxy thread with a NIC
 * spends its time on the NIC's doorbells and completion queue, while its one read of
 * the GPU's request ring per request crosses the system either way. */
enum gshmemi_cpus_near gshmemi_cpus_near(const cpu_set_t *allowed, const cpu_set_t *gpu, const cpu_set_t *nic,
                                         cpu_set_t *out);

#endif
