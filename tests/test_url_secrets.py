"""A base URL may carry a secret: ``user:password@`` (sent as Basic
auth) or a key in its query string (``?key=...``, as some gateways take it). Neither is
written anywhere toxeval writes: Batch API sidecars, results.json, the reports, the run
file."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
import toxeval
from fake_openai import FakeOpenAI, scripted_scores, write_dataset
from toxeval.cli import main as cli_main
from toxeval.llm import predict
from toxeval.llm.requests import public_url

SECRET = "hunter2-0123456789"


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://api.example.com/v1", "https://api.example.com/v1"),
        (f"https://alice:{SECRET}@h.example:8443/v1", "https://alice:***@h.example:8443/v1"),
        (f"http://{SECRET}@h/v1", "http://***@h/v1"),
        (
            f"https://h/v1?api-version=2024-06-01&api_key={SECRET}",
            "https://h/v1?api-version=2024-06-01&api_key=***",
        ),
        (
            f"https://h/v1?token={SECRET}&sig={SECRET}",
            "https://h/v1?token=***&sig=***",
        ),
        (
            f"https://h/v1?apiKey={SECRET}&x-api-key={SECRET}&Subscription-Key={SECRET}"
            f"&X-Amz-Signature={SECRET}&APIKEY={SECRET}&access%5Ftoken={SECRET}",
            "https://h/v1?apiKey=***&x-api-key=***&Subscription-Key=***"
            "&X-Amz-Signature=***&APIKEY=***&access%5Ftoken=***",
        ),
        (
            f"https://h/api/score?code={SECRET}&bearer={SECRET}&jwt={SECRET}&session={SECRET}",
            "https://h/api/score?code=***&bearer=***&jwt=***&session=***",
        ),
        (f"https://h/v1#access_token={SECRET}&state=s1", "https://h/v1#access_token=***&state=s1"),
        (
            "https://h/v1?language_code=en&session_length=5",
            "https://h/v1?language_code=en&session_length=5",
        ),
        # names that only contain a secret word are not secrets: a redacted value is also
        # left out of the request hash, so two such endpoints shared their rows on resume
        (
            "https://h/v1?author=ann&monkey=1&passage=2&credit=3&tokenizer=bpe&keyword=x",
            "https://h/v1?author=ann&monkey=1&passage=2&credit=3&tokenizer=bpe&keyword=x",
        ),
    ],
)
def test_public_url_hides_passwords_and_query_keys(url: str, shown: str) -> None:
    assert public_url(url) == shown


def _with_password(url: str) -> str:
    scheme, rest = url.split("://", 1)
    return f"{scheme}://alice:{SECRET}@{rest}"


def test_a_batch_sidecar_and_its_report_do_not_hold_the_password(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ds = tmp_path / "ds.jsonl"
    write_dataset(ds, 8)
    batch = tmp_path / "batch.jsonl"
    base = _with_password("http://127.0.0.1:9/v1")
    code = cli_main(
        [
            "predict",
            "--dataset",
            str(ds),
            "--detector",
            "openai:fake",
            "--batch-file",
            str(batch),
            "--base-url",
            base,
        ]
    )
    assert code == 0
    fake = FakeOpenAI()
    out = tmp_path / "out.jsonl"
    with out.open("w") as f:
        for line in batch.read_text().splitlines():
            req = json.loads(line)
            key = "item-" + json.dumps(req["body"]).split("item-")[-1][:5]
            body = fake.chat_body("fake", (key,), req["body"])
            f.write(
                json.dumps(
                    {"custom_id": req["custom_id"], "response": {"status_code": 200, "body": body}}
                )
                + "\n"
            )
    results = tmp_path / "results"
    code = cli_main(
        [
            "score",
            str(out),
            "--dataset",
            str(ds),
            "--batch-input",
            str(batch),
            "--out",
            str(results),
            "--html",
            "-q",
        ]
    )
    assert code == 0, capsys.readouterr().err
    written = [batch, batch.with_name(batch.name + ".toxeval.json"), *results.iterdir()]
    assert len(written) >= 7
    for path in written:
        assert SECRET.encode() not in path.read_bytes(), path


def test_results_of_a_run_do_not_hold_the_password(fake_openai: FakeOpenAI, tmp_path: Path) -> None:
    ds = tmp_path / "ds.jsonl"
    write_dataset(ds, 8)
    run = tmp_path / "run.jsonl"
    predict(
        ds, "openai:fake", run, base_url=_with_password(fake_openai.url), retry_base_delay=0.001
    )
    result = toxeval.score(run, ds, bootstrap=0)
    assert SECRET not in json.dumps(result.to_dict())
    assert result.system["base_url"] == public_url(_with_password(fake_openai.url))


@pytest.mark.parametrize("secret_in", ["password", "query"])
def test_a_run_file_does_not_hold_the_secret_and_resumes_and_scores_exactly(
    fake_openai: FakeOpenAI, tmp_path: Path, secret_in: str
) -> None:
    ds = tmp_path / "ds.jsonl"
    write_dataset(ds, 6)
    run = tmp_path / "run.jsonl"
    url = (
        _with_password(fake_openai.url)
        if secret_in == "password"
        else f"{fake_openai.url}?api_key={SECRET}"
    )
    fake_openai.faults["item-00003"] = ["400"]  # one failed row, asked again on resume
    predict(ds, "openai:fake", run, base_url=url, retry_base_delay=0.001, max_retries=0)
    assert SECRET.encode() not in run.read_bytes()
    asked = len(fake_openai.log)
    summary = predict(ds, "openai:fake", run, base_url=url, retry_base_delay=0.001)
    assert SECRET.encode() not in run.read_bytes()
    assert len(fake_openai.log) == asked + 1  # only the failed item was sent again
    assert summary.skipped == 5
    headers = [line for line in run.read_text().splitlines() if '"toxeval_run"' in line]
    assert len(headers) == 1  # the same run: no second header
    result = toxeval.score(run, ds, bootstrap=0)
    assert result.system["base_url"] == public_url(url)
    assert result.system["rows"]["scored"] == 6


def test_a_run_file_written_with_the_password_in_its_header_resumes_exactly(
    fake_openai: FakeOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file whose header holds the URL with its password (as toxeval wrote them before
    it hid secrets) is still resumed with the hashes it was written with: nothing is
    asked again and no header is added; score reads it as before."""
    import toxeval.llm.plan as plan

    ds = tmp_path / "ds.jsonl"
    write_dataset(ds, 4)
    run = tmp_path / "run.jsonl"
    url = _with_password(fake_openai.url)
    with monkeypatch.context() as m:
        m.setattr(plan, "run_url", lambda base_url, last_header: base_url)
        predict(ds, "openai:fake", run, base_url=url, retry_base_delay=0.001)
    before = run.read_bytes()
    assert SECRET.encode() in before  # the file as an earlier toxeval wrote it
    asked = len(fake_openai.log)
    summary = predict(ds, "openai:fake", run, base_url=url, retry_base_delay=0.001)
    assert len(fake_openai.log) == asked and summary.skipped == 4
    assert run.read_bytes() == before
    result = toxeval.score(run, ds, bootstrap=0)
    assert result.system["base_url"] == public_url(url)
    assert result.system["rows"]["scored"] == 4
    assert SECRET not in json.dumps(result.to_dict())


