"""``--scoring json|labels|sample`` against the fake server (tests/fake_openai.py) when the
model answers in a form that leaves categories open: a JSON object of booleans or yes/no
words naming only some categories. A category the answer does not settle is unknown (counted, left out of
every figure), never a negative."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import toxeval
from fake_openai import FakeOpenAI, item_number, write_dataset
from toxeval.llm import predict
from toxeval.taxonomy import load_taxonomy

TAX = load_taxonomy("toxeval-15")
FAST = {"retry_base_delay": 0.001}
N = 24


def _answer_with(server: FakeOpenAI, content: Callable[[int], list[tuple[str, str]]]) -> None:
    """Make ``server`` answer item ``i`` with the choices ``content(i)``: (text,
    finish_reason) pairs."""

    def chat_body(model: str, keys: tuple[str, ...], body: dict[str, Any]) -> dict[str, Any]:
        choices = [
            {"index": j, "message": {"role": "assistant", "content": text}, "finish_reason": f}
            for j, (text, f) in enumerate(content(item_number(keys[0])))
        ]
        return {"id": "chatcmpl-fake", "object": "chat.completion", "choices": choices}

    server.chat_body = chat_body  # type: ignore[method-assign]


def _run(server: FakeOpenAI, tmp_path: Path, **options: Any) -> tuple[Path, Path]:
    ds = tmp_path / "ds.jsonl"
    write_dataset(ds, N)
    run = tmp_path / "run.jsonl"
    summary = predict(ds, "openai:fake", run, base_url=server.url, **FAST, **options)
    assert summary.failed == 0
    return ds, run


def _rows(run: Path) -> dict[str, dict[str, Any]]:
    objs = [json.loads(x) for x in run.read_text().splitlines()]
    return {o["id"]: o for o in objs if "toxeval_run" not in o}


@pytest.mark.parametrize("values", [("true", "false"), ('"yes"', '"no"')])
def test_a_json_object_of_booleans_leaves_unnamed_categories_unknown(
    fake_openai: FakeOpenAI, tmp_path: Path, values: tuple[str, str]
) -> None:
    # the model names two categories: the one the row is about (yes) and the next (no)
    yes, no = values

    def content(i: int) -> list[tuple[str, str]]:
        a, b = TAX.ids[i % TAX.k], TAX.ids[(i + 1) % TAX.k]
        return [(f'{{"{a}": {yes}, "{b}": {no}}}', "stop")]

    _answer_with(fake_openai, content)
    ds, run = _run(fake_openai, tmp_path)
    rows = _rows(run)
    r5 = rows["r5"]
    assert r5["parse_status"] == "partial"
    assert [c for c, v in r5["scores"].items() if v is not None] == [TAX.ids[5], TAX.ids[6]]
    result = toxeval.score(run, ds)
    assert result.counts["unknown_cells"] == N * (TAX.k - 2)
    assert result.counts["scored"] == N
