#!/usr/bin/env bash
# The README's first command: sets up and launches the studio with the demo ready.
# Installs WebKitGTK (Debian packages) and the npm packages if missing, builds the UI,
# the demo fixture servers and the desktop app, then opens it. On first start the
# studio seeds its store (MCPFLOW_HOME, else ~/.local/share/mcpflow) with the example
# blueprints and the demo servers (the cluster simulator, server-memory,
# server-everything, echo, faulty) and opens the demo blueprint. Servers ask for
# consent before their first start.
# Usage: bash scripts/studio.sh [--release]
#   --release  an optimized build: a few minutes more to build, and the engine and the
#              event stream run about 3x faster (docs/studio.md, "Measured").
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

profile=debug
case "${1:-}" in
  "") ;;
  --release) profile=release ;;
  *) echo "usage: bash scripts/studio.sh [--release]" >&2; exit 2 ;;
esac

step "system packages (WebKitGTK)"
ensure_debs libwebkit2gtk-4.1-dev build-essential pkg-config

step "npm packages (the UI and the reference MCP servers)"
[ -d node_modules/@xyflow/react ] || npm ci --no-audit --no-fund

step "UI"
npm run ui:build

step "demo servers and the studio"
# The seeded demo servers run target/debug/mcpflow-testkit, whatever the studio's profile.
cargo build --locked -p mcpflow-testkit --bin mcpflow-testkit
if [ "$profile" = release ]; then
  cargo build --locked --release -p mcpflow-studio --features custom-protocol
else
  cargo build --locked -p mcpflow-studio --features custom-protocol
fi

step "launch"
exec "target/$profile/mcpflow-studio"
