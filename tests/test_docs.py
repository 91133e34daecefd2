"""README.md and docs/*.md stay short and readable: the README at most 150 lines, no line anywhere over 160
characters, every relative link pointing at a file or folder of the repository, and the README's set-up and
test commands the very lines CI runs (.ci/run)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").glob("*.md"))]
MAX_README_LINES = 150
MAX_LINE = 160
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")     # [text](target) or [text](target "title")


def relative_links(text: str) -> list[str]:
    """The link targets of a markdown text that point inside the repository (no scheme, no bare #anchor)."""
    targets = (m.group(1) for m in LINK.finditer(text))
    return [t.split("#", 1)[0] for t in targets if not re.match(r"[a-z][a-z0-9+.-]*:|#", t)]


def test_readme_is_at_most_150_lines():
    lines = README.read_text().splitlines()
    assert len(lines) <= MAX_README_LINES, f"README.md has {len(lines)} lines; move detail into docs/"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_line_over_160_characters(page):
    long = [f"{page.name}:{i}: {len(line)} characters" for i, line in enumerate(page.read_text().splitlines(), 1)
            if len(line) > MAX_LINE]
    assert not long, "\n".join(long)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_exists(page):
    missing = [t for t in relative_links(page.read_text()) if not (page.parent / t).exists()]
    assert not missing, f"{page.name} links to files that do not exist: {missing}"


def test_readme_links_reach_every_docs_page():
    linked = {(README.parent / t).resolve() for t in relative_links(README.read_text())}
    unlinked = [p.name for p in PAGES[1:] if p.resolve() not in linked]
    assert not unlinked, f"README.md does not link {unlinked}"


def test_readme_has_the_commands_ci_runs():
    ci = [ln.strip() for ln in (ROOT / ".ci" / "run").read_text().splitlines() if ln.strip() and ln[0] != "#"]
    install = next(ln for ln in ci if "pip install" in ln)
    readme = [ln.split("#", 1)[0].strip() for ln in README.read_text().splitlines()]
    assert install in readme and "pytest" in ci and "pytest" in readme, (install, "pytest")


def test_the_link_reader_finds_relative_links_only():
    text = "[a](docs/x.md) [b](https://example.com) [c](#top) [d](golden/ops/#part \"t\") [e](mailto:x@y)"
    assert relative_links(text) == ["docs/x.md", "golden/ops/"]
