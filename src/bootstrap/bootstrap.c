/* Bootstrap selection and the node-local view shared by every implementation. */
#include "bootstrap/bootstrap.h"
#include "bootstrap/uid.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/env.h"
#include "core/log.h"
#include "gshmem/status.h"

/* Node ids travel as fixed-size, NUL-padded records. */
#define BOOT_NODE_ID_LEN 256

void gshmemi_bootstrap_node_id(const struct gshmemi_env *env, char *out, size_t outlen)
{
    if (env->node_id != NULL && env->node_id[0] != '\0') {
        snprintf(out, outlen, "%s", env->node_id);
        return;
    }
    char host[128] = "unknown-host", boot_id[64] = "no-boot-id";
    gethostname(host, sizeof(host) - 1);
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f != NULL) {
        if (fgets(boot_id, sizeof(boot_id), f) != NULL) boot_id[strcspn(boot_id, "\r\n")] = '\0';
        fclose(f);
    }
    snprintf(out, outlen, "%s/%s", host, boot_id);
}

static int boot_start_single(const struct gshmemi_env *env, struct gshmemi_bootstrap *bs)
{
    if (env->nranks > 1) {
        GSHMEMI_ERROR(BOOT, "GSHMEM_NRANKS=%ld but no way to reach the other PEs: set GSHMEM_BOOTSTRAP_ROOT "
                      "or start the job with gshmemrun", env->nranks);
        return GSHMEMX_ERR_CONFIG;
    }
    return gshmemi_bootstrap_single_init(bs);
}

/* A PMIx server announces itself in the launcher's environment: PMIX_RANK plus PMIX_NAMESPACE
 * or a PMIX_SERVER_URI* address. These belong to the launcher, not to gshmem, so they are no rows
 * of the GSHMEM_* table; looking here first keeps plain runs from paying a dlopen of libpmix. */
extern char **environ;

static const char *boot_detect_pmix(void)
{
    int rank = 0, nspace = 0, uri = 0;
    for (char **e = environ; e != NULL && *e != NULL; e++) {
        rank |= strncmp(*e, "PMIX_RANK=", 10) == 0;
        nspace |= strncmp(*e, "PMIX_NAMESPACE=", 15) == 0;
        uri |= strncmp(*e, "PMIX_SERVER_URI", 15) == 0;
    }
    if (!rank) return NULL;
    return nspace ? "PMIX_RANK and PMIX_NAMESPACE set by the launcher"
           : uri  ? "PMIX_RANK and PMIX_SERVER_URI set by the launcher"
                  : NULL;
}

/* A pod of an Indexed Job, JobSet, LeaderWorkerSet or TrainJob (k8s.c). */
static const char *boot_detect_k8s(void)
{
    return gshmemi_bootstrap_k8s_detect();
}

/* GSHMEM_BOOTSTRAP=auto: PMIx, then Kubernetes, then gshmemrun's variables, else a single PE. */
static enum gshmemi_env_bootstrap boot_detect(const struct gshmemi_env *env, const char **why)
{
    if ((*why = boot_detect_pmix()) != NULL) return GSHMEMI_BOOTSTRAP_PMIX;
    if ((*why = boot_detect_k8s()) != NULL) return GSHMEMI_BOOTSTRAP_K8S;
    if (env->bootstrap_root != NULL && env->bootstrap_root[0] != '\0') {
        *why = "GSHMEM_BOOTSTRAP_ROOT set";
        return GSHMEMI_BOOTSTRAP_TCP;
    }
    *why = "no launcher variables";
    return GSHMEMI_BOOTSTRAP_SINGLE;
}

const char *gshmemi_bootstrap_detect(const struct gshmemi_env *env, const char **why)
{
    switch (boot_detect(env, why)) {
    case GSHMEMI_BOOTSTRAP_PMIX: return "pmix";
    case GSHMEMI_BOOTSTRAP_K8S: return "k8s";
    case GSHMEMI_BOOTSTRAP_TCP: return "tcp";
    default: return "single";
    }
}

static int boot_start_detected(const struct gshmemi_env *env, struct gshmemi_bootstrap *bs)
{
    const char *why;
    enum gshmemi_env_bootstrap kind = boot_detect(env, &why);
    GSHMEMI_INFO(BOOT, "GSHMEM_BOOTSTRAP=auto: %s", why);
    switch (kind) {
    case GSHMEMI_BOOTSTRAP_PMIX: return gshmemi_bootstrap_pmix_init(env, bs);
    case GSHMEMI_BOOTSTRAP_K8S: return gshmemi_bootstrap_k8s_init(env, bs);
    case GSHMEMI_BOOTSTRAP_TCP: return gshmemi_bootstrap_tcp_init(env, bs);
    default: return boot_start_single(env, bs);
    }
}

