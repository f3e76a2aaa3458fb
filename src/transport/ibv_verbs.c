/* libibverbs through dlopen (see ibv_verbs.h). */
#ifdef GSHMEM_HAVE_IBV
#include "transport/ibv_verbs.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static struct gshmemi_ibv_api ibv_api;
static const struct gshmemi_ibv_api *ibv_loaded;
static char ibv_why[384];
static pthread_once_t ibv_once = PTHREAD_ONCE_INIT;

void *gshmemi_ibv_dlopen(const char *soname, const char *package, char *path, size_t pathlen, char *why,
                         size_t whylen)
{
    void *lib = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(why, whylen, "%s not loadable (%s); install %s", soname, dlerror(), package);
        return NULL;
    }
    struct link_map *map = NULL;
    if (dlinfo(lib, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name) snprintf(path, pathlen, "%s", map->l_name);
    return lib;
}

static void ibv_load(void)
{
    void *lib = gshmemi_ibv_dlopen("libibverbs.so.1", "libibverbs1 (rdma-core)", ibv_api.path, sizeof(ibv_api.path),
                                   ibv_why, sizeof(ibv_why));
    if (!lib) return;
#define IBV_REQUIRE(name, ret, args)                                                                                   \
    if (!(*(void **)&ibv_api.name = dlsym(lib, #name))) {                                                              \
        snprintf(ibv_why, sizeof(ibv_why), "%.200s lacks %s (too old a libibverbs)", ibv_api.path, #name);             \
        dlclose(lib);                                                                                                  \
        return;                                                                                                        \
    }
    GSHMEMI_IBV_REQUIRED(IBV_REQUIRE)
#undef IBV_REQUIRE
#define IBV_OPTIONAL(name, ret, args) *(void **)&ibv_api.name = dlsym(lib, #name);
    GSHMEMI_IBV_OPTIONAL(IBV_OPTIONAL)
#undef IBV_OPTIONAL
    ibv_loaded = &ibv_api; /* lib stays loaded for the process's life */
}

const struct gshmemi_ibv_api *gshmemi_ibv_api(char *why, size_t whylen)
{
    pthread_once(&ibv_once, ibv_load);
    if (!ibv_loaded && why) snprintf(why, whylen, "%s", ibv_why);
    return ibv_loaded;
}

const char *gshmemi_ibv_wc_status(const struct gshmemi_ibv_api *api, enum ibv_wc_status st, char *buf, size_t len)
{
    const char *text = api && api->ibv_wc_status_str ? api->ibv_wc_status_str(st) : NULL;
    snprintf(buf, len, "%s (status %d)", text ? text : "work completion error", (int)st);
    return buf;
}

const char *gshmemi_ibv_event_name(const struct gshmemi_ibv_api *api, enum ibv_event_type ev)
{
    const char *text = api && api->ibv_event_type_str ? api->ibv_event_type_str(ev) : NULL;
    return text ? text : "async event";
}
#endif
