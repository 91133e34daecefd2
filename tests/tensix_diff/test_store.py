"""The replay store: packed bundles keyed by case hash + device, compact, atomic and safe for concurrent
recorders; stale, corrupt and torn recordings; merge, gc and migration (tensix_diff.store, tensix_cli.store)."""
from __future__ import annotations

import copy
import gzip
import json
import multiprocessing
import os
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from golden import isa
from tensix_diff.result import Result, dump_form, same_value
from hwbridge.golden_backend import GoldenBackend
from hwbridge.replay import ReplayBackend
from tensix_cli import store as store_cmd
from tensix_diff.case import Case, Init, case_hash
from tensix_diff.compare import NothingCompared, compare
from tensix_diff.store import BUNDLE_MAX, PROVENANCE_KEYS, Recording, Store, StoreError, choose_device

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


def _lines(store: Store) -> list[str]:
    out = []
    for p in store.bundles():
        out += gzip.decompress(p.read_bytes()).decode().splitlines()
    return out


def test_round_trip_is_small_and_rebases_dest_on_the_initial_dest(tmp_path):
    store, case = Store(tmp_path), make_case()
    res = device_result(case)
    res.state["dest"][100] = [7] * 16                 # a row the program "wrote"
    p = store.record(case, res, "new")
    assert p == tmp_path / "b0001.jsonl.gz" and p.stat().st_size < 1536
    (rec,) = [json.loads(x.split("\t")[4]) for x in _lines(store) if x.startswith("R\t")]
    assert sorted(rec["state"]["dest"]) == ["100"] and rec["base"] == "init"   # initial rows are not stored
    got = ReplayBackend(store=store).run(case)
    assert got.status == "ok" and same_value(got.state, res.state) and compare(res.state, got.state).matched
    for key in PROVENANCE_KEYS:
        assert got.provenance[key] not in (None, ""), key
    assert got.provenance["device"] == "ttsim 1.10.0" and set(got.provenance["observable"]) == set(res.state)
    assert not [f for f in tmp_path.rglob("*.tmp")]
    assert store.record(case, res, "all") == p and len(_lines(store)) == 2      # the same recording: stored once


def test_dest_is_stored_alike_from_arrays_and_lists_and_read_back_as_arrays(tmp_path):
    case = make_case()
    res = device_result(case)
    res.state["dest"][100] = [7] * 16
    res.state["dest_valid"][:512] = False
    listed = Result("ok", dump_form(res.state), provenance=res.provenance)
    stored = []
    for r, d in ((res, "arrays"), (listed, "lists")):
        Store(tmp_path / d).record(case, r, "all")
        stored += [json.loads(x.split("\t")[4])["state"] for x in _lines(Store(tmp_path / d)) if x.startswith("R\t")]
    assert stored[0] == stored[1] and stored[0]["dest_valid"] == "00" * 64 + "ff" * 64
    got = Store(tmp_path / "lists").lookup(case).recording.state
    assert got["dest"].dtype == np.uint16 and got["dest"].shape == (1024, 16) and got["dest"].flags.writeable
    assert got["dest_valid"].dtype == bool and got["dest_valid"].shape == (1024,)
    assert dump_form(got) == listed.state


def test_partial_observation_round_trips(tmp_path):
    store, case = Store(tmp_path), make_case()
    res = device_result(case)
    del res.state["dest_valid"], res.state["adc"]
    res.state["dest"][1000] = [0xFFFF] * 16
    res.unobservable = ["dest_valid", "adc"]
    store.record(case, res, "all")
    got = Store(tmp_path).get(case_hash(case), case=case).result()
    assert same_value(got.state, res.state) and got.unobservable == ["dest_valid", "adc"]
    with pytest.raises(StoreError, match="relative to the case's initial Dest"):
        Store(tmp_path).get(case_hash(case))          # Dest cannot be rebuilt without the case


