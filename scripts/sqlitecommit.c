// sqlitecommit: SQLite's durable commit rate for scripts/bench-daemon.sh — the figure keeld's
// concurrent saves are compared with. Each commit is one autocommit INSERT of one small row (the
// shape of one small object per SAVE), prepared once, in WAL mode with synchronous=FULL (the log
// is synced at every commit, as keeld's default sync mode does), from WRITERS threads, each on its
// own connection (SQLite lets one writer in at a time; the others wait in the busy handler).
//
//   cc -O2 -pthread -o sqlitecommit scripts/sqlitecommit.c -lsqlite3
//   sqlitecommit DIRECTORY WRITERS SECONDS
//
// Before timing, 2,000 untimed commits take the WAL through its first automatic checkpoint
// (1,000 pages), after which SQLite writes the WAL over from its start: a fresh WAL grows with
// every commit, and an fdatasync that also has to record the file's new size can cost
// milliseconds where an overwrite costs tens of microseconds. keeld's log is preallocated, so it
// is measured in its steady state too.
//
// Prints commits per second and the commit latency percentiles, in linebench's format.
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static char path[4096];
static double seconds;

typedef struct { long commits; double *samples; long count, capacity; int id; } result_t;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void check(int rc, sqlite3 *db, const char *what) {
    if (rc != SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW) {
        fprintf(stderr, "sqlitecommit: %s: %s\n", what, db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
        exit(1);
    }
}

static sqlite3 *open_db(void) {
    sqlite3 *db;
    check(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL), NULL, "open");
    sqlite3_busy_timeout(db, 60000);
    check(sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;", NULL, NULL, NULL), db, "pragmas");
    return db;
}

static void *run(void *arg) {
    result_t *r = arg;
    sqlite3 *db = open_db();
    sqlite3_stmt *insert;
    check(sqlite3_prepare_v2(db, "INSERT INTO computer(uuid, model) VALUES(?, ?)", -1, &insert, NULL), db, "prepare");
    unsigned char uuid[16];
    for (int i = 0; i < 16; i++) uuid[i] = (unsigned char)(i * 17 + r->id);
    double end = now() + seconds;
    while (now() < end) {
        double t0 = now();
        sqlite3_bind_blob(insert, 1, uuid, sizeof uuid, SQLITE_STATIC);
        sqlite3_bind_text(insert, 2, "X1", 2, SQLITE_STATIC);
        int rc;
        while ((rc = sqlite3_step(insert)) == SQLITE_BUSY) sqlite3_reset(insert);  // never skip a commit
        check(rc, db, "insert");
        sqlite3_reset(insert);
        if (r->count == r->capacity) {
            r->capacity = r->capacity ? r->capacity * 2 : 1 << 16;
            r->samples = realloc(r->samples, r->capacity * sizeof(double));
        }
        r->samples[r->count++] = now() - t0;
        r->commits++;
    }
    sqlite3_finalize(insert);
    sqlite3_close(db);
    return NULL;
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: sqlitecommit DIRECTORY WRITERS SECONDS\n");
        return 2;
    }
    snprintf(path, sizeof path, "%s/commit.sqlite", argv[1]);
    int writers = atoi(argv[2]);
    seconds = atof(argv[3]);
    if (writers < 1 || writers > 256) {
        fprintf(stderr, "sqlitecommit: WRITERS must be 1…256\n");
        return 2;
    }
    sqlite3 *db = open_db();
    check(sqlite3_exec(db, "CREATE TABLE IF NOT EXISTS computer(id INTEGER PRIMARY KEY, uuid BLOB NOT NULL, model TEXT)",
                       NULL, NULL, NULL), db, "create");
    sqlite3_stmt *warm;
    check(sqlite3_prepare_v2(db, "INSERT INTO computer(uuid, model) VALUES(x'00', 'warm-up')", -1, &warm, NULL), db, "prepare");
    for (int i = 0; i < 2000; i++) {
        check(sqlite3_step(warm), db, "warm-up");
        sqlite3_reset(warm);
    }
    sqlite3_finalize(warm);
    sqlite3_close(db);
    pthread_t threads[256];
    result_t results[256] = {0};
    double t0 = now();
    for (int i = 0; i < writers; i++) {
        results[i].id = i;
        pthread_create(&threads[i], NULL, run, &results[i]);
    }
    long total = 0, count = 0;
    for (int i = 0; i < writers; i++) {
        pthread_join(threads[i], NULL);
        total += results[i].commits;
        count += results[i].count;
    }
    double elapsed = now() - t0;
    double *all = malloc(count * sizeof(double));
    long k = 0;
    for (int i = 0; i < writers; i++)
        for (long j = 0; j < results[i].count; j++) all[k++] = results[i].samples[j];
    qsort(all, count, sizeof(double), compare);
    printf("requests/s %.0f  round trip p50 %.1f us  p99 %.1f us  (%ld round trips)\n", total / elapsed,
           all[count / 2] * 1e6, all[count * 99 / 100] * 1e6, count);
    return 0;
}
