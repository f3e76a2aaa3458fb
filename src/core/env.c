/* GSHMEM_* variables: the only place that reads the environment. */
#include "core/env.h"

#include <gshmem/status.h>

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const struct gshmemi_env_row env_rows[] = {
#define GSHMEMI_ENV_ROW(NAME, TYPE, field, def, accepted, help) {"GSHMEM_" #NAME, #TYPE, def, accepted, help},
    GSHMEMI_ENV_TABLE(GSHMEMI_ENV_ROW)
#undef GSHMEMI_ENV_ROW
};

const char *gshmemi_env_getenv(const char *name)
{
    return getenv(name);
}

size_t gshmemi_env_row_count(void)
{
    return sizeof(env_rows) / sizeof(env_rows[0]);
}

const struct gshmemi_env_row *gshmemi_env_row(size_t i)
{
    return i < gshmemi_env_row_count() ? &env_rows[i] : NULL;
}

const char *gshmemi_env_raw(size_t i)
{
    return i < gshmemi_env_row_count() ? getenv(env_rows[i].name) : NULL;
}

const char *gshmemi_env_shown(size_t i)
{
    const char *raw = gshmemi_env_raw(i);
    if (raw && strcmp(env_rows[i].name, "GSHMEM_BOOTSTRAP_SECRET") == 0) return "(set, not shown)";
    return raw;
}

/* Every numeric type takes its digits alone: no spaces or signs around them (strtoull and
 * strtol also took " 5", "+5" and "\t5"), the rule that SECONDS, BOOL and ENUM follow. */
int gshmemi_env_parse_size(const char *text, size_t *out)
{
    const char *p = text;
    if (!isdigit((unsigned char)*p)) return GSHMEMX_ERR_CONFIG;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(p, &end, 10);
    if (errno) return GSHMEMX_ERR_CONFIG;
    unsigned shift = 0;
    switch (toupper((unsigned char)*end)) {
    case 'K': shift = 10; break;
    case 'M': shift = 20; break;
    case 'G': shift = 30; break;
    case 'T': shift = 40; break;
    case 'B': break;
    case '\0': break;
    default: return GSHMEMX_ERR_CONFIG;
    }
    if (shift) {
        end++;
        if (toupper((unsigned char)*end) == 'I') end++;
    }
    if (toupper((unsigned char)*end) == 'B') end++;
    if (*end != '\0') return GSHMEMX_ERR_CONFIG;
    if (shift && v > (UINT64_MAX >> shift)) return GSHMEMX_ERR_CONFIG;
    if ((v << shift) > SIZE_MAX) return GSHMEMX_ERR_CONFIG;
    *out = (size_t)(v << shift);
    return 0;
}

int gshmemi_env_parse_bool(const char *text, int *out)
{
    static const char *const yes[] = {"1", "y", "yes", "true", "on"};
    static const char *const no[] = {"0", "n", "no", "false", "off"};
    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
        if (strcasecmp(text, yes[i]) == 0) return *out = 1, 0;
        if (strcasecmp(text, no[i]) == 0) return *out = 0, 0;
    }
    return GSHMEMX_ERR_CONFIG;
}

/* A decimal: digits, at most one point, an optional exponent (strtod alone also took
 * " 5", "0x10", "0x1p4" and "-0"). Values past 1e9 s (31 years) count as 1e9, so that
 * every conversion to nanoseconds or milliseconds stays defined; both mean "never" in
 * practice. */
int gshmemi_env_parse_seconds(const char *text, double *out)
{
    const char *p = text;
    size_t mantissa = strspn(p, "0123456789");
    p += mantissa;
    if (*p == '.') {
        size_t frac = strspn(p + 1, "0123456789");
        mantissa += frac;
        p += 1 + frac;
    }
    if (mantissa > 0 && (*p == 'e' || *p == 'E')) {
        const char *q = p + 1 + (p[1] == '+' || p[1] == '-');
        size_t exp = strspn(q, "0123456789");
        if (exp > 0) p = q + exp;
    }
    if (mantissa == 0 || *p != '\0') return GSHMEMX_ERR_CONFIG;
    errno = 0;
    char *end;
    double v = strtod(text, &end);
    if (errno == ERANGE && v > 1) v = 1e9, errno = 0; /* "1e999": past 1e9 too */
    if (errno || *end != '\0' || !isfinite(v) || v < 0) return GSHMEMX_ERR_CONFIG;
    *out = v > 1e9 ? 1e9 : v;
    return 0;
}

int gshmemi_env_parse_enum(const char *text, const char *accepted, int *out)
{
    size_t tlen = strlen(text);
    int index = 0;
    for (const char *p = accepted; *p; index++) {
        size_t len = strcspn(p, "|");
        if (len == tlen && strncasecmp(p, text, len) == 0) return *out = index, 0;
        p += len + (p[len] == '|');
    }
    return GSHMEMX_ERR_CONFIG;
}

