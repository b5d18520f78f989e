"""``--scoring json|labels|sample`` against the fake server (tests/fake_openai.py) when the
model answers in a form that leaves categories open: a JSON object of booleans or yes/no
words naming only some categories, a label list cut by ``max_tokens``, samples of which
some were cut. A category the answer does not settle is unknown (counted, left out of
every figure), never a negative."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import toxeval
from fake_openai import FakeOpenAI, item_number, write_dataset
from toxeval.llm import predict
from toxeval.llm.answers import ChatReply, score_labels, score_samples
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
    assert result.counts["no_score_cells"] == N * (TAX.k - 2)
    assert result.counts["scored"] == N


def test_a_label_list_cut_by_max_tokens_leaves_unflagged_categories_unknown(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    # odd rows: the list was cut after its first name and comma; even rows: a whole answer
    def content(i: int) -> list[tuple[str, str]]:
        name = TAX.ids[i % TAX.k]
        return [(f"{name}," if i % 2 else name, "length" if i % 2 else "stop")]

    _answer_with(fake_openai, content)
    ds, run = _run(fake_openai, tmp_path, scoring="labels", max_tokens=4)
    rows = _rows(run)
    assert rows["r1"]["parse_status"] == "partial"
    assert "truncated (max_tokens)" in rows["r1"]["parse_reason"]
    assert rows["r2"]["parse_status"] == "ok"
    assert [c for c, v in rows["r1"]["scores"].items() if v is not None] == [TAX.ids[1]]
    assert None not in rows["r2"]["scores"].values()
    result = toxeval.score(run, ds)
    assert result.counts["no_score_cells"] == (N // 2) * (TAX.k - 1)


def test_samples_cut_by_max_tokens_are_left_out_of_the_fraction(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    # three samples: "<cat>, <next>" whole, "<cat>" whole, and "<cat>" cut (it might
    # have gone on to name <next>): the score of <next> is 1/2, not 1/3
    def content(i: int) -> list[tuple[str, str]]:
        a, b = TAX.ids[i % TAX.k], TAX.ids[(i + 1) % TAX.k]
        return [(f"{a}, {b}", "stop"), (a, "stop"), (a, "length")]

    _answer_with(fake_openai, content)
    _, run = _run(fake_openai, tmp_path, scoring="sample", samples=3)
    r3 = _rows(run)["r3"]
    assert r3["scores"][TAX.ids[3]] == 1.0 and r3["scores"][TAX.ids[4]] == 0.5
    assert r3["parse_status"] == "partial"
    assert "1 of 3 samples unparseable (first: truncated (max_tokens))" in r3["parse_reason"]


def _reply(text: str, finish: str = "stop") -> ChatReply:
    return ChatReply(text, None, finish, None, None)


@pytest.mark.parametrize("text", ["none", "safe"])
def test_a_whole_none_answer_cut_at_its_end_stands(text: str) -> None:
    a = score_labels(_reply(text, "length"), TAX, "labels")
    assert a.status == "empty" and a.scores is not None and not np.isnan(a.scores).any()


def test_a_cut_answer_that_flags_nothing_is_unparseable() -> None:
    a = score_labels(_reply("The text", "length"), TAX, "labels")
    assert a.status == "unparseable" and a.scores is None
    assert a.reason is not None and a.reason.startswith("truncated (max_tokens)")


def test_a_whole_json_object_cut_in_its_trailing_prose_keeps_its_scores() -> None:
    scores = dict.fromkeys(TAX.ids, 0.25)
    a = score_labels(_reply(json.dumps(scores) + "\nBecause the", "length"), TAX, "json")
    assert a.status == "ok" and a.scores is not None
    np.testing.assert_array_equal(a.scores, np.full(TAX.k, 0.25))


def test_every_sample_cut_is_unparseable() -> None:
    a = score_samples([_reply("hate", "length")] * 2, TAX, 2)
    assert a.status == "unparseable" and a.scores is None


@pytest.mark.parametrize(
    ("text", "method"),
    [
        # S1 may be the start of S10..S14, sexual of sexual_minors: their category is unknown
        ("unsafe\nS2,S1", "llama-guard"),
        ("hate, sexual", "labels"),
    ],
)
def test_a_cut_answer_whose_last_code_may_be_torn_does_not_flag_it(text: str, method: str) -> None:
    from toxeval.parsing.llama_guard import default_llama_guard_mapping

    mapping = default_llama_guard_mapping(TAX)[0] if method == "llama-guard" else None
    a = score_labels(_reply(text, "length"), TAX, method, mapping)
    whole = score_labels(_reply(text, "stop"), TAX, method, mapping)
    alone = score_labels(_reply(text.rsplit(",", 1)[0], "stop"), TAX, method, mapping)
    assert a.status == "partial" and a.scores is not None and whole.scores is not None
    assert alone.scores is not None
    only_last = (whole.scores == 1.0) & (alone.scores != 1.0)
    assert only_last.any()  # the last code flags a category the others do not
    assert np.isnan(a.scores[only_last]).all()
    np.testing.assert_array_equal(a.scores == 1.0, alone.scores == 1.0)
    assert a.reason is not None and "the last name may be cut" in a.reason


@pytest.mark.parametrize("text", ["unsafe\nS1,", "hate, sexual\n", "violence"])
def test_a_cut_answer_whose_last_code_is_whole_keeps_it(text: str) -> None:
    from toxeval.parsing.llama_guard import default_llama_guard_mapping

    mapping = default_llama_guard_mapping(TAX)[0] if text.startswith("unsafe") else None
    method = "llama-guard" if mapping is not None else "labels"
    a = score_labels(_reply(text, "length"), TAX, method, mapping)
    whole = score_labels(_reply(text, "stop"), TAX, method, mapping)
    assert a.scores is not None and whole.scores is not None
    np.testing.assert_array_equal(a.scores == 1.0, whole.scores == 1.0)
    assert a.reason is not None and "the last name may be cut" not in a.reason


def test_a_sample_cut_by_the_content_filter_is_not_counted() -> None:
    # the second sample may have gone on to name more categories before the filter cut it
    a = score_samples([_reply("hate, violence"), _reply("hate", "content_filter")], TAX, 2)
    assert a.scores is not None and a.status == "partial"
    assert a.scores[TAX.index("violence")] == 1.0  # one parsable sample, which flags it
    assert a.reason is not None and "content filter" in a.reason
