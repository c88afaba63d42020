"""Pieces the app's pages share instead of each writing its own: the index problem line, the
one job runner under evaluations, the cost charts' prompt-token axis."""

from graphrag_app.panels.chart_parts import PROMPT_TOKENS_NAME, add_prompt_tokens_axis
from graphrag_app.loaders import OpenedIndex
from graphrag_app.jobs import EvalJob, JobHandle, start_evaluation
from graphrag_core.evaluation import Condition, ExperimentSpec
from graphrag_core.evaluation.questions import EvalQuestion
from tests.factories import small_index


def test_an_opened_index_says_why_a_page_cannot_use_it():
    assert OpenedIndex(None, None, "x is not a readable index: bad line").problem == "x is not a readable index: bad line"
    assert OpenedIndex(None, None, None).problem == "The index could not be opened."
    assert OpenedIndex(object(), small_index(), None).problem is None  # type: ignore[arg-type]


def test_an_evaluation_runs_on_the_one_job_runner_and_names_its_failure(tmp_path):
    spec = ExperimentSpec(
        questions=[EvalQuestion(id="1", question="What matters?")],
        conditions=[Condition.parse("a:level=0"), Condition.parse("b:level=1")],
    )

    def broken():
        raise RuntimeError("no model here")

    job = start_evaluation(small_index(), spec, broken, broken, eval_store_path=tmp_path / "e.sqlite3", run_store_path=None)
    assert isinstance(job, JobHandle) and isinstance(job, EvalJob)
    assert job.wait(60)
    assert job.error == "RuntimeError: no model here" and job.error_type == "RuntimeError"
    assert job.result is None and not job.stopped


def test_the_prompt_token_axis_is_drawn_one_way():
    import plotly.graph_objects as go

    fig = add_prompt_tokens_axis(go.Figure(), ["a", "b"], [10, 20], hovertemplate="%{y}", count_title="count")
    (trace,) = fig.data
    assert trace.name == PROMPT_TOKENS_NAME and trace.yaxis == "y2" and trace.mode == "markers"
    assert fig.layout.yaxis2.overlaying == "y" and fig.layout.yaxis.title.text == "count"
    assert fig.layout.barmode == "group"
