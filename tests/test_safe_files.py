"""Issue 39, item 3: a file a user names is written whole or not at all.

Every file the program writes where a user said (``runs export --bundle/--markdown``, ``eval
--out`` with its CSVs and pictures, ``eval-questions --out``, ``sweep --out``, ``eval-votes
--export``, ``import``, the sample builder through ``save_index``) goes through one helper,
:mod:`graphrag_core.files`: a temporary file beside it, fsync, rename. On a failure the old file
stays as it was and nothing half-written is left beside it.

A full disk is tried two ways: ``os.fsync`` answering ENOSPC (as a filesystem that allocates late
reports it), and, where this machine lets a test mount one, a real tmpfs of 256 KB filled to
its last byte.
"""

from __future__ import annotations

import errno
import io
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from graphrag_cli.context import EXIT_OK
from graphrag_cli.main import main
from graphrag_core.files import write_file, write_files
from graphrag_core.history import RunStore
from graphrag_core.index import load_index, save_index
from graphrag_core.llm.scripted import ScriptedChatModel

from . import factories
from .cli_support import QUESTION, run_cli
from .disk_support import fill, full_disk  # noqa: F401 - the fixture
from .test_eval_cli import setup  # noqa: F401 - the fixture

OLD = "the old file, which must survive\n"


def _no_space(*_args: object) -> None:
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def _leftovers(folder: Path) -> list[str]:
    """Files in ``folder`` that are neither what was there before nor what was asked for."""
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(".") or p.name.endswith(".tmp"))


# -- the helper ------------------------------------------------------------------------------------


def test_a_write_that_fails_midway_leaves_the_old_file_and_nothing_else(tmp_path: Path) -> None:
    target = tmp_path / "report.md"
    target.write_text(OLD, encoding="utf-8")

    def content() -> Iterator[str]:
        yield "a new first half\n" * 1000
        raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.raises(OSError) as raised:
        write_file(target, content())
    assert raised.value.errno == errno.ENOSPC
    assert target.read_text(encoding="utf-8") == OLD
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.md"]


def test_a_write_whose_fsync_fails_leaves_the_old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "run.bundle.json"
    target.write_text(OLD, encoding="utf-8")
    monkeypatch.setattr(os, "fsync", _no_space)
    with pytest.raises(OSError):
        write_file(target, "{}\n")
    assert target.read_text(encoding="utf-8") == OLD
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run.bundle.json"]


def test_a_written_file_is_whole_keeps_the_old_files_mode_and_writes_through_a_link(tmp_path: Path) -> None:
    real = tmp_path / "real.csv"
    real.write_text(OLD, encoding="utf-8")
    real.chmod(0o640)
    link = tmp_path / "link.csv"
    link.symlink_to(real)
    write_file(link, ["a,b\n", "1,2\n"])
    assert link.is_symlink() and real.read_text(encoding="utf-8") == "a,b\n1,2\n"
    assert real.stat().st_mode & 0o777 == 0o640
    write_file(tmp_path / "bytes.bin", b"\x00\x01")
    assert (tmp_path / "bytes.bin").read_bytes() == b"\x00\x01"
    assert _leftovers(tmp_path) == []


def test_a_group_of_files_is_written_all_or_none(tmp_path: Path) -> None:
    first, second = tmp_path / "report.md", tmp_path / "report.costs.csv"
    first.write_text(OLD, encoding="utf-8")
    second.write_text(OLD, encoding="utf-8")

    def failing() -> Iterator[str]:
        yield "half"
        raise OSError(errno.ENOSPC, "No space left on device")

    with pytest.raises(OSError):
        write_files({first: "new report\n", second: failing()})
    assert first.read_text(encoding="utf-8") == OLD and second.read_text(encoding="utf-8") == OLD
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.costs.csv", "report.md"]
    write_files({first: "new report\n", second: "new,costs\n"})
    assert first.read_text(encoding="utf-8") == "new report\n" and second.read_text(encoding="utf-8") == "new,costs\n"