def test_missing_then_stale_when_the_case_changes(tmp_path):
    store = Store(tmp_path)
    rb = ReplayBackend(store=store)
    case = make_case()
    assert rb.run(case).status == "missing"
    store.record(case, device_result(case), "new")
    assert rb.run(case).status == "ok"
    edited = make_case(bitmask=14)      # same name, different program
    r = ReplayBackend(store=Store(tmp_path)).run(edited)
    assert r.status == "stale" and r.state is None
    assert "changed since it was recorded" in r.message and "re-record" in r.message
    assert rb.run(make_case(name="other-name", bitmask=14)).status == "missing"
    assert rb.run(make_case(name="renamed")).status == "ok"      # the name is not part of the case hash


def test_record_modes(tmp_path):
    store, case = Store(tmp_path), make_case()
    h = case_hash(case)
    assert store.record(case, device_result(case), "none") is None
    assert not store.has(h)
    assert store.record(case, device_result(case, core="0,0"), "new") is not None
    assert store.record(case, device_result(case, core="9,9"), "new") is None        # new keeps the old one
    assert store.get(h, case=case).provenance["core"] == "0,0"
    assert store.record(case, device_result(case, core="9,9"), "all") is not None     # all replaces it
    assert store.get(h, case=case).provenance["core"] == "9,9"
    assert Store(tmp_path).get(h, case=case).provenance["core"] == "9,9"              # later lines win
    assert store.record(case, Result("device-error", message="timeout", provenance=DEVICE), "all") is None
    with pytest.raises(StoreError):
        store.record(case, device_result(case), "sometimes")


def test_one_case_holds_recordings_from_several_devices(tmp_path):
    store, case = Store(tmp_path), make_case()
    h = case_hash(case)
    for device in ("ttsim 1.9.9", "ttsim 1.10.0", "ttsim 1.10.0-dev"):
        store.record(case, device_result(case, device=device), "new")
    assert store.devices(h) == ["ttsim 1.10.0", "ttsim 1.10.0-dev", "ttsim 1.9.9"]
    assert store.lookup(case).recording.device == "ttsim 1.10.0-dev"        # newest ttsim by default
    assert store.lookup(case, device="ttsim 1.9.9").recording.device == "ttsim 1.9.9"
    store.record(case, device_result(case, device="blackhole p150a card 3"), "new")
    assert store.lookup(case).recording.device == "blackhole p150a card 3"   # silicon first
    assert ReplayBackend(store=store, device="ttsim").run(case).provenance["device"] == "ttsim 1.10.0-dev"
    assert ReplayBackend(store=store, device="ttsim 2.0").run(case).status == "missing"
    assert choose_device(["ttsim 1.10.0", "ttsim 1.9.9"]) == "ttsim 1.10.0"


def test_golden_is_never_evidence(tmp_path):
    store, case = Store(tmp_path), make_case()
    with pytest.raises(StoreError, match="golden is never evidence"):
        store.record(case, GoldenBackend().run(case), "all")
    store.record(case, device_result(case), "all")
    _rewrite(tmp_path, lambda line: line.replace('"device":"ttsim 1.10.0"', '"device":"golden"')
             .replace("\tttsim 1.10.0\t", "\tgolden\t"))
    with pytest.raises(StoreError, match="golden is never evidence") as e:
        ReplayBackend(store=Store(tmp_path)).run(case)
    assert str(tmp_path / "b0001.jsonl.gz") in str(e.value)


def _rewrite(root, edit) -> None:
    p = root / "b0001.jsonl.gz"
    text = gzip.decompress(p.read_bytes()).decode()
    p.write_bytes(gzip.compress("\n".join(edit(x) for x in text.splitlines()).encode() + b"\n"))


def _payload_edit(fn):
    def edit(line):
        if not line.startswith("R\t"):
            return line
        head, payload = line.rsplit("\t", 1)
        doc = json.loads(payload)
        fn(doc)
        return head + "\t" + json.dumps(doc)
    return edit


