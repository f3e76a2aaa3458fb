/* Logging: every line names the PE; errors always print, the rest by GSHMEM_DEBUG. */
#ifndef GSHMEMI_LOG_H
#define GSHMEMI_LOG_H

#include <stdarg.h>

enum gshmemi_log_level {
    GSHMEMI_LOG_ERROR = 0,
    GSHMEMI_LOG_WARN = 1,
    GSHMEMI_LOG_INFO = 2,
    GSHMEMI_LOG_TRACE = 3
};

/* X(name) for GSHMEM_DEBUG_SUBSYS; the bit is 1 << index. */
#define GSHMEMI_SUBSYS_TABLE(X) X(INIT) X(ENV) X(BOOT) X(HEAP) X(ALLOC) X(RMA) X(AMO) X(SYNC) X(TRANSPORT) X(CUDA)

enum gshmemi_subsys {
#define GSHMEMI_SUBSYS_ENUM(name) GSHMEMI_SUBSYS_##name,
    GSHMEMI_SUBSYS_TABLE(GSHMEMI_SUBSYS_ENUM)
#undef GSHMEMI_SUBSYS_ENUM
    GSHMEMI_SUBSYS_COUNT
};

/* Configures level, subsystem filter ("INIT,HEAP", "^RMA", "ALL") and destination
 * (a path where %h is the host, %p the pid and %r the PE; NULL or "" is stderr).
 * Returns 0 or GSHMEMX_ERR_CONFIG with the reason logged. */
int gshmemi_log_configure(int level, const char *subsys, const char *file);
/* PE number shown in every line from now on (-1 before it is known). */
void gshmemi_log_set_pe(int pe);
int gshmemi_log_enabled(int level, int subsys);
void gshmemi_log(int level, int subsys, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void gshmemi_log_close(void);

#define GSHMEMI_ERROR(subsys, ...) gshmemi_log(GSHMEMI_LOG_ERROR, GSHMEMI_SUBSYS_##subsys, __VA_ARGS__)
#define GSHMEMI_WARN(subsys, ...) gshmemi_log(GSHMEMI_LOG_WARN, GSHMEMI_SUBSYS_##subsys, __VA_ARGS__)
#define GSHMEMI_INFO(subsys, ...)                                                 \
    do {                                                                          \
        if (gshmemi_log_enabled(GSHMEMI_LOG_INFO, GSHMEMI_SUBSYS_##subsys))       \
            gshmemi_log(GSHMEMI_LOG_INFO, GSHMEMI_SUBSYS_##subsys, __VA_ARGS__);  \
    } while (0)
#define GSHMEMI_TRACE(subsys, ...)                                                \
    do {                                                                          \
        if (gshmemi_log_enabled(GSHMEMI_LOG_TRACE, GSHMEMI_SUBSYS_##subsys))      \
            gshmemi_log(GSHMEMI_LOG_TRACE, GSHMEMI_SUBSYS_##subsys, __VA_ARGS__); \
    } while (0)

/* Propagate a nonzero status: GSHMEMI_CHECK_GOTO(rc = f(), label). */
#define GSHMEMI_CHECK_GOTO(expr, label) \
    do {                                \
        if ((expr) != 0) goto label;    \
    } while (0)

#endif
