"""The bad-input suite: each ``cases/<area>-<name>.yaml`` runs one ``stratoflow`` command that must
fail with a named error.

A case file is a YAML mapping:

``description`` (required)
    one line: what is wrong with the input.
``argv`` (required)
    the arguments after ``stratoflow`` (strings; numbers are turned into strings).
``expect`` (required)
    substrings that must all appear in stderr (case-insensitive): the offending thing and what
    to do.
``files``
    ``{relative path: text}`` written into the case folder before the command runs.
``setup``
    ``"module:function"`` of the package ``tests.badinput``, called as ``function(case_dir)`` after
    ``files`` are written, for what a text file cannot express (binary corruption, read-only
    folders...).
``env``
    extra environment variables; a null value removes the variable.
``stdin``
    text fed to the command's standard input (else it reads an empty stdin).
``pipe_to_head``
    ``true``: stdout is a pipe that the reader closes after the first line, as ``| head -1``.
``exit_code``
    an int or a list of ints the exit code must be instead of the default "non-zero".
``allow_signal``
    ``true``: the command may end by a signal (else a negative return code fails the case).
``forbid``
    substrings that must not appear in stderr (case-insensitive).
``timeout``
    seconds before the command is killed and the case fails (default 60).

``"{case}"`` in ``argv``, ``env`` values and ``expect`` is the case folder's path. A ``setup``
function may return a callable, called after the case (to undo what a test folder's removal
cannot, such as an immutable flag).

The command runs as a subprocess of the venv's ``stratoflow`` with the case folder as cwd, and
with ``HOME``, ``XDG_CACHE_HOME``, ``TMPDIR`` and the ``STRATOFLOW_*`` locations inside the case
folder unless the case sets them, so nothing outside it is touched. A case passes when the exit
code is non-zero (not a signal), stderr has no ``Traceback`` and every ``expect`` substring, and
nothing appeared beside its folder. The cases are set up one by one and their commands run
``$BADINPUT_JOBS`` at a time (default: the CPU count, at most 8); around them all, the
repository's ``git status`` and the entries of the real ``/tmp`` must stay the same.
``BADINPUT_SHARED_MACHINE=1`` skips that comparison, for a checkout being edited and a machine
other jobs use while the suite runs.
"""

from __future__ import annotations

import concurrent.futures
import importlib
import os
import re
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

CASES_DIR = Path(__file__).resolve().parent / "cases"
REPO = Path(__file__).resolve().parents[2]
STRATOFLOW = Path(sys.executable).parent / "stratoflow"
CASE_NAME = re.compile(r"^[a-z0-9]+-[a-z0-9][a-z0-9_-]*$")
KEYS = {
    "description", "argv", "expect", "files", "setup", "env", "stdin", "pipe_to_head",
    "exit_code", "allow_signal", "forbid", "timeout",
}  # fmt: skip
DEFAULT_TIMEOUT_S = 60.0
# /tmp entries other processes create while a case runs (the other test workers' too): pytest's
# folders, Python's tempfile names, multiprocessing's folders, the compiler's temporaries (a
# case's own command has TMPDIR inside the case folder).
_FOREIGN_TMP = re.compile(r"^(pytest-of-.*|tmp[a-z0-9_]{8}|pymp-[a-z0-9_]{8}|cc[A-Za-z0-9]{6}\..+)$")


class CaseFileError(ValueError):
    """A case file does not follow the format in this module's docstring."""


@dataclass(frozen=True)
class Case:
    """One validated case file."""

    name: str
    description: str
    argv: tuple[str, ...]
    expect: tuple[str, ...]
    files: dict[str, str] = field(default_factory=dict)
    setup: str | None = None
    env: dict[str, str | None] = field(default_factory=dict)
    stdin: str | None = None
    pipe_to_head: bool = False
    exit_code: tuple[int, ...] | None = None
    allow_signal: bool = False
    forbid: tuple[str, ...] = ()
    timeout: float = DEFAULT_TIMEOUT_S


def _strings(value: Any, key: str, where: str, *, numbers: bool = False) -> tuple[str, ...]:
    kinds = (str, int, float) if numbers else (str,)
    if not isinstance(value, list) or any(
        isinstance(v, bool) or not isinstance(v, kinds) for v in value
    ):
        what = "strings (quote booleans)" if numbers else "strings"
        raise CaseFileError(f"{where}: '{key}' must be a list of {what}, got {value!r}")
    return tuple(str(v) for v in value)


