#!/usr/bin/env bash
# Installs Debian's headless Chromium and its driver (/usr/bin/chromium, /usr/bin/chromedriver) for the browser
# tests of the replay viewer (tests/web/). Safe to run again: it does nothing when both are there.
set -euo pipefail
exec bash "$(dirname "${BASH_SOURCE[0]}")/apt-install.sh" chromium chromium-driver fonts-dejavu-core