def test_a_stopped_run_does_not_print_the_password(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ds = tmp_path / "ds.jsonl"
    write_dataset(ds, 2)
    base = _with_password("http://127.0.0.1:9/v1")  # nothing listens on port 9
    args = ["predict", "--dataset", str(ds), "--detector", "openai:fake", "--base-url", base]
    code = cli_main([*args, "--out", str(tmp_path / "run.jsonl"), "--max-retries", "0", "-q"])
    err = capsys.readouterr().err
    assert code != 0 and "no answer from" in err
    assert SECRET not in err


def test_a_refused_key_does_not_print_the_password(
    fake_openai: FakeOpenAI, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ds = tmp_path / "ds.jsonl"
    write_dataset(ds, 2)
    fake_openai.faults["item-00000"] = ["401"]
    fake_openai.faults["item-00001"] = ["401"]
    args = ["predict", "--dataset", str(ds), "--detector", "openai:fake"]
    args += ["--base-url", f"{fake_openai.url}?api_key={SECRET}"]
    code = cli_main([*args, "--out", str(tmp_path / "run.jsonl"), "-q"])
    err = capsys.readouterr().err
    assert code != 0 and "401" in err
    assert SECRET not in err


def test_run_options_repr_hides_the_password() -> None:
    from toxeval.llm.engine import RunOptions

    shown = repr(RunOptions(base_url=_with_password("https://h/v1"), api_key="sk-" + SECRET))
    assert SECRET not in shown and "alice:***@h" in shown


@pytest.mark.parametrize("secret_in", ["query", "password and query"])
def test_a_base_url_query_stays_the_query_of_every_request(
    fake_openai: FakeOpenAI, tmp_path: Path, secret_in: str
) -> None:
    # The path goes before the query: ".../v1/chat/completions?api-version=...", not
    # ".../v1?api-version=.../chat/completions" (a real server reads that as path /v1).
    # With a password or without, the query is sent as given.
    ds = tmp_path / "ds.jsonl"
    write_dataset(ds, 3)
    base = fake_openai.url if secret_in == "query" else _with_password(fake_openai.url)
    query = f"api-version=2024-06-01&api_key={SECRET}"
    predict(ds, "openai:fake", tmp_path / "run.jsonl", base_url=f"{base}?{query}#frag")
    assert [e.path for e in fake_openai.log] == [f"/v1/chat/completions?{query}"] * 3


@pytest.mark.parametrize("secret_in", ["query", "password and query"])
def test_an_error_answer_that_quotes_the_request_does_not_carry_the_secret_anywhere(
    fake_openai: FakeOpenAI,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    secret_in: str,
) -> None:
    # A server's error message quoting the request (the query key in its request line, the
    # password as its Basic credential) was written as the failed row's error and
    # printed: only the API key was redacted from what a server says.
    ds = tmp_path / "ds.jsonl"
    write_dataset(ds, 2)
    fake_openai.faults["item-00001"] = ["echo_500"]
    base = fake_openai.url if secret_in == "query" else _with_password(fake_openai.url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-" + SECRET)
    run = tmp_path / "run.jsonl"
    args = ["predict", "--dataset", str(ds), "--detector", "openai:fake", "--out", str(run)]
    assert cli_main([*args, "--base-url", f"{base}?api_key={SECRET}", "--max-retries", "0"]) == 0
    basic = base64.b64encode(f"alice:{SECRET}".encode()).decode()
    echoed = [r["error"] for r in map(json.loads, run.read_text().splitlines()) if r.get("error")]
    assert len(echoed) == 1 and "internal error handling POST /v1/chat/completions" in echoed[0]
    for written in (run.read_text(), *capsys.readouterr()):
        assert SECRET not in written and basic not in written


def test_a_200_answer_that_echoes_the_key_is_written_redacted(
    fake_openai: FakeOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 200 whose body quotes the request headers (a debugging proxy) was written to the
    run file's ``raw`` verbatim, Authorization header and all; error answers were
    already redacted. The answer itself is still read and scored."""
    ds = tmp_path / "ds.jsonl"
    write_dataset(ds, 3)
    fake_openai.faults["item-00001"] = ["echo_200"]
    key = "sk-" + SECRET
    monkeypatch.setenv("OPENAI_API_KEY", key)
    run = tmp_path / "run.jsonl"
    args = ["predict", "--dataset", str(ds), "--detector", "openai:fake", "--out", str(run)]
    assert cli_main([*args, "--base-url", fake_openai.url, "-q"]) == 0
    text = run.read_text(encoding="utf-8")
    assert key not in text and SECRET not in text and SECRET[:8] not in text
    rows = {r["id"]: r for r in map(json.loads, text.splitlines()) if "id" in r}
    (raw,) = rows["r1"]["raw"]
    assert "Authorization: Bearer [redacted]" in raw["debug"]["request"]
    assert raw["debug"]["headers"]["Authorization"] == "Bearer [redacted]"
    assert rows["r1"]["error"] is None and rows["r1"]["parse_status"] == "ok"
    assert rows["r1"]["scores"] == scripted_scores(
        "item-00001", toxeval.load_dataset(ds).taxonomy.ids
    )
    assert all(r["scores"] is not None for r in rows.values())
