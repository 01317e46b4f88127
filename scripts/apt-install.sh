#!/usr/bin/env bash
# Installs the Debian packages named on the command line that are not installed yet; does nothing when all are.
# Used by every build script that needs a system package (clients/*/build.sh, scripts/install-browser.sh).
# Runs apt as root, or through `sudo -n` (never asks for a password), and waits for apt locks other builds hold.
set -euo pipefail

missing=()
for package in "$@"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
((${#missing[@]} == 0)) && exit 0

sudo=()
if [[ "$(id -u)" -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "apt-install: not root and no sudo: cannot install ${missing[*]}" >&2; exit 1; }
  sudo=(sudo -n)
fi
export DEBIAN_FRONTEND=noninteractive
for attempt in 1 2 3 4 5 6; do
  "${sudo[@]}" apt-get -o DPkg::Lock::Timeout=300 update && break
  ((attempt < 6)) || exit 1
  sleep 10
done
"${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 install -y --no-install-recommends "${missing[@]}"
