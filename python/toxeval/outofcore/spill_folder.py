"""The run's spill folder: a temporary folder under ``--spill-dir`` that holds the
spill files and is removed at the end, also on an error, and the sweep that removes
the folders of runs that were killed (``kill -9``, an out-of-memory kill, a power cut)
before they could remove their own.

Each run holds an exclusive ``flock`` on a ``.lock`` file in its folder for as long
as it runs. The kernel releases the lock when the process dies however it dies, so a
later run that can take the lock of a ``toxeval-ooc-*`` folder knows its owner is
gone and removes it; a folder whose lock is held (a run under way, in this or another
process) or that has no lock yet (a run starting) is left alone.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no sweep, the folder is still removed
    fcntl = None  # type: ignore[assignment]

__all__ = ["PREFIX", "spill_folder", "sweep_stale_folders"]

PREFIX = "toxeval-ooc-"
LOCK_NAME = ".lock"


def sweep_stale_folders(base: str | Path | None) -> int:
    """Remove the ``toxeval-ooc-*`` folders in ``base`` (default: the system's
    temporary folder) left by runs that died; returns how many were removed. Only
    real folders of this user whose lock can be taken are touched."""
    if fcntl is None:
        return 0
    root = Path(base) if base is not None else Path(tempfile.gettempdir())
    removed = 0
    try:
        entries = list(os.scandir(root))
    except OSError:
        return 0
    for entry in entries:
        try:
            if not entry.name.startswith(PREFIX) or not entry.is_dir(follow_symlinks=False):
                continue
            if entry.stat(follow_symlinks=False).st_uid != os.getuid():
                continue
            fd = os.open(os.path.join(entry.path, LOCK_NAME), os.O_RDWR | os.O_NOFOLLOW)
        except OSError:
            continue  # no lock file (yet): a run starting, or not ours to judge
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            continue  # held: a run under way
        finally:
            os.close(fd)
        shutil.rmtree(entry.path, ignore_errors=True)
        removed += 1
    return removed


@contextmanager
def spill_folder(spill_dir: str | Path | None) -> Iterator[Path]:
    """A new spill folder in ``spill_dir`` (default: the system's temporary folder),
    locked while the ``with`` block runs and removed after it; stale folders of dead
    runs there are swept first."""
    sweep_stale_folders(spill_dir)
    with tempfile.TemporaryDirectory(prefix=PREFIX, dir=spill_dir) as tmp:
        fd = os.open(os.path.join(tmp, LOCK_NAME), os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            if fcntl is not None:
                fcntl.flock(fd, fcntl.LOCK_EX)
            yield Path(tmp)
        finally:
            os.close(fd)
