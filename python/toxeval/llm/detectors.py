"""Detector specs: which system ``toxeval predict`` / ``evaluate --detector`` runs.

=========================  ==========================================================
``lexicon``                the offline lexicon baseline (:mod:`toxeval.detectors`)
``openai:MODEL``           a chat model behind an OpenAI-compatible ``/chat/completions``
``openai-moderation[:M]``  OpenAI's ``/moderations`` (default ``omni-moderation-latest``)
``llama-guard:MODEL``      a Llama Guard model served behind ``/chat/completions``
``policy-guard:MODEL``     a single-policy guard (ShieldGemma, Granite Guardian), K requests
``python:module:attr``     a Python callable, class or instance (see :class:`LocalSystem`)
``onnx:PATH``              an ONNX sequence classifier (:mod:`toxeval.classifiers`)
``hf:PATH``                a transformers sequence classifier (:mod:`toxeval.classifiers`)
=========================  ==========================================================

``lexicon``, ``python:``, ``onnx:`` and ``hf:`` run in this process (local); the others are
sent to a server.
"""

from __future__ import annotations

import functools
import importlib
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from toxeval.classifiers.options import ModelOptions
from toxeval.files import file_sha256
from toxeval.llm.local_answers import LOCAL_BATCH, LocalAnswers
from toxeval.taxonomy import Taxonomy

if TYPE_CHECKING:
    from toxeval.classifiers.loader import LocalClassifier

__all__ = ["DetectorSpec", "LocalAnswers", "LocalSystem", "parse_detector"]

Kind = Literal[
    "lexicon", "openai", "openai-moderation", "llama-guard", "policy-guard", "python", "onnx", "hf"
]
DEFAULT_MODERATION_MODEL = "omni-moderation-latest"
SPEC_FORMS = (
    "lexicon, openai:MODEL, openai-moderation[:MODEL], llama-guard:MODEL, policy-guard:MODEL, "
    "python:module:attr, onnx:PATH, hf:PATH"
)


@dataclass(frozen=True)
class DetectorSpec:
    """A parsed detector spec. ``model`` is the model name (API kinds) and ``target`` the
    ``module:attr`` of a ``python:`` spec or the model path of ``onnx:`` / ``hf:``."""

    kind: Kind
    text: str
    model: str | None = None
    target: str | None = None

    @property
    def remote(self) -> bool:
        return self.kind in ("openai", "openai-moderation", "llama-guard", "policy-guard")

    @property
    def classifier(self) -> bool:
        """A local sequence-classification model (``onnx:``, ``hf:``)."""
        return self.kind in ("onnx", "hf")


def parse_detector(spec: str) -> DetectorSpec:
    """Parse ``spec``; a ValueError names the accepted forms."""
    if not isinstance(spec, str):
        raise TypeError(f"a detector spec is a str ({SPEC_FORMS}), got {type(spec).__name__}")
    s = spec.strip()
    head, sep, rest = s.partition(":")
    head = head.lower()
    rest = rest.strip()
    if head in ("lexicon", "lexicon-baseline") and not sep:
        return DetectorSpec("lexicon", s)
    if head == "openai-moderation":
        if sep and not rest:
            raise ValueError(f"detector {spec!r}: give a model after ':' or leave it out")
        return DetectorSpec("openai-moderation", s, model=rest or DEFAULT_MODERATION_MODEL)
    if head in ("openai", "llama-guard", "policy-guard"):
        if not rest:
            raise ValueError(f"detector {spec!r}: name the model, e.g. {head}:MODEL")
        return DetectorSpec(head, s, model=rest)  # type: ignore[arg-type]
    if head == "python":
        module, colon, attr = rest.rpartition(":")
        if not colon or not module or not attr:
            raise ValueError(
                f"detector {spec!r}: a Python detector is python:module:attr "
                "(e.g. python:mypackage.models:score_batch)"
            )
        return DetectorSpec("python", s, target=rest)
    if head in ("onnx", "hf"):
        if not rest:
            raise ValueError(f"detector {spec!r}: give the model directory, e.g. {head}:./model")
        return DetectorSpec(head, s, target=rest)  # type: ignore[arg-type]
    raise ValueError(f"unknown detector {spec!r}; accepted: {SPEC_FORMS}")


