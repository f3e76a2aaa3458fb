/* gshmem status codes. One X-macro table gives the enum and the strings. */
#ifndef GSHMEM_STATUS_H
#define GSHMEM_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

/* X(enum name, value, description) */
#define GSHMEMX_STATUS_TABLE(X)                                                      \
    X(GSHMEMX_SUCCESS, 0, "success")                                                 \
    X(GSHMEMX_ERR_INVALID_ARG, 1, "invalid argument")                               \
    X(GSHMEMX_ERR_NOMEM, 2, "out of memory")                                         \
    X(GSHMEMX_ERR_SYSTEM, 3, "system call failed")                                   \
    X(GSHMEMX_ERR_CONFIG, 4, "invalid GSHMEM_* configuration value")                 \
    X(GSHMEMX_ERR_BOOTSTRAP, 5, "bootstrap failed")                                  \
    X(GSHMEMX_ERR_PROTOCOL, 6, "malformed or unexpected message from a peer")        \
    X(GSHMEMX_ERR_PEER_LOST, 7, "a peer PE died or disconnected")                    \
    X(GSHMEMX_ERR_TIMEOUT, 8, "timed out (GSHMEM_TIMEOUT)")                          \
    X(GSHMEMX_ERR_NOT_SUPPORTED, 9, "not supported by this build or transport")      \
    X(GSHMEMX_ERR_NOT_INITIALIZED, 10, "gshmem is not initialized")                  \
    X(GSHMEMX_ERR_MISMATCH, 11, "collective call arguments differ between PEs")      \
    X(GSHMEMX_ERR_CUDA, 12, "CUDA call failed")                                      \
    X(GSHMEMX_ERR_ABORTED, 13, "the job was aborted by another PE")                  \
    X(GSHMEMX_ERR_INTERNAL, 14, "internal error")

typedef enum {
#define GSHMEMX_STATUS_ENUM(name, value, text) name = value,
    GSHMEMX_STATUS_TABLE(GSHMEMX_STATUS_ENUM)
#undef GSHMEMX_STATUS_ENUM
    GSHMEMX_STATUS_COUNT
} gshmemx_status_t;

/* Description of a status code; "unknown status" for values outside the enum. Never NULL. */
const char *gshmemx_strerror(int status);

/* Name of a status code ("GSHMEMX_ERR_TIMEOUT"); "GSHMEMX_UNKNOWN" outside the enum. */
const char *gshmemx_status_name(int status);

#ifdef __cplusplus
}
#endif

#endif /* GSHMEM_STATUS_H */
