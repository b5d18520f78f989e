"""``toxeval compare --fail-if-worse``: the regression gate's p-values against a direct
computation on the same resamples, its Holm adjustment, and its exit codes on constructed
better, equal and worse systems."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import toxeval
from toxeval import stats
from toxeval.cli import main
from toxeval.compare import CompareError, compare
from toxeval.compare_gate import one_sided_pvalue, parse_figures
from toxeval.report import write_outputs
from toxeval.scored_rows import read_scored_rows

N = 120  # resamples: enough for p-values well below 0.05 where the systems differ


@pytest.fixture(scope="module")
def systems(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Folders of the demo set: ``base``; ``equal`` (the same scores); ``better`` (a
    perfect ranking); ``worse`` (noise); ``slightly`` (base with a few scores swapped)."""
    ds = toxeval.load_dataset()
    rng = np.random.default_rng(7)
    y = ds.y_true.astype(float)
    base = np.clip(y * 0.35 + rng.random(y.shape) * 0.7, 0, 1)
    arrays = {
        "base": base,
        "equal": base.copy(),
        "better": np.clip(y * 0.6 + rng.random(y.shape) * 0.3, 0, 1),
        "worse": rng.random(y.shape),
    }
    slightly = base.copy()
    slightly[:4] = 1 - slightly[:4]
    arrays["slightly"] = slightly
    root = tmp_path_factory.mktemp("gate")
    for name, scores in arrays.items():
        write_outputs(toxeval.score(scores, ds, bootstrap=20), root / name)
    return {name: root / name for name in arrays}


def _run(systems: dict[str, Path], new: str, *extra: str) -> int:
    return main(
        [
            "compare",
            f"base={systems['base']}",
            f"new={systems[new]}",
            "--baseline",
            "base",
            "--bootstrap",
            str(N),
            "--format",
            "csv",
            *extra,
        ]
    )


@pytest.mark.parametrize(
    ("new", "code"), [("better", 0), ("equal", 0), ("worse", 1)], ids=["better", "equal", "worse"]
)
def test_exit_codes_on_better_equal_and_worse_systems(
    systems: dict[str, Path], new: str, code: int, capsys: Any
) -> None:
    assert _run(systems, new, "--fail-if-worse", "map,lrl,ap:hate") == code
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("gate FAILED" if code else "gate passed")
    assert len(err) == 4  # one line per test, then the verdict


def test_a_margin_tolerates_a_drop_up_to_it(systems: dict[str, Path], capsys: Any) -> None:
    c = compare(
        [f"base={systems['base']}", f"new={systems['worse']}"],
        baseline="base",
        n_resamples=N,
        fail_if_worse="map",
    )
    assert c.gate is not None
    (t,) = c.gate.tests
    drop = t.worse_by
    assert drop > 0.1 and c.gate.exit_code == 1
    assert _run(systems, "worse", "--fail-if-worse", "map", "--margin", str(drop + 0.2)) == 0
    assert _run(systems, "worse", "--fail-if-worse", "map", "--margin", str(drop / 4)) == 1
    capsys.readouterr()


def test_p_values_equal_a_direct_computation_on_the_same_resamples(
    systems: dict[str, Path],
) -> None:
    margin = 0.01
    c = compare(
        [f"base={systems['base']}", f"new={systems['slightly']}"],
        baseline="base",
        n_resamples=N,
        seed=5,
        fail_if_worse="map,lrl,ap:violence",
        margin=margin,
    )
    assert c.gate is not None
    base = read_scored_rows(systems["base"] / "scored_rows.parquet")
    new = read_scored_rows(systems["slightly"] / "scored_rows.parquet")
    y, m = base.y_true, base.mask
    has_pos = np.flatnonzero(((y == 1) & m).any(axis=0))
    j = list(base.category_ids).index("violence")
    calls = {
        "map": ("average_precision_score", has_pos, {"average": "macro"}, 1.0),
        "lrl": ("label_ranking_loss", np.arange(y.shape[1]), {}, -1.0),
        "ap:violence": ("average_precision_score", j, {}, 1.0),
    }
    raw = []
    for t in c.gate.tests:
        metric, cols, kwargs, sign = calls[t.figure]
        r = stats.compare(
            metric,
            y[:, cols],
            new.scores[:, cols],
            base.scores[:, cols],
            mask=m[:, cols],
            n_resamples=N,
            method="bootstrap",
            seed=5,
            **kwargs,
        )
        d = sign * np.asarray(r.bootstrap_distribution)
        expected = (1 + np.count_nonzero(d >= -margin)) / (1 + d.shape[0])
        assert t.p == pytest.approx(expected, rel=1e-12)
        assert t.difference == pytest.approx(float(r.difference), rel=1e-12, abs=1e-15)
        raw.append(expected)
    np.testing.assert_allclose([t.p_holm for t in c.gate.tests], stats.holm(raw), rtol=1e-12)


