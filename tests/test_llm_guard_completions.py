"""Guard models through the completions API (``--api completions``,
toxeval.llm.completion_requests): the guard's prompt rendered by toxeval into the model's
raw form and sent to ``/v1/completions`` of the fake server on 127.0.0.1, whose answers
carry logprobs in vLLM's legacy shape (``tokens`` / ``token_logprobs`` /
``top_logprobs: [{token: logprob}]`` / ``text_offset``) or llama.cpp's (``content``
entries with ``id`` and ``bytes``). Every expected score is worked out by hand from the
llama-guard-3 mapping (S1 violence; S2 crime, fraud, cybercrime, drugs, weapons; S9
weapons; S10 hate), and each answer is also read through the chat API to check that both
give the same scores from the same log-probabilities."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fake_openai import FakeOpenAI, write_dataset
from toxeval.llm import predict
from toxeval.llm.guard_logprobs import INVALID_VERDICT, NO_LOGPROBS
from toxeval.llm.prompts import policy_text
from toxeval.llm.request_units import Item
from toxeval.llm.requests import RequestSpec, plan, read
from toxeval.llm.templates import TemplateError, load_template
from toxeval.taxonomy import load_taxonomy

TAX = load_taxonomy("toxeval-15")
S2_IDS = ("crime", "fraud", "cybercrime", "drugs", "weapons")
NOT_MAPPED = ("harassment", "extremism", "profanity")  # no Llama Guard 3 code maps to them


def vllm(*positions: tuple[str, dict[str, float]]) -> dict[str, Any]:
    """vLLM's completions logprobs: (chosen token, {alternative: probability}); the
    chosen token is among its top alternatives, as vLLM sends it."""
    offsets, at = [], 0
    for tok, _ in positions:
        offsets.append(at)
        at += len(tok)
    return {
        "text_offset": offsets,
        "token_logprobs": [math.log(a[t]) for t, a in positions],
        "tokens": [t for t, _ in positions],
        "top_logprobs": [{t: math.log(p) for t, p in a.items()} for _, a in positions],
    }


def llama_cpp(*positions: tuple[str, dict[str, float]]) -> dict[str, Any]:
    """llama.cpp's ``/v1/completions`` logprobs: ``content`` entries with token ids and
    bytes."""
    content = []
    for n, (tok, alts) in enumerate(positions):
        top = [
            {"id": 100 + j, "token": t, "bytes": list(t.encode()), "logprob": math.log(p)}
            for j, (t, p) in enumerate(alts.items())
        ]
        content.append(
            {"id": n, "token": tok, "bytes": list(tok.encode()),
             "logprob": math.log(alts[tok]), "top_logprobs": top}
        )  # fmt: skip
    return {"content": content}


# "unsafe\nS1,S10" as Llama 3 tokenizes it; at the first code the alternatives are S1 .6,
# S10 .3, S2 .1, at the second S10 .9, S1 .1; P(unsafe) = .8 / (.8 + .2)
LLAMA3 = (
    ("unsafe", {"unsafe": 0.8, "safe": 0.2}),
    ("\n", {"\n": 1.0}),
    ("S", {"S": 1.0}),
    ("1", {"1": 0.6, "10": 0.3, "2": 0.1}),
    (",", {",": 1.0}),
    ("S", {"S": 1.0}),
    ("10", {"10": 0.9, "1": 0.1}),
)
# score = P(unsafe) x the largest share over the code positions
LLAMA3_EXPECTED = {"violence": 0.8 * 0.6, "hate": 0.8 * 0.9, **dict.fromkeys(S2_IDS, 0.8 * 0.1)}
# an answer cut by max_tokens after "S1": S9 (weapons) read with P(unsafe) .8 x share 1;
# what the cut code flags (S1..S14) is unknown, as is every category S9 does not flag
CUT = (
    ("unsafe", {"unsafe": 0.8, "safe": 0.2}), ("\n", {"\n": 1.0}), ("S", {"S": 1.0}),
    ("9", {"9": 1.0}), (",", {",": 1.0}), ("S", {"S": 1.0}), ("1", {"1": 1.0}),
)  # fmt: skip
# a "safe" alternative whose logprob is positive (no log-probability): not read, 0/1
INVALID = {
    "tokens": ["unsafe", "\n", "S", "10"],
    "token_logprobs": [-0.5, 0.0, 0.0, 0.0],
    "top_logprobs": [{"unsafe": -0.5, "safe": 3.0}, {"\n": 0.0}, {"S": 0.0}, {"10": 0.0}],
}
ANSWERS: dict[str, dict[str, Any]] = {
    "item-00000": {"text": "unsafe\nS1,S10", "logprobs": vllm(*LLAMA3)},
    "item-00001": {"text": "unsafe\nS1,S10", "logprobs": llama_cpp(*LLAMA3)},
    "item-00002": {"text": "unsafe\nS9", "logprobs": None},  # a server that sends none
    "item-00003": {"text": "unsafe\nS9,S1", "logprobs": vllm(*CUT), "finish_reason": "length"},
    "item-00004": {"text": "unsafe\nS10", "logprobs": INVALID},
}


def check(scores: dict[str, Any], expected: dict[str, float]) -> None:
    for c in TAX.ids:
        if c in NOT_MAPPED:
            assert scores[c] is None, c  # unknown, never 0
        else:
            assert scores[c] == pytest.approx(expected.get(c, 0.0), abs=1e-12), c


def test_llama_guard_through_completions(tmp_path: Path) -> None:
    import toxeval

    data = tmp_path / "d.jsonl"
    write_dataset(data, 5)
    server = FakeOpenAI().start()
    try:
        server.answers.update(ANSWERS)
        run = tmp_path / "run.jsonl"
        opts: dict[str, Any] = {"base_url": server.url, "scoring": "logprobs", "api": "completions"}
        dry = predict(data, "llama-guard:lg", tmp_path / "dry.jsonl", dry_run=True, **opts)
        assert dry.requests == 5 and not server.log  # nothing sent
        predict(data, "llama-guard:lg", run, **opts)
        assert {e.path for e in server.log} == {"/v1/completions"}
        sent = server.bodies[0]
        assert "messages" not in sent and "top_logprobs" not in sent and sent["logprobs"] == 20
        prompt = sent["prompt"]
        # Llama Guard 3's raw prompt: the user turn, then the assistant header (the
        # server adds <|begin_of_text|>)
        assert prompt.startswith("<|start_header_id|>user<|end_header_id|>\n\nTask: Check if")
        assert "User: please judge item-00000" in prompt and "S10: Hate." in prompt
        assert prompt.endswith(
            "categories.<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"
        )
        lines = run.read_text().splitlines()
        assert json.loads(lines[0])["fingerprint"]["api"] == "completions"
        rows = {r["id"]: r for r in map(json.loads, lines[1:])}
        for rid in ("r0", "r1"):  # vLLM's and llama.cpp's shapes: the same scores
            assert rows[rid]["graded"] and rows[rid]["method"] == "llama-guard"
            check(rows[rid]["scores"], LLAMA3_EXPECTED)
        assert not rows["r2"]["graded"] and NO_LOGPROBS in rows["r2"]["parse_reason"]
        check(rows["r2"]["scores"], {"weapons": 1.0})
        assert rows["r3"]["graded"] and "truncated (max_tokens)" in rows["r3"]["parse_reason"]
        r3 = rows["r3"]["scores"]
        assert r3.pop("weapons") == pytest.approx(0.8) and set(r3.values()) == {None}
        assert not rows["r4"]["graded"] and INVALID_VERDICT in rows["r4"]["parse_reason"]
        check(rows["r4"]["scores"], {"hate": 1.0})
        result = toxeval.evaluate(data, "llama-guard:lg", run_file=run, bootstrap=0, **opts)
        out = result.to_dict()
        assert out["config"]["scoring_method"] == ["llama-guard"]
        assert out["config"]["run_fingerprint"]["guard_scoring"] == "logprobs"
        assert out["binary_scores"] is False and out["system"]["rows"]["binary"] == 2
        assert len(server.log) == 5  # the evaluation resumed from the run file
    finally:
        server.stop()


def _as_chat(choice: dict[str, Any]) -> dict[str, Any]:
    """The chat body that says what a completions choice says, logprobs in chat form."""
    lp = choice["logprobs"]
    if lp is not None and "tokens" in lp:
        lp = {"content": [
            {"token": t, "logprob": c,
             "top_logprobs": [{"token": a, "logprob": v} for a, v in top.items()]}
            for t, c, top in zip(lp["tokens"], lp["token_logprobs"], lp["top_logprobs"],
                                 strict=True)
        ]}  # fmt: skip
    message = {"role": "assistant", "content": choice["text"]}
    finish = choice.get("finish_reason", "stop")
    return {"choices": [{"index": 0, "message": message, "logprobs": lp, "finish_reason": finish}]}


@pytest.mark.parametrize("scoring", ["logprobs", "labels"])
@pytest.mark.parametrize("key", sorted(ANSWERS))
def test_completions_and_chat_read_alike(key: str, scoring: Any) -> None:
    chat = RequestSpec("chat", "lg", TAX, scoring=scoring, llama_guard=True)
    comp = RequestSpec("completions", "lg", TAX, scoring=scoring, llama_guard=True)
    items = [Item("r", f"text {key}")]
    choice = {"index": 0, "finish_reason": "stop", **ANSWERS[key]}
    a = read(comp, plan(comp, items)[0], [{"choices": [choice]}])[0]
    b = read(chat, plan(chat, items)[0], [_as_chat(choice)])[0]
    assert np.array_equal(a.scores, b.scores, equal_nan=True)
    assert a.graded == (scoring == "logprobs" and key in ("item-00000", "item-00001", "item-00003"))
    assert (a.graded, a.status, a.reason, a.method) == (b.graded, b.status, b.reason, b.method)
    # the two APIs are two fingerprints: answers of one are never reused for the other
    assert comp.fingerprint() != chat.fingerprint()


# P(Yes) each category's request gets, by the policy's name in the prompt
P_YES = {"Hate": 0.9, "Harassment": 0.2, "Violence": 0.55}


def policy_answer(request: dict[str, Any]) -> dict[str, Any]:
    """Yes/No in vLLM's shape, P(Yes) split over case and spacing variants."""
    name = next((n for n in P_YES if f'"{n}":' in request["prompt"]), None)
    p = P_YES.get(name or "", 0.01)
    word = "Yes" if p >= 0.5 else "No"
    top = {"Yes": math.log(0.75 * p), " yes": math.log(0.25 * p), "No": math.log(1 - p)}
    lp = {"tokens": [word], "token_logprobs": [top[word]], "top_logprobs": [top],
          "text_offset": [0]}  # fmt: skip
    return {"text": f"{word}, because...", "logprobs": lp}


