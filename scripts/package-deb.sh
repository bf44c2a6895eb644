#!/usr/bin/env bash
# Builds the Debian package with the Tauri bundler: mcpflow-studio, the mcpflow CLI,
# the demo servers (mcpflow-testkit, and server-memory / server-everything with their
# dependencies) and a desktop entry. Everything is fetched here, at build time (Debian
# packages, the npm packages, crates); the installed package fetches nothing.
# Tracked files are not touched: the tools and the staged node servers go under
# target/package/, the UI build into ui/dist (ignored).
# Usage: bash scripts/package-deb.sh        (then: sudo apt install ./mcpflow_*.deb)
# Check the result with: bash scripts/check-deb.sh target/dist/bundle/deb/mcpflow_*.deb
# (extracted), then sudo bash scripts/check-deb-installed.sh target/dist/bundle/deb/mcpflow_*.deb
# (installed with dpkg -i, run from /usr/bin, removed).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

# The paths in tauri.conf.json (bundle.linux.deb.files) name ../target/…: build there.
export CARGO_TARGET_DIR="$PWD/target"
work=target/package
tools="$work/tools"
stage="$work/stage"

step "system packages (WebKitGTK, to build the studio)"
ensure_debs libwebkit2gtk-4.1-dev build-essential pkg-config

step "npm packages (the UI's build tools)"
[ -d node_modules/@xyflow/react ] || npm ci --no-audit --no-fund

step "the Tauri CLI (npm @tauri-apps/cli, into $tools)"
ensure_tauri_cli "$tools"

step "the mcpflow CLI and the demo servers (profile dist: stripped, thin LTO)"
cargo build --locked --profile dist -p mcpflow-cli --bin mcpflow -p mcpflow-testkit --bin mcpflow-testkit

step "the node demo servers, as package-lock.json pins them (into $stage)"
stage_node_servers "$stage"

step "the studio and the .deb (tauri build: the UI, then cargo --profile dist, then the bundle)"
TAURI_APP_PATH=src-tauri "$tools/node_modules/.bin/tauri" build --ci --bundles deb -- --locked --profile dist

deb=$(newest_deb target/dist/bundle/deb)
step "built"
echo "$deb"
echo "size: $(du -h "$deb" | cut -f1) ($(stat -c %s "$deb") bytes); installed size: $(dpkg-deb -f "$deb" Installed-Size 2>/dev/null || echo '?') KiB"
