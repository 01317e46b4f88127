"""The docs build as a website in strict mode: a broken link, a missing anchor, a link out of docs/ to a file that is
not there or an SDK README that cannot be included fails the build; and the README's links into docs/ hold."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
HOOKS = ROOT / "scripts" / "mkdocs_hooks.py"
REPO = "https://github.com/rummy-referee/rummy"


def build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)],
                          capture_output=True, text=True, timeout=300)


def test_the_docs_build_in_strict_mode_with_every_sdk_readme_on_its_page(tmp_path: Path) -> None:
    run = build(ROOT / "mkdocs.yml", tmp_path / "site")
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    site = tmp_path / "site"
    for page in ("bots", "bots/python", "hosting", "ladder", "protocol", "operations", "variants", "research",
                 "rules/500-rum", "VIEWS", "REASON-CODES", "THREAT-MODEL"):
        assert (site / page / "index.html").is_file(), page
    for lang, title in (("go", "Your first bot in Go"), ("rust", "Your first bot"), ("node", "Your first bot"),
                        ("java", "Your first bot"), ("cpp", "Your first bot"), ("stdio", "worked example")):
        html = (site / "bots" / lang / "index.html").read_text(encoding="utf-8")
        assert title in html, lang
        assert "<!-- include" not in html, lang
    stdio = (site / "bots" / "stdio" / "index.html").read_text(encoding="utf-8")
    assert f'href="{REPO}/blob/main/clients/stdio/schema.json"' in stdio


def _site(tmp_path: Path, page: str, extra: dict[str, str] | None = None) -> Path:
    """A one-page site using the project's hooks, its index.md ``page``, beside files named in ``extra``."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text(page)
    (tmp_path / "docs" / "other.md").write_text("# Other\n\n## A heading\n")
    for name, text in (extra or {}).items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    config = tmp_path / "mkdocs.yml"
    config.write_text(f"site_name: t\nrepo_url: {REPO}\nstrict: true\nhooks:\n  - {HOOKS}\n"
                      "validation:\n  anchors: warn\nnav:\n  - index.md\n  - other.md\n")
    return config


@pytest.mark.parametrize("page, says", [
    ("# Home\n\n[gone](missing.md)\n", "missing.md"),
    ("# Home\n\n[no such heading](other.md#not-there)\n", "not-there"),
    ("# Home\n\n[a config](../examples/gone.toml)\n", "examples/gone.toml is not in the repository"),
    ("# Home\n\n<!-- include clients/x/README.md -->\n", "no such file"),
], ids=["missing page", "missing anchor", "missing file outside docs", "missing include"])
def test_a_broken_link_or_include_fails_the_build(tmp_path: Path, page: str, says: str) -> None:
    run = build(_site(tmp_path, page), tmp_path / "site")
    assert run.returncode != 0
    assert says in run.stdout + run.stderr, run.stdout + run.stderr


def test_a_link_out_of_docs_goes_to_the_repository_and_an_included_readme_reads_from_its_folder(tmp_path: Path) -> None:
    page = "# Home\n\n[the config](../examples/a.toml)\n\n<!-- include clients/x/README.md -->\n"
    readme = "# x\n\n## Start\n\n[its source](src/main.x), [the rules](../../docs/other.md#a-heading)\n\n```sh\n# kept\n```\n"
    config = _site(tmp_path, page, {"examples/a.toml": "", "clients/x/README.md": readme, "clients/x/src/main.x": ""})
    run = build(config, tmp_path / "site")
    assert run.returncode == 0, run.stdout + run.stderr
    html = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert f'href="{REPO}/blob/main/examples/a.toml"' in html
    assert f'href="{REPO}/blob/main/clients/x/src/main.x"' in html
    assert 'href="other/#a-heading"' in html
    assert '<h3 id="start">' in html and "# kept" in html


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_every_link_of_the_readme_names_a_file_and_heading_that_are_there() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^()\s]+)\)", readme)
    local = [link for link in links if not re.match(r"[a-z]+:", link)]
    assert len(local) >= 10, local
    for link in local:
        path, _, anchor = link.partition("#")
        target = ROOT / path
        assert target.exists(), link
        if anchor:
            text = target.read_text(encoding="utf-8")
            anchors = {_slug(h) for h in re.findall(r"^#+ (.*)$", text, re.M)} | set(re.findall(r'id="([^"]+)"', text))
            assert anchor in anchors, link


# Every shell block a guide shows, by (file, the heading it sits under), and the test that runs it as written. A
# new block fails test_every_shell_block_of_the_guides_is_run_by_a_test until a test runs it (or it is listed in
# NOT_RUN with the reason). The SDK READMEs shown in docs/bots/ are run by tests/clients/ (their own files).
RUN_BY = {
    ("docs/hosting.md", "Run a tournament"): "tests/tournaments/test_readme_commands.py",
    ("docs/bots/python.md", "Writing a bot in Python"): "tests/test_sdk.py",
    ("docs/ladder.md", "Run a ladder"): "tests/tournaments/test_ladder_readme.py",
}
NOT_RUN = {
    ("README.md", "Quick start (a fresh machine with Python 3.11 and make)"): "`make demo` and `make test`: the suite itself",
    ("docs/operations.md", "The referee's command line"): "a reference of `referee serve` forms on port 50051; "
    "each flag has its own test (tests/test_tls.py, test_restart.py, test_cli.py, ...)",
    ("docs/hosting.md", "See it in the browser"): "the viewer on fixed ports; tests/web/ drives the same pages",
    ("docs/ladder.md", "A ladder on PostgreSQL"): "a database server at db.example.org; "
    "tests/tournaments/test_ladder_e2e.py runs the same commands' flags on a throwaway server",
    ("docs/research.md", "Train an agent"): "12 minutes of training; tests/envs/test_train.py runs the same "
    "module with a tiny budget",
    ("docs/METRICS.md", "Metrics"): "servers on fixed ports; tests/test_metrics.py runs the same flags on free ports",
}


def shell_blocks() -> set[tuple[str, str]]:
    """(file, heading) of every ``sh``/``bash``/``console`` block in README.md and docs/."""
    found = set()
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        heading = ""
        text = path.read_text(encoding="utf-8")
        for line in re.finditer(r"^(#+ .*|```(?:sh|bash|shell|console)\s*)$", text, re.M):
            if line.group(1).startswith("#"):
                heading = line.group(1).lstrip("#").strip()
            else:
                found.add((path.relative_to(ROOT).as_posix(), heading))
    return found


def test_every_shell_block_of_the_guides_is_run_by_a_test() -> None:
    blocks = shell_blocks()
    assert blocks == set(RUN_BY) | set(NOT_RUN), blocks ^ (set(RUN_BY) | set(NOT_RUN))
    for (doc, _), test in RUN_BY.items():
        assert doc in (ROOT / test).read_text(encoding="utf-8"), (doc, test)
