/* Logging: level and subsystem filters, line format, GSHMEM_DEBUG_FILE destinations.
 * Criterion runs each test in its own process, so each starts from the default state. */
#include "core/log.h"

#include <gshmem/status.h>

#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *read_file(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    cr_assert_not_null(buf);
    for (size_t n; (n = fread(buf + len, 1, cap - len - 1, f)) > 0;) {
        len += n;
        if (cap - len - 1 == 0) {
            cap *= 2;
            buf = realloc(buf, cap);
            cr_assert_not_null(buf);
        }
    }
    buf[len] = '\0';
    fclose(f);
    return buf;
}

static size_t count_lines(const char *text)
{
    size_t n = 0;
    for (; *text; text++) n += *text == '\n';
    return n;
}

/* stderr captured into a temporary file. */
static int saved_stderr = -1;
static char capture_path[64];

static void capture_begin(void)
{
    strcpy(capture_path, "/tmp/gshmem-log-stderr-XXXXXX");
    int fd = mkstemp(capture_path);
    cr_assert_geq(fd, 0);
    fflush(stderr);
    saved_stderr = dup(2);
    cr_assert_geq(saved_stderr, 0);
    cr_assert_geq(dup2(fd, 2), 0);
    close(fd);
}

static char *capture_end(void)
{
    fflush(stderr);
    dup2(saved_stderr, 2);
    close(saved_stderr);
    char *text = read_file(capture_path);
    cr_assert_not_null(text);
    unlink(capture_path);
    return text;
}

static char tmpdir[64];

static void make_tmpdir(void)
{
    strcpy(tmpdir, "/tmp/gshmem-log-XXXXXX");
    cr_assert_not_null(mkdtemp(tmpdir));
}

static void remove_file_and_tmpdir(const char *path)
{
    if (path) unlink(path);
    rmdir(tmpdir);
}

static void assert_subsys_enabled(int level, unsigned expected_mask)
{
    for (int s = 0; s < GSHMEMI_SUBSYS_COUNT; s++)
        cr_assert_eq(gshmemi_log_enabled(level, s), (int)((expected_mask >> s) & 1u), "level %d subsystem %d",
                     level, s);
}

#define ALL_SUBSYS ((1u << GSHMEMI_SUBSYS_COUNT) - 1)
#define BIT(name) (1u << GSHMEMI_SUBSYS_##name)

Test(log, defaults_print_errors_and_warnings_only)
{
    assert_subsys_enabled(GSHMEMI_LOG_ERROR, ALL_SUBSYS);
    assert_subsys_enabled(GSHMEMI_LOG_WARN, ALL_SUBSYS);
    assert_subsys_enabled(GSHMEMI_LOG_INFO, 0);
    assert_subsys_enabled(GSHMEMI_LOG_TRACE, 0);
}

Test(log, level_gates_lines)
{
    cr_assert_eq(gshmemi_log_configure(GSHMEMI_LOG_ERROR, "ALL", NULL), 0);
    assert_subsys_enabled(GSHMEMI_LOG_ERROR, ALL_SUBSYS);
    assert_subsys_enabled(GSHMEMI_LOG_WARN, 0);
    cr_assert_eq(gshmemi_log_configure(GSHMEMI_LOG_INFO, "ALL", NULL), 0);
    assert_subsys_enabled(GSHMEMI_LOG_INFO, ALL_SUBSYS);
    assert_subsys_enabled(GSHMEMI_LOG_TRACE, 0);
    cr_assert_eq(gshmemi_log_configure(GSHMEMI_LOG_TRACE, "ALL", NULL), 0);
    assert_subsys_enabled(GSHMEMI_LOG_TRACE, ALL_SUBSYS);
}

Test(log, subsystem_list)
{
    cr_assert_eq(gshmemi_log_configure(GSHMEMI_LOG_TRACE, "INIT,HEAP", NULL), 0);
    assert_subsys_enabled(GSHMEMI_LOG_TRACE, BIT(INIT) | BIT(HEAP));
    assert_subsys_enabled(GSHMEMI_LOG_INFO, BIT(INIT) | BIT(HEAP));
    /* Errors and warnings ignore the subsystem filter. */
    assert_subsys_enabled(GSHMEMI_LOG_WARN, ALL_SUBSYS);
    assert_subsys_enabled(GSHMEMI_LOG_ERROR, ALL_SUBSYS);
    cr_assert_eq(gshmemi_log_configure(GSHMEMI_LOG_INFO, "cuda,transport,Rma", NULL), 0);
    assert_subsys_enabled(GSHMEMI_LOG_INFO, BIT(CUDA) | BIT(TRANSPORT) | BIT(RMA));
    assert_subsys_enabled(GSHMEMI_LOG_TRACE, 0);
}

