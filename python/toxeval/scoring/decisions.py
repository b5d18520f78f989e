"""The figures :func:`toxeval.score` and :func:`toxeval.evaluate` add on request, as the
command line's flags do: slices (``slice_by=``, ``--slice-by``), operating points
(``operating_point=`` / ``thresholds_from=``, ``--operating-point`` / ``--thresholds-from``)
and the cost of a run at a price table (``prices=``, ``--prices``).

:func:`decision_options` reads and checks them before any work (a model run is not spent
to be refused at the end); :func:`add_decisions` adds them to a scored result. Every
mistake is a ``ValueError`` naming the keyword.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toxeval.datasets import Dataset
    from toxeval.llm.prices import Prices
    from toxeval.operating_points import Target
    from toxeval.scoring.result import EvaluationResult

__all__ = [
    "DecisionOptions",
    "add_decisions",
    "check_dataset",
    "check_prices_model",
    "decision_options",
]


#: ``thresholds_from`` of a result whose thresholds were given as a mapping.
MAPPING = "(a mapping)"


def _keyword(message: str, flag: str, keyword: str) -> str:
    """A message of the command line's checks, naming the keyword instead of the flag."""
    return keyword + message.removeprefix(flag) if message.startswith(flag) else message


def _source(options: DecisionOptions) -> str:
    """Where given thresholds came from, as messages name it."""
    src = options.thresholds_source
    return "thresholds_from" if src == MAPPING else f"thresholds_from {src}"


@dataclass(frozen=True)
class DecisionOptions:
    """The requests read and checked: slice columns, a target or given thresholds (and
    where they came from), a price table (and its file)."""

    slice_by: tuple[str, ...] = ()
    target: Target | None = None
    thresholds: dict[str, float | None] | None = None
    thresholds_source: str | None = None
    prices: Prices | None = None
    prices_source: str | None = None

    def __bool__(self) -> bool:
        return (
            bool(self.slice_by)
            or self.target is not None
            or self.thresholds is not None
            or (self.prices is not None)
        )


def decision_options(
    slice_by: Sequence[str] | str | None = None,
    operating_point: str | None = None,
    thresholds_from: str | Path | Mapping[str, float | None] | None = None,
    prices: str | Path | None = None,
) -> DecisionOptions:
    """The keywords checked: ``slice_by`` column names (a str is one column);
    ``operating_point`` as ``precision=0.9``, ``recall=0.8`` or ``fpr=0.05``;
    ``thresholds_from`` a thresholds file, a results folder whose results.json chose
    thresholds, or a mapping category id -> threshold (or None); ``prices`` a price
    table file (docs/llm.md). ``operating_point`` and ``thresholds_from`` exclude
    each other."""
    from toxeval import operating_points as op

    if isinstance(slice_by, str):
        slice_by = (slice_by,)
    if slice_by is not None and not isinstance(slice_by, (list, tuple)):
        raise ValueError(f"slice_by must be column names (str), got {slice_by!r}")
    columns = tuple(slice_by or ())
    if not all(isinstance(c, str) for c in columns):
        raise ValueError(f"slice_by must be column names (str), got {slice_by!r}")
    if operating_point is not None and thresholds_from is not None:
        raise ValueError(
            "give operating_point= (choose thresholds here) or thresholds_from= (measure "
            "thresholds chosen elsewhere), not both"
        )
    target = thresholds = source = None
    if operating_point is not None:
        if not isinstance(operating_point, str):
            raise ValueError(
                f"operating_point must be a str such as 'precision=0.9', got {operating_point!r}"
            )
        try:
            target = op.parse_target(operating_point)
        except ValueError as e:
            raise ValueError(_keyword(str(e), "--operating-point", "operating_point=")) from None
    if isinstance(thresholds_from, Mapping):
        source = MAPPING
        thresholds = op.read_thresholds_mapping(dict(thresholds_from), "thresholds_from")
    elif thresholds_from is not None:
        if not isinstance(thresholds_from, (str, Path)):
            raise ValueError(
                "thresholds_from must be a file, a results folder or a mapping category id "
                f"-> threshold, got {thresholds_from!r}"
            )
        source = str(thresholds_from)
        try:
            thresholds = op.thresholds_of(thresholds_from)
        except ValueError as e:
            raise ValueError(f"thresholds_from: {e}") from None
    table = None
    if prices is not None:
        from toxeval.llm.prices import read_prices

        if not isinstance(prices, (str, Path)):
            raise ValueError(f"prices must be a price table file, got {prices!r}")

        try:
            table = read_prices(prices)
        except ValueError as e:
            raise ValueError(f"prices: {e}") from None
    return DecisionOptions(
        slice_by=columns,
        target=target,
        thresholds=thresholds,
        thresholds_source=source,
        prices=table,
        prices_source=None if prices is None else str(prices),
    )


