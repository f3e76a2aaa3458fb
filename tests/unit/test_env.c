/* GSHMEM_* table: value parsers, loading through a lookup function, the row API. */
#include "core/env.h"
#include "core/log.h"

#include <gshmem/status.h>

#include <criterion/criterion.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COUNT(x) (sizeof(x) / sizeof((x)[0]))

/* ---- parse_size ---- */

struct size_case {
    const char *text;
    size_t value;
};

Test(env, parse_size_plain_and_suffixes)
{
    static const struct size_case cases[] = {
        {"0", 0},
        {"1", 1},
        {"4096", 4096},
        {"1K", (size_t)1 << 10},
        {"3k", (size_t)3 << 10},
        {"12KiB", (size_t)12 << 10},
        {"12KB", (size_t)12 << 10},
        {"12kib", (size_t)12 << 10},
        {"12kb", (size_t)12 << 10},
        {"256M", (size_t)256 << 20},
        {"256MiB", (size_t)256 << 20},
        {"256MB", (size_t)256 << 20},
        {"2G", (size_t)2 << 30},
        {"2GiB", (size_t)2 << 30},
        {"2gb", (size_t)2 << 30},
        {"1T", (size_t)1 << 40},
        {"5TiB", (size_t)5 << 40},
        {"5TB", (size_t)5 << 40},
        {"007M", (size_t)7 << 20},
    };
    for (size_t i = 0; i < COUNT(cases); i++) {
        size_t v = 0xA5A5;
        cr_assert_eq(gshmemi_env_parse_size(cases[i].text, &v), 0, "\"%s\"", cases[i].text);
        cr_assert_eq(v, cases[i].value, "\"%s\" gave %zu", cases[i].text, v);
    }
}

/* env.c has a branch for a bare B ("123B" bytes) that the suffix switch never reaches. */
Test(env, parse_size_bytes_suffix)
{
    size_t v = 0xA5A5;
    cr_assert_eq(gshmemi_env_parse_size("123B", &v), 0, "\"123B\" rejected");
    cr_assert_eq(v, 123);
    v = 0xA5A5;
    cr_assert_eq(gshmemi_env_parse_size("4096b", &v), 0, "\"4096b\" rejected");
    cr_assert_eq(v, 4096);
}

Test(env, parse_size_rejects_garbage)
{
    static const char *const bad[] = {
        "", "K", "M", "B", "12XB", "12X", "12 K", "12K ", "12KBB", "12KiBx", "12iB", "12BB", "1.5G", "-1",
        "+5", "0x10", "1e3", "12P", "12E", "abc", "12Kb5", " 5", "\t5", "\n5",
    };
    for (size_t i = 0; i < COUNT(bad); i++) {
        size_t v = 0xA5A5;
        cr_assert_eq(gshmemi_env_parse_size(bad[i], &v), GSHMEMX_ERR_CONFIG, "\"%s\" accepted", bad[i]);
        cr_assert_eq(v, 0xA5A5, "\"%s\" wrote the output", bad[i]);
    }
}

Test(env, parse_size_rejects_overflow)
{
    static const struct size_case fit[] = {
        {"18446744073709551615", SIZE_MAX},
        {"16777215T", (size_t)16777215 << 40},
        {"17179869183G", (size_t)17179869183ull << 30},
        {"18014398509481983K", (size_t)18014398509481983ull << 10},
    };
    static const char *const over[] = {
        "18446744073709551616", "99999999999999999999999", "16777216T", "17179869184G",
        "17592186044416M",      "18014398509481984K",      "99999999999999999999999K",
    };
    for (size_t i = 0; i < COUNT(fit); i++) {
        size_t v = 0;
        cr_assert_eq(gshmemi_env_parse_size(fit[i].text, &v), 0, "\"%s\"", fit[i].text);
        cr_assert_eq(v, fit[i].value, "\"%s\"", fit[i].text);
    }
    for (size_t i = 0; i < COUNT(over); i++) {
        size_t v = 0xA5A5;
        cr_assert_eq(gshmemi_env_parse_size(over[i], &v), GSHMEMX_ERR_CONFIG, "\"%s\" accepted", over[i]);
        cr_assert_eq(v, 0xA5A5);
    }
}

/* ---- parse_bool ---- */

