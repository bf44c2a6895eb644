# shellcheck shell=bash
# Shared by the scripts: sourced, not run.

# Each step's heading says how long the first script of the run (test.sh, or the one run
# alone) had been running when the step began, so a CI log reads as a per-step timing table.
: "${MCPFLOW_STEPS_T0:=$(date +%s)}"
export MCPFLOW_STEPS_T0
step() {
  local t=$(($(date +%s) - MCPFLOW_STEPS_T0))
  printf '\n== %s  [at %dm%02ds]\n' "$*" $((t / 60)) $((t % 60))
}

# One build for the whole test run: every package of the workspace (the studio included,
# with the UI embedded), every target, one feature set. Cargo unifies features per
# invocation, so `cargo build -p mcpflow-cli` alone, or the studio alone, would resolve
# tokio, serde or mcpflow-app with other features and compile most of the tree again;
# every script builds with these arguments instead, and clippy and the tests reuse it.
# Needs ui/dist (`npm run ui:build`) and WebKitGTK (`ensure_studio_debs`).
# `beside NAME COMMAND...` runs a command in the background, its output kept in
# target/beside/NAME.log; `joined NAME` waits for it, prints that output and fails as it
# did. CI runs what waits on other things (downloads, child processes) beside the work
# that keeps both cores busy.
beside() {
  local name=$1
  shift
  mkdir -p target/beside
  "$@" >"target/beside/$name.log" 2>&1 &
  eval "beside_$name=$!"
}
joined() {
  local name=$1 pid code=0
  pid=$(eval "echo \$beside_$name")
  wait "$pid" || code=$?
  cat "target/beside/$name.log"
  if [ "$code" -ne 0 ]; then echo "$name failed (exit $code): its output is above" >&2; fi
  return "$code"
}

ALL_TARGETS=(--workspace --locked --features mcpflow-studio/custom-protocol)
build_all() { cargo build "${ALL_TARGETS[@]}" --all-targets; }

# The test scripts lint while they build: clippy's driver wraps rustc for the workspace's
# own crates, as `cargo clippy` does, with warnings as errors. A separate `cargo clippy`
# would check every dependency again in check mode (2.4 min of a cold CI run on 2 cores).
# Every cargo command after this sees the same wrapper, so none rebuilds what another
# built. (A plain `cargo test` typed later rebuilds the workspace's crates once.)
lint_while_building() {
  RUSTC_WORKSPACE_WRAPPER="$(rustc --print sysroot)/bin/clippy-driver"
  export RUSTC_WORKSPACE_WRAPPER
  export CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"
}

# What the studio needs to build (WebKitGTK) and to be driven under Xvfb.
ensure_studio_debs() {
  ensure_debs libwebkit2gtk-4.1-dev build-essential pkg-config xvfb xauth webkit2gtk-driver imagemagick
}

