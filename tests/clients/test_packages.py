"""Each SDK as its ecosystem would publish it: the packed artifact (npm's tarball, the crate `cargo package` made
and verified, the jar and pom installed into the local Maven repository, the Go module's zip served by a module
proxy, the C++ library installed to a prefix with its CMake package) installed into an empty project in a temp
folder, and a bot built there from it playing one seat of a short match on a referee (``play_one_seat``).

Each needs its toolchain and the client built (``make test-clients`` builds them all, ``bash
clients/LANG/build.sh`` one); the dependencies come from the caches those builds filled (npm's cache, the Go
module cache, cargo's registry, ~/.m2), so no test here reaches the network.
"""

from __future__ import annotations

import json
import os
import subprocess
import tarfile
import tomllib
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from tests.clients.harness import CLIENTS, ROOT, SDKS, play_one_seat, require

VERSION = (ROOT / "VERSION").read_text().strip()


def sh(argv: Sequence[str], cwd: Path, env: Mapping[str, str] | None = None, timeout: float = 300) -> str:
    """Run a build step; its stdout, or a failure with the end of both streams."""
    done = subprocess.run(list(argv), cwd=cwd, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, **(env or {})})
    assert done.returncode == 0, f"{' '.join(argv)}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


def played(command: Sequence[str], cwd: Path, *, prints_result: bool = True) -> None:
    """The bot plays one seat of a three-hand match to its end (no forfeit, exit 0) and prints the result (the
    bots that have an ``on match result`` hook)."""
    result, output = play_one_seat(list(command), cwd=cwd)
    assert not prints_result or f"{result.match_id} ended" in output, output[-3000:]


@pytest.fixture(autouse=True)
def _no_stray_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for key in ("RUMMY_REFEREE", "RUMMY_MATCH", "RUMMY_SEAT_TOKEN", "RUMMY_BOT_TOKEN"):
        monkeypatch.delenv(key, raising=False)


# ------------------------------------------------------------------------------------------ Node: npm pack

NODE_BOT = """\
import { describeResult, main, type Action, type Bot, type MatchResult, type SeatView } from "rummybot";

class FirstLegal implements Bot {
  readonly name = "first-legal";

  decide(_view: SeatView, legal: readonly Action[]): Action {
    return legal[0];
  }

  onMatchResult(result: MatchResult): void {
    console.log(describeResult(result));
  }
}

main(new FirstLegal());
"""


@pytest.mark.timeout(300)
def test_the_npm_tarball_installs_into_an_empty_project_with_types_and_its_bots_play(tmp_path: Path) -> None:
    require("node", SDKS["node"][0], toolchain=["node", "npm"])
    node = CLIENTS / "node"
    # `npm pack` runs the prepack script (the build, the .proto copy) first, as `npm publish` does
    packed = json.loads(sh(["npm", "pack", "--json", "--pack-destination", str(tmp_path)], cwd=node))[0]
    assert (packed["name"], packed["version"]) == ("rummybot", VERSION)
    tgz = tmp_path / packed["filename"]
    with tarfile.open(tgz) as tar:
        files = {name.removeprefix("package/") for name in tar.getnames()}
    assert {"package.json", "README.md", "dist/src/index.js", "dist/src/index.d.ts", "dist/examples/greedy.js",
            "dist/protos/rummy/referee/v1/referee.proto", "dist/protos/rummy/search/v1/search.proto"} <= files
    assert not [f for f in files if f.startswith("dist/test") or "node_modules" in f or f.endswith(".test.js")
                or (f.endswith(".ts") and not f.endswith(".d.ts"))], sorted(files)

    app = tmp_path / "app"
    app.mkdir()
    sh(["npm", "init", "-y"], cwd=app)
    # the SDK's dependencies come from npm's cache, which the client's build filled (`npm ci`)
    sh(["npm", "install", "--prefer-offline", "--no-audit", "--no-fund", str(tgz)], cwd=app)
    installed = app / "node_modules" / "rummybot"
    assert json.loads((installed / "package.json").read_text())["version"] == VERSION

    # a TypeScript bot of the empty project, checked against the package's own types (found through its
    # package.json `exports`: strict mode fails on a module without declarations), compiled, then played
    (app / "bot.ts").write_text(NODE_BOT)
    tsc = node / "node_modules" / "typescript" / "bin" / "tsc"
    sh(["node", str(tsc), "--strict", "--target", "ES2022", "--module", "node16", "--moduleResolution", "node16",
        "--typeRoots", str(node / "node_modules" / "@types"), "--types", "node", "bot.ts"], cwd=app)
    played(["node", "bot.js"], cwd=app)
    # and the package's greedy bot, as its `bin` installs it
    played([str(app / "node_modules" / ".bin" / "rummybot-greedy")], cwd=app)


