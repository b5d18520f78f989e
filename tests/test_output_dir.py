"""The --out folder: outputs appear all at once or not at all, never over an input, and
files toxeval wrote on an earlier run do not linger beside new results."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from helpers import write_jsonl, write_scored_pair
from toxeval import score
from toxeval.cli import main
from toxeval.output_dir import MANIFEST, OutputError
from toxeval.report import write_outputs


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def _dump(tmp_path: Path, ids: list[str], name: str = "p.jsonl") -> Path:
    p = tmp_path / name
    rows = [
        {"id": i, "scores": {"alpha": 0.1 * n, "beta": 0.9 - 0.1 * n, "gamma": 0.05 * n}}
        for n, i in enumerate(ids)
    ]
    p.parent.mkdir(parents=True, exist_ok=True)
    write_jsonl(p, rows)
    return p


@pytest.fixture
def score_args(tmp_path: Path, small_dataset_file: Path, alias_taxonomy_file: Path) -> list[str]:
    p = _dump(tmp_path, ["r1", "r2", "r3", "r4", "r5", "r6"])
    return [
        "score",
        str(p),
        "--dataset",
        str(small_dataset_file),
        "--taxonomy",
        str(alias_taxonomy_file),
    ]


def _leftovers(parent: Path) -> list[str]:
    return [p.name for p in parent.iterdir() if ".toxeval-" in p.name]


def test_a_failed_write_leaves_the_old_folder_untouched(
    tmp_path: Path, score_args: list[str], monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    out = tmp_path / "out"
    assert main([*score_args, "--out", str(out), "--threshold", "0.3"]) == 0
    before = _snapshot(out)
    write_text = Path.write_text
    calls: list[str] = []

    def full_disk(self: Path, *args: Any, **kwargs: Any) -> int:
        calls.append(self.name)
        if len(calls) == 2:  # results.json is written, then the disk is full
            raise OSError(28, "No space left on device")
        return write_text(self, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", full_disk)
    capsys.readouterr()
    assert main([*score_args, "--out", str(out), "--threshold", "0.7"]) == 2
    err = capsys.readouterr().err
    assert "No space left on device" in err and len(err.strip().splitlines()) == 1
    assert _snapshot(out) == before
    assert _leftovers(tmp_path) == []


def test_a_failed_figure_leaves_a_new_folder_absent(
    tmp_path: Path, score_args: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import toxeval.plots

    def broken(*args: Any, **kwargs: Any) -> Path:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(toxeval.plots, "plot_ap_by_category", broken)
    out = tmp_path / "new" / "out"
    assert main([*score_args, "--out", str(out), "--plots"]) == 2
    assert not out.exists()
    assert _leftovers(tmp_path / "new") == []


def test_figures_of_an_earlier_plots_run_are_removed(tmp_path: Path, score_args: list[str]) -> None:
    out = tmp_path / "out"
    assert main([*score_args, "--out", str(out), "--plots"]) == 0
    assert (out / "pr_curves.png").exists()
    assert main([*score_args, "--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == [
        MANIFEST,
        "per_category.csv",
        "report.md",
        "results.json",
        "scored_rows.parquet",
    ]
    # a new folder has the usual permissions, not those of a private temporary folder
    umask = os.umask(0)
    os.umask(umask)
    assert (out.stat().st_mode & 0o777) == 0o777 & ~umask
    manifest = json.loads((out / MANIFEST).read_text())["files"]
    assert (
        manifest["results.json"] == hashlib.sha256((out / "results.json").read_bytes()).hexdigest()
    )


@pytest.mark.parametrize("how", ["not toxeval's", "changed since"])
def test_a_figure_toxeval_did_not_write_is_never_deleted(
    tmp_path: Path, score_args: list[str], capsys: Any, how: str
) -> None:
    out = tmp_path / "out"
    if how == "changed since":
        assert main([*score_args, "--out", str(out), "--plots"]) == 0
    else:
        out.mkdir()
    (out / "pr_curves.png").write_bytes(b"the user's own figure")
    before = _snapshot(out)
    capsys.readouterr()
    assert main([*score_args, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "pr_curves.png" in err and "toxeval did not write" in err
    assert _snapshot(out) == before


def test_an_output_never_overwrites_the_predictions(
    tmp_path: Path, small_dataset_file: Path, alias_taxonomy_file: Path, capsys: Any
) -> None:
    out = tmp_path / "out"
    dump = _dump(tmp_path, ["r1", "r2", "r3", "r4", "r5", "r6"], name="out/results.json")
    before = dump.read_bytes()
    code = main(
        ["score", str(dump), "--dataset", str(small_dataset_file), "--taxonomy",
         str(alias_taxonomy_file), "--out", str(out)]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and "would overwrite the input file" in err
    assert dump.read_bytes() == before


def test_a_dataset_named_like_an_output_is_refused_before_any_work(
    tmp_path: Path, small_dataset_file: Path, alias_taxonomy_file: Path, capsys: Any
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    ds = out / "report.md"
    ds.write_bytes(small_dataset_file.read_bytes())
    p = _dump(tmp_path, ["r1", "r2", "r3", "r4", "r5", "r6"])
    code = main(
        [
            "score",
            str(p),
            "--dataset",
            str(ds),
            "--taxonomy",
            str(alias_taxonomy_file),
            "--out",
            str(out),
        ]
    )
    err = capsys.readouterr().err
    # refused for the overwrite, before the dataset is read (it would fail as .md)
    assert code == 2 and "writing report.md would overwrite the input file" in err
    assert ds.read_bytes() == small_dataset_file.read_bytes()


def test_the_python_api_refuses_too(
    tmp_path: Path, small_dataset_file: Path, alias_taxonomy_file: Path
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    ds = out / "results.json"  # a JSON Lines dataset may be named .json
    ds.write_bytes(small_dataset_file.read_bytes())
    res = score(
        _dump(tmp_path, ["r1", "r2", "r3", "r4", "r5", "r6"]), str(ds), taxonomy=alias_taxonomy_file
    )
    with pytest.raises(OutputError, match="would overwrite the input file"):
        write_outputs(res, out)
    assert ds.read_bytes() == small_dataset_file.read_bytes()
    assert os.listdir(out) == ["results.json"]


def test_compare_html_into_a_named_pipe_writes_through_it(tmp_path: Path) -> None:
    # A page written beside the target and renamed over it would replace a named pipe
    # (or, run as root, /dev/null) with a regular file: it is written through it.
    folders = []
    for name in ("a", "b"):
        sub = tmp_path / name
        sub.mkdir()
        dump, ds = write_scored_pair(sub)
        p = subprocess.run(
            [sys.executable, "-m", "toxeval", "score", str(dump), "--dataset", str(ds),
             "--out", str(sub / "res"), "-q"],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert p.returncode == 0, p.stderr
        folders.append(f"{name.upper()}={sub / 'res'}")
    pipe = tmp_path / "page.fifo"
    os.mkfifo(pipe)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(pipe.read_bytes()), daemon=True)
    reader.start()
    p = subprocess.run(
        [sys.executable, "-m", "toxeval", "compare", *folders, "--bootstrap", "20",
         "--html", str(pipe)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    reader.join(30)
    assert stat.S_ISFIFO(pipe.lstat().st_mode)
    assert received and b"<h1>toxeval compare</h1>" in received[0]
    assert sorted(x.name for x in tmp_path.iterdir()) == ["a", "b", "page.fifo"]


@pytest.mark.parametrize("kind", ["loop", "dangling"])
def test_an_out_folder_that_is_a_link_to_nothing_is_refused_before_any_work(
    tmp_path: Path, score_args: list[str], capsys: Any, kind: str
) -> None:
    # a symbolic link loop was an internal error (RuntimeError from Path.resolve); a link
    # to a missing folder failed only after scoring, renaming the results onto the link
    out = tmp_path / "out"
    if kind == "loop":
        (tmp_path / "other").symlink_to(out)
        out.symlink_to(tmp_path / "other")
    else:
        out.symlink_to(tmp_path / "missing")
    assert main([*score_args, "--out", str(out), "-q", "--bootstrap", "0"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # refused before the scores were computed
    assert captured.err == (
        f"toxeval: error: --out {out}: a symbolic link to nothing (its target is missing, "
        "or the link is a loop)\n"
    )
    assert out.is_symlink() and not _leftovers(tmp_path)


def test_two_runs_writing_one_folder_at_once_leave_one_runs_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two runs given the same --out (a sweep writing to one path by mistake) moved their
    # files in one by one, interleaved: report.md of one run beside results.json of the
    # other, and a manifest matching neither. Here run B finishes while run A is moving
    # its files in; the folder must end up all A's or all B's.
    import toxeval.output_dir as od

    out = tmp_path / "out"
    names = ["results.json", "report.md"]
    replace = os.replace
    b_done = threading.Event()
    b_errors: list[BaseException] = []

    def run_b() -> None:
        try:
            with od.staged_outputs(out, names) as stage:
                for name in names:
                    (stage / name).write_text("B\n")
        except BaseException as e:  # reported by the assertion below
            b_errors.append(e)
        b_done.set()

    def replace_then_let_b_run(src: Any, dst: Any) -> None:
        replace(src, dst)
        if Path(dst).name == "results.json" and not b_done.is_set():
            b = threading.Thread(target=run_b)
            b.start()
            b.join(0.5)  # B runs to its end unless it waits for A

    monkeypatch.setattr(od.os, "replace", replace_then_let_b_run)
    out.mkdir()
    with od.staged_outputs(out, names) as stage:
        for name in names:
            (stage / name).write_text("A\n")
    assert b_done.wait(5) and b_errors == []
    contents = {(out / name).read_text() for name in names}
    assert len(contents) == 1, contents
    manifest = json.loads((out / MANIFEST).read_text())["files"]
    assert manifest == {
        name: hashlib.sha256((out / name).read_bytes()).hexdigest() for name in names
    }


def test_sigterm_while_the_outputs_are_written_leaves_no_staged_folder(
    tmp_path: Path, score_args: list[str]
) -> None:
    # SIGTERM (timeout, docker stop, a batch scheduler) killed the process with Python's
    # default action: the staged folder, with every file written so far, stayed beside
    # --out, one more on each such run. It is a clean stop now, as Ctrl-C is.
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "toxeval", *score_args, "--out", str(out), "--plots", "-q"]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        while not _leftovers(tmp_path):  # the staged folder exists: outputs are being written
            assert p.poll() is None, p.communicate()
            time.sleep(0.002)
        p.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=60)
    finally:
        p.kill()
    if p.returncode == 0:  # the run finished before the signal arrived: nothing to test
        pytest.skip("the outputs were written before SIGTERM arrived")
    assert p.returncode == 143, err
    assert err == "toxeval: error: terminated\n"
    assert _leftovers(tmp_path) == [] and not out.exists()


def test_ctrl_c_while_the_files_are_moved_in_waits_for_the_move_to_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Ctrl-C (or SIGTERM) between two of the renames left the new results.json beside
    # the old report.md and scored rows: a folder of two runs that compare would read
    import toxeval.output_dir as od

    out = tmp_path / "out"
    names = ["results.json", "report.md"]
    with od.staged_outputs(out, names) as stage:
        for name in names:
            (stage / name).write_text("old\n")
    replace = os.replace

    def replace_then_interrupt(src: Any, dst: Any) -> None:
        replace(src, dst)
        if Path(dst).name == "results.json":
            os.kill(os.getpid(), signal.SIGINT)

    monkeypatch.setattr(od.os, "replace", replace_then_interrupt)
    # Python's own Ctrl-C handler, whatever this process inherited: a shell starts a
    # background job (a CI runner's) with SIGINT ignored, and then nothing is raised
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            with od.staged_outputs(out, names) as stage:
                for name in names:
                    (stage / name).write_text("new\n")
    finally:
        signal.signal(signal.SIGINT, previous)
    assert {(out / name).read_text() for name in names} == {"new\n"}
    assert _leftovers(tmp_path) == []


_KILLED_WHILE_WRITING = """
import os, signal, sys
from toxeval.output_dir import staged_file, staged_outputs
target = sys.argv[1]
if sys.argv[2] == "folder":
    with staged_outputs(target, ["results.json"]) as stage:
        (stage / "results.json").write_text("half")
        os.kill(os.getpid(), signal.SIGKILL)
