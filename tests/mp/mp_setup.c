/*
 * Setup and query: init_thread/query_thread, query_initialized around init and
 * finalize, my_pe/n_pes (distinct PE numbers, the expected count from argv[1]),
 * pe_accessible and addr_accessible true and false cases, gshmem_ptr to every
 * node-local PE with stores through it seen by the owner (NULL for PEs on other nodes,
 * and for every other PE under GSHMEM_DISABLE_P2P), info_get_version/name,
 * the heap extensions, and nested init/finalize (each init needs its own finalize; only
 * the last one ends the library, and a further finalize does nothing).
 *
 * usage: mp_setup [expected number of PEs]
 */
#include "mp_check.h"

#include <limits.h>

static int g_me, g_npes;

/* Every PE sets its bit in a word on every PE: all bits set means distinct PE numbers. */
static void check_distinct_pes(void)
{
    uint64_t *bits = gshmem_calloc(1, sizeof(uint64_t));
    int *npes_seen = gshmem_calloc((size_t)g_npes, sizeof(int));
    CHECK(bits && npes_seen, "symmetric allocation failed");
    gshmem_barrier_all();
    for (int pe = 0; pe < g_npes; pe++) {
        gshmem_uint64_atomic_or(bits, (uint64_t)1 << g_me, pe);
        gshmem_int_p(&npes_seen[g_me], g_npes, pe);
    }
    gshmem_barrier_all();
    uint64_t all = g_npes == 64 ? ~(uint64_t)0 : ((uint64_t)1 << g_npes) - 1;
    CHECK_EQ(gshmem_uint64_atomic_fetch(bits, g_me), all);
    for (int pe = 0; pe < g_npes; pe++) CHECK_EQ(npes_seen[pe], g_npes);
    gshmem_barrier_all();
    gshmem_free(npes_seen);
    gshmem_free(bits);
}

static void check_accessible(void)
{
    int stack_var = 0;
    int *private_heap = malloc(64);
    long *sym = gshmem_malloc(4096);
    CHECK(sym && private_heap, "allocation failed");

    CHECK(!gshmem_pe_accessible(-1), "pe_accessible(-1)");
    CHECK(!gshmem_pe_accessible(g_npes), "pe_accessible(n_pes=%d)", g_npes);
    CHECK(!gshmem_pe_accessible(INT_MAX), "pe_accessible(INT_MAX)");
    for (int pe = 0; pe < g_npes; pe++) {
        CHECK(gshmem_pe_accessible(pe), "pe_accessible(%d)", pe);
        CHECK(gshmem_addr_accessible(sym, pe), "addr_accessible(symmetric, %d)", pe);
        CHECK(gshmem_addr_accessible(&sym[511], pe), "addr_accessible(last long of a block, %d)", pe);
        CHECK(!gshmem_addr_accessible(&stack_var, pe), "addr_accessible(stack, %d)", pe);
        CHECK(!gshmem_addr_accessible(private_heap, pe), "addr_accessible(libc malloc, %d)", pe);
    }
    CHECK(!gshmem_addr_accessible(sym, g_npes), "addr_accessible(symmetric, n_pes)");
    CHECK(!gshmem_addr_accessible(sym, -1), "addr_accessible(symmetric, -1)");
    gshmem_barrier_all();
    gshmem_free(sym);
    free(private_heap);
}

/*
 * gshmem_ptr reaches exactly the PEs of this PE's node (itself alone under GSHMEM_DISABLE_P2P)
 * and is NULL for the others; stores through a mapping land on the owner and loads see its
 * data. PEs out of reach get the same values by put and get, so every slot is still checked.
 */
static void check_ptr(const struct mp_layout *l)
{
    int stack_var = 0, reached = 0;
    long *table = gshmem_calloc((size_t)g_npes, sizeof(long));
    CHECK(table != NULL, "symmetric allocation failed");
    CHECK(gshmem_ptr(table, g_me) == table, "gshmem_ptr(own address, own pe) = %p, want %p",
          gshmem_ptr(table, g_me), (void *)table);
    for (int pe = 0; pe < g_npes; pe++) {
        CHECK(gshmem_ptr(&stack_var, pe) == NULL, "gshmem_ptr(stack address, %d) not NULL", pe);
        long *peer = gshmem_ptr(&table[g_me], pe);
        long value = (long)mp_mix((uint64_t)g_me, (uint64_t)pe, 1, 2) >> 1;
        if (l->load_store[pe]) {
            CHECK(peer != NULL, "gshmem_ptr(symmetric, %d) is NULL for a PE on this node", pe);
            *peer = value;
            reached++;
        } else {
            CHECK(peer == NULL, "gshmem_ptr(symmetric, %d) = %p for a PE %s", pe, (void *)peer,
                  l->on_my_node[pe] ? "on this node with GSHMEM_DISABLE_P2P set" : "on another node");
            gshmem_long_p(&table[g_me], value, pe);
        }
    }
    gshmem_barrier_all();
    for (int pe = 0; pe < g_npes; pe++) {
        long want = (long)mp_mix((uint64_t)pe, (uint64_t)g_me, 1, 2) >> 1;
        CHECK(table[pe] == want, "store by pe %d (%s): got %ld want %ld", pe,
              l->load_store[pe] ? "through gshmem_ptr" : "put", table[pe], want);
        long wrote = (long)mp_mix((uint64_t)g_me, (uint64_t)pe, 1, 2) >> 1;
        if (l->load_store[pe]) { /* loads through the mapping see the owner's data */
            long seen = ((long *)gshmem_ptr(table, pe))[g_me];
            CHECK(seen == wrote, "load through gshmem_ptr of pe %d: got %ld want %ld", pe, seen, wrote);
        }
        CHECK(gshmem_long_g(&table[g_me], pe) == wrote, "g of pe %d after the store", pe);
    }
    gshmem_barrier_all();
    gshmem_free(table);
    if (g_me == 0)
        printf("mp_setup: PE 0: %d of %d PEs on its node of %d nodes, %d reached by loads and stores\n", l->node_size,
               g_npes, l->nodes, reached);
}

