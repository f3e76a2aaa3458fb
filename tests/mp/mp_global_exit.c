/* PE 1 (or PE 0 alone, or the PE given as the second argument) calls
 * gshmem_global_exit(status) while the others wait in a barrier: every PE must end,
 * and the job's status must be that status. */
#include <gshmem.h>

#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int status = argc > 1 ? atoi(argv[1]) : 5;
    gshmem_init();
    int me = gshmem_my_pe(), n = gshmem_n_pes();
    int caller = argc > 2 ? atoi(argv[2]) : n > 1 ? 1 : 0;
    gshmem_barrier_all();
    if (me == caller) {
        printf("mp_global_exit: PE %d calls gshmem_global_exit(%d)\n", me, status);
        gshmem_global_exit(status);
    }
    gshmem_barrier_all(); /* never completes */
    fprintf(stderr, "mp_global_exit: PE %d passed a barrier it should not have\n", me);
    return 99;
}
