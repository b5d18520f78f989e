"""Built-in taxonomies and mappings: load, resolve aliases unambiguously, validate targets."""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest
from helpers import examples
from hypothesis import given, settings
from hypothesis import strategies as st
from toxeval.taxonomy import (
    TaxonomyError,
    list_mappings,
    list_taxonomies,
    load_mapping,
    load_taxonomy,
    normalize_label,
)

TOXEVAL_15 = (
    "hate harassment violence self_harm sexual sexual_minors weapons drugs fraud "
    "cybercrime privacy crime extremism misinformation profanity"
).split()


def test_builtins_listed() -> None:
    assert {"toxeval-15", "openai-moderation-8"} <= set(list_taxonomies())
    assert {"llama-guard-3", "openai-moderation"} <= set(list_mappings())


def test_toxeval_15_ids_in_order_with_definitions() -> None:
    tax = load_taxonomy("toxeval-15")
    assert list(tax.ids) == TOXEVAL_15
    for cat in tax.categories:
        assert cat.name
        assert cat.description.count(".") >= 2, cat.id  # 2-3 sentences for annotators
        assert cat.aliases, cat.id


def test_openai_moderation_8() -> None:
    tax = load_taxonomy("openai-moderation-8")
    assert tax.ids == ("s", "h", "v", "hr", "sh", "s3", "h2", "v2")
    for key, api, cid in [
        ("S", "sexual", "s"),
        ("H", "hate", "h"),
        ("V", "violence", "v"),
        ("HR", "harassment", "hr"),
        ("SH", "self-harm", "sh"),
        ("S3", "sexual/minors", "s3"),
        ("H2", "hate/threatening", "h2"),
        ("V2", "violence/graphic", "v2"),
    ]:
        assert tax.resolve(key) == cid
        assert tax.resolve(api) == cid


@pytest.mark.parametrize("name", ["toxeval-15", "openai-moderation-8"])
def test_every_alias_resolves_to_its_own_category(name: str) -> None:
    tax = load_taxonomy(name)
    owner: dict[str, str] = {}
    for cat in tax.categories:
        for key in (cat.id, cat.name, *cat.aliases):
            norm = normalize_label(key)
            assert owner.setdefault(norm, cat.id) == cat.id, (
                f"{key!r} is claimed by {owner[norm]!r} and {cat.id!r}"
            )
            assert tax.resolve(key) == cat.id


@pytest.mark.parametrize(
    ("alias", "cid"),
    [
        ("self-harm", "self_harm"),
        ("Suicide", "self_harm"),
        ("CSAM", "sexual_minors"),
        ("child sexual content", "sexual_minors"),
        ("hate speech", "hate"),
        ("scams", "fraud"),
        ("Hacking", "cybercrime"),
        ("malware", "cybercrime"),
        ("doxxing", "privacy"),
        ("PII", "privacy"),
        ("terrorism", "extremism"),
        ("disinformation", "misinformation"),
        ("swearing", "profanity"),
        ("guns", "weapons"),
        ("Sexual content", "sexual"),
    ],
)
def test_useful_aliases(alias: str, cid: str) -> None:
    assert load_taxonomy().resolve(alias) == cid


def test_mappings_validate_and_cover_codes() -> None:
    lg = load_mapping("llama-guard-3")
    assert lg.target == "toxeval-15"
    assert set(lg.table) == {f"S{i}" for i in range(1, 15)}
    assert lg.map("S10") == ("hate",)
    assert lg.map("s11") == ("self_harm",)
    assert lg.map("S6") == ()
    assert lg.map("S99") is None
    om = load_mapping("openai-moderation")
    for key in ("S", "H", "V", "HR", "SH", "S3", "H2", "V2"):
        assert om.map(key) is not None
    assert set(om.map("H2") or ()) == {"hate", "violence"}
    assert om.map("V2") == ("violence",)
    assert "sexual_minors" in (om.map("sexual/minors") or ())
    assert om.map("S3") == om.map("sexual/minors")
    tax = load_taxonomy()
    for m in (lg, om):
        for ids in m.table.values():
            assert set(ids) <= set(tax.ids)


def test_mapping_with_unknown_target_is_rejected(tmp_path: Path) -> None:
    p = tmp_path / "bad.toml"
    p.write_text('name = "bad"\ntarget = "toxeval-15"\n[map]\nX1 = ["hate", "nonsense"]\n')
    with pytest.raises(TaxonomyError, match=r"'X1' maps to 'nonsense'"):
        load_mapping(p)


