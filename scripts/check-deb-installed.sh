#!/usr/bin/env bash
# Installs a .deb from scripts/package-deb.sh for real (dpkg -i), checks it as a user
# gets it, and removes it again (dpkg -r, always, also when a check fails or the script
# is interrupted): the CLI and the studio on PATH from /usr/bin; the studio from
# /usr/bin, started under Xvfb with a fresh HOME (its default data folder, no
# MCPFLOW_HOME), seeds the demo servers from /usr/lib/mcpflow and runs the demo from its
# window (tests/e2e/installed.test.mjs, with a screenshot); `mcpflow setup HOST --print`
# prints the entry launching /usr/bin/mcpflow; the demo, exported portable, runs with
# /usr/bin/mcpflow. Needs root (it installs system-wide); refuses to run when mcpflow is
# installed already (it would remove it). Each check prints `ok: …` or `FAILED: …`.
# Usage: sudo bash scripts/check-deb-installed.sh target/dist/bundle/deb/mcpflow_*.deb
# (To check a package without installing it: bash scripts/check-deb.sh DEB.)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

deb=${1:?usage: sudo bash scripts/check-deb-installed.sh DEB}
if [ ! -f "$deb" ]; then
  echo "no such package: $deb (build it with: bash scripts/package-deb.sh)" >&2
  exit 2
fi
deb=$(realpath "$deb")
if [ "$(id -u)" != 0 ]; then
  echo "this check installs the package system-wide with dpkg -i: run it as root (sudo bash $0 $deb)," >&2
  echo "or check the package without installing it: bash scripts/check-deb.sh $deb" >&2
  exit 2
fi
if ! why=$(deb_check_can_install); then
  echo "$why" >&2
  echo "(or check the package without installing it: bash scripts/check-deb.sh $deb)" >&2
  exit 2
fi

step "what the check needs (Xvfb, WebKitWebDriver, tauri-driver, ImageMagick, the npm packages)"
ensure_debs xvfb xauth webkit2gtk-driver imagemagick desktop-file-utils
ensure_tauri_driver
[ -d node_modules/webdriverio ] || npm ci --no-audit --no-fund

