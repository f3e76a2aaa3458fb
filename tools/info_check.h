/*
 * gshmem-info --check: what a cluster admin otherwise checks by hand before a first
 * run, one item each, printed in the format of src/core/check.h. The context is filled
 * once from the machine (info_check_init); the items read only the context and files
 * under root, so tests point them at a fake /proc and /sys tree and a made-up GPU list.
 */
#ifndef GSHMEM_INFO_CHECK_H
#define GSHMEM_INFO_CHECK_H

#include "core/env.h"

#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/resource.h>

#define INFO_CHECK_MAX_GPUS 32 /* GPUs described; more are counted only */

struct info_check_gpu {
    char name[256];      /* or why the GPU could not be described */
    char pci_bus_id[24]; /* "0000:3b:00.0"; "" when unknown */
    int mps;             /* contexts there are MPS clients: 1, 0, -1 unknown */
};

struct info_check {
    FILE *out;
    const char *root;       /* prefix of every /proc and /sys path: "" or --sysroot */
    struct gshmemi_env env; /* the environment's, or the defaults when it does not parse */
    char env_error[512];    /* "" when it parses */
    int cuda_built;
    int gpus;               /* visible to CUDA */
    char no_gpu_why[256];   /* why gpus is 0 */
    struct info_check_gpu gpu[INFO_CHECK_MAX_GPUS];
    signed char link[INFO_CHECK_MAX_GPUS][INFO_CHECK_MAX_GPUS]; /* enum gshmemi_gpu_link */
    cpu_set_t allowed;      /* this process's CPUs (sched_getaffinity) */
    struct rlimit memlock;  /* RLIMIT_MEMLOCK */
    int fails;              /* FAIL lines so far */
};

/* Fills c from this process and machine; root is "" or a fake tree's directory. */
void info_check_init(struct info_check *c, FILE *out, const char *root);
/* Prints every item and a summary; returns the number of FAIL lines. */
int info_check_run(struct info_check *c);

/* The items, in the order info_check_run prints them. */
void info_check_config(struct info_check *c);
void info_check_gpus(struct info_check *c);
void info_check_mps(struct info_check *c);
void info_check_hugepages(struct info_check *c);
void info_check_memlock(struct info_check *c);
void info_check_map_count(struct info_check *c);
void info_check_numa(struct info_check *c);
void info_check_rdma(struct info_check *c);

/* root/path's contents without the trailing newline; 0, or -1 when unreadable. */
int info_check_read(const struct info_check *c, const char *path, char *buf, size_t len);
/* root/path as one integer; 0, or -1 when unreadable or not a number. */
int info_check_read_long(const struct info_check *c, const char *path, long *out);
/* Whether the symmetric heap would go on a GPU (GSHMEM_HEAP auto or device, a GPU visible). */
int info_check_heap_on_device(const struct info_check *c);
/* Bytes of one PE's host heap (GSHMEM_SYMMETRIC_SIZE plus gshmem's words, in 2 MiB pages). */
size_t info_check_heap_bytes(const struct info_check *c);
/* The NUMA node of a PCI function (sysfs numa_node); -1 when unknown or not said. */
long info_check_pci_numa_node(const struct info_check *c, const char *pci_bus_id);
/* RDMA devices sysfs lists (/sys/class/infiniband); their names, comma-separated, in names. */
int info_check_rdma_devices(const struct info_check *c, char *names, size_t len);
/* "258 MiB", "8 KiB", "1000 bytes": the largest unit that divides bytes. */
void info_check_size_text(unsigned long long bytes, char *buf, size_t len);

#endif
