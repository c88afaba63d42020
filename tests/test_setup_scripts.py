"""The README's two commands on a fresh Debian or Ubuntu, whose ``python3`` refuses installs into
itself (PEP 668): ``scripts/start.sh`` and ``scripts/test.sh`` set up the project's virtual
environment ``.venv`` (made once, reused after), install into it and run from it.

The scripts run on a copy of the project in a tmp folder with a fake system Python first on PATH
(the ``system_bin`` fixture): it is this interpreter's base Python, except that ``pip install``
into it is refused as Debian refuses it, and that a venv it makes also sees the packages of the
environment running these tests (a ``.pth`` file). So pip, told to use no index, resolves every
requirement offline and installs only the project. ``id`` there says a user, not root, so no test
runs apt-get.
"""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import subprocess
import sys
import sysconfig
import urllib.request
from pathlib import Path

import pytest

from . import APP_ROOT, wait_until
from .browser_support import free_port

SCRIPT_TIMEOUT_S = 600
REFUSAL = """\
error: externally-managed-environment

x This environment is externally managed
-> To install Python packages system-wide, try apt install python3-xyz."""

SYSTEM_PYTHON = """\
#!/bin/sh
# A system Python ({base}) that refuses installs into itself (PEP 668). Its venvs hold pip
# alone (as from Python 3.12 on) and see {sites}.
if [ "$1" = -m ] && [ "$2" = pip ]; then
  for arg; do [ "$arg" = install ] && {{ touch "{refused}"; cat >&2 <<'EOF'
{refusal}
EOF
  exit 1; }}; done
fi
if [ "$1" = -m ] && [ "$2" = venv ]; then
  "{base}" "$@" || exit $?
  for venv; do :; done
  site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
  rm -rf "$site"/setuptools "$site"/setuptools-*.dist-info "$site"/pkg_resources "$site"/_distutils_hack "$site"/distutils-precedence.pth
  printf '%s\\n' {sites} > "$site/test-environment.pth"
  exit 0
fi
exec "{base}" "$@"
"""

SYSTEM_PIP = """\
#!/bin/sh
for arg; do [ "$arg" = install ] && {{ touch "{refused}"; cat >&2 <<'EOF'
{refusal}
EOF
exit 1; }}; done
exec "{base}" -m pip "$@"
"""


def _setuptools_version() -> tuple[int, ...]:
    try:
        version = importlib.metadata.version("setuptools")
    except importlib.metadata.PackageNotFoundError:
        return ()
    return tuple(int(part) for part in version.split(".")[:2] if part.isdigit())


builds_offline = pytest.mark.skipif(
    _setuptools_version() < (70, 1),
    reason="building the package offline needs setuptools >= 70.1 in the test environment (the test extras; bash scripts/test.sh has it)",
)
"""The set-up tests that install: pip builds the project with this environment's setuptools."""


def _executable(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(0o755)
    return path


def _base_python() -> Path:
    """The interpreter the running environment was made from (itself when it is no venv)."""
    return Path(sys.base_prefix) / "bin" / f"python{sys.version_info.major}.{sys.version_info.minor}"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy of the project without its tests, docs, venv or build output."""
    ignore = shutil.ignore_patterns(".venv", ".git", "test-artifacts", "__pycache__", "*.egg-info", "build", "dist", "tests", "benchmarks", "docs")
    return Path(shutil.copytree(APP_ROOT, tmp_path / "project", symlinks=True, ignore=ignore))


@pytest.fixture
def system_bin(tmp_path: Path) -> Path:
    """A folder that goes first on PATH: ``python3``, ``pip`` and ``pip3`` of a system Python that
    refuses installs into itself (touching ``refused`` when asked), ``id`` saying a user, and
    ``fc-list`` listing many fonts."""
    folder = tmp_path / "system-bin"
    folder.mkdir()
    sites = " ".join(f"'{site}'" for site in sorted({sysconfig.get_path("purelib"), sysconfig.get_path("platlib")}))
    values = {"base": _base_python(), "sites": sites, "refused": folder / "refused", "refusal": REFUSAL}
    _executable(folder / "python3", SYSTEM_PYTHON.format(**values))
    for name in ("pip", "pip3"):
        _executable(folder / name, SYSTEM_PIP.format(**values))
    _executable(folder / "id", "#!/bin/sh\necho 1000\n")
    fc_list = shutil.which("fc-list")
    if fc_list:  # a machine with many fonts: more of them than a pipe holds, after the real ones
        more = 'seq 100000 | sed "s|.*|/usr/share/fonts/more/Font&.ttf: Font &:style=Regular|"'
        _executable(folder / "fc-list", f'#!/bin/sh\n"{fc_list}" "$@"\n{more}\n')
    return folder


def script_env(system_bin: Path, **extra: str) -> dict[str, str]:
    """The environment of a fresh machine's shell with ``system_bin`` first on PATH; pip uses no
    index (every requirement is in the environment running the tests) and builds the project with
    that environment's setuptools, without build isolation."""
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHON", "VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME"}}
    env.update(
        PATH=f"{system_bin}{os.pathsep}{os.environ['PATH']}",
        PIP_NO_INDEX="1",
        PIP_NO_BUILD_ISOLATION="0",  # pip reads "0" for a --no-... flag as that flag given
        PIP_DISABLE_PIP_VERSION_CHECK="1",
    )
    env.update(extra)
    return env


def run_script(project: Path, script: str, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(project / "scripts" / script), *args], cwd=project.parent, env=env,
        capture_output=True, text=True, timeout=SCRIPT_TIMEOUT_S,
    )


