"""``psygym tune --storage``: a database file the user names is never a link or a device.

The default ``optuna.db`` in the run folder was refused as a link, but a ``sqlite:///PATH`` of
the user's own was opened through one (SQLite created the database at the link's target, or
failed with an internal error on a file that was not a database), and a device or a named pipe
gave an internal error. A file of the user's outside the run folder is still theirs to use.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from cli_helpers import clean_error, ok, run

pytest.importorskip("optuna")

from psygym_experiments.harness.output import UnsafeOutputError  # noqa: E402
from psygym_experiments.harness.study_storage import open_storage  # noqa: E402

TUNE = ("tune", "--edition", "7th", "--scenario", "single-phase", "--trials", "1",
        "--episodes", "2", "--scoring", "simulation", "--no-progress")  # fmt: skip


def tune(storage: str, runs: Path):
    """``psygym tune`` with the smallest budget on ``storage``."""
    return run(*TUNE, "--storage", storage, "--runs-dir", runs)


def test_a_link_to_a_database_elsewhere_is_refused_and_its_target_untouched(tmp_path):
    target = tmp_path / "elsewhere" / "theirs.db"
    target.parent.mkdir()
    target.write_bytes(b"not yours")
    link = tmp_path / "mine.db"
    link.symlink_to(target)
    line = clean_error(
        tune(f"sqlite:///{link}", tmp_path / "runs"), str(link), "symbolic link", str(target)
    )
    assert "internal error" not in line
    assert target.read_bytes() == b"not yours"


def test_a_dangling_link_is_refused_and_no_database_is_made_at_its_target(tmp_path):
    target = tmp_path / "elsewhere" / "new.db"
    target.parent.mkdir()
    link = tmp_path / "mine.db"
    link.symlink_to(target)
    clean_error(tune(f"sqlite:///{link}", tmp_path / "runs"), str(link), "symbolic link")
    assert list(target.parent.iterdir()) == [], "nothing was written through the link"
    # The user's own file, anywhere (here beside the run folder, not in it), is still theirs.
    db = tmp_path / "mine" / "study.db"
    out = ok(*TUNE, "--storage", f"sqlite:///{db}", "--runs-dir", tmp_path / "runs")
    assert "best.json" in out
    assert db.is_file() and not db.is_symlink()
    assert not (tmp_path / "runs" / "optuna.db").exists()


def test_a_link_beside_the_database_is_refused(tmp_path):
    """SQLite writes ``<db>-journal`` (and ``-wal``, ``-shm``) beside the database."""
    target = tmp_path / "elsewhere.txt"
    target.write_text("keep")
    db = tmp_path / "mine.db"
    (tmp_path / "mine.db-journal").symlink_to(target)
    clean_error(tune(f"sqlite:///{db}", tmp_path / "runs"), "mine.db-journal", "symbolic link")
    assert target.read_text() == "keep" and not db.exists()


def test_a_link_to_a_folder_is_refused_as_a_link(tmp_path):
    folder = tmp_path / "folder"
    folder.mkdir()
    link = tmp_path / "mine.db"
    link.symlink_to(folder)
    clean_error(tune(f"sqlite:///{link}", tmp_path / "runs"), str(link), "symbolic link")
    assert list(folder.iterdir()) == []
    # A folder itself keeps its own message.
    clean_error(tune(f"sqlite:///{folder}", tmp_path / "runs"), "is a folder")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_named_pipe_is_refused(tmp_path):
    fifo = tmp_path / "pipe.db"
    os.mkfifo(fifo)
    clean_error(tune(f"sqlite:///{fifo}", tmp_path / "runs"), str(fifo), "not a regular file")


@pytest.mark.skipif(not Path("/dev/null").is_char_device(), reason="no /dev/null")
def test_a_device_is_refused(tmp_path):
    clean_error(tune("sqlite:////dev/null", tmp_path / "runs"), "/dev/null", "character device")


def test_a_journal_file_that_is_a_link_is_refused(tmp_path):
    target = tmp_path / "elsewhere.log"
    target.write_text("keep")
    link = tmp_path / "journal.log"
    link.symlink_to(target)
    with pytest.raises(UnsafeOutputError, match="symbolic link"):
        open_storage(f"journal:{link}", tmp_path / "runs")
    assert target.read_text() == "keep"