def _check_finite(
    arr: np.ndarray, where: str, taxonomy: Taxonomy, ids: Sequence[str] | None
) -> None:
    """A PredictionError for a NaN or infinite score: a detector's array is computed by
    code, so such a score is a bug there (a 0/0, a failed model call), not an answer to
    count as unparseable; ``toxeval.evaluate`` with a detector object refuses it too."""
    bad = ~np.isfinite(arr)
    if not bad.any():
        return
    from toxeval.predictions import PredictionError

    j, c = (int(v) for v in np.argwhere(bad)[0])
    row = f"row {ids[j]!r}" if ids is not None else f"text {j + 1}"
    more = int(bad.any(axis=1).sum()) - 1
    raise PredictionError(
        f"{where} returned a score of {float(arr[j, c])} for {row}, category "
        f"{taxonomy.ids[c]!r}"
        + (f" (and for {more} other rows of the batch)" if more else "")
        + "; scores must be finite numbers: fix the detector (rows answered before it are "
        "kept in the run file)"
    )


class LocalSystem:
    """A system run in this process over batches of texts.

    ``lexicon``: :class:`toxeval.detectors.LexiconDetector`. ``python:module:attr``: the
    attribute is imported; a class is instantiated without arguments; an object with
    ``predict_scores`` is called through it, else it must be callable. Called with a list
    of texts, it returns an (N, K) array of scores (taxonomy order), a list of N label
    lists (category ids, names or aliases: scored 1/0), or a list of N raw text answers
    (read by :func:`toxeval.parsing.parse_outputs`).

    A ``python:`` detector's :meth:`fingerprint` (hence every request hash of its run
    file) holds the sha256 of the files of the modules that define it
    (:func:`source_sha256`) and the ``__version__`` it declares
    (:func:`declared_version`): editing the code, or bumping the version for what the
    files do not show (weights, other modules), makes a rerun score every row again."""

    def __init__(
        self, spec: DetectorSpec, taxonomy: Taxonomy, model_options: ModelOptions | None = None
    ) -> None:
        self.spec = spec
        self.taxonomy = taxonomy
        self.version: str | None = None
        self.model: LocalClassifier | None = None
        # python: only: {module: sha256 of its file} of the modules that define the
        # detector, None when one of them has no file (see source_sha256)
        self.sources: dict[str, str] | None = None
        if spec.kind == "lexicon":
            from toxeval.detectors import LexiconDetector

            det = LexiconDetector(taxonomy)
            self._fn: Callable[[list[str]], Any] = det.predict_scores
            self.version = _toxeval_version()
        elif spec.kind == "python":
            module, named, self._fn = _import_callable(str(spec.target))
            self.version = declared_version(str(spec.target), module, named)
            self.sources = source_sha256(module, named, self._fn)
        elif spec.classifier:
            from toxeval.classifiers.loader import load_classifier

            self.model = load_classifier(spec, taxonomy, model_options or ModelOptions())
        else:
            raise ValueError(f"{spec.text!r} is not a local detector")

    @property
    def chunk_rows(self) -> int:
        """Rows handed to the system per call (one progress step, one run-file flush): a
        local classifier gets 16 batches, so the texts it sorts by length fill batches of
        close lengths."""
        if self.model is None:
            return LOCAL_BATCH
        return max(LOCAL_BATCH, 16 * self.model.batch_size)

    @property
    def versioned(self) -> bool:
        """Whether a change of the detector changes :meth:`fingerprint` (always for
        ``lexicon``; for ``python:``, when its sources were read or it declares a
        version). An unversioned detector is never resumed from a run file."""
        return self.spec.kind != "python" or self.sources is not None or self.version is not None

    def fingerprint(self) -> dict[str, Any]:
        from toxeval.llm.rows import taxonomy_sha256

        fp: dict[str, Any] = {
            "detector": self.spec.text,
            "version": self.version,
            "taxonomy": taxonomy_sha256(self.taxonomy),
        }
        if self.spec.kind == "python":
            fp["sources"] = self.sources
        if self.model is not None:
            fp.update(self.model.fingerprint())
        return fp

    def __call__(self, texts: list[str], ids: Sequence[str] | None = None) -> LocalAnswers:
        if self.model is not None:
            return self.model(texts)
        try:
            out = self._fn(list(texts))
        except (Exception, SystemExit) as e:  # the user's code: an error of theirs, not ours
            raise ValueError(
                f"detector {self.spec.text!r} raised {_said(e)} (rows answered before it are "
                "kept in the run file)"
            ) from e
        n, k = len(texts), self.taxonomy.k
        where = f"detector {self.spec.text!r}"
        if isinstance(out, np.ndarray) or _is_numeric_rows(out):
            arr = np.asarray(out, dtype=np.float64)
            if arr.shape != (n, k):
                raise ValueError(
                    f"{where} returned scores of shape {arr.shape} for {n} texts; expected "
                    f"({n}, {k}) (taxonomy {self.taxonomy.name!r})"
                )
            _check_finite(arr, where, self.taxonomy, ids)
            return LocalAnswers(arr, ["ok"] * n, [None] * n, [None] * n, "scores", [True] * n)
        if not isinstance(out, Sequence) or isinstance(out, str) or len(out) != n:
            got = len(out) if isinstance(out, Sequence) else type(out).__name__
            raise ValueError(
                f"{where} must return an ({n}, {k}) array, {n} label lists or {n} strings; "
                f"got {got}"
            )
        if all(isinstance(v, str) for v in out):
            from toxeval.parsing import parse_outputs

            batch = parse_outputs(list(out), self.taxonomy)
            scores = np.array(batch.scores, dtype=np.float64)
            bad = np.asarray(batch.statuses) == "unparseable"
            scores[bad] = np.nan
            return LocalAnswers(
                scores,
                [str(s) for s in batch.statuses],
                list(batch.reasons),
                [str(t) for t in out],
                "text",
                [bool(g) for g in np.asarray(batch.graded_rows, dtype=bool)],
            )
        scores = np.zeros((n, k), dtype=np.float64)
        for i, labels in enumerate(out):
            if isinstance(labels, str) or not isinstance(labels, Sequence | set | frozenset):
                raise ValueError(
                    f"{where}: item {i} is {type(labels).__name__}; a label list is a list of "
                    "category ids, names or aliases"
                )
            for lab in labels:
                cid = self.taxonomy.resolve(str(lab))
                if cid is None:
                    raise ValueError(
                        f"{where}: item {i}: unknown category {lab!r} "
                        f"(taxonomy {self.taxonomy.name!r}: {', '.join(self.taxonomy.ids)})"
                    )
                scores[i, self.taxonomy.index(cid)] = 1.0
        return LocalAnswers(scores, ["ok"] * n, [None] * n, [None] * n, "labels", [False] * n)


