"""The race check finds every Dest row a step changes (tensix_diff.step_access keeps only the rows a step
indexes): random steps read and set Dest's traced arrays by ints, slices, index arrays, tuples, boolean masks
and ufuncs, write through the row views reads return, and write values already there; the rows the step's
record says it wrote must be exactly the rows whose bits or valid bit differ from a copy taken before it."""
from __future__ import annotations

import random

import numpy as np
import pytest

from golden.analysis import traced_state
from golden.core import Tensix
from tensix_diff.happens_before import Recorder
from tensix_diff.state_parts import DEST
from tensix_diff.step_access import ALL, ABSENT


def _recorder():
    m = Tensix()
    r = Recorder()
    r.attach(m)
    return r, m.s.dest


def _index(rng, n: int):
    """A random first index of an array of ``n`` rows, as golden's paths make them and beyond."""
    k = rng.randrange(7)
    if k == 0:
        return rng.randrange(-n, n)
    if k == 1:
        a = rng.randrange(n)
        return slice(a, min(n, a + rng.choice((1, 2, 8, 16))))
    if k == 2:
        a = rng.randrange(n)
        return slice(a, min(n, a + 40), rng.choice((2, 3)))
    if k == 3:
        return np.array([rng.randrange(n) for _ in range(rng.randrange(1, 5))])
    if k == 4:
        return np.int64(rng.randrange(n))
    if k == 5:
        a = rng.randrange(n)
        return slice(min(n, a + 8), a, -1)
    return np.array([rng.random() < 0.01 for _ in range(n)])      # boolean: rows not known


def _act(rng, dest, held: list) -> None:
    """One access of Dest's arrays, as a step makes it."""
    arr = rng.choice((dest.bits, dest.valid))
    k = rng.randrange(8)
    i = _index(rng, len(arr))
    if k == 0 and held:                               # through a view a read returned
        v = rng.choice(held)
        if v.size:
            flat = v.reshape(-1)
            flat[rng.randrange(flat.size)] = rng.choice((0, 1)) if v.dtype == bool else rng.randrange(4)
    elif k == 1:                                      # read: keep what it returns
        held.append(np.asarray(arr[i]))
    elif k == 2:
        arr[i] = rng.choice((0, 1)) if arr.dtype == bool else rng.randrange(4)
    elif k == 3 and arr.ndim == 2:
        arr[(i, rng.randrange(16))] = rng.randrange(4)
    elif k == 4:                                      # the value already there
        arr[i] = arr.plain[i].copy()
    elif k == 5:
        held.append(np.asarray(arr[(i,)]))
    elif k == 6 and arr.dtype != bool:                # a ufunc on the whole array, in place
        np.bitwise_xor(arr, np.uint16(rng.randrange(2)), out=(arr,))
    else:
        held.append(np.asarray(arr[i]))


@pytest.mark.parametrize("seed", range(40))
def test_dest_rows_written(seed):
    rng = random.Random(seed)
    r, dest = _recorder()
    for _ in range(30):
        before = (dest.bits.plain.copy(), dest.valid.plain.copy())
        held: list = []
        traced_state.ACTIVE = r
        try:
            for _ in range(rng.randrange(1, 6)):
                _act(rng, dest, held)
        finally:
            traced_state.ACTIVE = None
        reads, writes = r._finish()
        changed = (dest.bits.plain != before[0]).any(axis=1) | (dest.valid.plain != before[1])
        want = sum(1 << int(k) for k in np.flatnonzero(changed))
        got = writes.get(DEST, ABSENT)
        assert got is not ALL
        assert (got if got is not ABSENT else 0) == want


def test_write_through_a_row_view():
    """A row taken by a read and changed through the view it returned is written, also when the array is
    taken whole later in the step."""
    r, dest = _recorder()
    traced_state.ACTIVE = r
    try:
        v = dest.bits[5]
        v[3] = 7
        w = dest.bits[8:12]
        w[2, 0] = 1
        np.bitwise_or(dest.bits, 0, out=(dest.bits,))
    finally:
        traced_state.ACTIVE = None
    _, writes = r._finish()
    assert writes[DEST] == 1 << 5 | 1 << 10


def test_a_row_set_back_is_not_written():
    """A row changed and set back within the step is not written, however often it is indexed again."""
    r, dest = _recorder()
    traced_state.ACTIVE = r
    try:
        v = dest.bits[0:4]
        v[2, 0] = 5
        w = dest.bits[2:8]
        w[0, 0] = 0
        w[4, 1] = 3
        dest.valid[1] = False
        np.bitwise_or(dest.valid, False, out=(dest.valid,))
        dest.valid[0:3] = True
    finally:
        traced_state.ACTIVE = None
    _, writes = r._finish()
    assert writes[DEST] == 1 << 6


def test_index_rows_is_state_parts_rows():
    """The mask of a Dest index's rows (``_index_rows``) is tensix_diff.state_parts.rows's, as a mask."""
    from tensix_diff.state_parts import mask, rows
    from tensix_diff.step_access import _index_rows
    rng = random.Random(7)
    for _ in range(20000):
        n = rng.choice((1, 8, 1024))
        bound = lambda: rng.choice((None, rng.randrange(-2 * n, 2 * n)))
        i = rng.choice((slice(bound(), bound(), rng.choice((None, 1, 2, -1, -3))), rng.randrange(-2 * n, 2 * n),
                        np.array([rng.randrange(n) for _ in range(3)]), Ellipsis))
        if rng.random() < 0.3:
            i = (i, 3)
        r = rows(i[0] if i.__class__ is tuple else i, n)
        assert _index_rows(i, n) == (None if r is None else mask(r)), (i, n)
