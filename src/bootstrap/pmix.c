/* The PMIx bootstrap: the launcher's PMIx server (mpirun, srun --mpi=pmix) gives rank and
 * size, and allgather is Put + Commit + a collecting Fence. libpmix is loaded with dlopen so
 * the library neither builds against nor depends on it; the few PMIx types used are declared
 * here from the PMIx standard (ABI as in OpenPMIx 4.x). */
#include <dlfcn.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bootstrap/bootstrap.h"
#include "core/env.h"
#include "core/log.h"
#include "gshmem/status.h"

#define PMIX_NSPACE_LEN 256 /* PMIX_MAX_NSLEN + 1 */
#define PMIX_KEY_LEN 512    /* PMIX_MAX_KEYLEN + 1 */
#define PMIX_OK 0
#define PMIX_TIMED_OUT (-24) /* PMIX_ERR_TIMEOUT */
#define PMIX_RANK_ALL (UINT32_MAX - 1) /* PMIX_RANK_WILDCARD */
#define PMIX_SCOPE_GLOBAL 3
#define PMIX_TYPE_BOOL 1
#define PMIX_TYPE_INT 6
#define PMIX_TYPE_UINT16 13
#define PMIX_TYPE_UINT32 14
#define PMIX_TYPE_BYTE_OBJECT 27

typedef struct {
    char nspace[PMIX_NSPACE_LEN];
    uint32_t rank;
} pmix_proc_t;

typedef struct {
    uint16_t type;
    union {
        bool flag;
        int integer;
        uint16_t uint16;
        uint32_t uint32;
        struct {
            char *bytes;
            size_t size;
        } bo;
        void *reserve[3]; /* the union's full size: its largest member is three words */
    } data;
} pmix_value_t;

typedef struct {
    char key[PMIX_KEY_LEN];
    uint32_t flags;
    pmix_value_t value;
} pmix_info_t;

_Static_assert(sizeof(pmix_value_t) == 32 && sizeof(pmix_info_t) == 552, "PMIx 4.x ABI");

struct pmix_api {
    void *lib;
    int (*init)(pmix_proc_t *proc, pmix_info_t info[], size_t ninfo);
    int (*finalize)(const pmix_info_t info[], size_t ninfo);
    int (*get)(const pmix_proc_t *proc, const char key[], const pmix_info_t info[], size_t ninfo,
               pmix_value_t **val);
    int (*put)(uint8_t scope, const char key[], pmix_value_t *val);
    int (*commit)(void);
    int (*fence)(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t info[], size_t ninfo);
    int (*abort)(int status, const char msg[], pmix_proc_t procs[], size_t nprocs);
    void (*value_destruct)(pmix_value_t *val);
    const char *(*error_string)(int status);
};

struct pmix_impl {
    struct pmix_api api;
    pmix_proc_t me;
    int nranks;
    uint32_t seq;     /* allgather rounds: each one uses a fresh key */
    unsigned gen;     /* this process's gshmem inits so far: keys of an earlier one never match */
    int timeout_s;    /* PMIX_TIMEOUT for fences; 0: none */
};

static const char *pmix_strerror(const struct pmix_api *api, int status)
{
    const char *s = api->error_string ? api->error_string(status) : NULL;
    return s ? s : "unknown PMIx status";
}

static void pmix_value_release(const struct pmix_api *api, pmix_value_t *val)
{
    if (val == NULL) return;
    api->value_destruct(val);
    free(val); /* allocated by libpmix with the same malloc */
}

