"""Built-in detectors: the offline keyword/lexicon baseline that ``toxeval evaluate`` runs.

``LexiconDetector`` gives graded per-category scores in [0, 1] from weighted cue phrases:
for each category the weights of the cues found are summed into an evidence value, phrases
that signal a request or intent ("help me", "without getting caught") raise it, benign
contexts (history, health, safety, reporting) and known idioms ("kill the heat", "shoot a
photo", "killed it on stage") lower it, and ``1 - exp(-evidence)`` squashes it, so each
further cue raises the score less. It is a baseline: it reads words, not meaning.

The lexicon (cue patterns and weights, `data/lexicons/toxeval-15.toml`) is written from
the toxeval-15 taxonomy's concepts. For any other taxonomy
(any K >= 2) each category borrows the cues of the toxeval-15 category its id, name or an
alias resolves to, plus cues built from its own id, name, aliases and description.

Matching runs column-wise with pyarrow's RE2 kernels (``count_substring_regex`` over the
whole batch, one pass per category and weight tier), so 100k short texts take about a
second and no Python loop runs per text. Deterministic and offline.
"""

from __future__ import annotations

import functools
import os
import re
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from importlib import resources
from typing import Protocol

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from toxeval.taxonomy import Taxonomy, load_taxonomy, normalize_label

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = [
    "Detector",
    "Lexicon",
    "LexiconDetector",
    "get_detector",
    "list_detectors",
    "load_lexicon",
]


class Detector(Protocol):
    """Anything that scores texts per category, columns in taxonomy order."""

    name: str
    taxonomy: Taxonomy

    def predict_scores(self, texts: Sequence[str]) -> np.ndarray: ...


@dataclass(frozen=True)
class _Cues:
    strong: tuple[str, ...] = ()
    medium: tuple[str, ...] = ()
    damp: tuple[str, ...] = ()  # idioms / benign uses that cancel this category's cues
    gate: tuple[str, ...] = ()  # categories whose evidence must co-occur (e.g. minors + sexual)
    gate_cues: tuple[str, ...] = field(default=())  # extra cues that open the gate


@dataclass(frozen=True)
class Lexicon:
    """The baseline's cue lists and weights, read from ``data/lexicons/toxeval-15.toml``."""

    strong: float
    medium: float
    damp: float
    intent_gain: float
    benign_factor: float
    intent: tuple[str, ...]
    benign: tuple[str, ...]
    categories: dict[str, _Cues]


@functools.cache
def load_lexicon() -> Lexicon:
    """The shipped toxeval-15 lexicon (parsed once per process)."""
    raw = tomllib.loads(
        (resources.files("toxeval") / "data" / "lexicons" / "toxeval-15.toml").read_text("utf-8")
    )
    w = raw["weights"]
    fields = ("strong", "medium", "damp", "gate", "gate_cues")
    return Lexicon(
        strong=float(w["strong"]),
        medium=float(w["medium"]),
        damp=float(w["damp"]),
        intent_gain=float(w["intent_gain"]),
        benign_factor=float(w["benign_factor"]),
        intent=tuple(raw["intent"]),
        benign=tuple(raw["benign"]),
        categories={
            cid: _Cues(**{f: tuple(c.get(f, ())) for f in fields})
            for cid, c in raw["categories"].items()
        },
    )


_STOP = frozenset(
    """a an and are as at be been being by can content for from has have in including into
    is it its may meant more not of on or other out such than that the their them these this
    those to under use used which who whom with without would also any about against both
    each very only over same some what when where while others""".split()
)


def _escape(text: str) -> str:
    """Escape a phrase for RE2 (letters, digits and spaces stay readable)."""
    return re.sub(r"([.^$|?*+()\[\]{}\\/])", r"\\\1", text)


def _phrase_pattern(text: str) -> str | None:
    norm = normalize_label(text)
    if len(norm) < 3:
        return None  # one- and two-letter codes (e.g. "S", "HR") match too much
    words = [_escape(w) for w in norm.split()]
    return r"\b" + r"[\s_/-]+".join(words) + r"\w*"


def _derived_cues(cat_id: str, name: str, aliases: Sequence[str], description: str) -> _Cues:
    """Cues from a category's own words: id, name and aliases strong, description words medium."""
    strong = [p for p in (_phrase_pattern(t) for t in (cat_id, name, *aliases)) if p]
    medium: list[str] = []
    for w in re.findall(r"[a-z][a-z-]+", description.lower()):
        if w in _STOP or len(w) < 5:
            continue
        stem = w[: max(5, len(w) - 3)] if len(w) > 7 else w
        pat = r"\b" + _escape(stem) + r"\w*"
        if pat not in medium:
            medium.append(pat)
    return _Cues(strong=tuple(dict.fromkeys(strong)), medium=tuple(medium))


def _alternation(parts: Sequence[str]) -> str | None:
    return "(?:" + "|".join(f"(?:{p})" for p in parts) + ")" if parts else None


