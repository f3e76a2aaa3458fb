/*
 * gshmem device API: call gshmem from inside CUDA kernels.
 *
 * The names and semantics are the host API's (gshmem/host.h): gshmem_<type>_put/get/p/g/
 * iput/iget(_nbi), gshmem_put<bits>(_nbi), gshmem_putmem/getmem(_nbi), put_signal(_nbi),
 * gshmem_signal_fetch/add/set/wait_until, the AMO families, wait_until/test with
 * _all/_any/_some/_vector, fence, quiet, my_pe, n_pes, ptr, barrier_all and sync_all.
 * A device call reaches node-local PEs by loads and stores through the peers' mapped
 * heaps (NVLink, PCIe, or the same GPU under MPS).
 *
 * Extensions (device only):
 *   gshmemx_<type>_{put,get,put_nbi,get_nbi,iput,iget,put_signal,put_signal_nbi}_{warp,block}
 *   gshmemx_{putmem,getmem,putmem_nbi,getmem_nbi,putmem_signal,putmem_signal_nbi}_{warp,block}
 *     Cooperative forms: every thread of the warp (all 32 lanes) or of the block calls
 *     with the same arguments; the copy is spread over the group with 16-byte accesses.
 *     The source must be ready for every thread of the group when the call starts
 *     (after __syncwarp / __syncthreads if other threads of the group wrote it): the
 *     calls do not meet the group before they read it. NVSHMEM's do, so code ported
 *     from it that writes the source per thread right before the call needs that sync.
 *   gshmemx_signal_op(sig_addr, signal, GSHMEM_SIGNAL_SET|ADD, pe)
 *   gshmemx_{barrier_all,sync_all}_{warp,block}: one warp or block per PE takes part.
 *
 * Teams and collectives: the device twins of gshmem/team.h, same names, arguments and
 * semantics (return 0, or nonzero for an invalid team or root after printing why):
 * gshmem_team_my_pe/n_pes/translate_pe, gshmem_team_sync/sync/barrier, gshmem_
 * {broadcast,collect,fcollect,alltoall}mem, gshmem_alltoallsmem, typed gshmem_<type>_
 * {broadcast,collect,fcollect,alltoall,alltoalls} and gshmem_<type>_<op>_reduce. One
 * thread per PE calls those; gshmemx_<same name>_warp (all 32 lanes of one warp) and
 * _block (every thread of one block) spread the copies over the group. Exactly one
 * such caller per PE enters a given collective, and one collective per team runs at
 * a time on a PE (collectives on different teams, say in different blocks, may
 * overlap). Every team member's heap must be mapped (node-local). Team barriers use
 * the team's words in the device heap, shared with gshmemx_*_on_stream collectives on
 * the same team: the two may alternate but not overlap. Team barriers give up after
 * GSHMEM_TIMEOUT, as every device wait does (Rules, below).
 *
 * Rules:
 *   - Link the device library (CMake: gshmem::device, which turns on relocatable device
 *     code) and call gshmem_init before launching kernels that use this API.
 *   - gshmem_barrier_all and gshmem_sync_all in device code are called by every thread
 *     of a grid launched with gshmemx_collective_launch (cooperative launch).
 *   - Blocking puts return when the source may be reused; completion at the target is
 *     gshmem_quiet (fence.sc.sys). Signals are released after the data they announce
 *     (st.release.sys / red.release.sys); waits load with acquire at system scope.
 *   - Atomics are relaxed at system scope and atomic against other gshmem atomics on
 *     the same object (from any GPU or host thread of the job).
 *   - gshmemx_put*_signal*_block of up to 16 KiB uses hardware named barrier 15 among its
 *     first warps; do not use that barrier id around such calls.
 *   - A bad PE (out of range) prints a message naming both PEs and traps the kernel.
 *     PEs the GPU cannot map (another node, GSHMEM_DISABLE_P2P) are reached through
 *     the PE's proxy thread (README, "Across nodes").
 *   - Device waits (wait_until and families, signal_wait_until, barriers) give up
 *     after GSHMEM_TIMEOUT: the waiting thread traps, ending the kernel (and the CUDA
 *     context) with an error, and gshmem prints what it waited for when the process
 *     ends or calls gshmem_finalize. GSHMEM_TIMEOUT=0 waits forever.
 */
#ifndef GSHMEM_DEVICE_CUH
#define GSHMEM_DEVICE_CUH

#include <gshmem/impl/device_amo.cuh>
#include <gshmem/impl/device_coll.cuh>
#include <gshmem/impl/device_rma.cuh>
#include <gshmem/impl/device_sync.cuh>

#include <cuda_runtime.h>

/* Launches func cooperatively (every block resident at once), as device-side
 * gshmem_barrier_all/sync_all need. Refuses a grid that cannot be co-resident with a
 * message, returning GSHMEMX_ERR_INVALID_ARG; GSHMEMX_SUCCESS otherwise. */
extern "C" int gshmemx_collective_launch(const void *func, dim3 grid, dim3 block, void **args, size_t shmem,
                                         cudaStream_t stream);
/* Largest grid (blocks) of this block shape that gshmemx_collective_launch accepts. */
extern "C" int gshmemx_collective_launch_query_gridsize(const void *func, dim3 block, void **args, size_t shmem,
                                                        int *gridsize);

#if !defined(__CUDA_ARCH__)
/* Every CUDA translation unit that includes gshmem.h registers the device library's
 * state copier with libgshmem before main runs (and so pulls it into the link). */
extern "C" void gshmemi_device_lib_register(void);
namespace gshmemi {
struct device_lib_anchor {
    device_lib_anchor() { gshmemi_device_lib_register(); }
};
static device_lib_anchor device_lib_anchor_instance;
} /* namespace gshmemi */
#endif

#endif
