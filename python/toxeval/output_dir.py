"""The ``--out`` folder: every output appears at once, inputs are never overwritten, and
files toxeval wrote on an earlier run do not linger beside new results. A single output
file outside such a folder (``compare --html``, a Batch API input and its sidecar) is
written by :func:`staged_file` the same way: into a new file beside it, renamed over it
once whole.

:func:`staged_outputs` is the one way toxeval writes into an output folder:

1. :func:`check_outputs` (also called by the CLI before any work) refuses, with an
   :class:`OutputError`, an output that would overwrite an input file (the dump scored,
   the dataset, a taxonomy or mapping file), and a file of an output name that this run
   does not write and toxeval did not write either (it would be left beside the new
   results, looking like one of them);
2. the caller writes every file into a temporary folder next to the target (same file
   system, so moves are renames);
3. only when all were written, each is moved into place (``os.replace``, atomic per
   file; a new folder is renamed into place whole), files toxeval wrote on an earlier run
   and not this time are removed (only when unchanged since: their sha256 is in the
   manifest), and the manifest is updated; this step holds a lock on the parent folder,
   so two runs writing the same folder at once leave the files of one of them, whole.
   On any error the temporary folder is removed and the target is left as it was.

A staged folder or file is ``flock``-ed by the run writing it. A run killed outright
(``kill -9``, the OOM killer, a power loss) cannot remove its own, so the next run
writing the same target removes the leftovers beside it that no live run holds (and that
are a minute old, so that one just being made is never taken for one).

The manifest, ``.toxeval-outputs.json`` in the folder, maps each file toxeval wrote
there to its sha256; it is how a later run tells toxeval's files from the user's.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import secrets
import shutil
import signal
import stat
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from toxeval.files import file_sha256

__all__ = [
    "MANIFEST",
    "OUTPUT_NAMES",
    "OutputError",
    "check_outputs",
    "staged_file",
    "staged_outputs",
]

MANIFEST = ".toxeval-outputs.json"
# Every file name toxeval may write into an output folder.
OUTPUT_NAMES = (
    "results.json",
    "report.md",
    "per_category.csv",
    "slices.csv",
    "scored_rows.parquet",
    "report.html",
    "pr_curves.png",
    "ap_by_category.png",
)


class OutputError(ValueError):
    """An output folder toxeval cannot write safely (it would overwrite an input, or
    leave a file it did not write among the new results)."""


def _read_manifest(out: Path) -> dict[str, str]:
    """``{name: sha256}`` of the files toxeval wrote into ``out`` (empty when there is
    no manifest, or it is not one toxeval wrote)."""
    try:
        data = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(files, dict):
        return {}
    return {
        str(k): str(v)
        for k, v in files.items()
        if isinstance(v, str) and k in OUTPUT_NAMES and "/" not in k
    }


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve() or (a.exists() and b.exists() and a.samefile(b))
    except (OSError, RuntimeError):  # RuntimeError: a symbolic link loop (Python < 3.13)
        return False


def _written_by_toxeval(path: Path, manifest: dict[str, str]) -> bool:
    want = manifest.get(path.name)
    if want is None:
        return False
    try:
        return file_sha256(path) == want
    except OSError:
        return False


def check_outputs(
    out_dir: str | Path, names: Sequence[str], inputs: Iterable[str | Path | None]
) -> None:
    """Raise :class:`OutputError` unless writing ``names`` into ``out_dir`` is safe: no
    output is one of the ``inputs`` (files the run reads; ``None`` and names that are
    not existing files are skipped), and no file of another output name lies in the
    folder unless toxeval wrote it there (then it is removed when the new outputs are
    moved in)."""
    out = Path(out_dir)
    files = [Path(p) for p in inputs if p is not None and Path(p).is_file()]
    for name in (*names, MANIFEST):
        target = out / name
        for p in files:
            if _same_file(p, target):
                raise OutputError(
                    f"--out {out_dir}: writing {name} would overwrite the input file {p}; "
                    "choose another output folder"
                )
    if not out.is_dir():
        return
    manifest = _read_manifest(out)
    for name in OUTPUT_NAMES:
        stale = out / name
        if name in names or not stale.exists():
            continue
        if not _written_by_toxeval(stale, manifest):
            raise OutputError(
                f"--out {out_dir}: it holds {name}, which this run does not write and which "
                "toxeval did not write there (or it changed since); it would sit beside the "
                "new results as if it were one of them: move it away or choose another "
                "output folder"
            )


@contextmanager
def staged_outputs(
    out_dir: str | Path, names: Sequence[str], inputs: Iterable[str | Path | None] = ()
) -> Iterator[Path]:
    """A temporary folder to write ``names`` into; on leaving the block without an error
    they are moved into ``out_dir`` (created if needed) as the module docstring says.
    A name written that is not in ``names``, or one of ``names`` not written, is an
    error (nothing is moved)."""
    out = Path(out_dir)
    check_outputs(out, names, list(inputs))
    parent = out.absolute().parent
    parent.mkdir(parents=True, exist_ok=True)
    # os.mkdir, not tempfile.mkdtemp: a new folder renamed into place gets the user's
    # usual permissions (umask), not mkdtemp's owner-only 0700
    _sweep_leftovers(parent / out.name)
    stage = _stage_name(parent / out.name)
    made, held = False, -1
    try:
        # a Ctrl-C or SIGTERM between the mkdir and the cleanup being armed would leave
        # the staged folder behind: it is delivered once the block below has run, here
        # inside the try
        with _signals_held():
            stage.mkdir()
            made = True
            held = _hold(stage)
        yield stage
        written = sorted(p.name for p in stage.iterdir())
        if sorted(set(names)) != written:
            raise RuntimeError(f"expected to write {sorted(names)}, wrote {written}")
        with _locked(parent):
            _commit(stage, out, names)
    finally:
        if made:
            shutil.rmtree(stage, ignore_errors=True)
        if held >= 0:
            os.close(held)


@contextmanager
def staged_file(path: str | Path, *, binary: bool = False) -> Iterator[IO[Any]]:
    """A new file beside ``path`` to write into; when the block ends without an error it
    is renamed over ``path`` (the file appears whole or not at all, and a file already at
    ``path`` is replaced, never written through: a hard link to another file leaves that
    file as it was); on an error it is removed and ``path`` is left as it was. A device,
    pipe or socket at ``path`` (``/dev/stdout``, a named pipe) is written to directly."""
    target = Path(path)
    if _special_file(target):  # renaming over it would put a regular file in its place
        with _open(target, "w", binary) as f:
            yield f
        return
    _sweep_leftovers(target)
    stage = _stage_name(target)
    try:
        with _open(stage, "x", binary) as f:
            with contextlib.suppress(OSError):
                fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            yield f
            os.replace(stage, target)
    finally:
        stage.unlink(missing_ok=True)


def _open(path: Path, mode: str, binary: bool) -> IO[Any]:
    if binary:
        return open(path, mode + "b")
    return open(path, mode, encoding="utf-8", newline="\n")


def _special_file(path: Path) -> bool:
    """Whether ``path`` (through a symbolic link) is there and is neither a regular file
    nor a directory: a device, a named pipe or a socket."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def _stage_name(target: Path) -> Path:
    """A new name beside ``target`` (same folder, so the final move is a rename)."""
    return target.with_name(f".{target.name}{_STAGE_MARK}{secrets.token_hex(6)}")


