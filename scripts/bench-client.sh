#!/usr/bin/env bash
# The client's overhead over raw protocol lines (Docs/Performance.md, "Client"): builds keeld and
# keel-client-bench in release, starts keeld on a temporary socket and data folder, and runs
# GET by ID at 1 and 16 in flight through KeelConnection and through a plain socket, alternating.
# Usage: scripts/bench-client.sh [SECONDS] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-3}
rounds=${2:-3}
scripts/ensure-deps.sh
work=$(mktemp -d /tmp/keel-bench-XXXXXX)
keeld=
trap '[[ -n $keeld ]] && kill $keeld 2>/dev/null; rm -rf "$work"' EXIT
swift build -c release --product keeld >/dev/null
# The benchmark package's build plan is made again (it lists Keel's files as they were: Makefile, BENCH_PLAN).
rm -f Benchmarks/.build/release/description.json
(cd Benchmarks && swift build -c release --product keel-client-bench >/dev/null)
cat >"$work/keeld.json" <<JSON
{"socketPath":"$work/k.sock","dataDirectory":"$work/data","modelPath":"config/model.json","logLevel":"warning"}
JSON
.build/release/keeld --config "$work/keeld.json" >"$work/ready" 2>"$work/keeld.err" &
keeld=$!
for _ in $(seq 100); do [[ -s "$work/ready" ]] && break; sleep 0.1; done
Benchmarks/.build/release/keel-client-bench --socket "$work/k.sock" --seconds "$seconds" --rounds "$rounds" --daemon-pid "$keeld"
