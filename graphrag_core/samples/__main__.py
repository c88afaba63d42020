"""Rebuild a bundled sample index.

    python -m graphrag_core.samples jargon --source /usr/share/doc/jargon-text/jargon.txt.gz --out sample_data/jargon
    python -m graphrag_core.samples zh --out sample_data/zh-tea
    python -m graphrag_core.samples zh-tang --out sample_data/zh-tang
    python -m graphrag_core.samples zh-tang-source --authors authors.tang.json --anthology 唐诗三百首.json --commit SHA

The builds are deterministic: the same source and options give the same bytes. ``zh-tang-source``
writes the Tang sample's source text from two files of a chinese-poetry checkout (see
:mod:`graphrag_core.samples.tang`); ``zh-tang`` builds the index from that text. With
``--summaries model`` the configured chat model (``GRAPHRAG_LLM_*`` environment variables, see
:mod:`graphrag_core.llm.settings`) writes the community titles and summaries instead.
"""

from __future__ import annotations

import argparse
import os
import asyncio
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from ..llm.base import ChatModel
from .bundled import sample_path
from .builder import build_index
from .corpus import DEFAULT_SEED, BuildOptions, SampleBuildError
from .jargon import DEFAULT_SOURCE, jargon_articles, jargon_options, read_source
from .tang import SOURCE_FILE as TANG_SOURCE_FILE, tang_options, tang_source_text
from .zh import SOURCE_FILE, parse_zh_source, zh_options


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m graphrag_core.samples", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="sample", required=True)
    jargon = commands.add_parser("jargon", help="the Jargon File sample (English)")
    jargon.add_argument("--source", type=Path, default=DEFAULT_SOURCE, help="jargon.txt or jargon.txt.gz")
    jargon.add_argument("--out", type=Path, default=sample_path("jargon"), help="index folder to write")
    zh = commands.add_parser("zh", help="the Chinese tea sample")
    zh.add_argument("--source", type=Path, default=SOURCE_FILE, help="the sample's source text")
    zh.add_argument("--out", type=Path, default=sample_path("zh-tea"), help="index folder to write")
    tang = commands.add_parser("zh-tang", help="the Tang poets sample (Chinese, traditional characters)")
    tang.add_argument("--source", type=Path, default=TANG_SOURCE_FILE, help="the sample's source text")
    tang.add_argument("--out", type=Path, default=sample_path("zh-tang"), help="index folder to write")
    tang_source = commands.add_parser("zh-tang-source", help="the Tang poets sample's source text, from chinese-poetry's files")
    tang_source.add_argument("--authors", type=Path, required=True, help="全唐诗/authors.tang.json of a chinese-poetry checkout")
    tang_source.add_argument("--anthology", type=Path, required=True, help="全唐诗/唐诗三百首.json of the same checkout")
    tang_source.add_argument("--commit", required=True, help="the checkout's commit, recorded in the text's header")
    tang_source.add_argument("--out", type=Path, default=TANG_SOURCE_FILE, help="source text file to write")
    for command in (jargon, zh, tang):
        command.add_argument("--summaries", choices=("extractive", "model"), default="extractive")
        command.add_argument("--seed", type=int, default=DEFAULT_SEED, help="Louvain seed")
    return parser


def _configured_model() -> ChatModel:
    from ..llm.settings import ModelSettings
    from ..llm.factory import build_chat_model

    return build_chat_model(ModelSettings.from_mapping(os.environ))


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    from ..files import write_file
    from ..index import save_index

    if args.sample == "zh-tang-source":
        text = tang_source_text(args.authors.read_text(encoding="utf-8"), args.anthology.read_text(encoding="utf-8"), commit=args.commit)
        write_file(args.out, text)
        print(f"Wrote {args.out}: {text.count(chr(10) + ':')} poets.")
        return 0
    if args.sample == "jargon":
        articles = jargon_articles(read_source(args.source))
        options: BuildOptions = jargon_options()
    else:
        articles = parse_zh_source(args.source.read_text(encoding="utf-8"))
        options = tang_options() if args.sample == "zh-tang" else zh_options()
    options = replace(options, seed=args.seed, summaries=args.summaries)
    model = _configured_model() if args.summaries == "model" else None
    try:
        index, report = asyncio.run(build_index(articles, options, model=model))
    except SampleBuildError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    save_index(index, args.out)
    levels = ", ".join(f"level {level}: {count}" for level, count in report.levels.items())
    print(f"Wrote {args.out}: {report.articles} articles; communities {levels}; {report.leaves} leaves.")
    print(f"{index.stats()}; unresolved links {report.unresolved_links}; similarity links {report.similarity_links}.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