@pytest.mark.parametrize(
    "template", ["shieldgemma-prompt", "granite-guardian-prompt", "granite-guardian-raw-prompt"]
)
def test_policy_guard_through_completions(tmp_path: Path, template: str) -> None:
    data = tmp_path / "d.jsonl"
    write_dataset(data, 2)
    server = FakeOpenAI().start()
    try:
        server.answers["item-00000"] = policy_answer
        server.answers["item-00001"] = {"text": "No.", "logprobs": None}  # no logprobs: 0/1
        opts = {"base_url": server.url, "api": "completions", "template": template}
        dry = predict(data, "policy-guard:g", tmp_path / "dry.jsonl", dry_run=True, **opts)
        assert dry.requests == 2 * TAX.k and f"({TAX.k} per item)" in dry.line()
        run = tmp_path / "run.jsonl"
        predict(data, "policy-guard:g", run, **opts)
        assert len(server.bodies) == 2 * TAX.k
        assert {e.path for e in server.log} == {"/v1/completions"}
        assert all(b["logprobs"] == 20 and "messages" not in b for b in server.bodies)
        prompt = server.bodies[0]["prompt"]
        if template == "shieldgemma-prompt":  # ShieldGemma's prompt as its card writes it
            assert prompt.startswith("You are a policy expert trying to help")
            assert "<start_of_turn>\nHuman Question: please judge item-0000" in prompt
            assert prompt.endswith("to be sure we answer correctly.")
        elif template == "granite-guardian-raw-prompt":  # Granite Guardian's own prompt
            assert prompt == (
                "<|start_of_role|>user<|end_of_role|>You are a safety agent trying to help "
                "determine whether the user message is harmful according to the safety risk "
                "definition below.\n\n<start_of_turn>\nUser Message: please judge item-00000"
                "\n<end_of_turn>\n\nOur safety risk definition is defined below:\n"
                f"<start_of_risk_definition>\n* {policy_text(TAX, TAX.ids[0])}\n"
                "<end_of_risk_definition>\n\nIs the user message harmful based on the risk "
                "definition? Your answer must be either 'Yes' or 'No'.<|end_of_text|>\n"
                "<|start_of_role|>assistant<|end_of_role|>"
            )
        else:  # Granite's roles
            assert prompt.startswith("<|start_of_role|>system<|end_of_role|>You are a safety")
            assert "'Yes' or 'No'.<|end_of_text|>\n<|start_of_role|>user<|end_of_role|>" in prompt
            assert prompt.endswith("<|end_of_text|>\n<|start_of_role|>assistant<|end_of_role|>")
        rows = {r["id"]: r for r in map(json.loads, run.read_text().splitlines()[1:])}
        r0 = rows["r0"]
        assert r0["graded"] and r0["method"] == "policy-guard" and r0["parse_status"] == "ok"
        # P(Yes) = (.75p + .25p) / (p + 1 - p) = p
        assert r0["scores"]["hate"] == pytest.approx(0.9)
        assert r0["scores"]["harassment"] == pytest.approx(0.2)
        assert r0["scores"]["violence"] == pytest.approx(0.55)
        assert r0["scores"]["profanity"] == pytest.approx(0.01)
        r1 = rows["r1"]
        assert not r1["graded"] and set(r1["scores"].values()) == {0.0}
        assert "no logprobs, read as 0/1" in r1["parse_reason"]
    finally:
        server.stop()


