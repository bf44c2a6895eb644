#!/usr/bin/env bash
# The test command (README, second command): sets up what the tests need and runs them all.
# Usage: bash scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

step "toolchain"
if ! command -v cargo >/dev/null 2>&1; then
  echo "cargo is missing: install Rust from https://rustup.rs (stable >= 1.88)" >&2
  exit 1
fi
cargo --version
rustup component list --installed 2>/dev/null | grep -q '^rustfmt' || rustup component add rustfmt clippy

step "npm packages (the reference MCP servers, from the registry; never fetched at run time)"
if ! command -v node >/dev/null 2>&1; then
  echo "node is missing: the reference MCP servers need Node.js >= 20" >&2
  exit 1
fi
npm ci --no-audit --no-fund

step "Python packages (the MCP Python SDK 2.x, a 2026-07-28 server for the tests; never fetched at run time)"
ensure_debs python3 python3-venv
[ -x .venv-test/bin/python ] || python3 -m venv .venv-test
.venv-test/bin/pip install --quiet --disable-pip-version-check -r requirements-test.txt

step "Debian packages (a real Secret Service for the OS-keyring tests: D-Bus, gnome-keyring, secret-tool; systemd-analyze for the user unit)"
ensure_debs dbus gnome-keyring libsecret-tools systemd

step "Debian packages (PostgreSQL: the store's tests start throwaway clusters of their own, on a Unix socket in a temporary folder, and stop them)"
# Only the binaries are used (initdb, pg_ctl, createdb from /usr/lib/postgresql/*/bin); the
# package's own cluster is not needed. Under CI=true a store test without them fails.
ensure_debs postgresql

step "format"
cargo fmt --all --check

step "lint"
cargo clippy --workspace --exclude mcpflow-studio --all-targets --locked -- -D warnings

step "fixture servers"
cargo build --locked -p mcpflow-testkit --bin mcpflow-testkit

step "the MCP conformance suite (every client scenario against the binary, the server scenarios against serve --http)"
bash scripts/conformance.sh

step "tests (workspace, default members: no GTK/WebKit needed)"
# CI=true makes insta fail on any snapshot that is missing or differs instead of writing it.
CI=true cargo test --workspace --exclude mcpflow-studio --locked

step "benches compile and run once (criterion test mode)"
cargo test --workspace --exclude mcpflow-studio --benches --locked

step "UI unit tests (Vitest: the document store, the blueprint <-> graph mapping)"
npm run ui:test

step "examples validate"
cargo run -q --locked -p mcpflow-cli -- validate workflows/*.json

step "the studio: lint, then end-to-end tests of the real app under Xvfb"
bash scripts/e2e.sh

step "the .deb of the tested build: bundled, installed with dpkg -i, checked, removed (needs root; skipped otherwise)"
# The debug build e2e.sh made, bundled as a .deb and run from /usr/bin (scripts/check-deb-ci.sh).
bash scripts/check-deb-ci.sh

echo
echo "all tests passed"