Test(env, parse_bool)
{
    static const char *const yes[] = {"1", "y", "Y", "yes", "YES", "Yes", "true", "TRUE", "on", "On"};
    static const char *const no[] = {"0", "n", "N", "no", "NO", "false", "False", "off", "OFF"};
    static const char *const bad[] = {"", "2", "-1", "yess", "tru", "enable", " 1", "1 ", "00", "o"};
    for (size_t i = 0; i < COUNT(yes); i++) {
        int v = 7;
        cr_assert_eq(gshmemi_env_parse_bool(yes[i], &v), 0, "\"%s\"", yes[i]);
        cr_assert_eq(v, 1, "\"%s\"", yes[i]);
    }
    for (size_t i = 0; i < COUNT(no); i++) {
        int v = 7;
        cr_assert_eq(gshmemi_env_parse_bool(no[i], &v), 0, "\"%s\"", no[i]);
        cr_assert_eq(v, 0, "\"%s\"", no[i]);
    }
    for (size_t i = 0; i < COUNT(bad); i++) {
        int v = 7;
        cr_assert_eq(gshmemi_env_parse_bool(bad[i], &v), GSHMEMX_ERR_CONFIG, "\"%s\" accepted", bad[i]);
        cr_assert_eq(v, 7);
    }
}

/* ---- parse_seconds ---- */

Test(env, parse_seconds)
{
    static const struct {
        const char *text;
        double value;
    } good[] = {{"0", 0.0},         {"600", 600.0}, {"1.5", 1.5},   {"0.001", 0.001}, {"1e3", 1000.0},
                {"2.5E1", 25.0},    {".5", 0.5},    {"5.", 5.0},    {"1e-3", 0.001},  {"2E+2", 200.0},
                {"1e300", 1e9},     {"86400000000", 1e9}, {"1e999", 1e9}}; /* past 1e9 s: 1e9, "never" either way */
    for (size_t i = 0; i < COUNT(good); i++) {
        double v = -7.0;
        cr_assert_eq(gshmemi_env_parse_seconds(good[i].text, &v), 0, "\"%s\"", good[i].text);
        cr_assert_float_eq(v, good[i].value, 1e-12, "\"%s\" gave %g", good[i].text, v);
    }
}

Test(env, parse_seconds_rejects_negative_nonfinite_garbage)
{
    static const char *const bad[] = {
        "-1", "-0.5", "-1e-3", "nan", "NaN", "-nan", "inf", "INF", "-inf", "infinity",
        "", "abc", "5s", "10 ", "1.2.3", "one", " 5", "0x10", "0x1p4", "-0", "+5", ".", "1e", "e3", "1e+",
    };
    for (size_t i = 0; i < COUNT(bad); i++) {
        double v = -7.0;
        cr_assert_eq(gshmemi_env_parse_seconds(bad[i], &v), GSHMEMX_ERR_CONFIG, "\"%s\" accepted", bad[i]);
        cr_assert_eq(v, -7.0, "\"%s\" wrote the output", bad[i]);
    }
}

/* ---- parse_enum ---- */

Test(env, parse_enum_case_insensitive)
{
    static const struct {
        const char *text;
        int index;
    } good[] = {{"auto", 0}, {"AUTO", 0}, {"device", 1}, {"DeViCe", 1}, {"host", 2}, {"Host", 2}};
    static const char *const bad[] = {"", "aut", "autox", "hos", "hostt", "auto|device", "|", "device ", " host"};
    for (size_t i = 0; i < COUNT(good); i++) {
        int v = -7;
        cr_assert_eq(gshmemi_env_parse_enum(good[i].text, "auto|device|host", &v), 0, "\"%s\"", good[i].text);
        cr_assert_eq(v, good[i].index, "\"%s\"", good[i].text);
    }
    for (size_t i = 0; i < COUNT(bad); i++) {
        int v = -7;
        cr_assert_eq(gshmemi_env_parse_enum(bad[i], "auto|device|host", &v), GSHMEMX_ERR_CONFIG,
                     "\"%s\" accepted", bad[i]);
        cr_assert_eq(v, -7);
    }
    int v = -7;
    cr_assert_eq(gshmemi_env_parse_enum("only", "only", &v), 0);
    cr_assert_eq(v, 0);
    cr_assert_eq(gshmemi_env_parse_enum("trace", "NONE|WARN|INFO|TRACE", &v), 0);
    cr_assert_eq(v, 3);
}

