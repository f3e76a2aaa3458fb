/* The Kubernetes front end of the tcp bootstrap: this pod's index and the job's size come
 * from the controller's variables, the root is pod 0's stable DNS name, and pod 0's PE 0
 * hosts the root in a thread. Global PE = pod index x PEs per pod + index in the pod. Everything after that is the unique-ID path (uid.c): the
 * same hosting, the same join with retries and backoff under one GSHMEM_TIMEOUT, the same
 * job secret on every connection. */
#include "bootstrap/bootstrap.h"
#include "bootstrap/tcp.h"
#include "bootstrap/uid.h"
#include "bootstrap/wire.h"

#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/env.h"
#include "core/log.h"
#include "gshmem/status.h"

#define K8S_ROOT_PORT 29600

/* The controllers' variables (Indexed Job, JobSet, LeaderWorkerSet, Kubeflow Trainer) belong
 * to Kubernetes, not to gshmem: they are no rows of the GSHMEM_* table, and only getenv-free
 * code may look at them, so they are read by scanning environ as PMIx detection does. */
extern char **environ;

static const char *k8s_var(const char *name)
{
    size_t n = strlen(name);
    for (char **e = environ; e != NULL && *e != NULL; e++)
        if (strncmp(*e, name, n) == 0 && (*e)[n] == '=') return *e + n + 1;
    return NULL;
}

/* A non-negative integer variable: its value, -1 when unset, -2 when not a number. */
static long k8s_int(const char *name)
{
    const char *v = k8s_var(name);
    if (v == NULL) return -1;
    char *end;
    long x = strtol(v, &end, 10);
    return (v[0] == '\0' || *end != '\0' || x < 0 || x > 1000000) ? -2 : x;
}

const char *gshmemi_bootstrap_k8s_detect(void)
{
    if (k8s_var("KUBERNETES_SERVICE_HOST") == NULL) return NULL;
    if (k8s_var("LWS_WORKER_INDEX")) return "KUBERNETES_SERVICE_HOST and LWS_WORKER_INDEX set (LeaderWorkerSet)";
    if (k8s_var("PET_NODE_RANK")) return "KUBERNETES_SERVICE_HOST and PET_NODE_RANK set (Kubeflow Trainer)";
    if (k8s_var("JOBSET_JOB_INDEX") && k8s_var("JOB_COMPLETION_INDEX"))
        return "KUBERNETES_SERVICE_HOST, JOBSET_JOB_INDEX and JOB_COMPLETION_INDEX set (JobSet)";
    if (k8s_var("JOB_COMPLETION_INDEX")) return "KUBERNETES_SERVICE_HOST and JOB_COMPLETION_INDEX set (Indexed Job)";
    return NULL;
}

struct k8s_job {
    long pod;   /* this pod's index */
    long npods; /* -1: unknown (from GSHMEM_NRANKS) */
    const char *root_host; /* the controller's leader address, or NULL: pod 0's DNS name */
    const char *index_var; /* for messages */
    int jobset; /* pod names end in -<job index>-<pod index> */
};

static int k8s_bad(const char *name)
{
    GSHMEMI_ERROR(BOOT, "k8s bootstrap: %s=%s is not a non-negative integer", name, k8s_var(name));
    return GSHMEMX_ERR_CONFIG;
}

