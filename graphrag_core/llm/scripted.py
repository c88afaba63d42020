"""A scripted chat model for tests and demos: its reply is a function of the request.

    model = ScriptedChatModel(lambda request: '{"answer": "x", "usefulness": 50}')

A script function may return reply text, a JSON-able dict or list, a :class:`ChatResponse`,
or an exception (which is raised), and may be async. A script that is itself a list or tuple
of replies is replayed in call order; a plain string is always the reply.
The model records its calls and the most calls it ever had in flight.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Callable, Sequence
from typing import Any

from .base import ChatRequest, ChatResponse

Reply = str | ChatResponse | BaseException
Script = Callable[[ChatRequest], Any] | Sequence[Reply] | str


class ScriptedChatModel:
    """A fake :class:`~graphrag_core.llm.base.ChatModel` whose replies are scripted."""

    def __init__(self, script: Script, *, latency: float | Callable[[ChatRequest], float] = 0.0, identity: str = "scripted") -> None:
        self._script = script
        self._latency = latency
        self._replayed = 0
        self.identity = identity
        self.requests: list[ChatRequest] = []
        self.in_flight = 0
        self.max_in_flight = 0

    @property
    def calls(self) -> int:
        return len(self.requests)

    def calls_for(self, purpose: str) -> list[ChatRequest]:
        return [r for r in self.requests if r.purpose == purpose]

    async def _reply(self, request: ChatRequest) -> Any:
        script = self._script
        if isinstance(script, str):
            return script
        if callable(script):
            reply = script(request)
            return await reply if inspect.isawaitable(reply) else reply
        if self._replayed >= len(script):
            raise AssertionError(f"ScriptedChatModel ran out of replies after {len(script)} calls.")
        reply = script[self._replayed]
        self._replayed += 1
        return reply

    async def complete(self, request: ChatRequest) -> ChatResponse:
        self.requests.append(request)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            delay = self._latency(request) if callable(self._latency) else self._latency
            if delay:
                await asyncio.sleep(delay)
            else:
                await asyncio.sleep(0)  # a real call always yields to the loop
            reply = await self._reply(request)
        finally:
            self.in_flight -= 1
        if isinstance(reply, BaseException):
            raise reply
        if isinstance(reply, type) and issubclass(reply, BaseException):
            raise reply()
        if isinstance(reply, ChatResponse):
            return reply
        if isinstance(reply, dict | list):
            return ChatResponse(text=json.dumps(reply))
        return ChatResponse(text=str(reply))