def test_one_sided_pvalue_counts_the_resamples_not_worse_by_more_than_the_margin() -> None:
    d = np.array([-0.3, -0.2, -0.1, 0.0, 0.1])
    assert one_sided_pvalue(d, 0.0) == (1 + 2) / 6
    assert one_sided_pvalue(d, 0.15) == (1 + 3) / 6
    assert one_sided_pvalue(d, 1.0) == 1.0


def test_an_untestable_figure_fails_the_gate(tmp_path: Path, capsys: Any) -> None:
    # one row cannot be resampled: the test is undecided, and undecided is no pass
    from helpers import make_dataset

    ds = make_dataset(np.array([[1, 0, 1]]))
    for name, s in (("a", [[0.9, 0.2, 0.6]]), ("b", [[0.9, 0.2, 0.6]])):
        write_outputs(toxeval.score(np.array(s), ds, bootstrap=20), tmp_path / name)
    argv = ["compare", f"A={tmp_path / 'a'}", f"B={tmp_path / 'b'}", "--baseline", "A"]
    assert main([*argv, "--bootstrap", "20", "--fail-if-worse", "map"]) == 1
    err = capsys.readouterr().err
    assert "UNDECIDED" in err and "gate FAILED" in err and "undecided" in err.splitlines()[-1]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--fail-if-worse", "mapp"], "'mapp' is not a figure"),
        (["--fail-if-worse", "ap:nope"], "has no category 'nope'"),
        (["--fail-if-worse", ","], "name at least one figure"),
        (["--margin", "0.1"], "give --fail-if-worse too"),
        (["--fail-if-worse", "map", "--margin", "-1"], "finite number >= 0"),
        (["--fail-if-worse", "map", "--margin", "inf"], "finite number >= 0"),
        (["--fail-if-worse", "map", "--margin", "nan"], "finite number >= 0"),
        # a category by its name, or misspelt: suggested, not taken in its place
        (["--fail-if-worse", "ap:Self-harm"], "did you mean ap:self_harm?"),
        (["--fail-if-worse", "map,ap:violance"], "did you mean ap:violence?"),
        # given without the gate: not silently ignored, even when it is the default
        (["--margin", "0"], "give --fail-if-worse too"),
        # AP and label ranking loss lie in [0, 1]: a margin of 1 or more passes anything
        (["--fail-if-worse", "map", "--margin", "1"], "would pass every system"),
        (["--fail-if-worse", "lrl", "--margin", "5"], "0.01 is one point"),
    ],
)
def test_bad_gate_options_exit_2(
    systems: dict[str, Path], extra: list[str], message: str, capsys: Any
) -> None:
    assert _run(systems, "equal", *extra) == 2
    assert message in capsys.readouterr().err


def test_the_gate_needs_a_baseline(systems: dict[str, Path], capsys: Any) -> None:
    argv = ["compare", f"a={systems['base']}", f"b={systems['equal']}", "--fail-if-worse", "map"]
    assert main(argv) == 2
    assert "--fail-if-worse needs --baseline" in capsys.readouterr().err


def test_a_category_without_a_known_positive_is_refused(tmp_path: Path) -> None:
    from helpers import make_dataset

    ds = make_dataset(np.array([[1, 0, 1], [0, 0, 1], [1, 0, 0], [0, 0, 0]]))
    rng = np.random.default_rng(0)
    for name in ("a", "b"):
        write_outputs(toxeval.score(rng.random((4, 3)), ds, bootstrap=20), tmp_path / name)
    cat = read_scored_rows(tmp_path / "a" / "scored_rows.parquet").category_ids[1]
    with pytest.raises(CompareError, match="average precision is undefined"):
        compare(
            [f"a={tmp_path / 'a'}", f"b={tmp_path / 'b'}"],
            baseline="a",
            n_resamples=20,
            fail_if_worse=f"ap:{cat}",
        )


def test_figures_are_parsed_once_each_in_order() -> None:
    figs = parse_figures("lrl, map,ap:hate,LRL,label_ranking_loss")
    assert [f.key for f in figs] == ["lrl", "map", "ap:hate"]
    assert [f.higher_is_better for f in figs] == [False, True, True]


