"""Build toxeval's wheel and sdist, install them as users do, and test what was installed.

Run from the repository root:

    python tools/test_wheels.py                       # build, check, CPython 3.10-3.13, sdist
    python tools/test_wheels.py --pythons 3.10,3.13   # build, check, two Pythons, sdist
    python tools/test_wheels.py --wheel dist/toxeval-0.1.0-cp310-abi3-*.whl --no-sdist
    # what CI runs (.ci/run): the wheel it built, the smoke subset on 3.10 and 3.13
    python tools/test_wheels.py --wheel W.whl --sdist S.tar.gz --no-sdist --require-checks \
        --pythons 3.10,3.13 -- tests -m smoke

Steps:

1. ``maturin build --release --compression-level 9`` (deflate at its highest level, as
   the release workflow builds; on Linux also ``--zig --compatibility manylinux2014``)
   and ``maturin sdist`` into a temporary directory, unless ``--wheel`` names a
   built wheel. The wheel is checked with ``auditwheel show`` (its manylinux tag
   must be the one it claims), ``abi3audit --strict`` (only the stable ABI is used),
   ``check-wheel-contents`` and ``twine check`` (wheel and sdist), when the tools are
   installed (``pip install ".[dev]"``); ``--require-checks`` makes a missing tool an
   error.
2. For each Python: a fresh virtualenv, the wheel installed with its ``[test]`` extra
   by pip with ``--only-binary toxeval``, with a PATH on which neither ``cargo`` nor
   ``rustc`` can be found (checked), so nothing can be compiled.
3. The test suite, copied to a temporary directory together with the repository
   files some tests read (README.md, Cargo.toml, docs/, benches/), runs there with
   no ``PYTHONPATH`` and no ``python/`` directory anywhere near (pytest's default
   import mode puts only the copied ``tests/`` on ``sys.path``, which some test
   modules need for their shared helpers); a first check asserts that ``toxeval``
   and its native module are imported from the virtualenv's site-packages.
4. The sdist is installed into another fresh virtualenv with the Rust toolchain on
   PATH (``--sdist-python``, default the newest Python tested) and the same suite
   runs against it; ``--sdist-tests`` narrows it.

Test modules that import scikit-learn or SciPy at module level cannot run where the
pinned references are not installable (scikit-learn 1.9.1 and SciPy 1.17.1 need
Python >= 3.11): they are listed and left out on that Python, never silently.
Exit status: 0 when every build, check and test run passed, 1 otherwise, 2 on bad
arguments.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_PYTHONS = ("3.10", "3.11", "3.12", "3.13")
# Files beside tests/ that some tests read (README and docs examples, the benches
# they exercise, Cargo.toml for the version, the release workflow and its tools).
REPO_FILES = ("README.md", "Cargo.toml", "pyproject.toml", "docs", "benches", ".github", "tools")
TOOLCHAIN = ("cargo", "rustc")
REFERENCE_IMPORT = re.compile(r"^\s*(import|from) (sklearn|scipy)\b", re.M)


def log(msg: str) -> None:
    print(f"[test-wheels] {msg}", flush=True)


def run(cmd: Sequence[str | Path], **kw: object) -> subprocess.CompletedProcess[str]:
    log("+ " + " ".join(str(c) for c in cmd))
    return subprocess.run([str(c) for c in cmd], text=True, **kw)  # type: ignore[call-overload,no-any-return]


def find_python(version: str) -> Path:
    """The interpreter for ``version``: "current", a path, pyenv's, or pythonX.Y on PATH."""
    if version == "current":
        return Path(sys.executable)
    if "/" in version or "\\" in version or version.endswith(".exe"):
        return Path(version)
    try:
        prefix = subprocess.run(
            ["pyenv", "prefix", version], capture_output=True, text=True, check=True
        ).stdout.strip()
        for name in ("bin/python", "python.exe"):
            if (Path(prefix) / name).exists():
                return Path(prefix) / name
    except (OSError, subprocess.CalledProcessError):
        pass
    found = shutil.which(f"python{version}")
    if found:
        return Path(found)
    raise SystemExit(f"error: no Python {version} found (pyenv prefix, python{version} on PATH)")


