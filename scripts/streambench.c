// streambench: one request whose reply streams many lines, read to its end, ROUNDS times on one
// connection — keeld's `FETCH` (`f ROW {…}` lines, then `f OK {"count":N}`) and, as a reference,
// Redis's `LRANGE` (`*N`, then `$len` + value per element), driven the same way.
//
//   cc -O2 -pthread -o streambench scripts/streambench.c
//   streambench SOCKET 'REQUEST' FINAL ROUNDS [PID]
//
// FINAL is how the reply ends: a prefix of its last line (keeld: `f OK`, `f ERR`: any line
// starting `f ` that is not `f ROW`), or `resp-array` for a Redis array of bulk strings (its
// first line `*N` says the reply has 1 + 2N lines). Rows are the lines that carry one result:
// `f ROW` lines for keeld, the bulk strings for Redis.
//
// Per round: the time to the first byte of the reply (the first row), the time to its last
// byte, rows/s and MB/s over the whole reply (MB = 10^6 bytes of reply text). With PID (the
// server's process): before each round the peak RSS is reset (`5` into /proc/PID/clear_refs),
// and after it the growth is VmHWM after minus VmRSS before: what the server held at once to
// answer (a stream held whole would grow it by the reply's size), and the server's CPU time per
// row (user + system from /proc/PID/stat, in clock ticks: read it over rounds of 0.1 s or more).
// Prints every round, then the median of each figure.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "benchthreads.h"

/// A field of /proc/PID/status in kB (VmRSS, VmHWM); -1 when it cannot be read.
static long status_kb(const char *pid, const char *field) {
    char path[64], line[256];
    snprintf(path, sizeof path, "/proc/%s/status", pid);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    long kb = -1;
    size_t n = strlen(field);
    while (fgets(line, sizeof line, f))
        if (strncmp(line, field, n) == 0 && line[n] == ':') { kb = atol(line + n + 1); break; }
    fclose(f);
    return kb;
}

/// Resets the process's peak RSS to its current RSS (Linux ≥ 4.0); whether it could.
static int reset_peak(const char *pid) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%s/clear_refs", pid);
    FILE *f = fopen(path, "w");
    if (!f) return 0;
    int ok = fputs("5", f) >= 0;
    return fclose(f) == 0 && ok;
}

/// The process's CPU time so far (user + system) in seconds; -1 when it cannot be read.
static double cpu_seconds(const char *pid) {
    char path[64], text[1024];
    snprintf(path, sizeof path, "/proc/%s/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    char *p = strrchr(text, ')');  // the command name may hold spaces; fields follow its ')'
    unsigned long utime, stime;
    if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime, &stime) != 2) return -1;
    return (double)(utime + stime) / sysconf(_SC_CLK_TCK);
}

static double median(double *v, int n) {
    qsort(v, n, sizeof(double), compare_doubles);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv) {
    if (argc != 5 && argc != 6) {
        fprintf(stderr, "usage: streambench SOCKET 'REQUEST' FINAL ROUNDS [PID]\n");
        return 2;
    }
    const char *final = argv[3], *pid = argc == 6 ? argv[5] : NULL;
    int resp = strcmp(final, "resp-array") == 0, rounds = atoi(argv[4]);
    if (rounds < 1 || rounds > 1000) { fprintf(stderr, "ROUNDS: 1 to 1000\n"); return 2; }
    size_t final_len = strlen(final);
    char *request = malloc(strlen(argv[2]) + 3);
    sprintf(request, "%s\r\n", argv[2]);  // keeld drops the CR before LF; Redis wants it
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    strncpy(a.sun_path, argv[1], sizeof a.sun_path - 1);
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) { perror("connect"); return 1; }

    double first_us[1000], rows_s[1000], mb_s[1000], growth_mb[1000], cpu_us[1000];
    static char buf[1 << 16];
    char head[64];  // the start of the current line (enough to tell its kind)
    long last_rows = 0;
    for (int round = 0; round < rounds; round++) {
        long rss_before = -1;
        if (pid && reset_peak(pid)) rss_before = status_kb(pid, "VmRSS");
        double cpu0 = pid ? cpu_seconds(pid) : -1;
        double t0 = now(), t_first = 0;
        if (write(fd, request, strlen(request)) != (ssize_t)strlen(request)) { perror("write"); return 1; }
        long bytes = 0, lines = 0, rows = 0, want_lines = -1;
        size_t head_len = 0;
        int done = 0;
        while (!done) {
            ssize_t n = read(fd, buf, sizeof buf);
            if (n <= 0) { perror("read"); return 1; }
            if (bytes == 0) t_first = now();
            bytes += n;
            for (ssize_t i = 0; i < n && !done; i++) {
                if (buf[i] != '\n') {
                    if (head_len < sizeof head - 1) head[head_len++] = buf[i];
                    continue;
                }
                head[head_len] = 0;
                lines++;
                if (resp) {
                    if (lines == 1) {
                        if (head[0] != '*') { fprintf(stderr, "not an array reply: %s\n", head); return 1; }
                        want_lines = 1 + 2 * atol(head + 1);
                    } else if (lines % 2 == 1) rows++;
                    done = lines == want_lines;
                } else if (strncmp(head, final, final_len) == 0) {
                    done = 1;
                } else if (head_len > 0 && strstr(head, " ROW ")) {
                    rows++;
                } else {
                    fprintf(stderr, "reply ended with: %s\n", head);
                    return 1;
                }
                head_len = 0;
            }
            // A final line is the reply's last: nothing may follow it in this read.
        }
        double total = now() - t0;
        first_us[round] = (t_first - t0) * 1e6;
        rows_s[round] = rows / total;
        mb_s[round] = bytes / total / 1e6;
        growth_mb[round] = rss_before >= 0 ? (status_kb(pid, "VmHWM") - rss_before) / 1024.0 : -1;
        cpu_us[round] = cpu0 >= 0 && rows > 0 ? (cpu_seconds(pid) - cpu0) * 1e6 / rows : -1;
        last_rows = rows;
        printf("  round %d: %ld rows, %.1f MB in %.1f ms, first row %.0f us, RSS %.1f MB before, growth %.1f MB, CPU %.2f us/row\n",
               round + 1, rows, bytes / 1e6, total * 1e3, first_us[round], rss_before / 1024.0, growth_mb[round], cpu_us[round]);
    }
    printf("  rows %ld  rows/s %.0f  MB/s %.1f  first row %.0f us  RSS growth %.1f MB  server CPU %.2f us/row  (median of %d rounds)\n",
           last_rows, median(rows_s, rounds), median(mb_s, rounds), median(first_us, rounds), median(growth_mb, rounds),
           median(cpu_us, rounds), rounds);
    close(fd);
    return 0;
}