@pytest.mark.parametrize("edit,what", [
    (lambda line: line[:40], "neither a recording nor a blob"),
    (lambda line: line.replace("R\t", "R\tzz", 1) if line.startswith("R") else line, "a recording line with hash"),
    (_payload_edit(lambda d: d["state"]["dest"].update({"5": "00"})), "dest row 5 holds 1 bytes"),
    (_payload_edit(lambda d: d["state"]["gpr"]["0"].update({"64": 1})), "gpr 0 key '64'"),
    (_payload_edit(lambda d: d["state"]["rwc"]["1"].update(dst=-1)), "rwc 1 dst"),
    (_payload_edit(lambda d: d.update(p="0" * 16)), "provenance blob 0000000000000000 is not in the store"),
    (_payload_edit(lambda d: d.update(status="fine")), "status 'fine'"),
    (_payload_edit(lambda d: d.update(status="refused")), "status refused with an observed state"),
    (_payload_edit(lambda d: d.pop("base")), "fields"),
])
def test_corrupt_recording_is_one_clear_error_naming_the_file(tmp_path, edit, what):
    store, case = Store(tmp_path), make_case()
    store.record(case, device_result(case), "all")
    _rewrite(tmp_path, edit)
    with pytest.raises(StoreError) as e:
        ReplayBackend(store=Store(tmp_path)).run(case)
    msg = str(e.value)
    assert msg.startswith(f"{tmp_path / 'b0001.jsonl.gz'}: ") and "\n" not in msg and what in msg, msg


def test_a_bundle_that_inflates_too_far_is_refused(tmp_path):
    (tmp_path / "b0001.jsonl.gz").write_bytes(gzip.compress(b"\n" * (70 << 20)))
    with pytest.raises(StoreError, match="inflates past 64 MiB"):
        Store(tmp_path).keys()


def test_a_write_cut_short_loses_only_that_recording(tmp_path, capsys):
    store = Store(tmp_path)
    a, b = make_case("a-case"), make_case("b-case", bitmask=14)
    store.record(a, device_result(a), "all")
    store.record(b, device_result(b), "all")
    p = tmp_path / "b0001.jsonl.gz"
    p.write_bytes(p.read_bytes()[:-20])                   # the simulator died mid-append
    fresh = Store(tmp_path)
    assert fresh.lookup(a).status == "ok" and fresh.lookup(b).status == "missing"
    assert "torn last member" in capsys.readouterr().err
    assert store_cmd.verify(Store(tmp_path)) == 1
    fresh.record(b, device_result(b), "all")               # recording again repairs it
    assert Store(tmp_path).lookup(b).status == "ok"


def _writer(root: str, name: str, rounds: int) -> None:
    store, case = Store(root), make_case(name=name)
    res = device_result(case)
    for i in range(rounds):
        res.provenance["core"] = f"{os.getpid()},{i}"
        store.record(case, res, "all")
        store.record(make_case(name=f"{name}-{i % 3}", rows=i % 5), res, "all")


def test_concurrent_writers_and_readers_never_see_a_partial_recording(tmp_path):
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), "shared", 15)) for _ in range(3)]
    for p in procs:
        p.start()
    case = make_case(name="shared")
    while any(p.is_alive() for p in procs):
        Store(tmp_path).lookup(case)        # raises StoreError on any damage
    for p in procs:
        p.join()
        assert p.exitcode == 0
    store = Store(tmp_path)
    assert store.lookup(case).status == "ok" and not store.warnings
    assert store_cmd.verify(store) == 0


def test_merge_reports_nondeterminism_and_never_chooses(tmp_path, capsys):
    a, b = Store(tmp_path / "a"), Store(tmp_path / "b")
    same, differs, only_b = make_case("same"), make_case("differs", bitmask=14), make_case("only-b", bitmask=13)
    for s in (a, b):
        s.record(same, device_result(same, date="2026-01-01"), "all")
    a.record(differs, device_result(differs), "all")
    other = device_result(differs)
    other.state["gpr"]["0"][5] = 1                                  # the same case gave another result
    b.record(differs, other, "all")
    b.record(only_b, device_result(only_b), "all")
    assert store_cmd.merge(a, Store(tmp_path / "b")) == 1
    out = capsys.readouterr().out
    assert "nondeterminism: case differs" in out and "1 added, 1 already there, 1 conflicting (kept ours)" in out
    merged = Store(tmp_path / "a")
    assert merged.lookup(only_b).status == "ok"
    assert merged.lookup(differs).recording.state["gpr"]["0"][5] == 0


