/* The GSHMEM_* configuration table: parsed and validated once at init. */
#ifndef GSHMEMI_ENV_H
#define GSHMEMI_ENV_H

#include <stddef.h>

/*
 * X(NAME, TYPE, field, default, accepted, help)
 *   TYPE: BOOL (0/1/yes/no/true/false/on/off), INT (decimal >= 0; accepted "a..b" bounds it, and
 *         "a..b, a power of two" also asks for a power of two), PE (decimal >= -1; -1: unset),
 *         SIZE (bytes with K/M/G/T suffix, binary), SECONDS (decimal >= 0),
 *         STRING, ENUM (one of the '|'-separated accepted values; field is its index).
 *   The variable is GSHMEM_<NAME>. Nothing outside env.c reads the environment.
 */
#define GSHMEMI_ENV_TABLE(X)                                                                       \
    X(SYMMETRIC_SIZE, SIZE, symmetric_size, "256M", "bytes, K/M/G/T suffixes",                     \
      "Size of each PE's symmetric heap (user allocations; gshmem reserves a little more)")         \
    X(HEAP, ENUM, heap, "auto", "auto|device|host",                                                \
      "Heap backing: GPU memory (device), hugepage host memory (host), or device when a GPU is usable") \
    X(DEVICE, PE, device, "-1", "GPU ordinal, -1: node-local rank modulo the visible GPUs",            \
      "GPU this PE uses (among CUDA_VISIBLE_DEVICES)")                                              \
    X(HUGEPAGES, ENUM, hugepages, "auto", "auto|on|off",                                           \
      "Host heap pages: auto uses 2 MiB hugepages when reserved, else normal pages with THP advice; on requires them") \
    X(TIMEOUT, SECONDS, timeout, "600", "seconds >= 0, decimal (0: wait forever; past 1e9: 1e9)",                          \
      "Longest blocking wait (wait_until, barriers, bootstrap) before a diagnostic ends the job (a device wait: its kernel)") \
    X(MAX_TEAMS, INT, max_teams, "32", "3..64",                                                   \
      "Teams that may exist at once, the predefined WORLD, SHARED and NODE included")              \
    X(CHECK, BOOL, check, "0", "0|1",                                                              \
      "Cross-check collective arguments between PEs and validate every API argument")             \
    X(DEBUG, ENUM, debug, "WARN", "NONE|WARN|INFO|TRACE", "Log level (errors always print)")       \
    X(DEBUG_SUBSYS, STRING, debug_subsys, "ALL", "ALL or a list of INIT,ENV,BOOT,HEAP,ALLOC,RMA,AMO,SYNC,TRANSPORT,CUDA; ^ excludes", \
      "Subsystems whose INFO/TRACE lines print")                                                   \
    X(DEBUG_FILE, STRING, debug_file, "", "path; %h host, %p pid, %r PE",                          \
      "Write log lines to this file instead of stderr")                                            \
    X(INFO, BOOL, info, "0", "0|1", "PE 0 prints the configuration at init")                       \
    X(BOOTSTRAP, ENUM, bootstrap, "auto", "auto|tcp|pmix|k8s|uid|single",                          \
      "How PEs find each other; auto: PMIx (mpirun, srun), then Kubernetes (KUBERNETES_SERVICE_HOST and a pod index), then gshmemrun's variables, else a single PE") \
    X(BOOTSTRAP_ROOT, STRING, bootstrap_root, "", "host:port",                                     \
      "Address of the rendezvous (set by gshmemrun)")                                               \
    X(RANK, PE, rank, "-1", "-1..2147483647", "This process's PE number (set by gshmemrun)")        \
    X(NRANKS, INT, nranks, "0", "0..2147483647", "Number of PEs in the job (set by gshmemrun)")      \
    X(PPN, INT, ppn, "0", "0..2147483647",                                                          \
      "PEs per pod in the k8s bootstrap (set by gshmemrun --ppn, with GSHMEM_RANK the PE's index in its pod)") \
    X(BOOTSTRAP_SECRET, STRING, bootstrap_secret, "", "string (gshmemrun sets a random one)",          \
      "Job secret every bootstrap connection proves it holds (HMAC challenge-response; never sent)") \
    X(BOOTSTRAP_SECRET_FILE, STRING, bootstrap_secret_file, "", "path",                            \
      "File holding the job secret (one trailing newline ignored), e.g. a mounted Kubernetes Secret") \
    X(BOOTSTRAP_UID, STRING, bootstrap_uid, "", "host:port",                                       \
      "Unique-ID bootstrap: where the root listens (gshmemx_get_uniqueid), or with GSHMEM_BOOTSTRAP=uid where rank 0 hosts it") \
    X(JOB_ID, STRING, job_id, "", "string", "Job identifier shared by every PE (set by gshmemrun)") \
    X(NODE_ID, STRING, node_id, "", "string", "Overrides the node identity (hostname and boot id) used to find node-local PEs") \
    X(DISABLE_P2P, BOOL, disable_p2p, "0", "0|1",                                                   \
      "Reach node-local PEs through the remote transport too (tests the remote path on one machine)") \
    X(REMOTE_TRANSPORT, ENUM, remote_transport, "auto", "auto|tcp|ibv",                             \
      "Transport for PEs on other nodes (auto: ibv when an RDMA port is active on every PE, else tcp; ibv: fail rather than fall back)") \
    X(PROXY_RING_SLOTS, INT, proxy_ring_slots, "4096", "128..1048576, a power of two",                 \
      "Requests the ring from the GPU to the proxy thread holds (PEs the GPU cannot map; 64 bytes of "  \
      "pinned host memory each; a put's data takes up to 64 more): a GPU thread waits when it is full") \
    X(TCP_IFNAME, STRING, tcp_ifname, "", "interface name",                                          \
      "Interface whose IPv4 address PEs on other nodes use to reach this PE over tcp (default: every up interface, loopback last, at most 4)") \
    X(TCP_REQUESTS, INT, tcp_requests, "1024", "16..65536",                                           \
      "Requests over tcp that may await their answers at once, per process (a get's chunks, fetching " \
      "atomics, a quiet's ACKs): a thread that finds none free waits for one")                       \
    X(TCP_SOCKBUF, SIZE, tcp_sockbuf, "0", "bytes up to 1G, K/M/G suffixes; 0: the kernel's",         \
      "Send and receive buffer (SO_SNDBUF, SO_RCVBUF) of each tcp connection between PEs, as Open MPI's " \
      "btl_tcp_sndbuf/rcvbuf (0: left to the kernel, which grows them up to net.ipv4.tcp_wmem/rmem)") \
    X(IB_HCA, STRING, ib_hca, "", "list of device[:port]; ^ excludes, = exact names",                 \
      "RDMA devices and ports ibv may use, as NCCL_IB_HCA (default: every active port, the one nearest the GPU first)") \
    X(IB_GID_INDEX, PE, ib_gid_index, "-1", "GID table index, -1: automatic",                         \
      "GID of a RoCE port to address (automatic: the first RoCE v2 GID with an IPv4 address)")       \
    X(IB_TC, INT, ib_tc, "0", "0..255", "Traffic class of RoCE packets (GRH traffic class; DSCP << 2)") \
    X(IB_SL, INT, ib_sl, "0", "0..15", "InfiniBand service level of ibv queue pairs")                 \
    X(IB_QP_DEPTH, INT, ib_qp_depth, "512", "16..32768",                                             \
      "Work requests each ibv queue pair keeps in flight")                                          \
    X(IB_MAX_RAILS, INT, ib_max_rails, "4", "1..4",                                                   \
      "Most RDMA ports one PE uses: the allowed active ports as near its GPU as the nearest; each "  \
      "remote PE's queue pair goes on one of them in turn (1 with GSHMEM_IB_CM=rdmacm)")             \
    X(IB_CM, ENUM, ib_cm, "bootstrap", "bootstrap|rdmacm",                                            \
      "How ibv queue pairs are connected: the bootstrap's exchange of QP numbers and GIDs, or "      \
      "librdmacm (address and route resolution from each PE's IPv4 address; the same on every PE)")  \
    X(IB_RELAXED_ORDERING, BOOL, ib_relaxed_ordering, "1", "0|1",                                     \
      "Register host and GPU heaps with PCIe relaxed ordering where the library offers it "          \
      "(put_signal, fence and quiet then first read each heap they wrote)")

