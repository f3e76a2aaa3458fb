/*
 * Selftest of the mock libibverbs. Each case runs in a child process of its own
 * (the mock reads its environment per process and context, and some cases kill
 * or abort), in a private registry directory made here.
 * Usage: mock_selftest [case...]  (no argument: every case). The mock's error
 * reports are off (GSHMEM_MOCK_IB_QUIET=1) unless the environment says otherwise.
 */
#define _GNU_SOURCE
#include "selftest.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static void check_gid(struct ibv_context *ctx, uint32_t index, const char *hex, uint32_t type)
{
    struct ibv_gid_entry e;
    char got[33];
    memset(&e, 0x5c, sizeof(e));
    CHECK_EQ(ibv_query_gid_ex(ctx, 1, index, &e, 0), 0);
    for (int i = 0; i < 16; i++)
        snprintf(got + 2 * i, 3, "%02x", e.gid.raw[i]);
    if (strcmp(got, hex))
        fprintf(stderr, "gid %u: %s, expected %s\n", index, got, hex);
    CHECK(!strcmp(got, hex));
    CHECK_EQ(e.gid_type, type);
    CHECK_EQ(e.gid_index, index);
    CHECK_EQ(e.port_num, 1);
}

static int device_count(const char *env)
{
    int n = -1;
    setenv("GSHMEM_MOCK_IB_DEVICES", env, 1);
    struct ibv_device **list = ibv_get_device_list(&n);
    unsetenv("GSHMEM_MOCK_IB_DEVICES");
    if (!list)
        return -1;
    CHECK(list[n] == NULL);
    for (int i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof(name), "mockib%d", i);
        CHECK(!strcmp(ibv_get_device_name(list[i]), name));
    }
    ibv_free_device_list(list);
    return n;
}

/* dlopen("libibverbs.so.1") finds the mock, with every symbol the transport looks up. */
static void check_dlopen(void)
{
    static const char *const names[] = {
        "ibv_get_device_list", "ibv_free_device_list", "ibv_get_device_name", "ibv_get_device_guid",
        "ibv_open_device", "ibv_close_device", "ibv_query_device", "ibv_query_port", "ibv_query_gid",
        "_ibv_query_gid_ex", "ibv_alloc_pd", "ibv_dealloc_pd", "ibv_reg_mr", "ibv_reg_mr_iova2",
        "ibv_reg_dmabuf_mr", "ibv_dereg_mr", "ibv_create_cq", "ibv_destroy_cq", "ibv_create_qp",
        "ibv_destroy_qp", "ibv_modify_qp", "ibv_query_qp", "ibv_get_async_event", "ibv_ack_async_event",
        "ibv_wc_status_str", "ibv_event_type_str", "ibv_port_state_str"};
    void *h = dlopen("libibverbs.so.1", RTLD_NOW);
    CHECK(h);
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (!dlsym(h, names[i])) {
            fprintf(stderr, "dlsym %s: %s\n", names[i], dlerror());
            exit(1);
        }
    struct ibv_device **(*list_fn)(int *);
    *(void **)&list_fn = dlsym(h, "ibv_get_device_list");
    int n = 0;
    struct ibv_device **list = list_fn(&n);
    CHECK(list && n == 1 && !strcmp(list[0]->name, "mockib0"));
    ibv_free_device_list(list);
    dlclose(h);
}