static int pmix_api_load(struct pmix_api *api)
{
    static const char *const names[] = {"libpmix.so.2", "libpmix.so"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) && api->lib == NULL; i++)
        api->lib = dlopen(names[i], RTLD_NOW | RTLD_GLOBAL);
    if (api->lib == NULL) {
        GSHMEMI_ERROR(BOOT, "PMIx bootstrap: cannot load libpmix.so.2 or libpmix.so (%s); install libpmix2 "
                      "or choose another GSHMEM_BOOTSTRAP", dlerror());
        return GSHMEMX_ERR_NOT_SUPPORTED;
    }
    struct {
        const char *name;
        void **slot;
    } syms[] = {
        {"PMIx_Init", (void **)&api->init},         {"PMIx_Finalize", (void **)&api->finalize},
        {"PMIx_Get", (void **)&api->get},           {"PMIx_Put", (void **)&api->put},
        {"PMIx_Commit", (void **)&api->commit},     {"PMIx_Fence", (void **)&api->fence},
        {"PMIx_Abort", (void **)&api->abort},       {"PMIx_Value_destruct", (void **)&api->value_destruct},
    };
    for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
        *syms[i].slot = dlsym(api->lib, syms[i].name);
        if (*syms[i].slot == NULL) {
            GSHMEMI_ERROR(BOOT, "PMIx bootstrap: libpmix lacks %s", syms[i].name);
            dlclose(api->lib);
            memset(api, 0, sizeof(*api));
            return GSHMEMX_ERR_NOT_SUPPORTED;
        }
    }
    *(void **)&api->error_string = dlsym(api->lib, "PMIx_Error_string"); /* optional: messages only */
    return 0;
}

/* Fence over the whole namespace; collect: every PE gets every other PE's committed data. */
static int pmix_fence(struct pmix_impl *px, bool collect, const char *what)
{
    pmix_info_t info[2];
    size_t n = 0;
    memset(info, 0, sizeof(info));
    if (collect) {
        snprintf(info[n].key, PMIX_KEY_LEN, "pmix.collect"); /* PMIX_COLLECT_DATA */
        info[n].value.type = PMIX_TYPE_BOOL;
        info[n++].value.data.flag = true;
    }
    if (px->timeout_s > 0) {
        snprintf(info[n].key, PMIX_KEY_LEN, "pmix.timeout"); /* PMIX_TIMEOUT */
        info[n].value.type = PMIX_TYPE_INT;
        info[n++].value.data.integer = px->timeout_s;
    }
    pmix_proc_t all = {.rank = PMIX_RANK_ALL};
    memcpy(all.nspace, px->me.nspace, PMIX_NSPACE_LEN);
    int rc = px->api.fence(&all, 1, n ? info : NULL, n);
    if (rc != PMIX_OK) {
        char limit[128] = "";
        if (rc == PMIX_TIMED_OUT && px->timeout_s > 0)
            snprintf(limit, sizeof(limit), " after %d s (GSHMEM_TIMEOUT), waiting for the job's %d PEs",
                     px->timeout_s, px->nranks);
        GSHMEMI_ERROR(BOOT, "PE %u: PMIx_Fence (%s) in namespace %s failed%s: %s (%d)", px->me.rank, what,
                      px->me.nspace, limit, pmix_strerror(&px->api, rc), rc);
        return rc == PMIX_TIMED_OUT ? GSHMEMX_ERR_TIMEOUT : GSHMEMX_ERR_PEER_LOST;
    }
    return 0;
}

/* One peer's blob of this round into out; its length must be len. */
static int pmix_get_blob(struct pmix_impl *px, uint32_t peer, const char *key, void *out, size_t len)
{
    pmix_proc_t proc = {.rank = peer};
    memcpy(proc.nspace, px->me.nspace, PMIX_NSPACE_LEN);
    pmix_value_t *val = NULL;
    int rc = px->api.get(&proc, key, NULL, 0, &val);
    if (rc != PMIX_OK || val == NULL) {
        GSHMEMI_ERROR(BOOT, "PE %u: PMIx_Get(%s) from PE %u failed: %s (%d)", px->me.rank, key, peer,
                      pmix_strerror(&px->api, rc), rc);
        return GSHMEMX_ERR_PEER_LOST;
    }
    int status = 0;
    if (val->type != PMIX_TYPE_BYTE_OBJECT) {
        GSHMEMI_ERROR(BOOT, "PE %u: PMIx key %s of PE %u has type %u, not a byte object", px->me.rank, key, peer,
                      val->type);
        status = GSHMEMX_ERR_PROTOCOL;
    } else if (val->data.bo.size != len) {
        GSHMEMI_ERROR(BOOT, "PE %u: allgather %s: PE %u contributed %zu bytes but PE %u contributed %zu",
                      px->me.rank, key, peer, val->data.bo.size, px->me.rank, len);
        status = GSHMEMX_ERR_MISMATCH;
    } else if (len > 0) {
        memcpy(out, val->data.bo.bytes, len);
    }
    pmix_value_release(&px->api, val);
    return status;
}

