#!/usr/bin/env bash
# Builds the Java SDK and its example bots: target/rummybot-0.1.0.jar (the SDK, with its sources and javadoc jars)
# and target/rummybot-examples.jar (runnable: `java -jar clients/java/target/rummybot-examples.jar`), running the
# unit tests on the way, and installs the SDK into the local Maven repository (~/.m2) for projects that depend on
# io.github.rummy-referee:rummybot. Safe to
# rerun and to run from any folder. On a fresh machine it installs Java 17 and Maven from apt when they are
# missing; Maven then downloads the dependencies, protoc and the gRPC code generator from Maven Central.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

if ! command -v javac >/dev/null || ! command -v mvn >/dev/null; then
    echo "java client: installing openjdk-17-jdk-headless and maven" >&2
    bash "$here/../../scripts/apt-install.sh" openjdk-17-jdk-headless maven
fi

# Maven 3.8 writes ANSI resets (ESC[0m) even in batch mode and with -Dstyle.color=never: in a pipe or a log they
# are junk around every line, so there they are stripped (a terminal shows them as nothing). pipefail keeps
# Maven's exit code.
if [ -t 1 ] && [ -t 2 ]; then
    mvn -q -B -f "$here/pom.xml" install
else
    mvn -q -B -Dstyle.color=never -f "$here/pom.xml" install 2>&1 | sed -u $'s/\e\\[[0-9;]*m//g'
fi
echo "java client: built $here/target/rummybot-examples.jar" >&2