def test_gc_keeps_what_cases_refer_to_and_migrate_converts_the_old_layout(tmp_path, capsys):
    store, keep, drop = Store(tmp_path), make_case("keep"), make_case("drop", bitmask=14)
    store.record(keep, device_result(keep), "all")
    store.record(drop, device_result(drop), "all")
    assert store_cmd.gc(store, {case_hash(keep): keep}) == 0
    assert Store(tmp_path).hashes() == [case_hash(keep)]
    old = tmp_path / "old"
    h = case_hash(drop)
    (old / h[:2]).mkdir(parents=True)
    res = device_result(drop)
    doc = {"format": 1, "case_hash": h, "case_name": "drop", "status": "ok", "message": "",
           "provenance": {**DEVICE, "harness": "x", "date": "d", "observable": sorted(res.state)},
           "unobservable": [], "state": {**res.state, "dest": {str(r): bytes(32).hex().replace("00", "01", 16)
                                                               for r in (3,)}}}
    doc["state"]["dest_valid"] = "ff" * 128
    (old / h[:2] / f"{h}.json.gz").write_bytes(gzip.compress(json.dumps(doc).encode()))
    assert store_cmd.migrate(Store(tmp_path / "new"), old, {h: drop}) == 0
    got = Store(tmp_path / "new").lookup(drop).recording
    assert got.state["dest"][3][:8].tolist() == [0x0101] * 8 and got.state["gpr"] == res.state["gpr"]
    assert not list(old.glob("??/*.json.gz"))
    with pytest.raises(StoreError, match="old one-file-per-case layout"):
        (old / "ab").mkdir()
        (old / "ab" / "x.json.gz").write_bytes(b"")
        Store(old).keys()


def test_stats_prints_bytes_per_case(tmp_path, capsys):
    store = Store(tmp_path)
    for i in range(5):
        c = make_case(f"c{i}", bitmask=i)
        store.record(c, device_result(c), "all")
    assert store_cmd.stats(Store(tmp_path)) == 0
    out = capsys.readouterr().out
    assert "5 cases, 5 recordings in 1 bundles" in out and "ttsim 1.10.0: 5 recordings" in out
    assert "bytes per case" in out


def test_packing_keeps_every_bundle_under_the_size_limit(tmp_path, monkeypatch):
    import tensix_diff.store.store as store_mod
    monkeypatch.setattr(store_mod, "BUNDLE_OPEN", 3000)
    store = Store(tmp_path)
    for i in range(12):
        c = make_case(f"c{i}", bitmask=i % 16, rows=8)
        store.record(c, device_result(c), "all")
    assert len(store.bundles()) > 1 and all(p.stat().st_size <= BUNDLE_MAX for p in store.bundles())
    store.write_bundles(store.packed_lines())
    assert len(Store(tmp_path).keys()) == 12


def _recorded(root, n=12) -> list[Case]:
    store, cases = Store(root), [make_case(f"i{i}", bitmask=i) for i in range(n)]
    for c in cases:
        store.record(c, device_result(c), "all")
    return cases


def test_lookups_go_through_the_index_and_agree_with_a_full_scan(tmp_path):
    cases = _recorded(tmp_path)
    Store(tmp_path).keys()                                   # scans the bundles, writes the index
    assert (tmp_path / ".index").is_file() and Store(tmp_path).bundles() == [tmp_path / "b0001.jsonl.gz"]
    indexed, full = Store(tmp_path), Store(tmp_path)
    full._load()                                             # noqa: SLF001
    assert all(line.payload is None for line in indexed._index().of(case_hash(cases[3])).values())  # noqa: SLF001
    for c in cases:
        assert indexed.lookup(c).recording == full.lookup(c).recording
    assert not indexed._full                                 # noqa: SLF001 (no bundle was read whole)
    assert indexed.lookup(make_case("i3", bitmask=3, rows=2)).status == "stale"


