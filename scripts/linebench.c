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
// The same generator drives keeld, Redis and the durable-save rows, so both sides of every ratio
// pay the same client costs.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <poll.h>

#include "benchthreads.h"

static const char *path, *request;
static int lines_per_reply, depth;
static double seconds;

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
            // Wait for replies with poll(POLLIN), as an event-loop client does, not in a blocking
            // read: a reader blocked in read() sits on the socket's wait queue unkeyed, so the
            // server's read of the request (freeing send-buffer room, unix_write_space) woke it for
            // nothing once per round trip, and the woken generator preempted the server.
            struct pollfd pfd = {.fd = fd, .events = POLLIN};
            if (poll(&pfd, 1, -1) < 0) { perror("poll"); exit(1); }
            ssize_t n = read(fd, buf, sizeof buf);
            if (n <= 0) { perror("read"); exit(1); }
            for (ssize_t i = 0; i < n; i++) if (buf[i] == '\n') want--;
        }
        record(r, now() - t0, depth);
    }
    close(fd);
    return NULL;
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
    run_threads(connections, run);
    return 0;
}