class LexiconDetector:
    """The built-in keyword/lexicon baseline: graded per-category scores in [0, 1].

    ``score[i, k] = 1 - exp(-e)`` with ``e`` the evidence for category ``k`` in text ``i``:
    the summed weights of its cue matches, minus its idiom matches, times an intent gain
    and a benign-context factor (see the module docstring). Equal texts get equal scores;
    texts with no cue score 0 everywhere (ties, which the rank metrics handle).
    """

    name = "lexicon-baseline"

    def __init__(self, taxonomy: Taxonomy | str = "toxeval-15") -> None:
        self.taxonomy = load_taxonomy(taxonomy)
        lex = self._lexicon = load_lexicon()
        base = load_taxonomy("toxeval-15")
        cues: list[_Cues] = []
        for cat in self.taxonomy.categories:
            if self.taxonomy.name == "toxeval-15" and cat.id in lex.categories:
                cues.append(lex.categories[cat.id])
                continue
            borrowed: _Cues | None = None
            for key in (cat.id, cat.name, *cat.aliases):
                hit = base.resolve(key)
                if hit is not None:
                    borrowed = lex.categories[hit]
                    break
            own = _derived_cues(cat.id, cat.name, cat.aliases, cat.description)
            if borrowed is None:
                cues.append(own)
            else:
                cues.append(
                    _Cues(
                        strong=borrowed.strong + own.strong,
                        medium=borrowed.medium + own.medium,
                        damp=borrowed.damp,
                    )
                )
        ids = self.taxonomy.ids
        self._gates: list[tuple[list[int], str | None]] = []
        for c in cues:
            gate_cols = [ids.index(g) for g in c.gate if g in ids]
            self._gates.append((gate_cols, _alternation(c.gate_cues)))
        self._strong = [_alternation(c.strong) for c in cues]
        self._medium = [_alternation(c.medium) for c in cues]
        self._damp = [_alternation(c.damp) for c in cues]
        self._intent = _alternation(lex.intent)
        self._benign = _alternation(lex.benign)

    @staticmethod
    def _count(arr: pa.Array, pattern: str | None) -> np.ndarray:
        if pattern is None:
            return np.zeros(len(arr), dtype=np.float64)
        out = pc.count_substring_regex(arr, pattern=pattern)
        return np.asarray(out.to_numpy(zero_copy_only=False), dtype=np.float64)

    def predict_scores(self, texts: Sequence[str]) -> np.ndarray:
        """(N, K) float64 scores in [0, 1], columns in taxonomy order."""
        n, k = len(texts), self.taxonomy.k
        if n == 0:
            return np.zeros((0, k), dtype=np.float64)
        arr = pc.utf8_lower(pa.array(list(texts), type=pa.string()).fill_null(""))
        patterns = [self._intent, self._benign, *self._strong, *self._medium, *self._damp]
        patterns += [g for _, g in self._gates]
        # Each pattern is one pyarrow pass over the batch; the kernels release the GIL, so
        # passes run on a few threads. Every pass is independent: the result does not
        # depend on the thread count.
        workers = min(4, os.cpu_count() or 1) if n >= 5000 else 1
        if workers > 1:
            with ThreadPoolExecutor(max_workers=workers) as pool:
                counts = list(pool.map(lambda p: self._count(arr, p), patterns))
        else:
            counts = [self._count(arr, p) for p in patterns]
        intent, benign_c = counts[0], counts[1]
        strong = counts[2 : 2 + k]
        medium = counts[2 + k : 2 + 2 * k]
        damp = counts[2 + 2 * k : 2 + 3 * k]
        gate_c = counts[2 + 3 * k :]
        lex = self._lexicon
        gain = 1.0 + lex.intent_gain * np.minimum(intent, 2.0)
        benign = lex.benign_factor ** np.minimum(benign_c, 2.0)
        evidence = np.empty((n, k), dtype=np.float64)
        gated = np.zeros((n, k), dtype=np.float64)
        for j in range(k):
            e = lex.strong * strong[j]
            m = lex.medium * medium[j]
            d = lex.damp * damp[j]
            if self._gates[j][0] or self._gates[j][1] is not None:
                gated[:, j] = np.maximum(m - d, 0.0) * gain * benign
                m = np.zeros(n)
            evidence[:, j] = np.maximum(e + m - d, 0.0) * gain * benign
        for j, (cols, gate_pat) in enumerate(self._gates):
            if not cols and gate_pat is None:
                continue
            # the weak cues of a gated category (a minor mentioned, for sexual_minors) count
            # only with co-occurring evidence: sexual content or grooming cues.
            other = evidence[:, cols].sum(axis=1) if cols else np.zeros(n)
            other = other + lex.strong * gate_c[j] * gain * benign
            evidence[:, j] += gated[:, j] * (1.0 - np.exp(-other))
        scores = 1.0 - np.exp(-evidence)
        return np.clip(scores, 0.0, 1.0)


_DETECTORS = {"lexicon": LexiconDetector, "lexicon-baseline": LexiconDetector}


def list_detectors() -> list[str]:
    """Names accepted by :func:`get_detector`."""
    return ["lexicon"]


def get_detector(name: str = "lexicon", taxonomy: Taxonomy | str = "toxeval-15") -> Detector:
    """A built-in detector by name (``"lexicon"``, the default) for ``taxonomy``."""
    cls = _DETECTORS.get(name.strip().lower())
    if cls is None:
        raise ValueError(f"unknown detector {name!r}; built-in: {', '.join(list_detectors())}")
    return cls(taxonomy)
