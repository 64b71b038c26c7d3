#!/usr/bin/env bash
# Provides the system programs flipcheck's pictures and browser test run, and links each into the
# virtualenv's bin/ so flipcheck finds it even where PATH does not (flipcheck looks on PATH, then
# beside its own Python). Called by `make install` (graphviz) and `make test` (also chromium).
#
#   scripts/provide-tools.sh VENV_BIN TOOL...      TOOL: dot | chromium
#
# Where a program is missing and cannot be installed (not root, no passwordless sudo, no apt-get),
# it prints one line saying exactly what to install and goes on: the core works without it, and
# the first command or test that draws a picture fails with that same line.
set -u
venv_bin=$1
shift

# tool -> Debian package that ships it
package_of() {
  case $1 in
    dot) echo graphviz ;;
    chromium) echo chromium ;;
  esac
}

# Where an installed package put the program, whether or not it is on PATH.
locate() {
  local tool=$1 found
  found=$(command -v "$tool" 2>/dev/null) && { echo "$found"; return 0; }
  for candidate in /usr/bin/$tool /usr/local/bin/$tool /bin/$tool; do
    [ -x "$candidate" ] && { echo "$candidate"; return 0; }
  done
  return 1
}

apt_install() {
  local runner=()
  if [ "$(id -u)" -ne 0 ]; then
    sudo -n true 2>/dev/null || return 1
    runner=(sudo -n)
  fi
  command -v apt-get >/dev/null 2>&1 || return 1
  export DEBIAN_FRONTEND=noninteractive
  # A fresh machine has no package lists yet; an update costs seconds, an install without it fails.
  "${runner[@]}" apt-get update -qq >/dev/null 2>&1 || true
  echo "installing with apt-get: $*"
  "${runner[@]}" apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

missing=()
for tool in "$@"; do
  locate "$tool" >/dev/null || missing+=("$(package_of "$tool")")
done
if [ ${#missing[@]} -gt 0 ] && ! apt_install "${missing[@]}"; then
  echo "flipcheck: cannot install ${missing[*]} here (needs root or passwordless sudo with apt-get):" \
       "install it with your system's package manager (Debian/Ubuntu: apt-get install ${missing[*]})" >&2
fi

for tool in "$@"; do
  if path=$(locate "$tool"); then
    [ "$path" -ef "$venv_bin/$tool" ] || ln -sf "$path" "$venv_bin/$tool"
  fi
done
exit 0
