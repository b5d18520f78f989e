"""toxeval.parsing.parse_output: the errors its docstring states (a threshold outside
[0, 1], an unknown taxonomy or mapping), and answers that say no category applies ("None
of the categories apply", "No labels apply.", ...): read as an empty label set, never
swallowing a category named after them."""

from __future__ import annotations

import numpy as np
import pytest
from toxeval.parsing import parse_output
from toxeval.taxonomy import TaxonomyError

# ----------------------------------------------------- parse_output's documented errors


def test_parse_output_docstring_states_its_errors() -> None:
    doc = " ".join((parse_output.__doc__ or "").split())
    assert "Never raises for a" not in doc
    assert "ValueError" in doc and "threshold" in doc and "TaxonomyError" in doc
    with pytest.raises(ValueError, match=r"threshold must be a number in \[0, 1\]"):
        parse_output("hate", threshold=1.5)
    with pytest.raises(TaxonomyError, match="unknown taxonomy"):
        parse_output("hate", "no-such-taxonomy")
    with pytest.raises(TaxonomyError, match="unknown mapping"):
        parse_output("hate", mapping="no-such-mapping")


# ------------------------------------------------- answers that say no category applies


@pytest.mark.parametrize(
    "text",
    [
        "None of the categories apply",
        "None of the categories apply.",
        "None of these categories apply",
        "None of the listed categories apply",
        "None of the above categories apply to this text.",
        "None of these",
        "None of them",
        "None of them apply",
        "None apply",
        "No category applies",
        "No categories apply",
        "No labels apply.",
        "No toxic categories found",
        "none of the above",
        "Categories: none of the categories apply",
    ],
)
def test_negative_phrasings_are_empty(text: str) -> None:
    r = parse_output(text)
    assert (r.status, r.labels, r.reason) == ("empty", frozenset(), None)


@pytest.mark.parametrize(
    "text",
    [
        "None of the categories apply except hate",
        "No category applies except hate",
        "none of the categories apply but hate does",
        "none of",
    ],
)
def test_a_negative_phrase_never_swallows_more_text(text: str) -> None:
    r = parse_output(text)
    assert r.status == "unparseable" and r.reason and "no category recognised" in r.reason


def test_a_negative_phrase_that_names_a_category_negates_it() -> None:
    # "None of the hate categories apply" says hate does not apply, and nothing else
    r = parse_output("None of the hate categories apply")
    assert r.status == "partial" and r.scores[0] == 0.0 and np.isnan(r.scores[1:]).all()


@pytest.mark.parametrize(
    "text",
    ["hate, none of them", "None of the categories apply; hate", "None of these apply\nhate"],
)
def test_a_negative_phrase_in_a_list_counts_as_nothing(text: str) -> None:
    r = parse_output(text)
    assert r.status == "ok" and r.labels == frozenset({"hate"})


def test_reading_predictions_does_not_import_the_parser() -> None:
    """``toxeval.parsing`` exports its statuses and error type eagerly and the parser on
    first use, so reading score dumps does not pay for the parser's modules."""
    import subprocess
    import sys

    probe = (
        "import sys, toxeval.predictions, toxeval.parsing as p\n"
        "print('toxeval.parsing.parser' in sys.modules)\n"
        "p.parse_output('hate')\n"
        "print('toxeval.parsing.parser' in sys.modules, 'parse_outputs' in dir(p))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert out.stdout.split() == ["False", "True", "True"], out.stderr
