/* pyrandom.h - CPython's random.Random, reproduced exactly (MT19937 with
 * CPython's integer seeding).  Used where drover must draw the same numbers
 * as a Python tool (Gavel's workload generator). */
#ifndef DROVER_PYRANDOM_H
#define DROVER_PYRANDOM_H

#include <stddef.h>
#include <stdint.h>

typedef struct dr_pyrand {
    uint32_t mt[624];
    int mti;
} dr_pyrand_t;

void dr_pyrand_seed(dr_pyrand_t *r, uint64_t seed);           /* random.seed(seed) */
uint32_t dr_pyrand_u32(dr_pyrand_t *r);                       /* getrandbits(32) */
double dr_pyrand_random(dr_pyrand_t *r);                      /* random() */
double dr_pyrand_uniform(dr_pyrand_t *r, double a, double b); /* uniform(a, b) */
uint32_t dr_pyrand_below(dr_pyrand_t *r, uint32_t n);         /* randrange(n), choice index */
/* shuffle(list) of n elements of `size` bytes (size <= 64) */
void dr_pyrand_shuffle(dr_pyrand_t *r, void *base, size_t n, size_t size);

#endif