def test_the_html_page_shows_the_gate(systems: dict[str, Path], tmp_path: Path) -> None:
    page = tmp_path / "compare.html"
    assert _run(systems, "worse", "--fail-if-worse", "map", "--html", str(page)) == 1
    text = page.read_text()
    assert "Regression gate" in text and "gate FAILED: new on demo map" in text


def test_a_negative_zero_margin_reads_as_zero(systems: dict[str, Path], capsys: Any) -> None:
    assert _run(systems, "equal", "--fail-if-worse", "map", "--margin", "-0") == 0
    verdict = capsys.readouterr().err.strip().splitlines()[-1]
    assert "worse by more than 0 on map" in verdict and "over 1 test," in verdict


def _small(root: Path) -> dict[str, str]:
    """Two systems' folders on a second, small dataset (``test``, 3 categories)."""
    from helpers import make_dataset

    rng = np.random.default_rng(3)
    ds = make_dataset((rng.random((30, 3)) < 0.4).astype(int))
    out = {}
    for name in ("a", "b"):
        write_outputs(toxeval.score(rng.random((30, 3)), ds, bootstrap=20), root / name)
        out[name] = str(root / name)
    return out


def test_a_system_missing_on_a_dataset_of_the_baseline_is_undecided(
    systems: dict[str, Path], tmp_path: Path, capsys: Any
) -> None:
    # the baseline on demo and test, the new system only on demo: test is untested for
    # it, which must not pass the gate silently
    small = _small(tmp_path)
    argv = ["compare", f"base={systems['base']}", f"base={small['a']}", f"new={systems['equal']}"]
    argv += ["--baseline", "base", "--bootstrap", str(N), "--format", "csv"]
    assert main([*argv, "--fail-if-worse", "map,lrl"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert "  test  new vs base  map: n/a (undecided)  UNDECIDED" in err
    assert err[-1].startswith("gate FAILED: new on test map, lrl undecided: no results of it")
    assert err[-1].count("no results of it") == 1
    assert "demo  new vs base  map: +0.0000 (Holm p 1)  ok" in "\n".join(err)


def test_a_dataset_without_the_baseline_is_named_in_the_verdict(
    systems: dict[str, Path], tmp_path: Path
) -> None:
    small = _small(tmp_path)
    c = compare(
        [f"base={systems['base']}", f"new={systems['equal']}", f"new={small['b']}"],
        baseline="base",
        n_resamples=N,
        fail_if_worse="map",
    )
    assert c.gate is not None and c.gate.exit_code == 0
    assert [(t.dataset, t.system) for t in c.gate.tests] == [("demo", "new")]
    verdict = c.gate.verdict()
    assert verdict.startswith("gate passed")
    assert verdict.endswith("; not tested: test (base was not scored there)")


def test_the_verdict_does_not_depend_on_the_folders_row_order_or_their_order(
    systems: dict[str, Path], tmp_path: Path
) -> None:
    # a run file may hold its rows in any order (an LLM run writes them as answers
    # come back) and NEW=... OLD=... is as natural as the reverse: the paired
    # resamples, hence the p-values and the verdict, must be the same either way
    from toxeval.scored_rows import FILE_NAME, write_scored_rows

    shuffled = tmp_path / "slightly"
    shutil.copytree(systems["slightly"], shuffled)
    r = read_scored_rows(shuffled / FILE_NAME)
    order = np.random.default_rng(11).permutation(len(r.ids))
    write_scored_rows(
        shuffled / FILE_NAME, [r.ids[i] for i in order], r.category_ids, r.y_true[order],
        r.mask[order], r.scores[order], dataset_sha256=r.dataset_sha256,
    )  # fmt: skip
    kw: dict[str, Any] = {"baseline": "base", "n_resamples": N, "fail_if_worse": "map,lrl,ap:hate"}
    want = compare([f"base={systems['base']}", f"new={systems['slightly']}"], **kw)
    for specs in (
        [f"new={shuffled}", f"base={systems['base']}"],
        [f"base={systems['base']}", f"new={shuffled}"],
        [f"new={systems['slightly']}", f"base={systems['base']}"],
    ):
        got = compare(specs, **kw)
        assert got.gate is not None and want.gate is not None
        assert [(t.p, t.p_holm) for t in got.gate.tests] == [
            (t.p, t.p_holm) for t in want.gate.tests
        ]
        assert got.gate.verdict() == want.gate.verdict()


def test_too_few_resamples_for_the_gate_to_ever_fail_are_refused(
    systems: dict[str, Path], capsys: Any
) -> None:
    # the smallest one-sided p is 1/(1+B), the smallest Holm-adjusted one m/(1+B): with
    # 3 tests and 20 resamples it is 3/21 > 0.05, so even a far worse system passed
    argv = ["compare", f"base={systems['base']}", f"new={systems['worse']}", "--baseline"]
    argv += ["base", "--format", "csv", "--fail-if-worse", "map,lrl,ap:hate"]
    assert main([*argv, "--bootstrap", "20"]) == 2
    err = capsys.readouterr().err
    assert "could never fail" in err and "--bootstrap 59 or more" in err
    assert len(err.strip().splitlines()) == 1
    assert main([*argv, "--bootstrap", "59"]) == 1
    assert capsys.readouterr().err.strip().splitlines()[-1].startswith("gate FAILED")


def test_a_figure_defined_on_too_few_resamples_to_ever_fail_is_undecided(
    tmp_path: Path, capsys: Any
) -> None:
    # c2 has one known positive in 30 rows: about a third of the resamples lack it and
    # its AP is undefined there. With 20 resamples about 13 are left, and p >= 1/14 >
    # 0.05 whatever the scores: the test could not fail, so it must not read "ok"
    from helpers import make_dataset

    y = np.zeros((30, 3), dtype=int)
    y[::3, 0] = 1
    y[1::3, 1] = 1
    y[7, 2] = 1
    ds = make_dataset(y)
    good = np.where(y == 1, 0.9, 0.1)
    bad = good.copy()
    bad[:, 2] = np.where(y[:, 2] == 1, 0.0, 0.5)  # the positive ranked last
    write_outputs(toxeval.score(good, ds, bootstrap=20), tmp_path / "old")
    write_outputs(toxeval.score(bad, ds, bootstrap=20), tmp_path / "new")
    argv = ["compare", f"old={tmp_path / 'old'}", f"new={tmp_path / 'new'}", "--baseline"]
    argv += ["old", "--bootstrap", "20", "--format", "csv", "--fail-if-worse", "ap:c2"]
    assert main(argv) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0].endswith("UNDECIDED") and "of 20 resamples" in err[-1]


def test_the_verdict_says_when_rows_were_left_out_by_common_rows(
    systems: dict[str, Path], tmp_path: Path
) -> None:
    # an LLM run with failed rows, compared with --common-rows: the gate passes on the
    # rows both scored, and a CI log that shows only the verdict must say so
    import dataclasses

    from toxeval.predictions import predictions_from_array
    from toxeval.scoring import score_predictions

    ds = toxeval.load_dataset()
    scores = read_scored_rows(systems["equal"] / "scored_rows.parquet").scores
    preds = predictions_from_array(scores, ds)
    scored = preds.scored.copy()
    scored[:40] = False
    write_outputs(score_predictions(dataclasses.replace(preds, scored=scored), ds), tmp_path)
    c = compare(
        [f"base={systems['base']}", f"new={tmp_path}"],
        baseline="base",
        n_resamples=N,
        fail_if_worse="map",
        common_rows=True,
    )
    assert c.gate is not None and c.gate.exit_code == 0
    assert c.gate.verdict().endswith(
        "; demo: compared on the 322 rows every system scored (rows left out: base 40)"
    )


def test_a_tiny_difference_is_not_printed_as_zero() -> None:
    # on a large set a drop of 3e-5 can be significant: "-0.0000 ... WORSE" reads as a
    # contradiction in a CI log
    from toxeval.compare_gate import Gate, GateTest

    t = GateTest("demo", "new", "map", -3e-5, 3e-5, 0.001)
    gate = Gate.build("old", parse_figures("map"), 0.0, 0.05, [t])
    assert gate.lines()[0] == "  demo  new vs old  map: -3.0e-05 (Holm p 0.001)  WORSE"
    assert "new on demo map (-3.0e-05)" in gate.verdict()


def test_fail_if_worse_given_twice_watches_both(systems: dict[str, Path], capsys: Any) -> None:
    # the second --fail-if-worse replaced the first: map was silently not watched
    assert _run(systems, "worse", "--fail-if-worse", "ap:hate", "--fail-if-worse", "map") == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert sorted(line.split()[4] for line in err[:-1]) == ["ap:hate:", "map:"]
