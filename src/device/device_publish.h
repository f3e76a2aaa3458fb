/*
 * Publishing the device state: the host library fills struct gshmemi_device_state
 * and hands it to every device library linked into the program, which copies it
 * into its __constant__ gshmemi_dstate (the device library and the application may
 * use another CUDA runtime instance than libgshmem, so only they can reach their
 * own symbols).
 */
#ifndef GSHMEMI_DEVICE_PUBLISH_H
#define GSHMEMI_DEVICE_PUBLISH_H

#include <stddef.h>

struct gshmemi_state;

/* Called by a device library (once per program image): fn copies size bytes of state
 * into that image's gshmemi_dstate on GPU `device` and returns a cudaError_t. */
typedef int (*gshmemi_device_sync_fn)(int device, const void *state, size_t size);
void gshmemi_device_register(gshmemi_device_sync_fn fn);

/* At init (device heap only): builds the state and syncs every registered image. */
int gshmemi_device_state_publish(struct gshmemi_state *st);
void gshmemi_device_state_fini(struct gshmemi_state *st);
/* After a team is created or destroyed: copies st->teams into the device state and
 * syncs every registered image (nothing without a device heap). */
int gshmemi_device_state_teams(struct gshmemi_state *st);

/* Prints the report of a device wait that ran out of GSHMEM_TIMEOUT, if one was left
 * (once; also at exit): gshmem_finalize, gshmem_global_exit and fatal errors call it. */
void gshmemi_device_wait_report_print(void);

#endif
