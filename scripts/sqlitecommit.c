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
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>

#include "benchthreads.h"

static char path[4096];
static double seconds;

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
        record(r, now() - t0, 1);
    }
    sqlite3_finalize(insert);
    sqlite3_close(db);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: sqlitecommit DIRECTORY WRITERS SECONDS\n");
        return 2;
    }
    snprintf(path, sizeof path, "%s/commit.sqlite", argv[1]);
    int writers = atoi(argv[2]);
    seconds = atof(argv[3]);
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
    run_threads(writers, run);
    return 0;
}
