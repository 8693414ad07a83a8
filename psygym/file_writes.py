"""Files written whole or not at all, never through a link, touching no other file.

The data goes to a fresh temporary file beside the target, ``.<name>.<random>.tmp``, created
exclusively under a name no file has (``O_EXCL | O_NOFOLLOW``), then moved onto the target;
if the write fails only that temporary file is removed. So a kill never leaves half a file, a
file of the user's named like a temporary one is never touched, and a planted link is never
followed. Both the harness's outputs and the safe model files write this way.
"""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path

_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL
_FLAGS |= getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)

_KINDS = (
    (stat.S_ISDIR, "a folder"), (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISSOCK, "a socket"),
)  # fmt: skip


def link_text(path: Path) -> str:
    """``"a symbolic link to <where>"`` for a link at ``path``."""
    try:
        return f"a symbolic link to {os.readlink(path)}"
    except OSError:  # pragma: no cover - removed meanwhile
        return "a symbolic link"


def obstacle(path: Path) -> str | None:
    """What stands at ``path`` that must not be written over (a link, a device...), or ``None``.

    ``None`` where nothing is there or a regular file is; else e.g. ``"a symbolic link to
    /etc/passwd"`` or ``"a character device, not a regular file"``.
    """
    try:
        mode = os.lstat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):  # a new file
        return None
    if stat.S_ISLNK(mode):
        return link_text(path)
    return None if stat.S_ISREG(mode) else kind_of(mode)


def kind_of(mode: int) -> str:
    """A file that is not a regular one, by its ``st_mode``: ``"a folder, not a regular file"``."""
    return next((f"{word}, not a regular file" for test, word in _KINDS if test(mode)),
                "not a regular file")  # fmt: skip


def open_temporary(path: Path, mode: int = 0o666) -> tuple[Path, int]:
    """A new file beside ``path`` under a random name no file has, opened to write.

    Raises:
        OSError: the folder is missing or may not be written (as ``os.open`` raises it).
    """
    for _ in range(100):
        # The name is cut so the temporary one stays within a file system's 255 bytes.
        tmp = path.with_name(f".{path.name[:32]}.{secrets.token_hex(6)}.tmp")
        try:
            return tmp, os.open(tmp, _FLAGS, mode)
        except FileExistsError:  # taken (by chance, or planted): draw another name
            continue
    raise FileExistsError(f"cannot write {path}: no free temporary name beside it")


def replace_with(path: Path, data: bytes, *, mode: int | None = None) -> None:
    """Write ``data`` to ``path`` through :func:`open_temporary`, then move it into place.

    ``mode``: the file's permissions whatever the umask (``None``: as the umask leaves them).

    Raises:
        OSError: as :func:`open_temporary`, or the write or the move failed.
    """
    tmp, fd = open_temporary(path, 0o666 if mode is None else mode)
    try:
        with os.fdopen(fd, "wb") as f:
            if mode is not None:
                os.fchmod(f.fileno(), mode)
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


__all__ = ["kind_of", "link_text", "obstacle", "open_temporary", "replace_with"]