/* This pod's index and, where the controller says it, the number of pods. */
static int k8s_read_job(const struct gshmemi_env *env, long ppn, struct k8s_job *job)
{
    long v;
    memset(job, 0, sizeof(*job));
    job->npods = -1;
    if ((v = k8s_int("LWS_WORKER_INDEX")) != -1) {
        if (v < 0) return k8s_bad("LWS_WORKER_INDEX");
        job->pod = v, job->index_var = "LWS_WORKER_INDEX";
        if ((v = k8s_int("LWS_GROUP_SIZE")) == -2) return k8s_bad("LWS_GROUP_SIZE");
        job->npods = v;
        job->root_host = k8s_var("LWS_LEADER_ADDRESS");
    } else if ((v = k8s_int("PET_NODE_RANK")) != -1) {
        if (v < 0) return k8s_bad("PET_NODE_RANK");
        job->pod = v, job->index_var = "PET_NODE_RANK";
        if ((v = k8s_int("PET_NNODES")) == -2) return k8s_bad("PET_NNODES");
        job->npods = v;
        job->root_host = k8s_var("PET_MASTER_ADDR");
    } else if ((v = k8s_int("JOB_COMPLETION_INDEX")) != -1) {
        if (v < 0) return k8s_bad("JOB_COMPLETION_INDEX");
        job->pod = v, job->index_var = "JOB_COMPLETION_INDEX";
        const char *jvar = k8s_var("JOBSET_JOB_GLOBAL_INDEX") ? "JOBSET_JOB_GLOBAL_INDEX" : "JOBSET_JOB_INDEX";
        long ji = k8s_int(jvar);
        if (ji == -2) return k8s_bad(jvar);
        if (ji >= 0) { /* JobSet: pods per child Job = all pods / replicas */
            long reps = k8s_int("JOBSET_GLOBAL_REPLICAS");
            long total = env->nranks > 0 ? env->nranks / ppn : 0;
            if (reps < 1 || total < reps || total % reps != 0) {
                GSHMEMI_ERROR(BOOT, "k8s bootstrap (JobSet): need JOBSET_GLOBAL_REPLICAS >= 1 dividing the pods "
                              "(GSHMEM_NRANKS=%ld / %ld PEs per pod); got '%s'", env->nranks, ppn,
                              k8s_var("JOBSET_GLOBAL_REPLICAS") ? k8s_var("JOBSET_GLOBAL_REPLICAS") : "(unset)");
                return GSHMEMX_ERR_CONFIG;
            }
            job->pod = ji * (total / reps) + job->pod;
            job->jobset = 1;
            job->index_var = "JobSet's job index and JOB_COMPLETION_INDEX";
        }
    } else {
        GSHMEMI_ERROR(BOOT, "GSHMEM_BOOTSTRAP=k8s: no pod index (JOB_COMPLETION_INDEX, LWS_WORKER_INDEX or "
                      "PET_NODE_RANK); is this a pod of an Indexed Job, JobSet, LeaderWorkerSet or TrainJob?");
        return GSHMEMX_ERR_NOT_SUPPORTED;
    }
    if (job->root_host != NULL && job->root_host[0] == '\0') job->root_host = NULL;
    return 0;
}

/* Pod 0's DNS name from ours: the hostname "<job>-<i>" (JobSet: "<...>-<j>-<i>") with the
 * index replaced by 0, in our DNS subdomain (the FQDN the pod's /etc/hosts or DNS gives
 * for the hostname), else "<job>-0.<job>" (the manifests name the headless Service after
 * the job). */
static int k8s_root_host(const struct k8s_job *job, char *out, size_t outlen)
{
    char host[256] = "";
    if (gethostname(host, sizeof(host) - 1) != 0 || host[0] == '\0') {
        GSHMEMI_ERROR(BOOT, "k8s bootstrap: this pod has no hostname; set GSHMEM_BOOTSTRAP_ROOT=host:port");
        return GSHMEMX_ERR_CONFIG;
    }
    host[strcspn(host, ".")] = '\0';
    char *dash = strrchr(host, '-');
    if (dash != NULL && job->jobset) {
        *dash = '\0';
        char *d2 = strrchr(host, '-');
        *dash = '-';
        dash = d2;
    }
    if (dash == NULL || dash == host || dash[1] < '0' || dash[1] > '9') {
        GSHMEMI_ERROR(BOOT, "k8s bootstrap: hostname '%s' does not end in the pod index (<job>-<index>); set "
                      "GSHMEM_BOOTSTRAP_ROOT=host:port", host);
        return GSHMEMX_ERR_CONFIG;
    }
    char base[256];
    snprintf(base, sizeof(base), "%.*s", (int)(dash - host), host);
    const char *domain = NULL;
    char fqdn[512] = "";
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_CANONNAME}, *res;
    if (getaddrinfo(host, NULL, &hints, &res) == 0) {
        if (res->ai_canonname != NULL) snprintf(fqdn, sizeof(fqdn), "%s", res->ai_canonname);
        freeaddrinfo(res);
    }
    size_t hl = strlen(host);
    if (strncmp(fqdn, host, hl) == 0 && fqdn[hl] == '.') domain = fqdn + hl + 1;
    if (domain != NULL) snprintf(out, outlen, "%s-0%s.%s", base, job->jobset ? "-0" : "", domain);
    else snprintf(out, outlen, "%s-0%s.%s", base, job->jobset ? "-0" : "", base);
    return 0;
}

/* The root's "host:port" (GSHMEM_BOOTSTRAP_ROOT, the controller's leader address, else pod 0's
 * DNS name, port 29600) and where PE 0 listens for it: every interface, that port. */
