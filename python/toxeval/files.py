"""Input files, read the same way by every reader: existence checks that tell a missing
file from a directory, UTF-8 text with an optional byte-order mark (one message for text
that is not UTF-8), compressed files opened or decompressed with the codec
:mod:`toxeval.file_formats` names (gzip, bzip2, zstd, LZ4 frame), and file hashes (also
on a thread, overlapping with parsing).

Datasets (:mod:`toxeval.datasets`), prediction dumps (:mod:`toxeval.predictions`) and
taxonomy / mapping files (:mod:`toxeval.taxonomy`) go through these, so a mistake gets
the same message whichever file it is in.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import threading
import zlib
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pyarrow as pa

from toxeval.file_formats import (
    COMPRESSIONS,
    compression_suffix,
    file_compression,
    sniff_compression,
)

__all__ = [
    "ARROW_JSON_OPENERS",
    "BOM",
    "BackgroundSha256",
    "bad_utf8_place",
    "builtin_record",
    "check_utf8_encoding",
    "decode_utf8",
    "decompress",
    "file_record",
    "file_sha256",
    "json_openers_exceed",
    "not_utf8_message",
    "not_valid_compressed",
    "open_binary",
    "open_stream",
    "require_file",
]

BOM = b"\xef\xbb\xbf"

# byte-order marks of the Unicode encodings that are not UTF-8, UTF-32 first (its LE mark
# starts with UTF-16 LE's), each with the name iconv gives the encoding
_WIDE_BOMS = (
    (b"\xff\xfe\x00\x00", "UTF-32 LE", "UTF-32"),
    (b"\x00\x00\xfe\xff", "UTF-32 BE", "UTF-32"),
    (b"\xff\xfe", "UTF-16 LE", "UTF-16"),
    (b"\xfe\xff", "UTF-16 BE", "UTF-16"),
)


def _wide_encoding(head: bytes) -> tuple[str, str] | None:
    """(name, iconv name) of UTF-16 or UTF-32 text from its first bytes: a byte-order
    mark, or ASCII text with a NUL byte beside every character (UTF-16 without a mark:
    UTF-8 text never holds a NUL)."""
    for bom, name, iconv in _WIDE_BOMS:
        if head.startswith(bom):
            return f"{name} (with a byte-order mark)", iconv
    pairs = head[: len(head) // 2 * 2]
    if len(pairs) >= 4:
        even, odd = pairs[0::2], pairs[1::2]
        if not any(odd) and all(even):
            return "UTF-16 LE", "UTF-16LE"
        if not any(even) and all(odd):
            return "UTF-16 BE", "UTF-16BE"
    return None


def check_utf8_encoding(head: bytes, source: str, error: type[Exception]) -> None:
    """Raise ``error`` naming ``source``, the encoding and how to convert the file when
    ``head`` (the first bytes of a text file, decompressed) is UTF-16 or UTF-32 text:
    read as UTF-8 such a file is one garbled column, which the CSV and JSON readers
    would report as a wrong column count or a syntax error."""
    found = _wide_encoding(head[:64])
    if found is None:
        return
    name, iconv = found
    sheet = "; from a spreadsheet, save as 'CSV UTF-8'" if ".csv" in source.lower() else ""
    raise error(
        f"{source}: the file is {name} text; toxeval reads UTF-8: convert it "
        f"(iconv -f {iconv} -t UTF-8 FILE > NEW_FILE{sheet})"
    )


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
        raise error(not_utf8_message(source, (line, col), e.reason)) from None


def not_utf8_message(source: str, where: tuple[int, int] | None, reason: str) -> str:
    """The message for text that is not UTF-8, the same for every input: ``source``, the
    1-based (line, byte in the line) when known, and the decoder's reason."""
    at = f"line {where[0]}: byte {where[1]}: " if where else ""
    return f"{source}: {at}not UTF-8 text ({reason})"


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


class BackgroundSha256:
    """SHA-256 of a file (:func:`file_sha256`) or of bytes already read, on a thread:
    hashlib and file reads release the GIL, so the hash of a large input overlaps with
    parsing it. ``result()`` waits, and re-raises the error reading the file raised."""

    def __init__(self, source: Path | bytes) -> None:
        self._source = source
        self._value: str | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="toxeval-sha256", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            if isinstance(self._source, bytes):
                self._value = hashlib.sha256(self._source).hexdigest()
            else:
                self._value = file_sha256(self._source)
        except BaseException as e:  # re-raised in the caller's thread
            self._error = e

    def result(self) -> str:
        self._thread.join()
        if self._error is not None:
            raise self._error
        assert self._value is not None
        return self._value


def open_stream(path: Path) -> pa.NativeFile:
    """A pyarrow input stream over ``path``, decompressed when its name or its first
    bytes say so (:func:`~toxeval.file_formats.file_compression`)."""
    sfx = file_compression(path)
    return pa.input_stream(str(path), compression=COMPRESSIONS[sfx][0] if sfx else None)