def test_on_a_real_full_disk_the_old_file_stays_and_no_partial_file_is_left(full_disk: Path) -> None:
    target = full_disk / "report.md"
    target.write_text(OLD, encoding="utf-8")
    fill(full_disk)
    with pytest.raises(OSError) as raised:
        write_file(target, "a long new report\n" * 2000)
    assert raised.value.errno == errno.ENOSPC
    assert target.read_text(encoding="utf-8") == OLD
    assert sorted(p.name for p in full_disk.iterdir()) == ["filler", "report.md"]
    (full_disk / "filler").unlink()
    write_file(target, "a long new report\n" * 2000)
    assert target.read_text(encoding="utf-8") == "a long new report\n" * 2000


# -- every command that writes a file a user named ------------------------------------------------


def _recorded_run(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> tuple[Path, str]:
    index = tmp_path / "long-index"
    save_index(factories.make_index(repeat=60), index)
    store = tmp_path / "runs.sqlite3"

    def reply(request):  # type: ignore[no-untyped-def]
        if request.purpose == "map":
            return '{"answer": "The mill matters [Communities: a].", "usefulness": 60}'
        return json.dumps({"answer": "The mill [Communities: a]."})

    code, _, err = run_cli(capsys, "query", index, QUESTION, "--store", store, "--no-cache", "--map-budget", "1000", "--map-reserve", "100",
                           model=ScriptedChatModel(reply))
    assert code == EXIT_OK, err
    (run,) = RunStore(store).list_runs()
    return store, run.run_id


@pytest.mark.parametrize("flag", ["--bundle", "--markdown"])
def test_runs_export_onto_an_existing_file_keeps_it_when_the_disk_is_full(capsys, tmp_path, monkeypatch, flag) -> None:  # type: ignore[no-untyped-def]
    store, run_id = _recorded_run(capsys, tmp_path)
    target = tmp_path / "out" / "export"
    target.parent.mkdir()
    target.write_text(OLD, encoding="utf-8")
    monkeypatch.setattr(os, "fsync", _no_space)
    code, out, err = run_cli(capsys, "runs", "--store", store, "export", run_id, flag, target)
    assert code != EXIT_OK and "No space left on device" in err and str(target) in err and "kept as it was" in err
    assert target.read_text(encoding="utf-8") == OLD
    assert sorted(p.name for p in target.parent.iterdir()) == ["export"]


@pytest.mark.parametrize("flag", ["--bundle", "--markdown"])
def test_runs_export_on_a_real_full_disk_keeps_the_old_file(capsys, tmp_path, full_disk, flag) -> None:  # type: ignore[no-untyped-def]
    store, run_id = _recorded_run(capsys, tmp_path)
    target = full_disk / "export"
    target.write_text(OLD, encoding="utf-8")
    fill(full_disk)
    code, _, err = run_cli(capsys, "runs", "--store", store, "export", run_id, flag, target)
    assert code != EXIT_OK and "No space left on device" in err
    assert target.read_text(encoding="utf-8") == OLD
    assert sorted(p.name for p in full_disk.iterdir()) == ["export", "filler"]
    (full_disk / "filler").unlink()
    code, _, err = run_cli(capsys, "runs", "--store", store, "export", run_id, flag, target)
    assert code == EXIT_OK, err
    assert target.read_text(encoding="utf-8") != OLD
    if flag == "--bundle":
        assert target.stat().st_size > 4096, "bigger than the page the old way's truncation freed, so that way left half a bundle"


def _cli(args: list[str], env: dict[str, str]) -> tuple[int, str]:
    err = io.StringIO()
    return main(args, stdout=io.StringIO(), stderr=err, environ=env), err.getvalue()


def test_eval_out_keeps_the_old_report_its_tables_and_pictures_when_the_disk_is_full(setup, monkeypatch) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    out = setup["tmp"] / "out"
    report = out / "report.md"
    args = ["eval", setup["questions"], "--index", setup["index"], "--condition", "C0:level=0", "--condition", "leaf:level=leaf", "--out", str(report)]
    code, err = _cli(args, setup["env"])
    assert code == EXIT_OK, err
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert {"report.md", "report.win-rates.csv", "report.costs.csv"} <= set(before) and any(n.endswith(".svg") for n in before)
    for name in before:
        (out / name).write_text(OLD, encoding="utf-8")
    monkeypatch.setattr(os, "fsync", _no_space)
    code, err = _cli(args, setup["env"])
    assert code != EXIT_OK and "No space left on device" in err
    assert {p.name: p.read_text(encoding="utf-8") for p in out.iterdir()} == {name: OLD for name in before}, "all of them kept, nothing left"


def test_eval_questions_and_sweep_out_keep_the_old_file_when_the_disk_is_full(setup, monkeypatch) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    questions, points = setup["tmp"] / "qs" / "questions.jsonl", setup["tmp"] / "qs" / "points.csv"
    questions.parent.mkdir()
    questions.write_text(OLD, encoding="utf-8")
    points.write_text(OLD, encoding="utf-8")
    monkeypatch.setattr(os, "fsync", _no_space)
    code, err = _cli(["eval-questions", "jargon", "--personas", "1", "--tasks", "1", "--per-task", "1", "--model", "offline", "--out", str(questions)], setup["env"])
    assert code != EXIT_OK and "No space left on device" in err
    code, err = _cli(["sweep", setup["index"], "What?", "--levels", "0", "--no-store", "--no-cache", "--out", str(points)], setup["env"])
    assert code != EXIT_OK and "No space left on device" in err
    assert questions.read_text(encoding="utf-8") == OLD and points.read_text(encoding="utf-8") == OLD
    assert sorted(p.name for p in questions.parent.iterdir()) == ["points.csv", "questions.jsonl"]


def test_eval_votes_export_keeps_the_old_file_when_the_disk_is_full(setup, monkeypatch) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    import re

    db, report = setup["tmp"] / "evals.sqlite3", setup["tmp"] / "out" / "report.md"
    code, err = _cli(["eval", setup["questions"], "--index", setup["index"], "--condition", "C0:level=0", "--condition", "leaf:level=leaf",
                      "--eval-db", str(db), "--out", str(report)], setup["env"])
    assert code == EXIT_OK, err
    experiment = re.search(r"experiment ([0-9a-f]{16}):", err).group(1)
    export = setup["tmp"] / "votes.csv"
    export.write_text(OLD, encoding="utf-8")
    monkeypatch.setattr(os, "fsync", _no_space)
    code, err = _cli(["eval-votes", experiment, "--eval-db", str(db), "--export", str(export)], setup["env"])
    assert code != EXIT_OK and "No space left on device" in err
    assert export.read_text(encoding="utf-8") == OLD


def test_import_force_onto_an_index_keeps_the_old_index_whole_when_the_disk_is_full(capsys, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    dest = tmp_path / "dest"
    save_index(factories.small_index(), dest)
    before = {p.name: p.read_bytes() for p in dest.iterdir()}
    monkeypatch.setattr(os, "fsync", _no_space)
    code, _, err = run_cli(capsys, "import", "jargon", dest, "--force")
    assert code != EXIT_OK and "No space left on device" in err
    assert {p.name: p.read_bytes() for p in dest.iterdir()} == before, "every file of the old index kept, none half-replaced, nothing left"
    monkeypatch.undo()
    assert load_index(dest).name == factories.small_index().name


def test_import_on_a_real_full_disk_keeps_the_old_index(capsys, full_disk) -> None:  # type: ignore[no-untyped-def]
    dest = full_disk / "dest"
    save_index(factories.make_index(), dest)
    before = {p.name: p.read_bytes() for p in dest.iterdir()}
    fill(full_disk)
    code, _, err = run_cli(capsys, "import", "jargon", dest, "--force")
    assert code != EXIT_OK and "No space left on device" in err
    assert {p.name: p.read_bytes() for p in dest.iterdir()} == before


def test_no_module_writes_a_file_but_through_the_one_helper() -> None:
    """``write_text``, ``write_bytes`` and ``open(..., "w")`` appear only in graphrag_core/files.py
    (the schema writer of the repository included); the rest of the program calls it."""
    import re

    root = Path(__file__).resolve().parents[1]
    writes = re.compile(r"\.write_text\(|\.write_bytes\(|open\([^)]*[\"'][wax]b?\+?[\"']|os\.O_CREAT")
    found = [
        f"{path.relative_to(root)}:{number}"
        for folder in ("graphrag_core", "graphrag_cli", "graphrag_app", "pages")
        for path in sorted((root / folder).rglob("*.py"))
        if path.relative_to(root).as_posix() != "graphrag_core/files.py"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if writes.search(line)
    ]
    assert found == []
