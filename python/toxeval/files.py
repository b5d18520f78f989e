"""Input files, read the same way by every reader: existence checks that tell a missing
file from a directory, UTF-8 text with an optional byte-order mark, and file hashes.

Datasets (:mod:`toxeval.datasets`), prediction dumps (:mod:`toxeval.predictions`) and
taxonomy / mapping files (:mod:`toxeval.taxonomy`) go through these, so a mistake gets
the same message whichever file it is in.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

__all__ = ["BOM", "builtin_record", "decode_utf8", "file_record", "file_sha256", "require_file"]

BOM = b"\xef\xbb\xbf"


def require_file(
    path: str | Path,
    what: str,
    invalid: type[ValueError],
    missing: type[Exception] | None = None,
) -> Path:
    """``path`` as a :class:`Path` when it is a regular file (or a link to one). Else
    ``missing`` (default: ``invalid``) saying ``what`` is not found, or ``invalid``
    saying it is a directory (or another kind of non-file)."""
    p = Path(path)
    if p.is_file():
        return p
    if p.is_dir():
        raise invalid(f"{what} {p} is a directory, not a file")
    if p.exists():
        raise invalid(f"{what} {p} is not a regular file")
    raise (missing or invalid)(f"{what} not found: {p}")


def decode_utf8(data: bytes, source: str, error: type[Exception]) -> str:
    """``data`` decoded as UTF-8 (a leading byte-order mark dropped), or ``error``
    naming ``source``, the 1-based line and the byte in it."""
    try:
        return data.decode("utf-8-sig", errors="strict")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        col = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
        raise error(f"{source}: line {line}: not UTF-8 text ({e.reason} at byte {col})") from None


def file_sha256(path: str | Path) -> str:
    """SHA-256 of a file's bytes, read in 8 MiB blocks into one reused buffer (a fresh
    block per read would page-fault its memory in every time)."""
    h = hashlib.sha256()
    buf = bytearray(1 << 23)
    view = memoryview(buf)
    with open(path, "rb", buffering=0) as f:
        while size := f.readinto(buf):
            h.update(view[:size])
    return h.hexdigest()


def file_record(given: str | Path, sha256: str | None = None) -> dict[str, str]:
    """How ``results.json`` identifies an input file: the path exactly as it was given
    (never resolved, so a record made with relative paths holds no machine's layout),
    the file name, and the sha256 of its bytes (``sha256`` when already known), with
    which a reader checks that a file found elsewhere is the one that was used."""
    p = Path(given)
    return {"path": str(given), "name": p.name, "sha256": sha256 or file_sha256(p)}


def builtin_record(kind: str, name: str) -> dict[str, str]:
    """The record of a file embedded in the package (``kind``: ``taxonomies``,
    ``mappings``, ``datasets``): its name and the sha256 of its bytes."""
    from importlib import resources

    res = resources.files("toxeval") / "data" / kind / name
    data = res.read_bytes()
    return {"builtin": name.rsplit(".", 1)[0], "sha256": hashlib.sha256(data).hexdigest()}
