/*
 * Bad input: strided puts and gets whose extent wraps around the address space. The
 * heap check once saw a wrapped length of 0 and let them through: the second element of
 * an iput with stride 2^62 - 1 landed just below the destination, and nelems = 2^62
 * crashed the PE. The library must end the job naming the argument; reaching the end is
 * a failure. argv[1]: wrap (iput, dest stride 2^62 - 1), count (iput, nelems 2^62),
 * back (iget, source stride -(2^62 - 1)).
 */
#include "mp_check.h"

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "wrap";
    gshmem_init();
    int me = gshmem_my_pe(), peer = (me + 1) % gshmem_n_pes();
    int *sym = gshmem_calloc(4, sizeof(int));
    int local[4] = {111, 222, 333, 444};
    CHECK(sym != NULL, "gshmem_calloc");
    gshmem_barrier_all();
    if (me == 0) {
        if (strcmp(what, "wrap") == 0) gshmem_int_iput(sym + 2, local, ((ptrdiff_t)1 << 62) - 1, 1, 2, peer);
        else if (strcmp(what, "count") == 0) gshmem_int_iput(sym, local, 1, 0, (size_t)1 << 62, peer);
        else gshmem_int_iget(local, sym + 2, 1, -(((ptrdiff_t)1 << 62) - 1), 2, peer);
    }
    gshmem_barrier_all();
    fprintf(stderr, "bad_strided: the %s case was accepted (PE %d: words %d %d %d %d)\n", what, me, sym[0], sym[1],
            sym[2], sym[3]);
    gshmem_finalize();
    return 0;
}
