"""The replay store: compact atomic recordings keyed by case hash, stale and corrupt recordings, provenance."""
from __future__ import annotations

import copy
import gzip
import json
import multiprocessing
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from golden import isa
from hwbridge.base import Result
from hwbridge.golden_backend import GoldenBackend
from hwbridge.replay import ReplayBackend
from tensix_diff.case import Case, Init, case_hash
from tensix_diff.compare import NothingCompared, compare
from tensix_diff.store import PROVENANCE_KEYS, Recording, Store, StoreError

DEVICE = {"device": "ttsim 1.10.0", "platform": "ttsim", "exalens": "0.4.2", "umd": "0.9.14", "core": "1,2"}


def make_case(name="store-case", bitmask=15, rows=4) -> Case:
    words = [isa.encode("SETRWC", {"bitmask": bitmask})] * 64
    dest = [(r * 7, [(r * 131 + c * 17) & 0xFFFF for c in range(16)]) for r in range(rows)]
    return Case(name, "", {0: words}, Init(gpr={1: {3: 0xDEADBEEF}}, dest=dest,
                                          l1=[(0x20000, bytes(range(64)))], config={0: {5: 0x1234}}))


def device_result(case: Case, **prov) -> Result:
    """What a device would return: here golden's state under a device's provenance (test data only)."""
    state = GoldenBackend().run(case).state
    return Result("ok", copy.deepcopy(state), provenance={**DEVICE, **prov})


def test_round_trip_small_sparse_and_with_provenance(tmp_path):
    store, case = Store(tmp_path), make_case()
    res = device_result(case)
    p = store.record(case, res, "new")
    assert p == tmp_path / case_hash(case)[:2] / f"{case_hash(case)}.json.gz"
    assert p.stat().st_size < 4096
    doc = json.loads(gzip.decompress(p.read_bytes()))
    assert sorted(doc["state"]["dest"]) == ["0", "14", "21", "7"]   # only non-zero rows are stored
    got = ReplayBackend(store=store).run(case)
    assert got.status == "ok"
    assert compare(res.state, got.state).matched
    assert got.state == res.state
    for key in PROVENANCE_KEYS:
        assert got.provenance[key] not in (None, ""), key
    assert got.provenance["device"] == "ttsim 1.10.0"
    assert set(got.provenance["observable"]) == set(res.state)
    assert (tmp_path / "names" / case.name).read_text().strip() == case_hash(case)
    assert not [f for f in tmp_path.rglob("*.tmp")]


def test_partial_observation_round_trips(tmp_path):
    store, case = Store(tmp_path), make_case()
    res = device_result(case)
    del res.state["dest_valid"], res.state["adc"]
    res.state["dest"][1000] = [0xFFFF] * 16
    res.unobservable = ["dest_valid", "adc"]
    store.record(case, res, "all")
    got = store.get(case_hash(case)).result()
    assert got.state == res.state and got.unobservable == ["dest_valid", "adc"]


def test_missing_then_stale_when_the_case_changes(tmp_path):
    store = Store(tmp_path)
    rb = ReplayBackend(store=store)
    case = make_case()
    assert rb.run(case).status == "missing"
    store.record(case, device_result(case), "new")
    assert rb.run(case).status == "ok"
    edited = make_case(bitmask=14)      # same name, different program
    r = rb.run(edited)
    assert r.status == "stale" and r.state is None
    assert "changed since it was recorded" in r.message and "re-record" in r.message
    assert rb.run(make_case(name="other-name", bitmask=14)).status == "missing"
    # Formatting-only differences (name aside) are the same case: the same recording answers.
    assert rb.run(make_case(name="renamed")).status == "ok"


def test_record_modes(tmp_path):
    store, case = Store(tmp_path), make_case()
    assert store.record(case, device_result(case), "none") is None
    assert not store.has(case_hash(case))
    assert store.record(case, device_result(case, core="0,0"), "new") is not None
    assert store.record(case, device_result(case, core="9,9"), "new") is None        # new keeps the old one
    assert store.get(case_hash(case)).provenance["core"] == "0,0"
    assert store.record(case, device_result(case, core="9,9"), "all") is not None     # all overwrites
    assert store.get(case_hash(case)).provenance["core"] == "9,9"
    assert store.record(case, Result("device-error", message="timeout", provenance=DEVICE), "all") is None
    with pytest.raises(StoreError):
        store.record(case, device_result(case), "sometimes")


def test_golden_is_never_evidence(tmp_path):
    store, case = Store(tmp_path), make_case()
    with pytest.raises(StoreError, match="golden is never evidence"):
        store.record(case, GoldenBackend().run(case), "all")
    # A golden recording smuggled into the store is refused when read.
    store.record(case, device_result(case), "all")
    p = store.path(case_hash(case))
    doc = json.loads(gzip.decompress(p.read_bytes()))
    doc["provenance"]["device"] = "golden"
    p.write_bytes(gzip.compress(json.dumps(doc).encode()))
    with pytest.raises(StoreError, match="golden is never evidence") as e:
        ReplayBackend(store=store).run(case)
    assert str(p) in str(e.value)


def _corrupt(tmp_path, mutate) -> tuple[Store, Case, str]:
    store, case = Store(tmp_path), make_case()
    p = store.record(case, device_result(case), "all")
    mutate(p)
    return store, case, str(p)