static int pmix_allgather(struct gshmemi_bootstrap *bs, const void *in, void *out, size_t len)
{
    struct pmix_impl *px = bs->impl;
    char key[64];
    snprintf(key, sizeof(key), "gshmem.ag.%u.%u", px->gen, px->seq++);
    pmix_value_t val = {.type = PMIX_TYPE_BYTE_OBJECT};
    val.data.bo.bytes = (char *)in;
    val.data.bo.size = len;
    int rc = px->api.put(PMIX_SCOPE_GLOBAL, key, &val); /* copies the bytes */
    if (rc == PMIX_OK) rc = px->api.commit();
    if (rc != PMIX_OK) {
        GSHMEMI_ERROR(BOOT, "PE %u: PMIx_Put/Commit(%s, %zu bytes) failed: %s (%d)", px->me.rank, key, len,
                      pmix_strerror(&px->api, rc), rc);
        return GSHMEMX_ERR_BOOTSTRAP;
    }
    int status = pmix_fence(px, true, key);
    for (int r = 0; status == 0 && r < px->nranks; r++) {
        char *dst = (char *)out + (size_t)r * len;
        if ((uint32_t)r == px->me.rank) {
            if (len > 0 && dst != in) memmove(dst, in, len);
            continue;
        }
        status = pmix_get_blob(px, (uint32_t)r, key, dst, len);
    }
    return status;
}

static int pmix_barrier(struct gshmemi_bootstrap *bs)
{
    return pmix_fence(bs->impl, false, "barrier");
}

static int pmix_check(struct gshmemi_bootstrap *bs)
{
    (void)bs; /* the PMIx server ends the job when a PE dies or aborts */
    return 0;
}

static void pmix_abort(struct gshmemi_bootstrap *bs, int status)
{
    struct pmix_impl *px = bs->impl;
    char msg[96];
    snprintf(msg, sizeof(msg), "gshmem: PE %u ends the job with status %d", px->me.rank, status);
    int rc = px->api.abort(status, msg, NULL, 0);
    if (rc != PMIX_OK) GSHMEMI_WARN(BOOT, "PE %u: PMIx_Abort returned %d", px->me.rank, rc);
}

/* The PMIx client stays up from the first gshmem_init to the process's exit, not from
 * each init to its finalize: a PE that ended PMIx and started it again at once (a
 * re-init) could enter its first fence while a slower PE of the job was still ending
 * its client, and the server then failed that fence (PARTIAL SUCCESS). */
static struct {
    struct pmix_api api;
    pmix_proc_t me;
    bool live;
    pid_t owner; /* a forked child inherits the exit handler, not libpmix's threads */
} pmix_client;

static void pmix_client_end(void)
{
    if (!pmix_client.live || getpid() != pmix_client.owner) return; /* PMIx_Finalize would wait forever there */
    pmix_client.live = false;
    int rc = pmix_client.api.finalize(NULL, 0);
    if (rc != PMIX_OK) GSHMEMI_WARN(BOOT, "PMIx_Finalize at exit returned %d", rc);
}

static int pmix_client_start(void)
{
    if (pmix_client.live) return 0;
    if (pmix_client.api.lib == NULL) {
        int status = pmix_api_load(&pmix_client.api);
        if (status) return status;
    }
    int rc = pmix_client.api.init(&pmix_client.me, NULL, 0);
    if (rc != PMIX_OK) {
        GSHMEMI_ERROR(BOOT, "PMIx bootstrap: PMIx_Init failed: %s (%d); no PMIx server reachable: start the job "
                      "with mpirun or srun --mpi=pmix, or use gshmemrun", pmix_strerror(&pmix_client.api, rc), rc);
        return GSHMEMX_ERR_BOOTSTRAP;
    }
    static bool registered; /* after PMIx_Init, so that it runs before libpmix's own handlers */
    if (!registered && atexit(pmix_client_end) == 0) registered = true;
    pmix_client.live = true;
    pmix_client.owner = getpid();
    return 0;
}