enum gshmemi_env_heap { GSHMEMI_HEAP_AUTO, GSHMEMI_HEAP_DEVICE, GSHMEMI_HEAP_HOST };
enum gshmemi_env_remote { GSHMEMI_REMOTE_AUTO, GSHMEMI_REMOTE_TCP, GSHMEMI_REMOTE_IBV };
enum gshmemi_env_hugepages { GSHMEMI_HUGEPAGES_AUTO, GSHMEMI_HUGEPAGES_ON, GSHMEMI_HUGEPAGES_OFF };
enum gshmemi_env_bootstrap {
    GSHMEMI_BOOTSTRAP_AUTO,
    GSHMEMI_BOOTSTRAP_TCP,
    GSHMEMI_BOOTSTRAP_PMIX,
    GSHMEMI_BOOTSTRAP_K8S,
    GSHMEMI_BOOTSTRAP_UID,
    GSHMEMI_BOOTSTRAP_SINGLE
};

#define GSHMEMI_ENV_CTYPE_BOOL int
#define GSHMEMI_ENV_CTYPE_INT long
#define GSHMEMI_ENV_CTYPE_PE long
#define GSHMEMI_ENV_CTYPE_SIZE size_t
#define GSHMEMI_ENV_CTYPE_SECONDS double
#define GSHMEMI_ENV_CTYPE_STRING const char *
#define GSHMEMI_ENV_CTYPE_ENUM int

