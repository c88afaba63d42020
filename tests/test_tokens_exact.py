"""Exact tokenizers: counts against published values, and no network when loading.

Known values: cl100k_base "hello world" -> [15339, 1917] and "tiktoken is great!" -> 6 tokens
(tiktoken's README and tests); o200k_base "hello world" -> [24912, 2375],
"привет мир" -> [9501, 131903, 37934], ".\\n" -> [558], "today\\n " -> [58744, 198, 220],
"today\\n \\n" -> [58744, 47812] (fixtures of public o200k_base ports of tiktoken).
"""

from __future__ import annotations

import socket

import pytest

from graphrag_core.tokens import (
    ExactTokenizer,
    HeuristicTokenizer,
    Tokenizer,
    get_tokenizer,
)

CL100K = [("hello world", 2), ("tiktoken is great!", 6), ("", 0)]
O200K = [("hello world", 2), ("привет мир", 3), (".\n", 1), ("today\n ", 3), ("today\n \n", 2), ("", 0)]


@pytest.mark.parametrize(("text", "expected"), CL100K)
def test_cl100k_counts(text: str, expected: int) -> None:
    assert get_tokenizer("cl100k_base").count(text) == expected


@pytest.mark.parametrize(("text", "expected"), O200K)
def test_o200k_counts(text: str, expected: int) -> None:
    assert get_tokenizer("o200k_base").count(text) == expected


def test_token_ids_match_published_values() -> None:
    assert ExactTokenizer("cl100k_base")._encoding.encode("hello world") == [15339, 1917]
    assert ExactTokenizer("o200k_base")._encoding.encode("hello world") == [24912, 2375]


def test_get_tokenizer_names_and_protocol() -> None:
    for name in ("heuristic", "cl100k_base", "o200k_base"):
        tokenizer = get_tokenizer(name)
        assert isinstance(tokenizer, Tokenizer) and tokenizer.name == name
    assert isinstance(get_tokenizer(), HeuristicTokenizer)
    assert get_tokenizer("o200k_base") is get_tokenizer("o200k_base")
    with pytest.raises(ValueError, match="Unknown tokenizer"):
        get_tokenizer("p50k_base")


def test_exact_counts_chinese_text() -> None:
    text = "长江流域每年夏季发生洪水。"
    for name in ("cl100k_base", "o200k_base"):
        count = get_tokenizer(name).count(text)
        assert 0 < count <= 3 * len(text)
    assert get_tokenizer("o200k_base").count(text) <= get_tokenizer("cl100k_base").count(text)


def test_text_spelling_a_special_token_is_counted_as_text() -> None:
    assert get_tokenizer("cl100k_base").count("hello <|endoftext|>") > 2


def test_loading_touches_no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("loading a tokenizer must not open a connection")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    # Drop every in-process cache so the encodings are really read again.
    from bpe_openai import registry

    for name in ("_load_mergeable_ranks", "cl100k_base", "o200k_base"):
        cached = getattr(registry, name, None)
        if cached is not None and hasattr(cached, "cache_clear"):
            cached.cache_clear()
    get_tokenizer.cache_clear()

    assert ExactTokenizer("cl100k_base").count("hello world") == 2
    assert get_tokenizer("o200k_base").count("hello world") == 2


def test_the_longest_token_of_each_encoding_is_known() -> None:
    from graphrag_core.tokens import LONGEST_TOKEN_BYTES

    for name, longest in LONGEST_TOKEN_BYTES.items():
        assert max(len(value) for value in ExactTokenizer(name)._encoding.token_byte_values()) == longest


def test_the_compiled_counter_agrees_with_the_package_encoder() -> None:
    for name in ("cl100k_base", "o200k_base"):
        exact = ExactTokenizer(name)
        for text in ("hello world", "привет мир", "中文 test 12345", "hello <|endoftext|>", "a\ud800b", "x" * 600):
            assert exact.count(text) == len(exact._encoding.encode(text, disallowed_special=()))