def path_without_toolchain() -> str:
    """PATH minus every directory that holds cargo or rustc."""
    keep = []
    for d in os.environ.get("PATH", "").split(os.pathsep):
        if d and not any(shutil.which(t, path=d) for t in TOOLCHAIN):
            keep.append(d)
    return os.pathsep.join(keep)


def venv_bin(venv: Path) -> Path:
    return venv / ("Scripts" if os.name == "nt" else "bin")


def build(out: Path, maturin_args: Sequence[str]) -> tuple[Path, Path]:
    """The wheel and the sdist, built by maturin from the repository."""
    env = {**os.environ}
    env.pop("PYTHONPATH", None)
    r = run(
        [sys.executable, "-m", "maturin", "build", "--release", "-o", out, *maturin_args],
        cwd=REPO,
        env=env,
    )
    if r.returncode:
        raise SystemExit("error: maturin build failed")
    r = run([sys.executable, "-m", "maturin", "sdist", "-o", out], cwd=REPO, env=env)
    if r.returncode:
        raise SystemExit("error: maturin sdist failed")
    wheels = sorted(out.glob("toxeval-*.whl"))
    sdists = sorted(out.glob("toxeval-*.tar.gz"))
    if len(wheels) != 1 or len(sdists) != 1:
        raise SystemExit(f"error: expected one wheel and one sdist in {out}, got {wheels + sdists}")
    return wheels[0], sdists[0]


def check_artifacts(wheel: Path, sdist: Path | None, require: bool) -> list[str]:
    """Run the wheel/sdist checkers that are installed; return the failures."""
    failures: list[str] = []
    bindir = Path(sysconfig.get_path("scripts"))
    checks: list[tuple[str, list[str | Path]]] = [
        ("check-wheel-contents", [wheel]),
        ("twine", ["check", "--strict", wheel, *([sdist] if sdist else [])]),
        ("abi3audit", ["--strict", "--report", wheel]),
    ]
    if sys.platform.startswith("linux"):
        checks.append(("auditwheel", ["show", wheel]))
    for tool, args in checks:
        exe = shutil.which(tool) or shutil.which(tool, path=str(bindir))
        if exe is None:
            msg = f"{tool} is not installed (pip install '.[dev]')"
            if require:
                failures.append(msg)
            log(f"skipped: {msg}")
            continue
        r = run([exe, *args], capture_output=True)
        print(r.stdout + r.stderr, end="", flush=True)
        if r.returncode:
            failures.append(f"{tool} failed")
        if tool == "auditwheel" and r.returncode == 0:
            failures += check_manylinux_claim(wheel, r.stdout)
    return failures


def check_manylinux_claim(wheel: Path, show: str) -> list[str]:
    """The platform tag in the wheel's name must be one auditwheel says it satisfies."""
    tags = re.findall(r"(manylinux_\d+_\d+_\w+|manylinux\d+_\w+|musllinux_\d+_\d+_\w+)", wheel.name)
    if not tags:
        return [f"{wheel.name}: no manylinux/musllinux tag in the file name"]
    # auditwheel: 'is consistent with the following platform tag: "manylinux_2_17_x86_64"'
    m = re.search(r'consistent with the following platform tag:\s*"([^"]+)"', show)
    if m is None:
        return ["auditwheel show: no platform tag reported"]
    best = m.group(1)
    claimed = tags[0]
    aliases = {"manylinux2014": "manylinux_2_17", "manylinux2010": "manylinux_2_12"}
    for legacy, pep600 in aliases.items():
        claimed = claimed.replace(legacy, pep600)
    if libc_version(claimed) < libc_version(best):
        return [f"{wheel.name} claims {tags[0]} but auditwheel says it needs {best}"]
    log(f"manylinux claim ok: {tags[0]} (auditwheel: {best})")
    return []


def libc_version(tag: str) -> tuple[int, int]:
    """(major, minor) of a PEP 600/656 tag such as manylinux_2_17_x86_64."""
    major, minor = re.findall(r"_(\d+)_(\d+)_", tag)[0]
    return int(major), int(minor)