def test_completions_refused_where_no_raw_prompt_exists(cli: Any, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="for guard models"):
        RequestSpec("completions", "m", TAX)
    with pytest.raises(ValueError, match="plain conversation"):
        RequestSpec("completions", "m", TAX, llama_guard=True,
                    template=load_template("llama-guard-3-chat-prompt"))  # fmt: skip
    with pytest.raises(ValueError, match="max_completion_tokens is a chat parameter"):
        RequestSpec("completions", "m", TAX, llama_guard=True, max_completion_tokens=5)
    data = tmp_path / "d.jsonl"
    write_dataset(data, 1)
    got = cli("predict", "--dataset", str(data), "--detector", "openai:m", "--api", "completions",
              "--dry-run")  # fmt: skip
    assert (
        got.returncode == 2 and "for guard models" in got.stderr and "Traceback" not in got.stderr
    )
    got = cli("predict", "--dataset", str(data), "--detector", "openai-moderation", "--api", "completions",
              "--dry-run")  # fmt: skip
    assert got.returncode == 2 and "--api" in got.stderr


def test_granite_guardian_raw_response_prompt() -> None:
    spec = RequestSpec("completions", "gg", TAX, policy_guard=True, level="response",
                       template=load_template("granite-guardian-raw-response"))  # fmt: skip
    (unit,) = plan(spec, [Item("r", "hi item-00003", "go away")])
    hate = TAX.ids.index("hate")
    assert unit.calls[hate].body["prompt"] == (
        "<|start_of_role|>user<|end_of_role|>You are a safety agent trying to help determine "
        "whether the assistant message to the user message is harmful according to the safety "
        "risk definition below.\n\n<start_of_turn>\nUser Message: hi item-00003\n"
        "Assistant Message: go away\n<end_of_turn>\n\nOur safety risk definition is defined "
        f"below:\n<start_of_risk_definition>\n* {policy_text(TAX, 'hate')}\n"
        "<end_of_risk_definition>\n\nIs the assistant message harmful based on the risk "
        "definition? Your answer must be either 'Yes' or 'No'.<|end_of_text|>\n"
        "<|start_of_role|>assistant<|end_of_role|>"
    )