static void check_roce_port(struct ibv_context *ctx)
{
    struct ibv_device_attr da;
    struct ibv_port_attr pa;
    CHECK_EQ(ibv_query_device(ctx, &da), 0);
    CHECK_EQ(da.vendor_id, 0x02c9);
    CHECK_EQ(da.max_qp_wr, 32768);
    CHECK_EQ(da.max_sge, 16);
    CHECK_EQ(da.max_cqe, 4194303);
    CHECK_EQ(da.atomic_cap, IBV_ATOMIC_HCA);
    CHECK_EQ(da.max_qp_rd_atom, 16);
    CHECK_EQ(da.max_qp_init_rd_atom, 16);
    CHECK_EQ(da.phys_port_cnt, 1);
    CHECK(da.node_guid == ibv_get_device_guid(ctx->device));
    /* The exported symbol has the compat layout: nothing past `flags` is written. */
    memset(&pa, 0x5c, sizeof(pa));
    CHECK_EQ((ibv_query_port)(ctx, 1, (struct _compat_ibv_port_attr *)&pa), 0);
    CHECK_EQ(pa.port_cap_flags2, 0x5c5c);
    CHECK_EQ(pa.state, IBV_PORT_ACTIVE);
    CHECK_EQ(pa.link_layer, IBV_LINK_LAYER_ETHERNET);
    CHECK_EQ(pa.max_mtu, IBV_MTU_4096);
    CHECK_EQ(pa.active_mtu, IBV_MTU_1024);
    CHECK_EQ(pa.gid_tbl_len, 8);
    CHECK_EQ(pa.lid, 0);
    CHECK_EQ(pa.flags, 0);
    CHECK_EQ(ibv_query_port(ctx, 2, &pa), EINVAL);
    check_gid(ctx, 0, "fe80000000000000004d4bfffe000001", IBV_GID_TYPE_ROCE_V1);
    check_gid(ctx, 1, "fe80000000000000004d4bfffe000001", IBV_GID_TYPE_ROCE_V2);
    check_gid(ctx, 2, "00000000000000000000ffffc6120001", IBV_GID_TYPE_ROCE_V1);
    check_gid(ctx, 3, "00000000000000000000ffffc6120001", IBV_GID_TYPE_ROCE_V2);
    struct ibv_gid_entry e;
    union ibv_gid gid;
    for (uint32_t i = 4; i < 8; i++)
        CHECK_EQ(ibv_query_gid_ex(ctx, 1, i, &e, 0), ENODATA);
    CHECK_EQ(ibv_query_gid_ex(ctx, 1, 8, &e, 0), EINVAL);
    CHECK_EQ(ibv_query_gid_ex(ctx, 1, 0, &e, 1), EINVAL);
    memset(&gid, 0x5c, sizeof(gid));
    CHECK_EQ(ibv_query_gid(ctx, 1, 5, &gid), 0);
    for (int i = 0; i < 16; i++)
        CHECK_EQ(gid.raw[i], 0);
    CHECK_EQ(ibv_query_gid(ctx, 1, 8, &gid), -1);
}

void case_devices(void)
{
    check_dlopen();
    CHECK_EQ(device_count("2"), 2);
    CHECK_EQ(device_count("0"), 0);
    CHECK_EQ(device_count("x"), -1);

    struct ibv_context *ctx = st_open("mockib0");
    struct pollfd pfd = {.fd = ctx->async_fd, .events = POLLIN};
    CHECK(ctx->async_fd >= 0 && poll(&pfd, 1, 0) == 0);
    check_roce_port(ctx);
    CHECK(!strcmp(ibv_wc_status_str(IBV_WC_SUCCESS), "success"));
    CHECK(strstr(ibv_wc_status_str(IBV_WC_RETRY_EXC_ERR), "retry"));
    CHECK(!strcmp(ibv_port_state_str(IBV_PORT_ACTIVE), "PORT_ACTIVE"));
    CHECK(strstr(ibv_event_type_str(IBV_EVENT_QP_FATAL), "QP"));
    CHECK_EQ(ibv_close_device(ctx), 0);

    struct ibv_port_attr pa;
    setenv("GSHMEM_MOCK_IB_DEVICES", "2", 1);
    ctx = st_open("mockib1");
    check_gid(ctx, 3, "00000000000000000000ffffc6120002", IBV_GID_TYPE_ROCE_V2);
    CHECK_EQ(ibv_close_device(ctx), 0);
    unsetenv("GSHMEM_MOCK_IB_DEVICES");

    setenv("GSHMEM_MOCK_IB_LINK", "ib", 1);
    ctx = st_open("mockib0");
    CHECK_EQ(ibv_query_port(ctx, 1, &pa), 0);
    CHECK_EQ(pa.link_layer, IBV_LINK_LAYER_INFINIBAND);
    CHECK(pa.lid != 0);
    CHECK_EQ(pa.state, IBV_PORT_ACTIVE);
    check_gid(ctx, 0, "fe80000000000000004d4bfffe000001", IBV_GID_TYPE_IB);
    struct ibv_gid_entry e;
    CHECK_EQ(ibv_query_gid_ex(ctx, 1, 1, &e, 0), ENODATA);
    CHECK_EQ(ibv_close_device(ctx), 0);
    setenv("GSHMEM_MOCK_IB_LINK", "fddi", 1);
    CHECK(st_open_maybe("mockib0") == NULL);
    unsetenv("GSHMEM_MOCK_IB_LINK");

    setenv("GSHMEM_MOCK_IB_PORT", "down", 1);
    ctx = st_open("mockib0");
    CHECK_EQ(ibv_query_port(ctx, 1, &pa), 0);
    CHECK_EQ(pa.state, IBV_PORT_DOWN);
    CHECK_EQ(ibv_close_device(ctx), 0);
    unsetenv("GSHMEM_MOCK_IB_PORT");
}

