/*
 * Runs init and finalize only; started with an invalid GSHMEM_* value, init must fail
 * with a line naming the variable and the process must exit nonzero.
 *
 * With BAD_INIT_RETURNS=1 it calls gshmem_init_thread, which returns the failure: the
 * program goes on, and a descriptor it opened before init (fd 0 here) must still be
 * open (a failed first init once closed fd 0, the zeroed state's heap descriptor). It
 * then exits 0 with a line saying so.
 */
#define _POSIX_C_SOURCE 200809L
#include "mp_check.h"

#include <fcntl.h>
#include <unistd.h>

int main(void)
{
    const char *returns = getenv("BAD_INIT_RETURNS");
    if (returns && strcmp(returns, "1") == 0) {
        close(0);
        int fd = open("/dev/null", O_RDONLY); /* the application's own file, as fd 0 */
        CHECK(fd == 0, "open gave fd %d, not 0", fd);
        int provided = -1, rc = gshmem_init_thread(GSHMEM_THREAD_SINGLE, &provided);
        CHECK(rc != 0, "gshmem_init_thread succeeded with a bad setting");
        CHECK(fcntl(0, F_GETFD) != -1, "the failed init closed fd 0, the application's file");
        fprintf(stderr, "bad_init: init failed with status %d and fd 0 is still open\n", rc);
        return 0;
    }
    gshmem_init();
    gshmem_barrier_all();
    fprintf(stderr, "bad_init: gshmem_init succeeded on pe %d\n", gshmem_my_pe());
    gshmem_finalize();
    return 0;
}
