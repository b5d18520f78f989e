"""Optional dependencies of the local classifiers, imported when a detector needs them,
with an error that names the extra to install (``toxeval[onnx]``, ``toxeval[hf]``)."""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["MissingExtraError", "require"]


class MissingExtraError(ValueError):
    """A detector needs a package that is not installed (exit code 2 in the CLI)."""


def require(module: str, extra: str, detector: str) -> ModuleType:
    """``import module``, or a :class:`MissingExtraError` naming ``toxeval[extra]``."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise MissingExtraError(
            f"the {detector} detector needs {module.split('.')[0]} ({e}); install it with: "
            f'pip install "toxeval[{extra}]"'
        ) from None