/* ---- gshmemi_env_load through a test table ---- */

struct kv {
    const char *name, *value;
};

static const struct kv *lookup_table;
static size_t lookup_len;
static unsigned lookup_calls[64];

static const char *table_lookup(const char *name)
{
    for (size_t i = 0; i < gshmemi_env_row_count() && i < COUNT(lookup_calls); i++)
        if (strcmp(gshmemi_env_row(i)->name, name) == 0) lookup_calls[i]++;
    for (size_t i = 0; i < lookup_len; i++)
        if (strcmp(lookup_table[i].name, name) == 0) return lookup_table[i].value;
    return NULL;
}

static void use_table(const struct kv *t, size_t n)
{
    lookup_table = t;
    lookup_len = n;
    memset(lookup_calls, 0, sizeof(lookup_calls));
}

static size_t row_index(const char *name)
{
    for (size_t i = 0; i < gshmemi_env_row_count(); i++)
        if (strcmp(gshmemi_env_row(i)->name, name) == 0) return i;
    cr_assert_fail("no row %s", name);
    return 0;
}

static void assert_defaults(const struct gshmemi_env *e)
{
    cr_assert_eq(e->symmetric_size, (size_t)256 << 20);
    cr_assert_eq(e->heap, GSHMEMI_HEAP_AUTO);
    cr_assert_eq(e->hugepages, GSHMEMI_HUGEPAGES_AUTO);
    cr_assert_float_eq(e->timeout, 600.0, 1e-12);
    cr_assert_eq(e->check, 0);
    cr_assert_eq(e->debug, GSHMEMI_LOG_WARN);
    cr_assert_str_eq(e->debug_subsys, "ALL");
    cr_assert_str_eq(e->debug_file, "");
    cr_assert_eq(e->info, 0);
    cr_assert_eq(e->bootstrap, GSHMEMI_BOOTSTRAP_AUTO);
    cr_assert_str_eq(e->bootstrap_root, "");
    cr_assert_eq(e->rank, -1);
    cr_assert_eq(e->nranks, 0);
    cr_assert_str_eq(e->job_id, "");
    cr_assert_str_eq(e->node_id, "");
}

Test(env, load_defaults_when_unset)
{
    struct gshmemi_env e;
    char err[256] = "untouched";
    use_table(NULL, 0);
    memset(&e, 0x5A, sizeof(e));
    cr_assert_eq(gshmemi_env_load(&e, table_lookup, err, sizeof(err)), 0);
    assert_defaults(&e);
    /* Every variable of the table was asked for, once. */
    for (size_t i = 0; i < gshmemi_env_row_count(); i++)
        cr_assert_eq(lookup_calls[i], 1, "%s looked up %u times", gshmemi_env_row(i)->name, lookup_calls[i]);
}

Test(env, load_without_lookup_gives_defaults)
{
    struct gshmemi_env e;
    memset(&e, 0x5A, sizeof(e));
    cr_assert_eq(gshmemi_env_load(&e, NULL, NULL, 0), 0);
    assert_defaults(&e);
}

