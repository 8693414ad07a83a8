"""``psygym cheatsheet``: a one-page PNG and PDF of the exact answer tables."""

from __future__ import annotations

import re

import pytest
from psygym_experiments.cli import app
from typer.testing import CliRunner


def test_cheatsheet_writes_one_page_png_and_pdf(tmp_path):
    out = tmp_path / "sheet"
    result = CliRunner().invoke(app, ["cheatsheet", "--edition", "7th", "--quick", "--out",
                                      str(out)])  # fmt: skip
    assert result.exit_code == 0, result.output
    png, pdf = out.with_suffix(".png"), out.with_suffix(".pdf")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    data = pdf.read_bytes()
    assert data[:5] == b"%PDF-"
    assert len(re.findall(rb"/Type\s*/Page(?!s)", data)) == 1, "one page"
    from PIL import Image

    with Image.open(png) as im:
        w, h = im.size
    assert w > h > 1000  # A4 landscape at 150 dpi


def test_cheatsheet_tables_are_titled_with_their_situation():
    from psygym_experiments.report_answers import compute_tables

    tables = compute_tables("7th", "quick")
    kinds = [t["kind"] for t in tables]
    assert kinds.count("commit") == 2 and kinds.count("deny") == 1
    for t in tables:
        assert t["assumes"] and t["title"] and t["question"] and t["answer"]
        assert all(len(r) == len(t["header"]) for r in t["rows"])
    commit = tables[0]
    # The last power of the phase: leftover dice are worth nothing, so commit them all
    # (7E-4.3: more dice, more successes) unless the warp charge cannot be reached.
    assert commit["rows"][2] == ["3", "3 3 3", "3 3 3", "3 3 3"]
    assert "deny on 6+" in commit["assumes"] and "deny on 5+" in tables[1]["assumes"]


def test_cheatsheet_of_an_edition_without_tables_is_a_clean_error(tmp_path):
    result = CliRunner().invoke(app, ["cheatsheet", "--edition", "rt", "--out",
                                      str(tmp_path / "x")])  # fmt: skip
    assert result.exit_code != 0
    assert "no exact answer tables" in result.output and "Traceback" not in result.output


@pytest.mark.parametrize("size", ["bogus"])
def test_unknown_table_size_fails(size):
    from psygym_agents.seventh.dice_table import answer_tables

    with pytest.raises(KeyError):
        answer_tables(size)


def test_eighth_deny_table_always_denies_the_last_power():
    from psygym_experiments.report_answers import compute_tables

    (table,) = compute_tables("8th", "quick")
    assert table["kind"] == "deny" and table["header"][0] == "test total"
    last = [k for k, h in enumerate(table["header"]) if h.endswith("(last)")]
    assert last
    # 8E-5: a deny roll costs nothing and no power follows, so denying is never worse.
    for row in table["rows"]:
        assert all(row[k] in ("deny", "") for k in last)
    # With a power still to come, a high test total is not worth the only deny.
    later = [k for k, h in enumerate(table["header"]) if h.endswith("(more to come)")]
    assert any(row[k] == "keep" for row in table["rows"] for k in later)
