"""How a local endpoint's calls overlap (issue 40): the single-slot verdict is read from the calls
as a one-request-at-a-time server spaces them, whatever the client itself adds to each call."""

from __future__ import annotations

from graphrag_core.llm.endpoints import SlotWatch

# (sent, ended) of the 16 map calls of tests/test_local_models.py's single-slot run, recorded on a
# loaded machine (four CPU burners on the test's core): the server answered every 0.2 s, but every
# call took the client about 0.45 s more than the server's turn (the first one 0.65 s in all)
LOADED_RUN = [
    (0.334, 0.981), (0.335, 1.212), (0.335, 1.425), (0.436, 1.629), (1.008, 1.861), (1.213, 2.045), (1.426, 2.267), (1.63, 2.497),
    (1.862, 2.686), (2.077, 2.965), (2.29, 3.161), (2.498, 3.377), (2.733, 3.609), (2.966, 3.833), (3.162, 4.045), (3.378, 4.245),
]

# the same run with the whole machine overloaded (load average 40): some replies were read a
# tenth of a second apart, the rest a server's turn apart
OVERLOADED_RUN = [
    (2.871, 3.345), (2.871, 3.444), (2.873, 3.649), (2.872, 3.779), (3.371, 4.076), (3.468, 4.543), (3.65, 4.645), (3.825, 4.896),
    (4.096, 5.139), (4.561, 5.362), (4.783, 5.586), (4.96, 5.858), (5.14, 6.09), (5.364, 6.314), (5.587, 6.518), (5.859, 6.729),
]


class Script:
    """A clock that reads each call's end from the script, in the order the calls end."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def replay(calls: list[tuple[float, float]]) -> tuple[SlotWatch, int | None]:
    """The watch after ``calls`` (started in order of sending, ended in order of ending); the
    position (1-based, in order of ending) of the reply that found one slot, if one did."""
    clock = Script()
    watch = SlotWatch(clock)
    events = sorted([(sent, 0, i) for i, (sent, _) in enumerate(calls)] + [(end, 1, i) for i, (_, end) in enumerate(calls)])
    found, ended = None, 0
    for at, kind, i in events:
        clock.now = at
        if kind == 0:
            watch.started()
            continue
        ended += 1
        if watch.ended(calls[i][0], answered=True):
            found = ended
    return watch, found


def test_a_single_slot_is_found_at_the_sixth_reply_when_every_call_carries_the_clients_own_delay():
    watch, found = replay(LOADED_RUN)
    assert watch.single_slot and found == 6


def test_a_single_slot_is_found_by_the_seventh_reply_when_some_replies_are_read_close_together():
    watch, found = replay(OVERLOADED_RUN)
    assert watch.single_slot and found is not None and found <= 7


def test_a_single_slot_is_found_at_the_sixth_reply_on_a_quiet_machine():
    quiet = [(0.0, 0.2), (0.0, 0.4), (0.0, 0.6), (0.0, 0.8), (0.2, 1.0), (0.4, 1.2), (0.6, 1.4), (0.8, 1.6)]
    assert replay(quiet)[1] == 6


def test_one_pair_of_replies_read_together_after_a_stall_does_not_settle_several_slots():
    stalled = list(LOADED_RUN)
    stalled[1] = (0.335, 0.982)  # read in the same loop turn as the first (the client stalled)
    watch, found = replay(stalled)
    assert watch.single_slot and found is not None and found <= 8


def test_replies_that_end_together_settle_several_slots_and_never_single():
    parallel = [(0.0, 0.2), (0.0, 0.201), (0.0, 0.202), (0.0, 0.203)]
    for k in range(1, 6):  # each call sent as one ends, all four served at once
        parallel += [(0.2 * k + 0.001 * i, 0.2 * (k + 1) + 0.001 * i) for i in range(4)]
    watch, found = replay(parallel)
    assert found is None and not watch.single_slot


def test_two_slots_behind_four_calls_are_not_called_single_slot():
    pairs = []
    for k in range(8):  # two at a time: a pair of replies every 0.2 s
        pairs += [(0.2 * max(0, k - 1), 0.2 * (k + 1)), (0.2 * max(0, k - 1) + 0.001, 0.2 * (k + 1) + 0.002)]
    watch, found = replay(pairs)
    assert found is None and not watch.single_slot