static void check_info(void)
{
    int major = -1, minor = -1;
    gshmem_info_get_version(&major, &minor);
    CHECK(major == GSHMEM_MAJOR_VERSION && minor == GSHMEM_MINOR_VERSION, "version %d.%d", major, minor);
    char name[GSHMEM_MAX_NAME_LEN + 16];
    memset(name, 'X', sizeof name);
    gshmem_info_get_name(name);
    CHECK(memchr(name, '\0', GSHMEM_MAX_NAME_LEN) != NULL, "name not terminated within GSHMEM_MAX_NAME_LEN");
    CHECK(name[0] != '\0', "empty name");
    CHECK(strstr(name, GSHMEM_VENDOR_STRING) != NULL, "name \"%s\" lacks %s", name, GSHMEM_VENDOR_STRING);
    for (size_t k = GSHMEM_MAX_NAME_LEN; k < sizeof name; k++) CHECK(name[k] == 'X', "wrote past GSHMEM_MAX_NAME_LEN");

    const char *kind = gshmemx_heap_kind();
    CHECK(kind != NULL && (!strcmp(kind, "host-hugetlb") || !strcmp(kind, "host-thp") || !strcmp(kind, "device")),
          "heap kind \"%s\"", kind ? kind : "(null)");
    size_t page = gshmemx_heap_page_size();
    CHECK(page >= 4096 && (page & (page - 1)) == 0, "heap page size %zu", page);
}

int main(int argc, char **argv)
{
    int expected = argc > 1 ? atoi(argv[1]) : 0;
    CHECK(!gshmem_query_initialized(), "query_initialized before init");
    int provided = -1;
    int rc = gshmem_init_thread(GSHMEM_THREAD_MULTIPLE, &provided);
    CHECK(rc == 0, "gshmem_init_thread returned %d", rc);
    CHECK(gshmem_query_initialized(), "query_initialized after init");
    CHECK(provided >= GSHMEM_THREAD_SINGLE && provided <= GSHMEM_THREAD_MULTIPLE, "provided %d", provided);
    int queried = -1;
    gshmem_query_thread(&queried);
    CHECK(queried == provided, "query_thread %d, init_thread provided %d", queried, provided);
    /* Two more inits (one with a bad level, which fails and does not count): three
     * finalizes in all below. */
    gshmem_init();
    int again = -1;
    CHECK(gshmem_init_thread(GSHMEM_THREAD_MULTIPLE + 7, &again) == GSHMEMX_ERR_INVALID_ARG && again == -1,
          "a second init_thread with a bad level: provided %d", again);
    CHECK(gshmem_init_thread(GSHMEM_THREAD_SINGLE, &again) == 0 && again == provided,
          "a third init_thread: provided %d, the first %d", again, provided);

    g_me = gshmem_my_pe();
    g_npes = gshmem_n_pes();
    CHECK(g_npes >= 1 && g_npes <= 64, "n_pes %d", g_npes);
    CHECK(g_me >= 0 && g_me < g_npes, "my_pe %d of %d", g_me, g_npes);
    CHECK(expected == 0 || g_npes == expected, "n_pes %d, launched with %d", g_npes, expected);

    check_distinct_pes();
    check_accessible();
    struct mp_layout layout = mp_layout_create();
    check_ptr(&layout);
    mp_layout_destroy(&layout);
    check_info();

    gshmem_barrier_all();
    if (g_me == 0) printf("mp_setup: %d PEs OK (thread level %d)\n", g_npes, provided);
    for (int left = 2; left > 0; left--) { /* the first two finalizes end nothing */
        gshmem_finalize();
        CHECK(gshmem_query_initialized(), "query_initialized zero with %d inits unmatched", left);
        CHECK(gshmem_my_pe() == g_me && gshmem_n_pes() == g_npes, "PE %d of %d after a finalize", gshmem_my_pe(),
              gshmem_n_pes());
        check_distinct_pes(); /* the heap, the transports and barriers still work */
    }
    gshmem_finalize();
    gshmem_finalize(); /* one too many: nothing to end */
    if (gshmem_query_initialized()) {
        fprintf(stderr, "[mp pe %d] query_initialized nonzero after finalize\n", g_me);
        return 1;
    }
    return 0;
}
