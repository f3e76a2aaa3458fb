#include "core/cpulist.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>

static int cpulist_number(const char **p, unsigned long *out)
{
    if (!isdigit((unsigned char)**p)) return -1;
    char *end;
    *out = strtoul(*p, &end, 10);
    *p = end;
    return *out < CPU_SETSIZE ? 0 : -1;
}

int gshmemi_cpulist_parse(const char *text, cpu_set_t *set)
{
    CPU_ZERO(set);
    const char *p = text;
    if (*p == '\0' || *p == '\n') return 0; /* an empty list */
    for (;;) {
        unsigned long lo, hi;
        if (cpulist_number(&p, &lo) != 0) goto bad;
        hi = lo;
        if (*p == '-') {
            p++;
            if (cpulist_number(&p, &hi) != 0 || hi < lo) goto bad;
        }
        for (unsigned long c = lo; c <= hi; c++) CPU_SET(c, set);
        if (*p == ',') {
            p++;
            continue;
        }
        if (*p == '\n') p++;
        if (*p == '\0') return 0;
        goto bad;
    }
bad:
    CPU_ZERO(set);
    return -1;
}

void gshmemi_cpulist_format(const cpu_set_t *set, char *buf, size_t len)
{
    size_t used = 0;
    if (len == 0) return;
    buf[0] = '\0';
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET(c, set)) continue;
        int hi = c;
        while (hi + 1 < CPU_SETSIZE && CPU_ISSET(hi + 1, set)) hi++;
        int n = hi > c ? snprintf(buf + used, len - used, "%s%d-%d", used ? "," : "", c, hi)
                       : snprintf(buf + used, len - used, "%s%d", used ? "," : "", c);
        if (n < 0 || (size_t)n >= len - used) { /* truncated: keep what fits */
            buf[len - 1] = '\0';
            return;
        }
        used += (size_t)n;
        c = hi;
    }
    if (used == 0) snprintf(buf, len, "none");
}

enum gshmemi_cpus_near gshmemi_cpus_near(const cpu_set_t *allowed, const cpu_set_t *gpu, const cpu_set_t *nic,
                                         cpu_set_t *out)
{
    cpu_set_t near_gpu, near_nic;
    CPU_ZERO(out);
    CPU_ZERO(&near_gpu);
    CPU_ZERO(&near_nic);
    if (gpu) CPU_AND(&near_gpu, allowed, gpu);
    if (nic) CPU_AND(&near_nic, allowed, nic);
    if (CPU_COUNT(&near_gpu) > 0 && CPU_COUNT(&near_nic) > 0) {
        CPU_AND(out, &near_gpu, &near_nic);
        if (CPU_COUNT(out) > 0) return GSHMEMI_CPUS_NEAR_BOTH;
    }
    if (CPU_COUNT(&near_nic) > 0) {
        CPU_OR(out, &near_nic, &near_nic);
        return GSHMEMI_CPUS_NEAR_NIC;
    }
    if (CPU_COUNT(&near_gpu) > 0) {
        CPU_OR(out, &near_gpu, &near_gpu);
        return GSHMEMI_CPUS_NEAR_GPU;
    }
    return GSHMEMI_CPUS_NEAR_NONE;
}