def has_cjk_font() -> bool:
    fonts = subprocess.run(["fc-list"], capture_output=True, text=True).stdout.lower() if shutil.which("fc-list") else ""
    return "noto sans cjk" in fonts or "wqy" in fonts


def setup_ok(result: subprocess.CompletedProcess[str]) -> str:
    """The set-up's messages (stderr), after checking it succeeded."""
    assert result.returncode == 0, f"exit {result.returncode}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    return result.stderr


def made_and_installed(messages: str) -> tuple[bool, bool]:
    return "making the project's environment" in messages or "making it again" in messages, "installing the package" in messages


def serve_once(project: Path, env: dict[str, str], log_path: Path) -> list[bytes]:
    """``bash scripts/start.sh`` until its app answers its health check; the server's command line."""
    port = free_port()
    with open(log_path, "w") as log:
        server = subprocess.Popen(
            ["bash", str(project / "scripts" / "start.sh"), "--server.port", str(port), "--server.headless", "true"],
            cwd=project.parent, env=env, stdout=log, stderr=subprocess.STDOUT,
        )
    try:

        def healthy() -> bool:
            assert server.poll() is None, log_path.read_text()
            try:
                with urllib.request.urlopen(f"http://localhost:{port}/_stcore/health", timeout=5) as response:
                    return response.status == 200
            except OSError:
                return False

        wait_until(healthy, "the app of scripts/start.sh to answer", timeout_s=SCRIPT_TIMEOUT_S, pause_s=0.2)
        return Path(f"/proc/{server.pid}/cmdline").read_bytes().split(b"\0")
    finally:
        server.terminate()
        server.wait(timeout=30)


@builds_offline
def test_both_scripts_set_up_a_project_venv_when_the_system_python_refuses_installs(project: Path, system_bin: Path, tmp_path: Path) -> None:
    env = script_env(system_bin, GRAPHRAG_EXPLORER_DB=str(tmp_path / "runs.sqlite3"))
    venv = project / ".venv"

    # The first run makes .venv and installs the package (editable) into it, not into the system.
    first = setup_ok(run_script(project, "start.sh", "--setup-only", env=env))
    assert made_and_installed(first) == (True, True), first
    assert "installing the package into .venv" in first
    where = subprocess.run(
        [venv / "bin" / "python", "-c", "import graphrag_core, sys; print(graphrag_core.__file__); print(sys.prefix)"],
        cwd=project.parent, capture_output=True, text=True, check=True,
    ).stdout.split()
    assert Path(where[0]).is_relative_to(project / "graphrag_core"), where
    assert Path(where[1]) == venv, where
    cli = subprocess.run([venv / "bin" / "graphrag-explorer", "inspect", "jargon"], capture_output=True, text=True, timeout=120)
    assert cli.returncode == 0 and f"({project / 'graphrag_core' / 'sample_data' / 'jargon'})" in cli.stdout, cli.stdout + cli.stderr

    # Later runs reuse it: the app starts at once, from the venv's Python.
    created = (venv / "pyvenv.cfg").stat()
    again = setup_ok(run_script(project, "start.sh", "--setup-only", env=env))
    assert made_and_installed(again) == (False, False), again
    command = serve_once(project, env, tmp_path / "start.log")
    assert command[:4] == [b".venv/bin/python", b"-m", b"streamlit", b"run"], command
    assert (venv / "pyvenv.cfg").stat().st_mtime_ns == created.st_mtime_ns

    # scripts/test.sh adds the test extras to the same venv, once.
    tests = setup_ok(run_script(project, "test.sh", "--setup-only", env=env))
    assert made_and_installed(tests) == (False, True), tests
    assert "with its test extras" in tests
    if shutil.which("chromium"):
        assert "chromium is missing" not in tests, tests
    if has_cjk_font():
        assert "CJK font" not in tests, tests  # found in fc-list's output, however long
    assert made_and_installed(setup_ok(run_script(project, "start.sh", "--setup-only", env=env))) == (False, False)
    assert made_and_installed(setup_ok(run_script(project, "test.sh", "--setup-only", env=env))) == (False, False)

    # A changed pyproject.toml is installed again; a venv whose Python is gone is made again.
    with (project / "pyproject.toml").open("a") as pyproject:
        pyproject.write("\n# a change\n")
    changed = setup_ok(run_script(project, "start.sh", "--setup-only", env=env))
    assert made_and_installed(changed) == (False, True), changed
    (venv / "bin" / "python").unlink()
    remade = setup_ok(run_script(project, "start.sh", "--setup-only", env=env))
    assert ".venv does not work" in remade and made_and_installed(remade) == (True, True), remade
    assert subprocess.run([venv / "bin" / "graphrag-explorer", "--help"], capture_output=True, timeout=120).returncode == 0

    assert not (system_bin / "refused").exists(), "the set-up tried to install into the system Python"


