#!/usr/bin/env bash
# Checks a .deb from scripts/package-deb.sh without installing it system-wide: its
# metadata and contents, the desktop entry, then the payload extracted into a temporary
# folder — the CLI runs a blueprint on the packaged echo server, the packaged
# server-memory answers `servers test`, and the packaged studio, started once under Xvfb
# with an empty data folder, seeds demo servers that point into the package and start,
# and its demo blueprint (exported with --portable) runs on them.
# Usage: bash scripts/check-deb.sh target/dist/bundle/deb/mcpflow_*.deb
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

deb=${1:?usage: bash scripts/check-deb.sh DEB}
deb=$(realpath "$deb")
ensure_debs desktop-file-utils xvfb xauth

tmp=$(mktemp -d)
studio_pid=""
cleanup() {
  [ -z "$studio_pid" ] || kill -- "-$studio_pid" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

step "metadata (dpkg-deb -I)"
dpkg-deb -I "$deb" | tee "$tmp/info"
field() { dpkg-deb -f "$deb" "$1"; }
check "package name is mcpflow" [ "$(field Package)" = mcpflow ]
check "depends on nodejs" grep -Eq '(^|, )nodejs( |,|$)' <<<"$(field Depends)"
check "depends on the WebKitGTK runtime" grep -q 'libwebkit2gtk-4.1-0' <<<"$(field Depends)"
installed_kib=$(field Installed-Size)

step "contents (dpkg-deb -c)"
# Paths as /usr/…, whether the archive writes them ./usr/… or usr/….
dpkg-deb -c "$deb" | awk '{ p = $NF; sub(/^\.?\//, "", p); print "/" p }' >"$tmp/contents"
grep -v '/node_modules/' "$tmp/contents"
echo "… and $(grep -c '/node_modules/.*[^/]$' "$tmp/contents") files under /usr/lib/mcpflow/node_modules"
for path in /usr/bin/mcpflow-studio /usr/bin/mcpflow /usr/lib/mcpflow/mcpflow-testkit \
  /usr/lib/mcpflow/node_modules/@modelcontextprotocol/server-memory/dist/index.js \
  /usr/lib/mcpflow/node_modules/@modelcontextprotocol/server-everything/dist/index.js \
  /usr/lib/mcpflow/node_modules/@modelcontextprotocol/sdk/package.json; do
  check "contains $path" grep -qx -- "$path" "$tmp/contents"
done
check "contains a desktop entry" grep -q '^/usr/share/applications/.*\.desktop$' "$tmp/contents"
check "contains an icon" grep -q '^/usr/share/icons/hicolor/.*/apps/mcpflow-studio\.png$' "$tmp/contents"

step "extract (dpkg-deb -x) into $tmp/root"
dpkg-deb -x "$deb" "$tmp/root"
root="$tmp/root"
cli="$root/usr/bin/mcpflow"
testkit="$root/usr/lib/mcpflow/mcpflow-testkit"
modules="$root/usr/lib/mcpflow/node_modules/@modelcontextprotocol"
# A fresh home and data folder: nothing from this machine's mcpflow is used.
export HOME="$tmp/home" MCPFLOW_HOME="$tmp/data"
mkdir -p "$HOME" "$MCPFLOW_HOME"

step "the desktop entry"
desktop=$(ls "$root"/usr/share/applications/*.desktop)
cat "$desktop"
check "desktop entry is valid (desktop-file-validate)" desktop-file-validate "$desktop"
check "desktop entry runs mcpflow-studio" grep -qx 'Exec=mcpflow-studio' "$desktop"
for key in 'Name=.' 'Icon=mcpflow-studio$' 'Categories=.'; do
  check "desktop entry has ${key%%=*}" grep -q "^$key" "$desktop"
done

step "the binaries"
file "$cli" "$testkit" "$root/usr/bin/mcpflow-studio" | tee "$tmp/file"
check "binaries are stripped" sh -c "! grep -q 'not stripped' '$tmp/file'"
check "the studio's libraries all resolve" sh -c "! ldd '$root/usr/bin/mcpflow-studio' | grep 'not found'"
version=$("$cli" --version)
echo "$version"
check "mcpflow --version" grep -q '^mcpflow [0-9]' <<<"$version"

step "mcpflow run on the packaged echo server"
cat >"$tmp/echo.blueprint.json" <<EOF
{
  "blueprint": 1,
  "id": "deb-check",
  "name": "The packaged CLI and echo server",
  "servers": { "echo": { "command": "$testkit", "args": ["echo"] } },
  "steps": [
    { "id": "greeting", "kind": "transform", "value": "hello from the package" },
    { "id": "say", "kind": "tool", "server": "echo", "tool": "echo", "args": { "message": "{{ greeting }}" } },
    { "id": "sum", "kind": "tool", "server": "echo", "tool": "add", "args": { "a": 2, "b": 40 } }
  ],
  "output": { "said": "{{ say }}", "sum": "{{ sum }}" }
}
EOF
if "$cli" run --allow-all-servers --json "$tmp/echo.blueprint.json" >"$tmp/run.json"; then
  cat "$tmp/run.json"
  echo
  check "the run echoed the message" grep -q 'hello from the package' "$tmp/run.json"
  check "the run added 2 and 40" grep -q '42' "$tmp/run.json"
else
  cat "$tmp/run.json"
  bad "mcpflow run exited $?"
fi

step "mcpflow servers test on the packaged server-memory"
cat >"$tmp/servers.json" <<EOF
{ "mcpServers": {
  "memory": { "command": "node", "args": ["$modules/server-memory/dist/index.js"],
              "env": { "MEMORY_FILE_PATH": "$tmp/memory.json" } },
  "everything": { "command": "node", "args": ["$modules/server-everything/dist/index.js", "stdio"] }
} }
EOF
check "server-memory and server-everything answer" "$cli" servers test --servers "$tmp/servers.json" --allow-all-servers

step "the packaged studio seeds demo servers from the package (Xvfb, empty data folder)"
setsid xvfb-run -a "$root/usr/bin/mcpflow-studio" >"$tmp/studio.log" 2>&1 &
studio_pid=$!
for _ in $(seq 1 60); do
  [ -e "$MCPFLOW_HOME/seeded" ] && break
  sleep 0.5
done
sleep 1 # the marker is written last; let the store flush
kill -- "-$studio_pid" 2>/dev/null || true
wait "$studio_pid" 2>/dev/null || true
studio_pid=""
check "the studio started and seeded its data folder" [ -e "$MCPFLOW_HOME/seeded" ]
check_seeded_servers "$cli" "$root/usr/lib/mcpflow" "$tmp"

step "the seeded demo (cmdb-sync-sketch) runs on the packaged servers"
check_portable_demo "$cli" "$tmp"
if [ "$checks_failed" != 0 ]; then
  echo "--- studio log"
  cat "$tmp/studio.log"
fi

step "sizes"
echo "package: $(du -h "$deb" | cut -f1) ($(stat -c %s "$deb") bytes); installed: $installed_kib KiB"
du -sh "$root/usr/bin/mcpflow-studio" "$cli" "$testkit" "$root/usr/lib/mcpflow/node_modules"

checks_done