def read_decompressed(path: Path, limit: int) -> bytes | None:
    """The decompressed bytes of a compressed file (pyarrow's decompressors), or None
    when they exceed ``limit`` bytes or the stream is corrupt (a reader then falls back
    to one that streams the file and names the problem). ``OSError`` as opening it."""
    try:
        with open_stream(path) as stream:
            body: bytes = stream.read(limit + 1)
    except (EOFError, pa.ArrowException):
        return None
    except OSError:
        if not path.exists():
            raise
        return None
    return None if len(body) > limit else body


def open_binary(path: Path) -> io.BufferedReader:
    """``path`` opened for reading bytes (lines, blocks), decompressed when its name or
    its first bytes say so."""
    if file_compression(path) is None:
        return open(path, "rb")
    return io.BufferedReader(open_stream(path), buffer_size=1 << 16)


def decompress(path: Path, data: bytes, error: type[Exception]) -> bytes:
    """``data`` (the bytes of ``path``) decompressed by the compression suffix of the
    name, or, when the name has none, by the magic number the bytes start with
    (:func:`~toxeval.file_formats.sniff_compression`); else unchanged. A corrupt stream
    raises ``error`` (:func:`not_valid_compressed`)."""
    sfx = compression_suffix(path) or sniff_compression(data[:10])
    if sfx is None:
        return data
    codec = COMPRESSIONS[sfx][0]
    try:
        if codec == "gzip":  # the stdlib's C inflate, a little faster than the stream
            return gzip.decompress(data)
        with pa.input_stream(pa.BufferReader(data), compression=codec) as stream:
            return bytes(stream.read())
    except (OSError, EOFError, zlib.error, pa.ArrowException) as e:
        raise not_valid_compressed(path, e, error, sfx) from None


def bad_utf8_place(path: Path) -> tuple[int, int] | None:
    """(line, byte in it) of the first bytes of ``path`` (decompressed) that are not
    UTF-8, or None when none is found or the file cannot be read (error path only:
    a reader that was told the text is not UTF-8 names the place)."""
    try:
        with open_binary(path) as f:
            for lineno, line in enumerate(f, start=1):
                try:
                    line.decode("utf-8")
                except UnicodeDecodeError as e:
                    return lineno, e.start + 1
    except (OSError, EOFError, zlib.error, pa.ArrowException):
        pass
    return None


def not_valid_compressed(
    path: Path, e: BaseException, error: type[Exception], sfx: str | None = None
) -> Exception:
    """The ``error`` for a compressed file (suffix ``sfx``, default: from its name) whose
    bytes do not decompress: it names the file, the compression and the cause."""
    what = COMPRESSIONS[sfx or file_compression(path) or ".gz"][1]
    return error(f"{path}: not a valid {what} file ({type(e).__name__}: {e})")


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


#: The most ``[`` and ``{`` on one line that pyarrow's JSON reader is given. It parses
#: by recursion and crashes the process (a segmentation fault, not an error) on a line
#: nested some 20,000 deep; a line's nesting is at most its number of openers, so lines
#: with more are read by Python's json instead, which raises RecursionError past ~1,000.
ARROW_JSON_OPENERS = 2048


def json_openers_exceed(blocks: Iterable[bytes | memoryview], limit: int) -> bool:
    """Whether some line of the concatenated ``blocks`` holds more than ``limit`` of the
    bytes ``[`` and ``{`` (inside strings too: an upper bound on its nesting).

    A line of at most ``limit`` bytes cannot hold more, so only longer lines are
    counted: most files need one pass for their newlines and nothing else."""
    carry = 0  # openers since the last newline
    carry_len = 0  # bytes since the last newline
    for block in blocks:
        a = np.frombuffer(block, dtype=np.uint8)
        nl = np.flatnonzero(a == 0x0A)
        if nl.size == 0:
            carry += _openers(a)
            carry_len += a.size
        else:
            lengths = np.diff(nl, prepend=-1) - 1  # bytes of each line before its newline
            lengths[0] += carry_len
            long = np.flatnonzero(lengths > limit)
            if long.size > _FEW_LONG_LINES:
                if _openers_per_line(a, nl, carry).max() > limit:
                    return True
            else:
                for i in long.tolist():
                    start = int(nl[i - 1]) + 1 if i else 0
                    if _openers(a[start : int(nl[i])]) + (carry if i == 0 else 0) > limit:
                        return True
            tail = a[int(nl[-1]) + 1 :]
            carry, carry_len = _openers(tail), tail.size
        if carry > limit:
            return True
    return False


#: Above this many long lines in a block, their openers are counted in one vectorised
#: pass over the block rather than line by line.
_FEW_LONG_LINES = 64


def _openers(a: np.ndarray) -> int:
    return int(np.count_nonzero(a == 0x5B)) + int(np.count_nonzero(a == 0x7B))


def _openers_per_line(a: np.ndarray, nl: np.ndarray, carry: int) -> np.ndarray:
    """The openers of each line of ``a`` ending at a newline of ``nl`` (the first line
    with the ``carry`` openers of earlier blocks)."""
    opens = np.flatnonzero((a == 0x5B) | (a == 0x7B))
    before = np.searchsorted(opens, nl)  # openers before each newline
    per_line = np.diff(before, prepend=0)
    per_line[0] += carry
    return per_line
