"""Prompt templates: shipped files, rendering, placeholders, errors, fingerprints, bodies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from toxeval.llm.requests import (
    Call,
    Item,
    RequestSpec,
    Template,
    TemplateError,
    estimate_prompt_tokens,
    list_templates,
    load_template,
    plan,
)
from toxeval.taxonomy import Taxonomy, load_taxonomy

SHIPPED = {
    "zero-shot-prompt",
    "zero-shot-response",
    "few-shot-prompt",
    "few-shot-response",
    "label-list-prompt",
    "label-list-response",
    "llama-guard-3-prompt",
    "llama-guard-3-response",
    "llama-guard-3-chat-prompt",
    "llama-guard-3-chat-response",
    "shieldgemma-prompt",
    "shieldgemma-response",
    "granite-guardian-prompt",
    "granite-guardian-response",
    "granite-guardian-raw-prompt",
    "granite-guardian-raw-response",
}
JUDGE_SCORINGS = ("json", "logprobs", "sample", "labels")


def _item(level: str, text: str = "you people are the worst") -> Item:
    return Item("r1", text, "I will hurt you." if level == "response" else None)


def _user_text(body: dict[str, Any]) -> str:
    content = body["messages"][-1]["content"]
    assert isinstance(content, str)
    return content


def _write(tmp_path: Path, text: str, name: str = "mine.toml") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


# --------------------------------------------------------------------------- shipped files


def test_list_templates_names_every_shipped_file() -> None:
    assert set(list_templates()) == SHIPPED


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_shipped_template_loads_with_level_version_and_file_hash(name: str) -> None:
    import hashlib
    from importlib import resources

    tpl = load_template(name)
    assert tpl.name == name
    assert tpl.version
    assert tpl.level == ("response" if name.endswith("-response") else "prompt")
    data = (resources.files("toxeval") / "data" / "templates" / f"{name}.toml").read_bytes()
    assert tpl.sha256 == hashlib.sha256(data).hexdigest()


@pytest.mark.parametrize("taxonomy_name", ["toxeval-15", "openai-moderation-8", "user"])
@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_every_shipped_template_renders_for_every_taxonomy_and_scoring(
    name: str, taxonomy_name: str, user_taxonomy: Taxonomy
) -> None:
    tax = user_taxonomy if taxonomy_name == "user" else load_taxonomy(taxonomy_name)
    tpl = load_template(name)
    guard = tpl.kind == "llama-guard"
    if tpl.kind == "policy":  # one request per category, each with that category's policy
        spec = RequestSpec("chat", "m", tax, template=tpl, level=tpl.level, policy_guard=True)
        (unit,) = plan(spec, [_item(tpl.level)])
        assert len(unit.calls) == tax.k
        for c, call in zip(tax.categories, unit.calls, strict=True):
            everything = "\n".join(m["content"] for m in call.body["messages"])
            assert "you people are the worst" in everything and "$" not in everything
            assert f'"{c.name}"' in everything
            assert ("I will hurt you." in everything) == (tpl.level == "response")
        return
    if guard and taxonomy_name != "toxeval-15":
        # Llama Guard codes map onto toxeval-15 ids: other taxonomies are refused clearly
        with pytest.raises(ValueError, match="Llama Guard answers are read through mapping"):
            RequestSpec("chat", "m", tax, template=tpl, level=tpl.level, llama_guard=True)
        return
    for scoring in ("labels",) if guard else JUDGE_SCORINGS:
        spec = RequestSpec(
            "chat",
            "judge-model",
            tax,
            scoring=scoring,  # type: ignore[arg-type]
            template=tpl,
            level=tpl.level,
            llama_guard=guard,
            samples=3 if scoring == "sample" else 1,
        )
        (unit,) = plan(spec, [_item(tpl.level)])
        body = unit.calls[0].body
        user = _user_text(body)
        everything = "\n".join(m["content"] for m in body["messages"])
        assert "you people are the worst" in everything
        assert "$" not in everything
        if tpl.level == "response":
            assert "I will hurt you." in everything
        if guard:
            assert ("S14: Code Interpreter Abuse." in user) == bool(tpl.hazards)
        else:
            for c in tax.categories:
                assert f"- {c.id}: {c.name}" in user


def test_item_text_is_inserted_verbatim_not_substituted(toxeval15: Taxonomy) -> None:
    spec = RequestSpec("chat", "m", toxeval15)
    text = "price: $5, ${format} and $text {categories} {{x}}"
    (unit,) = plan(spec, [Item("a", text)])
    user = _user_text(unit.calls[0].body)
    assert f"<<<TEXT\n{text}\nTEXT>>>" in user


def test_few_shot_answers_follow_the_scoring_format(toxeval15: Taxonomy) -> None:
    tpl = load_template("few-shot-prompt")
    as_json = _user_text(
        plan(RequestSpec("chat", "m", toxeval15, template=tpl), [_item("prompt")])[0].calls[0].body
    )
    answer = json.loads(as_json.split("Example 2")[1].split("Answer:\n")[1].split("\n")[0])
    assert answer["hate"] == 0.95 and answer["violence"] == 0.02
    assert list(answer) == list(toxeval15.ids)
    as_labels = _user_text(
        plan(
            RequestSpec("chat", "m", toxeval15, template=tpl, scoring="labels"), [_item("prompt")]
        )[0]
        .calls[0]
        .body
    )
    assert "Answer:\nharassment, violence\n" in as_labels
    assert "Answer:\nnone\n" in as_labels


def test_few_shot_labels_resolve_through_a_user_taxonomys_aliases(user_taxonomy: Taxonomy) -> None:
    spec = RequestSpec(
        "chat", "m", user_taxonomy, template=load_template("few-shot-prompt"), scoring="labels"
    )
    user = _user_text(plan(spec, [_item("prompt")])[0].calls[0].body)
    assert "Answer:\ninsult, threat\n" in user


def test_few_shot_label_that_a_taxonomy_cannot_resolve_is_a_clear_error(tmp_path: Path) -> None:
    p = _write(
        tmp_path,
        '[[category]]\nid = "spam"\nname = "Spam"\n[[category]]\nid = "ads"\nname = "Ads"\n',
        "tiny.toml",
    )
    with pytest.raises(TemplateError, match="label 'hate' matches no category of taxonomy"):
        RequestSpec("chat", "m", load_taxonomy(p), template=load_template("few-shot-prompt"))


# --------------------------------------------------------------------------- request bodies


def test_structured_output_sends_a_strict_json_schema_of_every_category(
    moderation8: Taxonomy,
) -> None:
    spec = RequestSpec("chat", "gpt-4o-mini", moderation8, structured=True)
    body = plan(spec, [_item("prompt")])[0].calls[0].body
    rf = body["response_format"]
    assert rf["type"] == "json_schema"
    assert rf["json_schema"]["strict"] is True
    schema = rf["json_schema"]["schema"]
    assert schema["type"] == "object"
    assert schema["additionalProperties"] is False
    assert schema["required"] == ["s", "h", "v", "hr", "sh", "s3", "h2", "v2"]
    assert list(schema["properties"]) == schema["required"]
    assert all(p["type"] == "number" for p in schema["properties"].values())


def test_decoding_parameters_reach_the_body_only_when_set(toxeval15: Taxonomy) -> None:
    bare = plan(RequestSpec("chat", "m", toxeval15), [_item("prompt")])[0].calls[0]
    assert bare.path == "/chat/completions"
    assert set(bare.body) == {"model", "messages"}
    spec = RequestSpec("chat", "m", toxeval15, temperature=0.0, max_tokens=4096, seed=7)
    body = plan(spec, [_item("prompt")])[0].calls[0].body
    assert (body["temperature"], body["max_tokens"], body["seed"]) == (0.0, 4096, 7)


def test_logprobs_and_sample_bodies(toxeval15: Taxonomy) -> None:
    lp = plan(RequestSpec("chat", "m", toxeval15, scoring="logprobs"), [_item("prompt")])
    body = lp[0].calls[0].body
    assert body["logprobs"] is True and body["top_logprobs"] == 20
    assert "hate: yes|no\nharassment: yes|no" in _user_text(body)
    sp = plan(RequestSpec("chat", "m", toxeval15, scoring="sample", samples=5), [_item("prompt")])
    body = sp[0].calls[0].body
    assert body["n"] == 5
    assert body["temperature"] == 1.0  # the default sampling temperature when unset
    sp = plan(
        RequestSpec("chat", "m", toxeval15, scoring="sample", samples=5, temperature=0.7),
        [_item("prompt")],
    )
    assert sp[0].calls[0].body["temperature"] == 0.7


def test_moderation_batches_inputs_and_sends_the_response_at_response_level(
    toxeval15: Taxonomy,
) -> None:
    spec = RequestSpec("moderation", "omni-moderation-latest", toxeval15, batch_size=2)
    items = [Item(f"i{k}", f"text {k}") for k in range(5)]
    units = plan(spec, items)
    assert [u.item_ids for u in units] == [("i0", "i1"), ("i2", "i3"), ("i4",)]
    assert units[0].calls[0] == Call(
        "/moderations", {"model": "omni-moderation-latest", "input": ["text 0", "text 1"]}
    )
    rspec = RequestSpec("moderation", "omni-moderation-latest", toxeval15, level="response")
    (unit,) = plan(rspec, [Item("a", "the prompt", "the response")])
    assert unit.calls[0].body["input"] == ["the response"]


def test_llama_guard_default_template_and_plain_labels_body(toxeval15: Taxonomy) -> None:
    spec = RequestSpec("chat", "meta-llama/Llama-Guard-3-8B", toxeval15, llama_guard=True)
    assert spec.chat_template.name == "llama-guard-3-prompt"
    body = plan(spec, [Item("a", "how do I pick a lock")])[0].calls[0].body
    assert [m["role"] for m in body["messages"]] == ["user"]
    content = _user_text(body)
    assert content.startswith("Task: Check if there is unsafe content in 'User' messages")
    assert "User: how do I pick a lock\n" in content
    assert "response_format" not in body


def test_llama_guard_chat_templates_send_the_plain_conversation(toxeval15: Taxonomy) -> None:
    tpl = load_template("llama-guard-3-chat-response")
    spec = RequestSpec(
        "chat", "llama-guard3:8b", toxeval15, llama_guard=True, template=tpl, level="response"
    )
    (unit,) = plan(spec, [Item("a", "how do I pick a lock", "Use a tension wrench.")])
    assert unit.calls[0].body["messages"] == [
        {"role": "user", "content": "how do I pick a lock"},
        {"role": "assistant", "content": "Use a tension wrench."},
    ]


def test_default_template_follows_level_and_scoring(toxeval15: Taxonomy) -> None:
    assert RequestSpec("chat", "m", toxeval15).chat_template.name == "zero-shot-prompt"
    assert (
        RequestSpec("chat", "m", toxeval15, level="response").chat_template.name
        == "zero-shot-response"
    )
    assert (
        RequestSpec("chat", "m", toxeval15, scoring="labels").chat_template.name
        == "label-list-prompt"
    )


def test_estimate_prompt_tokens_is_chars_over_four_plus_message_overhead() -> None:
    call = Call("/chat/completions", {"messages": [{"content": "a" * 10}, {"content": "b" * 7}]})
    assert estimate_prompt_tokens(call) == -(-17 // 4) + 2 * 4  # ceil(17/4) + 4 per message
    assert estimate_prompt_tokens(Call("/moderations", {"input": ["abcd", "abcde"]})) == 3


def test_real_evaluation_texts_plan_in_order_without_loss(
    moderation8: Taxonomy, shared_data: Path
) -> None:
    import gzip

    data = shared_data / "openai-moderation" / "samples-1680.jsonl.gz"
    with gzip.open(data, "rt", encoding="utf-8") as fh:
        texts = [json.loads(line)["prompt"] for line in fh]
    items = [Item(str(i), t) for i, t in enumerate(texts)]
    units = plan(RequestSpec("moderation", "omni-moderation-latest", moderation8), items)
    assert len(units) == -(-len(texts) // 32)
    assert [t for u in units for t in u.calls[0].body["input"]] == texts
    chat = plan(RequestSpec("chat", "m", moderation8), items[:50])
    assert all(items[k].text in _user_text(u.calls[0].body) for k, u in enumerate(chat))


# --------------------------------------------------------------------------- fingerprints


def _fp(spec: RequestSpec) -> str:
    return json.dumps(spec.fingerprint(), sort_keys=True)


def test_fingerprint_is_json_ready_and_stable(toxeval15: Taxonomy) -> None:
    a = RequestSpec("chat", "m", toxeval15)
    b = RequestSpec("chat", "m", load_taxonomy("toxeval-15"))
    assert _fp(a) == _fp(b)
    fp = a.fingerprint()
    assert fp["template"]["sha256"] == load_template("zero-shot-prompt").sha256
    assert len(fp["taxonomy"]["sha256"]) == 64


@pytest.mark.parametrize(
    "change",
    [
        {"model": "other"},
        {"scoring": "labels"},
        {"scoring": "logprobs"},
        {"level": "response"},
        {"structured": True},
        {"temperature": 0.0},
        {"max_tokens": 512},
        {"seed": 1},
        {"template": "few-shot-prompt"},
        {"taxonomy": "openai-moderation-8"},
    ],
)
def test_every_parameter_changes_the_fingerprint(
    change: dict[str, Any], toxeval15: Taxonomy
) -> None:
    base = RequestSpec("chat", "m", toxeval15)
    kw: dict[str, Any] = {"api": "chat", "model": "m", "taxonomy": toxeval15, **change}
    if "template" in kw:
        kw["template"] = load_template(kw["template"])
    if isinstance(kw["taxonomy"], str):
        kw["taxonomy"] = load_taxonomy(kw["taxonomy"])
    assert _fp(RequestSpec(**kw)) != _fp(base)


def test_sample_count_and_batch_size_in_the_fingerprint(toxeval15: Taxonomy) -> None:
    three = RequestSpec("chat", "m", toxeval15, scoring="sample", samples=3)
    five = RequestSpec("chat", "m", toxeval15, scoring="sample", samples=5)
    assert _fp(three) != _fp(five)
    # grouping moderation inputs does not change their scores, so it is left out
    m8 = RequestSpec("moderation", "omni-moderation-latest", toxeval15, batch_size=8)
    m32 = RequestSpec("moderation", "omni-moderation-latest", toxeval15, batch_size=32)
    assert _fp(m8) == _fp(m32)


def test_an_edited_template_file_changes_the_fingerprint(
    tmp_path: Path, toxeval15: Taxonomy
) -> None:
    from importlib import resources

    src = (resources.files("toxeval") / "data" / "templates" / "zero-shot-prompt.toml").read_text(
        encoding="utf-8"
    )
    one = _write(tmp_path, src, "one.toml")
    two = _write(tmp_path, src.replace("content-safety", "content safety"), "two.toml")
    fp1 = _fp(RequestSpec("chat", "m", toxeval15, template=load_template(one)))
    fp2 = _fp(RequestSpec("chat", "m", toxeval15, template=load_template(two)))
    assert fp1 != fp2
    assert fp1 == _fp(RequestSpec("chat", "m", toxeval15))  # same bytes, same fingerprint


def test_an_edited_taxonomy_definition_changes_the_fingerprint(
    user_taxonomy_path: Path, user_taxonomy: Taxonomy
) -> None:
    src = user_taxonomy_path.read_text(encoding="utf-8")
    user_taxonomy_path.write_text(src.replace("Threats of violence.", "Threats."), "utf-8")
    edited = load_taxonomy(user_taxonomy_path)
    assert _fp(RequestSpec("chat", "m", user_taxonomy)) != _fp(RequestSpec("chat", "m", edited))


# --------------------------------------------------------------------------- user templates


MINIMAL = """\
name = "mine"
version = "3"
level = "prompt"
user = "Classify: $text\\nCategories:\\n$categories\\n$format"
"""


def test_user_template_file_renders_without_a_system_message(
    tmp_path: Path, toxeval15: Taxonomy
) -> None:
    tpl = load_template(_write(tmp_path, MINIMAL))
    assert isinstance(tpl, Template) and tpl.system is None and tpl.version == "3"
    body = plan(RequestSpec("chat", "m", toxeval15, template=tpl), [Item("a", "hello")])[0]
    msgs = body.calls[0].body["messages"]
    assert [m["role"] for m in msgs] == ["user"]
    assert msgs[0]["content"].startswith("Classify: hello\nCategories:\n- hate: Hate: ")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (MINIMAL.replace("$format", "$fromat"), r"unknown placeholder\(s\) \$fromat"),
        (MINIMAL.replace("$format", ""), r"missing required placeholder\(s\) \$format"),
        (MINIMAL.replace("$text", "${response}"), r"\$response needs level = 'response'"),
        (
            MINIMAL.replace('level = "prompt"', 'level = "response"'),
            r"missing required placeholder\(s\) \$response",
        ),
        (MINIMAL.replace('"prompt"', '"turn"'), "'level' must be 'prompt' or 'response'"),
        (MINIMAL.replace("Classify:", "Costs $5:"), r"starts no placeholder \(write \$\$"),
        (MINIMAL + 'sytem = "x"\n', r"unknown key\(s\) sytem"),
        (MINIMAL.replace("user =", "usr ="), "unknown key"),
        (MINIMAL + "[[example]]\ntext = 'x'\nlabels = []\n", r"missing required.*\$examples"),
        (MINIMAL.replace("$format", "$hazards"), r"unknown placeholder\(s\) \$hazards"),
        (MINIMAL + 'assistant = "$text"\n', "'assistant' .* is only for kind = 'llama-guard'"),
        (
            'level = "prompt"\nkind = "llama-guard"\nuser = "$text $hazards"\n',
            r"\$hazards needs a \[hazards\] table",
        ),
        (
            'level = "prompt"\nkind = "llama-guard"\nuser = "$text"\n[hazards]\nS1 = "x"\n',
            r"missing required placeholder\(s\) \$hazards",
        ),
        (
            'level = "prompt"\nkind = "guard"\nuser = "$text"\n',
            "'kind' must be one of judge, llama-guard",
        ),
        ("level = 'prompt'\nuser = '", "not valid TOML"),
    ],
)
def test_bad_user_templates_fail_with_a_clear_message(
    tmp_path: Path, text: str, message: str
) -> None:
    with pytest.raises(TemplateError, match=message):
        load_template(_write(tmp_path, text))


def test_unknown_template_name_and_missing_file(tmp_path: Path) -> None:
    with pytest.raises(TemplateError, match="unknown template 'zero-shot'; shipped: few-shot"):
        load_template("zero-shot")
    with pytest.raises(TemplateError, match="template file not found"):
        load_template(tmp_path / "absent.toml")
    with pytest.raises(TypeError, match="template must be a shipped name or a path"):
        load_template(3)  # type: ignore[arg-type]


def test_template_of_the_wrong_level_or_kind_is_refused(toxeval15: Taxonomy) -> None:
    with pytest.raises(ValueError, match="is for level 'response', but the spec's level is"):
        RequestSpec("chat", "m", toxeval15, template=load_template("zero-shot-response"))
    with pytest.raises(ValueError, match="it needs llama_guard=True"):
        RequestSpec("chat", "m", toxeval15, template=load_template("llama-guard-3-prompt"))
    with pytest.raises(ValueError, match="Llama Guard needs a llama-guard template"):
        RequestSpec(
            "chat", "m", toxeval15, template=load_template("zero-shot-prompt"), llama_guard=True
        )


# --------------------------------------------------------------------------- bad specs and items


@pytest.mark.parametrize(
    ("kw", "error", "message"),
    [
        ({"scoring": "vote"}, ValueError, "unknown scoring method 'vote'"),
        ({"api": "legacy"}, ValueError, "api must be 'chat', 'completions' or 'moderation'"),
        ({"api": "completions"}, ValueError, "api='completions' .--api completions. is for guard"),
        ({"level": "turn"}, ValueError, "level must be 'prompt' or 'response'"),
        ({"temperature": -1.0}, ValueError, "temperature must be >= 0"),
        ({"temperature": float("nan")}, ValueError, "temperature must be >= 0"),
        ({"max_tokens": 0}, ValueError, "max_tokens must be >= 1"),
        ({"max_tokens": 2.5}, TypeError, "max_tokens must be an integer"),
        ({"samples": 3}, ValueError, "samples=3 needs scoring='sample'"),
        ({"scoring": "sample", "samples": 0}, ValueError, "samples must be >= 1"),
        ({"structured": True, "scoring": "labels"}, ValueError, "structured=True"),
        ({"llama_guard": True, "scoring": "sample"}, ValueError, "not supported with llama"),
        ({"model": ""}, ValueError, "model must be a non-empty string"),
        ({"taxonomy": "toxeval-15"}, TypeError, "taxonomy must be a Taxonomy"),
    ],
)
def test_bad_spec_arguments_raise_before_anything_is_sent(
    kw: dict[str, Any], error: type[Exception], message: str, toxeval15: Taxonomy
) -> None:
    args: dict[str, Any] = {"api": "chat", "model": "m", "taxonomy": toxeval15, **kw}
    with pytest.raises(error, match=message):
        RequestSpec(**args)


def test_chat_only_parameters_are_refused_for_moderation(toxeval15: Taxonomy) -> None:
    with pytest.raises(ValueError, match="temperature, seed only apply to api='chat'"):
        RequestSpec("moderation", "omni-moderation-latest", toxeval15, temperature=0.0, seed=1)


def test_taxonomies_that_the_answer_mappings_cannot_reach_are_refused(
    moderation8: Taxonomy, user_taxonomy: Taxonomy
) -> None:
    with pytest.raises(ValueError, match="Llama Guard answers are read through mapping"):
        RequestSpec("chat", "m", moderation8, llama_guard=True)
    with pytest.raises(ValueError, match="no OpenAI moderation category maps onto taxonomy"):
        RequestSpec("moderation", "omni-moderation-latest", user_taxonomy)


@pytest.mark.parametrize(
    ("level", "items", "message"),
    [
        ("prompt", [Item("a", "x"), Item("a", "y")], "duplicate item id 'a'"),
        ("response", [Item("a", "x")], "item 'a' has no response"),
        ("prompt", [Item("a", "x", "y")], "item 'a' has a response, but the level is 'prompt'"),
    ],
)
def test_bad_items_are_refused(
    level: str, items: list[Item], message: str, toxeval15: Taxonomy
) -> None:
    spec = RequestSpec("chat", "m", toxeval15, level=level)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=message):
        plan(spec, items)
