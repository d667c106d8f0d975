#!/usr/bin/env bash
# The daemon's round trips against Redis on a Unix socket, driven by one line-based load
# generator (scripts/linebench.c) in the same run: PING and GET by ID at pipeline depth 1 and
# 16, on 1 and 4 connections; then saves of one small object per transaction from 16 clients.
# Needs redis-server (apt-get install redis-server). Usage: scripts/bench-daemon.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-3}
work=$(mktemp -d /tmp/keel-bench-XXXXXX)
trap 'kill $keeld $redis 2>/dev/null || true; rm -rf "$work"' EXIT
cc -O2 -pthread -o "$work/linebench" scripts/linebench.c
swift build -c release --product keeld >/dev/null
cat >"$work/keeld.json" <<JSON
{"socketPath":"$work/k.sock","dataDirectory":"$work/data","modelPath":"config/model.json","logLevel":"warning"}
JSON
.build/release/keeld --config "$work/keeld.json" >"$work/ready" 2>"$work/keeld.err" &
keeld=$!
redis-server --port 0 --unixsocket "$work/r.sock" --save "" --appendonly no >"$work/redis.log" 2>&1 &
redis=$!
for _ in $(seq 100); do [[ -s "$work/ready" && -S "$work/r.sock" ]] && break; sleep 0.1; done
printf 'x BATCH.INSERT {"entity":"Company","objects":[{"name":"A"}]}\n' | socat -t 2 - "UNIX-CONNECT:$work/k.sock" >/dev/null
printf 'SET k hello\r\n' | socat -t 1 - "UNIX-CONNECT:$work/r.sock" >/dev/null
run() { printf '%-34s' "$1"; "$work/linebench" "${@:2}" "$seconds"; }
for conns in 1 4; do
  for depth in 1 16; do
    run "keeld PING  conns=$conns depth=$depth" "$work/k.sock" 't PING' 1 "$conns" "$depth"
    run "redis PING  conns=$conns depth=$depth" "$work/r.sock" 'PING' 1 "$conns" "$depth"
    run "keeld GET   conns=$conns depth=$depth" "$work/k.sock" 't GET {"$id":"Company/1"}' 1 "$conns" "$depth"
    run "redis GET   conns=$conns depth=$depth" "$work/r.sock" 'GET k' 2 "$conns" "$depth"
  done
done