def _is_numeric_rows(out: Any) -> bool:
    """True for a non-empty sequence whose first item is a non-empty row of numbers."""
    if not isinstance(out, Sequence) or isinstance(out, str) or len(out) == 0:
        return False
    first = out[0]
    return (
        isinstance(first, Sequence | np.ndarray)
        and not isinstance(first, str)
        and len(first) > 0
        and all(isinstance(v, (int, float, np.number)) and not isinstance(v, bool) for v in first)
    )


def _toxeval_version() -> str:
    from toxeval._core import __version__

    return str(__version__)


def _said(e: BaseException) -> str:
    """An exception of the user's code as one line: its class and message (a
    ``SystemExit``'s status: the detector called ``sys.exit``, which must not end the
    run as if it had finished)."""
    return f"{type(e).__name__}: {e}"


def _import_callable(target: str) -> tuple[ModuleType, Any, Callable[[list[str]], Any]]:
    """The module of ``target`` (``module:attr``), the object it names, and what is called."""
    module_name, _, attr = target.rpartition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as e:
        raise ValueError(f"detector python:{target}: cannot import {module_name!r}: {e}") from None
    except (Exception, SystemExit) as e:  # the user's module failed (or exited) on import
        raise ValueError(
            f"detector python:{target}: importing {module_name!r} raised {_said(e)}"
        ) from e
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise ValueError(f"detector python:{target}: {module_name!r} has no {attr!r}")
        obj = getattr(obj, part)
    named = obj
    if inspect.isclass(obj):
        try:
            obj = obj()
        except TypeError as e:
            raise ValueError(
                f"detector python:{target}: the class cannot be built without arguments ({e}); "
                "point at an instance or a function instead"
            ) from None
        except (Exception, SystemExit) as e:
            raise ValueError(f"detector python:{target}: building {attr} raised {_said(e)}") from e
    method = getattr(obj, "predict_scores", None)
    if callable(method):
        return module, named, method
    if not callable(obj):
        raise ValueError(
            f"detector python:{target}: {type(obj).__name__} is not callable and has no "
            "predict_scores(texts)"
        )
    return module, named, obj


