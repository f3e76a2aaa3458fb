/*
 * Runs init and finalize only; started with an invalid GSHMEM_* value, init must fail
 * with a line naming the variable and the process must exit nonzero.
 */
#include "mp_check.h"

int main(void)
{
    gshmem_init();
    gshmem_barrier_all();
    fprintf(stderr, "bad_init: gshmem_init succeeded on pe %d\n", gshmem_my_pe());
    gshmem_finalize();
    return 0;
}
