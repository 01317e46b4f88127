"""mkdocs hooks for the docs site: each SDK's README shown on its page, and links that leave docs/ checked.

The guides are plain Markdown that reads the same on GitHub, in an editor and on the site. Two things need help
on the site:

- An SDK keeps its guide in ``clients/LANG/README.md`` (it ships with the package, and tests run its shell blocks
  as written). Its page in ``docs/bots/`` says so and carries ``<!-- include clients/LANG/README.md -->``: on
  GitHub an invisible comment under a link to the README, on the site the README itself, its headings one level
  down and its relative links resolved from its own folder.
- A link from the docs to a file outside ``docs/`` (a config, a source file, an SDK's README) is written relative,
  so it works on GitHub and in an editor; mkdocs cannot serve it. Here each such link must name a file or folder
  that exists (else a warning, which fails ``mkdocs build --strict``) and is rewritten to the file on the
  repository host (``repo_url``). Links inside ``docs/`` are left to mkdocs's own validation.
"""

from __future__ import annotations

import logging
import posixpath
import re
from pathlib import Path
from typing import Any

log = logging.getLogger("mkdocs.hooks.repo_links")

INCLUDE = re.compile(r"^<!-- include (\S+) -->$", re.M)
FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.M | re.S)
LINK = re.compile(r"(!?\[(?:[^\[\]]|\[[^\]]*\])*\])\(([^()\s]+)\)")
HEADING = re.compile(r"^(#{1,5}) ", re.M)
EXTERNAL = re.compile(r"^[a-z][a-z0-9+.-]*:|^//|^#|^/", re.I)


def _outside_fences(text: str, edit: Any) -> str:
    """``edit`` applied to the text between fenced code blocks, the blocks kept as written."""
    out, at = [], 0
    for fence in FENCE.finditer(text):
        out.append(edit(text[at:fence.start()]))
        out.append(fence.group(0))
        at = fence.end()
    out.append(edit(text[at:]))
    return "".join(out)


def _rewrite_links(text: str, source_dir: str, page_dir: str, root: Path, docs: str, repo: str, page: str) -> str:
    """Relative links in ``text`` (written from ``source_dir``, repo-relative): into docs/ made relative to the
    page's folder for mkdocs to check; out of docs/ checked against the tree and sent to the repository host."""

    def one(match: re.Match[str]) -> str:
        label, target = match.group(1), match.group(2)
        if EXTERNAL.match(target):
            return match.group(0)
        path, _, anchor = target.partition("#")
        resolved = posixpath.normpath(posixpath.join(source_dir, path))
        if resolved == docs or resolved.startswith(docs + "/"):
            if source_dir == page_dir:
                return match.group(0)
            relative = posixpath.relpath(resolved, page_dir) + (f"#{anchor}" if anchor else "")
            return f"{label}({relative})"
        if resolved.startswith("../") or resolved == "..":
            log.warning("%s: link to '%s' leaves the repository", page, target)
            return match.group(0)
        where = root / resolved
        if not where.exists():
            log.warning("%s: link to '%s': %s is not in the repository", page, target, resolved)
            return match.group(0)
        if not repo:
            log.warning("%s: link to '%s' leaves docs/, and mkdocs.yml names no repo_url to send it to", page, target)
            return match.group(0)
        kind = "tree" if where.is_dir() else "blob"
        return f"{label}({repo}/{kind}/main/{resolved}" + (f"#{anchor}" if anchor else "") + ")"

    return _outside_fences(text, lambda part: LINK.sub(one, part))


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Expand the includes, then check and rewrite the links that leave docs/."""
    root = Path(config["config_file_path"]).resolve().parent
    docs = posixpath.relpath(Path(config["docs_dir"]).resolve().as_posix(), root.as_posix())
    repo = str(config.get("repo_url") or "").rstrip("/")
    page_dir = posixpath.dirname(posixpath.join(docs, page.file.src_uri))
    name = page.file.src_uri

    def include(match: re.Match[str]) -> str:
        path = match.group(1)
        source = root / path
        if not source.is_file():
            log.warning("%s: include of '%s': no such file", name, path)
            return match.group(0)
        text = source.read_text(encoding="utf-8")
        text = _outside_fences(text, lambda part: HEADING.sub(lambda h: "#" + h.group(1) + " ", part))
        return _rewrite_links(text, posixpath.dirname(path), page_dir, root, docs, repo, f"{name} ({path})")

    markdown = _rewrite_links(markdown, page_dir, page_dir, root, docs, repo, name)
    return INCLUDE.sub(include, markdown)