def load_case(path: Path) -> Case:
    """Read and validate one case file; CaseFileError names the file and the key."""
    where = f"case file {path.name}"
    if not CASE_NAME.match(path.stem):
        raise CaseFileError(f"{where}: the name must be <area>-<short-name>.yaml in lower case")
    try:
        data = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as exc:
        raise CaseFileError(f"{where}: not readable YAML: {exc}") from None
    if not isinstance(data, dict):
        raise CaseFileError(f"{where}: must be a YAML mapping")
    unknown = sorted(set(data) - KEYS)
    if unknown:
        raise CaseFileError(f"{where}: unknown keys {unknown}; allowed: {sorted(KEYS)}")
    for key in ("description", "argv", "expect"):
        if key not in data:
            raise CaseFileError(f"{where}: '{key}' is required")
    description = data["description"]
    if not isinstance(description, str) or not description.strip() or "\n" in description.strip():
        raise CaseFileError(f"{where}: 'description' must be one non-empty line")
    argv = _strings(data["argv"], "argv", where, numbers=True)
    expect = _strings(data["expect"], "expect", where)
    if not expect or not all(e.strip() for e in expect):
        raise CaseFileError(f"{where}: 'expect' needs at least one non-empty substring")
    files = data.get("files") or {}
    if not isinstance(files, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in files.items()
    ):
        raise CaseFileError(f"{where}: 'files' must map relative paths to text")
    for rel in files:
        if Path(rel).is_absolute() or ".." in Path(rel).parts:
            raise CaseFileError(f"{where}: files: {rel!r} must be a relative path inside the case")
    setup = data.get("setup")
    if setup is not None and not (isinstance(setup, str) and re.match(r"^\w+:\w+$", setup)):
        raise CaseFileError(f"{where}: 'setup' must be \"module:function\", got {setup!r}")
    env = data.get("env") or {}
    if not isinstance(env, dict) or not all(
        isinstance(k, str) and (v is None or isinstance(v, str)) for k, v in env.items()
    ):
        raise CaseFileError(f"{where}: 'env' must map variable names to strings or null")
    stdin = data.get("stdin")
    if stdin is not None and not isinstance(stdin, str):
        raise CaseFileError(f"{where}: 'stdin' must be text")
    flags = {}
    for key in ("pipe_to_head", "allow_signal"):
        flags[key] = data.get(key, False)
        if not isinstance(flags[key], bool):
            raise CaseFileError(f"{where}: '{key}' must be true or false")
    exit_code = data.get("exit_code")
    if exit_code is not None:
        codes = exit_code if isinstance(exit_code, list) else [exit_code]
        if not codes or any(isinstance(c, bool) or not isinstance(c, int) for c in codes):
            raise CaseFileError(f"{where}: 'exit_code' must be an int or a list of ints")
        exit_code = tuple(codes)
    forbid = _strings(data.get("forbid", []), "forbid", where)
    timeout = data.get("timeout", DEFAULT_TIMEOUT_S)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not timeout > 0:
        raise CaseFileError(f"{where}: 'timeout' must be a positive number of seconds")
    return Case(
        path.stem, description.strip(), argv, expect, dict(files), setup, dict(env), stdin,
        flags["pipe_to_head"], exit_code, flags["allow_signal"], forbid, float(timeout),
    )  # fmt: skip


