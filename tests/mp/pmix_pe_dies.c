/* Under mpirun: PE 1 exits with status 3 right after init while the others wait in a
 * barrier. The launcher must end the whole job with a nonzero status; nothing may hang. */
#include "mp_check.h"

int main(void)
{
    gshmem_init();
    if (gshmem_n_pes() > 1 && gshmem_my_pe() == 1) exit(3);
    gshmem_barrier_all();
    fprintf(stderr, "pmix_pe_dies: PE %d left the barrier although PE 1 died\n", gshmem_my_pe());
    gshmem_finalize();
    return 0;
}