# ------------------------------------------------------------------------------------------ Go: the module's zip

GO_MODULE = "github.com/rummy-referee/rummy/clients/go"


def go_module_zip(proxy: Path, version: str) -> None:
    """What a Go module proxy serves for the tag ``clients/go/vVERSION``: the module's files (as git tracks them:
    no bin/, no .tools/) in a zip under ``MODULE@vVERSION/``, its go.mod and its .info, in the GOPROXY layout."""
    src = CLIENTS / "go"
    tracked = sh(["git", "ls-files", "-z", "."], cwd=src).split("\0")
    at = proxy / GO_MODULE / "@v"
    at.mkdir(parents=True)
    with zipfile.ZipFile(at / f"{version}.zip", "w", zipfile.ZIP_DEFLATED) as z:
        for rel in filter(None, tracked):
            if (src / rel).is_file():
                z.write(src / rel, f"{GO_MODULE}@{version}/{rel}")
    (at / f"{version}.mod").write_bytes((src / "go.mod").read_bytes())
    (at / f"{version}.info").write_text(json.dumps({"Version": version, "Time": "2026-01-01T00:00:00Z"}))
    (at / "list").write_text(f"{version}\n")


@pytest.mark.timeout(300)
def test_the_go_module_fetched_from_a_proxy_builds_a_bot_in_an_empty_module_that_plays(tmp_path: Path) -> None:
    require("go", SDKS["go"][0], toolchain=["go"])
    version = f"v{VERSION}"
    proxy = tmp_path / "proxy"
    go_module_zip(proxy, version)
    cache = sh(["go", "env", "GOMODCACHE"], cwd=tmp_path).strip()
    # the module from the proxy folder; its dependencies from the module cache the SDK's build filled (served as
    # a proxy too); a module cache of its own, so this version of the SDK is never mistaken for a later one
    env = {"GOPROXY": f"file://{proxy},file://{cache}/cache/download", "GOSUMDB": "off", "GOTOOLCHAIN": "local",
           "GOMODCACHE": str(tmp_path / "modcache"), "GOFLAGS": "-modcacherw -buildvcs=false"}
    app = tmp_path / "mybot"
    app.mkdir()
    sh(["go", "mod", "init", "example.com/mybot"], cwd=app, env=env)
    sh(["go", "get", f"{GO_MODULE}@{version}"], cwd=app, env=env)
    (app / "main.go").write_text((CLIENTS / "go" / "cmd" / "firstlegal" / "main.go").read_text())
    assert f"{GO_MODULE} {version}" in (app / "go.mod").read_text()
    sh(["go", "build", "-mod=mod", "-o", "mybot", "."], cwd=app, env=env)
    played([str(app / "mybot")], cwd=app)
    # the module's greedy example, installed by its path at the version, as its README says
    sh(["go", "install", f"{GO_MODULE}/cmd/greedy@{version}"], cwd=tmp_path, env={**env, "GOBIN": str(tmp_path)})
    played([str(tmp_path / "greedy")], cwd=tmp_path)


# ------------------------------------------------------------------------------------------ Rust: cargo package


