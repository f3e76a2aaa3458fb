/* gshmem-info --check: RDMA. */
#include "info_check.h"

#include "core/check.h"

void info_check_rdma(struct info_check *c)
{
    /*
     * ---- ibv: the HCA, port and GPUDirect items go here ----
     * They belong to the ibv transport. When src/transport/ibv.h declares
     *     int gshmemi_ibv_check(FILE *out, int *fails);
     * include it above and replace the rest of this function with
     *     gshmemi_ibv_check(c->out, &c->fails);
     * It prints its items through gshmemi_check_line / gshmemi_check_fix
     * (src/core/check.h), so they line up with the others. Until then this item only
     * reports the devices sysfs lists; the memlock item uses the same list.
     */
    char names[256];
    int n = info_check_rdma_devices(c, names, sizeof(names));
    if (n == 0)
        gshmemi_check_line(c->out, GSHMEMI_CHECK_OK, "rdma", "no RDMA device (/sys/class/infiniband is empty or "
                           "missing): PEs on other nodes use tcp");
    else
        gshmemi_check_line(c->out, GSHMEMI_CHECK_OK, "rdma", "%d RDMA device%s (%s); this version reaches other nodes "
                           "over tcp, so their ports and GPUDirect are not checked", n, n == 1 ? "" : "s", names);
}
