#!/usr/bin/env bash
# The daemon's round trips against Redis on a Unix socket, driven by one line-based load
# generator (scripts/linebench.c) in the same run: PING and GET by ID at pipeline depth 1 and
# 16, on 1 and 4 connections; then durable saves of one small object per transaction (INSERT +
# SAVE per round trip) from 1 and 16 clients, against SQLite's single-writer durable commit rate
# (scripts/sqlitecommit.c: WAL, synchronous=FULL, one row per transaction, measured after its WAL
# has wrapped once: see its header) on the same disk.
# The save rows run in ROUNDS rounds, SQLite and keeld taking turns, so a burst of someone
# else's disk traffic lands on both; each round prints its own ratio, then the totals. keeld's
# log fdatasyncs are read from STATS around each save row: saves per sync shows group commit.
# FETCH streaming: a second keeld holding 100,000 `Company` objects (loaded untimed through
# BATCH.INSERT, 1,000 per line) answers one connection's `FETCH` of all of them (result `objects`,
# then `ids`), ROUNDS rounds (at least 3) read to the final line by scripts/streambench.c:
# rows/s, MB/s, time to the first row and keeld's RSS growth during the stream (its peak RSS,
# reset before each round, minus its RSS before). Beside it, as a reference and not a
# like-for-like, Redis answering `LRANGE` of a list of the same 100,000 row texts in one reply.
# Needs redis-server (apt-get install redis-server), socat and libsqlite3-dev.
# Usage: scripts/bench-daemon.sh [SECONDS] [ROUNDS]
#   SAVES_ONLY=1 runs the durable saves alone, FETCH_ONLY=1 the FETCH streaming alone.
#   KEELD=PATH runs that keeld binary instead of building one (another build, side by side).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-3}
rounds=${2:-3}
# On a real disk (fdatasync must cost what it costs), like keel-bench's default.
work=$(mktemp -d /var/tmp/keel-bench-XXXXXX)
keeld2=
trap 'kill $keeld $redis $keeld2 2>/dev/null || true; rm -rf "$work"' EXIT
cc -O2 -pthread -o "$work/linebench" scripts/linebench.c
cc -O2 -pthread -o "$work/streambench" scripts/streambench.c
cc -O2 -pthread -o "$work/sqlitecommit" scripts/sqlitecommit.c -lsqlite3
keeld_bin=${KEELD:-}
if [[ -z $keeld_bin ]]; then
  swift build -c release --product keeld >/dev/null
  keeld_bin=.build/release/keeld
fi
cat >"$work/keeld.json" <<JSON
{"socketPath":"$work/k.sock","dataDirectory":"$work/data","modelPath":"config/model.json","logLevel":"warning"}
JSON
"$keeld_bin" --config "$work/keeld.json" >"$work/ready" 2>"$work/keeld.err" &
keeld=$!
redis-server --port 0 --unixsocket "$work/r.sock" --save "" --appendonly no >"$work/redis.log" 2>&1 &
redis=$!
for _ in $(seq 100); do [[ -s "$work/ready" && -S "$work/r.sock" ]] && break; sleep 0.1; done
printf 'x BATCH.INSERT {"entity":"Company","objects":[{"name":"A"}]}\n' | socat -t 2 - "UNIX-CONNECT:$work/k.sock" >/dev/null
printf 'SET k hello\r\n' | socat -t 1 - "UNIX-CONNECT:$work/r.sock" >/dev/null
run() { printf '%-34s' "$1"; "$work/linebench" "${@:2}" "$seconds"; }
if [[ -z "${SAVES_ONLY:-}${FETCH_ONLY:-}" ]]; then
for conns in 1 4; do
  for depth in 1 16; do
    run "keeld PING  conns=$conns depth=$depth" "$work/k.sock" 't PING' 1 "$conns" "$depth"
    run "redis PING  conns=$conns depth=$depth" "$work/r.sock" 'PING' 1 "$conns" "$depth"
    run "keeld GET   conns=$conns depth=$depth" "$work/k.sock" 't GET {"$id":"Company/1"}' 1 "$conns" "$depth"
    run "redis GET   conns=$conns depth=$depth" "$work/r.sock" 'GET k' 2 "$conns" "$depth"
  done
done
fi