def stage_tests(dest: Path) -> None:
    """Copy tests/ and the repository files tests read; never python/ or rust/."""
    shutil.copytree(REPO / "tests", dest / "tests", ignore=shutil.ignore_patterns("__pycache__"))
    for name in REPO_FILES:
        src = REPO / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns("__pycache__", "*.so"))
        elif src.is_file():
            shutil.copy2(src, dest / name)


def unrunnable_modules(tests: Path, python: Path, env: dict[str, str]) -> list[str]:
    """Test modules importing scikit-learn/SciPy at module level (directly or through
    another test module) when those are absent."""
    probe = "import importlib.util as u; print(all(u.find_spec(m) for m in ('sklearn', 'scipy')))"
    have = subprocess.run([str(python), "-c", probe], capture_output=True, text=True, env=env)
    if have.stdout.strip() == "True":
        return []
    # a module that imports such a module (test_cli imports test_scoring) cannot run either
    texts = {p.stem: p.read_text("utf-8") for p in tests.glob("*.py")}
    blocked = {name for name, text in texts.items() if REFERENCE_IMPORT.search(text)}
    grew = True
    while grew:
        grew = False
        for name, text in texts.items():
            imported = set(re.findall(r"^(?:import|from) (\w+)", text, re.M))
            if name not in blocked and imported & blocked:
                blocked.add(name)
                grew = True
    return sorted(f"{name}.py" for name in blocked if name.startswith("test_"))


INSTALLED_CHECK = """
import pathlib, sys, sysconfig, toxeval, toxeval._core
site = pathlib.Path(sysconfig.get_path("purelib")).resolve()
plat = pathlib.Path(sysconfig.get_path("platlib")).resolve()
for mod in (toxeval, toxeval._core):
    f = pathlib.Path(mod.__file__).resolve()
    assert site in f.parents or plat in f.parents, f"{mod.__name__} loaded from {f}, not site-packages"
print("toxeval", toxeval.__version__, "from", pathlib.Path(toxeval.__file__).parent)
"""