Test(env, load_every_variable)
{
    static const struct kv table[] = {
        {"GSHMEM_SYMMETRIC_SIZE", "1GiB"},     {"GSHMEM_HEAP", "Host"},
        {"GSHMEM_HUGEPAGES", "OFF"},           {"GSHMEM_TIMEOUT", "2.5"},
        {"GSHMEM_CHECK", "yes"},               {"GSHMEM_DEBUG", "trace"},
        {"GSHMEM_DEBUG_SUBSYS", "INIT,HEAP"},  {"GSHMEM_DEBUG_FILE", "/tmp/gshmem.%r.log"},
        {"GSHMEM_INFO", "1"},                  {"GSHMEM_BOOTSTRAP", "single"},
        {"GSHMEM_BOOTSTRAP_ROOT", "h1:4242"},  {"GSHMEM_RANK", "3"},
        {"GSHMEM_NRANKS", "8"},                {"GSHMEM_JOB_ID", "job-17"},
        {"GSHMEM_NODE_ID", "node-a"},          {"OTHER_VARIABLE", "ignored"},
    };
    struct gshmemi_env e;
    char err[256] = "";
    use_table(table, COUNT(table));
    cr_assert_eq(gshmemi_env_load(&e, table_lookup, err, sizeof(err)), 0, "%s", err);
    cr_assert_eq(e.symmetric_size, (size_t)1 << 30);
    cr_assert_eq(e.heap, GSHMEMI_HEAP_HOST);
    cr_assert_eq(e.hugepages, GSHMEMI_HUGEPAGES_OFF);
    cr_assert_float_eq(e.timeout, 2.5, 1e-12);
    cr_assert_eq(e.check, 1);
    cr_assert_eq(e.debug, GSHMEMI_LOG_TRACE);
    cr_assert_eq(e.info, 1);
    cr_assert_eq(e.bootstrap, GSHMEMI_BOOTSTRAP_SINGLE);
    cr_assert_eq(e.rank, 3);
    cr_assert_eq(e.nranks, 8);
    /* Strings point into the lookup's storage. */
    cr_assert_eq(e.debug_subsys, table[6].value);
    cr_assert_eq(e.debug_file, table[7].value);
    cr_assert_eq(e.bootstrap_root, table[10].value);
    cr_assert_eq(e.job_id, table[13].value);
    cr_assert_eq(e.node_id, table[14].value);
}

Test(env, enum_rows_match_enum_constants)
{
    static const struct {
        const char *row, *text;
        int value;
    } cases[] = {
        {"GSHMEM_HEAP", "auto", GSHMEMI_HEAP_AUTO},
        {"GSHMEM_HEAP", "device", GSHMEMI_HEAP_DEVICE},
        {"GSHMEM_HEAP", "host", GSHMEMI_HEAP_HOST},
        {"GSHMEM_HUGEPAGES", "auto", GSHMEMI_HUGEPAGES_AUTO},
        {"GSHMEM_HUGEPAGES", "on", GSHMEMI_HUGEPAGES_ON},
        {"GSHMEM_HUGEPAGES", "off", GSHMEMI_HUGEPAGES_OFF},
        {"GSHMEM_BOOTSTRAP", "auto", GSHMEMI_BOOTSTRAP_AUTO},
        {"GSHMEM_BOOTSTRAP", "tcp", GSHMEMI_BOOTSTRAP_TCP},
        {"GSHMEM_BOOTSTRAP", "pmix", GSHMEMI_BOOTSTRAP_PMIX},
        {"GSHMEM_BOOTSTRAP", "k8s", GSHMEMI_BOOTSTRAP_K8S},
        {"GSHMEM_BOOTSTRAP", "uid", GSHMEMI_BOOTSTRAP_UID},
        {"GSHMEM_BOOTSTRAP", "single", GSHMEMI_BOOTSTRAP_SINGLE},
        /* init.c hands GSHMEM_DEBUG's index to the logger as the level. */
        {"GSHMEM_DEBUG", "none", GSHMEMI_LOG_ERROR},
        {"GSHMEM_DEBUG", "warn", GSHMEMI_LOG_WARN},
        {"GSHMEM_DEBUG", "info", GSHMEMI_LOG_INFO},
        {"GSHMEM_DEBUG", "trace", GSHMEMI_LOG_TRACE},
    };
    for (size_t i = 0; i < COUNT(cases); i++) {
        int v = -7;
        const struct gshmemi_env_row *row = gshmemi_env_row(row_index(cases[i].row));
        cr_assert_str_eq(row->type, "ENUM");
        cr_assert_eq(gshmemi_env_parse_enum(cases[i].text, row->accepted, &v), 0, "%s=%s", cases[i].row,
                     cases[i].text);
        cr_assert_eq(v, cases[i].value, "%s=%s", cases[i].row, cases[i].text);
    }
}

