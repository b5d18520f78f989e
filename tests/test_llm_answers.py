"""Reading chat-completion and moderation bodies into per-category scores.

The bodies follow what OpenAI, vLLM, llama.cpp's server and Ollama return (field sets,
nesting, ``reasoning_content``, ``refusal``, logprobs entries); every expected score is
computed here from the scripted answer.
"""

from __future__ import annotations

import contextlib
import io
import math
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from toxeval.llm.requests import Answer, Item, RequestSpec, Unit, plan, read
from toxeval.taxonomy import Taxonomy

M8 = ("s", "h", "v", "hr", "sh", "s3", "h2", "v2")


# --------------------------------------------------------------------------- body builders


def openai_body(
    content: Any,
    *,
    finish: str = "stop",
    refusal: str | None = None,
    logprobs: list[dict[str, Any]] | None = None,
    **message: Any,
) -> dict[str, Any]:
    """OpenAI /v1/chat/completions."""
    return {
        "id": "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG",
        "object": "chat.completion",
        "created": 1741570283,
        "model": "gpt-4o-mini-2024-07-18",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": content,
                    "refusal": refusal,
                    "annotations": [],
                    **message,
                },
                "logprobs": None if logprobs is None else {"content": logprobs, "refusal": None},
                "finish_reason": finish,
            }
        ],
        "usage": {"prompt_tokens": 812, "completion_tokens": 96, "total_tokens": 908},
        "service_tier": "default",
        "system_fingerprint": "fp_06737a9306",
    }


def vllm_body(
    content: Any, *, reasoning: str | None = None, finish: str = "stop"
) -> dict[str, Any]:
    """vLLM's OpenAI-compatible server (with a reasoning parser, reasoning_content is set)."""
    return {
        "id": "chatcmpl-3f1c0a5e8b2d4e71a0c9d6b8e4f2a1c7",
        "object": "chat.completion",
        "created": 1741570300,
        "model": "meta-llama/Llama-Guard-3-8B",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "reasoning_content": reasoning,
                    "content": content,
                    "tool_calls": [],
                },
                "logprobs": None,
                "finish_reason": finish,
                "stop_reason": None,
            }
        ],
        "usage": {"prompt_tokens": 240, "total_tokens": 250, "completion_tokens": 10},
        "prompt_logprobs": None,
    }


def llamacpp_body(content: str, *, finish: str = "stop") -> dict[str, Any]:
    """llama.cpp's llama-server /v1/chat/completions."""
    return {
        "choices": [
            {
                "finish_reason": finish,
                "index": 0,
                "message": {"role": "assistant", "content": content},
            }
        ],
        "created": 1741570320,
        "model": "gpt-3.5-turbo",
        "system_fingerprint": "b4880-e0dbec0b",
        "object": "chat.completion",
        "usage": {"completion_tokens": 42, "prompt_tokens": 512, "total_tokens": 554},
        "id": "chatcmpl-Zq7vJ2bW3yX1kT9uR5nM8pL4aH6sD0fG",
        "timings": {"prompt_n": 512, "prompt_ms": 301.2, "predicted_n": 42, "predicted_ms": 880.5},
    }