static void check_cq_qp_limits(struct ibv_context *ctx, struct ibv_pd *pd)
{
    errno = 0;
    CHECK(!ibv_create_cq(ctx, 0, NULL, NULL, 0) && errno == EINVAL);
    CHECK(!ibv_create_cq(ctx, 4194304, NULL, NULL, 0) && errno == EINVAL);
    CHECK(!ibv_create_cq(ctx, 16, NULL, NULL, 1) && errno == EINVAL);
    struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
    CHECK(cq && cq->cqe == 16);
    struct ibv_qp_init_attr ia = {.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD,
                                  .cap = {.max_send_wr = 8, .max_send_sge = 1, .max_inline_data = 1000}};
    CHECK(!ibv_create_qp(pd, &ia));
    ia.qp_type = IBV_QPT_RC;
    ia.cap.max_send_wr = 32769;
    CHECK(!ibv_create_qp(pd, &ia) && errno == EINVAL);
    ia.cap.max_send_wr = 8;
    ia.cap.max_send_sge = 17;
    CHECK(!ibv_create_qp(pd, &ia) && errno == EINVAL);
    ia.cap.max_send_sge = 1;
    struct ibv_qp *qp = ibv_create_qp(pd, &ia);
    CHECK(qp);
    CHECK_EQ(ia.cap.max_inline_data, 256); /* capped, and said so */
    CHECK_EQ(qp->qp_num >> 24, 0);
    CHECK(st_registry_has("qp", qp->qp_num));
    CHECK_EQ(ibv_destroy_cq(cq), EBUSY);
    CHECK_EQ(ibv_dealloc_pd(pd), EBUSY);
    uint32_t qpn = qp->qp_num;
    CHECK_EQ(ibv_destroy_qp(qp), 0);
    CHECK(!st_registry_has("qp", qpn));
    CHECK_EQ(ibv_destroy_cq(cq), 0);
}

