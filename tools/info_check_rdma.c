/* gshmem-info --check: RDMA. */
#include "info_check.h"

#include "core/check.h"
#include "transport/transport.h"

void info_check_rdma(struct info_check *c)
{
    char names[256];
    int n = info_check_rdma_devices(c, names, sizeof(names));
    if (c->root[0]) { /* a fake tree (tests): only what sysfs lists */
        if (n == 0)
            gshmemi_check_line(c->out, GSHMEMI_CHECK_OK, "rdma", "no RDMA device (/sys/class/infiniband is empty or "
                               "missing): PEs on other nodes use tcp");
        else
            gshmemi_check_line(c->out, GSHMEMI_CHECK_OK, "rdma", "%d RDMA device%s (%s); ports not checked under "
                               "--sysroot", n, n == 1 ? "" : "s", names);
        return;
    }
    gshmemi_transport_ibv_check(c->out, &c->env, n, info_check_heap_on_device(c), &c->fails);
}
