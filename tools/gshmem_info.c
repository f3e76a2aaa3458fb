/* gshmem-info: what this build contains, what the machine offers, every GSHMEM_* variable. */
#include "bootstrap/bootstrap.h"
#include "core/env.h"
#include "core/heap.h"
#include "device/cuda_probe.h"
#include "device/mps.h"
#include "gshmem_build_config.h"
#include "info_check.h"
#include "transport/transport.h"

#include <gshmem.h>

#include <stdio.h>
#include <string.h>

static void info_usage(FILE *out)
{
    fprintf(out, "usage: gshmem-info [--env-markdown | --check] [-h]\n"
                 "  Prints the build configuration, hugepage and GPU status, and every GSHMEM_*\n"
                 "  variable with its current value, default and help.\n"
                 "  --env-markdown  prints only the variable table as Markdown (for the docs)\n"
                 "  --check         checks this node for a first run (GPUs and their peer links, MPS,\n"
                 "                  hugepages, memlock, vm.max_map_count, NUMA placement, RDMA): one\n"
                 "                  OK/WARN/FAIL line per item and a fix: line under each WARN and\n"
                 "                  FAIL; exits 1 when an item fails\n"
                 "  --sysroot DIR   (for tests) with --check, reads /proc and /sys under DIR\n");
}

/* Markdown table cells cannot hold a bare '|'. */
static void info_print_cell(const char *text)
{
    for (const char *p = text; *p; p++) {
        if (*p == '|') fputc('\\', stdout);
        fputc(*p, stdout);
    }
}

static void info_env_markdown(void)
{
    printf("| Variable | Type | Default | Accepted | Description |\n|---|---|---|---|---|\n");
    for (size_t i = 0; i < gshmemi_env_row_count(); i++) {
        const struct gshmemi_env_row *r = gshmemi_env_row(i);
        printf("| `%s` | %s | `%s` | ", r->name, r->type, r->def[0] ? r->def : "\"\"");
        info_print_cell(r->accepted);
        printf(" | %s |\n", r->help);
    }
}

static void info_env_table(void)
{
    printf("\nGSHMEM_* variables (value: * marks one set in the environment):\n");
    for (size_t i = 0; i < gshmemi_env_row_count(); i++) {
        const struct gshmemi_env_row *r = gshmemi_env_row(i);
        const char *raw = gshmemi_env_shown(i);
        printf("  %-24s %s%-10s (default %s; %s)\n      %s\n", r->name, raw ? "*" : " ", raw ? raw : r->def,
               r->def[0] ? r->def : "\"\"", r->accepted, r->help);
    }
}

/* Each visible GPU (name, UUID, whether a process here would be an MPS client) and
 * which one a PE picks. */
static void info_gpus(int gpus, const struct gshmemi_env *env, int env_ok)
{
    for (int d = 0; d < gpus; d++) {
        struct gshmemi_gpu_info gpu;
        char why[256];
        if (gshmemi_gpu_describe(d, &gpu, why, sizeof(why)) == 0)
            printf("    GPU %d:      %s, %s, MPS %s\n", d, gpu.name, gpu.uuid,
                   gpu.mps > 0 ? "on" : gpu.mps == 0 ? "off" : "unknown");
        else
            printf("    GPU %d:      %s\n", d, why);
    }
    if (!env_ok) return;
    if (env->device >= 0)
        printf("  GPU choice:   GPU %ld for every PE (GSHMEM_DEVICE)\n", env->device);
    else
        printf("  GPU choice:   node-local rank modulo %d visible GPU%s (GSHMEM_DEVICE picks one; "
               "CUDA_VISIBLE_DEVICES narrows the list)\n", gpus, gpus == 1 ? "" : "s");
}

static int info_run_check(const char *sysroot)
{
    struct info_check check;
    info_check_init(&check, stdout, sysroot);
    return info_check_run(&check) ? 1 : 0;
}

int main(int argc, char **argv)
{
    int check = 0;
    const char *sysroot = "";
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--env-markdown") == 0) {
            info_env_markdown();
            return 0;
        }
        if (strcmp(argv[i], "--check") == 0) {
            check = 1;
            continue;
        }
        if (strcmp(argv[i], "--sysroot") == 0 && i + 1 < argc) {
            sysroot = argv[++i];
            continue;
        }
        int help = strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0;
        info_usage(help ? stdout : stderr);
        return help ? 0 : 2;
    }
    if (check) return info_run_check(sysroot);
    if (sysroot[0]) {
        fprintf(stderr, "gshmem-info: --sysroot only goes with --check\n");
        return 2;
    }
    struct gshmemi_env env;
    char err[512];
    int env_rc = gshmemi_env_load(&env, gshmemi_env_getenv, err, sizeof(err));
    char name[GSHMEM_MAX_NAME_LEN], huge[256], why[256] = "";
    gshmem_info_get_name(name);
    gshmemi_heap_describe_hugepages(huge, sizeof(huge));
    int gpus = gshmemi_cuda_probe(why, sizeof(why));
    printf("%s (OpenSHMEM %d.%d)\n", name, GSHMEM_MAJOR_VERSION, GSHMEM_MINOR_VERSION);
    printf("  build type:   %s\n", GSHMEMI_BUILD_TYPE);
    printf("  CUDA:         %s\n", gshmemi_cuda_built() ? "built in" : "not built");
    if (gpus) printf("  GPUs:         %d\n", gpus);
    else printf("  GPUs:         0 (%s)\n", why);
    if (gpus) info_gpus(gpus, &env, env_rc == 0);
    printf("  heaps:        %s\n", gshmemi_cuda_built() ? "device (CUDA VMM) when a GPU is usable, else host (hugetlb or THP)"
                                                          : "host (hugetlb or THP); device heap needs a CUDA build");
    printf("  transports:   %s\n", GSHMEMI_BUILD_TRANSPORTS);
    if (env_rc == 0) {
        const char *remote_why, *remote = gshmemi_transports_remote_choice(&env, &remote_why);
        printf("  node-local:   %s\n", env.disable_p2p ? "remote transport too (GSHMEM_DISABLE_P2P=1)"
                                                       : "p2p (same node id: hostname and boot id, or GSHMEM_NODE_ID)");
        printf("  other nodes:  %s (%s)\n", remote, remote_why);
    }
    printf("  RDMA:\n");
    gshmemi_transport_ibv_describe(stdout);
    printf("  bootstraps:   %s\n", GSHMEMI_BUILD_BOOTSTRAPS);
    if (env_rc == 0 && env.bootstrap == GSHMEMI_BOOTSTRAP_AUTO) {
        const char *boot_why, *boot = gshmemi_bootstrap_detect(&env, &boot_why);
        printf("  bootstrap:    auto -> %s (%s)\n", boot, boot_why);
    }
    printf("  hugepages:    %s\n", huge);
    if (env_rc == 0)
        printf("  host heap:    %zu bytes per PE on %s\n", env.symmetric_size,
               env.hugepages == GSHMEMI_HUGEPAGES_OFF ? "normal pages (GSHMEM_HUGEPAGES=off)"
               : gshmemi_heap_hugepages_fit(env.symmetric_size + GSHMEMI_HEAP_RESERVED)
                   ? "2 MiB hugepages (enough are free for one PE)"
                   : "normal pages with THP advice (not enough free hugepages)");
    else
        printf("  configuration error: %s\n", err);
    info_env_table();
    return env_rc == 0 ? 0 : 1;
}
