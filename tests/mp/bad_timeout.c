/*
 * A wait that can never be satisfied: with a short GSHMEM_TIMEOUT the library must give up
 * with a diagnostic ("timed out", naming the gshmem_ function) and end the job.
 */
#include "mp_check.h"

int main(void)
{
    gshmem_init();
    long *flag = gshmem_calloc(1, sizeof(long));
    CHECK(flag != NULL, "gshmem_calloc");
    gshmem_barrier_all();
    gshmem_long_wait_until(flag, GSHMEM_CMP_EQ, 1);
    fprintf(stderr, "bad_timeout: wait_until on a flag nobody sets returned on pe %d\n", gshmem_my_pe());
    gshmem_finalize();
    return 0;
}
