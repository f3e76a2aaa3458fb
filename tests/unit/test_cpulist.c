/* CPU lists (src/core/cpulist.c): what sysfs and /proc write, and what they never do. */
#include "core/cpulist.h"

#include <criterion/criterion.h>

#include <stdio.h>
#include <string.h>

static void expect_cpus(const char *text, const int *cpus, int n)
{
    cpu_set_t set;
    cr_assert_eq(gshmemi_cpulist_parse(text, &set), 0, "\"%s\" should parse", text);
    cr_expect_eq(CPU_COUNT(&set), n, "\"%s\": %d CPUs, want %d", text, CPU_COUNT(&set), n);
    for (int i = 0; i < n; i++) cr_expect(CPU_ISSET(cpus[i], &set), "\"%s\" should contain CPU %d", text, cpus[i]);
}

Test(cpulist, forms_linux_writes)
{
    expect_cpus("0", (int[]){0}, 1);
    expect_cpus("0-3\n", (int[]){0, 1, 2, 3}, 4);
    expect_cpus("0-1,8,10-11", (int[]){0, 1, 8, 10, 11}, 5);
    expect_cpus("5-5", (int[]){5}, 1);
    expect_cpus("\n", NULL, 0);
    char big[32];
    snprintf(big, sizeof(big), "%d", CPU_SETSIZE - 1);
    expect_cpus(big, (int[]){CPU_SETSIZE - 1}, 1);
}

Test(cpulist, malformed_is_refused_and_empty)
{
    static const char *const bad[] = {"-1", "3-1", "0-", "0,,1", "a", "0-3x", "1 2", "0,", "99999999", "0-99999999"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(7, &set);
        cr_expect_eq(gshmemi_cpulist_parse(bad[i], &set), -1, "\"%s\" should be refused", bad[i]);
        cr_expect_eq(CPU_COUNT(&set), 0, "\"%s\": the set should be empty after a refusal", bad[i]);
    }
}

Test(cpulist, format_round_trip)
{
    static const char *const lists[] = {"0", "0-3", "0-1,8,10-11", "2,4,6", "1-1023"};
    for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
        cpu_set_t set;
        char out[256];
        cr_assert_eq(gshmemi_cpulist_parse(lists[i], &set), 0);
        gshmemi_cpulist_format(&set, out, sizeof(out));
        cr_expect_str_eq(out, lists[i]);
    }
    cpu_set_t none;
    CPU_ZERO(&none);
    char out[16];
    gshmemi_cpulist_format(&none, out, sizeof(out));
    cr_expect_str_eq(out, "none");
    cpu_set_t many;
    cr_assert_eq(gshmemi_cpulist_parse("0,2,4,6,8,10,12,14,16", &many), 0);
    char small[8];
    memset(small, 'x', sizeof(small));
    gshmemi_cpulist_format(&many, small, sizeof(small));
    cr_expect_lt(strlen(small), sizeof(small), "truncated output stays terminated");
}

/* Where the proxy thread goes: allowed CPUs near both, else near the NIC, else near
 * the GPU, else nowhere in particular (the caller keeps the process's binding). */
static void expect_near(const char *allowed, const char *gpu, const char *nic, enum gshmemi_cpus_near want,
                        const char *want_cpus)
{
    cpu_set_t a, g, n, out;
    char got[256];
    cr_assert_eq(gshmemi_cpulist_parse(allowed, &a), 0);
    if (gpu) cr_assert_eq(gshmemi_cpulist_parse(gpu, &g), 0);
    if (nic) cr_assert_eq(gshmemi_cpulist_parse(nic, &n), 0);
    CPU_ZERO(&out);
    CPU_SET(63, &out); /* poison: must be rewritten */
    enum gshmemi_cpus_near r = gshmemi_cpus_near(&a, gpu ? &g : NULL, nic ? &n : NULL, &out);
    gshmemi_cpulist_format(&out, got, sizeof(got));
    cr_expect_eq(r, want, "allowed %s, GPU %s, NIC %s: rule %d, want %d", allowed, gpu ? gpu : "-", nic ? nic : "-",
                 (int)r, (int)want);
    cr_expect_str_eq(got, want_cpus, "allowed %s, GPU %s, NIC %s: CPUs %s, want %s", allowed, gpu ? gpu : "-",
                     nic ? nic : "-", got, want_cpus);
}

Test(cpulist, proxy_cpus_near_gpu_and_nic)
{
    /* Both on socket 0 (CPUs 0-15), the process on 4-11. */
    expect_near("4-11", "0-15", "0-7", GSHMEMI_CPUS_NEAR_BOTH, "4-7");
    /* The NIC on the other socket than the GPU, the process allowed on both. */
    expect_near("0-31", "0-15", "16-31", GSHMEMI_CPUS_NEAR_NIC, "16-31");
    /* The process bound near the GPU (the launcher's default), the NIC far away. */
    expect_near("0-15", "0-15", "16-31", GSHMEMI_CPUS_NEAR_GPU, "0-15");
    /* No NIC in use, or its CPUs unknown. */
    expect_near("2,4,6", "0-7", NULL, GSHMEMI_CPUS_NEAR_GPU, "2,4,6");
    /* No GPU (host mode) with a NIC. */
    expect_near("0-31", NULL, "8-9", GSHMEMI_CPUS_NEAR_NIC, "8-9");
    /* Nothing known, or nothing allowed near either. */
    expect_near("0-31", NULL, NULL, GSHMEMI_CPUS_NEAR_NONE, "none");
    expect_near("0-3", "8-15", "16-23", GSHMEMI_CPUS_NEAR_NONE, "none");
}
