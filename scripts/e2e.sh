#!/usr/bin/env bash
# The studio's end-to-end tests: the real desktop app under Xvfb, driven through
# tauri-driver + WebKitWebDriver. Installs what it needs (Debian packages, tauri-driver
# from crates.io, npm packages), builds the app with the UI embedded, checks that the
# committed TypeScript bindings are current, and runs tests/e2e/*.test.mjs.
# Screenshots go to test-output/e2e/.
# Usage: bash scripts/e2e.sh [TEST_FILE...]   (scripts/test.sh runs it with none: all)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

step "system packages (WebKitGTK to build; Xvfb and WebKitWebDriver to run)"
ensure_studio_debs

step "tauri-driver (crates.io, 2.x)"
ensure_tauri_driver

step "npm packages"
[ -d node_modules/webdriverio ] || npm ci --no-audit --no-fund

step "UI build (ui/dist; scripts/test.sh built it already)"
[ -n "${MCPFLOW_UI_BUILT:-}" ] || npm run ui:build

step "the studio (UI embedded), the fixture servers and the CLI, linted as they build: the one build of scripts/lib.sh (nothing to do after scripts/test.sh)"
lint_while_building
build_all

step "TypeScript bindings are current (ui/src/bindings.ts)"
fresh="$(mktemp --suffix=.ts)"
target/debug/mcpflow-studio --export-bindings "$fresh"
if ! diff -u ui/src/bindings.ts "$fresh"; then
  echo "ui/src/bindings.ts is stale: run \`target/debug/mcpflow-studio --export-bindings ui/src/bindings.ts\` and commit it" >&2
  exit 1
fi

step "end-to-end tests (Xvfb)"
mkdir -p test-output/e2e
# Arguments pick test files (default: all of tests/e2e/).
if [ "$#" -gt 0 ]; then tests=("$@"); else tests=(tests/e2e/); fi
# Files run side by side (MCPFLOW_E2E_JOBS, default 2), each on an X display of its own
# (tests/e2e/harness.mjs starts it); the tests inside a file run one after another.
MCPFLOW_E2E_OWN_DISPLAY=1 node --test --test-concurrency="${MCPFLOW_E2E_JOBS:-2}" "${tests[@]}"