@pytest.mark.timeout(600)
def test_the_packaged_crate_builds_outside_the_repository_and_its_bots_play(tmp_path: Path) -> None:
    require("rust", SDKS["rust"][0], toolchain=["cargo"])
    rust = CLIENTS / "rust"
    # offline, into the SDK's own target folder: the crates built for the SDK (release) are reused. package.sh's
    # own verification (a debug build of the unpacked crate, minutes the first time) is left to a release: the
    # release build of the unpacked crate below, away from the repository, is the same check
    env = {"CARGO_NET_OFFLINE": "true", "CARGO_TARGET_DIR": str(rust / "target")}
    sh(["bash", str(rust / "package.sh"), "--allow-dirty", "--no-verify"], cwd=tmp_path, env=env)
    crate = rust / "target" / "package" / f"rummybot-{VERSION}.crate"
    with tarfile.open(crate) as tar:
        files = {name.split("/", 1)[1] for name in tar.getnames() if "/" in name}
        tar.extractall(tmp_path / "crates", filter="data")
    assert {"Cargo.toml", "Cargo.lock", "README.md", "build.rs", "proto/rummy/referee/v1/referee.proto",
            "src/lib.rs", "src/bin/greedy/main.rs", "examples/first_legal.rs"} <= files
    assert not [f for f in files if f.startswith("target/")], sorted(files)
    unpacked = tmp_path / "crates" / f"rummybot-{VERSION}"
    manifest = tomllib.loads((unpacked / "Cargo.toml").read_text())["package"]
    assert {k: manifest.get(k) for k in ("version", "license", "repository", "readme")} == {
        "version": VERSION, "license": "MIT", "repository": "https://github.com/rummy-referee/rummy",
        "readme": "README.md"}
    assert manifest["description"]

    # an empty crate depending on the unpacked one (no protos/ beside it: its build.rs reads its own proto/)
    app = tmp_path / "mybot"
    sh(["cargo", "new", "--quiet", "--bin", "mybot"], cwd=tmp_path, env=env)
    with (app / "Cargo.toml").open("a") as f:
        f.write(f'rummybot = {{ path = "{unpacked}" }}\n')
    (app / "Cargo.lock").write_bytes((unpacked / "Cargo.lock").read_bytes())  # the versions the SDK was built with
    (app / "src" / "main.rs").write_text((unpacked / "examples" / "first_legal.rs").read_text())
    sh(["cargo", "build", "--release", "--quiet"], cwd=app, env=env, timeout=540)
    played([str(rust / "target" / "release" / "mybot")], cwd=app)
    # the crate's greedy bot, installed from the unpacked crate as `cargo install rummybot` would
    sh(["cargo", "install", "--quiet", "--locked", "--path", str(unpacked), "--bin", "greedy", "--root",
        str(tmp_path / "inst")], cwd=tmp_path, env=env, timeout=540)
    played([str(tmp_path / "inst" / "bin" / "greedy")], cwd=tmp_path)


# ------------------------------------------------------------------------------------------ C++: cmake --install

CPP_PROJECT = """\
cmake_minimum_required(VERSION 3.18)
project(mybot LANGUAGES CXX)
set(CMAKE_CXX_STANDARD 17)
find_package(rummybot {version} REQUIRED)
add_executable(mybot "${{rummybot_EXAMPLES_DIR}}/greedy.cpp" "${{rummybot_EXAMPLES_DIR}}/indian_policy.cpp")
target_include_directories(mybot PRIVATE "${{rummybot_EXAMPLES_DIR}}")
target_link_libraries(mybot PRIVATE rummybot::rummybot)
"""


