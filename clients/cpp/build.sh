#!/usr/bin/env bash
# Builds the C++ SDK (library `rummybot`) and the example bot into clients/cpp/build/ (artifact: build/greedy).
# Installs Debian's gRPC C++ packages first when any is missing; safe to run again, from any folder.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
packages=(libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc pkg-config)

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if ((${#missing[@]} > 0)); then
  sudo=""
  [[ "$(id -u)" -eq 0 ]] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  # Other builds may hold the apt locks for a while: wait for them rather than fail.
  for attempt in 1 2 3 4 5 6; do
    $sudo apt-get -o DPkg::Lock::Timeout=300 update && break
    ((attempt < 6)) || exit 1
    sleep 10
  done
  $sudo apt-get -o DPkg::Lock::Timeout=300 install -y --no-install-recommends "${missing[@]}"
fi

cmake -S "$here" -B "$here/build" -DCMAKE_BUILD_TYPE=Release
cmake --build "$here/build" --parallel "${CMAKE_BUILD_PARALLEL_LEVEL:-2}"
ctest --test-dir "$here/build" --output-on-failure