def _write(tmp_path: Path, body: str) -> Path:
    p = tmp_path / "tax.toml"
    p.write_text(body)
    return p


def test_custom_k2_taxonomy(tmp_path: Path) -> None:
    p = _write(
        tmp_path,
        'name = "two"\nversion = "1"\n'
        '[[category]]\nid = "toxic"\nname = "Toxic"\naliases = ["toxicity"]\n'
        '[[category]]\nid = "spam"\nname = "Spam"\n',
    )
    tax = load_taxonomy(p)
    assert tax.k == 2
    assert tax.resolve("Toxicity") == "toxic"
    assert tax.index("spam") == 1


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('name = "x"\n', "no \\[\\[category\\]\\] tables"),
        ('name = "x"\n[[category]]\nid = "a"\n', "at least 2 are needed"),
        ('[[category]]\nid = "Bad-Id"\n[[category]]\nid = "b"\n', "must match"),
        ('[[category]]\nid = "a"\n[[category]]\nid = "a"\n', "duplicate category id 'a'"),
        ('[[category]]\nid = "a"\naliases = "x"\n[[category]]\nid = "b"\n', "must be a list"),
        ("[[category]\nid=", "not valid TOML"),
        ('[[category]]\nname = "no id"\n[[category]]\nid = "b"\n', "has no string 'id'"),
    ],
)
def test_bad_taxonomy_files(tmp_path: Path, body: str, message: str) -> None:
    path = _write(tmp_path, body)
    with pytest.raises(TaxonomyError, match=message) as err:
        load_taxonomy(path)
    assert str(path) in str(err.value)  # every error names the file (docs/taxonomy.md)


def test_unknown_builtin_lists_known() -> None:
    with pytest.raises(TaxonomyError, match="toxeval-15"):
        load_taxonomy("no-such-taxonomy")


def test_suggest_names_the_category_a_label_misspells() -> None:
    # shared by the dataset reader (misspelt label fields) and the parser (answers)
    tax = load_taxonomy("toxeval-15")
    assert tax.suggest("violance") == "violence"
    assert tax.suggest("Harrasment") == "harassment"
    assert tax.suggest("self harn") == "self_harm"
    assert tax.suggest("spam") is None and tax.suggest("eggs") is None


def _difflib_suggest(tax_name: str, label: str) -> str | None:
    # the documented rule, with difflib itself: the closest id, name or alias (cutoff
    # 0.8) to the label as written, then to the label normalised
    tax = load_taxonomy(tax_name)
    keys: dict[str, str] = {}
    for cat in tax.categories:
        for x in (cat.id, cat.name, *cat.aliases):
            keys.setdefault(x.lower(), cat.id)
            keys.setdefault(normalize_label(x), cat.id)
    for word in (label.lower(), normalize_label(label)):
        hit = difflib.get_close_matches(word, list(keys), n=1, cutoff=0.8)
        if hit:
            return keys[hit[0]]
    return None


def _near_label(tax_name: str) -> st.SearchStrategy[str]:
    # a category's id, name or alias with a few letters inserted, dropped or replaced
    tax = load_taxonomy(tax_name)
    words = sorted({x for c in tax.categories for x in (c.id, c.name, *c.aliases)})

    def edit(word: str, edits: list[tuple[int, int, str]]) -> str:
        w = list(word)
        for op, pos, ch in edits:
            i = pos % (len(w) + 1)
            if op == 0:
                w.insert(i, ch)
            elif w:
                w[min(i, len(w) - 1) : min(i, len(w) - 1) + op] = [ch] if op == 2 else []
        return "".join(w)

    ops = st.tuples(st.integers(0, 2), st.integers(0, 60), st.sampled_from("aeiostnrl _-éK"))
    return st.builds(edit, st.sampled_from(words), st.lists(ops, max_size=4))


@settings(max_examples=examples(300), deadline=None)
@given(
    st.sampled_from(["toxeval-15", "openai-moderation-8"]).flatmap(
        lambda t: st.tuples(st.just(t), st.one_of(_near_label(t), st.text(max_size=50)))
    )
)
def test_suggest_is_difflibs_closest_match(case: tuple[str, str]) -> None:
    # suggest skips the keys difflib's own bounds rule out; the answer must not change
    tax_name, label = case
    assert load_taxonomy(tax_name).suggest(label) == _difflib_suggest(tax_name, label)
