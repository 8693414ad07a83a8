"""``report.html``: the comparison report as one self-contained page, readable offline.

The page is rendered from ``report.md`` with markdown-it (CommonMark plus tables; it comes with
rich), every plot is embedded as a base64 ``data:`` URI, the style sheet is inline and there is
no script and nothing fetched from the network.
"""

from __future__ import annotations

import base64
import html
import re
from pathlib import Path

STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; max-width: 70rem;
       margin: 1.5rem auto; padding: 0 1rem; line-height: 1.45; color: #1b1b1b; }
h1 { border-bottom: 2px solid #444; padding-bottom: .3rem; }
h2 { border-bottom: 1px solid #bbb; margin-top: 2.2rem; }
table { border-collapse: collapse; margin: .6rem 0 1rem; font-size: .86rem; display: block;
        overflow-x: auto; max-width: 100%; }
th, td { border: 1px solid #ccc; padding: .2rem .45rem; vertical-align: top; }
th { background: #f0f0f0; }
tr:nth-child(even) td { background: #fafafa; }
img { max-width: 100%; height: auto; display: block; margin: .6rem 0 1.2rem; }
code { background: #f3f3f3; padding: 0 .2rem; border-radius: 3px; }
"""
"""The page's inline style sheet."""


def _embed(match: re.Match[str], folder: Path) -> str:
    """``<img src="x.png">`` -> the PNG inlined as a data URI (left as is when missing)."""
    src = html.unescape(match.group(2))
    path = folder / src
    if not re.fullmatch(r"[\w.\-]+\.png", src) or not path.is_file():
        return match.group(0)
    data = base64.b64encode(path.read_bytes()).decode("ascii")
    return f"{match.group(1)}data:image/png;base64,{data}{match.group(3)}"


def render_html(markdown_text: str, folder: Path, title: str = "psygym comparison report") -> str:
    """The HTML page of ``markdown_text`` with the PNGs of ``folder`` embedded."""
    from markdown_it import MarkdownIt

    body = MarkdownIt("commonmark", {"html": False}).enable("table").render(markdown_text)
    body = re.sub(r'(<img src=")([^"]+)(")', lambda m: _embed(m, Path(folder)), body)
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<link rel="icon" href="data:,">\n'
        f"<title>{html.escape(title)}</title>\n<style>{STYLE}</style>\n</head>\n"
        f"<body>\n{body}</body>\n</html>\n"
    )


def write_html(path: Path, markdown_text: str, folder: Path) -> Path:
    """Write the page of :func:`render_html` to ``path``."""
    path = Path(path)
    path.write_text(render_html(markdown_text, folder), encoding="utf-8")
    return path


__all__ = ["STYLE", "render_html", "write_html"]
