// linebench: one line-based load generator for any daemon on a Unix socket that answers a
// request line with a fixed number of reply lines — keeld (`t PING` → `t OK`) and Redis inline
// commands (`PING` → `+PONG`, `GET k` → `$n` + value) alike, so both are driven the same way.
//
//   cc -O2 -pthread -o linebench scripts/linebench.c
//   linebench SOCKET 'REQUEST' LINES_PER_REPLY CONNECTIONS DEPTH SECONDS
//
// Each connection sends DEPTH requests in one write, reads DEPTH replies, and repeats for
// SECONDS. Prints requests per second and the round-trip percentiles of one write-and-read
// (for DEPTH 1, one request's latency).
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static const char *path, *request;
static int lines_per_reply, depth;
static double seconds;

typedef struct { long requests; double *samples; long count, capacity; } result_t;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *run(void *arg) {
    result_t *r = arg;
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    strncpy(a.sun_path, path, sizeof a.sun_path - 1);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) { perror("connect"); exit(1); }
    size_t one = strlen(request);
    char *batch = malloc(one * depth);
    for (int i = 0; i < depth; i++) memcpy(batch + i * one, request, one);
    char buf[1 << 16];
    double end = now() + seconds;
    while (now() < end) {
        double t0 = now();
        if (write(fd, batch, one * depth) != (ssize_t)(one * depth)) { perror("write"); exit(1); }
        long want = (long)lines_per_reply * depth;
        while (want > 0) {
            ssize_t n = read(fd, buf, sizeof buf);
            if (n <= 0) { perror("read"); exit(1); }
            for (ssize_t i = 0; i < n; i++) if (buf[i] == '\n') want--;
        }
        if (r->count == r->capacity) {
            r->capacity = r->capacity ? r->capacity * 2 : 1 << 16;
            r->samples = realloc(r->samples, r->capacity * sizeof(double));
        }
        r->samples[r->count++] = now() - t0;
        r->requests += depth;
    }
    close(fd);
    return NULL;
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    if (argc != 7) {
        fprintf(stderr, "usage: linebench SOCKET 'REQUEST' LINES_PER_REPLY CONNECTIONS DEPTH SECONDS\n");
        return 2;
    }
    path = argv[1];
    size_t n = strlen(argv[2]);
    char *line = malloc(n + 3);
    strcpy(line, argv[2]);
    strcat(line, "\r\n");  // keeld drops the CR before LF; Redis wants it
    request = line;
    lines_per_reply = atoi(argv[3]);
    int connections = atoi(argv[4]);
    depth = atoi(argv[5]);
    seconds = atof(argv[6]);
    pthread_t threads[256];
    result_t results[256] = {0};
    double t0 = now();
    for (int i = 0; i < connections; i++) pthread_create(&threads[i], NULL, run, &results[i]);
    long total = 0, count = 0;
    for (int i = 0; i < connections; i++) {
        pthread_join(threads[i], NULL);
        total += results[i].requests;
        count += results[i].count;
    }
    double elapsed = now() - t0;
    double *all = malloc(count * sizeof(double));
    long k = 0;
    for (int i = 0; i < connections; i++)
        for (long j = 0; j < results[i].count; j++) all[k++] = results[i].samples[j];
    qsort(all, count, sizeof(double), compare);
    printf("requests/s %.0f  round trip p50 %.1f us  p99 %.1f us  (%ld round trips)\n", total / elapsed,
           all[count / 2] * 1e6, all[count * 99 / 100] * 1e6, count);
    return 0;
}
