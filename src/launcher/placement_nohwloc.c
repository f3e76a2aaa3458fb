/* Placement in a gshmemrun built without hwloc: PEs are never bound. */
#include <stdio.h>
#include <stdlib.h>

#include "launcher/placement.h"

int run_placement_supported(void)
{
    return 0;
}

int run_placement_create(enum run_bind bind, long np, char *const *env, int verbose, struct run_placement *out)
{
    (void)env;
    *out = (struct run_placement){.bind = RUN_BIND_NONE, .np = np};
    if (bind != RUN_BIND_AUTO && bind != RUN_BIND_NONE) {
        fprintf(stderr, "gshmemrun: --bind-to %s: this gshmemrun was built without hwloc (install libhwloc-dev "
                        "and rebuild), so it can only run unbound PEs (--bind-to none)\n", run_bind_name(bind));
        return -1;
    }
    if ((out->pes = calloc((size_t)np, sizeof(*out->pes))) == NULL) {
        fprintf(stderr, "gshmemrun: out of memory\n");
        return -1;
    }
    for (long r = 0; r < np; r++) {
        out->pes[r].gpu = -1;
        run_own_cpus_text(out->pes[r].cpus_text, sizeof(out->pes[r].cpus_text));
        snprintf(out->pes[r].nodes_text, sizeof(out->pes[r].nodes_text), "-");
    }
    if (verbose) {
        fprintf(stderr, "gshmemrun: bind-to none (built without hwloc)\n");
        run_placement_report(out);
    }
    return 0;
}