static int k8s_root(const struct gshmemi_env *env, const struct k8s_job *job, char *root, size_t rootlen, char *bind,
                    size_t bindlen)
{
    char host[520];
    int rc;
    if (env->bootstrap_root != NULL && env->bootstrap_root[0] != '\0') {
        snprintf(root, rootlen, "%s", env->bootstrap_root);
    } else {
        if (job->root_host != NULL) snprintf(host, sizeof(host), "%s", job->root_host);
        else if ((rc = k8s_root_host(job, host, sizeof(host))) != 0) return rc;
        /* an IPv6 literal (a leader address may be one) takes brackets before its port */
        snprintf(root, rootlen, strchr(host, ':') && host[0] != '[' ? "[%s]:%d" : "%s:%d", host, K8S_ROOT_PORT);
    }
    char rhost[GSHMEMI_WIRE_NAME_MAX], port[16];
    if (gshmemi_tcp_parse_root(root, rhost, sizeof(rhost), port, sizeof(port)) != 0) {
        GSHMEMI_ERROR(BOOT, "k8s bootstrap: root '%s' (GSHMEM_BOOTSTRAP_ROOT or the controller's leader address) "
                      "is not host:port or [IPv6]:port with a port in 1..65535", root);
        return GSHMEMX_ERR_CONFIG;
    }
    /* every interface, IPv6 and IPv4 (the root's listener takes 0.0.0.0 so) */
    snprintf(bind, bindlen, "0.0.0.0:%s", port);
    return 0;
}

static struct gshmemi_bootstrap_ops k8s_ops, k8s_inner;

/* After a failed collective (GSHMEM_TIMEOUT spent, a PE lost), PE 0 ends the job it hosts
 * through abort, so its root lingers briefly instead of waiting a second GSHMEM_TIMEOUT for
 * PEs that never came. */
static int k8s_finalize(struct gshmemi_bootstrap *bs)
{
    if (bs->rank == 0 && k8s_inner.check(bs) != 0) k8s_inner.abort(bs, 1);
    return k8s_inner.finalize(bs);
}

int gshmemi_bootstrap_k8s_init(const struct gshmemi_env *env, struct gshmemi_bootstrap *bs)
{
    /* gshmemrun --ppn N in a pod sets GSHMEM_PPN=N and GSHMEM_RANK to the PE's index in the
     * pod; a program started alone is the pod's only PE. */
    long ppn = env->ppn > 0 ? env->ppn : 1, local = env->ppn > 0 ? env->rank : 0;
    if (local < 0 || local >= ppn) {
        GSHMEMI_ERROR(BOOT, "k8s bootstrap: GSHMEM_RANK=%ld is not a PE index in the pod (GSHMEM_PPN=%ld)",
                      env->rank, ppn);
        return GSHMEMX_ERR_CONFIG;
    }
    struct k8s_job job;
    int rc = k8s_read_job(env, ppn, &job);
    if (rc != 0) return rc;
    long npods = job.npods;
    if (env->nranks > 0) {
        if (env->nranks % ppn != 0 || (npods > 0 && env->nranks / ppn != npods)) {
            GSHMEMI_ERROR(BOOT, "k8s bootstrap: GSHMEM_NRANKS=%ld is not the controller's pods (%ld; -1: not said) "
                          "x %ld PEs per pod", env->nranks, npods, ppn);
            return GSHMEMX_ERR_CONFIG;
        }
        npods = env->nranks / ppn;
    }
    if (npods < 1 || job.pod >= npods) {
        GSHMEMI_ERROR(BOOT, "k8s bootstrap: pod index %ld (%s) with %ld pods: set GSHMEM_NRANKS to the job's PEs",
                      job.pod, job.index_var, npods);
        return GSHMEMX_ERR_CONFIG;
    }
    char root[600], bind[32];
    if ((rc = k8s_root(env, &job, root, sizeof(root), bind, sizeof(bind))) != 0) return rc;
    long rank = job.pod * ppn + local;
    GSHMEMI_INFO(BOOT, "k8s bootstrap: pod %ld of %ld (%s), %ld PEs per pod: PE %ld of %ld; root %s%s", job.pod,
                 npods, job.index_var, ppn, rank, npods * ppn, root, rank == 0 ? " (hosted here)" : "");
    /* PE 0 hosts the root on every interface (its own DNS record may not exist yet). */
    struct gshmemi_env e = *env;
    e.bootstrap_uid = rank == 0 ? bind : root;
    e.rank = rank;
    e.nranks = npods * ppn;
    rc = gshmemi_bootstrap_uid_init(&e, bs);
    if (rc != 0) return rc;
    k8s_inner = *bs->ops;
    k8s_ops = *bs->ops;
    k8s_ops.name = "k8s";
    k8s_ops.finalize = k8s_finalize;
    bs->ops = &k8s_ops;
    return 0;
}
