#include "core/check.h"

#include <stdarg.h>

/* Level and item columns; fix and detail lines start where the item's text does. */
#define CHECK_ITEM_WIDTH 13
#define CHECK_TEXT_COLUMN (4 + 2 + CHECK_ITEM_WIDTH + 2)

static const char *check_level_name(int level)
{
    switch (level) {
    case GSHMEMI_CHECK_OK: return "OK";
    case GSHMEMI_CHECK_WARN: return "WARN";
    default: return "FAIL";
    }
}

int gshmemi_check_line(FILE *out, int level, const char *item, const char *fmt, ...)
{
    va_list ap;
    fprintf(out, "%-4s  %-*s  ", check_level_name(level), CHECK_ITEM_WIDTH, item);
    va_start(ap, fmt);
    vfprintf(out, fmt, ap);
    va_end(ap);
    fputc('\n', out);
    return level == GSHMEMI_CHECK_FAIL;
}

void gshmemi_check_fix(FILE *out, const char *fmt, ...)
{
    va_list ap;
    fprintf(out, "%*sfix: ", CHECK_TEXT_COLUMN, "");
    va_start(ap, fmt);
    vfprintf(out, fmt, ap);
    va_end(ap);
    fputc('\n', out);
}

void gshmemi_check_detail(FILE *out, const char *fmt, ...)
{
    va_list ap;
    fprintf(out, "%*s", CHECK_TEXT_COLUMN, "");
    va_start(ap, fmt);
    vfprintf(out, fmt, ap);
    va_end(ap);
    fputc('\n', out);
}
