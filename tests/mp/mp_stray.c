/*
 * Something that connects to a PE's listening port during init and sends nothing (a
 * port scanner, a health check) must not hold up init: the PE turns it away after a
 * few seconds and accepts its peers. The stray comes from this program's own listen(),
 * which stands in for libc's (the library calls it through its PLT): right after every
 * listening socket is set up, and so before any peer can connect to it, a socket is
 * connected to it and left silent until the end. Before the tcp transport limited how
 * long it waits for a HELLO, an accepting PE read the stray until GSHMEM_TIMEOUT and
 * init failed ("never connected"). ctest checks the refusal in the log as well.
 */
#define _GNU_SOURCE
#include "mp_check.h"

#include <dlfcn.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#define STRAYS_MAX 16
static int g_strays[STRAYS_MAX], g_nstrays;

int listen(int fd, int backlog)
{
    static int (*real_listen)(int, int);
    if (!real_listen) *(void **)&real_listen = dlsym(RTLD_NEXT, "listen");
    int rc = real_listen(fd, backlog);
    struct sockaddr_in sa;
    socklen_t len = sizeof(sa);
    if (rc == 0 && g_nstrays < STRAYS_MAX && getsockname(fd, (struct sockaddr *)&sa, &len) == 0 &&
        sa.sin_family == AF_INET) {
        int s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = sa.sin_port,
                                 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        if (s >= 0 && connect(s, (struct sockaddr *)&to, sizeof(to)) == 0) g_strays[g_nstrays++] = s;
        else if (s >= 0) close(s);
    }
    return rc;
}

int main(void)
{
    gshmem_init();
    int me = gshmem_my_pe(), npes = gshmem_n_pes();
    CHECK(g_nstrays > 0 || me == 0, "PE %d: no listening socket got a stray connection", me);
    /* The peers are connected: a put and a get across each pair. */
    uint64_t *w = gshmem_calloc((size_t)npes, sizeof(uint64_t));
    CHECK(w != NULL, "PE %d: gshmem_calloc", me);
    for (int p = 0; p < npes; p++) gshmem_uint64_p(w + me, mp_mix((uint64_t)me, (uint64_t)p, 0, 0), p);
    gshmem_barrier_all();
    for (int p = 0; p < npes; p++)
        CHECK(w[p] == mp_mix((uint64_t)p, (uint64_t)me, 0, 0), "PE %d: word from PE %d is 0x%llx", me, p,
              (unsigned long long)w[p]);
    if (me == 0) printf("mp_stray: %d PEs initialized with a silent stray connection on each listener\n", npes);
    gshmem_free(w);
    gshmem_finalize();
    for (int i = 0; i < g_nstrays; i++) close(g_strays[i]);
    return 0;
}