def install_and_test(
    label: str,
    python: Path,
    target: str,
    work: Path,
    pytest_args: Sequence[str],
    with_toolchain: bool,
) -> list[str]:
    """Fresh venv, install ``target``, run the staged suite; return the failures."""
    venv = work / f"venv-{label}"
    t0 = time.monotonic()
    if run([python, "-m", "venv", venv]).returncode:
        return [f"{label}: venv creation failed"]
    py = venv_bin(venv) / ("python.exe" if os.name == "nt" else "python")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["PATH"] = os.pathsep.join(
        [str(venv_bin(venv)), os.environ["PATH"] if with_toolchain else path_without_toolchain()]
    )
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    if not with_toolchain:
        for tool in TOOLCHAIN:
            if shutil.which(tool, path=env["PATH"]):
                return [f"{label}: {tool} is still on PATH"]
        try:
            subprocess.run(["cargo", "--version"], env=env, capture_output=True, check=False)
            return [f"{label}: cargo could be run without a toolchain on PATH"]
        except FileNotFoundError:
            log(f"{label}: cargo not found on PATH (as intended)")
    pip: list[str | Path] = [py, "-m", "pip", "install", "--quiet"]
    if not with_toolchain:
        pip += ["--only-binary", "toxeval"]
    if run([*pip, f"{target}[test]"], env=env, cwd=work).returncode:
        return [f"{label}: pip install {target}[test] failed"]
    t_install = time.monotonic() - t0
    tmp = work / f"tests-{label}"
    stage_tests(tmp)
    if run([py, "-c", INSTALLED_CHECK], env=env, cwd=tmp).returncode:
        return [f"{label}: toxeval is not imported from site-packages"]
    ignored = unrunnable_modules(tmp / "tests", py, env)
    if ignored:
        log(
            f"{label}: scikit-learn/SciPy references not installed here; not run: {', '.join(ignored)}"
        )
    cmd: list[str | Path] = [py, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider"]
    cmd += ["--rootdir", tmp, *[f"--ignore=tests/{m}" for m in ignored]]
    # --ignore covers directory collection; a module named explicitly is dropped here
    targets = [a for a in pytest_args if Path(a.split("::")[0]).name not in ignored]
    cmd += targets if pytest_args else ["tests"]
    rc = run(cmd, env=env, cwd=tmp).returncode
    log(
        f"{label}: install {t_install:.0f} s, total {time.monotonic() - t0:.0f} s, pytest exit {rc}"
    )
    return [f"{label}: pytest exit {rc}"] if rc else []


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--pythons",
        default=",".join(DEFAULT_PYTHONS),
        help="comma-separated versions (pyenv), paths, or 'current'",
    )
    ap.add_argument("--wheel", type=Path, help="test this built wheel instead of building one")
    ap.add_argument("--sdist", type=Path, help="test this sdist (default: the one built)")
    ap.add_argument("--no-sdist", action="store_true", help="do not install and test the sdist")
    ap.add_argument(
        "--sdist-only", action="store_true", help="install and test only the sdist (needs --sdist)"
    )
    ap.add_argument("--sdist-python", help="Python for the sdist (default: the last of --pythons)")
    ap.add_argument("--sdist-tests", default="", help="pytest arguments for the sdist run")
    ap.add_argument(
        "--maturin-args",
        default=None,
        help="extra maturin build arguments (default: '--compression-level 9', on Linux "
        "with '--zig --compatibility manylinux2014')",
    )
    ap.add_argument(
        "--require-checks",
        action="store_true",
        help="fail when auditwheel/abi3audit/check-wheel-contents/twine are missing",
    )
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    ap.add_argument("pytest_args", nargs="*", help="pytest arguments (default: tests)")
    args = ap.parse_args(argv)
    pythons = [p.strip() for p in args.pythons.split(",") if p.strip()]
    if not pythons:
        ap.error("--pythons is empty")
    if args.wheel is not None and not args.wheel.is_file():
        ap.error(f"--wheel {args.wheel}: no such file")
    if args.sdist is not None and not args.sdist.is_file():
        ap.error(f"--sdist {args.sdist}: no such file")
    if args.sdist_only and (args.sdist is None or args.no_sdist):
        ap.error("--sdist-only needs --sdist and no --no-sdist")
    if args.maturin_args is None:
        linux = sys.platform.startswith("linux")
        default = "--zig --compatibility manylinux2014 " if linux else ""
        args.maturin_args = default + "--compression-level 9"
    interpreters = {v: find_python(v) for v in pythons}

    work = Path(tempfile.mkdtemp(prefix="toxeval-wheels-"))
    failures: list[str] = []
    t0 = time.monotonic()
    try:
        wheel, sdist = args.wheel, args.sdist
        if args.sdist_only:
            interpreters = {}
        elif wheel is None:
            wheel, built_sdist = build(work / "dist", args.maturin_args.split())
            sdist = sdist or built_sdist
        if sdist is not None:
            sdist = sdist.resolve()
            log(f"sdist {sdist.name}: {sdist.stat().st_size / 1e6:.2f} MB")
        if wheel is not None:
            wheel = wheel.resolve()
            log(f"wheel {wheel.name}: {wheel.stat().st_size / 1e6:.2f} MB")
            failures += check_artifacts(wheel, sdist, args.require_checks)
        for version, python in interpreters.items():
            failures += install_and_test(
                f"wheel-py{version}",
                python,
                str(wheel),
                work,
                args.pytest_args,
                with_toolchain=False,
            )
        if not args.no_sdist:
            if sdist is None:
                failures.append("no sdist to test (pass --sdist or let the script build one)")
            else:
                version = args.sdist_python or pythons[-1]
                failures += install_and_test(
                    f"sdist-py{version}",
                    find_python(version),
                    str(sdist),
                    work,
                    args.sdist_tests.split(),
                    with_toolchain=True,
                )
    finally:
        if args.keep:
            log(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    log(f"done in {time.monotonic() - t0:.0f} s")
    for f in failures:
        log(f"FAILED: {f}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
