#!/usr/bin/env bash
# The README's first command: sets up and launches the studio with the demo ready.
# Installs WebKitGTK (Debian packages) and the npm packages if missing, builds the UI,
# the demo fixture servers and the desktop app, then opens it. On first start the
# studio seeds its store (MCPFLOW_HOME, else ~/.local/share/mcpflow) with the example
# blueprints and the demo servers (the cluster simulator, server-memory,
# server-everything, echo, faulty) and opens the demo blueprint. Servers ask for
# consent before their first start.
# Usage: bash scripts/studio.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

step "system packages (WebKitGTK)"
ensure_debs libwebkit2gtk-4.1-dev build-essential pkg-config

step "npm packages (the UI and the reference MCP servers)"
[ -d node_modules/@xyflow/react ] || npm ci --no-audit --no-fund

step "UI"
npm run ui:build

step "demo servers and the studio"
cargo build --locked -p mcpflow-testkit --bin mcpflow-testkit
cargo build --locked -p mcpflow-studio --features custom-protocol

step "launch"
exec target/debug/mcpflow-studio
