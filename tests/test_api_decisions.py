"""The Python API's slice_by=, operating_point=, thresholds_from= and prices= (toxeval.scoring
.decisions): each gives in results.json what the command line's --slice-by,
--operating-point, --thresholds-from and --prices give; mistakes are ValueErrors naming
the keyword, found before a detector runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import toxeval
from fake_openai import FakeOpenAI, write_dataset
from toxeval.cli import main
from toxeval.datasets import load_dataset
from toxeval.llm import predict
from toxeval.operating_points import parse_target, points_for, section
from toxeval.report import results_json
from toxeval.slices import add_slices


def _json(result: toxeval.EvaluationResult) -> dict[str, Any]:
    return dict(json.loads(results_json(result)))


def _cli(tmp_path: Path, name: str, *argv: str) -> dict[str, Any]:
    out = tmp_path / name
    assert main([*argv, "--out", str(out), "-q"]) == 0
    return dict(json.loads((out / "results.json").read_text()))


def test_slices_and_operating_points_equal_the_command_line(tmp_path: Path, capsys: Any) -> None:
    api = _json(
        toxeval.evaluate(bootstrap=20, slice_by="text_length", operating_point="recall=0.8")
    )
    cli = _cli(
        tmp_path, "a", "evaluate", "--bootstrap", "20", "--slice-by", "text_length",
        "--operating-point", "recall=0.8",
    )  # fmt: skip
    capsys.readouterr()
    assert api["slices"] == cli["slices"]
    assert api["operating_points"] == cli["operating_points"]
    # and what the library functions give on the result's own rows
    plain = toxeval.evaluate(bootstrap=20)
    ds = load_dataset("demo")
    add_slices(plain, ds, ["text_length"], n_resamples=20, seed=0)
    rows = plain.rows
    assert rows is not None
    plain.operating_points = section(
        points_for(rows.y_true, rows.scores, rows.mask, list(ds.taxonomy.ids),
                   target=parse_target("recall=0.8")),
        target=parse_target("recall=0.8"),
    )  # fmt: skip
    assert _json(plain)["slices"] == api["slices"]
    assert _json(plain)["operating_points"] == api["operating_points"]


def test_thresholds_from_a_folder_a_file_or_a_mapping(tmp_path: Path, capsys: Any) -> None:
    chosen = tmp_path / "chosen"
    main(["evaluate", "--operating-point", "precision=0.9", "--out", str(chosen), "-q"])
    capsys.readouterr()
    cli = _cli(tmp_path, "b", "evaluate", "--thresholds-from", str(chosen))
    capsys.readouterr()
    from_folder = _json(toxeval.evaluate(thresholds_from=chosen))["operating_points"]
    assert from_folder == cli["operating_points"]
    thresholds = cli["operating_points"]["thresholds"]
    file = tmp_path / "t.json"
    file.write_text(json.dumps({"format": "toxeval-thresholds/1", "thresholds": thresholds}))
    by_file = _json(toxeval.score(toxeval.evaluate().rows.scores, thresholds_from=file))  # type: ignore[union-attr]
    by_map = _json(toxeval.evaluate(thresholds_from=thresholds))
    for got in (by_file["operating_points"], by_map["operating_points"]):
        assert got["points"] == from_folder["points"] and got["target"] is None
    assert by_map["operating_points"]["thresholds_from"] == "(a mapping)"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"slice_by": ["nope"]}, "slice_by= nope: the dataset has no such column"),
        ({"slice_by": [3]}, "slice_by must be column names"),
        ({"operating_point": "precision=2"}, "operating_point= 'precision=2'"),
        ({"operating_point": "recall=0.5", "thresholds_from": {}}, "not both"),
        ({"thresholds_from": {"zzz": 0.5}}, "thresholds_from: categories the taxonomy"),
        ({"thresholds_from": {"hate": "high"}}, "the threshold of 'hate' is 'high'"),
        ({"prices": "no-such-prices.toml"}, "cannot read the price table"),
        # wrong types: a ValueError naming the keyword, not a TypeError from deep inside
        ({"slice_by": 3}, "slice_by must be column names"),
        ({"slice_by": {"text_length": 1}}, "slice_by must be column names"),
        ({"thresholds_from": [0.5]}, "thresholds_from must be"),
        ({"thresholds_from": 5}, "thresholds_from must be"),
        ({"prices": 3}, "prices must be"),
    ],
)
def test_mistakes_are_value_errors_before_the_detector_runs(
    kwargs: dict[str, Any], message: str
) -> None:
    class Refuse:
        taxonomy = load_dataset("demo").taxonomy

        def predict_scores(self, texts: Any) -> Any:
            raise AssertionError("ran the detector")

    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace("[", r"\[")):
        toxeval.evaluate(detector=Refuse(), bootstrap=0, **kwargs)


@pytest.mark.parametrize("content", [b"\xff\xfe", b"{not json", b"[]"])
def test_an_unreadable_price_table_names_the_keyword(tmp_path: Path, content: bytes) -> None:
    # as thresholds_from's messages do: the message starts with the keyword it is about
    table = tmp_path / "prices.json"
    table.write_bytes(content)
    with pytest.raises(ValueError, match=r"^prices: "):
        toxeval.evaluate(bootstrap=0, prices=table)
    with pytest.raises(ValueError, match=r"^prices: .*cannot read the price table"):
        toxeval.evaluate(bootstrap=0, prices=tmp_path / "missing.json")


def test_prices_for_an_in_process_detector_are_refused_before_it_runs(tmp_path: Path) -> None:
    # a detector object (or the lexicon) records no token usage: prices= can only be
    # refused, and that is known before the (maybe slow) detector runs
    table = tmp_path / "prices.json"
    table.write_text(json.dumps({"models": {"m": {"usd_per_1m_input": 1, "usd_per_1m_output": 2}}}))

    class Refuse:
        taxonomy = load_dataset("demo").taxonomy

        def predict_scores(self, texts: Any) -> Any:
            raise AssertionError("ran the detector")

    for detector in (Refuse(), "lexicon", " Lexicon "):
        with pytest.raises(ValueError, match="prices= prices the answers of a run file"):
            toxeval.evaluate(detector=detector, bootstrap=0, prices=table)  # type: ignore[arg-type]


def test_numpy_thresholds_in_a_mapping_are_numbers() -> None:
    as_float = toxeval.evaluate(bootstrap=0, thresholds_from={"hate": 0.5})
    for value in (np.float32(0.5), np.int64(0) + 0.5, np.float16(0.5)):
        got = toxeval.evaluate(bootstrap=0, thresholds_from={"hate": value})
        assert got.operating_points == as_float.operating_points
    with pytest.raises(ValueError, match="not a finite number"):
        toxeval.evaluate(bootstrap=0, thresholds_from={"hate": np.float32("nan")})
    with pytest.raises(ValueError, match="not a finite number"):
        toxeval.evaluate(bootstrap=0, thresholds_from={"hate": np.bool_(True)})


def test_prices_need_a_run_file_and_out_of_core_keeps_no_rows(tmp_path: Path) -> None:
    prices = tmp_path / "p.toml"
    prices.write_text('[models."fake"]\nusd_per_1m_input = 1\nusd_per_1m_output = 2\n')
    with pytest.raises(ValueError, match="prices= prices the answers of a run file"):
        toxeval.evaluate(bootstrap=0, prices=prices)
    scores = tmp_path / "s.parquet"
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"id": ["a", "b"], "hate": [0.1, 0.9], "true:hate": [0, 1]}), scores)
    with pytest.raises(ValueError, match="need the scored rows in memory"):
        toxeval.score(scores, memory_limit="1GB", slice_by="x")


def test_prices_of_a_run_file_equal_the_command_line(
    fake_openai: FakeOpenAI, tmp_path: Path, capsys: Any
) -> None:
    ds_file, run_file = tmp_path / "ds.jsonl", tmp_path / "run.jsonl"
    write_dataset(ds_file, 8)
    predict(load_dataset(ds_file), "openai:fake", run_file, base_url=fake_openai.url)
    prices = tmp_path / "p.toml"
    prices.write_text('[models."fake"]\nusd_per_1m_input = 0.5\nusd_per_1m_output = 2\n')
    api = toxeval.score(run_file, ds_file, bootstrap=0, prices=prices)
    cli = _cli(
        tmp_path, "c", "score", str(run_file), "--dataset", str(ds_file), "--prices",
        str(prices), "--bootstrap", "0",
    )  # fmt: skip
    capsys.readouterr()
    assert api.cost is not None
    assert _json(api)["cost"] == cli["cost"]
    assert api.cost["prices"]["usd_total"] == pytest.approx(
        (api.cost["billable"]["prompt"] * 0.5 + api.cost["billable"]["completion"] * 2) / 1e6
    )
    assert np.isfinite(api.cost["prices"]["usd_per_1000_items"])


def test_a_model_missing_from_the_price_table_is_refused_before_any_request(
    tmp_path: Path,
) -> None:
    prices = tmp_path / "p.toml"
    prices.write_text('[models."fake"]\nusd_per_1m_input = 1\nusd_per_1m_output = 2\n')
    run_file = tmp_path / "run.jsonl"
    # nothing listens there: a request sent would fail, not the check
    with pytest.raises(ValueError, match=r"^prices= .*no prices for model 'other'"):
        toxeval.evaluate(
            "demo", "openai:other", base_url="http://127.0.0.1:9/v1", run_file=run_file,
            prices=prices, bootstrap=0,
        )  # fmt: skip
    assert not run_file.exists()


def test_a_run_of_a_model_missing_from_the_table_names_the_keyword(
    fake_openai: FakeOpenAI, tmp_path: Path
) -> None:
    ds_file, run_file = tmp_path / "ds.jsonl", tmp_path / "run.jsonl"
    write_dataset(ds_file, 4)
    predict(load_dataset(ds_file), "openai:fake", run_file, base_url=fake_openai.url)
    prices = tmp_path / "p.toml"
    prices.write_text('[models."other"]\nusd_per_1m_input = 1\nusd_per_1m_output = 2\n')
    with pytest.raises(ValueError, match=r"^prices= .*no prices for model 'fake'"):
        toxeval.score(run_file, ds_file, bootstrap=0, prices=prices)