@pytest.mark.parametrize("mutate,what", [
    (lambda p: p.write_bytes(p.read_bytes()[:40]), "not gzip'd JSON"),
    (lambda p: p.write_bytes(b"hello"), "not gzip'd JSON"),
    (lambda p: p.write_bytes(gzip.compress(b"{not json")), "not gzip'd JSON"),
    (lambda p: p.write_bytes(gzip.compress(b"[1, 2]")), "not a mapping"),
    (lambda p: _edit(p, lambda d: d.update(format=99)), "format 99"),
    (lambda p: _edit(p, lambda d: d.update(case_hash="0" * 64)), "holds case 000000000000"),
    (lambda p: _edit(p, lambda d: d["state"]["dest"].update({"5": "00"})), "dest row 5 holds 1 bytes"),
    (lambda p: _edit(p, lambda d: d["state"]["gpr"]["0"].append(1)), "gpr 0 is not a list of 64"),
    (lambda p: _edit(p, lambda d: d["state"]["rwc"]["1"].update(dst=-1)), "rwc 1 dst"),
    (lambda p: _edit(p, lambda d: d["provenance"].pop("umd")), "provenance lacks umd"),
    (lambda p: _edit(p, lambda d: d.update(status="fine")), "status 'fine'"),
])
def test_corrupt_recording_is_one_clear_error_naming_the_file(tmp_path, mutate, what):
    store, case, path = _corrupt(tmp_path, mutate)
    with pytest.raises(StoreError) as e:
        ReplayBackend(store=store).run(case)
    msg = str(e.value)
    assert msg.startswith(f"{path}: ") and "\n" not in msg and what in msg, msg


def _edit(p, fn) -> None:
    doc = json.loads(gzip.decompress(p.read_bytes()))
    fn(doc)
    p.write_bytes(gzip.compress(json.dumps(doc).encode()))


def test_a_crash_mid_write_leaves_no_partial_file(tmp_path, monkeypatch):
    store, case = Store(tmp_path), make_case()

    def crash(*a, **k):
        raise OSError("disk on fire")
    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError):
        store.record(case, device_result(case), "all")
    assert not store.has(case_hash(case))
    assert [f for f in tmp_path.rglob("*") if f.is_file()] == []


def _writer(root: str, name: str, rounds: int) -> None:
    store, case = Store(root), make_case(name=name)
    res = device_result(case)
    for i in range(rounds):
        res.provenance["core"] = f"{os.getpid()},{i}"
        store.record(case, res, "all")
        store.record(make_case(name=f"{name}-{i % 3}", rows=i % 5), res, "all")


def test_concurrent_writers_and_readers_never_see_a_partial_file(tmp_path):
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), "shared", 15)) for _ in range(3)]
    for p in procs:
        p.start()
    store, case = Store(tmp_path), make_case(name="shared")
    seen = 0
    while any(p.is_alive() for p in procs):
        rec = store.get(case_hash(case))    # raises StoreError on any partial file
        seen += rec is not None
    for p in procs:
        p.join()
        assert p.exitcode == 0
    assert store.get(case_hash(case)) is not None
    assert not [f for f in tmp_path.rglob("*.tmp")]
    assert all(store.get(h) is not None for h in store.hashes())


# --- 1,000 mutated recordings through the loader: a Recording or one StoreError line, nothing else ----

def _valid_blob() -> bytes:
    case = make_case()
    rec = Recording.from_result(case, device_result(case))
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        return Store(d).put(rec).read_bytes()


_BLOB = None
JSON_VALUES = st.recursive(st.none() | st.booleans() | st.integers(-2**40, 2**40) | st.text(max_size=8)
                           | st.floats(allow_nan=False), lambda c: st.lists(c, max_size=3)
                           | st.dictionaries(st.text(max_size=5), c, max_size=3), max_leaves=6)


def _paths(doc, prefix=()):
    yield prefix
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc[:3]):
            yield from _paths(v, prefix + (i,))


@st.composite
def mutated_recordings(draw) -> bytes:
    global _BLOB
    if _BLOB is None:
        _BLOB = _valid_blob()
    if draw(st.booleans()):     # byte-level damage to the file
        raw = bytearray(_BLOB)
        for _ in range(draw(st.integers(1, 4))):
            op = draw(st.sampled_from(["flip", "cut", "insert"]))
            i = draw(st.integers(0, len(raw) - 1))
            if op == "flip":
                raw[i] ^= 1 << draw(st.integers(0, 7))
            elif op == "cut":
                del raw[i:]
                if not raw:
                    break
            else:
                raw[i:i] = draw(st.binary(min_size=1, max_size=4))
        return bytes(raw)
    doc = json.loads(gzip.decompress(_BLOB))    # structural damage to the document
    for _ in range(draw(st.integers(1, 3))):
        paths = list(_paths(doc))[1:]
        path = draw(st.sampled_from(paths))
        parent = doc
        for k in path[:-1]:
            parent = parent[k]
        if draw(st.booleans()) and isinstance(parent, dict):
            del parent[path[-1]]
        else:
            parent[path[-1]] = draw(JSON_VALUES)
    return gzip.compress(json.dumps(doc).encode())


@settings(max_examples=1000)
@given(mutated_recordings())
def test_mutated_recordings_never_traceback(blob):
    try:
        rec = Store.parse(blob, "rec.json.gz")
    except StoreError as e:
        assert str(e).startswith("rec.json.gz: ") and "\n" not in str(e)
        return
    assert rec.status in ("ok", "refused", "undefined-behaviour", "not-modelled", "hang")
    if rec.status == "ok":
        try:
            assert compare(rec.state, copy.deepcopy(rec.state)).matched
        except NothingCompared:   # e.g. only an empty l1 mapping survived: loud, not a traceback
            pass