def ollama_body(content: str, *, model: str = "llama-guard3:8b", n: int = 1) -> dict[str, Any]:
    """Ollama's OpenAI-compatible endpoint (it returns one choice whatever ``n`` asks)."""
    return {
        "id": "chatcmpl-412",
        "object": "chat.completion",
        "created": 1741570340,
        "model": model,
        "system_fingerprint": "fp_ollama",
        "choices": [
            {
                "index": i,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
            for i in range(n)
        ],
        "usage": {"prompt_tokens": 300, "completion_tokens": 5, "total_tokens": 305},
    }


def token(text: str, lp: float, top: dict[str, float] | None = None) -> dict[str, Any]:
    """One logprobs.content entry (OpenAI/vLLM shape, with the token's UTF-8 bytes)."""
    alts = top if top is not None else {text: lp}
    return {
        "token": text,
        "logprob": lp,
        "bytes": list(text.encode("utf-8")),
        "top_logprobs": [
            {"token": t, "logprob": v, "bytes": list(t.encode("utf-8"))}
            for t, v in sorted(alts.items(), key=lambda kv: -kv[1])
        ],
    }


def answer_lines(lines: list[tuple[str, str, dict[str, float]]]) -> list[dict[str, Any]]:
    """Tokens of ``<id>: <word>`` lines as a BPE tokenizer splits them: id, ':', ' word', newline;
    the ' word' token carries the given top alternatives."""
    out: list[dict[str, Any]] = []
    for cid, word, alts in lines:
        out.append(token(cid, -1e-4))
        out.append(token(":", -1e-6))
        out.append(token(" " + word, alts[" " + word], alts))
        out.append(token("\n", -1e-3))
    return out


def content_of(tokens: list[dict[str, Any]]) -> str:
    return "".join(t["token"] for t in tokens)


def read_one(spec: RequestSpec, body: Any, item: Item | None = None) -> Answer:
    (unit,) = plan(spec, [item or Item("row-1", "some text")])
    (answer,) = read(spec, unit, [body])
    return answer


def p_yes(yes: list[float], no: list[float]) -> float:
    y = sum(math.exp(v) for v in yes)
    n = sum(math.exp(v) for v in no)
    return y / (y + n)


# --------------------------------------------------------------------------- json


def test_json_scores_are_read_exactly(moderation8: Taxonomy) -> None:
    spec = RequestSpec("chat", "gpt-4o-mini", moderation8, structured=True)
    content = (
        '{"s": 0.02, "h": 0.91, "v": 0.35, "hr": 0.6, "sh": 0.0, "s3": 0.0, "h2": 0.4, "v2": 0.05}'
    )
    a = read_one(spec, openai_body(content))
    assert a.status == "ok" and a.reason is None and a.graded and a.method == "json"
    assert a.scores is not None
    np.testing.assert_array_equal(a.scores, [0.02, 0.91, 0.35, 0.6, 0.0, 0.0, 0.4, 0.05])
    assert a.text == content and a.reasoning is None


def test_json_categories_left_out_or_null_are_unknown_not_zero(moderation8: Taxonomy) -> None:
    spec = RequestSpec("chat", "qwen2.5:7b", moderation8)
    content = '```json\n{"scores": {"s": 0.1, "h": 0.8, "v": null, "hr": 0.3, "sh": 0.0}}\n```'
    a = read_one(spec, llamacpp_body(content))
    assert a.status == "partial"
    assert a.reason is not None and a.reason.endswith("no score for: v, s3, h2, v2")
    assert a.scores is not None
    np.testing.assert_array_equal(a.scores[[0, 1, 3, 4]], [0.1, 0.8, 0.3, 0.0])
    assert np.isnan(a.scores[[2, 5, 6, 7]]).all()


def test_python_style_objects_also_leave_missing_categories_unknown(moderation8: Taxonomy) -> None:
    spec = RequestSpec("chat", "mistral:7b", moderation8)
    a = read_one(spec, ollama_body("{'s': 0.2, 'h': 0.7, 'v': None,}", model="mistral:7b"))
    assert a.status == "partial" and a.reason == "no score for: v, hr, sh, s3, h2, v2"
    assert a.scores is not None
    np.testing.assert_array_equal(a.scores[:2], [0.2, 0.7])
    assert np.isnan(a.scores[2:]).all()


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        ('{"s": 1.7, "h": 0.1}', "outside [0, 1]"),
        ("I'm sorry, but I can't help with that request.", "refusal"),
        ("Let me think about which categories apply here.", ""),
    ],
)
def test_json_answers_that_do_not_parse_are_unscored(
    content: str, reason: str, moderation8: Taxonomy
) -> None:
    a = read_one(RequestSpec("chat", "m", moderation8), openai_body(content))
    assert a.status == "unparseable" and a.scores is None
    assert a.reason is not None and reason in a.reason.lower()
    assert a.text == content


def test_first_choice_by_index_is_read(moderation8: Taxonomy) -> None:
    body = openai_body('{"s": 0.9, "h": 0, "v": 0, "hr": 0, "sh": 0, "s3": 0, "h2": 0, "v2": 0}')
    second = {**body["choices"][0], "index": 1, "message": {"role": "assistant", "content": "x"}}
    body["choices"] = [second, {**body["choices"][0], "index": 0}]
    a = read_one(RequestSpec("chat", "m", moderation8), body)
    assert a.scores is not None and a.scores[0] == 0.9


# --------------------------------------------------------------------------- refusals, tools, truncation


def test_content_null_with_refusal_field_is_an_unparseable_refusal(moderation8: Taxonomy) -> None:
    body = openai_body(None, refusal="I'm sorry, I can't assist with that.")
    a = read_one(RequestSpec("chat", "m", moderation8, structured=True), body)
    assert a.status == "unparseable" and a.scores is None
    assert a.reason == "refused: I'm sorry, I can't assist with that."


def test_tool_call_only_answer_is_unparseable(moderation8: Taxonomy) -> None:
    call = {
        "id": "call_Q2lSmAZ6",
        "type": "function",
        "function": {"name": "classify", "arguments": '{"s": 0.1}'},
    }
    body = openai_body(None, finish="tool_calls", tool_calls=[call])
    a = read_one(RequestSpec("chat", "m", moderation8), body)
    assert (a.status, a.reason, a.scores) == ("unparseable", "tool call instead of an answer", None)


def test_length_cut_answers_say_truncated(moderation8: Taxonomy) -> None:
    spec = RequestSpec("chat", "m", moderation8, max_tokens=16)
    cut = read_one(spec, openai_body('{"s": 0.1, "h": 0.', finish="length"))
    assert cut.status == "unparseable" and cut.scores is None
    assert cut.reason is not None and cut.reason.startswith("truncated (max_tokens)")
    empty = read_one(spec, openai_body(None, finish="length"))
    assert (empty.status, empty.reason) == ("unparseable", "truncated (max_tokens)")