/* A bad value fails the load, and the message names the variable, the value and what is accepted. */
static void assert_rejected(const char *name, const char *value)
{
    const struct kv table[] = {{name, value}};
    struct gshmemi_env e;
    char err[512];
    memset(err, 'x', sizeof(err));
    use_table(table, 1);
    cr_assert_eq(gshmemi_env_load(&e, table_lookup, err, sizeof(err)), GSHMEMX_ERR_CONFIG, "%s=%s accepted", name,
                 value);
    cr_assert_not_null(memchr(err, '\0', sizeof(err)), "message not terminated");
    const struct gshmemi_env_row *row = gshmemi_env_row(row_index(name));
    char assignment[256];
    snprintf(assignment, sizeof(assignment), "%s=%s", name, value);
    cr_assert_not_null(strstr(err, assignment), "\"%s\" lacks \"%s\"", err, assignment);
    cr_assert_not_null(strstr(err, row->accepted), "\"%s\" lacks the accepted values \"%s\"", err, row->accepted);
}

Test(env, load_rejects_bad_values_with_message)
{
    static const struct kv bad[] = {
        {"GSHMEM_SYMMETRIC_SIZE", "12XB"},
        {"GSHMEM_SYMMETRIC_SIZE", ""},
        {"GSHMEM_SYMMETRIC_SIZE", "99999999999T"},
        {"GSHMEM_TIMEOUT", "-1"},
        {"GSHMEM_TIMEOUT", "nan"},
        {"GSHMEM_TIMEOUT", "soon"},
        {"GSHMEM_HEAP", "gpu"},
        {"GSHMEM_HUGEPAGES", "maybe"},
        {"GSHMEM_CHECK", "2"},
        {"GSHMEM_INFO", "verbose"},
        {"GSHMEM_DEBUG", "LOUD"},
        {"GSHMEM_BOOTSTRAP", "mpi"},
        {"GSHMEM_RANK", "-2"},
        {"GSHMEM_RANK", "three"},
        {"GSHMEM_RANK", "99999999999999999999999"},
        {"GSHMEM_NRANKS", "4x"},
    };
    for (size_t i = 0; i < COUNT(bad); i++) assert_rejected(bad[i].name, bad[i].value);
}

/* INT bounded by "a..b, a power of two": the range and the power of two both hold. */
Test(env, proxy_ring_slots_takes_powers_of_two_in_range)
{
    static const char *const good[] = {"128", "256", "4096", "65536", "1048576"};
    static const char *const bad[] = {"0", "64", "100", "127", "129", "1000", "4095", "2097152", "-128", "4096x", ""};
    for (size_t i = 0; i < COUNT(good); i++) {
        const struct kv table[] = {{"GSHMEM_PROXY_RING_SLOTS", good[i]}};
        struct gshmemi_env e;
        use_table(table, 1);
        cr_assert_eq(gshmemi_env_load(&e, table_lookup, NULL, 0), 0, "GSHMEM_PROXY_RING_SLOTS=%s refused", good[i]);
        cr_assert_eq(e.proxy_ring_slots, strtol(good[i], NULL, 10));
    }
    for (size_t i = 0; i < COUNT(bad); i++) assert_rejected("GSHMEM_PROXY_RING_SLOTS", bad[i]);
    struct gshmemi_env e;
    use_table(NULL, 0);
    cr_assert_eq(gshmemi_env_load(&e, table_lookup, NULL, 0), 0);
    cr_assert_eq(e.proxy_ring_slots, 4096);
}

/* SIZE bounded by "bytes up to N, ...": N itself is accepted, one byte more is not. */
Test(env, tcp_sockbuf_takes_sizes_up_to_1g)
{
    static const struct {
        const char *text;
        size_t bytes;
    } good[] = {{"0", 0}, {"64K", 65536}, {"4m", 4u << 20}, {"1G", 1u << 30}, {"1073741824", 1u << 30}};
    static const char *const bad[] = {"1073741825", "2G", "1T", "-1", "64Q", ""};
    for (size_t i = 0; i < COUNT(good); i++) {
        const struct kv table[] = {{"GSHMEM_TCP_SOCKBUF", good[i].text}};
        struct gshmemi_env e;
        use_table(table, 1);
        cr_assert_eq(gshmemi_env_load(&e, table_lookup, NULL, 0), 0, "GSHMEM_TCP_SOCKBUF=%s refused", good[i].text);
        cr_assert_eq(e.tcp_sockbuf, good[i].bytes, "GSHMEM_TCP_SOCKBUF=%s", good[i].text);
    }
    for (size_t i = 0; i < COUNT(bad); i++) assert_rejected("GSHMEM_TCP_SOCKBUF", bad[i]);
    struct gshmemi_env e;
    char err[512] = "";
    const struct kv table[] = {{"GSHMEM_TCP_SOCKBUF", "2G"}};
    use_table(table, 1);
    cr_assert_eq(gshmemi_env_load(&e, table_lookup, err, sizeof(err)), GSHMEMX_ERR_CONFIG);
    cr_assert_not_null(strstr(err, "GSHMEM_TCP_SOCKBUF=2G is not valid (accepted: bytes up to 1G"), "%s", err);
    use_table(NULL, 0);
    cr_assert_eq(gshmemi_env_load(&e, table_lookup, NULL, 0), 0);
    cr_assert_eq(e.tcp_sockbuf, 0);
}

