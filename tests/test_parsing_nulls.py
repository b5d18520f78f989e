"""An explicit null value is "no value given": never scored 0.

``{"hate": null}``, ``hate: null`` or a list item whose score is null say nothing about
the category. A row with a category it cannot score is unparseable (docs/parsing.md,
"Values after a category name"), so that the parse policy counts it; ``null="omit"``
reads the category as left out, for the LLM reader that marks it unknown (NaN) itself.
"""

from __future__ import annotations

import numpy as np
import pytest
from toxeval.parsing import parse_output, parse_outputs

NULL_ANSWERS = [
    '{"hate": null, "violence": 0.9}',
    '{"hate": null}',
    '{"scores": {"hate": null, "violence": 0.9}}',
    '{"hate": {"score": null}, "violence": {"score": 0.9}}',
    '[{"category": "hate", "score": null}, {"category": "violence", "score": 0.9}]',
    '[{"category": "hate", "flagged": null}]',
    "{'hate': None, 'violence': 0.9}",
    '{"hate": "null", "violence": 0.9}',
    "hate: null\nviolence: 0.9",
]


@pytest.mark.parametrize("text", NULL_ANSWERS)
def test_a_null_makes_the_row_unparseable_with_the_category_named(text: str) -> None:
    r = parse_output(text)
    assert r.status == "unparseable"
    assert r.reason is not None and "'hate': null (no value given)" in r.reason
    assert not r.scores.any() and not r.labels


@pytest.mark.parametrize("text", NULL_ANSWERS[:1] + NULL_ANSWERS[2:5] + NULL_ANSWERS[6:])
def test_null_omit_reads_the_category_as_left_out(text: str) -> None:
    r = parse_output(text, null="omit")
    # left out: hate is unknown (NaN), as every category the answer does not name
    assert r.status == "partial" and r.labels == {"violence"} and r.unknown == ()
    assert r.reason is not None and r.reason.startswith("no value for 14 of 15")
    assert np.isnan(r.scores[0]) and r.scores[2] == 0.9


def test_the_null_policy_does_not_leak_through_the_caches() -> None:
    text = '{"hate": null, "violence": 0.9}'
    assert parse_output(text, null="omit").status == "partial"
    assert parse_output(text).status == "unparseable"
    b = parse_outputs([text, text], null="omit")
    assert list(b.statuses) == ["partial", "partial"]
    np.testing.assert_array_equal(parse_outputs([text]).scores, 0.0)


def test_an_unknown_null_policy_is_an_argument_error() -> None:
    with pytest.raises(ValueError, match="null must be one of unparseable, omit"):
        parse_output("hate", null="zero")  # type: ignore[arg-type]


def test_none_as_a_value_is_still_a_no() -> None:
    assert parse_output("hate: none\nviolence: yes").labels == {"violence"}
    r = parse_output('{"hate": "none", "violence": true}')
    assert r.status == "partial" and r.scores[0] == 0.0 and r.labels == {"violence"}
