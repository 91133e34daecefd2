"""golden.schedule.interleave: the order threads issue in under each kind of schedule, a blocked instruction
retried first on its thread's next turn, and a hang when no thread can move."""
from __future__ import annotations

import pytest

from golden.errors import Blocked, Hang
from golden.schedule import ROUND_ROBIN, SEQUENTIAL, Schedule, interleave


def _issued(lengths: dict[int, int], schedule: Schedule, blocks=lambda t, i, issued: False) -> list[tuple[int, int]]:
    """(thread, index) in issue order for threads of ``lengths`` items; ``blocks(t, i, issued)`` holds an item."""
    issued: list[tuple[int, int]] = []

    def step(t, d, index):
        assert d == f"d{t}.{index}"
        if blocks(t, index, issued):
            raise Blocked("held")
        issued.append((t, index))

    streams = {t: iter([(i, f"d{t}.{i}") for i in range(n)]) for t, n in lengths.items()}
    interleave(streams, schedule, step)
    return issued


def test_sequential_runs_each_thread_to_its_end_in_order():
    assert _issued({1: 2, 0: 3}, SEQUENTIAL) == [(0, 0), (0, 1), (0, 2), (1, 0), (1, 1)]


def test_round_robin_issues_one_instruction_a_turn():
    assert _issued({0: 3, 1: 2, 2: 1}, ROUND_ROBIN) == [(0, 0), (1, 0), (2, 0), (0, 1), (1, 1), (0, 2)]
    assert _issued({0: 3, 1: 1}, Schedule("two a turn", (1, 0), 2)) == [(1, 0), (0, 0), (0, 1), (0, 2)]


@pytest.mark.parametrize("schedule", [SEQUENTIAL, ROUND_ROBIN])
def test_a_blocked_instruction_is_retried_first_on_its_threads_next_turn(schedule):
    held = lambda t, i, issued: (t, i) == (0, 1) and (1, 1) not in issued      # noqa: E731
    got = _issued({0: 3, 1: 2}, schedule, held)
    want = {SEQUENTIAL: [(0, 0), (1, 0), (1, 1), (0, 1), (0, 2)],
            ROUND_ROBIN: [(0, 0), (1, 0), (1, 1), (0, 1), (0, 2)]}[schedule]
    assert got == want


# A seeded random schedule's interleaving is fixed by its seed (a race found under it can be run again); thread 1's
# item 2 is held until thread 2's item 3 has issued.
SEEDED = {
    0: [(0, 0), (2, 0), (2, 1), (2, 2), (2, 3), (1, 0), (1, 1), (1, 2), (1, 3), (1, 4), (0, 1), (0, 2), (0, 3), (0, 4),
        (0, 5)],
    1: [(1, 0), (1, 1), (2, 0), (2, 1), (0, 0), (0, 1), (0, 2), (0, 3), (0, 4), (0, 5), (2, 2), (2, 3), (1, 2), (1, 3),
        (1, 4)],
}


@pytest.mark.parametrize("seed", SEEDED)
def test_a_random_schedule_is_the_same_interleaving_for_its_seed(seed):
    held = lambda t, i, issued: (t, i) == (1, 2) and (2, 3) not in issued      # noqa: E731
    assert _issued({0: 6, 1: 5, 2: 4}, Schedule("random", (0, 1, 2), 0, seed), held) == SEEDED[seed]


def test_no_thread_able_to_move_is_a_hang_naming_each_wait():
    with pytest.raises(Hang, match=r"thread 0 instruction 1 \(d0\.1\) waits: held"):
        interleave({0: iter([(0, _D("d0.0")), (1, _D("d0.1"))])}, SEQUENTIAL, _hold_index_1)


class _D(str):
    @property
    def text(self) -> str:
        return str(self)


def _hold_index_1(t, d, index):
    if index == 1:
        raise Blocked("held")