Test(env, load_error_names_size_and_timeout)
{
    static const struct kv size_bad[] = {{"GSHMEM_SYMMETRIC_SIZE", "12XB"}};
    static const struct kv timeout_bad[] = {{"GSHMEM_TIMEOUT", "-1"}};
    struct gshmemi_env e;
    char err[512] = "";
    use_table(size_bad, 1);
    cr_assert_eq(gshmemi_env_load(&e, table_lookup, err, sizeof(err)), GSHMEMX_ERR_CONFIG);
    cr_assert_not_null(strstr(err, "GSHMEM_SYMMETRIC_SIZE=12XB"), "%s", err);
    cr_assert_not_null(strstr(err, "K/M/G/T"), "%s", err);
    use_table(timeout_bad, 1);
    cr_assert_eq(gshmemi_env_load(&e, table_lookup, err, sizeof(err)), GSHMEMX_ERR_CONFIG);
    cr_assert_not_null(strstr(err, "GSHMEM_TIMEOUT=-1"), "%s", err);
    cr_assert_not_null(strstr(err, "seconds >= 0"), "%s", err);
}

Test(env, load_error_without_buffer_or_truncated)
{
    static const struct kv bad[] = {{"GSHMEM_TIMEOUT", "-1"}};
    struct gshmemi_env e;
    char err[16];
    use_table(bad, 1);
    cr_assert_eq(gshmemi_env_load(&e, table_lookup, NULL, 0), GSHMEMX_ERR_CONFIG);
    memset(err, 'x', sizeof(err));
    /* Only the first 8 bytes are the buffer; the rest must stay untouched. */
    cr_assert_eq(gshmemi_env_load(&e, table_lookup, err, 8), GSHMEMX_ERR_CONFIG);
    cr_assert_eq(strlen(err), 7);
    cr_assert_eq(strncmp(err, "GSHMEM_", 7), 0);
    for (size_t i = 8; i < sizeof(err); i++) cr_assert_eq(err[i], 'x');
}

/* env.h: GSHMEM_NRANKS, GSHMEM_PPN and GSHMEM_RANK are ints in the library: a value past
 * INT_MAX was once cut to its low 32 bits (4294967297 PEs became a 1-PE job on rank 0). */
Test(env, nranks_rejects_negative)
{
    assert_rejected("GSHMEM_NRANKS", "-1");
}

/* INT and PE values are digits alone, like SIZE and SECONDS: strtol took " 5" and "+5". */
Test(env, ints_reject_spaces_and_plus)
{
    static const char *const bad[] = {" 5", "\t5", "+5", "5 ", "--1", "- 1", "-", ""};
    for (size_t i = 0; i < COUNT(bad); i++) {
        assert_rejected("GSHMEM_NRANKS", bad[i]);
        assert_rejected("GSHMEM_RANK", bad[i]);
        assert_rejected("GSHMEM_PROXY_RING_SLOTS", bad[i]);
    }
}

Test(env, pe_counts_reject_values_past_int_max)
{
    assert_rejected("GSHMEM_NRANKS", "4294967297");
    assert_rejected("GSHMEM_NRANKS", "2147483648");
    assert_rejected("GSHMEM_PPN", "4294967298");
    assert_rejected("GSHMEM_RANK", "4294967296");
    assert_rejected("GSHMEM_RANK", "-2");
    static const struct kv table[] = {{"GSHMEM_RANK", "2147483646"}, {"GSHMEM_NRANKS", "2147483647"}};
    struct gshmemi_env e;
    use_table(table, COUNT(table));
    cr_assert_eq(gshmemi_env_load(&e, table_lookup, NULL, 0), 0);
    cr_assert_eq(e.rank, 2147483646);
    cr_assert_eq(e.nranks, 2147483647);
}

