"""The comparison report's ``report.html`` in a real headless Chromium.

A tiny comparison writes ``report.md`` and ``report.html``; Chromium (Debian's, driven by
Playwright) opens the HTML page from disk with the network cut off, a full-page screenshot is
taken into ``tmp_path``, every section heading of ``report.md`` is on the page, every plot is
embedded (a ``data:`` URI, decoded to its natural size), and the page logs no console error.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from helpers import TINY_SEVENTH
from psygym_experiments.harness.compare_run import run_compare
from psygym_experiments.report_html import render_html

CHROMIUM = Path("/usr/bin/chromium")
LAUNCH_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("compare")
    tiny = tmp / "tiny.toml"
    tiny.write_text(TINY_SEVENTH)
    return run_compare(["7th"], scenario=str(tiny), quick=True, episodes=4, seed=0,
                       runs_dir=tmp, workers=1, agents=["double-wc", "all-in", "optimal"],
                       solve_seconds=120, show_progress=False)  # fmt: skip


def test_html_is_self_contained(run_dir: Path, tmp_path: Path):
    page = (run_dir / "report.html").read_text()
    pngs = sorted(p.name for p in run_dir.glob("*.png"))
    assert pngs, "the report has plots"
    assert page.count('src="data:image/png;base64,') == len(pngs)
    assert not re.search(r'(src|href)="(https?:)?//', page), "nothing from the network"
    assert "<script" not in page
    # A plot that is not there stays a plain link (no crash, no broken data URI).
    assert 'src="missing.png"' in render_html("![x](missing.png)", tmp_path)


def test_html_report_renders_in_headless_chromium(run_dir: Path, tmp_path: Path):
    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium (/usr/bin/chromium) is not installed")
    sync_api = pytest.importorskip("playwright.sync_api")
    md = (run_dir / "report.md").read_text()
    headings = [h.strip() for h in re.findall(r"^#{1,4} (.+)$", md, flags=re.M)]
    assert "Answers" in headings
    errors: list[str] = []
    shot = tmp_path / "report.png"
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=LAUNCH_ARGS,
                                    headless=True)  # fmt: skip
        try:
            context = browser.new_context(offline=True, viewport={"width": 1200, "height": 900})
            page = context.new_page()
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto((run_dir / "report.html").as_uri())
            page.wait_for_load_state("load")
            page.screenshot(path=str(shot), full_page=True)
            shown = page.eval_on_selector_all("h1, h2, h3, h4", "els => els.map(e => e.innerText)")
            images = page.eval_on_selector_all(
                "img", "els => els.map(e => [e.naturalWidth, e.naturalHeight, e.src.slice(0, 21)])"
            )
            height = page.evaluate("document.documentElement.scrollHeight")
        finally:
            browser.close()
    assert errors == []
    assert [h.strip() for h in shown] == headings, "every section is on the page"
    assert len(images) == len(list(run_dir.glob("*.png")))
    for w, h, src in images:
        assert w > 100 and h > 100 and src == "data:image/png;base64"
    from PIL import Image

    with Image.open(shot) as im:
        assert im.size[0] == 1200 and im.size[1] == height > 2000  # the whole page, not a viewport
