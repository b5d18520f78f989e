"""NPY and NPZ prediction dumps into numpy arrays: the scores, and from an NPZ an
optional ``ids`` array; headers are checked against the bytes there are before numpy
allocates anything."""

from __future__ import annotations

import zipfile
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from toxeval.predictions.schema import LABEL_COLUMNS, SCORE_COLUMNS, PredictionError

__all__ = ["read_numpy_arrays"]


def _check_npy_size(f: Any, available: int, path: Path, what: str) -> None:
    """Compare the size an NPY header declares with the bytes there are, before numpy
    allocates the array: a corrupt or lying header (a shape of 1e11 rows over 48 bytes)
    is an error naming the file, not a MemoryError."""
    from numpy.lib import format as npformat

    start = f.tell()
    version = npformat.read_magic(f)
    if version == (1, 0):
        shape, _, dtype = npformat.read_array_header_1_0(f)
    elif version == (2, 0):
        shape, _, dtype = npformat.read_array_header_2_0(f)
    else:
        return  # left to numpy (its message names the version)
    header = f.tell() - start
    f.seek(start)
    if dtype.hasobject:
        return  # numpy refuses pickled objects itself
    count = 1
    for d in shape:
        count *= int(d)
    if count < 0:
        raise PredictionError(f"{path}: {what}: the header declares a negative shape {shape}")
    need = count * dtype.itemsize
    if need > available - header:
        raise PredictionError(
            f"{path}: {what}: the header declares shape {shape} of {dtype} ({need} bytes), "
            f"but the file holds {max(available - header, 0)} bytes of data; it is "
            "truncated or corrupt"
        )


def read_numpy_arrays(path: Path, fmt: str) -> tuple[np.ndarray, np.ndarray | None]:
    """Scores (and, from an NPZ, optional ids) from an .npy / .npz file."""
    size = path.stat().st_size
    if size == 0:
        raise PredictionError(f"{path}: empty file (no predictions)")
    try:
        if fmt == "npy":
            with open(path, "rb") as f:
                _check_npy_size(f, size, path, "NPY")
                return np.load(f, allow_pickle=False), None
        with np.load(path, allow_pickle=False) as z:
            names = list(z.files)
            key = next((n for n in SCORE_COLUMNS + LABEL_COLUMNS if n in names), None)
            if key is None:
                non_id = [n for n in names if n not in ("ids", "id")]
                if len(non_id) != 1:
                    raise PredictionError(
                        f"{path}: NPZ holds {names}; name the score array 'scores' "
                        f"(and optionally the ids 'ids')"
                    )
                key = non_id[0]
            if "ids" in names and "id" in names:
                raise PredictionError(
                    f"{path}: NPZ holds both 'id' and 'ids'; keep the one array of ids to join by"
                )
            ids_key = "ids" if "ids" in names else ("id" if "id" in names else None)
            # every other array must be a companion prediction array (labels beside the
            # scores): ids saved under another name would otherwise be passed over and
            # the rows matched by row order
            companions = LABEL_COLUMNS if key in SCORE_COLUMNS else ()
            unread = [n for n in names if n not in (key, ids_key, *companions)]
            if unread:
                raise PredictionError(
                    f"{path}: NPZ arrays {', '.join(map(repr, unread))} are not read; an NPZ "
                    f"holds the scores ({key!r}) and optionally their ids as 'ids' (rename "
                    "the id array to 'ids', or remove the other arrays: without 'ids' rows "
                    "are matched by row order)"
                )
            for member in (key, ids_key):
                if member is None:
                    continue
                info = z.zip.getinfo(member + ".npy")
                with z.zip.open(info) as f:
                    _check_npy_size(f, info.file_size, path, f"array {member!r}")
            return z[key], (z[ids_key] if ids_key else None)
    except PredictionError:
        raise
    except (ValueError, OSError, EOFError, zipfile.BadZipFile, zlib.error) as e:
        raise PredictionError(f"{path}: cannot read as {fmt.upper()}: {e}") from None
