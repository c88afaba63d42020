"""The README and the behaviour documents in docs/: what a clone of the project shows a reader."""

from __future__ import annotations

import contextlib
import io
import re

from graphrag_core.request import GlobalSearchRequest

from . import APP_ROOT

README = (APP_ROOT / "README.md").read_text(encoding="utf-8")
BEHAVIOUR_DOCS = ("global-search.md", "dynamic-selection.md", "evaluation.md", "paper-experiment.md", "lazy-search.md")
LINK = re.compile(r"\]\(([^)\s]+)\)")


def test_the_readme_links_only_to_files_of_the_project():
    """A clone has no ../shared/: the README links to the project's own docs/, and every link resolves."""
    targets = [t for t in LINK.findall(README) if not t.startswith(("http://", "https://", "#"))]
    assert targets and not [t for t in targets if t.startswith("..") or "shared/" in t]
    missing = [t for t in targets if not (APP_ROOT / t.split("#")[0]).exists()]
    assert not missing, missing
    for name in BEHAVIOUR_DOCS:
        assert f"(docs/{name})" in README


def test_the_behaviour_documents_cover_every_request_setting_and_link_each_other():
    text = "\n".join((APP_ROOT / "docs" / name).read_text(encoding="utf-8") for name in BEHAVIOUR_DOCS)
    missing = [name for name in GlobalSearchRequest.model_fields if f"`{name}`" not in text]
    assert not missing, missing
    for name in BEHAVIOUR_DOCS:
        doc = (APP_ROOT / "docs" / name).read_text(encoding="utf-8")
        for target in LINK.findall(doc):
            if not target.startswith(("http", "#")):
                assert (APP_ROOT / "docs" / target.split("#")[0]).exists(), (name, target)


def test_the_readme_library_snippet_runs_and_prints_a_few_lines_not_every_prompt():
    """``on_event=print`` printed every event whole, prompts included (2.5 MB); the snippet's
    printer writes a short line per step."""
    snippet = README.split("## The library", 1)[1].split("```python", 1)[1].split("```", 1)[0]
    assert "on_event=print" not in snippet
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(snippet, "README.md", "exec"), {"__name__": "readme"})  # noqa: S102 - the README's own code
    printed = out.getvalue()
    assert "map batches planned" in printed and "finished: completed" in printed
    assert len(printed) < 20_000 and "[Community ID:" not in printed
