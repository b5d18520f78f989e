"""The runner's keywords from the command line: the fields of
:class:`toxeval.llm.options.PredictOptions` read off the parsed arguments by name.

Every runner flag of ``predict`` and ``evaluate`` (parser.py) has a field's name as its
``dest``, so adding a runner option is one field in ``llm/options.py`` and one flag in
``cli/parser.py``; tests/test_cli_run_options.py fails when a field has no flag (and is
not in :data:`toxeval.llm.request_spec.API_ONLY`) or a runner flag has no field.
"""

from __future__ import annotations

import argparse
from typing import Any

from toxeval.cli.parser import timeout_arg

__all__ = ["EVALUATE_OWN", "runner_keywords"]

# runner flags evaluate takes as keywords of its own (the system, where its answers go,
# the dataset), and the ones that belong to 'toxeval predict' only (refused by evaluate)
EVALUATE_OWN = (
    "detector",
    "run_file",
    "taxonomy",
    "data_dir",
    "rule",
    "min_annotators",
    "dry_run",
    "batch_file",
)


def runner_keywords(args: argparse.Namespace, exclude: tuple[str, ...] = ()) -> dict[str, Any]:
    """The keywords of :func:`toxeval.llm.predict` that the command line sets: each field
    of PredictOptions that ``args`` has a flag for (but those in ``exclude``), by name; a
    flag not given (None) is the field's default, and ``--timeout`` is seconds or a
    (connect, read) pair (a UsageError when it is neither)."""
    from dataclasses import fields

    from toxeval.llm.options import KEYWORDS, PredictOptions

    defaults = {f.name: f.default for f in fields(PredictOptions)}
    out: dict[str, Any] = {}
    for name in KEYWORDS:
        if name in exclude or not hasattr(args, name):
            continue
        value = getattr(args, name)
        out[name] = defaults[name] if value is None else value
    if "timeout" in out:
        out["timeout"] = timeout_arg(out["timeout"])
    return out