Test(log, subsystem_exclusion)
{
    cr_assert_eq(gshmemi_log_configure(GSHMEMI_LOG_TRACE, "^RMA", NULL), 0);
    assert_subsys_enabled(GSHMEMI_LOG_TRACE, ALL_SUBSYS & ~BIT(RMA));
    cr_assert_eq(gshmemi_log_configure(GSHMEMI_LOG_INFO, "^RMA,AMO,SYNC", NULL), 0);
    assert_subsys_enabled(GSHMEMI_LOG_INFO, ALL_SUBSYS & ~(BIT(RMA) | BIT(AMO) | BIT(SYNC)));
    assert_subsys_enabled(GSHMEMI_LOG_WARN, ALL_SUBSYS);
}

Test(log, subsystem_all)
{
    static const char *const all[] = {"ALL", "all", "", NULL, "INIT,ALL"};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
        cr_assert_eq(gshmemi_log_configure(GSHMEMI_LOG_ERROR, "INIT", NULL), 0);
        cr_assert_eq(gshmemi_log_configure(GSHMEMI_LOG_TRACE, all[i], NULL), 0, "\"%s\"", all[i] ? all[i] : "NULL");
        assert_subsys_enabled(GSHMEMI_LOG_TRACE, ALL_SUBSYS);
    }
}

Test(log, subsystem_bad_name_rejected)
{
    static const char *const bad[] = {"BOGUS", "INIT,BOGUS", "^NOPE", "RMAX", "INI", "INIT;HEAP", "ALLX"};
    cr_assert_eq(gshmemi_log_configure(GSHMEMI_LOG_INFO, "HEAP", NULL), 0);
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        capture_begin();
        int rc = gshmemi_log_configure(GSHMEMI_LOG_TRACE, bad[i], NULL);
        char *err = capture_end();
        cr_assert_eq(rc, GSHMEMX_ERR_CONFIG, "\"%s\" accepted", bad[i]);
        /* The reason is logged, naming the variable and its value. */
        char expect[128];
        snprintf(expect, sizeof(expect), "GSHMEM_DEBUG_SUBSYS=%s", bad[i]);
        cr_assert_not_null(strstr(err, expect), "\"%s\" lacks \"%s\"", err, expect);
        free(err);
        /* The earlier configuration stays. */
        assert_subsys_enabled(GSHMEMI_LOG_INFO, BIT(HEAP));
        assert_subsys_enabled(GSHMEMI_LOG_TRACE, 0);
    }
}

Test(log, line_format_on_stderr)
{
    gshmemi_log_set_pe(3);
    capture_begin();
    GSHMEMI_WARN(HEAP, "value %d of %s", 42, "fourty-two");
    GSHMEMI_INFO(RMA, "this INFO line is filtered");
    GSHMEMI_ERROR(BOOT, "an error %x", 0xbeefu);
    char *out = capture_end();
    cr_assert_eq(count_lines(out), 2, "%s", out);
    char *second = strchr(out, '\n') + 1;
    cr_assert_not_null(strstr(out, "pe 3"), "%s", out);
    cr_assert_not_null(strstr(out, "WARN HEAP: value 42 of fourty-two\n"), "%s", out);
    cr_assert_not_null(strstr(second, "pe 3"), "%s", out);
    cr_assert_not_null(strstr(second, "ERROR BOOT: an error beef\n"), "%s", out);
    cr_assert_null(strstr(out, "filtered"), "%s", out);
    free(out);
}

Test(log, long_message_truncated)
{
    enum { LEN = 10000 };
    char *big = malloc(LEN + 1);
    cr_assert_not_null(big);
    for (size_t i = 0; i < LEN; i++) big[i] = (char)('a' + i % 26);
    big[LEN] = '\0';
    capture_begin();
    GSHMEMI_WARN(ALLOC, "%s", big);
    char *out = capture_end();
    cr_assert_eq(count_lines(out), 1);
    cr_assert_lt(strlen(out), LEN);
    cr_assert_not_null(strstr(out, "WARN ALLOC: abcdefghij"));
    free(out);
    free(big);
}

