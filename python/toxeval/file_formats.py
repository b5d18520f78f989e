"""An input file's format and compression, told from its name (and, for a name without
a compression suffix, the compression from the file's magic number): the one place that
decides it for datasets (:mod:`toxeval.datasets`), prediction dumps
(:mod:`toxeval.predictions`) and Parquet shards (:mod:`toxeval.shards`), so every kind
of input accepts the same suffixes and compressions and an unknown name gets the same
message.

A name is a format suffix (any case), optionally followed by one compression suffix:
``data.jsonl``, ``preds.CSV.zst``. JSONL and CSV (text) may be compressed with any
codec pyarrow streams (:data:`COMPRESSIONS`); Parquet, NPY and NPZ may not (Parquet
compresses its own pages; a compressed one is a mistake to report, not to guess at).
A JSONL or CSV file compressed under a plain name (``data.jsonl`` holding gzip) is read
as what its first bytes say (:func:`file_compression`), for datasets and dumps alike.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "COMPRESSIONS",
    "FORMAT_SUFFIXES",
    "PARQUET_SUFFIXES",
    "TEXT_FORMATS",
    "InputFormat",
    "compression_suffix",
    "file_compression",
    "input_format",
    "input_stem",
    "is_parquet_name",
    "name_format",
    "plain_name",
    "sniff_compression",
]

# Compressions a text file (JSONL, CSV) may carry, by file-name suffix (any case): the
# pyarrow codec that reads it, and its name in messages. Read through pyarrow's
# CompressedInputStream, as pyarrow's own readers do.
COMPRESSIONS: dict[str, tuple[str, str]] = {
    ".gz": ("gzip", "gzip"),
    ".bz2": ("bz2", "bzip2"),
    ".zst": ("zstd", "zstd"),
    ".lz4": ("lz4", "LZ4 frame"),
}

#: The file-name suffixes of each format, in the order messages list them.
FORMAT_SUFFIXES: dict[str, tuple[str, ...]] = {
    "jsonl": (".jsonl", ".ndjson", ".json"),
    "csv": (".csv", ".tsv"),
    "parquet": (".parquet", ".parq", ".pq"),
    "npy": (".npy",),
    "npz": (".npz",),
}

PARQUET_SUFFIXES = FORMAT_SUFFIXES["parquet"]

#: The formats that may be compressed (read as a stream of lines).
TEXT_FORMATS = ("jsonl", "csv")

_FORMAT_NAMES = {"jsonl": "JSONL", "csv": "CSV", "parquet": "PARQUET", "npy": "NPY", "npz": "NPZ"}


@dataclass(frozen=True)
class InputFormat:
    """What a file name says about the file: its ``format`` (a key of
    :data:`FORMAT_SUFFIXES`), its compression suffix (``.gz``, ... or None), and the
    whole suffix recognised, lower case (``.jsonl.gz``; empty when the format was given
    rather than read from the name)."""

    format: str
    compression: str | None
    suffix: str

    @property
    def codec(self) -> str | None:
        """The pyarrow codec that decompresses the file, or None."""
        return COMPRESSIONS[self.compression][0] if self.compression else None

    @property
    def delimiter(self) -> str:
        """The CSV field separator the name implies: a tab for ``.tsv``, else a comma."""
        return "\t" if self.suffix.startswith(".tsv") else ","


def compression_suffix(path: str | Path) -> str | None:
    """The compression suffix ``path`` ends with (``.gz``, ``.bz2``, ``.zst``, ``.lz4``;
    any case), or None."""
    name = Path(path).name.lower()
    return next((sfx for sfx in COMPRESSIONS if name.endswith(sfx)), None)


def sniff_compression(head: bytes) -> str | None:
    """The compression suffix whose magic number ``head`` (a file's first 10 bytes or
    more) starts with, or None. None of these magic numbers starts UTF-8 text, except
    bzip2's "BZh", which is taken with its block magic only."""
    if head.startswith(b"\x1f\x8b"):
        return ".gz"
    if head.startswith(b"\x28\xb5\x2f\xfd"):
        return ".zst"
    if head.startswith(b"\x04\x22\x4d\x18"):
        return ".lz4"
    if (
        head.startswith(b"BZh")
        and head[3:4].isdigit()
        and head[4:10] in (b"\x31\x41\x59\x26\x53\x59", b"\x17\x72\x45\x38\x50\x90")
    ):
        return ".bz2"
    return None


