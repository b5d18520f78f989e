"""Graded Llama Guard scores from logprobs (``llama-guard:MODEL --scoring logprobs``,
toxeval.llm.guard_logprobs): score(c) = P(unsafe) x share(c), with every expected value
worked out by hand below from the llama-guard-3 mapping (S1 violence; S2 crime, fraud,
cybercrime, drugs, weapons; S10 hate; S11 self_harm; ...). Chat and completions logprobs
shapes, codes over one or several tokens, safe answers, answers without logprobs (0/1,
not graded) and cut answers; end to end through the runner against the fake server on
127.0.0.1."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fake_openai import FakeOpenAI, write_dataset
from toxeval.llm import predict
from toxeval.llm.answers import chat_replies
from toxeval.llm.guard_logprobs import (
    CUT_LOGPROBS,
    INVALID_VERDICT,
    NO_CHOSEN,
    NO_LOGPROBS,
    NOT_THIS_ANSWER,
    UNIFORM,
    logprob_positions,
    score_llama_guard_logprobs,
)
from toxeval.taxonomy import load_mapping, load_taxonomy

TAX = load_taxonomy("toxeval-15")
LG3 = load_mapping("llama-guard-3")
S2_IDS = ("crime", "fraud", "cybercrime", "drugs", "weapons")
NOT_MAPPED = ("harassment", "extremism", "profanity")  # no Llama Guard 3 code maps to them


def chat_tokens(*positions: tuple[str, dict[str, float]]) -> dict[str, Any]:
    """Chat-form logprobs: (chosen token, {alternative: probability})."""
    content = []
    for tok, alts in positions:
        top = [{"token": t, "logprob": math.log(p)} for t, p in alts.items()]
        lp = math.log(alts[tok]) if tok in alts else -0.01
        content.append({"token": tok, "logprob": lp, "top_logprobs": top})
    return {"content": content}


def completions_tokens(*positions: tuple[str, dict[str, float]]) -> dict[str, Any]:
    """The same positions in the completions form."""
    return {
        "tokens": [t for t, _ in positions],
        "token_logprobs": [math.log(a[t]) if t in a else -0.01 for t, a in positions],
        "top_logprobs": [{t: math.log(p) for t, p in a.items()} for _, a in positions],
    }


def body(text: str, logprobs: Any, finish: str = "stop") -> dict[str, Any]:
    return {
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "logprobs": logprobs,
                "finish_reason": finish,
            }
        ]
    }


def read(b: dict[str, Any]) -> Any:
    replies, problem = chat_replies(b)
    assert problem is None
    return score_llama_guard_logprobs(replies[0], b["choices"][0]["logprobs"], TAX, LG3)


def as_dict(scores: np.ndarray) -> dict[str, float]:
    return {c: float(v) for c, v in zip(TAX.ids, scores, strict=True)}


# "unsafe\nS1,S10" as Llama 3 tokenizes it: numbers are whole tokens after "S"
LLAMA3 = (
    ("unsafe", {"unsafe": 0.8, "safe": 0.2}),
    ("\n", {"\n": 1.0}),
    ("S", {"S": 1.0}),
    ("1", {"1": 0.6, "10": 0.3, "2": 0.1}),
    (",", {",": 1.0}),
    ("S", {"S": 1.0}),
    ("10", {"10": 0.9, "1": 0.1}),
)
# P(unsafe) 0.8; first code position: S1 .6, S10 .3, S2 .1; second: S10 .9, S1 .1
# share = max over positions: violence .6, hate .9, S2's five categories .1
LLAMA3_EXPECTED = {"violence": 0.8 * 0.6, "hate": 0.8 * 0.9, **dict.fromkeys(S2_IDS, 0.8 * 0.1)}


def check(scores: np.ndarray, expected: dict[str, float]) -> None:
    got = as_dict(scores)
    for c in TAX.ids:
        if c in NOT_MAPPED:
            assert math.isnan(got[c]), c  # unknown, never 0
        else:
            assert got[c] == pytest.approx(expected.get(c, 0.0), abs=1e-12), c


@pytest.mark.parametrize("form", [chat_tokens, completions_tokens])
def test_multi_token_codes_chat_and_completions_forms(form: Any) -> None:
    a = read(body("unsafe\nS1,S10", form(*LLAMA3)))
    assert a.graded and a.method == "llama-guard" and a.status == "partial"
    check(a.scores, LLAMA3_EXPECTED)


def test_codes_split_digit_by_digit() -> None:
    # a tokenizer of single digits (Llama 2): "S" "1" "0" spells S10; the position after
    # "1" says whether the code ended (S1) or went on (S10, S11)
    lp = chat_tokens(
        ("unsafe", {"unsafe": 0.9, "safe": 0.1}),
        ("\n", {"\n": 1.0}),
        ("S", {"S": 1.0}),
        ("1", {"1": 0.7, "2": 0.3}),
        ("0", {"0": 0.5, "1": 0.25, "<|eot_id|>": 0.25}),
    )
    a = read(body("unsafe\nS10", lp))
    # S10 = .7 * .5, S11 = .7 * .25, S1 = .7 * .25 (ended), S2 = .3
    expected = {
        "hate": 0.9 * 0.35,
        "self_harm": 0.9 * 0.175,
        "violence": 0.9 * 0.175,
        **dict.fromkeys(S2_IDS, 0.9 * 0.3),
    }
    check(a.scores, expected)


def test_verdict_split_into_pieces() -> None:
    # "un" + "safe": the unsafe variants are summed against the safe ones
    lp = chat_tokens(
        ("un", {"un": 0.5, "unsafe": 0.2, "safe": 0.3}),
        ("safe", {"safe": 1.0}),
        ("\n", {"\n": 1.0}),
        ("S", {"S": 1.0}),
        ("9", {"9": 1.0}),
    )
    a = read(body("unsafe\nS9", lp))
    check(a.scores, {"weapons": 0.7})


def test_safe_answers_share_p_unsafe_equally_among_codes() -> None:
    a = read(body("safe", chat_tokens(("safe", {"safe": 0.9, "unsafe": 0.1}))))
    assert a.graded and UNIFORM in (a.reason or "")
    # 14 codes, each 0.1 / 14; a category gets the shares of the codes that map to it
    per = 0.1 / 14
    expected = {
        "violence": per,  # S1
        "crime": 3 * per,  # S2, S3, S8
        "fraud": per,
        "cybercrime": 2 * per,  # S2, S14
        "drugs": per,
        "weapons": 2 * per,  # S2, S9
        "sexual": 3 * per,  # S3, S4, S12
        "sexual_minors": per,
        "misinformation": 2 * per,  # S5, S13
        "privacy": per,
        "hate": per,
        "self_harm": per,
    }
    check(a.scores, expected)


def test_without_logprobs_the_answer_is_binary() -> None:
    a = read(body("unsafe\nS1", None))
    assert not a.graded and NO_LOGPROBS in (a.reason or "")
    check(a.scores, {"violence": 1.0})
    b = read(body("unsafe\nS1", {"content": [{"token": "unsafe", "logprob": -0.1}]}))
    assert not b.graded  # a chosen token without top_logprobs gives no distribution


def test_cut_answer_keeps_unknown_cells() -> None:
    lp = chat_tokens(
        ("unsafe", {"unsafe": 0.8, "safe": 0.2}), ("\n", {"\n": 1.0}), ("S", {"S": 1.0}),
        ("9", {"9": 1.0}), (",", {",": 1.0}), ("S", {"S": 1.0}), ("1", {"1": 1.0}),
    )  # fmt: skip
    a = read(body("unsafe\nS9,S1", lp, finish="length"))
    # the cut may have fallen inside S1x: what it flags is unknown (not 0, not violence),
    # as are the categories no code before the cut flagged; S9 stands
    assert a.status == "partial" and a.graded
    got = as_dict(a.scores)
    assert math.isnan(got["violence"]) and math.isnan(got["hate"])
    assert got["weapons"] == pytest.approx(0.8)


def test_bad_logprobs_are_not_read() -> None:
    assert logprob_positions({"content": "x"}) is None
    assert logprob_positions({"tokens": [1, 2]}) is None
    pos = logprob_positions(
        {"content": [{"token": "a", "logprob": 0.5, "top_logprobs": [
            {"token": "a", "logprob": float("nan")}, {"token": "b", "logprob": 3.0},
            {"token": "c", "logprob": -1.0}]}]}
    )  # fmt: skip
    assert pos is not None and pos[0].alternatives == {"c": -1.0}


def test_logprobs_of_the_first_tokens_only_keep_the_answers_codes() -> None:
    # a server that sends logprobs for the verdict only: the answer's code S10 (hate) is
    # read from the text with share 1, not spread equally over every code
    for lp in (
        chat_tokens(("unsafe", {"unsafe": 0.9, "safe": 0.1})),
        chat_tokens(("unsafe", {"unsafe": 0.9, "safe": 0.1}), ("\n", {"\n": 1.0}),
                    ("S", {"S": 1.0}), ("1", {"1": 1.0})),  # stops inside S10
    ):  # fmt: skip
        a = read(body("unsafe\nS10", lp))
        assert a.graded and CUT_LOGPROBS in (a.reason or "")
        check(a.scores, {"hate": 0.9})


def test_logprobs_of_another_answer_are_not_read() -> None:
    # tokens that spell "safe" beside an answer "unsafe S10": the 0/1 reading of the text
    a = read(body("unsafe\nS10", chat_tokens(("safe", {"safe": 0.9, "unsafe": 0.1}))))
    assert not a.graded and NOT_THIS_ANSWER in (a.reason or "")
    check(a.scores, {"hate": 1.0})
    # a trailing special token in the logprobs only is the same answer
    lp = chat_tokens(*LLAMA3, ("<|eot_id|>", {"<|eot_id|>": 1.0}))
    check(read(body("unsafe\nS1,S10", lp)).scores, LLAMA3_EXPECTED)


def test_a_verdict_without_its_own_logprob_is_not_read_as_the_other() -> None:
    # the chosen "unsafe" has a NaN logprob and only "safe" is among the alternatives:
    # P(unsafe) would be 0 for an answer that says unsafe
    lp = {"content": [
        {"token": "unsafe", "logprob": float("nan"),
         "top_logprobs": [{"token": "safe", "logprob": -0.01}]},
        {"token": "\nS10", "logprob": 0.0, "top_logprobs": [{"token": "\nS10", "logprob": 0.0}]},
    ]}  # fmt: skip
    a = read(body("unsafe\nS10", lp))
    assert not a.graded and NO_CHOSEN in (a.reason or "")
    check(a.scores, {"hate": 1.0})


@pytest.mark.parametrize("bad", ["-0.1", True, None, float("nan"), 3.0])
def test_a_verdict_whose_logprob_is_no_log_probability_is_read_as_0_1(bad: Any) -> None:
    # "safe" was dropped and "unsafe" left alone: P(unsafe) 1, graded
    tokens = [
        {"token": "unsafe", "logprob": -0.5, "top_logprobs": [
            {"token": "unsafe", "logprob": -0.5}, {"token": "safe", "logprob": bad}]},
        {"token": "\nS10", "logprob": 0.0, "top_logprobs": [{"token": "\nS10", "logprob": 0.0}]},
    ]  # fmt: skip
    a = read(body("unsafe\nS10", {"content": tokens}))
    assert not a.graded and INVALID_VERDICT in (a.reason or "")
    check(a.scores, {"hate": 1.0})
    completions = {
        "tokens": ["unsafe", "\nS10"],
        "token_logprobs": [-0.5, 0.0],
        "top_logprobs": [{"unsafe": -0.5, "safe": bad}, {"\nS10": 0.0}],
    }
    assert not read(body("unsafe\nS10", completions)).graded


def test_policy_guard_reads_logprobs_only_of_its_answer() -> None:
    from toxeval.llm.guard_logprobs import score_policy_answers

    small = load_taxonomy("openai-moderation-8")
    bodies: list[Any] = [body("No", chat_tokens(("No", {"No": 0.8, "Yes": 0.2})))] * small.k
    bodies[0] = body("No", chat_tokens(("Yes", {"Yes": 0.9, "No": 0.1})))  # another answer
    bodies[1] = body("Yes", {"content": [  # the chosen Yes without a logprob of its own
        {"token": "Yes", "logprob": None, "top_logprobs": [{"token": "No", "logprob": -0.1}]}
    ]})  # fmt: skip
    # choices out of order: the text read and the logprobs read are of the same choice
    bodies[4] = body("No", {"content": [  # No, whose Yes alternative has no number
        {"token": "No", "logprob": -0.1, "top_logprobs": [
            {"token": "No", "logprob": -0.1}, {"token": "Yes", "logprob": "x"}]}
    ]})  # fmt: skip
    bodies[2] = {"choices": [
        {"index": 1, "message": {"content": "Yes"},
         "logprobs": chat_tokens(("Yes", {"Yes": 0.7, "No": 0.3}))},
        {"message": {"content": "No"}, "logprobs": chat_tokens(("No", {"No": 0.99, "Yes": 0.01}))},
    ]}  # fmt: skip
    a = score_policy_answers(bodies, small)
    assert a.scores[0] == 0.0 and a.scores[1] == 1.0  # their words, 0/1
    assert a.scores[2] == pytest.approx(0.7) and a.scores[3] == pytest.approx(0.2)
    assert a.scores[4] == 0.0
    assert not a.graded and "no logprobs, read as 0/1: s, h, sh" in (a.reason or "")


# --- end to end ------------------------------------------------------------------------


def test_runner_graded_guard_scores(tmp_path: Path) -> None:
    import toxeval

    data = tmp_path / "d.jsonl"
    write_dataset(data, 3)
    server = FakeOpenAI().start()
    try:
        server.answers["item-00000"] = {
            "message": {"role": "assistant", "content": "unsafe\nS1,S10"},
            "logprobs": chat_tokens(*LLAMA3),
        }
        server.answers["item-00001"] = {
            "message": {"role": "assistant", "content": "safe"},
            "logprobs": chat_tokens(("safe", {"safe": 0.9, "unsafe": 0.1})),
        }
        server.answers["item-00002"] = {  # a server that ignores logprobs
            "message": {"role": "assistant", "content": "unsafe\nS9"},
            "logprobs": None,
        }
        run = tmp_path / "run.jsonl"
        predict(data, "llama-guard:lg", run, base_url=server.url, scoring="logprobs")
        sent = server.bodies[-1]
        assert sent["logprobs"] is True and sent["top_logprobs"] == 20
        rows = {r["id"]: r for r in map(json.loads, run.read_text().splitlines()[1:])}
        assert rows["r0"]["graded"] and rows["r1"]["graded"] and not rows["r2"]["graded"]
        assert rows["r0"]["scores"]["hate"] == pytest.approx(0.72)
        assert rows["r0"]["scores"]["harassment"] is None
        assert rows["r1"]["scores"]["crime"] == pytest.approx(0.3 / 14)
        assert rows["r2"]["scores"]["weapons"] == 1.0
        result = toxeval.evaluate(data, "llama-guard:lg", run_file=run, base_url=server.url,
                                  scoring="logprobs", bootstrap=0)  # fmt: skip
        assert result.to_dict()["binary_scores"] is False
        assert result.to_dict()["system"]["rows"]["binary"] == 1
        # labels scoring (today's reading) is another fingerprint: asked again, 0/1
        again = predict(data, "llama-guard:lg", tmp_path / "b.jsonl", base_url=server.url)
        assert again.written == 3
        binary = toxeval.evaluate(data, "llama-guard:lg", run_file=tmp_path / "b.jsonl",
                                  base_url=server.url, bootstrap=0)  # fmt: skip
        assert binary.to_dict()["binary_scores"] is True
    finally:
        server.stop()


# --- single-policy guards ----------------------------------------------------------------

# P(Yes) each category's request gets from the scripted server, by category name
P_YES = {"Hate": 0.9, "Harassment": 0.2, "Violence": 0.55}


def policy_answer(request: dict[str, Any]) -> dict[str, Any]:
    """Yes/No with logprobs: P(Yes) from P_YES by the policy named in the request, 0.01
    for the others; the alternatives are split over case and spacing variants."""
    prompt = "\n".join(m["content"] for m in request["messages"])
    name = next((n for n in P_YES if f'"{n}":' in prompt), None)
    p = P_YES.get(name or "", 0.01)
    word = "Yes" if p >= 0.5 else "No"
    top = [
        {"token": "Yes", "logprob": math.log(0.75 * p)},
        {"token": " yes", "logprob": math.log(0.25 * p)},
        {"token": "No", "logprob": math.log(1 - p)},
    ]
    return {
        "message": {"role": "assistant", "content": f"{word}, because..."},
        "logprobs": {"content": [{"token": word, "logprob": -0.1, "top_logprobs": top}]},
    }


def test_policy_guard_one_request_per_category(tmp_path: Path) -> None:
    import toxeval

    data = tmp_path / "d.jsonl"
    write_dataset(data, 2)
    server = FakeOpenAI().start()
    try:
        server.answers["item-00000"] = policy_answer
        server.answers["item-00001"] = {  # no logprobs: read from the first word
            "message": {"role": "assistant", "content": "No."},
            "logprobs": None,
        }
        dry = predict(data, "policy-guard:sg", tmp_path / "dry.jsonl", base_url=server.url,
                      dry_run=True)  # fmt: skip
        assert dry.requests == 2 * TAX.k and f"({TAX.k} per item)" in dry.line()
        run = tmp_path / "run.jsonl"
        predict(data, "policy-guard:sg", run, base_url=server.url)
        assert len(server.bodies) == 2 * TAX.k
        assert all(b["logprobs"] is True and b["top_logprobs"] == 20 for b in server.bodies)
        # each request carries one category's definition (the shipped ShieldGemma prompt)
        first = server.bodies[0]["messages"][0]["content"]
        assert "Human Question: please judge item-0000" in first and '* "Hate":' in first
        rows = {r["id"]: r for r in map(json.loads, run.read_text().splitlines()[1:])}
        r0 = rows["r0"]
        assert r0["graded"] and r0["method"] == "policy-guard" and r0["parse_status"] == "ok"
        assert r0["scores"]["hate"] == pytest.approx(0.9)
        assert r0["scores"]["harassment"] == pytest.approx(0.2)
        assert r0["scores"]["violence"] == pytest.approx(0.55)
        assert r0["scores"]["profanity"] == pytest.approx(0.01)
        r1 = rows["r1"]
        assert not r1["graded"] and set(r1["scores"].values()) == {0.0}
        assert "no logprobs, read as 0/1" in r1["parse_reason"]
        result = toxeval.evaluate(data, "policy-guard:sg", run_file=run, base_url=server.url,
                                  bootstrap=0)  # fmt: skip
        assert result.to_dict()["system"]["rows"]["binary"] == 1
    finally:
        server.stop()


def test_policy_guard_answers_read_per_category() -> None:
    from toxeval.llm.guard_logprobs import score_policy_answers

    small = load_taxonomy("openai-moderation-8")
    bodies: list[Any] = [body("Yes", chat_tokens(("Yes", {"Yes": 0.3, "No": 0.7})))] * small.k
    bodies[1] = body("Maybe", None)  # neither: unknown
    bodies[2] = {"choices": []}  # no answer: unknown
    a = score_policy_answers(bodies, small)
    assert a.status == "partial" and a.graded
    assert math.isnan(a.scores[1]) and math.isnan(a.scores[2])
    assert a.scores[0] == pytest.approx(0.3)
    assert "neither Yes nor No: h" in (a.reason or "")


def test_policy_templates_fit_only_policy_guards() -> None:
    from toxeval.llm.requests import RequestSpec
    from toxeval.llm.templates import load_template

    with pytest.raises(ValueError, match="policy template"):
        RequestSpec("chat", "m", TAX, template=load_template("shieldgemma-prompt"))
    with pytest.raises(ValueError, match="needs a policy template"):
        RequestSpec("chat", "m", TAX, policy_guard=True, template=load_template("zero-shot-prompt"))
    spec = RequestSpec(
        "chat", "m", TAX, policy_guard=True, template=load_template("granite-guardian-response"),
        level="response",
    )  # fmt: skip
    assert spec.fingerprint()["guard_scoring"] == "policy"
    with pytest.raises(ValueError, match="takes no llama_guard"):
        RequestSpec("chat", "m", TAX, policy_guard=True, scoring="labels")
