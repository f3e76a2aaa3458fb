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

#endif