def test_content_filter_stop_is_a_refusal(moderation8: Taxonomy) -> None:
    a = read_one(RequestSpec("chat", "m", moderation8), openai_body(None, finish="content_filter"))
    assert a.status == "unparseable" and a.reason is not None
    assert a.reason.startswith("refused:")


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ({}, "no choices in response"),
        ({"choices": []}, "no choices in response"),
        ({"choices": "none"}, "no choices in response"),
        ([], "response body is a list, not an object"),
        (None, "response body is a NoneType, not an object"),
        ("<html>502</html>", "response body is a str, not an object"),
        ({"choices": [None]}, "choice is not an object"),
        ({"choices": [{"message": "hi"}]}, "no message in choice"),
        ({"choices": [{"message": {"content": 5}}]}, "empty answer"),
        ({"choices": [{"message": {"content": "   "}}]}, "empty answer"),
        ({"error": {"message": "model overloaded", "type": "server_error"}}, "model overloaded"),
    ],
)
@pytest.mark.parametrize("scoring", ["json", "logprobs", "sample", "labels"])
def test_malformed_chat_bodies_never_raise(
    body: Any, reason: str, scoring: str, moderation8: Taxonomy
) -> None:
    spec = RequestSpec(
        "chat",
        "m",
        moderation8,
        scoring=scoring,  # type: ignore[arg-type]
        samples=2 if scoring == "sample" else 1,
    )
    a = read_one(spec, body)
    assert a.status == "unparseable" and a.scores is None
    assert a.reason is not None and reason in a.reason
    assert a.method == scoring


def test_read_refuses_a_wrong_number_of_bodies(moderation8: Taxonomy) -> None:
    spec = RequestSpec("chat", "m", moderation8)
    (unit,) = plan(spec, [Item("a", "x")])
    with pytest.raises(ValueError, match="unit has 1 call"):
        read(spec, unit, [])


# --------------------------------------------------------------------------- reasoning models


FULL = '{"s": 0.0, "h": 0.7, "v": 0.2, "hr": 0.5, "sh": 0.0, "s3": 0.0, "h2": 0.1, "v2": 0.0}'


def test_reasoning_content_is_kept_apart_from_the_answer(moderation8: Taxonomy) -> None:
    body = vllm_body(FULL, reasoning="The text insults a group; hate applies.")
    body["model"] = "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B"
    a = read_one(RequestSpec("chat", "m", moderation8), body)
    assert a.status == "ok" and a.text == FULL
    assert a.reasoning == "The text insults a group; hate applies."
    assert a.scores is not None and a.scores[1] == 0.7


def test_openrouter_reasoning_field_is_kept(moderation8: Taxonomy) -> None:
    body = openai_body(FULL, reasoning="Weighing the categories...")
    a = read_one(RequestSpec("chat", "m", moderation8), body)
    assert a.reasoning == "Weighing the categories..." and a.status == "ok"


@pytest.mark.parametrize(
    "content",
    [
        '<think>\nIs it hate? {"s": 1.0} no, that is wrong.\n</think>\n\n' + FULL,
        # chat templates that open the block themselves leave only the closing tag
        'Is it hate? {"s": 1.0} no, that is wrong.\n</think>\n\n' + FULL,
    ],
)
def test_inline_think_blocks_are_stripped(content: str, moderation8: Taxonomy) -> None:
    a = read_one(RequestSpec("chat", "deepseek-r1:8b", moderation8), ollama_body(content))
    assert a.status == "ok" and a.text == FULL
    assert a.reasoning == 'Is it hate? {"s": 1.0} no, that is wrong.'
    assert a.scores is not None and a.scores[0] == 0.0


def test_answer_cut_inside_the_think_block_is_truncated(moderation8: Taxonomy) -> None:
    spec = RequestSpec("chat", "m", moderation8, max_tokens=64)
    a = read_one(spec, llamacpp_body("<think>\nFirst, the user wants", finish="length"))
    assert (a.status, a.reason, a.scores) == ("unparseable", "truncated (max_tokens)", None)
    assert a.reasoning == "First, the user wants"


def test_reasoning_only_answer_without_length_stop_is_unparseable(moderation8: Taxonomy) -> None:
    a = read_one(RequestSpec("chat", "m", moderation8), vllm_body(None, reasoning="hmm"))
    assert a.status == "unparseable" and a.reason == "empty answer" and a.reasoning == "hmm"


def test_content_parts_list_is_read_as_text(moderation8: Taxonomy) -> None:
    body = openai_body([{"type": "text", "text": FULL[:20]}, {"type": "text", "text": FULL[20:]}])
    a = read_one(RequestSpec("chat", "m", moderation8), body)
    assert a.status == "ok" and a.text == FULL


# --------------------------------------------------------------------------- logprobs


