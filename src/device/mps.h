/*
 * Several PEs on one GPU: who shares which GPU and whether CUDA MPS is on. Without MPS
 * the GPU time-slices between processes, so a kernel spinning on a word another PE's
 * kernel will write can wait a whole time slice (or more) per hand-off.
 */
#ifndef GSHMEMI_MPS_H
#define GSHMEMI_MPS_H

#include <stddef.h>

struct gshmemi_state;

/* Collective over the job (every PE calls it after the transports exist). Node-local
 * PEs compare GPU UUIDs; node-local rank 0 warns once when some GPU is shared without
 * MPS and, with INFO logging, lists the sharing. 0 or a status (allgather failure). */
int gshmemi_mps_check(struct gshmemi_state *st);

/* What gshmem-info prints per visible GPU. 0, or a status with why filled. */
struct gshmemi_gpu_info {
    char name[256];
    char uuid[48];       /* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" */
    char pci_bus_id[24]; /* "0000:3b:00.0", as sysfs names the PCI function */
    int mps;             /* 1 when contexts on this GPU would be MPS clients, 0 when not, -1 unknown */
};
int gshmemi_gpu_describe(int device, struct gshmemi_gpu_info *info, char *why, size_t whylen);

/* "GPU-xxxxxxxx-xxxx-..." text of a 16-byte UUID (out holds at least 41 bytes). */
void gshmemi_gpu_uuid_text(const unsigned char uuid[16], char *out, size_t outlen);

#endif
