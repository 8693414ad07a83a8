"""The one progress display: a rich bar on stderr (CSV/JSON on stdout stay clean).

Every long job (tournaments, solving, tuning, training) shows the same bar: description, bar,
done/total, elapsed and remaining time, and a free-text note (e.g. the best score so far). A job
of unknown size (``total=None``) shows a pulsing bar with the count so far.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, TypeVar

T = TypeVar("T")


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
    """

    def __init__(
        self, description: str, total: float | None = None, *, enabled: bool = True,
        transient: bool = True,
    ):  # fmt: skip
        self.description, self.total = description, total
        self.enabled, self.transient = enabled, transient
        self._bar: Any = None
        self._task: Any = None

    def __enter__(self) -> ProgressBar:
        if not self.enabled:
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

    def update(self, *, completed: float | None = None, description: str | None = None,
               note: str | None = None, total: float | None = None) -> None:  # fmt: skip
        """Set the work done so far, the description, the note or the total once known."""
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
        return self._bar.tasks[0].completed if self._bar is not None else 0

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None


def track(iterable: Iterable[T], description: str, *, disable: bool = False) -> Iterator[T]:
    """Iterate with the progress display (sized when ``iterable`` has a length)."""
    total = len(iterable) if hasattr(iterable, "__len__") else None  # type: ignore[arg-type]
    with ProgressBar(description, total, enabled=not disable) as bar:
        for item in iterable:
            yield item
            bar.advance()
