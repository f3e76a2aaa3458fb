/* Logging to stderr or GSHMEM_DEBUG_FILE; one line per call, tagged with the PE. */
#include "core/log.h"

#include <gshmem/status.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *const log_subsys_names[] = {
#define GSHMEMI_SUBSYS_NAME(name) #name,
    GSHMEMI_SUBSYS_TABLE(GSHMEMI_SUBSYS_NAME)
#undef GSHMEMI_SUBSYS_NAME
};
static const char *const log_level_names[] = {"ERROR", "WARN", "INFO", "TRACE"};

static struct {
    int level;
    unsigned subsys_mask;
    int pe;
    FILE *file; /* NULL: stderr */
    char pending[4096]; /* a file pattern with %r, opened once the PE is known */
    pthread_mutex_t lock;
} log_state = {GSHMEMI_LOG_WARN, ~0u, -1, NULL, "", PTHREAD_MUTEX_INITIALIZER};

static void log_expand_path(const char *pattern, char *out, size_t outlen);

static int log_open(const char *pattern)
{
    char path[4096];
    log_expand_path(pattern, path, sizeof(path));
    FILE *f = fopen(path, "ae");
    if (!f) {
        GSHMEMI_ERROR(ENV, "GSHMEM_DEBUG_FILE=%s: cannot open %s: %m", pattern, path);
        return GSHMEMX_ERR_CONFIG;
    }
    setvbuf(f, NULL, _IOLBF, 0);
    gshmemi_log_close();
    log_state.file = f;
    return 0;
}

/* For a file opened later: its directory must be writable now. */
static int log_check_dir(const char *pattern)
{
    char path[4096];
    log_expand_path(pattern, path, sizeof(path));
    char *slash = strrchr(path, '/');
    if (slash == path) slash[1] = '\0';
    else if (slash) *slash = '\0';
    else snprintf(path, sizeof(path), ".");
    if (access(path, W_OK) == 0) return 0;
    GSHMEMI_ERROR(ENV, "GSHMEM_DEBUG_FILE=%s: directory %s is not writable: %m", pattern, path);
    return GSHMEMX_ERR_CONFIG;
}

static int log_subsys_index(const char *name, size_t len)
{
    for (int i = 0; i < GSHMEMI_SUBSYS_COUNT; i++)
        if (strlen(log_subsys_names[i]) == len && strncasecmp(name, log_subsys_names[i], len) == 0)
            return i;
    return -1;
}

static int log_parse_subsys(const char *text, unsigned *mask)
{
    int exclude = text[0] == '^';
    const char *p = text + exclude;
    unsigned bits = 0;
    while (*p) {
        size_t len = strcspn(p, ",");
        if (len == 3 && strncasecmp(p, "ALL", 3) == 0) {
            bits = ~0u;
        } else {
            int i = log_subsys_index(p, len);
            if (i < 0) return GSHMEMX_ERR_CONFIG;
            bits |= 1u << i;
        }
        p += len + (p[len] == ',');
    }
    *mask = exclude ? ~bits : bits;
    return 0;
}

/* Expands %h (host), %p (pid) and %r (PE) in a log file name. */
static void log_expand_path(const char *pattern, char *out, size_t outlen)
{
    char host[128] = "unknown";
    gethostname(host, sizeof(host) - 1);
    size_t o = 0;
    for (const char *p = pattern; *p && o + 1 < outlen; p++) {
        if (p[0] == '%' && p[1]) {
            int n = 0;
            if (p[1] == 'h') n = snprintf(out + o, outlen - o, "%s", host);
            else if (p[1] == 'p') n = snprintf(out + o, outlen - o, "%d", (int)getpid());
            else if (p[1] == 'r') n = snprintf(out + o, outlen - o, "%d", log_state.pe);
            else if (p[1] == '%') n = snprintf(out + o, outlen - o, "%%");
            else n = snprintf(out + o, outlen - o, "%%%c", p[1]);
            if (n > 0) o += (size_t)n < outlen - o ? (size_t)n : outlen - o - 1;
            p++;
        } else {
            out[o++] = *p;
        }
    }
    out[o] = '\0';
}

int gshmemi_log_configure(int level, const char *subsys, const char *file)
{
    unsigned mask = ~0u;
    if (subsys && *subsys && log_parse_subsys(subsys, &mask) != 0) {
        GSHMEMI_ERROR(ENV, "GSHMEM_DEBUG_SUBSYS=%s: accepted: ALL or a comma list of INIT,ENV,BOOT,HEAP,"
                           "ALLOC,RMA,AMO,SYNC,TRANSPORT,CUDA, optionally prefixed by ^ to exclude",
                      subsys);
        return GSHMEMX_ERR_CONFIG;
    }
    if (file && *file) {
        if (strlen(file) >= sizeof(log_state.pending)) {
            GSHMEMI_ERROR(ENV, "GSHMEM_DEBUG_FILE is longer than %zu bytes", sizeof(log_state.pending) - 1);
            return GSHMEMX_ERR_CONFIG;
        }
        if (strstr(file, "%r") && log_state.pe < 0) {
            if (log_check_dir(file) != 0) return GSHMEMX_ERR_CONFIG;
            snprintf(log_state.pending, sizeof(log_state.pending), "%s", file);
        } else if (log_open(file) != 0) {
            return GSHMEMX_ERR_CONFIG;
        }
    }
    log_state.level = level;
    log_state.subsys_mask = mask;
    return 0;
}

void gshmemi_log_set_pe(int pe)
{
    log_state.pe = pe;
    if (log_state.pending[0] && pe >= 0) {
        log_open(log_state.pending);
        log_state.pending[0] = '\0';
    }
}

int gshmemi_log_enabled(int level, int subsys)
{
    if (level > log_state.level) return 0;
    return level <= GSHMEMI_LOG_WARN || (log_state.subsys_mask >> subsys) & 1u;
}

void gshmemi_log(int level, int subsys, const char *fmt, ...)
{
    if (!gshmemi_log_enabled(level, subsys)) return;
    char host[64] = "?";
    gethostname(host, sizeof(host) - 1);
    char *dot = strchr(host, '.');
    if (dot) *dot = '\0';
    char line[2048];
    char pe[16] = "?";
    if (log_state.pe >= 0) snprintf(pe, sizeof(pe), "%d", log_state.pe);
    int n = snprintf(line, sizeof(line), "[gshmem pe %s %s:%d] %s %s: ", pe, host, (int)getpid(),
                     log_level_names[level], log_subsys_names[subsys]);
    va_list ap;
    va_start(ap, fmt);
    if (n > 0 && (size_t)n < sizeof(line)) vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
    va_end(ap);
    pthread_mutex_lock(&log_state.lock);
    FILE *out = log_state.file ? log_state.file : stderr;
    fprintf(out, "%s\n", line);
    fflush(out);
    pthread_mutex_unlock(&log_state.lock);
}

void gshmemi_log_close(void)
{
    if (log_state.file) fclose(log_state.file);
    log_state.file = NULL;
}
