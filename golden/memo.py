"""Memos: results golden derives again and again, kept so a repeated derivation (the same kernel re-run
under another schedule by the race check, or issued again with the same configuration) is looked up.

ConfigMemo: what an instruction derives from its thread's Config words (checks, formats, strides). A
derivation is a function of a key (the instruction's fields, say) and of the Config words it reads through
``cfg(name)`` (registers.yaml fields, as thread t sees them through CFG_STATE_ID). It is kept in a tree by
the words it read, in the order it read them: a later call reads the same words one by one down the tree
and gets the same value, or a fresh copy of the same GoldenError. On a traced state (a recorded run,
tensix_diff.happens_before) a call reports the bits of the fields its derivation read (kept in its leaf),
not whole words.

by_value: a pure function of numbers and numpy arrays (a unit's arithmetic on its operands), kept by the
arrays' dtype, shape and bytes; its results are shared, so arrays among them are made read-only.
"""
from __future__ import annotations

import functools
from typing import Callable

import numpy as np

from .errors import GoldenError
from .registers import config_field, thread_config_field

_STATE_ID = thread_config_field("CFG_STATE_ID_StateID")
_MISS = object()
_ARRAY = np.ndarray
LIMIT = 4096          # derivations kept per memo; the tree starts afresh beyond it


class _Node:
    """A Config word read next, and where each of its values leads."""
    __slots__ = ("index", "next")

    def __init__(self, index: int):
        self.index, self.next = index, {}


class _Leaf:
    __slots__ = ("value", "error", "bits")

    def __init__(self, value, error: GoldenError | None, bits: dict):
        self.value, self.error, self.bits = value, error, bits     # bits: word -> the bits of it derive read


class _Reader:
    """``cfg(name)`` for one derivation: reads thread t's Config words, noting each word's first read."""

    def __init__(self, m, t: int):
        self.m, self.t, self.seen, self.bits = m, t, {}, {}
        self.words = None

    def __call__(self, name: str) -> int:
        f = config_field(name)
        self.bits[f.index] = self.bits.get(f.index, 0) | f.mask
        word = self.seen.get(f.index)
        if word is None:
            if self.words is None:
                self.words = _plain(_words(self.m, self.t))
            word = self.seen[f.index] = self.words[f.index]
        return f.get(word)


def _words(m, t: int):
    return m.s.config[_STATE_ID.get(m.s.thread_config[t][_STATE_ID.index])]


def _plain(words):
    """One Config state's words, unrecorded: a traced state's (golden.analysis.traced_state) are reported by
    the bits of the fields a derivation reads (its leaf's ``bits``), not as whole words."""
    return words if words.__class__ is list else list.copy(words)


class ConfigMemo:
    """``memo(m, t, key)``: ``derive(cfg, *key)`` for thread t, kept by the Config words it read."""

    def __init__(self, derive: Callable[..., object]):
        self.derive = derive
        self.roots: dict = {}
        self.size = 0

    def __call__(self, m, t: int, key: tuple = ()):
        node = self.roots.get(key, _MISS)
        traced = None
        if node.__class__ is _Node:
            words = _words(m, t)
            if words.__class__ is list:
                while node.__class__ is _Node:
                    node = node.next.get(words[node.index], _MISS)
            else:                          # traced: its words taken unrecorded, the leaf's bits reported
                traced, get = words, list.__getitem__
                while node.__class__ is _Node:
                    node = node.next.get(get(words, node.index), _MISS)
        if node is _MISS:
            node = self._learn(m, t, key)
        elif traced is not None:
            traced.read_fields(node.bits)
        if node.error is not None:
            e = node.error
            raise type(e)(e.rule)
        return node.value

    def _learn(self, m, t: int, key: tuple) -> _Leaf:
        cfg = _Reader(m, t)
        try:
            leaf = _Leaf(self.derive(cfg, *key), None, cfg.bits)
        except GoldenError as e:
            if e.instr is not None:
                raise
            leaf = _Leaf(None, e, cfg.bits)
        finally:
            words = _words(m, t)
            if words.__class__ is not list:
                words.read_fields(cfg.bits)
        if self.size >= LIMIT:
            self.roots, self.size = {}, 0
        self.size += 1
        at, slot = self.roots, key
        for index, value in cfg.seen.items():
            node = at.get(slot)
            if node is None:
                node = at[slot] = _Node(index)
            at, slot = node.next, value
        at[slot] = leaf
        return leaf


def by_value(fn: Callable) -> Callable:
    """``fn`` kept by its positional arguments' values (arrays by dtype, shape and bytes); the arrays it
    returns (alone or in a tuple) are made read-only."""
    kept: dict = {}

    @functools.wraps(fn)
    def memo(*args):
        key = tuple([(a.tobytes(), a.shape, a.dtype.char) if a.__class__ is _ARRAY else (a, a.__class__)
                     for a in args])
        try:
            out = kept.get(key)
        except TypeError:       # an argument neither a plain array nor hashable (golden.analysis's traced arrays)
            return fn(*args)
        if out is None:
            out = fn(*args)
            for a in out if out.__class__ is tuple else (out,):
                if a.__class__ is _ARRAY:
                    a.flags.writeable = False
            if len(kept) >= LIMIT:
                kept.clear()
            kept[key] = out
        return out

    return memo