def test_logprobs_give_p_yes_per_category(moderation8: Taxonomy) -> None:
    lines = [
        ("s", "no", {" no": -0.05, " yes": -3.2, " Yes": -5.0, " maybe": -7.0}),
        ("h", "yes", {" yes": -0.3, " no": -1.35, "yes": -4.0}),
        ("v", "no", {" no": -0.01, " No": -4.7}),
        ("hr", "yes", {" yes": -1e-6}),
        ("sh", "no", {" no": -0.2, " yes": -1.7}),
        ("s3", "no", {" no": -0.001, " yes": -6.9}),
        ("h2", "yes", {" yes": -0.69, " no": -0.7}),
        ("v2", "NO", {" NO": -0.1, " YES": -2.3}),
    ]
    toks = answer_lines(lines)
    spec = RequestSpec("chat", "gpt-4o-mini", moderation8, scoring="logprobs")
    a = read_one(spec, openai_body(content_of(toks), logprobs=toks))
    expected = [
        p_yes([-3.2, -5.0], [-0.05]),
        p_yes([-0.3, -4.0], [-1.35]),
        0.0,
        1.0,
        p_yes([-1.7], [-0.2]),
        p_yes([-6.9], [-0.001]),
        p_yes([-0.69], [-0.7]),
        p_yes([-2.3], [-0.1]),
    ]
    assert a.status == "ok" and a.reason is None and a.graded and a.method == "logprobs"
    assert a.scores is not None
    np.testing.assert_allclose(a.scores, expected, rtol=0, atol=1e-15)


def test_logprobs_unknown_categories_are_nan_with_a_reason(moderation8: Taxonomy) -> None:
    lines = [(cid, "no", {" no": -0.1, " yes": -2.4}) for cid in M8[:6]]
    toks = answer_lines(lines)
    # "sh" is split as " y" + "es": the aligned token is neither yes nor no
    sh = M8.index("sh") * 4 + 2
    toks[sh : sh + 1] = [token(" y", -0.4, {" y": -0.4, " n": -1.1}), token("es", -1e-5)]
    spec = RequestSpec("chat", "m", moderation8, scoring="logprobs")
    a = read_one(spec, vllm_body(content_of(toks)) | {"choices": [_with_logprobs(toks)]})
    assert a.status == "partial"
    assert a.reason == ("no line for: h2, v2; neither yes nor no among the top tokens for: sh")
    assert a.scores is not None
    p = p_yes([-2.4], [-0.1])
    np.testing.assert_allclose(a.scores[[0, 1, 2, 3, 5]], [p] * 5, rtol=0, atol=1e-15)
    assert np.isnan(a.scores[[4, 6, 7]]).all()


def test_logprobs_without_alternatives_are_unknown_not_zero_or_one(moderation8: Taxonomy) -> None:
    toks = answer_lines([(cid, "no", {" no": -0.1, " yes": -2.4}) for cid in M8])
    # a server that returns the chosen token's logprob but no top_logprobs for "h"
    h = M8.index("h") * 4 + 2
    toks[h] = {"token": " yes", "logprob": -0.2, "top_logprobs": []}
    spec = RequestSpec("chat", "m", moderation8, scoring="logprobs")
    a = read_one(spec, openai_body(content_of(toks), logprobs=toks))
    assert a.status == "partial" and a.reason == "no top_logprobs for: h"
    assert a.scores is not None and math.isnan(a.scores[1])
    assert a.scores[0] == p_yes([-2.4], [-0.1])


def _with_logprobs(toks: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "index": 0,
        "message": {"role": "assistant", "content": content_of(toks)},
        "logprobs": {"content": toks},
        "finish_reason": "stop",
    }


def test_logprobs_lines_inside_reasoning_are_ignored(moderation8: Taxonomy) -> None:
    think = [token("<think>", -0.01), token("\ns", -0.1), token(":", -0.1)]
    think += [token(" yes", -0.01, {" yes": -0.01}), token("\n</think>\n\n", -0.01)]
    lines = answer_lines([(cid, "no", {" no": -0.5, " yes": -0.9}) for cid in M8])
    toks = think + lines
    body = llamacpp_body(content_of(toks))
    body["choices"][0]["logprobs"] = {"content": toks}
    a = read_one(RequestSpec("chat", "m", moderation8, scoring="logprobs"), body)
    assert a.status == "ok" and a.reasoning == "s: yes"
    assert a.scores is not None
    np.testing.assert_allclose(a.scores, [p_yes([-0.9], [-0.5])] * 8, rtol=0, atol=1e-15)


def test_logprobs_missing_or_unmatched_is_unparseable(moderation8: Taxonomy) -> None:
    spec = RequestSpec("chat", "m", moderation8, scoring="logprobs")
    no_lp = read_one(spec, openai_body("s: no\nh: yes"))
    assert no_lp.status == "unparseable" and no_lp.reason is not None
    assert no_lp.reason.startswith("no logprobs in response")
    toks = [token("none", -0.1), token(" of", -0.1), token(" them", -0.1)]
    free = read_one(spec, openai_body(content_of(toks), logprobs=toks))
    assert free.status == "unparseable" and free.scores is None
    assert free.reason == "no '<id>: yes|no' lines in the answer"


