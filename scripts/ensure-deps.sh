#!/usr/bin/env bash
# Makes sure the C libraries Keel builds against are installed: liblz4-dev for the product, and
# libsqlite3-dev too when called with `--bench` (the benchmark compares against SQLite; the
# product never links it). Installs through apt-get when missing and running as root (or with
# passwordless sudo); otherwise says exactly what to install and fails.
set -euo pipefail

need=()
pkg-config --exists liblz4 2>/dev/null || need+=(liblz4-dev)
if [[ "${1:-}" == "--bench" ]]; then
  pkg-config --exists sqlite3 2>/dev/null || need+=(libsqlite3-dev)
fi
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
[[ ${#need[@]} -eq 0 ]] && exit 0

echo "keel: installing ${need[*]} (missing)" >&2
if [[ $(id -u) -eq 0 ]]; then
  apt=(apt-get)
elif sudo -n true 2>/dev/null; then
  apt=(sudo -n apt-get)
else
  echo "keel: missing ${need[*]}; install with: sudo apt-get install -y ${need[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
"${apt[@]}" install -y --no-install-recommends "${need[@]}" >/dev/null 2>&1 ||
  { "${apt[@]}" update -qq >/dev/null && "${apt[@]}" install -y --no-install-recommends "${need[@]}" >/dev/null; }
