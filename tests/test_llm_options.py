"""The options object of a run: one field per keyword of ``toxeval.llm.predict``, with the
same default, so that "given" (not the default) means the same to both."""

from __future__ import annotations

import dataclasses
import inspect
from pathlib import Path

import pytest
from toxeval.llm import predict
from toxeval.llm.options import PredictOptions, predict_options


def test_every_keyword_of_predict_is_an_option_with_its_default() -> None:
    params = inspect.signature(predict).parameters
    keywords = {n: p.default for n, p in params.items() if n != "dataset"}
    fields = {f.name: f.default for f in dataclasses.fields(PredictOptions)}
    assert set(fields) - set(keywords) == {"det", "url"}
    assert {n: fields[n] for n in keywords} == keywords


def test_options_are_checked_once_and_frozen() -> None:
    opts = predict_options(detector="openai:m", base_url="http://127.0.0.1:9/v1/", timeout=5)
    assert opts.timeout == (5.0, 5.0)
    assert opts.url == "http://127.0.0.1:9/v1"
    assert opts.spec.kind == "openai"
    with pytest.raises(dataclasses.FrozenInstanceError):
        opts.concurrency = 1  # type: ignore[misc]


def test_a_bad_option_fails_before_the_dataset_is_read(tmp_path: Path) -> None:
    missing = tmp_path / "absent.jsonl"
    with pytest.raises(ValueError, match="concurrency must be an integer > 0"):
        predict(str(missing), "openai:m", tmp_path / "run.jsonl", concurrency=0)


@pytest.mark.parametrize(
    ("detector", "options", "message"),
    [
        ("lexicon", {"limit": 0}, "limit must be an integer > 0"),
        ("lexicon", {"limit": 1, "sample": 1}, "cannot be combined"),
        ("lexicon", {"dry_run": True}, "apply to API detectors"),
        ("lexicon", {"temperature": 0.5}, "--temperature apply to model servers"),
        ("openai:m", {"base_url": "ftp://x"}, "give an http:// or https:// URL"),
    ],
)
def test_every_option_check_runs_before_the_dataset_is_read(
    tmp_path: Path, detector: str, options: dict[str, object], message: str
) -> None:
    """The options are checked as a whole first: a wrong flag is reported as such, not
    after (or instead of) loading a dataset that may be large or missing."""
    missing = tmp_path / "absent.jsonl"
    with pytest.raises(ValueError, match=message):
        predict(str(missing), detector, tmp_path / "run.jsonl", **options)  # type: ignore[arg-type]


def test_request_options_are_the_keywords_of_build_request_spec() -> None:
    from toxeval.llm.request_spec import build_request_spec

    params = inspect.signature(build_request_spec).parameters
    keyword_only = {n for n, p in params.items() if p.kind is p.KEYWORD_ONLY}
    assert set(predict_options(detector="openai:m").request_options()) == keyword_only


def test_chat_options_are_the_sidecar_options_in_their_order() -> None:
    """A batch file's sidecar records the request options (the template as text, the
    completion token limit only when given), in the order sidecars always had."""
    opts = predict_options(detector="openai:m", template=Path("t.txt"), seed=3)
    chat = opts.chat_options()
    order = ["scoring", "template", "structured", "temperature", "max_tokens", "seed"]
    assert list(chat) == [*order, "samples"]
    assert chat["template"] == "t.txt" and chat["seed"] == 3
    more = predict_options(detector="openai:m", max_completion_tokens=9).chat_options()
    assert list(more)[-1] == "max_completion_tokens" and more["template"] is None