static int env_parse_long(const char *text, long min, long *out)
{
    if (!isdigit((unsigned char)text[text[0] == '-' && min < 0])) return GSHMEMX_ERR_CONFIG;
    errno = 0;
    char *end;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end != '\0' || v < min) return GSHMEMX_ERR_CONFIG;
    *out = v;
    return 0;
}

#define GSHMEMI_ENV_PARSE_BOOL(text, field, accepted) gshmemi_env_parse_bool(text, &(field))
/* An INT whose accepted text is "a..b" must lie in that range; "a..b, a power of two"
 * also asks for a power of two. */
static int env_parse_int(const char *text, const char *accepted, long *out)
{
    long v, lo, hi;
    int used = 0;
    if (env_parse_long(text, 0, &v) != 0) return GSHMEMX_ERR_CONFIG;
    if (sscanf(accepted, "%ld..%ld%n", &lo, &hi, &used) == 2) {
        int pow2 = strcmp(accepted + used, ", a power of two") == 0;
        if ((accepted[used] == '\0' || pow2) && (v < lo || v > hi)) return GSHMEMX_ERR_CONFIG;
        if (pow2 && (v & (v - 1)) != 0) return GSHMEMX_ERR_CONFIG;
    }
    *out = v;
    return 0;
}

#define GSHMEMI_ENV_PARSE_INT(text, field, accepted) env_parse_int(text, accepted, &(field))
/* A PE number: -1 (not set) up to the largest int, as PEs are ints everywhere else. */
static int env_parse_pe(const char *text, long *out)
{
    long v;
    if (env_parse_long(text, -1, &v) != 0 || v > INT_MAX) return GSHMEMX_ERR_CONFIG;
    *out = v;
    return 0;
}
#define GSHMEMI_ENV_PARSE_PE(text, field, accepted) env_parse_pe(text, &(field))
/* A SIZE whose accepted text starts "bytes up to N," must not exceed N (a size itself). */
static int env_parse_size(const char *text, const char *accepted, size_t *out)
{
    static const char prefix[] = "bytes up to ";
    size_t v, most;
    char limit[32];
    if (gshmemi_env_parse_size(text, &v) != 0) return GSHMEMX_ERR_CONFIG;
    if (strncmp(accepted, prefix, sizeof(prefix) - 1) == 0 &&
        sscanf(accepted + sizeof(prefix) - 1, "%31[^,]", limit) == 1 && gshmemi_env_parse_size(limit, &most) == 0 &&
        v > most)
        return GSHMEMX_ERR_CONFIG;
    *out = v;
    return 0;
}

#define GSHMEMI_ENV_PARSE_SIZE(text, field, accepted) env_parse_size(text, accepted, &(field))
#define GSHMEMI_ENV_PARSE_SECONDS(text, field, accepted) gshmemi_env_parse_seconds(text, &(field))
#define GSHMEMI_ENV_PARSE_STRING(text, field, accepted) ((field) = (text), 0)
#define GSHMEMI_ENV_PARSE_ENUM(text, field, accepted) gshmemi_env_parse_enum(text, accepted, &(field))

int gshmemi_env_load(struct gshmemi_env *env, gshmemi_env_lookup_fn lookup, char *err, size_t errlen)
{
    memset(env, 0, sizeof(*env));
#define GSHMEMI_ENV_DEFAULT(NAME, TYPE, field, def, accepted, help)                      \
    if (GSHMEMI_ENV_PARSE_##TYPE(def, env->field, accepted) != 0) {                      \
        if (err) snprintf(err, errlen, "GSHMEM_" #NAME ": bad built-in default %s", def); \
        return GSHMEMX_ERR_INTERNAL;                                                     \
    }
    GSHMEMI_ENV_TABLE(GSHMEMI_ENV_DEFAULT)
#undef GSHMEMI_ENV_DEFAULT
    if (!lookup) return 0;
#define GSHMEMI_ENV_FROM_LOOKUP(NAME, TYPE, field, def, accepted, help)                         \
    {                                                                                           \
        const char *text = lookup("GSHMEM_" #NAME);                                             \
        if (text && GSHMEMI_ENV_PARSE_##TYPE(text, env->field, accepted) != 0) {                \
            if (err)                                                                            \
                snprintf(err, errlen, "GSHMEM_" #NAME "=%s is not valid (accepted: %s)", text, \
                         accepted);                                                             \
            return GSHMEMX_ERR_CONFIG;                                                          \
        }                                                                                       \
    }
    GSHMEMI_ENV_TABLE(GSHMEMI_ENV_FROM_LOOKUP)
#undef GSHMEMI_ENV_FROM_LOOKUP
    return 0;
}
