#!/usr/bin/env bash
# The .deb in CI (the last step of scripts/test.sh): bundles the build the tests just
# ran into a package and checks it installed. No compiling: the debug studio (UI
# embedded), CLI and testkit that scripts/e2e.sh built in target/debug go into a .deb
# with the Tauri bundler (`tauri bundle --debug`, with the same config as the real
# package and the npm demo servers staged as scripts/package-deb.sh stages them), and
# scripts/check-deb-installed.sh installs it with dpkg -i, runs the demo in
# /usr/bin/mcpflow-studio with a fresh HOME, checks `setup --print` and removes it.
# Under a minute, where the dist build scripts/package-deb.sh makes takes half an hour.
# What this does not check is the dist build itself (stripped, thin LTO): check that
# package with scripts/check-deb.sh and scripts/check-deb-installed.sh.
# Needs root (dpkg -i): skipped, saying so, when not root or when mcpflow is installed
# already (the check would remove it).
# Usage: bash scripts/check-deb-ci.sh   (after scripts/e2e.sh, or the builds it runs)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

start=$SECONDS
if [ "$(id -u)" != 0 ]; then
  echo "SKIPPED: the .deb check installs the package system-wide with dpkg -i and needs root (CI runs as root): sudo bash $0"
  exit 0
fi
if ! why=$(deb_check_can_install); then
  echo "SKIPPED: the .deb check: $why"
  exit 0
fi

built=target/debug
for bin in mcpflow-studio mcpflow mcpflow-testkit; do
  if [ ! -x "$built/$bin" ]; then
    echo "$built/$bin is missing: build what scripts/e2e.sh builds first (npm run ui:build, then" >&2
    echo "cargo build --workspace --all-targets --features mcpflow-studio/custom-protocol)" >&2
    exit 1
  fi
done

work=target/package
tools="$work/tools"
ci="$PWD/$work/ci"
stage="$ci/stage"
# The bundler takes the studio from <target dir>/debug and patches it in place (the
# bundle type, as `tauri build` does): give it a copy in a target dir of its own, so the
# build in target/debug (hard links into cargo's deps/ and maybe other checkouts) is
# left as it is.
target="$ci/target"

step "the Tauri CLI (npm @tauri-apps/cli, into $tools)"
ensure_tauri_cli "$tools"

step "the node demo servers, as package-lock.json pins them (into $stage)"
rm -rf "$ci"
stage_node_servers "$stage"

step "the .deb of the tested debug build (tauri bundle --debug: $built/mcpflow-studio, mcpflow, mcpflow-testkit)"
mkdir -p "$target/debug"
cp "$built/mcpflow-studio" "$target/debug/mcpflow-studio"
# The files of tauri.conf.json's bundle.linux.deb.files, from the debug build instead
# of target/dist (every key there is replaced).
files=$(node -e 'const [bin, testkit, modules] = process.argv.slice(1);
  console.log(JSON.stringify({ bundle: { linux: { deb: { files: {
    "/usr/bin/mcpflow": bin, "/usr/lib/mcpflow/mcpflow-testkit": testkit, "/usr/lib/mcpflow/node_modules": modules } } } } }))' \
  "$PWD/$built/mcpflow" "$PWD/$built/mcpflow-testkit" "$stage/node_modules")
CARGO_TARGET_DIR="$target" TAURI_APP_PATH=src-tauri "$tools/node_modules/.bin/tauri" bundle --ci --debug --bundles deb --config "$files"
deb=$(newest_deb "$target/debug/bundle/deb")
# What the .deb holds is not needed twice: the copy and the bundler's unpacked tree go.
rm -rf "$target/debug/mcpflow-studio" "${deb%.deb}"
echo "$deb: $(du -h "$deb" | cut -f1), installed $(dpkg-deb -f "$deb" Installed-Size) KiB"

step "install it, check it, remove it (scripts/check-deb-installed.sh)"
status=0
bash scripts/check-deb-installed.sh "$deb" || status=$?
echo "the .deb check took $((SECONDS - start)) s"
exit "$status"
