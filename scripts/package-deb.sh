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

# The exact version package-lock.json pins for a top-level npm package.
locked() {
  node -e 'const l = require("./package-lock.json").packages["node_modules/" + process.argv[1]];
           if (!l) { console.error("not in package-lock.json: " + process.argv[1]); process.exit(1); }
           console.log(l.version)' "$1"
}

step "system packages (WebKitGTK, to build the studio)"
ensure_debs libwebkit2gtk-4.1-dev build-essential pkg-config

step "npm packages (the UI's build tools)"
[ -d node_modules/@xyflow/react ] || npm ci --no-audit --no-fund

step "the Tauri CLI (npm @tauri-apps/cli, into $tools)"
# The CLI's version follows the tauri crate in Cargo.lock (same minor), as the Tauri docs ask.
tauri_version=$(awk '/^name = "tauri"$/ { getline; gsub(/[^0-9.]/, ""); print; exit }' Cargo.lock)
want="${tauri_version%.*}"
if ! "$tools/node_modules/.bin/tauri" --version 2>/dev/null | grep -q "tauri-cli $want\."; then
  npm install --prefix "$tools" --no-save --no-package-lock --no-audit --no-fund "@tauri-apps/cli@~$tauri_version"
fi
"$tools/node_modules/.bin/tauri" --version

step "the mcpflow CLI and the demo servers (profile dist: stripped, thin LTO)"
cargo build --locked --profile dist -p mcpflow-cli --bin mcpflow -p mcpflow-testkit --bin mcpflow-testkit

step "the node demo servers, as package-lock.json pins them (into $stage)"
memory="@modelcontextprotocol/server-memory@$(locked @modelcontextprotocol/server-memory)"
everything="@modelcontextprotocol/server-everything@$(locked @modelcontextprotocol/server-everything)"
rm -rf "$stage"
mkdir -p "$stage"
npm install --prefix "$stage" --no-save --no-package-lock --omit=dev --ignore-scripts --no-audit --no-fund \
  "$memory" "$everything"
# .bin holds symlinks the package does not use (the studio runs dist/index.js with node).
rm -rf "$stage/node_modules/.bin"

step "the studio and the .deb (tauri build: the UI, then cargo --profile dist, then the bundle)"
TAURI_APP_PATH=src-tauri "$tools/node_modules/.bin/tauri" build --ci --bundles deb -- --locked --profile dist

deb=$(ls -t target/dist/bundle/deb/*.deb | head -n 1)
step "built"
echo "$deb"
echo "size: $(du -h "$deb" | cut -f1) ($(stat -c %s "$deb") bytes); installed size: $(dpkg-deb -f "$deb" Installed-Size 2>/dev/null || echo '?') KiB"
