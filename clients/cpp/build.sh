#!/usr/bin/env bash
# Builds the C++ SDK (library `rummybot`) and the example bot into clients/cpp/build/ (artifact: build/greedy).
# Installs Debian's gRPC C++ packages first when any is missing; safe to run again, from any folder.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
packages=(libgrpc++-dev libprotobuf-dev protobuf-compiler protobuf-compiler-grpc pkg-config)

bash "$here/../../scripts/apt-install.sh" "${packages[@]}"

cmake -S "$here" -B "$here/build" -DCMAKE_BUILD_TYPE=Release
cmake --build "$here/build" --parallel "${CMAKE_BUILD_PARALLEL_LEVEL:-2}"
ctest --test-dir "$here/build" --output-on-failure