def file_compression(path: str | Path) -> str | None:
    """The compression of the file at ``path``: its name's compression suffix, else the
    one its first bytes show (:func:`sniff_compression`), else None (also when the file
    cannot be opened: the reader names that error)."""
    sfx = compression_suffix(path)
    if sfx is not None:
        return sfx
    try:
        with open(path, "rb") as f:
            return sniff_compression(f.read(10))
    except OSError:
        return None


def plain_name(path: str | Path) -> str:
    """The lower-case file name without its compression suffix."""
    name = Path(path).name.lower()
    sfx = compression_suffix(name)
    return name.removesuffix(sfx) if sfx else name


def name_format(path: str | Path) -> InputFormat | None:
    """The format and compression ``path``'s name implies, or None when it implies no
    format (compressed or not: no check here that the format may be compressed)."""
    sfx = compression_suffix(path)
    name = plain_name(path)
    for fmt, suffixes in FORMAT_SUFFIXES.items():
        for ext in suffixes:
            if name.endswith(ext):
                return InputFormat(fmt, sfx, ext + (sfx or ""))
    return None


def is_parquet_name(path: str | Path) -> bool:
    """Whether ``path``'s name is that of an uncompressed Parquet file (``.parquet``,
    ``.parq``, ``.pq``; any case)."""
    fmt = name_format(path)
    return fmt is not None and fmt.format == "parquet" and fmt.compression is None


def input_stem(path: str | Path) -> str:
    """The file name without the format and compression suffixes its name has
    (``Q-A-MLL.jsonl.gz`` -> ``Q-A-MLL``; a directory of shards keeps its whole name): the
    name a dataset is known by in results."""
    name = Path(path).name
    found = name_format(name)
    return name[: -len(found.suffix)] if found is not None else name


def _suffix_list(formats: tuple[str, ...]) -> str:
    return ", ".join(ext for fmt in formats for ext in FORMAT_SUFFIXES[fmt])


def input_format(
    path: str | Path,
    what: str,
    error: type[Exception],
    formats: tuple[str, ...] = tuple(FORMAT_SUFFIXES),
    *,
    given: str | None = None,
    hint: str = "",
) -> InputFormat:
    """The format and compression of ``path`` (a ``what`` file: ``dataset``,
    ``predictions``) from its name, or from ``given`` (a format the user named) with the
    compression still from the name. Raises ``error`` when the name implies none of
    ``formats`` (``hint`` is added to that message: how else to give the format), or
    when a format other than JSONL or CSV is compressed."""
    found = name_format(path)
    if given is not None:
        sfx = compression_suffix(path)
        found = InputFormat(given, sfx, found.suffix if found else "")
    if found is None or found.format not in formats:
        compressed = ", ".join(COMPRESSIONS)
        raise error(
            f"{path}: cannot tell the {what} format from the file name; it must end in "
            f"{_suffix_list(formats)} (JSONL and CSV also compressed: {compressed}){hint}"
        )
    if found.compression is not None and found.format not in TEXT_FORMATS:
        codec_name = COMPRESSIONS[found.compression][1]
        raise error(
            f"{path}: a {codec_name}-compressed {_FORMAT_NAMES[found.format]} file cannot be "
            f"read; decompress it first (only JSONL and CSV may be compressed: "
            f"{', '.join(COMPRESSIONS)})"
        )
    return found