# --------------------------------------------------------------------------- sample


def _n_choices(contents: list[str | None]) -> dict[str, Any]:
    body = openai_body(None)
    body["choices"] = [
        {
            "index": i,
            "message": {"role": "assistant", "content": c, "refusal": None},
            "logprobs": None,
            "finish_reason": "stop" if c is not None else "length",
        }
        for i, c in enumerate(contents)
    ]
    return body


def test_sample_score_is_the_flag_fraction_of_parsable_samples(toxeval15: Taxonomy) -> None:
    spec = RequestSpec("chat", "m", toxeval15, scoring="sample", samples=5)
    body = _n_choices(
        ["hate, violence", "hate", "none", "I'm sorry, but I can't help with that.", "Hate"]
    )
    a = read_one(spec, body)
    expected = np.zeros(toxeval15.k)
    expected[toxeval15.index("hate")] = 3 / 4
    expected[toxeval15.index("violence")] = 1 / 4
    assert a.scores is not None
    np.testing.assert_array_equal(a.scores, expected)
    assert a.status == "partial" and a.graded and a.method == "sample"
    assert a.reason is not None and a.reason.startswith("1 of 5 samples unparseable (first: ")
    assert a.text is not None and a.text.startswith('["hate, violence", "hate", "none"')


def test_sample_with_a_server_that_ignores_n(toxeval15: Taxonomy) -> None:
    spec = RequestSpec("chat", "llama3.1:8b", toxeval15, scoring="sample", samples=5)
    a = read_one(spec, ollama_body("harassment", model="llama3.1:8b"))
    assert a.status == "partial"
    assert a.reason == "the server returned 1 of 5 requested samples"
    assert a.scores is not None and a.scores[toxeval15.index("harassment")] == 1.0
    assert not a.graded  # one sample is a 0/1 answer


def test_sample_with_no_parsable_answer_is_unparseable(toxeval15: Taxonomy) -> None:
    spec = RequestSpec("chat", "m", toxeval15, scoring="sample", samples=2)
    a = read_one(spec, _n_choices(["As an AI, I cannot classify this.", None]))
    assert a.status == "unparseable" and a.scores is None
    assert a.reason is not None and "2 of 2 samples unparseable" in a.reason


# --------------------------------------------------------------------------- labels


def test_label_lists_score_zero_one(toxeval15: Taxonomy) -> None:
    spec = RequestSpec("chat", "m", toxeval15, scoring="labels")
    a = read_one(spec, llamacpp_body("hate, violence"))
    expected = np.zeros(toxeval15.k)
    expected[[toxeval15.index("hate"), toxeval15.index("violence")]] = 1.0
    assert a.scores is not None
    np.testing.assert_array_equal(a.scores, expected)
    assert (a.status, a.graded, a.method) == ("ok", False, "labels")
    none = read_one(spec, llamacpp_body("none"))
    assert none.status == "empty" and none.scores is not None and not none.scores.any()


# --------------------------------------------------------------------------- Llama Guard

UNREACHABLE = ("harassment", "extremism", "profanity")  # no S-code maps to these


def test_llama_guard_unsafe_codes_map_onto_the_taxonomy(toxeval15: Taxonomy) -> None:
    spec = RequestSpec("chat", "meta-llama/Llama-Guard-3-8B", toxeval15, llama_guard=True)
    a = read_one(spec, vllm_body("\n\nunsafe\nS1,S10"))
    assert a.scores is not None and a.method == "llama-guard" and not a.graded
    expected = np.zeros(toxeval15.k)
    expected[[toxeval15.index("violence"), toxeval15.index("hate")]] = 1.0
    for cid in UNREACHABLE:
        expected[toxeval15.index(cid)] = np.nan
    np.testing.assert_array_equal(a.scores, expected)
    assert a.status == "partial"
    assert a.reason == "no Llama Guard code maps to: harassment, extremism, profanity"


def test_llama_guard_safe_is_zero_where_a_code_could_have_said_so(toxeval15: Taxonomy) -> None:
    spec = RequestSpec("chat", "llama-guard3:8b", toxeval15, llama_guard=True, level="response")
    a = read_one(spec, ollama_body("\n\nsafe"), Item("r", "hello", "hi there"))
    assert a.scores is not None
    reachable = [k for k, cid in enumerate(toxeval15.ids) if cid not in UNREACHABLE]
    assert not a.scores[reachable].any()
    assert np.isnan(a.scores[[toxeval15.index(c) for c in UNREACHABLE]]).all()


def test_spec_mapping_is_the_llama_guard_mapping_only_for_llama_guard(
    toxeval15: Taxonomy,
) -> None:
    lg = RequestSpec("chat", "m", toxeval15, llama_guard=True).mapping
    assert lg is not None and lg.map("S10") == ("hate",)
    assert RequestSpec("chat", "m", toxeval15).mapping is None