with staged_file(target) as f:
    f.write("half")
    f.flush()
    os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.mark.parametrize("kind", ["folder", "file"])
def test_the_stage_of_a_killed_run_is_removed_by_the_next_run(tmp_path: Path, kind: str) -> None:
    # kill -9 (the OOM killer, a preempted job) leaves the staged folder or file beside
    # the target: no handler runs. Each such run left one more, hidden, with everything
    # it had written; the next run writing the same target now removes them.
    import toxeval.output_dir as od

    target = tmp_path / ("out" if kind == "folder" else "batch.jsonl")
    p = subprocess.run(
        [sys.executable, "-c", _KILLED_WHILE_WRITING, str(target), kind],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == -signal.SIGKILL, p.stderr
    (dead,) = _leftovers(tmp_path)
    # a stage made by a live run and not yet locked looks the same for a moment: only a
    # minute-old one is taken for a leftover
    _write = (
        (lambda: od.staged_outputs(target, ["results.json"]))
        if kind == "folder"
        else (lambda: od.staged_file(target))
    )

    def write_again() -> None:
        with _write() as w:
            if kind == "folder":
                (w / "results.json").write_text("whole")
            else:
                w.write("whole")

    write_again()
    assert _leftovers(tmp_path) == [dead]
    old = time.time() - 120
    os.utime(tmp_path / dead, (old, old))
    # a minute-old stage that a live run holds is left alone
    held = od._hold(tmp_path / dead)
    assert held >= 0
    # the lock taken here is on another open file description, as another process's is
    try:
        write_again()
        assert _leftovers(tmp_path) == [dead]
    finally:
        os.close(held)
    # a name that only looks like a stage is the user's
    (tmp_path / f".{target.name}.toxeval-notmine").write_text("x")
    os.utime(tmp_path / f".{target.name}.toxeval-notmine", (old, old))
    write_again()
    assert _leftovers(tmp_path) == [f".{target.name}.toxeval-notmine"]
    result = target / "results.json" if kind == "folder" else target
    assert result.read_text() == "whole"
