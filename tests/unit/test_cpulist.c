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
