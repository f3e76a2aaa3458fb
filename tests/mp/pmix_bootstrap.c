/* The PMIx bootstrap itself under mpirun, without gshmem_init: several allgather rounds of
 * odd lengths (every byte checked), barriers, then one round where PE 2 contributes more
 * bytes than the others, which every PE must report as GSHMEMX_ERR_MISMATCH. Exits 0 when
 * every step behaved; the mismatch text is checked by the test (expect_fail.sh -z). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bootstrap/bootstrap.h"
#include "core/env.h"
#include "gshmem/status.h"

static const char *boot_lookup(const char *name)
{
    return getenv(name);
}

static unsigned char pattern(int rank, int round, size_t i)
{
    return (unsigned char)(rank * 29 + round * 13 + (int)i * 7 + 1);
}

static int fail(const struct gshmemi_bootstrap *bs, const char *what, int rc)
{
    fprintf(stderr, "pmix_bootstrap: PE %d: %s (%s)\n", bs->rank, what, gshmemx_status_name(rc));
    return 1;
}

/* `late`: PE 3 stays away from a barrier for GSHMEM_TIMEOUT + 2 s; the others' fence must
 * time out (GSHMEMX_ERR_TIMEOUT) and say after how long and for how many PEs (checked by
 * the test's expected text). */
static int late_barrier(struct gshmemi_bootstrap *bs, double timeout)
{
    if (bs->rank == 3) {
        sleep((unsigned)timeout + 2);
        gshmemi_bootstrap_fini(bs);
        return 0;
    }
    int rc = bs->ops->barrier(bs);
    if (rc != GSHMEMX_ERR_TIMEOUT) return fail(bs, "a barrier PE 3 never joined did not time out", rc);
    fprintf(stderr, "pmix_bootstrap: PE %d: the barrier timed out, as it should\n", bs->rank);
    gshmemi_bootstrap_fini(bs);
    return 0;
}

int main(int argc, char **argv)
{
    struct gshmemi_env env;
    struct gshmemi_bootstrap bs;
    char err[256];
    if (gshmemi_env_load(&env, boot_lookup, err, sizeof(err)) != 0) {
        fprintf(stderr, "env: %s\n", err);
        return 1;
    }
    int rc = gshmemi_bootstrap_init(&env, &bs);
    if (rc) {
        fprintf(stderr, "pmix_bootstrap: init failed (%s)\n", gshmemx_status_name(rc));
        return 1;
    }
    if (strcmp(bs.ops->name, "pmix") != 0) return fail(&bs, "auto-detection did not pick pmix", 0);
    if (bs.nranks < 3) return fail(&bs, "needs at least 3 PEs", 0);
    if (argc > 1 && strcmp(argv[1], "late") == 0) return late_barrier(&bs, env.timeout);
    static const size_t lens[] = {1, 37, 4096, 0, 300000};
    for (int round = 0; round < (int)(sizeof(lens) / sizeof(lens[0])); round++) {
        size_t len = lens[round];
        unsigned char *in = malloc(len + 1), *out = malloc((size_t)bs.nranks * len + 1);
        for (size_t i = 0; i < len; i++) in[i] = pattern(bs.rank, round, i);
        memset(out, 0xa5, (size_t)bs.nranks * len + 1);
        if ((rc = bs.ops->allgather(&bs, in, out, len)) != 0) return fail(&bs, "allgather failed", rc);
        for (int r = 0; r < bs.nranks; r++)
            for (size_t i = 0; i < len; i++)
                if (out[(size_t)r * len + i] != pattern(r, round, i)) {
                    fprintf(stderr, "pmix_bootstrap: PE %d round %d: byte %zu of PE %d is 0x%02x\n", bs.rank,
                            round, i, r, out[(size_t)r * len + i]);
                    return 1;
                }
        if (out[(size_t)bs.nranks * len] != 0xa5) return fail(&bs, "allgather wrote past the end", 0);
        free(in), free(out);
        if ((rc = bs.ops->barrier(&bs)) != 0) return fail(&bs, "barrier failed", rc);
    }
    if (bs.ops->check(&bs) != 0) return fail(&bs, "check reported a problem", 0);
    unsigned char in[16] = {0}, out[64 * 16];
    rc = bs.ops->allgather(&bs, in, out, bs.rank == 2 ? 16 : 8);
    if (rc != GSHMEMX_ERR_MISMATCH) return fail(&bs, "a length mismatch was not reported", rc);
    if (bs.rank == 0) printf("pmix_bootstrap: %d PEs, 5 rounds and the mismatch behaved\n", bs.nranks);
    gshmemi_bootstrap_fini(&bs);
    return 0;
}
