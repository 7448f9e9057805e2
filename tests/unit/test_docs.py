"""The documentation is found by question (issue 43): README.md stays short and leads to every
page under docs/ by its links (directly or through the pages it links), every page is in the
site's navigation (mkdocs.yml), and the site's home page is the README itself. `mkdocs build --strict` (scripts/test) checks the links between pages; these
tests check what it cannot: the README, which is not part of the site.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).parents[2]
DOCS = ROOT / "docs"
README = (ROOT / "README.md").read_text(encoding="utf-8")
README_MAX_LINES = 150


def links(markdown: str) -> list[str]:
    """The targets of a page's Markdown links, without their #anchor."""
    return [target.split("#")[0] for target in re.findall(r"\]\(([^)\s]+)\)", markdown)]


def nav_pages() -> set[str]:
    """Every page mkdocs.yml's nav lists, relative to docs/."""
    config = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=yaml.BaseLoader)
    pages: set[str] = set()

    def walk(node: object) -> None:
        if isinstance(node, str):
            pages.add(node)
        elif isinstance(node, list):
            for item in node:
                walk(item)
        elif isinstance(node, dict):
            for value in node.values():
                walk(value)

    walk(config["nav"])
    return pages


class TestTheReadme:
    def test_it_stays_short(self) -> None:
        assert len(README.splitlines()) <= README_MAX_LINES

    def test_every_local_link_leads_to_a_file(self) -> None:
        local = [t for t in links(README) if t and not re.match(r"[a-z]+:", t)]
        assert local, "the README links no page"
        assert [t for t in local if not (ROOT / t).exists()] == []

    def test_it_links_the_site_navigation_and_every_editor_and_agent_page(self) -> None:
        linked = {t.removeprefix("docs/") for t in links(README) if t.startswith("docs/")}
        by_folder = {p.relative_to(DOCS).as_posix() for p in DOCS.glob("*/*.md")}
        wanted = {p for p in by_folder if p.startswith(("editors/", "agents/"))}
        assert wanted - linked == set()

    def test_the_site_home_page_is_the_readme(self) -> None:
        # docs/index.md is README.md with its links made relative to docs/: one text, two places.
        home = (DOCS / "index.md").read_text(encoding="utf-8")
        assert home == README.replace("](docs/", "](")


def reachable_from_the_readme() -> set[str]:
    """The pages under docs/ that a reader reaches from the README by following links."""
    seen: set[str] = set()
    todo = [(ROOT / t).resolve() for t in links(README) if t.startswith("docs/")]
    while todo:
        page = todo.pop()
        if not page.is_file() or page.suffix != ".md" or page.as_posix() in seen:
            continue
        seen.add(page.as_posix())
        for target in links(page.read_text(encoding="utf-8")):
            if target and not re.match(r"[a-z]+:", target):
                todo.append((page.parent / target).resolve())
    return {Path(p).relative_to(DOCS.resolve()).as_posix() for p in seen}


class TestEveryPageIsReachable:
    def test_every_page_under_docs_is_reached_from_the_readme_by_its_links(self) -> None:
        pages = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}
        # index.md is the README itself, as the site's home page.
        assert pages - reachable_from_the_readme() - {"index.md"} == set()

    def test_every_page_under_docs_is_in_the_site_navigation(self) -> None:
        pages = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}
        assert pages - nav_pages() == set()

    def test_the_navigation_names_no_missing_page(self) -> None:
        assert {p for p in nav_pages() if not (DOCS / p).exists()} == set()