def test_template_completion_key(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('level = "prompt"\nkind = "policy"\ncompletion = "chatml"\n'
                   'user = "$text $policy"\n')  # fmt: skip
    with pytest.raises(TemplateError, match="must be one of llama-3, granite, plain"):
        load_template(bad)
    judge = tmp_path / "judge.toml"
    judge.write_text('level = "prompt"\ncompletion = "plain"\n'
                     'user = "$text $categories $format"\n')  # fmt: skip
    with pytest.raises(TemplateError, match="a guard template's raw prompt form"):
        load_template(judge)
    both = tmp_path / "both.toml"
    both.write_text('level = "prompt"\nkind = "policy"\ncompletion = "plain"\n'
                    'system = "$policy"\nuser = "$text"\n')  # fmt: skip
    with pytest.raises(ValueError, match="also has a system message"):
        RequestSpec("completions", "m", TAX, policy_guard=True, template=load_template(both))
    plain = tmp_path / "plain.toml"  # a Llama Guard prompt written raw by the user
    plain.write_text('level = "prompt"\nkind = "llama-guard"\ncompletion = "plain"\n'
                     'user = "RAW $text"\n')  # fmt: skip
    spec = RequestSpec("completions", "m", TAX, llama_guard=True, template=load_template(plain))
    assert plan(spec, [Item("r", "x")])[0].calls[0].body["prompt"] == "RAW x"


@pytest.mark.parametrize("bad", [float("nan"), float("-inf"), 0.5, "x", None, True])
def test_policy_guard_invalid_logprobs_read_alike(bad: Any) -> None:
    # "No" chosen, its "Yes" alternative's logprob no log-probability: dropping it would
    # make "No" certain; both APIs read the answer's word instead, 0/1 and not graded
    small = load_taxonomy("openai-moderation-8")
    chat = RequestSpec("chat", "sg", small, policy_guard=True)
    comp = RequestSpec("completions", "sg", small, policy_guard=True)
    good = {"tokens": ["Yes"], "token_logprobs": [math.log(0.7)],
            "top_logprobs": [{"Yes": math.log(0.7), "No": math.log(0.3)}]}  # fmt: skip
    broken = {
        "tokens": ["No"],
        "token_logprobs": [-0.1],
        "top_logprobs": [{"No": -0.1, "Yes": bad}],
    }
    choices = [{"index": 0, "text": "Yes", "logprobs": good}] * small.k
    choices[3] = {"index": 0, "text": "No", "logprobs": broken}
    items = [Item("r", "text")]
    a = read(comp, plan(comp, items)[0], [{"choices": [c]} for c in choices])[0]
    b = read(chat, plan(chat, items)[0], [_as_chat(c) for c in choices])[0]
    assert np.array_equal(a.scores, b.scores, equal_nan=True)
    assert (a.graded, a.status, a.reason) == (b.graded, b.status, b.reason)
    assert (
        a.scores[3] == 0.0 and not a.graded and "no logprobs, read as 0/1: hr" in (a.reason or "")
    )
    assert a.scores[0] == pytest.approx(0.7)