void case_mr_pd(void)
{
    struct ibv_context *ctx = st_open("mockib0");
    struct ibv_pd *pd = ibv_alloc_pd(ctx);
    long page = sysconf(_SC_PAGESIZE);
    uint8_t *buf = mmap(NULL, 3 * (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(pd && buf != MAP_FAILED);
    errno = 0;
    CHECK(!ibv_reg_mr(pd, buf, 100, IBV_ACCESS_REMOTE_WRITE) && errno == EINVAL);
    CHECK(!ibv_reg_mr(pd, buf, 100, IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_REMOTE_READ) && errno == EINVAL);
    CHECK(!ibv_reg_mr(pd, buf, 0, IBV_ACCESS_LOCAL_WRITE) && errno == EINVAL);
    CHECK(!ibv_reg_dmabuf_mr(pd, 0, 4096, 0, 3, IBV_ACCESS_LOCAL_WRITE) && errno == EOPNOTSUPP);
    CHECK_EQ(munmap(buf + page, (size_t)page), 0);
    CHECK(!ibv_reg_mr(pd, buf, 3 * (size_t)page, IBV_ACCESS_LOCAL_WRITE) && errno == EFAULT);
    struct ibv_mr *mr = ibv_reg_mr(pd, buf + 8, (size_t)page - 8, ST_ALL_ACCESS);
    CHECK(mr && mr->addr == buf + 8 && mr->length == (size_t)page - 8 && mr->lkey == mr->rkey);
    CHECK(mr->pd == pd && mr->context == ctx);
    CHECK(st_registry_has("mr", mr->rkey));
    struct ibv_mr *mr2 = ibv_reg_mr_iova2(pd, buf + 2 * page, (size_t)page, 0x10000, IBV_ACCESS_REMOTE_READ);
    CHECK(mr2 && mr2->addr == buf + 2 * page && mr2->rkey != mr->rkey);
    CHECK_EQ(ibv_dealloc_pd(pd), EBUSY);
    uint32_t rkey = mr->rkey;
    CHECK_EQ(ibv_dereg_mr(mr), 0);
    CHECK(!st_registry_has("mr", rkey));
    CHECK_EQ(ibv_dereg_mr(mr2), 0);
    check_cq_qp_limits(ctx, pd);
    CHECK_EQ(ibv_dealloc_pd(pd), 0);
    CHECK_EQ(ibv_close_device(ctx), 0);
}

/* Each transition refuses a missing or an extra attribute and bad values. */
static void check_reset_init(struct st_ep *a, const struct st_addr *peer)
{
    struct ibv_qp_attr at, q;
    struct ibv_qp_init_attr qi;
    CHECK_EQ(st_qp_rtr(a, peer), EINVAL); /* RESET -> RTR */
    CHECK_EQ(st_qp_rts(a->qp, peer->psn), EINVAL);
    at = (struct ibv_qp_attr){.qp_state = IBV_QPS_INIT, .port_num = 1, .qp_access_flags = ST_ALL_ACCESS};
    CHECK_EQ(ibv_modify_qp(a->qp, &at, ST_INIT_MASK & ~IBV_QP_ACCESS_FLAGS), EINVAL);
    CHECK_EQ(ibv_modify_qp(a->qp, &at, ST_INIT_MASK | IBV_QP_PATH_MTU), EINVAL);
    at.port_num = 2;
    CHECK_EQ(ibv_modify_qp(a->qp, &at, ST_INIT_MASK), EINVAL);
    at.port_num = 1;
    at.pkey_index = 1;
    CHECK_EQ(ibv_modify_qp(a->qp, &at, ST_INIT_MASK), EINVAL);
    CHECK_EQ(st_qp_init(a->qp), 0);
    CHECK_EQ(a->qp->state, IBV_QPS_INIT);
    at.qp_access_flags = IBV_ACCESS_REMOTE_READ; /* INIT -> INIT without the state bit */
    CHECK_EQ(ibv_modify_qp(a->qp, &at, IBV_QP_ACCESS_FLAGS), 0);
    CHECK_EQ(ibv_query_qp(a->qp, &q, IBV_QP_STATE, &qi), 0);
    CHECK_EQ(q.qp_state, IBV_QPS_INIT);
    CHECK_EQ(q.qp_access_flags, IBV_ACCESS_REMOTE_READ);
    CHECK_EQ(st_qp_rts(a->qp, peer->psn), EINVAL); /* INIT -> RTS */
}

static void check_rtr_rts(struct st_ep *a, const struct st_addr *peer)
{
    struct ibv_qp_attr at, q;
    struct ibv_qp_init_attr qi;
    st_rtr_attr(a, peer, &at);
    CHECK_EQ(ibv_modify_qp(a->qp, &at, ST_RTR_MASK & ~IBV_QP_MIN_RNR_TIMER), EINVAL);
    CHECK_EQ(ibv_modify_qp(a->qp, &at, ST_RTR_MASK & ~IBV_QP_AV), EINVAL);
    CHECK_EQ(ibv_modify_qp(a->qp, &at, ST_RTR_MASK | IBV_QP_SQ_PSN), EINVAL);
    at.ah_attr.is_global = 0; /* RoCE needs the GRH */
    CHECK_EQ(ibv_modify_qp(a->qp, &at, ST_RTR_MASK), EINVAL);
    st_rtr_attr(a, peer, &at);
    memset(at.ah_attr.grh.dgid.raw, 0, 16);
    CHECK_EQ(ibv_modify_qp(a->qp, &at, ST_RTR_MASK), EINVAL);
    st_rtr_attr(a, peer, &at);
    at.ah_attr.port_num = 0;
    CHECK_EQ(ibv_modify_qp(a->qp, &at, ST_RTR_MASK), EINVAL);
    st_rtr_attr(a, peer, &at);
    at.ah_attr.grh.sgid_index = 5; /* an empty GID entry */
    CHECK_EQ(ibv_modify_qp(a->qp, &at, ST_RTR_MASK), EINVAL);
    st_rtr_attr(a, peer, &at);
    at.max_dest_rd_atomic = 17;
    CHECK_EQ(ibv_modify_qp(a->qp, &at, ST_RTR_MASK), EINVAL);
    CHECK_EQ(a->qp->state, IBV_QPS_INIT);
    CHECK_EQ(st_qp_rtr(a, peer), 0);

    uint8_t byte = 0;
    struct ibv_sge sge = {(uintptr_t)&byte, 1, 0};
    CHECK_EQ(st_post(a->qp, IBV_WR_RDMA_WRITE, 1, &sge, 1, peer->addr, peer->rkey, IBV_SEND_INLINE), EINVAL);

    st_rts_attr(peer->psn, &at);
    CHECK_EQ(ibv_modify_qp(a->qp, &at, ST_RTS_MASK & ~IBV_QP_RETRY_CNT), EINVAL);
    at.retry_cnt = 8;
    CHECK_EQ(ibv_modify_qp(a->qp, &at, ST_RTS_MASK), EINVAL);
    CHECK_EQ(st_qp_rts(a->qp, peer->psn), 0);
    CHECK_EQ(ibv_query_qp(a->qp, &q, IBV_QP_STATE, &qi), 0);
    CHECK_EQ(q.qp_state, IBV_QPS_RTS);
    CHECK_EQ(q.sq_psn, peer->psn);
    CHECK_EQ(q.dest_qp_num, peer->qpn);
    CHECK_EQ(qi.qp_type, IBV_QPT_RC);
    at.min_rnr_timer = 3;
    CHECK_EQ(ibv_modify_qp(a->qp, &at, IBV_QP_MIN_RNR_TIMER), 0); /* RTS -> RTS */
    CHECK_EQ(ibv_modify_qp(a->qp, &at, IBV_QP_PATH_MTU), EINVAL);
    at.cur_qp_state = IBV_QPS_RTR;
    CHECK_EQ(ibv_modify_qp(a->qp, &at, IBV_QP_STATE | IBV_QP_CUR_STATE), EINVAL);
}

void case_qp_state(void)
{
    struct st_ep a, b;
    struct st_addr ba;
    struct ibv_qp_attr at = {.qp_state = IBV_QPS_ERR};
    st_ep_create(&a, NULL, 64, 8, 16);
    st_ep_create(&b, a.ctx, 64, 8, 16);
    st_addr_of(&b, &ba);
    check_reset_init(&a, &ba);
    check_rtr_rts(&a, &ba);
    CHECK_EQ(ibv_modify_qp(a.qp, &at, IBV_QP_STATE | IBV_QP_TIMEOUT), EINVAL);
    CHECK_EQ(ibv_modify_qp(a.qp, &at, IBV_QP_STATE), 0);
    CHECK_EQ(a.qp->state, IBV_QPS_ERR);
    CHECK_EQ(st_qp_rts(a.qp, ba.psn), EINVAL); /* ERR -> RTS */
    at.qp_state = IBV_QPS_RESET;
    CHECK_EQ(ibv_modify_qp(a.qp, &at, IBV_QP_STATE), 0);
    CHECK_EQ(st_qp_init(a.qp), 0);
    st_ep_destroy(&b);
    st_ep_destroy(&a);

    /* InfiniBand: the AV needs a DLID, the GRH is optional. */
    setenv("GSHMEM_MOCK_IB_LINK", "ib", 1);
    st_ep_create(&a, NULL, 64, 8, 16);
    unsetenv("GSHMEM_MOCK_IB_LINK");
    st_addr_of(&a, &ba);
    CHECK_EQ(st_qp_init(a.qp), 0);
    st_rtr_attr(&a, &ba, &at);
    CHECK(ba.lid != 0 && at.ah_attr.is_global == 0);
    at.ah_attr.dlid = 0;
    CHECK_EQ(ibv_modify_qp(a.qp, &at, ST_RTR_MASK), EINVAL);
    CHECK_EQ(st_qp_rtr(&a, &ba), 0);
    st_ep_destroy(&a);
}

static const struct {
    const char *name;
    void (*run)(void);
} cases[] = {
    {"devices", case_devices},
    {"mr_pd", case_mr_pd},
    {"qp_state", case_qp_state},
    {"data", case_data},
    {"errors", case_errors},
    {"send_queue", case_send_queue},
    {"threads", case_threads},
    {"two_processes", case_two_processes},
    {"fault_injection", case_fault_injection},
    {"cq_overrun", case_cq_overrun},
    {"relaxed", case_relaxed},
};

static int run_case(int i)
{
    int status;
    fflush(NULL);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        cases[i].run();
        exit(0);
    }
    CHECK_EQ(waitpid(pid, &status, 0), pid);
    int ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    printf("%s %s", ok ? "PASS" : "FAIL", cases[i].name);
    if (WIFSIGNALED(status))
        printf(" (signal %d)", WTERMSIG(status));
    printf("\n");
    return ok;
}

/* A registry of our own, removed at the end unless the caller gave one. */
static char *registry_make(void)
{
    static char dir[64];
    if (getenv("GSHMEM_MOCK_IB_DIR"))
        return NULL;
    snprintf(dir, sizeof(dir), "%s/gshmem-mockib-test-XXXXXX", access("/dev/shm", W_OK) ? "/tmp" : "/dev/shm");
    CHECK(mkdtemp(dir));
    setenv("GSHMEM_MOCK_IB_DIR", dir, 1);
    return dir;
}

/* Removes the registry; how many QP or MR files were still there (none should be:
 * every case destroys what it made, and a killed peer's files are swept). */
static int registry_remove(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char path[4096];
    int left = 0;
    CHECK(d);
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        left += strstr(e->d_name, ".lock") == NULL;
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        unlink(path);
    }
    closedir(d);
    rmdir(dir);
    return left;
}

int main(int argc, char **argv)
{
    char *dir = registry_make();
    int failed = 0, ran = 0;
    setvbuf(stdout, NULL, _IOLBF, 0);
    setenv("GSHMEM_MOCK_IB_QUIET", "1", 0); /* the errors here are wanted */
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int wanted = argc < 2;
        for (int a = 1; a < argc; a++)
            wanted |= !strcmp(argv[a], cases[i].name);
        if (wanted) {
            ran++;
            failed += !run_case((int)i);
        }
    }
    if (dir && registry_remove(dir)) {
        printf("FAIL registry files left behind\n");
        failed++;
    }
    printf("%d of %d cases passed\n", ran - failed, ran);
    return failed || !ran ? 1 : 0;
}