# Installs the Debian packages given that are not installed yet (as root, or with sudo).
ensure_debs() {
  local need=() pkg sudo=""
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || need+=("$pkg")
  done
  ((${#need[@]})) || return 0
  if [ "$(id -u)" != 0 ]; then
    if ! command -v sudo >/dev/null; then
      echo "missing Debian packages: ${need[*]} (install them as root: apt-get install ${need[*]})" >&2
      return 1
    fi
    sudo="sudo"
  fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
}

# tauri-driver (crates.io, 2.x: a plain install now gets the 3.0 alpha), for the
# end-to-end tests of the studio.
ensure_tauri_driver() {
  tauri-driver --help >/dev/null 2>&1 || cargo install tauri-driver --version '^2' --locked
}

# ---- The .deb: scripts/package-deb.sh bundles the dist build, scripts/check-deb-ci.sh
# the debug build the tests ran; both with what these stage.

# The Tauri CLI (npm @tauri-apps/cli) in DIR/node_modules/.bin/tauri, installed there
# unless it is already: the version of the tauri crate in Cargo.lock (same minor), as
# the Tauri docs ask. Prints its version.
# Usage: ensure_tauri_cli DIR
ensure_tauri_cli() {
  local tools=$1 version
  version=$(awk '/^name = "tauri"$/ { getline; gsub(/[^0-9.]/, ""); print; exit }' Cargo.lock)
  if ! "$tools/node_modules/.bin/tauri" --version 2>/dev/null | grep -q "tauri-cli ${version%.*}\."; then
    npm install --prefix "$tools" --no-save --no-package-lock --no-audit --no-fund "@tauri-apps/cli@~$version"
  fi
  "$tools/node_modules/.bin/tauri" --version
}

# The exact version package-lock.json pins for a top-level npm package.
# Usage: npm_locked_version NAME
npm_locked_version() {
  node -e 'const l = require("./package-lock.json").packages["node_modules/" + process.argv[1]];
           if (!l) { console.error("not in package-lock.json: " + process.argv[1]); process.exit(1); }
           console.log(l.version)' "$1"
}

# The npm demo servers the package ships, server-memory and server-everything with their
# dependencies (not the dev ones), at the versions package-lock.json pins, into
# DIR/node_modules (DIR is emptied first).
# Usage: stage_node_servers DIR
stage_node_servers() {
  local stage=$1 memory everything
  memory="@modelcontextprotocol/server-memory@$(npm_locked_version @modelcontextprotocol/server-memory)"
  everything="@modelcontextprotocol/server-everything@$(npm_locked_version @modelcontextprotocol/server-everything)"
  rm -rf "$stage"
  mkdir -p "$stage"
  npm install --prefix "$stage" --no-save --no-package-lock --omit=dev --ignore-scripts --no-audit --no-fund \
    "$memory" "$everything"
  # .bin holds symlinks the package does not use (the studio runs dist/index.js with node).
  rm -rf "$stage/node_modules/.bin"
}

# The newest .deb in DIR (the bundler writes mcpflow_VERSION_ARCH.deb there); fails when
# there is none.
# Usage: newest_deb DIR
newest_deb() {
  local deb
  deb=$(find "$1" -maxdepth 1 -name '*.deb' -printf '%T@ %p\n' 2>/dev/null | sort -nr | head -n 1 | cut -d' ' -f2-)
  if [ -z "$deb" ]; then
    echo "no .deb in $1" >&2
    return 1
  fi
  echo "$deb"
}

# Whether a package can be installed here for a check and removed again afterwards:
# not while mcpflow is installed (the check would take it away), nor while its paths
# exist without the package (dpkg -i would overwrite them, dpkg -r remove them). When
# not, prints why and fails.
# Usage: deb_check_can_install || …
deb_check_can_install() {
  local path
  if dpkg-query -W -f='${Status}' mcpflow 2>/dev/null | grep -q ' installed$'; then
    echo "mcpflow $(dpkg-query -W -f='${Version}' mcpflow) is installed already; this check installs the package and removes it afterwards, so it would take yours away: remove it first (dpkg -r mcpflow)"
    return 1
  fi
  for path in /usr/bin/mcpflow /usr/bin/mcpflow-studio /usr/lib/mcpflow; do
    if [ -e "$path" ]; then
      echo "$path exists but belongs to no installed mcpflow package: move it away first (dpkg -i would overwrite it, dpkg -r remove it)"
      return 1
    fi
  done
}

# ---- Checks that print one line each, `ok: …` or `FAILED: …` (scripts/check-deb*.sh);
# the script ends with `checks_done`, which prints the counts and fails when one failed.
checks_passed=0
checks_failed=0
ok() {
  echo "ok: $*"
  checks_passed=$((checks_passed + 1))
}
bad() {
  echo "FAILED: $*"
  checks_failed=$((checks_failed + 1))
}
check() { # check DESCRIPTION COMMAND...
  local what=$1
  shift
  if "$@"; then ok "$what"; else bad "$what"; fi
}
checks_done() {
  echo
  echo "$checks_passed passed, $checks_failed failed"
  [ "$checks_failed" = 0 ]
}

# The demo servers a studio seeded into its data folder (the one MCPFLOW_HOME, else
# HOME, names) run the package's programs under LIB (…/usr/lib/mcpflow) and start.
# Usage: check_seeded_servers CLI LIB SCRATCH_FOLDER
check_seeded_servers() {
  local cli=$1 lib=$2 tmp=$3
  "$cli" servers --store --json >"$tmp/seeded.json" || true
  cat "$tmp/seeded.json"
  # One JSON object a line ({"name", "command", …}): as `name<TAB>command` lines.
  local commands
  commands=$(node -e 'for (const line of require("fs").readFileSync(process.argv[1], "utf8").split("\n"))
                        if (line.trim()) { const s = JSON.parse(line); console.log(s.name + "\t" + (s.command ?? "")); }' \
    "$tmp/seeded.json" || true)
  local name command want
  for name in cluster echo faulty memory everything; do
    command=$(awk -F '\t' -v name="$name" '$1 == name { print $2 }' <<<"$commands")
    case $name in
      memory | everything) want="node $lib/node_modules/@modelcontextprotocol/server-$name/dist/index.js" ;;
      *) want="$lib/mcpflow-testkit " ;;
    esac
    if grep -qF -- "$want" <<<"$command"; then
      ok "the seeded $name server runs $command"
    else
      bad "the seeded $name server should run $want…; it runs ${command:-nothing (not seeded)}"
    fi
  done
  check "the seeded cluster, memory and echo servers start (mcpflow servers test)" \
    "$cli" servers test --store --allow-all-servers cluster memory echo
}

# The seeded demo, exported as another machine would get it (`export-blueprint
# --portable`: the servers it uses copied into it), runs with CLI.
# Usage: check_portable_demo CLI SCRATCH_FOLDER
check_portable_demo() {
  local cli=$1 tmp=$2 demo
  if ! "$cli" export-blueprint cmdb-sync-sketch --portable --out "$tmp/demo"; then
    bad "$cli export-blueprint cmdb-sync-sketch --portable (see the error above)"
    return
  fi
  ls "$tmp/demo"
  demo=$(grep -l '"id": *"cmdb-sync-sketch"' "$tmp/demo"/*.json | head -n 1)
  # The export names the memory server's file as ${env:MEMORY_FILE_PATH}: set it.
  if MEMORY_FILE_PATH="$tmp/demo-memory.json" "$cli" run --allow-all-servers --quiet --json "$demo" >"$tmp/demo.json"; then
    grep -A6 '"summary"' "$tmp/demo.json"
    check "$cli run of the portable demo succeeded" grep -q '"status": "succeeded"' "$tmp/demo.json"
    check "the demo filled the packaged server-memory's graph" test -s "$tmp/demo-memory.json"
  else
    local code=$?
    cat "$tmp/demo.json"
    bad "$cli run of the portable demo $demo exited $code (its output is above)"
  fi
}
