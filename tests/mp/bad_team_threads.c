/*
 * Bad use: two threads of each PE split two different teams at the same time. Team
 * creation reads and claims the PE's team slots without a lock; two splits at once once
 * gave both new teams the same handle, silently (or failed with a confusing record
 * mismatch). The library must end the job saying that another thread is creating a
 * team. PE 1 starts its first split 300 ms late, so on every other PE the first split
 * is still waiting for PE 1 when the second begins (50 ms after the first started, on
 * every PE, however late the first thread was scheduled). Reaching the end is a failure.
 */
#define _POSIX_C_SOURCE 200809L
#include "mp_check.h"

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

static gshmem_team_t g_parent[2], g_child[2];
static int g_rc[2];
static atomic_int g_first_started; /* thread 0 is about to split: thread 1 starts after it */

static void *split_thread(void *arg)
{
    int k = (int)(intptr_t)arg;
    if (k == 0 && gshmem_my_pe() == 1) nanosleep(&(struct timespec){0, 300 * 1000 * 1000}, NULL);
    if (k == 0) atomic_store(&g_first_started, 1);
    if (k == 1) {
        while (!atomic_load(&g_first_started)) nanosleep(&(struct timespec){0, 1000 * 1000}, NULL);
        nanosleep(&(struct timespec){0, 50 * 1000 * 1000}, NULL);
    }
    g_rc[k] = gshmem_team_split_strided(g_parent[k], 0, 1, gshmem_n_pes(), NULL, 0, &g_child[k]);
    return NULL;
}

int main(void)
{
    mp_init_thread_multiple();
    int npes = gshmem_n_pes();
    for (int k = 0; k < 2; k++)
        CHECK_EQ(gshmem_team_split_strided(GSHMEM_TEAM_WORLD, 0, 1, npes, NULL, 0, &g_parent[k]), 0);
    pthread_t th[2];
    for (int k = 0; k < 2; k++) CHECK(pthread_create(&th[k], NULL, split_thread, (void *)(intptr_t)k) == 0, "pthread");
    for (int k = 0; k < 2; k++) pthread_join(th[k], NULL);
    fprintf(stderr, "bad_team_threads: PE %d: both concurrent splits returned (%d, %d), handles %d and %d\n",
            gshmem_my_pe(), g_rc[0], g_rc[1], (int)g_child[0], (int)g_child[1]);
    gshmem_finalize();
    return 0;
}
