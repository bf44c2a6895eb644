#!/usr/bin/env bash
# The official MCP conformance suite (npm @modelcontextprotocol/conformance, pinned in
# package.json) against the real binary: every client scenario, and the server scenarios
# that apply against `mcpflow serve --http`. Fails on a scenario the baseline
# (tests/conformance/baseline.yml) does not expect to fail, or one it lists that passes.
# Usage: bash scripts/conformance.sh   (after `npm ci`; builds the binary it tests)
# MCPFLOW_BIN=PATH tests that binary instead of building one.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -f node_modules/@modelcontextprotocol/conformance/dist/index.js ]; then
  echo "the conformance suite is not installed: run \`npm ci\` first (scripts/test.sh does)" >&2
  exit 1
fi
if [ -z "${MCPFLOW_BIN:-}" ]; then
  cargo build --locked -q -p mcpflow-cli --bin mcpflow
  export MCPFLOW_BIN="$PWD/target/debug/mcpflow"
fi
exec node tests/conformance/run.mjs
