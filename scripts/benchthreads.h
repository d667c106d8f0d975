// What the load generators of scripts/bench-daemon.sh share (linebench.c, sqlitecommit.c): a
// clock, per-thread results with every round trip's duration, and running N threads to print
// one line — requests per second over the wall time, and the round-trip percentiles:
//
//   requests/s R  round trip p50 X us  p99 Y us  (N round trips)
//
// A header of static functions: each program is one translation unit (`cc … program.c`).
#ifndef KEEL_BENCHTHREADS_H
#define KEEL_BENCHTHREADS_H
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/// One thread's figures. `id` is its position (0…N−1).
typedef struct {
    int id;
    long requests;
    double *samples;
    long count, capacity;
} result_t;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/// Records one round trip of `seconds` that answered `requests` requests.
static void record(result_t *r, double seconds, long requests) {
    if (r->count == r->capacity) {
        r->capacity = r->capacity ? r->capacity * 2 : 1 << 16;
        r->samples = realloc(r->samples, r->capacity * sizeof(double));
        if (!r->samples) { perror("realloc"); exit(1); }
    }
    r->samples[r->count++] = seconds;
    r->requests += requests;
}

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/// Runs `body` on `threads` threads (1…256), each with its own result_t, and prints the line.
static void run_threads(int threads, void *(*body)(void *)) {
    if (threads < 1 || threads > 256) {
        fprintf(stderr, "between 1 and 256 threads\n");
        exit(2);
    }
    pthread_t handles[256];
    result_t results[256] = {{0}};
    double t0 = now();
    for (int i = 0; i < threads; i++) {
        results[i].id = i;
        pthread_create(&handles[i], NULL, body, &results[i]);
    }
    long total = 0, count = 0;
    for (int i = 0; i < threads; i++) {
        pthread_join(handles[i], NULL);
        total += results[i].requests;
        count += results[i].count;
    }
    double elapsed = now() - t0;
    if (count == 0) {
        printf("requests/s 0  round trip p50 0 us  p99 0 us  (0 round trips)\n");
        return;
    }
    double *all = malloc(count * sizeof(double));
    long k = 0;
    for (int i = 0; i < threads; i++)
        for (long j = 0; j < results[i].count; j++) all[k++] = results[i].samples[j];
    qsort(all, count, sizeof(double), compare_doubles);
    printf("requests/s %.0f  round trip p50 %.1f us  p99 %.1f us  (%ld round trips)\n", total / elapsed,
           all[count / 2] * 1e6, all[count * 99 / 100] * 1e6, count);
}
#endif