def check_dataset(options: DecisionOptions, dataset: Dataset) -> None:
    """A ``ValueError`` for a slice column ``dataset`` does not have (listing those it
    has) or a given threshold of a category it does not have: checked before a
    detector runs."""
    if options.slice_by:
        from toxeval.slices import check_slice_columns

        try:
            check_slice_columns(dataset, options.slice_by)
        except ValueError as e:
            raise ValueError(_keyword(str(e), "--slice-by", "slice_by=")) from None
    unknown = sorted(set(options.thresholds or ()) - set(dataset.taxonomy.ids))
    if unknown:
        raise ValueError(
            f"{_source(options)}: categories the taxonomy {dataset.taxonomy.name} does not "
            f"have: {', '.join(unknown)}"
        )


#: Why ``prices=`` is refused for predictions that are not a run file's answers.
NO_RUN_FILE = (
    "prices= prices the answers of a run file (toxeval.llm.predict, or evaluate "
    "with a model); these predictions record no token usage"
)


def check_prices_model(options: DecisionOptions, detector: Any, *, runs: bool = True) -> None:
    """With ``prices=``, the detector must run into a run file (``runs``: not an object
    or the lexicon scored in process, which record no token usage), and a detector spec
    that names its model (``openai:MODEL``) must have a row in the table: checked
    before the detector runs or any request is sent."""
    if options.prices is not None and not runs:
        raise ValueError(NO_RUN_FILE)
    if options.prices is None or not isinstance(detector, str):
        return
    from toxeval.llm.detectors import parse_detector

    try:
        spec = parse_detector(detector)
    except (TypeError, ValueError):
        return  # the run refuses the spec with its own message
    if spec.model is not None and spec.model not in options.prices:
        _price({"billable": {}}, options, spec.model)


def _price(cost: dict[str, Any], options: DecisionOptions, model: Any) -> dict[str, Any]:
    """The priced block, its errors naming ``prices=``."""
    from toxeval.llm.prices import price_block

    assert options.prices is not None
    try:
        return price_block(cost, options.prices, model, str(options.prices_source))
    except ValueError as e:
        raise ValueError(_keyword(str(e), "--prices", "prices=")) from None


def add_decisions(
    result: EvaluationResult,
    dataset: Dataset,
    options: DecisionOptions,
    *,
    n_resamples: int,
    seed: int,
    confidence_level: float,
) -> EvaluationResult:
    """``result`` with the slices, operating points and priced cost ``options`` ask for
    (each needs the scored rows in memory; a price table needs a run file's answers).
    Slice intervals use the report's resamples, seed and level."""
    if options.slice_by:
        from toxeval.slices import add_slices

        add_slices(
            result,
            dataset,
            options.slice_by,
            n_resamples=n_resamples,
            seed=seed,
            confidence_level=confidence_level,
        )
    if options.target is not None or options.thresholds is not None:
        _operating_points(result, options)
    if options.prices is not None:
        if result.cost is None:
            raise ValueError(NO_RUN_FILE)
        model = (result.system.get("fingerprint") or {}).get("model")
        result.cost["prices"] = _price(result.cost, options, model)
    return result


def _operating_points(result: EvaluationResult, options: DecisionOptions) -> None:
    from toxeval import operating_points as op

    rows = result.rows
    if rows is None:
        raise ValueError(
            "operating_point= and thresholds_from= need the scored rows in memory (not out "
            "of core or on Dask)"
        )
    points = op.points_for(
        rows.y_true,
        rows.scores,
        rows.mask,
        list(result.config["taxonomy"]["ids"]),
        target=options.target,
        thresholds=options.thresholds,
        source=_source(options),
    )
    result.operating_points = op.section(
        points, target=options.target, thresholds_from=options.thresholds_source
    )