static int boot_start(const struct gshmemi_env *env, struct gshmemi_bootstrap *bs)
{
    switch (env->bootstrap) {
    case GSHMEMI_BOOTSTRAP_TCP: return gshmemi_bootstrap_tcp_init(env, bs);
    case GSHMEMI_BOOTSTRAP_SINGLE: return boot_start_single(env, bs);
    case GSHMEMI_BOOTSTRAP_PMIX: return gshmemi_bootstrap_pmix_init(env, bs);
    case GSHMEMI_BOOTSTRAP_UID: return gshmemi_bootstrap_uid_init(env, bs);
    case GSHMEMI_BOOTSTRAP_K8S: return gshmemi_bootstrap_k8s_init(env, bs);
    case GSHMEMI_BOOTSTRAP_AUTO:
        return boot_start_detected(env, bs);
    default:
        GSHMEMI_ERROR(BOOT, "unknown bootstrap selector %d", env->bootstrap);
        return GSHMEMX_ERR_CONFIG;
    }
}

struct boot_id_ref {
    const char *id;
    int rank;
};

static int boot_id_cmp(const void *a, const void *b)
{
    const struct boot_id_ref *x = a, *y = b;
    int c = memcmp(x->id, y->id, BOOT_NODE_ID_LEN);
    return c ? c : (x->rank > y->rank) - (x->rank < y->rank);
}

/* node_of_rank from the gathered ids: dense indices in order of each node's lowest rank. */
static int boot_number_nodes(const char *ids, int nranks, int *node_of_rank)
{
    struct boot_id_ref *refs = malloc(sizeof(*refs) * (size_t)nranks);
    int *group_of_rank = malloc(sizeof(int) * (size_t)nranks);
    int *dense_of_group = malloc(sizeof(int) * (size_t)nranks);
    if (!refs || !group_of_rank || !dense_of_group) {
        free(refs), free(group_of_rank), free(dense_of_group);
        return GSHMEMX_ERR_NOMEM;
    }
    for (int r = 0; r < nranks; r++) refs[r] = (struct boot_id_ref){ids + (size_t)r * BOOT_NODE_ID_LEN, r};
    qsort(refs, (size_t)nranks, sizeof(*refs), boot_id_cmp);
    int group = -1;
    for (int i = 0; i < nranks; i++) {
        if (i == 0 || memcmp(refs[i].id, refs[i - 1].id, BOOT_NODE_ID_LEN) != 0) dense_of_group[++group] = -1;
        group_of_rank[refs[i].rank] = group;
    }
    int nnodes = 0;
    for (int r = 0; r < nranks; r++) {
        int g = group_of_rank[r];
        if (dense_of_group[g] < 0) dense_of_group[g] = nnodes++;
        node_of_rank[r] = dense_of_group[g];
    }
    free(refs), free(group_of_rank), free(dense_of_group);
    return 0;
}

static int boot_local_view(const struct gshmemi_env *env, struct gshmemi_bootstrap *bs)
{
    char mine[BOOT_NODE_ID_LEN] = {0};
    gshmemi_bootstrap_node_id(env, mine, sizeof(mine));
    char *ids = calloc((size_t)bs->nranks, BOOT_NODE_ID_LEN);
    bs->node_of_rank = malloc(sizeof(int) * (size_t)bs->nranks);
    int rc = (ids && bs->node_of_rank) ? 0 : GSHMEMX_ERR_NOMEM;
    if (rc == 0) rc = bs->ops->allgather(bs, mine, ids, BOOT_NODE_ID_LEN);
    if (rc == 0) rc = boot_number_nodes(ids, bs->nranks, bs->node_of_rank);
    free(ids);
    if (rc) return rc;
    int node = bs->node_of_rank[bs->rank];
    bs->local_nranks = 0;
    for (int r = 0; r < bs->nranks; r++) bs->local_nranks += bs->node_of_rank[r] == node;
    bs->local_ranks = malloc(sizeof(int) * (size_t)bs->local_nranks);
    if (bs->local_ranks == NULL) return GSHMEMX_ERR_NOMEM;
    int n = 0;
    for (int r = 0; r < bs->nranks; r++) {
        if (bs->node_of_rank[r] != node) continue;
        if (r == bs->rank) bs->local_rank = n;
        bs->local_ranks[n++] = r;
    }
    GSHMEMI_INFO(BOOT, "PE %d of %d through %s bootstrap; node '%s' has %d PEs, this is local PE %d", bs->rank,
                 bs->nranks, bs->ops->name, mine, bs->local_nranks, bs->local_rank);
    return 0;
}

int gshmemi_bootstrap_init(const struct gshmemi_env *env, struct gshmemi_bootstrap *bs)
{
    memset(bs, 0, sizeof(*bs));
    bs->abort_status = 1;
    int rc = boot_start(env, bs);
    if (rc) {
        memset(bs, 0, sizeof(*bs));
        return rc;
    }
    gshmemi_log_set_pe(bs->rank);
    rc = boot_local_view(env, bs);
    if (rc) {
        /* The job cannot go on: a root this process hosts (unique ID) gets the short
         * wait of an ended job, not another GSHMEM_TIMEOUT for PEs that never came. */
        if (bs->ops->linger) bs->ops->linger(bs);
        gshmemi_bootstrap_fini(bs);
    }
    return rc;
}

void gshmemi_bootstrap_fini(struct gshmemi_bootstrap *bs)
{
    if (bs->ops != NULL) bs->ops->finalize(bs);
    free(bs->node_of_rank);
    free(bs->local_ranks);
    memset(bs, 0, sizeof(*bs));
}