static int pmix_finalize(struct gshmemi_bootstrap *bs)
{
    free(bs->impl); /* the client itself ends at exit (pmix_client_end) */
    bs->impl = NULL;
    return 0;
}

static const struct gshmemi_bootstrap_ops pmix_ops = {
    .size = sizeof(struct gshmemi_bootstrap_ops),
    .name = "pmix",
    .allgather = pmix_allgather,
    .barrier = pmix_barrier,
    .check = pmix_check,
    .abort = pmix_abort,
    .finalize = pmix_finalize,
};

/* A job-level uint32 (rank wildcard) or this proc's uint16; -1 when missing, with why
 * (when given) saying how: the get's status, or the value's type. */
static long pmix_get_number_why(struct pmix_impl *px, const char *key, bool job_level, char *why, size_t whylen)
{
    pmix_proc_t proc = px->me;
    if (job_level) proc.rank = PMIX_RANK_ALL;
    pmix_value_t *val = NULL;
    long out = -1;
    int rc = px->api.get(&proc, key, NULL, 0, &val);
    if (rc != PMIX_OK) {
        if (why) snprintf(why, whylen, "PMIx_Get: %s (%d)", pmix_strerror(&px->api, rc), rc);
    } else if (val == NULL) {
        if (why) snprintf(why, whylen, "PMIx_Get returned no value");
    } else if (val->type == PMIX_TYPE_UINT32) {
        out = (long)val->data.uint32;
    } else if (val->type == PMIX_TYPE_UINT16) {
        out = (long)val->data.uint16;
    } else if (why) {
        snprintf(why, whylen, "a value of PMIx type %u, not uint32 or uint16", (unsigned)val->type);
    }
    pmix_value_release(&px->api, val);
    return out;
}

static long pmix_get_number(struct pmix_impl *px, const char *key, bool job_level)
{
    return pmix_get_number_why(px, key, job_level, NULL, 0);
}

int gshmemi_bootstrap_pmix_init(const struct gshmemi_env *env, struct gshmemi_bootstrap *bs)
{
    static unsigned inits; /* every PE of the job makes the same calls, so they agree */
    struct pmix_impl *px = calloc(1, sizeof(*px));
    if (px == NULL) return GSHMEMX_ERR_NOMEM;
    px->gen = inits++;
    int status = pmix_client_start();
    if (status) goto err_free;
    px->api = pmix_client.api;
    px->me = pmix_client.me;
    char why[128] = "";
    long nranks = pmix_get_number_why(px, "pmix.job.size", true, why, sizeof(why)); /* PMIX_JOB_SIZE */
    if (nranks < 1 || px->me.rank >= (uint32_t)nranks) {
        if (why[0] == '\0') snprintf(why, sizeof(why), "%ld, and this rank is %u", nranks, px->me.rank);
        GSHMEMI_ERROR(BOOT, "PE %u: PMIx namespace %s gives no usable job size (pmix.job.size: %s)", px->me.rank,
                      px->me.nspace, why);
        status = GSHMEMX_ERR_BOOTSTRAP;
        goto err_free;
    }
    px->nranks = (int)nranks;
    px->timeout_s = env->timeout <= 0 ? 0 : env->timeout >= INT_MAX ? INT_MAX : (int)(env->timeout + 0.999);
    GSHMEMI_INFO(BOOT, "PMIx namespace %s: rank %u of %ld, local rank %ld of %ld", px->me.nspace, px->me.rank,
                 nranks, pmix_get_number(px, "pmix.lrank", false) /* PMIX_LOCAL_RANK */,
                 pmix_get_number(px, "pmix.local.size", true) /* PMIX_LOCAL_SIZE */);
    bs->ops = &pmix_ops;
    bs->impl = px;
    bs->rank = (int)px->me.rank;
    bs->nranks = px->nranks;
    return 0;

err_free:
    free(px);
    return status;
}
