/* gshmem-info --check's GPU, MPS and NUMA items (tools/info_check*.c) on a made-up
 * machine: GPUs, their links and this process's CPUs are set in the context, NUMA nodes
 * and the GPUs' PCI functions live in a temporary sysfs tree. The other items are
 * driven through the binary by tools/check_info_check.sh. */
#include "info_check.h"

#include "device/cuda_probe.h"

#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[] = "/tmp/gshmem-info-check-XXXXXX";
static struct info_check check;
static char *text;
static size_t text_len;

static void put_file(const char *path, const char *contents)
{
    char full[512];
    snprintf(full, sizeof(full), "%s%s", root, path);
    for (char *slash = strchr(full + strlen(root) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
        *slash = '\0';
        mkdir(full, 0755);
        *slash = '/';
    }
    FILE *f = fopen(full, "w");
    cr_assert(f, "cannot write %s", full);
    fputs(contents, f);
    fclose(f);
}

static void add_gpu(int d, const char *bus, const char *numa_node)
{
    char path[128];
    snprintf(check.gpu[d].name, sizeof(check.gpu[d].name), "Test GPU");
    snprintf(check.gpu[d].pci_bus_id, sizeof(check.gpu[d].pci_bus_id), "%s", bus);
    check.gpu[d].mps = 0;
    snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/numa_node", bus);
    put_file(path, numa_node);
    check.gpus = d + 1;
}

static void set_link(int a, int b, int link)
{
    check.link[a][b] = check.link[b][a] = (signed char)link;
}

static void allow_cpus(int lo, int hi)
{
    CPU_ZERO(&check.allowed);
    for (int c = lo; c <= hi; c++) CPU_SET(c, &check.allowed);
}

/* Four GPUs, NVLink within {0,1} and {2,3}, PCIe across; GPUs 0 and 1 on NUMA node 1,
 * GPUs 2 and 3 on node 0; node 0 has CPUs 0-1, node 1 CPUs 2-3. */
static void machine_setup(void)
{
    cr_assert(mkdtemp(root));
    memset(&check, 0, sizeof(check));
    check.out = open_memstream(&text, &text_len);
    check.root = root;
    gshmemi_env_load(&check.env, NULL, NULL, 0);
    check.cuda_built = 1;
    add_gpu(0, "0000:3b:00.0", "1\n");
    add_gpu(1, "0000:5e:00.0", "1\n");
    add_gpu(2, "0000:86:00.0", "0\n");
    add_gpu(3, "0000:af:00.0", "0\n");
    for (int a = 0; a < 4; a++)
        for (int b = a + 1; b < 4; b++)
            set_link(a, b, a / 2 == b / 2 ? GSHMEMI_GPU_LINK_NVLINK : GSHMEMI_GPU_LINK_PCIE);
    put_file("/sys/devices/system/node/node0/cpulist", "0-1\n");
    put_file("/sys/devices/system/node/node1/cpulist", "2-3\n");
    allow_cpus(0, 3);
}

static void machine_teardown(void)
{
    fclose(check.out);
    free(text);
    char cmd[128];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
    cr_expect_eq(system(cmd), 0);
    strcpy(root + strlen(root) - 6, "XXXXXX");
}

/* What the items printed so far. */
static const char *printed(void)
{
    fflush(check.out);
    return text;
}

static int starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Forgets what was printed and the failures counted. */
static void restart(void)
{
    fclose(check.out);
    free(text);
    text = NULL;
    check.out = open_memstream(&text, &text_len);
    check.fails = 0;
}

TestSuite(info_check, .init = machine_setup, .fini = machine_teardown);

Test(info_check, gpus_and_their_links)
{
    info_check_gpus(&check);
    cr_expect_str_eq(printed(),
                     "OK    gpus           4 visible; a PE's heap goes on its GPU\n"
                     "                     GPU 0: Test GPU, 0000:3b:00.0, NUMA node 1\n"
                     "                     GPU 1: Test GPU, 0000:5e:00.0, NUMA node 1\n"
                     "                     GPU 2: Test GPU, 0000:86:00.0, NUMA node 0\n"
                     "                     GPU 3: Test GPU, 0000:af:00.0, NUMA node 0\n"
                     "                     peer access with native atomics (NVLink): 0-1 2-3\n"
                     "                     peer access without native atomics (PCIe): 0-2 0-3 1-2 1-3\n");
    cr_expect_eq(check.fails, 0);
}

Test(info_check, all_pairs_of_one_kind_are_summed_up)
{
    for (int a = 0; a < 4; a++)
        for (int b = a + 1; b < 4; b++) set_link(a, b, GSHMEMI_GPU_LINK_NVLINK);
    info_check_gpus(&check);
    cr_expect(strstr(printed(), "\n                     all 6 pairs: peer access with native atomics (NVLink)\n"),
              "%s", printed());
}

Test(info_check, a_pair_without_peer_access_fails_unless_p2p_is_off)
{
    set_link(1, 3, GSHMEMI_GPU_LINK_NONE);
    check.link[0][2] = GSHMEMI_GPU_LINK_NONE; /* one direction only: the pair is as weak as its worse way */
    info_check_gpus(&check);
    cr_expect(starts_with(printed(), "FAIL  gpus           4 visible, 2 pairs without peer access (below): PEs on "
                                     "those GPUs cannot map each other's heap, so gshmem_init fails when one node's "
                                     "PEs use both\n                     fix: give the job GPUs"), "%s", printed());
    cr_expect(strstr(printed(), "\n                     no peer access: 0-2 1-3\n"), "%s", printed());
    cr_expect_eq(check.fails, 1);
    restart();
    check.env.disable_p2p = 1;
    info_check_gpus(&check);
    cr_expect(starts_with(printed(), "OK    gpus           4 visible; GSHMEM_DISABLE_P2P=1, so pairs without peer "
                                     "access (below) do not matter\n"), "%s", printed());
    cr_expect_eq(check.fails, 0);
}

Test(info_check, gshmem_device_out_of_range_fails)
{
    check.env.device = 4;
    info_check_gpus(&check);
    cr_expect(starts_with(printed(), "FAIL  gpus           4 visible, but GSHMEM_DEVICE=4: gshmem_init fails\n"
                                     "                     fix: GSHMEM_DEVICE=0..3, or unset it (node-local rank "
                                     "modulo the GPUs)\n"), "%s", printed());
    cr_expect_eq(check.fails, 1);
}

Test(info_check, mps_warns_only_when_sharing_is_known)
{
    info_check_mps(&check);
    cr_expect_str_eq(printed(), "OK    mps            no MPS daemon serves this process; PEs share a GPU only when a "
                                "node runs more PEs than its 4 GPUs, which is not known before the job starts "
                                "(gshmem_init warns then)\n");
    restart();
    check.env.device = 2;
    info_check_mps(&check);
    cr_expect_str_eq(printed(), "WARN  mps            no MPS daemon serves this process, and GSHMEM_DEVICE=2 puts "
                                "every PE of this node on GPU 2: their kernels take turns on it, so each wait "
                                "between them may last a time slice\n"
                                "                     fix: start MPS before the job: export CUDA_MPS_PIPE_DIRECTORY "
                                "and CUDA_MPS_LOG_DIRECTORY (a private daemon), nvidia-cuda-mps-control -d; stop it "
                                "after with echo quit | nvidia-cuda-mps-control\n");
    restart();
    check.env.device = -1;
    check.env.ppn = 8;
    info_check_mps(&check);
    cr_expect(strstr(printed(), "WARN  mps            no MPS daemon serves this process, and GSHMEM_PPN=8 PEs per pod "
                                "share 4 GPUs:"), "%s", printed());
    restart();
    for (int d = 0; d < 4; d++) check.gpu[d].mps = 1;
    info_check_mps(&check);
    cr_expect(strstr(printed(), "OK    mps            an MPS control daemon serves this process: PEs sharing a GPU "
                                "run their kernels side by side\n"), "%s", printed());
    cr_expect_eq(check.fails, 0);
}

Test(info_check, numa_warns_when_no_cpu_is_on_the_gpus_node)
{
    allow_cpus(0, 1); /* node 0; GPU 0 (node-local rank 0's) is on node 1 */
    info_check_numa(&check);
    cr_expect_str_eq(printed(), "WARN  numa           this process runs on node 0 (CPUs 0-1), but GPU 0 (node-local "
                                "rank 0's) is on node 1: its proxy thread and host copies cross the socket link\n"
                                "                     fix: start each PE on its GPU's node: numactl --cpunodebind=1 "
                                "--membind=1 <program>, taskset -c 2-3, or the launcher's binding (srun --cpu-bind, "
                                "mpirun --bind-to numa)\n"
                                "                     fix: or GSHMEM_DEVICE=2, a GPU on this process's node\n");
    cr_expect_eq(check.fails, 0, "a NUMA mismatch costs speed, not correctness");
}

Test(info_check, numa_follows_gshmem_device)
{
    allow_cpus(0, 1);
    check.env.device = 3; /* on node 0, with this process */
    info_check_numa(&check);
    cr_expect_str_eq(printed(), "OK    numa           this process runs on node 0 (CPUs 0-1), GPU 3's node 0 "
                                "included\n");
}

Test(info_check, numa_spanning_nodes_and_unknown_gpu_node)
{
    info_check_numa(&check);
    cr_expect_str_eq(printed(), "OK    numa           this process runs on nodes 0,1 (CPUs 0-3), GPU 0's node 1 "
                                "included; the proxy thread binds itself to that node's CPUs\n");
    restart();
    put_file("/sys/bus/pci/devices/0000:3b:00.0/numa_node", "-1\n");
    info_check_numa(&check);
    cr_expect_str_eq(printed(), "OK    numa           2 nodes; this process runs on nodes 0,1 (CPUs 0-3); GPU 0's node "
                                "is unknown (sysfs numa_node)\n");
}

Test(info_check, hugepages_do_not_matter_for_a_device_heap)
{
    info_check_hugepages(&check);
    cr_expect_str_eq(printed(), "OK    hugepages      not needed: the heap goes on the GPU (hugepages back only a host "
                                "heap, GSHMEM_HEAP=host)\n");
}
