#!/usr/bin/env bash
# Installs Debian's headless Chromium and its driver (/usr/bin/chromium, /usr/bin/chromedriver) for the browser
# tests of the replay viewer (tests/web/). Safe to run again: it does nothing when both are there.
set -euo pipefail

packages=(chromium chromium-driver fonts-dejavu-core)

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
((${#missing[@]} == 0)) && exit 0

sudo=""
if [[ "$(id -u)" -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "install-browser: not root and no sudo: cannot install ${missing[*]}" >&2; exit 1; }
  sudo="sudo -n"
fi
export DEBIAN_FRONTEND=noninteractive
# Other builds may hold the apt locks for a while: wait for them rather than fail.
for attempt in 1 2 3 4 5 6; do
  $sudo apt-get -o DPkg::Lock::Timeout=300 update && break
  ((attempt < 6)) || exit 1
  sleep 10
done
$sudo apt-get -o DPkg::Lock::Timeout=300 install -y --no-install-recommends "${missing[@]}"