def test_a_python_without_its_venv_module_gets_it_as_root_else_is_named(project: Path, system_bin: Path, tmp_path: Path) -> None:
    stub = tmp_path / "no-ensurepip"
    (stub / "ensurepip").mkdir(parents=True)
    (stub / "ensurepip" / "__init__.py").write_text("raise ModuleNotFoundError(\"No module named 'ensurepip'\")\n")
    python = system_bin / "python3"
    python.write_text(python.read_text().replace("exec ", f"PYTHONPATH='{stub}' exec ", 1))  # as Debian without python3.X-venv
    version = f"{sys.version_info.major}.{sys.version_info.minor}"

    for script in ("start.sh", "test.sh"):
        result = run_script(project, script, "--setup-only", env=script_env(system_bin))
        assert result.returncode == 1, result.stderr
        assert f"set-up failed: python3 (Python {version}) cannot make a virtual environment" in result.stderr
        assert f"sudo apt-get install python{version}-venv" in result.stderr
        assert not (project / ".venv").exists()

    # As root, the set-up asks apt-get for it (here an apt-get that knows no such package).
    _executable(system_bin / "id", "#!/bin/sh\necho 0\n")
    asked = tmp_path / "apt-get.log"
    _executable(system_bin / "apt-get", f'#!/bin/sh\necho "$*" >> "{asked}"\n[ "$1" = update ] || {{ echo "E: Unable to locate package" >&2; exit 100; }}\n')
    result = run_script(project, "start.sh", "--setup-only", env=script_env(system_bin))
    assert result.returncode == 1, result.stderr
    assert asked.read_text().splitlines() == ["update -qq", f"install -y -qq python{version}-venv"]
    assert f"set-up: installing python{version}-venv" in result.stderr
    assert f"set-up failed: apt-get could not install python{version}-venv" in result.stderr


def test_a_python_older_than_3_11_is_refused_saying_what_to_do(project: Path, system_bin: Path) -> None:
    old = "#!/bin/sh\ncase \"$*\" in *version_info*) echo 3.9 ;; *) exit 1 ;; esac\n"
    _executable(system_bin / "python3", old)
    for name in ("python3.11", "python3.12", "python3.13", "python3.14"):  # none of these here
        _executable(system_bin / name, "#!/bin/sh\nexit 127\n")

    result = run_script(project, "start.sh", "--setup-only", env=script_env(system_bin))
    assert result.returncode == 1
    assert "needs Python >= 3.11, and python3 is Python 3.9" in result.stderr
    assert "PYTHON=" in result.stderr

    named = run_script(project, "test.sh", "--setup-only", env=script_env(system_bin, PYTHON=str(system_bin / "python3")))
    assert named.returncode == 1
    assert f"PYTHON={system_bin / 'python3'} is Python 3.9; this project needs Python >= 3.11" in named.stderr
    assert not (project / ".venv").exists()