struct gshmemi_env {
#define GSHMEMI_ENV_FIELD(NAME, TYPE, field, def, accepted, help) GSHMEMI_ENV_CTYPE_##TYPE field;
    GSHMEMI_ENV_TABLE(GSHMEMI_ENV_FIELD)
#undef GSHMEMI_ENV_FIELD
};

/* Lookup function: getenv in the library, a table in tests. */
typedef const char *(*gshmemi_env_lookup_fn)(const char *name);
/* The process environment: the library's lookup. */
const char *gshmemi_env_getenv(const char *name);

/* Fills env from defaults and lookup. On a bad value returns GSHMEMX_ERR_CONFIG and
 * writes "GSHMEM_X=value: accepted ..." into err (if non-NULL). Strings point into
 * the lookup's storage or the defaults. */
int gshmemi_env_load(struct gshmemi_env *env, gshmemi_env_lookup_fn lookup, char *err, size_t errlen);

/* Parsers shared with tests and tools. Return 0 or GSHMEMX_ERR_CONFIG. */
int gshmemi_env_parse_size(const char *text, size_t *out);
int gshmemi_env_parse_bool(const char *text, int *out);
int gshmemi_env_parse_seconds(const char *text, double *out);
int gshmemi_env_parse_enum(const char *text, const char *accepted, int *out);

/* Row access for gshmem-info and the docs generator. */
struct gshmemi_env_row {
    const char *name; /* "GSHMEM_SYMMETRIC_SIZE" */
    const char *type;
    const char *def;
    const char *accepted;
    const char *help;
};
size_t gshmemi_env_row_count(void);
const struct gshmemi_env_row *gshmemi_env_row(size_t i);
/* The value as set in the environment, or NULL when unset. */
const char *gshmemi_env_raw(size_t i);
/* As gshmemi_env_raw, for printing: a job secret's value is never shown. */
const char *gshmemi_env_shown(size_t i);

#endif
