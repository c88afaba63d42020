"""A small local model as a user meets it (issue 40): the README's steps for local models
(``GRAPHRAG_LLM_BASE_URL`` and ``GRAPHRAG_LLM_MODEL``, then ``graphrag-explorer query``), run
against a llama.cpp-like server that behaves as SmolLM2-135M-Instruct with one slot and an 8k
context does. Prints, per scenario, the runs that answered, every map attempt's fate (parsed, cut,
rejected, timed out), the replies that reported one token more than their reserve, and what the
user was told (each line of the command's stderr that names a failure, counted).

By default the server is the fake in ``tests/openai_server.py`` (``smollm2_like_handler``: it
refuses ``json_schema`` at once, serves one request at a time, says ``total_slots: 1`` and
``n_ctx: 8192`` at ``/props``, counts at ``/tokenize`` with a byte-level tokenizer, writes raw
newlines inside JSON strings, runs past ``max_tokens``, answers prose, reports 513 completion
tokens against a 512 reserve, and scores some batches 0), in scenarios that each bring one kind of
failure to the front. Against a real server (``--base-url http://127.0.0.1:8080/v1 --model
smollm2``) it runs the questions as they are (the scenarios' behaviours are the server's own then)::

    python benchmarks/bench_local_model.py                       # the fake, every scenario
    python benchmarks/bench_local_model.py --base-url URL --model NAME [--timeout 60]

Nothing is downloaded; the run history and the endpoint memory go to a temporary folder.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import tempfile
import time
from collections import Counter
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests' fake servers, as the other benchmarks do

from graphrag_cli.main import main  # noqa: E402
from graphrag_core.calls import batch_calls  # noqa: E402
from graphrag_core.history import RunStore  # noqa: E402
from tests.openai_server import SmolBehaviour, openai_server, smollm2_like_handler  # noqa: E402

QUESTIONS = ("What are the main themes?", "Who are the people in these stories?", "What tools and machines appear?")
TOLD = ("error:", "stopped:", "why there is no", "warning:", "note:", "batch ")
"""The stderr lines that tell the user something went wrong or was changed (progress lines aside)."""


@dataclass(frozen=True)
class Scenario:
    name: str
    behaviour: SmolBehaviour
    args: tuple[str, ...] = ()
    environ: dict[str, str] = field(default_factory=dict)
    questions: tuple[str, ...] = QUESTIONS
    seeds: tuple[int, ...] = (1, 2)
    index: str = "jargon"


SCENARIOS = (
    Scenario("mixed replies (jargon, level 2)", SmolBehaviour(), ("--level", "2")),
    Scenario("mixed replies (zh-tea, Chinese)", SmolBehaviour(), ("--level", "0"), index="zh-tea", questions=("这些故事讲的是什么？", "茶是怎么做的？")),
    Scenario("every reply prose", SmolBehaviour(cut=0, garbage=1.0, over_reserve=0, zero=0, retry_ok=0), ("--level", "2"), seeds=(1,)),
    Scenario("nothing useful", SmolBehaviour(cut=0, garbage=0, over_reserve=0, zero=1.0), ("--level", "2"), seeds=(1,)),
    Scenario("slow replies (a 0.5 s timeout)", SmolBehaviour(slow=0.3, slow_s=2.5), ("--level", "2"), {"GRAPHRAG_LLM_TIMEOUT": "0.5"}, seeds=(1,)),
    Scenario("a spending limit with no room", SmolBehaviour(), ("--level", "2", "--spend-limit-tokens", "8500"), seeds=(1,)),
)


@dataclass
class Tally:
    runs: int = 0
    statuses: Counter = field(default_factory=Counter)
    exits: Counter = field(default_factory=Counter)
    attempts: Counter = field(default_factory=Counter)
    over_reserve: int = 0
    told: Counter = field(default_factory=Counter)
    seconds: float = 0.0


def _told(line: str) -> str:
    """A line of stderr as counted: its endpoint's port and its figures' digits left out, cut short."""
    import re

    line = re.sub(r"127\.0\.0\.1:\d+", "127.0.0.1:PORT", line)
    line = re.sub(r"batch \d+", "batch N", line)
    return line if len(line) <= 200 else line[:199] + "…"


def run_query(environ: dict[str, str], scenario: Scenario, question: str, seed: int, store: Path, tally: Tally) -> None:
    out, err = io.StringIO(), io.StringIO()
    argv = ["query", scenario.index, question, "--seed", str(seed), "--store", str(store), *scenario.args, "--json"]
    started = time.monotonic()
    code = main(argv, stdout=out, stderr=err, environ=environ)
    tally.seconds += time.monotonic() - started
    tally.runs += 1
    tally.exits[code] += 1
    try:
        document = json.loads(out.getvalue())
    except ValueError:
        document = {}
    tally.statuses[document.get("status_word") or document.get("status") or f"exit {code}"] += 1
    for line in err.getvalue().splitlines():
        if line.lower().startswith(TOLD):
            tally.told[_told(line)] += 1
    for why in document.get("why_no_answer") or ():  # what the run's result says (Explore's "Why ..." panel)
        tally.told[_told(f"why_no_answer {why['reason']}: {why['message']}")] += 1
    run_id = document.get("run_id")
    record = RunStore(store).get(run_id) if run_id else None
    if record is None:
        return
    for call in batch_calls(record.events):
        for attempt in call.attempts:
            tally.attempts[attempt.kind] += 1
    for event in record.events:  # a reply that reported more completion tokens than its call allowed
        usage = getattr(event, "usage", None)
        if usage is not None and getattr(event, "kind", "") == "map_batch_succeeded" and usage.completion_tokens > 512:
            tally.over_reserve += 1


def report(name: str, tally: Tally) -> None:
    answered = tally.statuses["completed"] + tally.statuses["partial"]
    print(f"\n== {name}: {tally.runs} runs, {answered} answered, {tally.seconds:.1f} s")
    print("   status:   " + ", ".join(f"{k} {v}" for k, v in sorted(tally.statuses.items())))
    print("   exit:     " + ", ".join(f"{k}: {v}" for k, v in sorted(tally.exits.items())))
    total = sum(tally.attempts.values())
    fates = ", ".join(f"{k} {v} ({v / total:.0%})" for k, v in tally.attempts.most_common()) if total else "none"
    print(f"   map attempts: {total} ({fates})")
    print(f"   replies reporting more completion tokens than the 512 reserve, used: {tally.over_reserve}")
    print("   what the user was told:")
    for line, count in tally.told.most_common(12):
        print(f"     {count:>3} x {line}")


def main_bench(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base-url", help="a real local server's OpenAI-compatible URL (default: the fake)")
    parser.add_argument("--model", default="smollm2", help="the model name at that server")
    parser.add_argument("--timeout", default="60", help="GRAPHRAG_LLM_TIMEOUT for the real server's runs")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        base = {"GRAPHRAG_EXPLORER_DB": str(Path(folder) / "runs.sqlite3"), "GRAPHRAG_LLM_MODEL": args.model}
        scenarios = SCENARIOS if args.base_url is None else (Scenario(f"{args.model} at {args.base_url}", SmolBehaviour(), ("--level", "2")),)
        for scenario in scenarios:
            tally = Tally()
            serving = nullcontext(None) if args.base_url else openai_server(smollm2_like_handler(scenario.behaviour), one_at_a_time=True)
            with serving as server:
                url = args.base_url or server.base_url
                environ = {**base, "GRAPHRAG_LLM_BASE_URL": url, "GRAPHRAG_LLM_TIMEOUT": args.timeout if args.base_url else "10", **scenario.environ}
                for question in scenario.questions:
                    for seed in scenario.seeds:
                        run_query(environ, scenario, question, seed, Path(folder) / "runs.sqlite3", tally)
            report(scenario.name, tally)
    return 0


if __name__ == "__main__":
    raise SystemExit(main_bench())
