#!/usr/bin/env bash
# Peak RSS (VmHWM) of the `mcpflow` process itself — not its server children — while it
# runs workflows/cmdb-sync.blueprint.json against cluster-sim and server-memory.
# Polls /proc/PID/status every 50 ms; VmHWM only grows, so the last reading is the peak.
# Usage: bash scripts/measure-rss.sh [RUNS]   (release build; prints one line per run)
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-3}"
cargo build --release --locked -q -p mcpflow-cli
cargo build --locked -q -p mcpflow-testkit --bin mcpflow-testkit # demo/servers.json starts the debug build
[ -d node_modules/@modelcontextprotocol/server-memory ] || npm ci --no-audit --no-fund
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
for i in $(seq 1 "$runs"); do
  MCPFLOW_MEMORY_FILE="$dir/graph-$i.jsonl" target/release/mcpflow run workflows/cmdb-sync.blueprint.json \
    --servers demo/servers.json --allow-all-servers --json >"$dir/out.json" 2>"$dir/err.log" &
  pid=$!
  hwm=0
  while kill -0 "$pid" 2>/dev/null; do
    v="$(awk '/VmHWM/{print $2}' "/proc/$pid/status" 2>/dev/null || true)"
    [ -n "$v" ] && hwm="$v"
    sleep 0.05
  done
  rc=0
  wait "$pid" || rc=$?
  calls="$(node -e 'const d=require(process.argv[1]);console.log(d.status, d.summary.tool_calls)' "$dir/out.json")"
  echo "run $i: exit $rc, $calls tool calls, peak RSS of mcpflow $((hwm / 1024)) MB (VmHWM ${hwm} kB)"
done
