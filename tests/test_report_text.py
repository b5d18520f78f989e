"""The one value formatter of the report's renderings (toxeval.report_text): the terminal
and Markdown report and the HTML page show a value the same way; a known flag is
``yes``/``no``, never ``n/a``, which is kept for unknown or undefined values."""

from __future__ import annotations

import math

import numpy as np
import pytest
import toxeval.html_report as html_report
import toxeval.report as report
from toxeval.report_text import format_value, level_text


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (True, "yes"),
        (False, "no"),
        (np.bool_(True), "yes"),
        (None, "n/a"),
        (math.nan, "n/a"),
        (math.inf, "n/a"),
        (-math.inf, "n/a"),
        (np.float64("nan"), "n/a"),
        (0.5, "0.5000"),
        (np.float32(0.25), "0.2500"),
        (3, "3"),
        (np.int64(7), "7"),
        ("macro", "macro"),
    ],
)
def test_format_value(value: object, text: str) -> None:
    assert format_value(value) == text


def test_digits() -> None:
    assert format_value(2 / 3, 2) == "0.67"
    assert format_value(2 / 3) == "0.6667"


def test_report_and_html_page_share_the_formatter() -> None:
    """Both renderings call the one formatter (the HTML page's used to show True as n/a)."""
    assert report._fmt is format_value
    assert html_report._fmt is format_value
    assert html_report._fmt(True) == report._fmt(True) == "yes"


def test_level_text_keeps_its_digits() -> None:
    assert [level_text(x) for x in (0.95, 0.975, 0.999)] == ["95%", "97.5%", "99.9%"]