_STAGE_MARK = ".toxeval-"
# A leftover this recent may be a stage another run has made and not yet locked.
_LEFTOVER_AGE_S = 60.0


def _hold(path: Path) -> int:
    """An open descriptor of ``path`` with an exclusive ``flock`` on it, or -1 where the
    file system takes no lock: while it is open, :func:`_sweep_leftovers` of another run
    leaves ``path`` alone. The lock goes with the process, however it ends."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return -1
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return -1
    return fd


def _sweep_leftovers(target: Path) -> None:
    """Remove the stages beside ``target`` (``.NAME.toxeval-XXXXXXXXXXXX``) of runs that
    died before they could: no process holds their lock and they are a minute old.
    Anything that cannot be read, locked or removed is left as it is."""
    prefix = f".{target.name}{_STAGE_MARK}"
    try:
        entries = list(os.scandir(target.parent))
    except OSError:
        return
    now = time.time()
    for entry in entries:
        rest = entry.name[len(prefix) :]
        if not entry.name.startswith(prefix) or len(rest) != 12 or not _is_hex(rest):
            continue
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if stat.S_ISLNK(st.st_mode) or now - st.st_mtime < _LEFTOVER_AGE_S:
            continue
        fd = _hold(Path(entry.path))
        if fd < 0:  # a live run holds it (or it cannot be locked): not ours to remove
            continue
        try:
            if stat.S_ISDIR(st.st_mode):
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)
        finally:
            os.close(fd)


def _is_hex(text: str) -> bool:
    return all(c in "0123456789abcdef" for c in text)


@contextmanager
def _locked(folder: Path) -> Iterator[None]:
    """While the outputs are moved in: an exclusive ``flock`` on ``folder`` (the parent of
    the output folder), so that two runs given the same ``--out`` at once commit one
    after the other, each whole, instead of file by file interleaved (one run's report
    beside the other's results.json); and Ctrl-C and SIGTERM held back until the moves
    are done, so that an interrupt never leaves a folder of two runs. Where a folder
    cannot be locked (some network file systems), the move goes on unlocked."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        fd = -1
    try:
        if fd >= 0:
            with contextlib.suppress(OSError):
                fcntl.flock(fd, fcntl.LOCK_EX)  # the wait for another run stays interruptible
        with _signals_held():
            yield
    finally:
        if fd >= 0:
            os.close(fd)  # releases the lock


@contextmanager
def _signals_held() -> Iterator[None]:
    """Ctrl-C and SIGTERM received in the block are delivered when it ends, to the
    handlers of before. Python runs its signal handlers in the main thread whichever
    thread the signal reached (a rayon worker), so the handlers are swapped, not the
    thread's signal mask; elsewhere than in the main thread the block runs as it is."""
    pending: list[int] = []
    previous: dict[int, Any] = {}
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGINT, signal.SIGTERM):
            handler = signal.getsignal(sig)
            if handler is not None:  # None: a handler set outside Python, left alone
                previous[sig] = signal.signal(sig, lambda signum, frame: pending.append(signum))
    try:
        yield
    finally:
        for held, handler in previous.items():
            signal.signal(held, handler)
        if pending:
            signal.raise_signal(pending[0])


def _commit(stage: Path, out: Path, names: Sequence[str]) -> None:
    """Move the staged files into ``out``, remove toxeval's stale files, write the
    manifest."""
    manifest = {name: file_sha256(stage / name) for name in names}
    if not out.exists():
        _write_manifest(stage, manifest)
        os.rename(stage, out)  # a new folder appears whole
        return
    old = _read_manifest(out)
    for name in names:
        os.replace(stage / name, out / name)
    for name, sha in old.items():
        stale = out / name
        if name not in manifest and stale.is_file() and file_sha256(stale) == sha:
            stale.unlink()
    _write_manifest(out, manifest)


def _write_manifest(folder: Path, files: dict[str, str]) -> None:
    tmp = folder / (MANIFEST + ".tmp")
    body = {"written_by": "toxeval", "files": dict(sorted(files.items()))}
    tmp.write_text(json.dumps(body, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, folder / MANIFEST)
