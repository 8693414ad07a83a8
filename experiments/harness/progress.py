"""The one progress display: a rich bar on stderr (CSV/JSON on stdout stay clean).

Every long job (tournaments, solving, tuning, training) shows the same bar: description, bar,
done/total, elapsed and remaining time, and a free-text note (e.g. the best score so far). A job
of unknown size (``total=None``) shows a pulsing bar with the count so far.

Where stderr is not a terminal (a job run in the background with its output in a file, a CI
log) a live bar draws nothing, so the display prints plain lines instead: the first after
:data:`FIRST_LINE_SECONDS`, then one every :data:`LINE_SECONDS`, and a last one when a job that
printed any ends.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from typing import Any, TypeVar

T = TypeVar("T")

FIRST_LINE_SECONDS = 10.0
"""Seconds before the first plain progress line (stderr not a terminal): shorter jobs print none."""
LINE_SECONDS = 60.0
"""Seconds between two plain progress lines."""


class LineClock:
    """When the next plain progress line is due: after ``first`` seconds, then every ``every``."""

    def __init__(self, first: float, every: float):
        self.started = time.perf_counter()
        self.every = every
        self._next = self.started + first
        self.printed = False

    def due(self) -> bool:
        """Whether a line is due now (if so, the next one is due ``every`` seconds later)."""
        now = time.perf_counter()
        if now < self._next:
            return False
        self._next = now + self.every
        self.printed = True
        return True

    def elapsed(self) -> float:
        """Seconds since the clock started."""
        return time.perf_counter() - self.started


def clock_text(seconds: float) -> str:
    """``h:mm:ss`` as the bar shows times."""
    s = max(0, round(seconds))
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


def _console() -> Any:
    from psygym_experiments.common import err_console

    return err_console


class ProgressBar:
    """The progress display as a context manager; a disabled one does nothing.

    Args:
        description: what is being done (the left-hand text).
        total: units of work (``None``: unknown).
        enabled: draw anything at all.
        transient: remove the bar when done.

    Where stderr is not a terminal it prints plain lines instead (the module says when).
    """

    def __init__(
        self, description: str, total: float | None = None, *, enabled: bool = True,
        transient: bool = True,
    ):  # fmt: skip
        self.description, self.total = description, total
        self.enabled, self.transient = enabled, transient
        self._bar: Any = None
        self._task: Any = None
        self._lines: LineClock | None = None
        self._done: float = 0
        self._note = ""

    def __enter__(self) -> ProgressBar:
        if not self.enabled:
            return self
        if not _console().is_terminal:
            self._lines = LineClock(FIRST_LINE_SECONDS, LINE_SECONDS)
            return self
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self._bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            TextColumn("{task.fields[note]}"),
            console=_console(),
            transient=self.transient,
        )
        self._bar.start()
        self._task = self._bar.add_task(self.description, total=self.total, note="")
        return self

    def advance(self, n: float = 1) -> None:
        """Count ``n`` more units of work as done."""
        if self._bar is not None:
            self._bar.advance(self._task, n)
        elif self._lines is not None:
            self._done += n
            self._line_if_due()

    def update(self, *, completed: float | None = None, description: str | None = None,
               note: str | None = None, total: float | None = None) -> None:  # fmt: skip
        """Set the work done so far, the description, the note or the total once known."""
        if self._lines is not None:
            if completed is not None:
                self._done = completed
            if total is not None:
                self.total = total
            if description is not None:
                self.description = description
            if note is not None:
                self._note = note
            self._line_if_due()
            return
        if self._bar is None:
            return
        changes: dict[str, Any] = {}
        if completed is not None:
            changes["completed"] = completed
        if total is not None:
            changes["total"] = total
        if description is not None:
            changes["description"] = description
        if note is not None:
            changes["note"] = note
        self._bar.update(self._task, **changes)

    @property
    def completed(self) -> float:
        """Units of work done so far (0 when disabled)."""
        if self._lines is not None:
            return self._done
        return self._bar.tasks[0].completed if self._bar is not None else 0

    def line(self) -> str:
        """The plain progress line: work done, share, time elapsed and left, the note."""
        elapsed = self._lines.elapsed() if self._lines is not None else 0.0
        done, total = self._done, self.total
        text = f"{self.description}: {done:,.0f}"
        if total:
            text += f" of {total:,.0f} ({done / total:.0%})"
        text += f", {clock_text(elapsed)} elapsed"
        if total and 0 < done < total:
            text += f", about {clock_text(elapsed * (total - done) / done)} left"
        return text + (f"; {self._note}" if self._note else "")

    def _line_if_due(self) -> None:
        if self._lines is not None and self._lines.due():
            self._print_line()

    def _print_line(self) -> None:
        _console().print(self.line(), highlight=False, soft_wrap=True, markup=False)

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
        if self._lines is not None:
            if self._lines.printed:  # the log says the job it followed ended, and where
                self._print_line()
            self._lines = None


def track(iterable: Iterable[T], description: str, *, disable: bool = False) -> Iterator[T]:
    """Iterate with the progress display (sized when ``iterable`` has a length)."""
    total = len(iterable) if hasattr(iterable, "__len__") else None  # type: ignore[arg-type]
    with ProgressBar(description, total, enabled=not disable) as bar:
        for item in iterable:
            yield item
            bar.advance()