def test_llama_guard_unsafe_without_codes_is_unparseable(toxeval15: Taxonomy) -> None:
    spec = RequestSpec("chat", "m", toxeval15, llama_guard=True)
    a = read_one(spec, vllm_body("unsafe"))
    assert a.status == "unparseable" and a.scores is None and a.method == "llama-guard"


# --------------------------------------------------------------------------- moderation

OMNI_SCORES = {
    "harassment": 0.0012,
    "harassment/threatening": 0.0004,
    "hate": 0.0301,
    "hate/threatening": 0.0105,
    "illicit": 0.0521,
    "illicit/violent": 0.2104,
    "self-harm": 0.0002,
    "self-harm/instructions": 0.0001,
    "self-harm/intent": 0.0003,
    "sexual": 1.2e-05,
    "sexual/minors": 2.0e-06,
    "violence": 0.8312,
    "violence/graphic": 0.0457,
}
LEGACY = [k for k in OMNI_SCORES if not k.startswith("illicit")]  # text-moderation-007


def moderation_result(scores: dict[str, Any], omni: bool = True) -> dict[str, Any]:
    out: dict[str, Any] = {
        "flagged": True,
        "categories": {k: isinstance(v, float) and v > 0.5 for k, v in scores.items()},
        "category_scores": scores,
    }
    if omni:
        out["category_applied_input_types"] = {k: ["text"] for k in scores}
    return out


def moderation_body(results: list[dict[str, Any]], model: str) -> dict[str, Any]:
    return {"id": "modr-2f4e0d5b9c7a", "model": model, "results": results}


def test_omni_scores_map_directly_onto_openai_moderation_8(moderation8: Taxonomy) -> None:
    spec = RequestSpec("moderation", "omni-moderation-latest", moderation8)
    (unit,) = plan(spec, [Item("a", "x"), Item("b", "y")])
    second = dict(OMNI_SCORES, sexual=0.93)
    body = moderation_body(
        [moderation_result(OMNI_SCORES), moderation_result(second)], "omni-moderation-2024-09-26"
    )
    a, b = read(spec, unit, [body])
    names = ["sexual", "hate", "violence", "harassment", "self-harm", "sexual/minors"]
    names += ["hate/threatening", "violence/graphic"]
    assert a.scores is not None and b.scores is not None
    np.testing.assert_array_equal(a.scores, [OMNI_SCORES[n] for n in names])
    assert (a.status, a.reason, a.graded, a.method, a.text) == (
        "ok",
        None,
        True,
        "moderation",
        None,
    )
    assert b.scores[0] == 0.93


def test_omni_scores_map_onto_toxeval_15_by_maximum_with_unknowns(toxeval15: Taxonomy) -> None:
    spec = RequestSpec("moderation", "omni-moderation-latest", toxeval15)
    a = read_one(spec, moderation_body([moderation_result(OMNI_SCORES)], "omni-moderation-latest"))
    s = OMNI_SCORES
    expected = {
        "hate": max(s["hate"], s["hate/threatening"]),
        "harassment": max(s["harassment"], s["harassment/threatening"]),
        "violence": max(
            s["violence"],
            s["violence/graphic"],
            s["hate/threatening"],
            s["harassment/threatening"],
            s["illicit/violent"],
        ),
        "self_harm": max(s["self-harm"], s["self-harm/intent"], s["self-harm/instructions"]),
        "sexual": max(s["sexual"], s["sexual/minors"]),
        "sexual_minors": s["sexual/minors"],
        "weapons": s["illicit/violent"],
        "crime": s["illicit"],
    }
    assert a.scores is not None
    for cid in toxeval15.ids:
        got = a.scores[toxeval15.index(cid)]
        if cid in expected:
            assert got == expected[cid], cid
        else:
            assert math.isnan(got), cid
    assert a.status == "partial"
    assert a.reason == (
        "no moderation score for: drugs, fraud, cybercrime, privacy, extremism, "
        "misinformation, profanity"
    )


def test_legacy_moderation_model_leaves_illicit_categories_unknown(toxeval15: Taxonomy) -> None:
    spec = RequestSpec("moderation", "text-moderation-latest", toxeval15)
    legacy = {k: OMNI_SCORES[k] for k in LEGACY}
    a = read_one(
        spec, moderation_body([moderation_result(legacy, omni=False)], "text-moderation-007")
    )
    assert a.scores is not None
    assert math.isnan(a.scores[toxeval15.index("crime")])
    assert math.isnan(a.scores[toxeval15.index("weapons")])
    assert a.scores[toxeval15.index("violence")] == OMNI_SCORES["violence"]


