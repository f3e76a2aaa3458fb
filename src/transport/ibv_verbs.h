/*
 * libibverbs, loaded at run time (dlopen "libibverbs.so.1"), so one libgshmem runs
 * where the verbs library or an RDMA device is absent. Only the exported entry points
 * are resolved here; posting and polling go through the device context's ops, as the
 * inline ibv_post_send and ibv_poll_cq do. Built only where <infiniband/verbs.h> is.
 */
#ifndef GSHMEMI_IBV_VERBS_H
#define GSHMEMI_IBV_VERBS_H

#include <infiniband/verbs.h>
#include <stddef.h>

/* X(name, return type, parameters): required entry points. */
#define GSHMEMI_IBV_REQUIRED(X)                                                                                        \
    X(ibv_get_device_list, struct ibv_device **, (int *))                                                              \
    X(ibv_free_device_list, void, (struct ibv_device **))                                                              \
    X(ibv_get_device_name, const char *, (struct ibv_device *))                                                        \
    X(ibv_open_device, struct ibv_context *, (struct ibv_device *))                                                    \
    X(ibv_close_device, int, (struct ibv_context *))                                                                   \
    X(ibv_query_device, int, (struct ibv_context *, struct ibv_device_attr *))                                         \
    X(ibv_query_port, int, (struct ibv_context *, uint8_t, struct ibv_port_attr *))                                    \
    X(ibv_query_gid, int, (struct ibv_context *, uint8_t, int, union ibv_gid *))                                       \
    X(ibv_alloc_pd, struct ibv_pd *, (struct ibv_context *))                                                           \
    X(ibv_dealloc_pd, int, (struct ibv_pd *))                                                                          \
    X(ibv_reg_mr, struct ibv_mr *, (struct ibv_pd *, void *, size_t, int))                                             \
    X(ibv_dereg_mr, int, (struct ibv_mr *))                                                                            \
    X(ibv_create_cq, struct ibv_cq *, (struct ibv_context *, int, void *, struct ibv_comp_channel *, int))             \
    X(ibv_destroy_cq, int, (struct ibv_cq *))                                                                          \
    X(ibv_create_qp, struct ibv_qp *, (struct ibv_pd *, struct ibv_qp_init_attr *))                                    \
    X(ibv_destroy_qp, int, (struct ibv_qp *))                                                                          \
    X(ibv_modify_qp, int, (struct ibv_qp *, struct ibv_qp_attr *, int))                                                \
    X(ibv_get_async_event, int, (struct ibv_context *, struct ibv_async_event *))                                      \
    X(ibv_ack_async_event, void, (struct ibv_async_event *))

/* Optional: NULL when this libibverbs is older. */
#define GSHMEMI_IBV_OPTIONAL(X)                                                                                        \
    X(ibv_reg_dmabuf_mr, struct ibv_mr *, (struct ibv_pd *, uint64_t, size_t, uint64_t, int, int))                     \
    X(ibv_reg_mr_iova2, struct ibv_mr *, (struct ibv_pd *, void *, size_t, uint64_t, unsigned int))                    \
    X(_ibv_query_gid_ex, int, (struct ibv_context *, uint32_t, uint32_t, struct ibv_gid_entry *, uint32_t, size_t))    \
    X(ibv_wc_status_str, const char *, (enum ibv_wc_status))                                                           \
    X(ibv_event_type_str, const char *, (enum ibv_event_type))

struct gshmemi_ibv_api {
#define GSHMEMI_IBV_FIELD(name, ret, args) ret(*name) args;
    GSHMEMI_IBV_REQUIRED(GSHMEMI_IBV_FIELD)
    GSHMEMI_IBV_OPTIONAL(GSHMEMI_IBV_FIELD)
#undef GSHMEMI_IBV_FIELD
    char path[256]; /* the file loaded */
};

/* dlopen of soname (RTLD_LOCAL): the handle, with the file loaded in path; NULL with
 * why ("... not loadable (...); install package"). */
void *gshmemi_ibv_dlopen(const char *soname, const char *package, char *path, size_t pathlen, char *why,
                         size_t whylen);

/* Loads libibverbs once (thread-safe); NULL with the reason in why when it is absent
 * or lacks a required entry point. */
const struct gshmemi_ibv_api *gshmemi_ibv_api(char *why, size_t whylen);

/* "retry counter exceeded (12)": the status's text, with or without the library's. */
const char *gshmemi_ibv_wc_status(const struct gshmemi_ibv_api *api, enum ibv_wc_status st, char *buf, size_t len);
const char *gshmemi_ibv_event_name(const struct gshmemi_ibv_api *api, enum ibv_event_type ev);

#endif
