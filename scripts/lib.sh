# Shared by the scripts: sourced, not run.

step() { printf '\n== %s\n' "$*"; }

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