Test(log, debug_file_gets_pe_and_message)
{
    make_tmpdir();
    char pattern[128], path[192];
    snprintf(pattern, sizeof(pattern), "%s/gshmem.%%p.%%r.log", tmpdir);
    snprintf(path, sizeof(path), "%s/gshmem.%d.5.log", tmpdir, (int)getpid());
    gshmemi_log_set_pe(5);
    cr_assert_eq(gshmemi_log_configure(GSHMEMI_LOG_INFO, "INIT,HEAP", pattern), 0);
    capture_begin();
    GSHMEMI_INFO(HEAP, "heap line %d", 7);
    GSHMEMI_INFO(RMA, "filtered rma line");
    GSHMEMI_TRACE(HEAP, "filtered trace line");
    GSHMEMI_WARN(RMA, "warning line");
    char *err = capture_end();
    cr_assert_str_eq(err, "", "stderr got: %s", err);
    free(err);
    char *text = read_file(path);
    cr_assert_not_null(text, "no file %s", path);
    cr_assert_eq(count_lines(text), 2, "%s", text);
    cr_assert_not_null(strstr(text, "pe 5"), "%s", text);
    cr_assert_not_null(strstr(text, "INFO HEAP: heap line 7\n"), "%s", text);
    cr_assert_not_null(strstr(text, "WARN RMA: warning line\n"), "%s", text);
    cr_assert_null(strstr(text, "filtered"), "%s", text);
    free(text);
    /* After closing, lines go to stderr again. */
    gshmemi_log_close();
    capture_begin();
    GSHMEMI_WARN(INIT, "back on stderr");
    err = capture_end();
    cr_assert_not_null(strstr(err, "WARN INIT: back on stderr"), "%s", err);
    free(err);
    text = read_file(path);
    cr_assert_null(strstr(text, "back on stderr"));
    free(text);
    remove_file_and_tmpdir(path);
}

Test(log, debug_file_appends_and_expands_host)
{
    make_tmpdir();
    char host[256] = "";
    cr_assert_eq(gethostname(host, sizeof(host) - 1), 0);
    char pattern[128], path[512];
    snprintf(pattern, sizeof(pattern), "%s/log.%%h.%%x%%", tmpdir);
    /* Unknown escapes and a trailing % stay as written. */
    snprintf(path, sizeof(path), "%s/log.%s.%%x%%", tmpdir, host);
    cr_assert_eq(gshmemi_log_configure(GSHMEMI_LOG_WARN, "ALL", pattern), 0);
    GSHMEMI_WARN(ENV, "first");
    cr_assert_eq(gshmemi_log_configure(GSHMEMI_LOG_WARN, "ALL", pattern), 0);
    GSHMEMI_WARN(ENV, "second");
    gshmemi_log_close();
    char *text = read_file(path);
    cr_assert_not_null(text, "no file %s", path);
    cr_assert_eq(count_lines(text), 2, "%s", text);
    char *first = strstr(text, "ENV: first\n"), *second = strstr(text, "ENV: second\n");
    cr_assert(first && second && first < second, "%s", text);
    free(text);
    remove_file_and_tmpdir(path);
}

Test(log, debug_file_unopenable_rejected)
{
    make_tmpdir();
    char pattern[128];
    snprintf(pattern, sizeof(pattern), "%s/missing-dir/log.%%r", tmpdir);
    capture_begin();
    int rc = gshmemi_log_configure(GSHMEMI_LOG_WARN, "ALL", pattern);
    char *err = capture_end();
    cr_assert_eq(rc, GSHMEMX_ERR_CONFIG);
    cr_assert_not_null(strstr(err, "GSHMEM_DEBUG_FILE="), "%s", err);
    free(err);
    remove_file_and_tmpdir(NULL);
}

/* init.c configures the log (GSHMEM_DEBUG_FILE) before the bootstrap knows the PE and
 * calls gshmemi_log_set_pe afterwards; %r must still name the PE, as in GSHMEM_DEBUG_FILE's
 * documentation ("%r PE"), or every PE shares one file named with -1. */
Test(log, debug_file_rank_known_after_configure)
{
    make_tmpdir();
    char pattern[128], path[192], wrong[192];
    snprintf(pattern, sizeof(pattern), "%s/log.%%r", tmpdir);
    snprintf(path, sizeof(path), "%s/log.5", tmpdir);
    snprintf(wrong, sizeof(wrong), "%s/log.-1", tmpdir);
    cr_assert_eq(gshmemi_log_configure(GSHMEMI_LOG_WARN, "ALL", pattern), 0);
    gshmemi_log_set_pe(5);
    GSHMEMI_WARN(INIT, "after set_pe");
    gshmemi_log_close();
    char *text = read_file(path);
    char *misplaced = read_file(wrong);
    unlink(wrong);
    remove_file_and_tmpdir(path);
    cr_assert_not_null(text, "no %s; the line went to %s", path, misplaced ? wrong : "neither file");
    cr_assert_not_null(strstr(text, "pe 5"), "%s", text);
    cr_assert_not_null(strstr(text, "after set_pe"), "%s", text);
    free(text);
    free(misplaced);
}
