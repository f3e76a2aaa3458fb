/*
 * The line format of `gshmem-info --check`. Every part of gshmem that checks the node
 * (the tool's items, a transport's HCA and GPUDirect items) prints through these, so
 * the report reads as one aligned table whoever wrote the item:
 *
 *   OK    hugepages      1024 of 1024 2 MiB hugepages free; a PE's heap takes 129
 *   WARN  max_map_count  1000, below the kernel default 65530: ...
 *                        fix: sysctl -w vm.max_map_count=65530 (persist it in /etc/sysctl.d/)
 *
 * Levels: OK, nothing to do; WARN, gshmem runs but slower or with less than the node
 * could give (the fix says how to get it); FAIL, something a run needs is missing, so
 * gshmem_init or the first use of the feature would fail. gshmem-info --check exits 1
 * when any item failed. Every WARN and FAIL line is followed by at least one fix line
 * saying what to run or set.
 */
#ifndef GSHMEMI_CHECK_H
#define GSHMEMI_CHECK_H

#include <stdio.h>

enum gshmemi_check_level { GSHMEMI_CHECK_OK, GSHMEMI_CHECK_WARN, GSHMEMI_CHECK_FAIL };

/* Prints one item's status line. Returns 1 for FAIL and 0 otherwise, so a caller
 * counts failures with `*fails += gshmemi_check_line(...)`. */
int gshmemi_check_line(FILE *out, int level, const char *item, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Prints "fix: ..." under the item's text; one call per alternative. */
void gshmemi_check_fix(FILE *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Prints a detail line (one GPU, one group of peer pairs) under the item's text. */
void gshmemi_check_detail(FILE *out, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