def test_bad_moderation_bodies_never_raise(moderation8: Taxonomy) -> None:
    spec = RequestSpec("moderation", "omni-moderation-latest", moderation8)
    (unit,) = plan(spec, [Item("a", "x"), Item("b", "y")])
    one = moderation_body([moderation_result(OMNI_SCORES)], "m")
    cases: list[tuple[Any, str]] = [
        (one, "moderation response has 1 results for 2 inputs"),
        ({"error": {"message": "rate limited"}}, "error in response"),
        ({"results": None}, "no results in moderation response"),
        ("oops", "response body is a str"),
    ]
    for body, reason in cases:
        answers = read(spec, unit, [body])
        assert len(answers) == 2
        assert all(x.status == "unparseable" and x.scores is None for x in answers)
        assert all(x.reason is not None and reason in x.reason for x in answers)
    bad_value = moderation_result(dict(OMNI_SCORES, hate="high"))
    out_of_range = moderation_result(dict(OMNI_SCORES, hate=1.5))
    a, b = read(spec, unit, [moderation_body([bad_value, out_of_range], "m")])
    assert (
        a.status == "unparseable" and a.reason == "moderation score 'hate' is not a number: 'high'"
    )
    assert b.status == "unparseable" and b.reason is not None and "outside [0, 1]" in b.reason
    empty = read(spec, Unit(("a",), unit.calls), [moderation_body([{"flagged": False}], "m")])
    assert empty[0].reason == "no category_scores in moderation result"


# --------------------------------------------------------------------------- docs/llm.md

DOC = Path(__file__).resolve().parents[1] / "docs" / "llm.md"
_FENCE = re.compile(r"^```python\n(.*?)^```$", re.M | re.S)


@pytest.mark.parametrize("block", _FENCE.findall(DOC.read_text(encoding="utf-8")))
def test_docs_llm_examples_print_what_they_show(block: str) -> None:
    """Every python block of docs/llm.md runs and prints exactly its ``# ->`` lines."""
    expected = [ln.strip()[len("# -> ") :] for ln in block.splitlines() if ln.startswith("# -> ")]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(block, str(DOC), "exec"), {"__name__": "docs_llm"})
    assert out.getvalue().splitlines() == expected


# --------------------------------------------------------------------------- adversarial bodies


def test_json_null_in_a_true_false_object_is_unknown_not_zero(moderation8: Taxonomy) -> None:
    spec = RequestSpec("chat", "m", moderation8)
    content = '{"s": false, "h": true, "v": null, "hr": false, "sh": false, "s3": false, "h2": false, "v2": false}'
    a = read_one(spec, llamacpp_body(content))
    assert a.status == "partial" and a.reason == "no score for: v"
    assert a.scores is not None and math.isnan(a.scores[2])
    np.testing.assert_array_equal(np.delete(a.scores, 2), [0, 1, 0, 0, 0, 0, 0])


def test_labels_answer_with_a_null_is_unparseable_not_zero(moderation8: Taxonomy) -> None:
    spec = RequestSpec("chat", "m", moderation8, scoring="labels")
    a = read_one(spec, llamacpp_body('{"h": null, "v": true}'))
    assert a.status == "unparseable" and a.scores is None
    assert a.reason is not None and "'h': null" in a.reason


def test_a_refusal_content_part_is_reported_as_a_refusal(moderation8: Taxonomy) -> None:
    parts = [{"type": "refusal", "refusal": "I can't classify this."}]
    a = read_one(RequestSpec("chat", "m", moderation8), openai_body(parts))
    assert a.status == "unparseable" and a.reason == "refused: I can't classify this."


@pytest.mark.parametrize(
    "bad",
    [1000.0, 0.5, math.inf, -math.inf, math.nan],
    ids=["huge", "positive", "inf", "-inf", "nan"],
)
def test_an_invalid_logprob_makes_its_category_unknown(moderation8: Taxonomy, bad: float) -> None:
    toks = answer_lines([(cid, "no", {" no": -0.1, " yes": -2.4}) for cid in M8])
    h = M8.index("h") * 4 + 2
    toks[h] = token(" yes", bad, {" yes": bad, " no": -1.0})
    spec = RequestSpec("chat", "m", moderation8, scoring="logprobs")
    a = read_one(spec, openai_body(content_of(toks), logprobs=toks))
    assert a.status == "partial" and a.reason == "invalid logprob (not a finite number <= 0) for: h"
    assert a.scores is not None and math.isnan(a.scores[1])
    assert a.scores[0] == p_yes([-2.4], [-0.1])


@pytest.mark.parametrize("bad", [True, "-0.1", None], ids=["bool", "string", "null"])
def test_a_yes_or_no_logprob_that_is_no_number_makes_its_category_unknown(
    moderation8: Taxonomy, bad: Any
) -> None:
    # the " no" alternative was dropped and " yes" left alone: P(yes) = 1, status ok
    toks = answer_lines([(cid, "no", {" no": -0.1, " yes": -2.4}) for cid in M8])
    h = M8.index("h") * 4 + 2
    toks[h] = {
        "token": " no",
        "logprob": bad,
        "top_logprobs": [{"token": " no", "logprob": bad}, {"token": " yes", "logprob": -2.4}],
    }
    spec = RequestSpec("chat", "m", moderation8, scoring="logprobs")
    a = read_one(spec, openai_body(content_of(toks), logprobs=toks))
    assert a.status == "partial" and a.reason == "invalid logprob (not a finite number <= 0) for: h"
    assert a.scores is not None and math.isnan(a.scores[1])


