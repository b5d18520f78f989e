"""scikit-learn's own ranking tests, run against toxeval's functions.

We load a private copy of the installed ``sklearn/metrics/tests/test_ranking.py``
(the original module stays untouched), replace the public metric names it uses
with toxeval's drop-ins, and let pytest collect its tests from here. Every test
that calls one of the swapped functions therefore checks toxeval against
scikit-learn's own expectations (its reference implementations such as
``_average_precision`` and ``_my_lrap`` stay as oracles).

Tests that cannot pass because of a documented deviation are listed in
``DEVIATIONS`` with the reason (also in docs/deviations.md); they are xfailed
strictly, so they start failing the run if the deviation ever disappears.
"""

from __future__ import annotations

import importlib.util
import inspect
from pathlib import Path
from types import ModuleType

import pytest

pytest.importorskip("sklearn")
import sklearn
import toxeval.metrics as tm

SWAPPED = (
    "average_precision_score",
    "roc_auc_score",
    "precision_recall_curve",
    "roc_curve",
    "label_ranking_loss",
    "label_ranking_average_precision_score",
    "coverage_error",
    "dcg_score",
    "ndcg_score",
)

# test name (without parameters) -> reason. Keep in sync with docs/deviations.md.
DEVIATIONS: dict[str, str] = {}


def _load_suite() -> ModuleType:
    path = Path(sklearn.__file__).parent / "metrics" / "tests" / "test_ranking.py"
    spec = importlib.util.spec_from_file_location("toxeval_sklearn_test_ranking", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    for name in SWAPPED:
        if hasattr(tm, name):
            setattr(mod, name, getattr(tm, name))
    return mod


_suite = _load_suite()


def _uses_swapped(fn: object, seen: set[int] | None = None) -> bool:
    """True if ``fn`` (or a module-level helper it calls) names a swapped function."""
    seen = seen if seen is not None else set()
    code = getattr(fn, "__code__", None)
    if code is None or id(code) in seen:
        return False
    seen.add(id(code))
    names = set(code.co_names)
    for const in code.co_consts:
        if inspect.iscode(const):
            names |= set(const.co_names)
    if names & set(SWAPPED):
        return True
    return any(
        _uses_swapped(getattr(_suite, n), seen)
        for n in names
        if inspect.isfunction(getattr(_suite, n, None))
    )


@pytest.fixture(params=[42])
def global_random_seed(request: pytest.FixtureRequest) -> int:
    return int(request.param)


# scikit-learn's functions -> toxeval's, for parameters bound when the suite loaded.
_ORIGINALS = {id(getattr(sklearn.metrics, n)): getattr(tm, n) for n in SWAPPED if hasattr(tm, n)}


def _swap_value(v: object) -> tuple[object, bool]:
    """``v`` with scikit-learn's metric functions (also inside tuples) replaced by
    toxeval's, and whether any was."""
    if isinstance(v, tuple):
        parts = [_swap_value(x) for x in v]
        if not any(changed for _, changed in parts):
            return v, False
        return tuple(x for x, _ in parts), True
    new = _ORIGINALS.get(id(v))
    return (v, False) if new is None else (new, True)


def _swap_params(fn: object) -> bool:
    """Rebind scikit-learn's metric functions passed through ``@pytest.mark.parametrize``
    (e.g. ``test_label_ranking_avp``'s ``func``; bound before the names were swapped) to
    toxeval's. True if any was."""
    marks = getattr(fn, "pytestmark", None)
    if not marks:
        return False
    any_swapped = False
    new_marks = []
    for mark in marks:
        if mark.name == "parametrize" and len(mark.args) >= 2:
            values = []
            for v in mark.args[1]:
                if isinstance(v, type(pytest.param(0))):
                    swapped_values, changed = _swap_value(tuple(v.values))
                    nv: object = (
                        pytest.param(*swapped_values, marks=v.marks, id=v.id)  # type: ignore[misc]
                        if changed
                        else v
                    )
                else:
                    nv, changed = _swap_value(v)
                any_swapped |= changed
                values.append(nv)
            mark = pytest.mark.parametrize(mark.args[0], values, *mark.args[2:], **mark.kwargs).mark
        new_marks.append(mark)
    fn.pytestmark = new_marks  # type: ignore[attr-defined]
    return any_swapped


def _collect() -> dict[str, object]:
    out: dict[str, object] = {}
    for name, obj in vars(_suite).items():
        if not (name.startswith("test_") and inspect.isfunction(obj)):
            continue
        if not (_swap_params(obj) | _uses_swapped(obj)):
            continue  # tests of scikit-learn-only functions (det_curve, top_k, ...)
        if name in DEVIATIONS:
            obj = pytest.mark.xfail(reason=DEVIATIONS[name], strict=True)(obj)
        out[name] = obj
    return out


_collected = _collect()
globals().update(_collected)


def test_suite_was_collected() -> None:
    # Guard against silently collecting nothing (e.g. after a scikit-learn upgrade).
    assert len(_collected) >= 40, sorted(_collected)
