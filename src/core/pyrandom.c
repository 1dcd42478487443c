/* pyrandom.c - CPython's `random` module (MT19937 with CPython's seeding,
 * random(), uniform(), _randbelow() and shuffle()), bit for bit.
 *
 * Why: Gavel's published results come from workloads drawn with Python's
 * random.Random(seed).  Reproducing its streams exactly lets drover replay
 * the very same jobs Gavel's authors measured, so a comparison with their
 * numbers is about scheduling, not about which random jobs were drawn. */
#include "drover/pyrandom.h"

#include <string.h>

#define MT_N 624
#define MT_M 397

static void init_genrand(dr_pyrand_t *r, uint32_t s)
{
    r->mt[0] = s;
    for (int i = 1; i < MT_N; i++)
        r->mt[i] = 1812433253u * (r->mt[i - 1] ^ (r->mt[i - 1] >> 30)) + (uint32_t)i;
    r->mti = MT_N;
}

/* init_by_array from the reference MT19937, as CPython uses it */
static void init_by_array(dr_pyrand_t *r, const uint32_t *key, size_t klen)
{
    init_genrand(r, 19650218u);
    size_t i = 1, j = 0, k = MT_N > klen ? MT_N : klen;
    for (; k; k--) {
        r->mt[i] =
            (r->mt[i] ^ ((r->mt[i - 1] ^ (r->mt[i - 1] >> 30)) * 1664525u)) + key[j] + (uint32_t)j;
        i++;
        j++;
        if (i >= MT_N) {
            r->mt[0] = r->mt[MT_N - 1];
            i = 1;
        }
        if (j >= klen)
            j = 0;
    }
    for (k = MT_N - 1; k; k--) {
        r->mt[i] = (r->mt[i] ^ ((r->mt[i - 1] ^ (r->mt[i - 1] >> 30)) * 1566083941u)) - (uint32_t)i;
        i++;
        if (i >= MT_N) {
            r->mt[0] = r->mt[MT_N - 1];
            i = 1;
        }
    }
    r->mt[0] = 0x80000000u;
}

void dr_pyrand_seed(dr_pyrand_t *r, uint64_t seed)
{
    /* CPython: the key is the absolute value's 32-bit words, least
     * significant first; 0 gives the one-word key {0} */
    uint32_t key[2];
    size_t n = 0;
    do {
        key[n++] = (uint32_t)seed;
        seed >>= 32;
    } while (seed);
    init_by_array(r, key, n);
}

uint32_t dr_pyrand_u32(dr_pyrand_t *r)
{
    static const uint32_t mag01[2] = {0x0u, 0x9908b0dfu};
    uint32_t y;
    if (r->mti >= MT_N) {
        int kk;
        for (kk = 0; kk < MT_N - MT_M; kk++) {
            y = (r->mt[kk] & 0x80000000u) | (r->mt[kk + 1] & 0x7fffffffu);
            r->mt[kk] = r->mt[kk + MT_M] ^ (y >> 1) ^ mag01[y & 1u];
        }
        for (; kk < MT_N - 1; kk++) {
            y = (r->mt[kk] & 0x80000000u) | (r->mt[kk + 1] & 0x7fffffffu);
            r->mt[kk] = r->mt[kk + (MT_M - MT_N)] ^ (y >> 1) ^ mag01[y & 1u];
        }
        y = (r->mt[MT_N - 1] & 0x80000000u) | (r->mt[0] & 0x7fffffffu);
        r->mt[MT_N - 1] = r->mt[MT_M - 1] ^ (y >> 1) ^ mag01[y & 1u];
        r->mti = 0;
    }
    y = r->mt[r->mti++];
    y ^= (y >> 11);
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= (y >> 18);
    return y;
}

double dr_pyrand_random(dr_pyrand_t *r)
{
    uint32_t a = dr_pyrand_u32(r) >> 5, b = dr_pyrand_u32(r) >> 6;
    return ((double)a * 67108864.0 + (double)b) * (1.0 / 9007199254740992.0);
}

double dr_pyrand_uniform(dr_pyrand_t *r, double a, double b)
{
    return a + (b - a) * dr_pyrand_random(r);
}

/* getrandbits(k) for 1 <= k <= 32 */
static uint32_t getrandbits(dr_pyrand_t *r, int k)
{
    return dr_pyrand_u32(r) >> (32 - k);
}

uint32_t dr_pyrand_below(dr_pyrand_t *r, uint32_t n)
{
    if (n <= 1)
        return 0;
    int k = 0;
    for (uint32_t v = n; v; v >>= 1)
        k++; /* n.bit_length() */
    uint32_t x;
    do
        x = getrandbits(r, k);
    while (x >= n);
    return x;
}

void dr_pyrand_shuffle(dr_pyrand_t *r, void *base, size_t n, size_t size)
{
    unsigned char *p = base, tmp[64];
    if (size > sizeof tmp)
        return;
    for (size_t i = n; i-- > 1;) {
        size_t j = dr_pyrand_below(r, (uint32_t)(i + 1));
        memcpy(tmp, p + i * size, size);
        memcpy(p + i * size, p + j * size, size);
        memcpy(p + j * size, tmp, size);
    }
}