def test_top_logprobs_with_no_usable_entry_are_no_alternatives(moderation8: Taxonomy) -> None:
    toks = answer_lines([(cid, "no", {" no": -0.1, " yes": -2.4}) for cid in M8])
    h = M8.index("h") * 4 + 2
    toks[h] = {"token": " yes", "logprob": -0.2, "top_logprobs": [None, 5, {"token": None}]}
    spec = RequestSpec("chat", "m", moderation8, scoring="logprobs")
    a = read_one(spec, openai_body(content_of(toks), logprobs=toks))
    assert a.status == "partial" and a.reason == "no top_logprobs for: h"
    assert a.scores is not None and math.isnan(a.scores[1])


# Azure OpenAI stops an answer its output filter flags with finish_reason
# "content_filter"; the content is then usually null, but can be the part written before
# the stop. That part is cut like a max_tokens answer: what it flags stands, what it does
# not flag is unknown, not a negative.
def test_an_answer_cut_by_the_content_filter_flags_no_negatives(moderation8: Taxonomy) -> None:
    spec = RequestSpec("chat", "m", moderation8, scoring="labels")
    whole = read_one(spec, openai_body("h, sh", finish="stop"))
    cut = read_one(spec, openai_body("h, sh", finish="content_filter"))
    assert whole.status == "ok" and whole.scores is not None and cut.scores is not None
    flagged = whole.scores == 1.0
    assert flagged.sum() == 2
    np.testing.assert_array_equal(cut.scores[flagged], whole.scores[flagged])
    assert np.isnan(cut.scores[~flagged]).all()
    assert cut.status == "partial"
    assert cut.reason is not None and "content filter" in cut.reason


def test_a_json_answer_cut_by_the_content_filter_is_unparseable(moderation8: Taxonomy) -> None:
    spec = RequestSpec("chat", "m", moderation8)
    cut = read_one(spec, openai_body('{"s": 0.1, "h": 0.', finish="content_filter"))
    assert cut.status == "unparseable" and cut.scores is None
    assert cut.reason is not None and "content filter" in cut.reason


def mistral_body(content: str, *, finish: str) -> dict[str, Any]:
    """Mistral's /v1/chat/completions (finish_reason: stop, length, model_length, error,
    tool_calls)."""
    return {
        "id": "cmpl-e5cc70bb28c444948073e77776eb30ef",
        "object": "chat.completion",
        "model": "mistral-small-latest",
        "created": 1702256327,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content, "tool_calls": None},
                "finish_reason": finish,
            }
        ],
        "usage": {"prompt_tokens": 16, "completion_tokens": 34, "total_tokens": 50},
    }


# Mistral ends an answer the context window cut with "model_length", and one a server
# error cut with "error": the text is what came before, as with "length"
@pytest.mark.parametrize(
    ("finish", "why"),
    [("model_length", "truncated (context length)"), ("error", "cut by a server error")],
)
def test_an_answer_mistral_cut_flags_no_negatives(
    moderation8: Taxonomy, finish: str, why: str
) -> None:
    spec = RequestSpec("chat", "m", moderation8, scoring="labels")
    whole = read_one(spec, mistral_body("h, sh", finish="stop"))
    cut = read_one(spec, mistral_body("h, sh", finish=finish))
    assert whole.scores is not None and cut.scores is not None
    flagged = whole.scores == 1.0
    assert flagged.sum() == 2 and (cut.scores[flagged] == 1.0).all()
    assert np.isnan(cut.scores[~flagged]).all()
    assert cut.status == "partial" and cut.reason is not None and why in cut.reason
    empty = read_one(spec, mistral_body("", finish=finish))
    assert (empty.status, empty.reason) == ("unparseable", why)


@pytest.mark.parametrize("method", ["json", "labels"])
def test_a_chat_answer_leaves_the_categories_it_does_not_name_unknown(method: str) -> None:
    # issue 33: "Hate: none, Violence: yes" scored the 13 categories it never mentions 0
    from toxeval.llm.answers import ChatReply, score_labels
    from toxeval.taxonomy import load_taxonomy

    tax = load_taxonomy("toxeval-15")
    reply = ChatReply("Hate: none, Violence: yes", None, "stop", None, None)
    a = score_labels(reply, tax, method)
    assert a.status == "partial" and a.scores is not None
    assert a.scores[tax.index("hate")] == 0.0 and a.scores[tax.index("violence")] == 1.0
    assert int(np.isnan(a.scores).sum()) == 13
    assert a.reason is not None and "no score for: harassment" in a.reason
    full = score_labels(ChatReply("hate, violence", None, "stop", None, None), tax, method)
    assert full.status == "ok" and full.scores is not None and not np.isnan(full.scores).any()
