"""The relevance budget of a lazy run: no relevance-test call is sent past it.

:class:`TestTickets` counts the run's relevance tests: each call that reaches the model, and
each answer from the map cache, takes one ticket; ``used + held <= total`` at every moment.
:class:`TestSpending` is what one test's calls hold through the engine's one retry loop
(:func:`~graphrag_core.map.complete_with_retry`, whose ``spending`` it stands in): each attempt
takes a ticket before it is sent (its first attempt's ticket taken when the test is planned, in
the walk's order) and then holds the run's token spending limit as any call does; an attempt
with no ticket left raises :class:`~graphrag_core.errors.RelevanceBudgetSpent` instead of being
sent, so a retry is never made past the budget.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import RelevanceBudgetSpent
from ..spending import Reservation, SpendingLimit


class TestTickets:
    """A lazy run's relevance budget (see the module docstring)."""

    __test__ = False  # not a pytest class

    def __init__(self, total: int) -> None:
        self.total = total
        self.used = 0
        self.held = 0

    def __repr__(self) -> str:
        return f"TestTickets(total={self.total}, used={self.used}, held={self.held})"

    @property
    def remaining(self) -> int:
        return self.total - self.used - self.held

    def take(self) -> bool:
        """Hold one ticket for a test about to be made; False when none is left."""
        if self.remaining <= 0:
            return False
        self.held += 1
        return True

    def use(self) -> None:
        """A held ticket was used: a call reached the model, or the cache answered."""
        self.held -= 1
        self.used += 1

    def release(self) -> None:
        """A held ticket was not used (the test was not made)."""
        self.held -= 1


@dataclass
class _Held:
    inner: Reservation | None


class TestSpending:
    """One relevance test's hold on the budget and on the run's spending limit (duck-typed as
    the :class:`~graphrag_core.spending.SpendingLimit` the retry loop takes)."""

    __test__ = False

    def __init__(self, tickets: TestTickets, inner: SpendingLimit | None, *, prepaid: bool) -> None:
        self.tickets, self.inner, self.prepaid = tickets, inner, prepaid

    async def reserve(self, tokens: int, *, keep: int = 0, final: bool = False) -> _Held:
        if self.prepaid:
            self.prepaid = False
        elif not self.tickets.take():
            raise RelevanceBudgetSpent(f"The relevance budget of {self.tickets.total:,} tests is spent.")
        try:
            inner = await self.inner.reserve(tokens, keep=keep, final=final) if self.inner is not None else None
        except BaseException:
            self.tickets.release()
            raise
        return _Held(inner)

    def settle(self, held: _Held, spent: int) -> None:
        self.tickets.use()
        if held.inner is not None and self.inner is not None:
            self.inner.settle(held.inner, spent)

    def close(self) -> None:
        """Give back the first attempt's ticket when it was never used."""
        if self.prepaid:
            self.prepaid = False
            self.tickets.release()


__all__ = ["TestSpending", "TestTickets"]
