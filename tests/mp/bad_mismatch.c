/* Under GSHMEM_CHECK=1 a collective allocation with different sizes on one PE must end
 * the job with a message naming the PEs that disagree. */
#include <gshmem.h>

#include <stdio.h>

int main(void)
{
    gshmem_init();
    int me = gshmem_my_pe();
    void *p = gshmem_malloc(me == 2 ? 128 : 64);
    fprintf(stderr, "bad_mismatch: PE %d got %p from a mismatched gshmem_malloc\n", me, p);
    gshmem_finalize();
    return 0;
}
