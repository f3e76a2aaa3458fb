/* Status codes: every code has its own description and name; unknown codes are labelled so. */
#include <gshmem/status.h>

#include <criterion/criterion.h>

#include <limits.h>
#include <string.h>

struct status_row {
    int value;
    const char *name, *text;
};

static const struct status_row rows[] = {
#define STATUS_ROW(name, value, text) {value, #name, text},
    GSHMEMX_STATUS_TABLE(STATUS_ROW)
#undef STATUS_ROW
};

#define NROWS (sizeof(rows) / sizeof(rows[0]))

Test(status, values_are_contiguous_from_success)
{
    cr_assert_eq(GSHMEMX_SUCCESS, 0);
    cr_assert_eq(NROWS, (size_t)GSHMEMX_STATUS_COUNT);
    for (size_t i = 0; i < NROWS; i++) cr_assert_eq(rows[i].value, (int)i, "%s", rows[i].name);
}

Test(status, every_code_has_a_string_and_name)
{
    for (int s = 0; s < GSHMEMX_STATUS_COUNT; s++) {
        const char *text = gshmemx_strerror(s), *name = gshmemx_status_name(s);
        cr_assert_not_null(text);
        cr_assert_not_null(name);
        cr_assert_gt(strlen(text), 0, "status %d", s);
        cr_assert_str_neq(text, "unknown status", "status %d", s);
        cr_assert_eq(strncmp(name, "GSHMEMX_", 8), 0, "status %d is %s", s, name);
        cr_assert_gt(strlen(name), 8);
        cr_assert_str_neq(name, "GSHMEMX_UNKNOWN", "status %d", s);
    }
}

Test(status, strings_and_names_match_the_table)
{
    for (size_t i = 0; i < NROWS; i++) {
        cr_assert_str_eq(gshmemx_strerror(rows[i].value), rows[i].text);
        cr_assert_str_eq(gshmemx_status_name(rows[i].value), rows[i].name);
    }
    cr_assert_str_eq(gshmemx_status_name(GSHMEMX_ERR_TIMEOUT), "GSHMEMX_ERR_TIMEOUT");
    cr_assert_str_eq(gshmemx_status_name(GSHMEMX_SUCCESS), "GSHMEMX_SUCCESS");
}

Test(status, strings_and_names_are_distinct)
{
    for (int a = 0; a < GSHMEMX_STATUS_COUNT; a++)
        for (int b = a + 1; b < GSHMEMX_STATUS_COUNT; b++) {
            cr_assert_str_neq(gshmemx_strerror(a), gshmemx_strerror(b), "%d and %d", a, b);
            cr_assert_str_neq(gshmemx_status_name(a), gshmemx_status_name(b), "%d and %d", a, b);
        }
}

Test(status, unknown_codes)
{
    static const int unknown[] = {-1, -2, GSHMEMX_STATUS_COUNT, GSHMEMX_STATUS_COUNT + 1, 1000, INT_MIN, INT_MAX};
    for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
        cr_assert_str_eq(gshmemx_strerror(unknown[i]), "unknown status", "%d", unknown[i]);
        cr_assert_str_eq(gshmemx_status_name(unknown[i]), "GSHMEMX_UNKNOWN", "%d", unknown[i]);
    }
}