Test(env, rank_accepts_minus_one)
{
    static const struct kv table[] = {{"GSHMEM_RANK", "-1"}, {"GSHMEM_NRANKS", "0"}};
    struct gshmemi_env e;
    use_table(table, COUNT(table));
    cr_assert_eq(gshmemi_env_load(&e, table_lookup, NULL, 0), 0);
    cr_assert_eq(e.rank, -1);
    cr_assert_eq(e.nranks, 0);
}

/* ---- row API ---- */

static const char *const types[] = {"BOOL", "INT", "PE", "SIZE", "SECONDS", "STRING", "ENUM"};

static void assert_default_parses(const struct gshmemi_env_row *row)
{
    const char *def = row->def;
    if (strcmp(row->type, "BOOL") == 0) {
        int v;
        cr_assert_eq(gshmemi_env_parse_bool(def, &v), 0, "%s default %s", row->name, def);
    } else if (strcmp(row->type, "SIZE") == 0) {
        size_t v;
        cr_assert_eq(gshmemi_env_parse_size(def, &v), 0, "%s default %s", row->name, def);
    } else if (strcmp(row->type, "SECONDS") == 0) {
        double v;
        cr_assert_eq(gshmemi_env_parse_seconds(def, &v), 0, "%s default %s", row->name, def);
    } else if (strcmp(row->type, "ENUM") == 0) {
        int v;
        cr_assert_eq(gshmemi_env_parse_enum(def, row->accepted, &v), 0, "%s default %s", row->name, def);
    } else if (strcmp(row->type, "INT") == 0) {
        char *end;
        long v = strtol(def, &end, 10);
        cr_assert(*def && *end == '\0' && v >= -1, "%s default %s", row->name, def);
    }
}

Test(env, rows_are_well_formed)
{
    size_t n = gshmemi_env_row_count();
    cr_assert_geq(n, 15);
    for (size_t i = 0; i < n; i++) {
        const struct gshmemi_env_row *row = gshmemi_env_row(i);
        cr_assert_not_null(row);
        cr_assert_not_null(row->name);
        cr_assert_eq(strncmp(row->name, "GSHMEM_", 7), 0, "%s", row->name);
        cr_assert_gt(strlen(row->name), 7);
        for (const char *p = row->name; *p; p++)
            cr_assert((*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_', "%s", row->name);
        cr_assert_not_null(row->help);
        cr_assert_gt(strlen(row->help), 0, "%s has no help", row->name);
        cr_assert_not_null(row->accepted);
        cr_assert_gt(strlen(row->accepted), 0, "%s has no accepted text", row->name);
        cr_assert_not_null(row->def);
        int known = 0;
        for (size_t t = 0; t < COUNT(types); t++) known |= strcmp(row->type, types[t]) == 0;
        cr_assert(known, "%s has type %s", row->name, row->type);
        assert_default_parses(row);
        for (size_t j = 0; j < i; j++)
            cr_assert_str_neq(gshmemi_env_row(j)->name, row->name, "%s twice", row->name);
    }
    cr_assert_null(gshmemi_env_row(n));
    cr_assert_null(gshmemi_env_row((size_t)-1));
}

Test(env, raw_reads_the_process_environment)
{
    size_t check = row_index("GSHMEM_CHECK"), size = row_index("GSHMEM_SYMMETRIC_SIZE");
    cr_assert_eq(setenv("GSHMEM_CHECK", "on", 1), 0);
    cr_assert_eq(unsetenv("GSHMEM_SYMMETRIC_SIZE"), 0);
    cr_assert_str_eq(gshmemi_env_raw(check), "on");
    cr_assert_null(gshmemi_env_raw(size));
    cr_assert_null(gshmemi_env_raw(gshmemi_env_row_count()));
    cr_assert_str_eq(gshmemi_env_getenv("GSHMEM_CHECK"), "on");
    struct gshmemi_env e;
    cr_assert_eq(gshmemi_env_load(&e, gshmemi_env_getenv, NULL, 0), 0);
    cr_assert_eq(e.check, 1);
}
