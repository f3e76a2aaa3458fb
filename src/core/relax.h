/* One spin-wait poll's pause: tells the core (and an SMT sibling) that we are waiting. */
#ifndef GSHMEMI_RELAX_H
#define GSHMEMI_RELAX_H

static inline void gshmemi_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

#endif
