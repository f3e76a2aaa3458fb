/*
 * Bad input that is not fatal: an oversized gshmem_malloc returns NULL on every PE
 * (the library logs why, naming gshmem_malloc) and the program goes on.
 */
#include "mp_check.h"

int main(void)
{
    gshmem_init();
    void *p = gshmem_malloc((size_t)1 << 50);
    CHECK(p == NULL, "gshmem_malloc(1 PiB) returned %p", p);
    void *q = gshmem_malloc(4096);
    CHECK(q != NULL, "gshmem_malloc(4096) failed after an oversized request");
    gshmem_free(q);
    gshmem_finalize();
    return 0;
}