def test_a_bundle_that_changed_under_the_index_is_scanned_again(tmp_path):
    cases = _recorded(tmp_path, 3)
    Store(tmp_path).keys()
    late = make_case("late", bitmask=7)
    Store(tmp_path).record(late, device_result(late), "all")     # appended after the index was written
    assert Store(tmp_path).lookup(late).status == "ok" and Store(tmp_path).lookup(cases[0]).status == "ok"
    index = tmp_path / ".index"                               # rows that point at the wrong members
    index.write_text(index.read_text().replace("\t0\t", "\t1\t"))
    assert [Store(tmp_path).lookup(c).recording for c in cases] == [Store(tmp_path).lookup(c).recording for c in cases]
    index.write_text("not an index")
    assert Store(tmp_path).lookup(late).status == "ok"
    Store(tmp_path).keys()
    for old, new in (("ttsim 1.10.0\tlate\t", "ttsim 1.10.0\tlate\tx"), ("\nP\t", "\nP\tx\t")):
        index.write_text(index.read_text().replace(old, new))          # rows the index never writes
        assert Store(tmp_path).lookup(late).status == "ok" and len(Store(tmp_path).keys()) == 4


def test_damage_inside_an_indexed_member_is_one_clear_error(tmp_path):
    cases = _recorded(tmp_path)
    store = Store(tmp_path)
    line = store._index().of(case_hash(cases[0]))["ttsim 1.10.0"]    # noqa: SLF001
    p, (pos, length, _, _) = tmp_path / line.bundle, line.at
    st = os.stat(p)
    assert st.st_size - (pos + length) > 4096                # outside the tail the fingerprint hashes
    with open(p, "r+b") as f:                                # the member's CRC, changed in place
        f.seek(pos + length - 8)
        crc = f.read(1)
        f.seek(pos + length - 8)
        f.write(bytes([crc[0] ^ 1]))
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
    with pytest.raises(StoreError) as e:
        Store(tmp_path).lookup(cases[0])
    assert str(e.value).startswith(f"{p}: corrupt bundle") and "\n" not in str(e.value)


# --- 1,000 mutated bundles through the loader: a Recording or one StoreError line, nothing else --------

def _valid_bundle() -> bytes:
    import tempfile
    case = make_case()
    with tempfile.TemporaryDirectory() as d:
        return Store(d).put(Recording.from_result(case, device_result(case))).read_bytes()


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
def mutated_bundles(draw) -> bytes:
    global _BLOB
    if _BLOB is None:
        _BLOB = _valid_bundle()
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
    lines = gzip.decompress(_BLOB).decode().splitlines()   # structural damage to the recording's JSON
    i = next(k for k, x in enumerate(lines) if x.startswith("R\t"))
    head, payload = lines[i].rsplit("\t", 1)
    doc = json.loads(payload)
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
    lines[i] = head + "\t" + json.dumps(doc)
    return gzip.compress(("\n".join(lines) + "\n").encode())


@settings(max_examples=1000)
@given(mutated_bundles())
def test_mutated_bundles_never_traceback(tmp_path_factory, blob):
    root = tmp_path_factory.mktemp("m")
    (root / "b0001.jsonl.gz").write_bytes(blob)
    case = make_case()
    store = Store(root)
    try:
        look = store.lookup(case)
    except StoreError as e:
        assert str(e).startswith(str(root)) and "\n" not in str(e)
        return
    rec = look.recording
    if rec is not None and rec.status == "ok":
        try:
            assert compare(rec.state, copy.deepcopy(rec.state)).matched
        except NothingCompared:   # e.g. only an empty l1 mapping survived: loud, not a traceback
            pass


def test_the_store_command_is_one_line_on_bad_input(tmp_path):
    from tensix_cli.backends import BackendFailure
    with pytest.raises(BackendFailure, match="needs the other store"):
        store_cmd.run(SimpleNamespace(action="merge", other=None, recordings=str(tmp_path), cases=None, source=None))
