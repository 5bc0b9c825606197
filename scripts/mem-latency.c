/*
 * How long one random memory access takes on this machine, as the simulator's map walks
 * see it: a pointer chase over a random cyclic permutation of the cache lines of a buffer,
 * either one chain (each load waits for the one before: the latency) or several chains
 * interleaved (independent loads in flight together: what overlapping can buy).
 *
 *   cc -O2 -o /tmp/mem-latency scripts/mem-latency.c
 *   /tmp/mem-latency MIB CHAINS HUGE      # e.g. 4096 1 1: 4 GiB, one chain, huge pages advised
 *
 * HUGE 1 advises transparent huge pages (as the simulating commands do), 0 forbids them.
 * Prints nanoseconds per access and how much of the buffer the kernel gave huge pages.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static uint64_t state = 88172645463325252ull;
static uint64_t next_random(void) { /* xorshift64 */
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return state;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s MIB CHAINS(1-16) HUGE(0|1)\n", argv[0]);
    return 2;
  }
  const size_t huge_page = 2 << 20, bytes = (size_t)atoll(argv[1]) << 20;
  const int chains = atoi(argv[2]), huge = atoi(argv[3]);
  if (bytes < (1 << 20) || chains < 1 || chains > 16) {
    fprintf(stderr, "%s: MIB must be at least 1 and CHAINS 1 to 16\n", argv[0]);
    return 2;
  }
  char *raw = mmap(NULL, bytes + huge_page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) {
    perror("mmap");
    return 1;
  }
  char *buf = (char *)(((uintptr_t)raw + huge_page - 1) & ~(uintptr_t)(huge_page - 1));
  madvise(buf, bytes, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
  memset(buf, 0, bytes);

  /* One cycle through every line in random order: each line holds the next one's offset. */
  const size_t lines = bytes / 64;
  uint32_t *order = malloc(lines * sizeof *order);
  for (size_t i = 0; i < lines; i++) order[i] = (uint32_t)i;
  for (size_t i = lines - 1; i > 0; i--) {
    size_t j = next_random() % (i + 1);
    uint32_t t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
  for (size_t i = 0; i < lines; i++) *(uint64_t *)(buf + (size_t)order[i] * 64) = (uint64_t)order[(i + 1) % lines] * 64;

  const size_t steps = 20000000 / chains;
  uint64_t at[16];
  for (int c = 0; c < chains; c++) at[c] = (uint64_t)order[lines / chains * c] * 64;
  double t0 = seconds();
  for (size_t s = 0; s < steps; s++)
    for (int c = 0; c < chains; c++) at[c] = *(volatile uint64_t *)(buf + at[c]);
  double elapsed = seconds() - t0;

  long huge_kib = 0;
  char line[256];
  FILE *f = fopen("/proc/self/smaps_rollup", "r");
  while (f && fgets(line, sizeof line, f))
    if (!strncmp(line, "AnonHugePages:", 14)) huge_kib = atol(line + 14);
  printf("%zu MiB, %d chain(s), huge pages %s: %.1f ns per access; %ld MiB in huge pages\n", bytes >> 20, chains,
         huge ? "advised" : "off", elapsed * 1e9 / ((double)steps * chains), huge_kib >> 10);
  return 0;
}
