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

step "Python packages (the MCP Python SDK 2.x, a 2026-07-28 server for the tests; kubernetes-validate for deploy/; never fetched at run time)"
ensure_debs python3 python3-venv
[ -x .venv-test/bin/python ] || python3 -m venv .venv-test
# Downloads: they go on beside the build, and are joined before the tests.
beside pip .venv-test/bin/pip install --quiet --disable-pip-version-check -r requirements-test.txt

step "Debian packages (a real Secret Service for the OS-keyring tests: D-Bus, gnome-keyring, secret-tool; systemd-analyze for the user unit)"
ensure_debs dbus gnome-keyring libsecret-tools systemd openssl

step "Debian packages the studio needs (WebKitGTK to build it; Xvfb and WebKitWebDriver to drive it)"
ensure_studio_debs

step "Debian packages (PostgreSQL: the store's tests start throwaway clusters of their own, on a Unix socket in a temporary folder, and stop them)"
# Only the binaries are used (initdb, pg_ctl, createdb from /usr/lib/postgresql/*/bin); the
# package's own cluster is not needed. Under CI=true a store test without them fails.
ensure_debs postgresql

step "format"
cargo fmt --all --check

step "UI build (ui/dist: the studio embeds it)"
npm run ui:build
export MCPFLOW_UI_BUILT=1

step "build and lint: the whole workspace, every target, one feature set, clippy's warnings as errors (the tests, benches and e2e tests reuse it)"
lint_while_building
build_all

step "Python packages installed (started beside the build)"
joined pip

step "tests (the whole workspace, the studio's unit tests included), and beside them the UI unit tests (Vitest)"
# Many Rust tests wait on child processes, so Vitest and the MCP conformance suite run
# beside them (their output follows).
beside ui_test npm run ui:test
beside conformance env MCPFLOW_BIN="$PWD/target/debug/mcpflow" bash scripts/conformance.sh
# CI=true makes insta fail on any snapshot that is missing or differs instead of writing it.
# Tests wait for events with deadlines only as failure guards; a hang anywhere still ends
# here, with a clear message, long before the CI's own limit.
CI=true timeout --kill-after=30s 40m cargo test "${ALL_TARGETS[@]}" || {
  code=$?
  [ "$code" -ne 124 ] || echo "the tests did not finish within 40 minutes: one of them hangs" >&2
  exit "$code"
}
step "UI unit tests (Vitest: the document store, the blueprint <-> graph mapping; run beside the Rust tests)"
joined ui_test

step "the MCP conformance suite (every client scenario against the binary, the server scenarios against serve --http; run beside the Rust tests)"
joined conformance

step "benches compile and run once (criterion test mode)"
cargo test "${ALL_TARGETS[@]}" --benches

step "examples validate"
target/debug/mcpflow validate workflows/*.json

step "the studio: end-to-end tests of the real app under Xvfb"
bash scripts/e2e.sh

step "the .deb of the tested build: bundled, installed with dpkg -i, checked, removed (needs root; skipped otherwise)"
# The debug build e2e.sh made, bundled as a .deb and run from /usr/bin (scripts/check-deb-ci.sh).
bash scripts/check-deb-ci.sh

echo
echo "all tests passed"