@pytest.mark.timeout(400)
def test_the_installed_cpp_package_is_found_by_an_empty_cmake_project_whose_bot_plays(tmp_path: Path) -> None:
    require("cpp", SDKS["cpp"][0], toolchain=["cmake", "g++"])
    prefix = tmp_path / "prefix"
    sh(["cmake", "--install", str(CLIENTS / "cpp" / "build"), "--prefix", str(prefix)], cwd=tmp_path)
    for installed in ("lib/librummybot.a", "include/rummybot/sdk.h", "include/rummy/referee/v1/referee.pb.h",
                      "lib/cmake/rummybot/rummybotConfig.cmake", "lib/cmake/rummybot/rummybotConfigVersion.cmake",
                      "share/rummybot/examples/greedy.cpp", "share/rummybot/proto/rummy/referee/v1/referee.proto"):
        assert (prefix / installed).is_file(), installed
    # an empty project: find_package through CMAKE_PREFIX_PATH, the example bot's sources from the package
    app = tmp_path / "mybot"
    app.mkdir()
    (app / "CMakeLists.txt").write_text(CPP_PROJECT.format(version=VERSION))
    build = app / "build"
    sh(["cmake", "-S", str(app), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release", f"-DCMAKE_PREFIX_PATH={prefix}"],
       cwd=app)
    sh(["cmake", "--build", str(build), "--parallel", "2"], cwd=app, timeout=360)
    played([str(build / "mybot")], cwd=app)
    # a version the package does not promise is refused (0.x: another minor version may break the API)
    major, minor, _ = VERSION.split(".")
    (app / "CMakeLists.txt").write_text(CPP_PROJECT.format(version=f"{major}.{int(minor) + 1}"))
    done = subprocess.run(["cmake", "-S", str(app), "-B", str(tmp_path / "refused"), f"-DCMAKE_PREFIX_PATH={prefix}"],
                          cwd=app, capture_output=True, text=True, timeout=120)
    assert done.returncode != 0 and "rummybot" in done.stderr, done.stderr[-2000:]


# ------------------------------------------------------------------------------------------ Java: mvn install

JAVA_GROUP, JAVA_ARTIFACT = "io.github.rummy-referee", "rummybot"

# An empty Maven project depending on the installed SDK; its plugins pinned to the versions the SDK's build
# uses, so an offline build (-o) finds them in ~/.m2. The shade plugin makes one runnable jar.
JAVA_POM = """\
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>com.example</groupId>
  <artifactId>mybot</artifactId>
  <version>1.0</version>
  <properties>
    <maven.compiler.release>17</maven.compiler.release>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
  </properties>
  <dependencies>
    <dependency>
      <groupId>{group}</groupId>
      <artifactId>{artifact}</artifactId>
      <version>{version}</version>
    </dependency>
  </dependencies>
  <build>
    <plugins>
      <plugin><artifactId>maven-resources-plugin</artifactId><version>3.3.1</version></plugin>
      <plugin><artifactId>maven-compiler-plugin</artifactId><version>3.13.0</version></plugin>
      <plugin><artifactId>maven-surefire-plugin</artifactId><version>3.5.2</version></plugin>
      <plugin><artifactId>maven-jar-plugin</artifactId><version>3.4.2</version></plugin>
      <plugin>
        <artifactId>maven-shade-plugin</artifactId>
        <version>3.6.0</version>
        <executions>
          <execution>
            <phase>package</phase>
            <goals><goal>shade</goal></goals>
            <configuration>
              <outputFile>${{project.build.directory}}/mybot.jar</outputFile>
              <createDependencyReducedPom>false</createDependencyReducedPom>
              <transformers>
                <transformer implementation="org.apache.maven.plugins.shade.resource.ServicesResourceTransformer"/>
                <transformer implementation="org.apache.maven.plugins.shade.resource.ManifestResourceTransformer">
                  <mainClass>{main}</mainClass>
                </transformer>
              </transformers>
            </configuration>
          </execution>
        </executions>
      </plugin>
    </plugins>
  </build>
</project>
"""


def _mvn(args: Sequence[str], cwd: Path, timeout: float = 300) -> str:
    return sh(["mvn", "-o", "-q", "-B", "-Dstyle.color=never", *args], cwd=cwd, timeout=timeout)


@pytest.mark.timeout(400)
def test_the_java_artifact_installed_in_the_local_repository_builds_an_empty_project_whose_bots_play(
        tmp_path: Path) -> None:
    require("java", SDKS["java"][0], toolchain=["java", "mvn"])
    java = CLIENTS / "java"
    # `mvn install` of this tree (its unit tests ran in the build) into the default local repository, ~/.m2:
    # offline, the plugins and dependencies are there since the build
    _mvn(["-DskipTests", "-f", str(java / "pom.xml"), "install"], cwd=tmp_path)
    home = Path.home() / ".m2" / "repository" / JAVA_GROUP.replace(".", "/") / JAVA_ARTIFACT / VERSION
    stem = f"{JAVA_ARTIFACT}-{VERSION}"
    for suffix in (".pom", ".jar", "-sources.jar", "-javadoc.jar"):
        assert (home / f"{stem}{suffix}").is_file(), suffix
    with zipfile.ZipFile(home / f"{stem}-sources.jar") as z:
        sources = set(z.namelist())
    assert {"io/rummyreferee/bot/RummyBot.java", "io/rummyreferee/referee/v1/SeatView.java"} <= sources

    # an empty project: its own bot (the README's FirstLegal), then the SDK's greedy example as its main class
    for main in ("FirstLegal", "io.rummyreferee.bot.examples.GreedyBot"):
        app = tmp_path / main.rsplit(".", 1)[-1]
        (app / "src" / "main" / "java").mkdir(parents=True)
        (app / "pom.xml").write_text(JAVA_POM.format(group=JAVA_GROUP, artifact=JAVA_ARTIFACT, version=VERSION,
                                                     main=main))
        if main == "FirstLegal":
            (app / "src" / "main" / "java" / "FirstLegal.java").write_text(
                (java / "examples" / "FirstLegal.java").read_text())
        _mvn(["package"], cwd=app)
        played(["java", "-jar", str(app / "target" / "mybot.jar")], cwd=app, prints_result=main != "FirstLegal")