def case_env(case: Case, case_dir: Path) -> dict[str, str]:
    """The command's environment: the caller's, with every location inside ``case_dir``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("STRATOFLOW_")}
    env.pop("DACE_CONFIG", None)  # stencils.config points it at the (case's) stencil cache
    home = case_dir / "home"
    env.update(
        HOME=str(home),
        XDG_CACHE_HOME=str(home / ".cache"),
        XDG_CONFIG_HOME=str(home / ".config"),
        MPLCONFIGDIR=str(home / ".config" / "matplotlib"),
        TMPDIR=str(case_dir / "tmp"),
        PYTHONDONTWRITEBYTECODE="1",
        STRATOFLOW_RUNS_DIR=str(case_dir / "runs"),
        STRATOFLOW_DB=str(case_dir / "runs" / "stratoflow.db"),
        STRATOFLOW_TUNING_DB=str(home / ".cache" / "stratoflow" / "tuning.sqlite"),
        STRATOFLOW_TUNING_CACHE=str(home / ".cache" / "stratoflow" / "builds"),
        STRATOFLOW_CACHE_DIR=str(case_dir / ".stratoflow_cache"),
    )
    for key, value in case.env.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value.replace("{case}", str(case_dir))
    return env


def _git_status() -> str | None:
    try:
        proc = subprocess.run(
            ["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=all"],
            capture_output=True, text=True, timeout=30,
        )  # fmt: skip
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout if proc.returncode == 0 else None


def _tmp_entries() -> set[str]:
    """This user's entries of /tmp and of the test process's temporary folder."""
    uid = os.getuid()
    out = set()
    for root in sorted({"/tmp", tempfile.gettempdir()}):
        for entry in os.scandir(root):
            try:
                if entry.stat(follow_symlinks=False).st_uid == uid:
                    out.add(os.path.join(root, entry.name))
            except OSError:
                continue
    return out


@dataclass
class Outcome:
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    timed_out: bool = False


def run_case(case: Case, case_dir: Path, scratch: Path) -> Outcome:
    """Run the case's command in ``case_dir``; stdout/stderr are collected in ``scratch``. A
    command still running after the case's timeout has its process group killed."""
    argv = [str(STRATOFLOW), *(a.replace("{case}", str(case_dir)) for a in case.argv)]
    out_path, err_path = scratch / "stdout.txt", scratch / "stderr.txt"
    start = time.perf_counter()
    timed_out = False
    with open(err_path, "w") as err, open(out_path, "w") as out:
        proc = subprocess.Popen(
            argv, cwd=case_dir, env=case_env(case, case_dir), text=True,
            stdin=subprocess.PIPE if case.stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE if case.pipe_to_head else out, stderr=err,
            start_new_session=True,
        )  # fmt: skip
        try:
            if case.stdin is not None:
                assert proc.stdin is not None
                try:
                    proc.stdin.write(case.stdin)
                    proc.stdin.close()
                except BrokenPipeError:
                    pass
            if case.pipe_to_head:
                assert proc.stdout is not None
                out.write(proc.stdout.readline())
                proc.stdout.close()  # what `head -1` does once it has its line
            proc.wait(timeout=case.timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.wait()
            timed_out = True
    seconds = time.perf_counter() - start
    return Outcome(proc.returncode, out_path.read_text(), err_path.read_text(), seconds, timed_out)


def _case_paths() -> list[Path]:
    return sorted(CASES_DIR.glob("*.yaml")) + sorted(CASES_DIR.glob("*.yml"))


@dataclass
class Prepared:
    """A case, its folder (made and set up) and, once run, its outcome or why it could not run."""

    path: Path
    root: Path
    case: Case | None = None
    error: str | None = None
    around: list[str] = field(default_factory=list)
    outcome: Outcome | None = None

    @property
    def case_dir(self) -> Path:
        return self.root / "case"


def _prepare(path: Path, root: Path, undo: list) -> Prepared:
    prep = Prepared(path, root)
    try:
        prep.case = case = load_case(path)
    except CaseFileError as exc:
        prep.error = str(exc)
        return prep
    for sub in ("home", "tmp"):
        (prep.case_dir / sub).mkdir(parents=True)
    for rel, text in case.files.items():
        target = prep.case_dir / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    if case.setup:
        module_name, func_name = case.setup.split(":")
        try:
            func = getattr(importlib.import_module(f"tests.badinput.{module_name}"), func_name)
        except (ImportError, AttributeError) as exc:
            prep.error = f"case file {path.name}: setup {case.setup!r} not found: {exc}"
            return prep
        result = func(prep.case_dir)
        if callable(result):
            undo.append(result)
    (root / "output").mkdir()
    prep.around = sorted(p.name for p in root.iterdir())
    return prep


@dataclass
class SuiteRun:
    """Every selected case, run concurrently, and what changed outside the case folders."""

    cases: dict[str, Prepared]
    git_changed: list[str]
    new_tmp: list[str]


def _jobs() -> int:
    """Cases run at a time: ``$BADINPUT_JOBS``, else the CPU count (at most 8)."""
    return max(1, int(os.environ.get("BADINPUT_JOBS") or min(8, os.cpu_count() or 1)))


@pytest.fixture(scope="module")
def suite(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
    badinput_times: dict[str, float],
) -> Any:  # fmt: skip
    """Prepare the selected cases one by one (setups may share a session cache), run their
    commands ``_jobs()`` at a time, and compare git status and /tmp before and after them all."""
    selected = [
        item.callspec.params["path"] for item in request.session.items
        if getattr(item, "originalname", None) == "test_bad_input"
    ]  # fmt: skip
    undo: list = []
    cases = {p.stem: _prepare(p, tmp_path_factory.mktemp(p.stem), undo) for p in selected}
    runnable = [c for c in cases.values() if c.error is None]
    git_before, tmp_before = _git_status(), _tmp_entries()
    with concurrent.futures.ThreadPoolExecutor(_jobs()) as pool:
        futures = {
            pool.submit(run_case, c.case, c.case_dir, c.root / "output"): c for c in runnable
        }  # fmt: skip
        for future in concurrent.futures.as_completed(futures):
            prep = futures[future]
            prep.outcome = future.result()
            badinput_times[prep.path.stem] = prep.outcome.seconds
    git_after, tmp_after = _git_status(), _tmp_entries()
    git_changed = sorted(
        set((git_after or "").splitlines()) ^ set((git_before or "").splitlines())
    )  # fmt: skip
    new_tmp = sorted(
        n for n in tmp_after - tmp_before if not _FOREIGN_TMP.match(os.path.basename(n))
    )
    yield SuiteRun(cases, git_changed, new_tmp)
    for func in undo:
        func()


@pytest.mark.parametrize("path", _case_paths(), ids=lambda p: p.stem)
def test_bad_input(path: Path, suite: SuiteRun) -> None:
    """The case's command fails with a one-line named error: non-zero exit (no signal), no
    traceback, every expected substring in stderr, and nothing beside the case folder created."""
    prep = suite.cases[path.stem]
    if prep.error is not None:
        pytest.fail(prep.error)
    case, outcome = prep.case, prep.outcome
    assert case is not None and outcome is not None
    case_dir = prep.case_dir
    shown = f"`stratoflow {' '.join(case.argv)}` ({case.description}); stderr:\n{outcome.stderr}"
    assert not outcome.timed_out, f"still running after {case.timeout:.0f} s (killed): {shown}"
    if outcome.returncode < 0:
        assert case.allow_signal, f"killed by signal {-outcome.returncode}: {shown}"
    elif case.exit_code is not None:
        assert outcome.returncode in case.exit_code, (
            f"exit code {outcome.returncode}, expected one of {case.exit_code}: {shown}"
        )
    else:
        assert outcome.returncode != 0, f"exit code 0 for a bad input: {shown}"
    assert "Traceback" not in outcome.stderr, f"traceback on stderr: {shown}"
    low = outcome.stderr.lower()
    expect = [e.replace("{case}", str(case_dir)) for e in case.expect]
    missing = [e for e in expect if e.lower() not in low]
    assert not missing, f"stderr lacks {missing}: {shown}"
    present = [f for f in case.forbid if f.lower() in low]
    assert not present, f"stderr has forbidden {present}: {shown}"
    beside = sorted(p.name for p in prep.root.iterdir())
    assert beside == prep.around, f"files appeared beside the case folder: {beside}"


def test_nothing_outside_the_case_folders_changed(suite: SuiteRun) -> None:
    """No case's command changed the repository (git status) or created entries in /tmp: each
    case's command has its cwd, HOME, TMPDIR and STRATOFLOW_* locations in its own folder.
    ``BADINPUT_SHARED_MACHINE=1`` skips this, for a checkout edited while the suite runs."""
    if os.environ.get("BADINPUT_SHARED_MACHINE"):
        pytest.skip("BADINPUT_SHARED_MACHINE is set")
    assert not suite.git_changed, f"the repository's git status changed: {suite.git_changed}"
    assert not suite.new_tmp, f"new entries in /tmp: {suite.new_tmp}"


def test_case_file_validation(tmp_path: Path) -> None:
    """A malformed case file is refused with its file name and the offending key; a minimal
    valid one loads with the defaults of the format."""
    good = tmp_path / "demo-ok.yaml"
    good.write_text('description: x\nargv: [map, "-", --clock-mhz, 0]\nexpect: [clock]\n')
    case = load_case(good)
    assert case.argv == ("map", "-", "--clock-mhz", "0")
    assert case.exit_code is None and case.timeout == DEFAULT_TIMEOUT_S and not case.pipe_to_head
    bad = {
        "demo-unknown.yaml": ("description: x\nargv: []\nexpect: [a]\nexpcet: [b]\n", "expcet"),
        "demo-noexpect.yaml": ("description: x\nargv: [run]\n", "'expect' is required"),
        "demo-boolarg.yaml": ("description: x\nargv: [run, yes]\nexpect: [a]\n", "argv"),
        "demo-escape.yaml": (
            "description: x\nargv: []\nexpect: [a]\nfiles: {'../x': y}\n", "relative path"
        ),
        "demo-setup.yaml": ("description: x\nargv: []\nexpect: [a]\nsetup: nocolon\n", "setup"),
        "Demo Bad.yaml": ("description: x\nargv: []\nexpect: [a]\n", "<area>-<short-name>"),
        "demo-yaml.yaml": ("description: [x\n", "not readable YAML"),
    }
    for name, (text, needle) in bad.items():
        path = tmp_path / name
        path.write_text(text)
        with pytest.raises(CaseFileError) as info:
            load_case(path)
        assert name in str(info.value) and needle in str(info.value), str(info.value)
