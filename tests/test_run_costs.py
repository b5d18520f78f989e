"""Latency, retries, token usage and priced cost of a run (toxeval.llm.run_costs,
toxeval.llm.prices), against the fake OpenAI server's known delays and usage blocks."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fake_openai import FakeOpenAI, write_dataset
from helpers import CliRun, write_jsonl
from toxeval.datasets import load_dataset
from toxeval.llm import predict
from toxeval.scoring.runs import score_run

N = 12
DELAY = 0.15  # seconds added to item 3's answer
# item key -> its usage block (the others get the fake's default: 20 prompt, 10 completion)
USAGE = {
    "item-00002": {
        "prompt_tokens": 100,
        "completion_tokens": 70,
        "total_tokens": 170,
        "completion_tokens_details": {"reasoning_tokens": 40},
    },
    "item-00005": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10},
}


def _rows(path: Path) -> list[dict[str, Any]]:
    objs = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
    return [o for o in objs if "toxeval_run" not in o]


@pytest.fixture
def run(fake_openai: FakeOpenAI, tmp_path: Path) -> tuple[Path, Path]:
    """A run of N items with a delay on item 3, usage blocks on items 2 and 5 and one 500
    (a retry) on item 4: (dataset file, run file)."""
    fake_openai.delays["item-00003"] = DELAY
    fake_openai.usage.update(USAGE)
    fake_openai.faults["item-00004"] = ["500"]
    ds_file = tmp_path / "ds.jsonl"
    write_dataset(ds_file, N)
    run_file = tmp_path / "run.jsonl"
    predict(
        load_dataset(ds_file), "openai:fake", run_file, base_url=fake_openai.url,
        retry_base_delay=0.001,
    )  # fmt: skip
    return ds_file, run_file


def test_rows_record_latency_ttfb_retries(run: tuple[Path, Path]) -> None:
    rows = {r["id"]: r for r in _rows(run[1])}
    assert len(rows) == N
    slow = rows["r3"]
    assert slow["latency_s"] >= DELAY
    assert DELAY <= slow["ttfb_s"] <= slow["latency_s"]  # the server waited before its head
    for r in rows.values():
        assert r["error"] is None
        assert 0 <= r["ttfb_s"] <= r["latency_s"]
    assert (rows["r4"]["attempts"], rows["r4"]["retries"]) == (2, 1)
    assert all(r["retries"] == 0 for i, r in rows.items() if i != "r4")


def test_cost_block_from_the_rows(run: tuple[Path, Path]) -> None:
    ds_file, run_file = run
    rows = _rows(run_file)
    cost = score_run(run_file, load_dataset(ds_file)).cost
    assert cost is not None
    lat = [r["latency_s"] for r in rows]
    ttfb = [r["ttfb_s"] for r in rows]
    assert cost["latency_s"]["p50"] == pytest.approx(np.percentile(lat, 50), rel=1e-12)
    assert cost["latency_s"]["p95"] == pytest.approx(np.percentile(lat, 95), rel=1e-12)
    assert cost["latency_s"]["max"] == max(lat) >= DELAY
    assert cost["ttfb_s"]["p50"] == pytest.approx(np.percentile(ttfb, 50), rel=1e-12)
    assert cost["ttfb_s"]["p95"] == pytest.approx(np.percentile(ttfb, 95), rel=1e-12)
    assert (cost["attempts"], cost["retries"], cost["rows_without_retries"]) == (N + 1, 1, 0)
    # the usage blocks the server sent: two scripted, the rest the default 20 / 10
    default = N - len(USAGE)
    prompt = 100 + 7 + 20 * default
    completion = 70 + 3 + 10 * default
    assert cost["tokens"]["prompt"] == {"rows": N, "total": prompt, "per_item": prompt / N}
    assert cost["tokens"]["completion"]["total"] == completion
    # only item 2's body reports reasoning tokens: the others are not counted as 0
    assert cost["tokens"]["reasoning"] == {"rows": 1, "total": 40, "per_item": 40.0}
    assert cost["billable"] == {
        "rows": N,
        "prompt": prompt,
        "completion": completion,
        "reasoning": 40,
    }
    assert cost["rows_without_usage"] == 0


def test_prices_in_results_and_reports(
    run: tuple[Path, Path], tmp_path: Path, cli: Callable[..., CliRun]
) -> None:
    ds_file, run_file = run
    prices = tmp_path / "prices.toml"
    prices.write_text(
        '[models."fake"]\nusd_per_1m_input = 0.5\nusd_per_1m_output = 2\n'
        "usd_per_1m_reasoning = 3.25\n"
    )
    out = tmp_path / "out"
    got = cli(
        "score", str(run_file), "--dataset", str(ds_file), "--prices", str(prices),
        "--out", str(out), "--html", "--bootstrap", "0",
    )  # fmt: skip
    assert got.returncode == 0, got.stderr
    assert "latency and cost" in got.stdout
    cost = json.loads((out / "results.json").read_text())["cost"]
    default = N - len(USAGE)
    prompt, completion, reasoning = 107 + 20 * default, 73 + 10 * default, 40
    usd = (prompt * 0.5 + (completion - reasoning) * 2 + reasoning * 3.25) / 1e6
    assert cost["prices"]["usd_total"] == pytest.approx(usd, rel=1e-12)
    assert cost["prices"]["usd_per_1000_items"] == pytest.approx(usd / N * 1000, rel=1e-12)
    assert cost["prices"]["model"] == "fake"
    assert "## Latency and cost" in (out / "report.md").read_text()
    assert "Latency and cost" in (out / "report.html").read_text()
    # without a reasoning price, reasoning tokens are priced as the output they are part of
    prices.write_text('[models."fake"]\nusd_per_1m_input = 0.5\nusd_per_1m_output = 2\n')
    plain = prices.with_suffix(".json")
    plain.write_text(
        json.dumps({"models": {"fake": {"usd_per_1m_input": 0.5, "usd_per_1m_output": 2}}})
    )
    for table in (prices, plain):
        again = tmp_path / f"again-{table.suffix[1:]}"
        got = cli(
            "score", str(run_file), "--dataset", str(ds_file), "--prices", str(table),
            "--out", str(again), "-q", "--bootstrap", "0",
        )  # fmt: skip
        assert got.returncode == 0, got.stderr
        priced = json.loads((again / "results.json").read_text())["cost"]["prices"]
        assert priced["usd_total"] == pytest.approx((prompt * 0.5 + completion * 2) / 1e6)


def test_old_run_file_reads_as_not_recorded(run: tuple[Path, Path], tmp_path: Path) -> None:
    """A run file written before these fields existed: not recorded, never 0."""
    ds_file, run_file = run
    lines = run_file.read_text(encoding="utf-8").splitlines()
    old = tmp_path / "old.jsonl"
    kept = []
    for line in lines:
        obj = json.loads(line)
        for k in ("retries", "ttfb_s", "latency_s", "usage", "attempts"):
            obj.pop(k, None)
        kept.append(obj)
    write_jsonl(old, kept)
    cost = score_run(old, load_dataset(ds_file)).cost
    assert cost is not None
    assert cost["attempts"] is None and cost["retries"] is None
    assert cost["latency_s"] is None and cost["ttfb_s"] is None
    assert cost["tokens"] == {"prompt": None, "completion": None, "reasoning": None}
    assert (cost["rows_without_retries"], cost["rows_without_latency"]) == (N, N)
    assert (cost["rows_without_usage"], cost["billable"]["rows"]) == (N, 0)
    from toxeval.cost_table import cost_rows

    shown = dict(cost_rows(cost))
    assert shown["latency"] == shown["prompt tokens"] == "not recorded"


@pytest.mark.parametrize("bad", ["2", -1.5, True, None, [1], 10**400])
def test_garbage_timings_and_counts_read_as_not_recorded(
    run: tuple[Path, Path], tmp_path: Path, bad: Any
) -> None:
    """Hostile values of latency, ttfb, attempts, retries and usage (a string, a negative,
    a bool, a 400-digit integer): not recorded, never summed and never a traceback."""
    ds_file, run_file = run
    rows = []
    for line in run_file.read_text(encoding="utf-8").splitlines():
        obj = json.loads(line)
        if "toxeval_run" not in obj:
            for k in ("retries", "ttfb_s", "latency_s", "attempts"):
                obj[k] = bad
            obj["usage"] = {"prompt_tokens": bad, "completion_tokens": bad}
        rows.append(obj)
    bad_file = tmp_path / "bad.jsonl"
    bad_file.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    cost = score_run(bad_file, load_dataset(ds_file)).cost
    assert cost is not None
    assert cost["attempts"] is None and cost["retries"] is None
    assert cost["latency_s"] is None and cost["ttfb_s"] is None
    assert cost["billable"]["rows"] == 0 and cost["rows_without_usage"] == N


def test_compare_reads_a_hostile_cost_block_as_unknown(
    run: tuple[Path, Path], tmp_path: Path, cli: Callable[..., CliRun]
) -> None:
    """A results.json whose cost figures are integers too large for a float (a hand-edited
    or hostile file): compare shows them as unknown, never an OverflowError."""
    ds_file, run_file = run
    out = tmp_path / "llm"
    got = cli("score", str(run_file), "--dataset", str(ds_file), "--out", str(out), "-q")
    assert got.returncode == 0, got.stderr
    doc = out / "results.json"
    text = doc.read_text(encoding="utf-8")
    huge = "1" + "0" * 400
    text = re.sub(r'("p50": )[0-9.e-]+', rf"\g<1>{huge}", text, count=1)
    text = re.sub(r'("prompt": )[0-9]+', rf"\g<1>{huge}", text)
    doc.write_text(text, encoding="utf-8")
    got = cli("compare", f"a={out}", f"b={out}", "--format", "csv", "--bootstrap", "10")
    assert got.returncode == 0, got.stderr
    import csv
    import io

    table = {r["system"]: r for r in csv.DictReader(io.StringIO(got.stdout))}
    assert table["a"]["latency_p50_s"] == "" and table["a"]["tokens_per_item"] == ""


def test_reported_map_too_large_for_a_float_is_no_crash(
    run: tuple[Path, Path], tmp_path: Path, cli: Callable[..., CliRun]
) -> None:
    """results.json's mAP replaced by a 400-digit integer: compare and thresholds read the
    folder (its figures come from its rows) or refuse it (exit 2), never an OverflowError."""
    ds_file, run_file = run
    out = tmp_path / "llm"
    got = cli("score", str(run_file), "--dataset", str(ds_file), "--out", str(out), "-q")
    assert got.returncode == 0, got.stderr
    doc = out / "results.json"
    text = re.sub(r'("map": )[0-9.e-]+', r"\g<1>1" + "0" * 400, doc.read_text(encoding="utf-8"))
    doc.write_text(text, encoding="utf-8")
    for argv in (
        ("compare", f"a={out}", f"b={out}", "--bootstrap", "10"),
        ("thresholds", str(out), "--operating-point", "recall=0.5"),
    ):
        got = cli(*argv)
        assert got.returncode in (0, 2), (argv, got.stderr)
        assert "internal error" not in got.stderr and "Traceback" not in got.stderr


def test_plain_dump_has_no_cost(tmp_path: Path, cli: Callable[..., CliRun]) -> None:
    ds_file = tmp_path / "ds.jsonl"
    write_dataset(ds_file, 4)
    from toxeval.taxonomy import load_taxonomy

    ids = load_taxonomy("toxeval-15").ids
    rows = [{"id": f"r{i}", "scores": {c: 0.5 for c in ids}} for i in range(4)]
    dump = write_jsonl(tmp_path / "p.jsonl", rows)
    out = tmp_path / "out"
    got = cli(
        "score", str(dump), "--dataset", str(ds_file), "--out", str(out), "-q", "--bootstrap", "0"
    )
    assert got.returncode == 0, got.stderr
    assert "cost" not in json.loads((out / "results.json").read_text())
    prices = tmp_path / "prices.json"
    prices.write_text(
        json.dumps({"models": {"m": {"usd_per_1m_input": 1, "usd_per_1m_output": 1}}})
    )
    got = cli("score", str(dump), "--dataset", str(ds_file), "--prices", str(prices), "-q")
    assert got.returncode == 2
    assert "--prices prices the answers of a run file" in got.stderr


BAD_PRICES = [
    ("p.json", "{not json", "not valid JSON"),
    # a model priced twice: json.loads kept the second price without a word
    (
        "p.json",
        '{"models": {"fake": {"usd_per_1m_input": 1, "usd_per_1m_output": 2},'
        ' "fake": {"usd_per_1m_input": 9, "usd_per_1m_output": 9}}}',
        "is given twice",
    ),
    ("p.toml", "models = [", "not valid TOML"),
    ("p.json", "[]", "one table 'models'"),
    ("p.json", '{"models": {}}', "names no model"),
    ("p.json", '{"models": {"fake": 1}}', "expected a table of prices"),
    ("p.json", '{"models": {"fake": {"usd_per_1m_input": 1}}}', "usd_per_1m_output is missing"),
    (
        "p.json",
        '{"models": {"fake": {"usd_per_1m_input": 1, "usd_per_1m_output": -1}}}',
        "finite number >= 0",
    ),
    (
        "p.json",
        '{"models": {"fake": {"usd_per_1m_input": 1, "usd_per_1m_output": "2"}}}',
        "finite number >= 0",
    ),
    (
        "p.json",
        '{"models": {"fake": {"usd_per_1m_input": 1, "usd_per_1m_output": 2, "input": 3}}}',
        "unknown key 'input'",
    ),
    (
        "p.json",
        '{"models": {"other": {"usd_per_1m_input": 1, "usd_per_1m_output": 2}}}',
        "no prices for model 'fake'",
    ),
    ("missing.json", None, "cannot read the price table"),
    ("dir.json", None, "cannot read the price table"),
    ("fifo.json", None, "not a regular file"),
    # an integer too large for a float: refused, not an OverflowError traceback
    (
        "p.json",
        '{"models": {"fake": {"usd_per_1m_input": 1' + "0" * 400 + ', "usd_per_1m_output": 2}}}',
        "finite number >= 0",
    ),
    # finite prices whose total is not: refused, never an Infinity in results.json
    (
        "p.json",
        '{"models": {"fake": {"usd_per_1m_input": 1e308, "usd_per_1m_output": 1e308}}}',
        "too large to compute",
    ),
]


@pytest.mark.parametrize(("name", "text", "said"), BAD_PRICES)
def test_bad_price_file_exits_2(
    run: tuple[Path, Path],
    tmp_path: Path,
    cli: Callable[..., CliRun],
    name: str,
    text: str | None,
    said: str,
) -> None:
    ds_file, run_file = run
    prices = tmp_path / name
    if name == "fifo.json":
        os.mkfifo(prices)  # nobody writes it: reading it would block forever
    elif name == "dir.json":
        prices.mkdir()
    elif text is not None:
        prices.write_text(text)
    got = cli("score", str(run_file), "--dataset", str(ds_file), "--prices", str(prices), "-q")
    assert got.returncode == 2
    assert said in got.stderr
    assert "Traceback" not in got.stderr
    assert len(got.stderr.strip().splitlines()) == 1


def test_compare_puts_cost_beside_map(
    run: tuple[Path, Path], tmp_path: Path, cli: Callable[..., CliRun]
) -> None:
    from toxeval.compare import compare
    from toxeval.taxonomy import load_taxonomy

    ds_file, run_file = run
    prices = tmp_path / "prices.json"
    prices.write_text(
        json.dumps({"models": {"fake": {"usd_per_1m_input": 1.0, "usd_per_1m_output": 4.0}}})
    )
    llm, dump_out = tmp_path / "llm", tmp_path / "dump"
    got = cli(
        "score", str(run_file), "--dataset", str(ds_file), "--prices", str(prices),
        "--out", str(llm), "-q", "--bootstrap", "0",
    )  # fmt: skip
    assert got.returncode == 0, got.stderr
    ids = load_taxonomy("toxeval-15").ids
    rows = [{"id": f"r{i}", "scores": {c: (i % 3) / 3 for c in ids}} for i in range(N)]
    dump = write_jsonl(tmp_path / "p.jsonl", rows)
    got = cli(
        "score", str(dump), "--dataset", str(ds_file), "--out", str(dump_out), "-q",
        "--bootstrap", "0",
    )  # fmt: skip
    assert got.returncode == 0, got.stderr
    cost = json.loads((llm / "results.json").read_text())["cost"]
    recs = {
        r["system"]: r
        for r in compare([f"llm={llm}", f"dump={dump_out}"], n_resamples=10).to_records()
    }
    assert recs["llm"]["latency_p50_s"] == cost["latency_s"]["p50"]
    assert recs["llm"]["latency_p95_s"] == cost["latency_s"]["p95"]
    billable = cost["billable"]
    per_item = (billable["prompt"] + billable["completion"]) / N
    assert recs["llm"]["tokens_per_item"] == pytest.approx(per_item, rel=1e-12)
    usd = (billable["prompt"] * 1.0 + billable["completion"] * 4.0) / 1e6
    assert recs["llm"]["usd_per_1000_items"] == pytest.approx(usd / N * 1000, rel=1e-12)
    assert recs["dump"]["latency_p50_s"] is None and recs["dump"]["usd_per_1000_items"] is None
    # the CSV: the same columns, the dump's cells empty
    got = cli("compare", f"llm={llm}", f"dump={dump_out}", "--format", "csv", "--bootstrap", "10")
    assert got.returncode == 0, got.stderr
    import csv
    import io

    table = {r["system"]: r for r in csv.DictReader(io.StringIO(got.stdout))}
    assert float(table["llm"]["latency_p50_s"]) == pytest.approx(cost["latency_s"]["p50"])
    assert table["dump"]["latency_p50_s"] == table["dump"]["usd_per_1000_items"] == ""
    got = cli(
        "compare", f"llm={llm}", f"dump={dump_out}", "--format", "markdown", "--bootstrap", "10"
    )
    assert got.returncode == 0, got.stderr
    p50, usd_k = cost["latency_s"]["p50"], usd / N * 1000
    said = f"llm on ds: latency p50 {p50:.3f} s, {per_item:.1f} tokens per item, USD {usd_k:.4g}"
    assert said in got.stdout
    # the runs' legend names the run only (another legend may name the dump: its mAP
    # is undefined on every one of 10 resamples of these few rows)
    runs_legend = got.stdout[got.stdout.index("Runs (their own reports") :]
    assert "dump on" not in runs_legend.split("\n")[0]


def test_prices_checked_before_any_request(
    fake_openai: FakeOpenAI, tmp_path: Path, cli: Callable[..., CliRun]
) -> None:
    """evaluate --detector with a table that lacks its model stops before asking."""
    ds_file = tmp_path / "ds.jsonl"
    write_dataset(ds_file, 3)
    prices = tmp_path / "prices.json"
    prices.write_text(
        json.dumps({"models": {"other": {"usd_per_1m_input": 1, "usd_per_1m_output": 1}}})
    )
    got = cli(
        "evaluate", "--dataset", str(ds_file), "--detector", "openai:fake",
        "--base-url", fake_openai.url, "--prices", str(prices), "-q",
    )  # fmt: skip
    assert got.returncode == 2
    assert "no prices for model 'fake'" in got.stderr
    assert fake_openai.log == []
    prices.write_text(
        json.dumps({"models": {"fake": {"usd_per_1m_input": 1, "usd_per_1m_output": 2}}})
    )
    out = tmp_path / "out"
    got = cli(
        "evaluate", "--dataset", str(ds_file), "--detector", "openai:fake",
        "--base-url", fake_openai.url, "--prices", str(prices), "-q", "--out", str(out),
        "--bootstrap", "0",
    )  # fmt: skip
    assert got.returncode == 0, got.stderr
    cost = json.loads((out / "results.json").read_text())["cost"]
    assert cost["prices"]["usd_total"] == pytest.approx((3 * 20 * 1 + 3 * 10 * 2) / 1e6)


def test_batched_unit_counts_its_retries_once(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    """A moderation batch repeats its attempts on each of its rows: counted once."""
    ds_file = tmp_path / "ds.jsonl"
    write_dataset(ds_file, 40)
    fake_openai.faults["item-00001"] = ["500"]  # the first batch of 32 is sent twice
    run_file = tmp_path / "run.jsonl"
    ds = load_dataset(ds_file)
    predict(
        ds, "openai-moderation", run_file, base_url=fake_openai.url, retry_base_delay=0.001,
    )  # fmt: skip
    rows = {r["id"]: r for r in _rows(run_file)}
    assert [r["unit_items"] for r in rows.values()] == [32] * 32 + [8] * 8
    assert (rows["r0"]["attempts"], rows["r0"]["retries"]) == (2, 1)
    assert (rows["r35"]["attempts"], rows["r35"]["retries"]) == (1, 0)
    cost = score_run(run_file, ds).cost
    assert cost is not None
    assert (cost["attempts"], cost["retries"]) == (3, 1)
    assert len([e for e in fake_openai.log if e.path.endswith("/moderations")]) == 3
    # a batch's usage is the whole batch's: no row takes it as its own
    assert (cost["rows_with_usage"], cost["rows_without_usage"]) == (0, 40)
    assert cost["latency_s"]["n"] == 40