tmp=$(mktemp -d)
home="$tmp/home"
installed=no
removed=no
# The studio test's processes (tauri-driver, WebKitWebDriver, the studio, its servers)
# have MCPFLOW_INSTALLED_HOME=$home in their environment.
ours() { grep -lzx "MCPFLOW_INSTALLED_HOME=$home" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3 || true; }
# Leaves the machine as it was: what an interrupted studio test left running ended (by
# pid), the package removed (unless that was checked already), the scratch folder gone.
cleanup() {
  local pid
  for pid in $(ours); do kill -KILL "$pid" 2>/dev/null || true; done
  if [ "$installed" = yes ] && [ "$removed" = no ] && dpkg-query -W mcpflow >/dev/null 2>&1; then
    echo "removing the package (dpkg -r mcpflow)"
    # (A dpkg killed half-way leaves it "half-installed": only a forced purge removes that.)
    dpkg_whole /dev/null -r mcpflow || dpkg_whole /dev/null --purge --force-remove-reinstreq mcpflow ||
      echo "dpkg -r mcpflow failed: remove it by hand (dpkg --purge --force-remove-reinstreq mcpflow)" >&2
  fi
  rm -rf "$tmp"
}
# dpkg with its output into LOG, not stopped half-way by Ctrl-C or SIGTERM (ignored
# signals stay ignored across exec): the script's traps run once it is done. (The
# redirection is inside: a trap runs under the redirections of the command it waited for.)
# Usage: dpkg_whole LOG DPKG_ARGS...
dpkg_whole() {
  local log=$1
  shift
  (trap '' INT TERM && exec dpkg "$@" >"$log" 2>&1)
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

step "install (dpkg -i $deb)"
version=$(dpkg-deb -f "$deb" Version)
is_installed() { dpkg-query -W -f='${Status}' mcpflow 2>/dev/null | grep -q 'install ok installed'; }
installed=yes # from here on the exit trap removes it (dpkg unpacks it even when dependencies are missing)
# (Into a file, not through tee: a tee stopped by Ctrl-C would stop dpkg with SIGPIPE.)
if dpkg_whole "$tmp/dpkg.log" -i "$deb"; then
  cat "$tmp/dpkg.log"
  ok "dpkg -i installed mcpflow $version"
else
  cat "$tmp/dpkg.log"
  # dpkg: "mcpflow depends on nodejs (>= 18); however: Package nodejs is not installed."
  missing=$(grep -o 'depends on [^;]*' "$tmp/dpkg.log" | sed 's/^depends on //' | sort -u | paste -sd, - | sed 's/,/, /g')
  if [ -n "$missing" ]; then
    echo "dpkg -i left mcpflow unconfigured: this machine lacks its dependencies $missing; installing them with apt-get -f install" >&2
    if ! DEBIAN_FRONTEND=noninteractive apt-get -f install -y -qq; then
      bad "apt-get -f install failed (its message is above): install mcpflow's dependencies ($missing) and run this again"
    elif is_installed; then
      ok "dpkg -i installed mcpflow $version once apt-get -f install brought its dependencies ($missing)"
    else
      bad "apt-get -f install removed mcpflow instead of bringing its dependencies ($missing): this machine's apt sources lack them; add a source that has them and run this again"
    fi
  else
    bad "dpkg -i $deb failed: dpkg's message is above"
  fi
fi
if ! is_installed; then
  bad "mcpflow is not installed ($(dpkg-query -W -f='${Status}' mcpflow 2>/dev/null || echo 'unknown to dpkg')), so nothing more can be checked"
  checks_done || true
  exit 1
fi
dpkg -L mcpflow | grep -v '/node_modules/' >"$tmp/files"
echo "installed: $(dpkg -L mcpflow | wc -l) paths, $(dpkg -L mcpflow | grep -c '/node_modules/') under /usr/lib/mcpflow/node_modules; the others:"
cat "$tmp/files"

step "the programs on PATH"
hash -r
on_path() { # on_path NAME EXPECTED
  local found
  found=$(command -v "$1" || echo "nothing")
  if [ "$found" = "$2" ]; then
    ok "command -v $1 is $2"
  else
    bad "command -v $1 is $found, not $2: put /usr/bin before $(dirname "$found") on PATH or remove $found"
  fi
}
on_path mcpflow /usr/bin/mcpflow
on_path mcpflow-studio /usr/bin/mcpflow-studio
if cli_version=$(mcpflow --version); then
  check "mcpflow --version prints a version ($cli_version)" grep -q '^mcpflow [0-9]' <<<"$cli_version"
else
  bad "mcpflow --version exited $? (run it by hand to see why)"
fi
desktop=$(grep '^/usr/share/applications/.*\.desktop$' "$tmp/files" | head -n 1)
check "the desktop entry ${desktop:-(none)} is valid and its Exec is on PATH" \
  sh -c "desktop-file-validate '$desktop' && command -v \"\$(sed -n 's/^Exec=//p' '$desktop' | cut -d' ' -f1)\" >/dev/null"

step "a fresh HOME ($home): no MCPFLOW_HOME, no XDG folders, the default data folder"
export HOME="$home"
unset MCPFLOW_HOME MCPFLOW_DEMO_ROOT XDG_DATA_HOME XDG_CONFIG_HOME XDG_CACHE_HOME XDG_STATE_HOME
mkdir -p "$HOME"
data="$HOME/.local/share/mcpflow"

step "the installed studio runs the demo from its window (tests/e2e/installed.test.mjs, Xvfb)"
mkdir -p test-output/e2e
rm -f test-output/e2e/installed-*.png
if MCPFLOW_STUDIO_BIN=/usr/bin/mcpflow-studio MCPFLOW_INSTALLED_HOME="$HOME" MCPFLOW_INSTALLED_LIB=/usr/lib/mcpflow \
  xvfb-run -a -s "-screen 0 1600x1000x24" node --test --test-concurrency=1 tests/e2e/installed.test.mjs >"$tmp/e2e.log" 2>&1; then
  grep -E '^# (screenshot|approved|steps|data folder)|^# (pass|fail|skipped)' "$tmp/e2e.log" || true
  if grep -q '^# pass 1' "$tmp/e2e.log"; then
    ok "/usr/bin/mcpflow-studio started with a fresh HOME, seeded $data and ran the demo from its window"
  else
    cat "$tmp/e2e.log"
    bad "tests/e2e/installed.test.mjs did not run (skipped?): see its output above"
  fi
else
  cat "$tmp/e2e.log"
  bad "/usr/bin/mcpflow-studio did not run the demo from its window: tests/e2e/installed.test.mjs failed (its output is above; screenshots in test-output/e2e/installed-*.png)"
fi
ls test-output/e2e/installed-*.png 2>/dev/null || true
check "the studio seeded its default data folder $data" test -e "$data/seeded"
check "the studio's demo run wrote its graph into $data" test -s "$data/demo-memory.json"

step "the seeded demo servers point into /usr/lib/mcpflow (mcpflow servers --store, same HOME)"
check_seeded_servers mcpflow /usr/lib/mcpflow "$tmp"
if mcpflow list >"$tmp/list" 2>&1; then
  cat "$tmp/list"
  check "mcpflow list shows the seeded demo (cmdb-sync-sketch)" grep -q 'cmdb-sync-sketch' "$tmp/list"
else
  cat "$tmp/list"
  bad "mcpflow list failed with the same HOME (its error is above)"
fi

step "mcpflow setup HOST --print: the entry launching /usr/bin/mcpflow serve"
# What setup.rs writes: this binary's absolute path, `serve`, `"type": "stdio"` for VS
# Code, and no env (MCPFLOW_HOME is not set).
check_setup() { # check_setup HOST KEY CONFIG_FILE
  local host=$1 key=$2 file=$3
  if ! mcpflow setup "$host" --print >"$tmp/setup-$host.json" 2>"$tmp/setup-$host.err"; then
    cat "$tmp/setup-$host.json" "$tmp/setup-$host.err"
    bad "mcpflow setup $host --print failed (its error is above)"
    return
  fi
  cat "$tmp/setup-$host.json" "$tmp/setup-$host.err"
  local verdict
  verdict=$(node -e '
    const [file, host, key] = process.argv.slice(1);
    let doc;
    try { doc = JSON.parse(require("fs").readFileSync(file, "utf8")); } catch (e) { console.log("not JSON: " + e.message); process.exit(); }
    const entry = doc?.[key]?.mcpflow;
    const want = { ...(host === "vscode" ? { type: "stdio" } : {}), command: "/usr/bin/mcpflow", args: ["serve"] };
    const same = entry && JSON.stringify(entry) === JSON.stringify(want) && Object.keys(doc).length === 1;
    console.log(same ? "ok " + JSON.stringify(doc) : "expected " + JSON.stringify({ [key]: { mcpflow: want } }) + ", got " + JSON.stringify(doc));' \
    "$tmp/setup-$host.json" "$host" "$key")
  if [ "${verdict%% *}" = ok ]; then
    ok "mcpflow setup $host --print prints ${verdict#ok }"
  else
    bad "mcpflow setup $host --print: $verdict"
  fi
  check "mcpflow setup $host --print names $file" grep -qxF "belongs in $file" "$tmp/setup-$host.err"
  check "mcpflow setup $host --print wrote nothing ($file absent)" test ! -e "$file"
}
check_setup claude-desktop mcpServers "$HOME/.config/Claude/claude_desktop_config.json"
check_setup cursor mcpServers "$HOME/.cursor/mcp.json"
check_setup vscode servers "$HOME/.config/Code/User/mcp.json"

step "the demo, exported portable, runs with /usr/bin/mcpflow"
check_portable_demo mcpflow "$tmp"

step "nothing of the package still runs"
# The studio's servers end with it; a leftover would keep files of the package busy.
leftovers() { pgrep -af '/usr/(lib/mcpflow|bin/mcpflow)' || true; }
for _ in $(seq 1 20); do
  [ -z "$(leftovers)" ] && break
  sleep 0.5
done
if [ -z "$(leftovers)" ]; then
  ok "no process runs from /usr/bin/mcpflow* or /usr/lib/mcpflow"
else
  bad "processes of the package still run after the studio closed (a server the studio did not stop?): $(leftovers | tr '\n' ';')"
fi

step "remove (dpkg -r mcpflow)"
if dpkg_whole "$tmp/dpkg-r.log" -r mcpflow; then
  removed=yes
  cat "$tmp/dpkg-r.log"
  ok "dpkg -r mcpflow"
else
  cat "$tmp/dpkg-r.log"
  bad "dpkg -r mcpflow failed: dpkg's message is above (the exit trap tries again)"
fi
hash -r
check "mcpflow is not installed any more" sh -c "! dpkg-query -W -f='\${Status}' mcpflow 2>/dev/null | grep -q ' installed$'"
check "/usr/bin/mcpflow is gone" test ! -e /usr/bin/mcpflow
check "/usr/bin/mcpflow-studio is gone" test ! -e /usr/bin/mcpflow-studio
check "/usr/lib/mcpflow is gone" test ! -e /usr/lib/mcpflow
check "no mcpflow on PATH ($(command -v mcpflow || echo none))" sh -c '! command -v mcpflow'

checks_done