def declared_version(target: str, module: ModuleType, named: Any) -> str | None:
    """The version a ``python:`` detector declares: ``__version__`` of the object the
    spec names (function, class or instance), else of the spec's module; None when
    neither has one. A str or a number."""
    for owner in (named, module):
        value = getattr(owner, "__version__", None)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise ValueError(
                f"detector python:{target}: __version__ must be a str or a number, got "
                f"{type(value).__name__}"
            )
        return str(value)
    return None


def source_sha256(module: ModuleType, named: Any, fn: Callable[..., Any]) -> dict[str, str] | None:
    """``{module name: sha256 of its file}`` for the spec's module and the modules that
    define the object it names and the function called (a bound method's class, a
    callable instance's class, a ``functools.partial``'s function). A module's file is
    its source (``.py``), else what it was loaded from (a compiled extension); None
    when a module has no file (typed into an interpreter's ``__main__``, a
    built-in), so a change could not be seen.

    Within one process the source of an imported module may change without the code
    that runs changing (Python does not import a module twice): a file whose hash
    differs from the one read when this same object was first seen is refused."""
    modules: dict[str, ModuleType] = {}
    for owner in (module, _definer(named), _definer(fn)):
        mod = owner if isinstance(owner, ModuleType) else inspect.getmodule(owner)
        if mod is None:
            return None
        modules[mod.__name__] = mod
    out: dict[str, str] = {}
    for name, mod in sorted(modules.items()):
        path = _module_file(mod)
        if path is None:
            return None
        digest = file_sha256(path)
        _, first = _SEEN.setdefault((name, id(named)), (named, digest))
        if first != digest:
            raise ValueError(
                f"{path} changed after {name} was imported in this process, so the code "
                "that would run is not the code in the file: reload the module "
                "(importlib.reload) or start a new Python process"
            )
        out[name] = digest
    return out


#: (module name, id of the named object) -> (the object, its module's file sha256 when
#: first seen); the object is kept so its id is not reused
_SEEN: dict[tuple[str, int], tuple[Any, str]] = {}


def _definer(obj: Any) -> Any:
    """What defines ``obj``'s code: a function or class as is, a ``functools.partial``'s
    function, a bound method's function, an instance's class."""
    while isinstance(obj, functools.partial):
        obj = obj.func
    obj = getattr(obj, "__func__", obj)
    if isinstance(obj, ModuleType) or inspect.isclass(obj) or inspect.isroutine(obj):
        return obj
    return type(obj)


def _module_file(mod: ModuleType) -> Path | None:
    try:
        found = inspect.getsourcefile(mod) or inspect.getfile(mod)
    except TypeError:  # a built-in module
        return None
    path = Path(found)
    return path if path.is_file() else None
