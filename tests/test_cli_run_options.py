"""The runner's flags are PredictOptions' fields: ``predict``'s and ``evaluate``'s runner
flags have a field's name as their dest, every field has a flag (or is API-only), and
the keywords the command line gives the runner are read off the parsed arguments by
those names (toxeval.cli.run_options)."""

from __future__ import annotations

import argparse
import dataclasses

import pytest
from toxeval.cli.parser import UsageError, build_parser
from toxeval.cli.run_options import EVALUATE_OWN, runner_keywords
from toxeval.llm.options import (
    DERIVED,
    KEYWORDS,
    MODEL_OPTIONS,
    SERVER_OPTIONS,
    PredictOptions,
)
from toxeval.llm.request_spec import API_ONLY, flags_text

# the groups of the runner's flags in evaluate (beside the ones every command has)
RUNNER_GROUPS = ("local classifiers", "API detectors")


def _subcommand(name: str) -> argparse.ArgumentParser:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    parser: argparse.ArgumentParser = sub.choices[name]
    return parser


def _dests(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    return {a.dest: a for a in parser._actions if a.dest != "help"}


def test_keywords_are_the_fields_but_the_derived_ones() -> None:
    names = {f.name for f in dataclasses.fields(PredictOptions)}
    assert set(KEYWORDS) == names - set(DERIVED)
    assert set(API_ONLY) <= set(KEYWORDS) and set(EVALUATE_OWN) <= set(KEYWORDS)


def test_every_option_has_a_predict_flag_and_every_predict_flag_an_option() -> None:
    """Adding a runner option is one field and one flag: a field without a flag (not
    listed API-only) fails here, and so does a flag of predict without a field."""
    flags = set(_dests(_subcommand("predict"))) - {"dataset"}  # predict's first argument
    assert set(KEYWORDS) - set(API_ONLY) - flags == set(), "fields without a flag"
    assert flags - set(KEYWORDS) == set(), "predict flags without a field"
    assert set(API_ONLY) & flags == set(), "API-only fields that have a flag"


def test_evaluate_has_every_runner_flag_and_its_runner_groups_only_options() -> None:
    parser = _subcommand("evaluate")
    assert set(KEYWORDS) - set(API_ONLY) - set(_dests(parser)) == set()
    groups = [g for g in parser._action_groups if g.title and g.title.startswith(RUNNER_GROUPS)]
    assert len(groups) == len(RUNNER_GROUPS)
    in_groups = {a.dest for g in groups for a in g._group_actions}
    assert in_groups - set(KEYWORDS) == set(), "runner flags of evaluate without a field"


@pytest.mark.parametrize("command", ["predict", "evaluate"])
def test_the_flags_the_checks_name_are_the_flags_of_those_options(command: str) -> None:
    """predict_options' messages spell a field as a flag (flags_text): that flag sets it."""
    actions = _dests(_subcommand(command))
    for name in (*MODEL_OPTIONS, *SERVER_OPTIONS, "seed", "limit", "sample"):
        if name in API_ONLY:
            continue
        assert flags_text([name]) in actions[name].option_strings, name


def test_predict_without_options_gives_the_runner_its_defaults() -> None:
    """The command line's defaults are predict's, but quiet (a progress bar unless
    --quiet) and the run file and detector it is given."""
    args = build_parser().parse_args(
        ["predict", "--dataset", "demo", "--detector", "openai:m", "--out", "r.jsonl"]
    )
    defaults = {f.name: f.default for f in dataclasses.fields(PredictOptions)}
    expected = {n: defaults[n] for n in KEYWORDS if n not in API_ONLY}
    expected |= {"detector": "openai:m", "run_file": "r.jsonl", "quiet": False}
    assert runner_keywords(args) == expected


def test_flags_reach_the_runner_by_name() -> None:
    argv = ["predict", "--dataset", "demo", "--detector", "openai:m", "--out", "r.jsonl"]
    argv += ["--timeout", "5", "--min-annotators", "2", "--rule", "at_least", "--seed", "3"]
    argv += ["--temperature", "0.5", "--max-completion-tokens", "9", "--batch-file", "b"]
    got = runner_keywords(build_parser().parse_args(argv))
    assert got["timeout"] == 5.0 and got["min_annotators"] == 2 and got["rule"] == "at_least"
    assert (got["seed"], got["temperature"], got["max_completion_tokens"]) == (3, 0.5, 9)
    assert got["batch_file"] == "b"
    pair = runner_keywords(build_parser().parse_args([*argv[:7], "--timeout", "3,30"]))
    assert pair["timeout"] == (3.0, 30.0)
    with pytest.raises(UsageError, match="--timeout x: give seconds"):
        runner_keywords(build_parser().parse_args([*argv[:7], "--timeout", "x"]))


def test_evaluate_gives_the_runner_the_options_it_does_not_take_itself() -> None:
    args = build_parser().parse_args(["evaluate", "--detector", "openai:m", "--limit", "4"])
    got = runner_keywords(args, exclude=EVALUATE_OWN)
    assert set(got) == set(KEYWORDS) - set(API_ONLY) - set(EVALUATE_OWN)
    assert got["limit"] == 4


def test_a_keyword_without_a_flag_is_named_as_a_keyword() -> None:
    # predict(..., "lexicon", retry_base_delay=1.0) said "--retry-base-delay apply to
    # model servers", a flag that does not exist
    import toxeval.llm

    with pytest.raises(ValueError, match=r"^retry_base_delay= apply to model servers"):
        toxeval.llm.predict("demo", "lexicon", retry_base_delay=1.0, run_file="unused.jsonl")
