/*
 * A PE of the simulated-pod tests (k8s_pods.sh). gshmem_init cannot start PEs on different
 * nodes yet (no remote transport: it fails with "PE n is on another node ... no remote
 * transport yet"), so this drives the bootstrap layer as init does: starts it from the
 * environment, checks the PE number against the pod index, the job size, that every pod is
 * its own node, and (allgather of host names) that PE r runs in pod gshm-<r / PPN> (or
 * $K8S_POD_PREFIX<r / PPN>); then a
 * barrier. With "die P" PE P exits mid-run while the others wait in a barrier.
 *
 * usage: k8s_pe NPES PPN [die P]   (PPN: PEs per pod, as gshmemrun --ppn starts them)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bootstrap/bootstrap.h"
#include "core/env.h"
#include "core/log.h"
#include "gshmem/status.h"

#define HOST_LEN 64

int main(int argc, char **argv)
{
    int npes = argc > 1 ? atoi(argv[1]) : 0;
    int ppn = argc > 2 ? atoi(argv[2]) : 1;
    const char *prefix = getenv("K8S_POD_PREFIX"); /* pod names: <prefix><index> */
    if (prefix == NULL) prefix = "gshm-";
    int die = argc > 4 && strcmp(argv[3], "die") == 0 ? atoi(argv[4]) : -1;
    const char *idx = getenv("K8S_POD_INDEX"); /* set by k8s_pods.sh -c: the pod's index */
    if (idx == NULL) idx = getenv("JOB_COMPLETION_INDEX");
    char host[HOST_LEN] = "", err[256];
    gethostname(host, sizeof(host) - 1);
    struct gshmemi_env env;
    struct gshmemi_bootstrap bs;
    if (gshmemi_env_load(&env, gshmemi_env_getenv, err, sizeof(err)) != 0) {
        fprintf(stderr, "k8s_pe: %s\n", err);
        return 2;
    }
    gshmemi_log_configure(env.debug, env.debug_subsys, env.debug_file);
    int rc = gshmemi_bootstrap_init(&env, &bs);
    if (rc != 0) {
        fprintf(stderr, "k8s_pe: bootstrap on %s failed: %s\n", host, gshmemx_strerror(rc));
        return 1;
    }
    int me = bs.rank, n = bs.nranks;
    if (ppn < 1 || n != npes || idx == NULL || me / ppn != atoi(idx) || bs.local_nranks != ppn ||
        bs.local_rank != me % ppn || strcmp(bs.ops->name, "k8s") != 0) {
        fprintf(stderr, "k8s_pe: FAIL on %s: PE %d of %d (expected one of pod %d's, of %d), local PE %d of %d "
                "(expected %d per pod), bootstrap %s\n", host, me, n, idx ? atoi(idx) : -1, npes, bs.local_rank,
                bs.local_nranks, ppn, bs.ops->name);
        return 1;
    }
    char *hosts = calloc((size_t)n, HOST_LEN);
    if (hosts == NULL || (rc = bs.ops->allgather(&bs, host, hosts, HOST_LEN)) != 0) {
        fprintf(stderr, "k8s_pe: PE %d: allgather failed: %s\n", me, gshmemx_strerror(rc));
        return 1;
    }
    for (int r = 0; r < n; r++) {
        char want[HOST_LEN];
        snprintf(want, sizeof(want), "%s%d", prefix, r / ppn);
        if (strcmp(hosts + (size_t)r * HOST_LEN, want) != 0 || bs.node_of_rank[r] != r / ppn) {
            fprintf(stderr, "k8s_pe: FAIL: PE %d is in pod '%s' (expected %s), node %d\n", r,
                    hosts + (size_t)r * HOST_LEN, want, bs.node_of_rank[r]);
            return 1;
        }
    }
    printf("k8s_pe: PE %d of %d on %s, %d nodes\n", me, n, host, n / ppn);
    fflush(stdout);
    if (me == die) {
        fprintf(stderr, "k8s_pe: PE %d exits mid-run\n", me);
        fflush(stderr);
        _exit(3);
    }
    if ((rc = bs.ops->barrier(&bs)) != 0) {
        fprintf(stderr, "k8s_pe: PE %d: barrier failed: %s\n", me, gshmemx_strerror(rc));
        gshmemi_bootstrap_fini(&bs); /* PE 0: lets the root it hosts tell the others */
        return 1;
    }
    gshmemi_bootstrap_fini(&bs);
    free(hosts);
    printf("k8s_pe: PE %d done\n", me);
    return 0;
}