if [[ -z "${SAVES_ONLY:-}" ]]; then
  # FETCH streaming, on a keeld of its own (the other rows' store stays as it was).
  cat >"$work/keeld2.json" <<JSON
{"socketPath":"$work/k2.sock","dataDirectory":"$work/data2","modelPath":"config/model.json","logLevel":"warning"}
JSON
  "$keeld_bin" --config "$work/keeld2.json" >"$work/ready2" 2>"$work/keeld2.err" &
  keeld2=$!
  for _ in $(seq 100); do [[ -s "$work/ready2" ]] && break; sleep 0.1; done
  LC_ALL=C awk 'BEGIN {
    for (b = 0; b < 100; b++) {
      printf "l%d BATCH.INSERT {\"entity\":\"Company\",\"objects\":[", b
      for (i = 1; i <= 1000; i++) {
        n = b * 1000 + i
        printf "%s{\"name\":\"Company %d\",\"website\":\"https://example.com/company/%d\",\"founded\":\"20%02d-%02d-%02dT09:30:00.000Z\",\"registrationNumber\":%d}", (i > 1 ? "," : ""), n, n, n % 25, n % 12 + 1, n % 28 + 1, 100000000 + n
      }
      print "]}"
    }
  }' | socat -t 60 - "UNIX-CONNECT:$work/k2.sock" | grep -c ' OK ' | grep -qx 100 || { echo "loading 100k Company objects failed" >&2; exit 1; }
  # The same rows' text, one element each, pushed onto a Redis list (RESP: no quoting rules).
  printf 'f FETCH {"entity":"Company"}\n' | socat -t 60 - "UNIX-CONNECT:$work/k2.sock" | LC_ALL=C awk '
    / ROW / { v = substr($0, 7); printf "*3\r\n$5\r\nRPUSH\r\n$4\r\nrows\r\n$%d\r\n%s\r\n", length(v), v }' |
    socat -t 60 - "UNIX-CONNECT:$work/r.sock" >/dev/null
  # A fresh keeld for the stream (SIGTERM: it checkpoints and exits), so its RSS before is its
  # own and not the load's leftovers: the first round's growth includes filling its page cache.
  kill "$keeld2"; wait "$keeld2" 2>/dev/null || true
  "$keeld_bin" --config "$work/keeld2.json" >"$work/ready2" 2>>"$work/keeld2.err" &
  keeld2=$!
  for _ in $(seq 100); do [[ -s "$work/ready2" ]] && break; sleep 0.1; done
  stream_rounds=$((rounds < 3 ? 3 : rounds))
  echo "FETCH streaming of 100,000 rows, one connection, $stream_rounds rounds (load $(cut -d' ' -f1-3 /proc/loadavg))"
  for result in objects ids; do
    echo "keeld FETCH Company result=$result"
    "$work/streambench" "$work/k2.sock" "f FETCH {\"entity\":\"Company\",\"result\":\"$result\"}" 'f OK' "$stream_rounds" "$keeld2"
  done
  echo "redis LRANGE of the same 100,000 row texts (a reference, not a like-for-like)"
  "$work/streambench" "$work/r.sock" 'LRANGE rows 0 -1' resp-array "$stream_rounds" "$redis"
  kill "$keeld2"; wait "$keeld2" 2>/dev/null || true; keeld2=
fi
[[ -n "${FETCH_ONLY:-}" ]] && exit 0

# Durable saves: rows of "label, linebench's (or sqlitecommit's) figures", keeld's with its log
# syncs during the row. Each round ends with its ratios; the last lines give each row's rate over
# all rounds (every row runs SECONDS per round, so that is the mean of its rounds) and the ratios
# of those rates.
syncs() {
  printf 't STATS\n' | socat -t 2 - "UNIX-CONNECT:$work/k.sock" | grep -o '"logSyncs":[0-9]*' |
    awk -F: '{ n += $2 } END { print n }'
}
computer='t INSERT {"entity":"Computer","values":{"id":"6f1c2a8e-3b7d-4e59-9a0c-1d2e3f405162","model":"X1"}}'
feedback='t INSERT {"entity":"Feedback","values":{"bookUUID":"6f1c2a8e-3b7d-4e59-9a0c-1d2e3f405162","rating":4}}'
rate() { awk '{ print $2 }' <<<"$1"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
save_row() {  # LABEL INSERT_LINE CLIENTS → prints the row, sets $out
  local before after
  before=$(syncs)
  out=$("$work/linebench" "$work/k.sock" "$2"$'\r\n''t SAVE' 2 "$3" 1 "$seconds")
  after=$(syncs)
  awk -v label="$1" -v out="$out" -v syncs=$((after - before)) 'BEGIN {
    match(out, /\([0-9]+ round trips\)/); saves = substr(out, RSTART + 1, RLENGTH - 14)
    printf "%-34s%s  log syncs %d (%.2f saves per sync)\n", label, out, syncs, syncs ? saves / syncs : 0 }'
}
rows=("Computer 16" "Feedback 16" "Computer 1")
sum=(0 0 0 0)  # SQLite, then each keeld row: the sum of their rates over the rounds
for round in $(seq "$rounds"); do
  echo "durable saves, round $round of $rounds"
  dir=$(mktemp -d "$work/sqlite-XXXX")
  sqlite=$("$work/sqlitecommit" "$dir" 1 "$seconds")
  rm -rf "$dir"
  printf '%-34s%s\n' "sqlite commits  writers=1" "$sqlite"
  sum[0]=$((sum[0] + $(rate "$sqlite")))
  line="  keeld / SQLite single writer:"
  for i in 0 1 2; do
    read -r entity clients <<<"${rows[i]}"
    insert=$computer
    [[ $entity == Feedback ]] && insert=$feedback
    save_row "keeld SAVE $entity  clients=$clients" "$insert" "$clients"
    sum[i + 1]=$((sum[i + 1] + $(rate "$out")))
    line+=" $entity x$clients $(ratio "$(rate "$out")" "$(rate "$sqlite")")"
  done
  echo "$line"
done
echo "over $rounds rounds: SQLite single writer $((sum[0] / rounds)) commits/s"
for i in 0 1 2; do
  read -r entity clients <<<"${rows[i]}"
  echo "  keeld SAVE $entity x$clients: $((sum[i + 1] / rounds)) saves/s = $(ratio "${sum[i + 1]}" "${sum[0]}") x SQLite$([[ $i == 0 ]] && echo ' (target >= 3)')"
done
