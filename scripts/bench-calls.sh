#!/usr/bin/env bash
# What one tool call costs, whole-process: `mcpflow run` on a blueprint of N sequential
# `echo` calls to server-everything (stdio) against the bare official TypeScript SDK
# client (benches/ts-client.mjs) making the same N calls, alternating in one run. Prints
# the median wall time (spawn to exit) of each, their ratio, and the context switches per
# call of the measuring process only (getrusage(RUSAGE_SELF) at its exit, through the
# preloaded benches/rusage.c; the server's are not counted). See docs/performance.md.
#
# Usage: bash scripts/bench-calls.sh [--quick] [N...]
#   ROUNDS=7 (default 5) alternating rounds; N defaults to 2000 20000.
#   --quick: N=50, one round, no targets (what CI runs so the bench keeps working).
#   MCPFLOW_BIN (default target/release/mcpflow; build it with
#   `cargo build --release -p mcpflow-cli --bin mcpflow`).
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=${ROUNDS:-5}
sizes=()
for arg in "$@"; do
  case "$arg" in
    --quick) rounds=1; sizes=(50) ;;
    *) sizes+=("$arg") ;;
  esac
done
((${#sizes[@]})) || sizes=(2000 20000)
bin=${MCPFLOW_BIN:-target/release/mcpflow}
[ -x "$bin" ] || { echo "no $bin: cargo build --release -p mcpflow-cli --bin mcpflow (or set MCPFLOW_BIN)" >&2; exit 2; }
server=node_modules/@modelcontextprotocol/server-everything/dist/index.js
[ -f "$server" ] || { echo "no $server: npm ci first" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc -O2 -shared -fPIC -o "$work/rusage.so" benches/rusage.c

# An `until` loop of one `tools/call` step: iterations run one after the other.
blueprint() {
  cat >"$work/calls-$1.blueprint.json" <<JSON
{ "blueprint": 1, "id": "bench-calls",
  "servers": { "everything": { "command": "node", "args": ["$server", "stdio"] } },
  "steps": [
    { "id": "each", "kind": "loop", "until": "{{ index >= \`$(($1 - 1))\` }}", "max_iterations": $1,
      "steps": [ { "id": "say", "kind": "tool", "server": "everything", "tool": "echo", "args": { "message": "hi" } } ],
      "collect": "{{ index }}" } ] }
JSON
}

# Runs "$@" once: prints "<wall ns> <context switches>".
measure() {
  local out="$work/rusage" start end
  : >"$out"
  start=$(date +%s%N)
  BENCH_RUSAGE_OUT="$out" LD_PRELOAD="$work/rusage.so" "$@" >/dev/null 2>"$work/stderr" || {
    echo "failed: $*" >&2
    cat "$work/stderr" >&2
    exit 1
  }
  end=$(date +%s%N)
  read -r vol invol <"$out"
  echo "$((end - start)) $((vol + invol))"
}

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : int((v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

printf '%-7s %-6s %12s %12s %8s %10s %10s\n' N rounds mcpflow_ms ts_client_ms ratio mcp_cs/call ts_cs/call
for n in "${sizes[@]}"; do
  blueprint "$n"
  : >"$work/m" ; : >"$work/t"
  for ((r = 0; r < rounds; r++)); do
    measure "$bin" run "$work/calls-$n.blueprint.json" --allow-all-servers --quiet >>"$work/m"
    measure node benches/ts-client.mjs "$n" >>"$work/t"
  done
  m_ms=$(cut -d' ' -f1 "$work/m" | median); t_ms=$(cut -d' ' -f1 "$work/t" | median)
  m_cs=$(cut -d' ' -f2 "$work/m" | median); t_cs=$(cut -d' ' -f2 "$work/t" | median)
  awk -v n="$n" -v r="$rounds" -v m="$m_ms" -v t="$t_ms" -v mc="$m_cs" -v tc="$t_cs" 'BEGIN {
    printf "%-7d %-6d %12.0f %12.0f %7.2fx %10.2f %10.2f\n", n, r, m / 1e6, t / 1e6, m / t, mc / n, tc / n }'
done
