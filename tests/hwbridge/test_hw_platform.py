"""Per-platform tables of the hw backend (no device needed): both load, and decoding is what they say."""
from __future__ import annotations

import pytest

from golden.state import ADC_UNITS
from hwbridge.hw.platform import ADC_FIELDS, RWC_FIELDS, load
from hwbridge.hw.selftest import OK_, rwc_layout_result
from hwbridge.hw.selftest_cases import rwc_layout_case

PLATFORMS = ("ttsim", "blackhole")


def _place(fields: dict[tuple[int, int], int], words: int) -> list[int]:
    """32-bit words holding each value at its [lsb, width)."""
    v = 0
    for (lsb, width), value in fields.items():
        assert value < 1 << width
        v |= value << lsb
    return [(v >> (32 * i)) & 0xFFFFFFFF for i in range(words)]


@pytest.mark.parametrize("name", PLATFORMS)
def test_counters_decode_from_their_layout(name):
    plat = load(name)
    raw = plat.raw
    rwc_vals, placed = {}, {}
    for t in range(3):
        for k, f in enumerate(RWC_FIELDS):
            lsb, width = raw["rwc_layout"][f][t]
            value = (7 * t + 5 * k + 1) % (1 << width)
            rwc_vals[(t, f)] = value
            placed[(lsb, width)] = value
    fid = {t: (t + 1) % 4 for t in range(3)}
    words = _place(placed, 8) + _place({tuple(raw["fidelity_layout"][t]): fid[t] for t in range(3)}, 4)
    adc_vals = {}
    for g in range(6):
        group = {}
        for k, f in enumerate(ADC_FIELDS):
            lsb, width = raw["adc_layout"][f]
            adc_vals[(g, f)] = group[(lsb, width)] = (31 * g + 3 * k + 2) % (1 << width)
        words += _place(group, 4)
    assert len(words) == len(plat.dbus_reads()) == 36
    rwc, adc = plat.decode_counters(words)
    for (t, f), value in rwc_vals.items():
        assert rwc[str(t)][f] == value
    assert [rwc[str(t)]["fidelity"] for t in range(3)] == [fid[t] for t in range(3)]
    for unit in ADC_UNITS:
        t = str(raw["adc_thread"][unit])
        for ch in range(2):
            g = 2 * raw["adc_units"][unit] + ch
            assert adc[t][unit][str(ch)] == {f: adc_vals[(g, f)] for f in ADC_FIELDS}


@pytest.mark.parametrize("name", PLATFORMS)
def test_what_the_platform_cannot_see_is_declared(name):
    plat = load(name)
    un = plat.unobservable()
    assert {"dest_valid", "rwc.bias", "srca", "srcb"} <= set(un)
    assert "adc.1.unpack0" in un and "adc.0.pack" in un and "adc.0.unpack0" not in un
    # the chain shows the low 8 bits of Z/W
    assert any(u.startswith("adc.*.*.*.z ") for u in un)


@pytest.mark.parametrize("name", PLATFORMS)
def test_src_state_bits_of_one_src_share_a_word(name):
    """The prologue reads each Src's four state bits with one debug-bus read."""
    for bits in load(name).raw["src_state_bits"].values():
        assert len({b // 32 for b in bits.values()}) == 1


def test_ttsim_and_silicon_layouts_differ_only_where_documented():
    sim, si = load("ttsim").raw, load("blackhole").raw
    assert load("ttsim").verified and not load("blackhole").verified     # silicon awaits a lab run
    for f in RWC_FIELDS:
        for t in range(3):
            if f in ("dst", "dst_cr") or (f == "srca" and t == 0) or (f == "srcb" and t == 0):
                assert sim["rwc_layout"][f][t] == si["rwc_layout"][f][t], (f, t)
    assert sim["adc_layout"] == si["adc_layout"] and sim["fidelity_layout"] == si["fidelity_layout"]


def test_ttsim_register_sets():
    plat = load("ttsim")
    assert 185 not in plat.config_writable and 186 not in plat.config_writable      # side effects
    assert {0, 1, 2, 3, 220} <= plat.config_readable & plat.config_writable
    assert 6 not in plat.thread_config_writable and 55 not in plat.thread_config_writable
    silicon = load("blackhole")
    assert len(silicon.config_readable) > len(plat.config_readable)


@pytest.mark.hw
@pytest.mark.selftest
def test_rwc_layout_roundtrip(backend):
    """On a device (``--backend=hw``): each RWC field of each thread set to its own value reads back in place
    through the platform's rwc_layout (the selftest's rwc-layout check). On a card this settles the
    blackhole table's unverified RWC positions."""
    r = backend.run(rwc_layout_case())
    assert r.status == "ok", r.message
    status, detail = rwc_layout_result(r.state["rwc"], backend.platform.name)
    assert status == OK_, detail


def test_unknown_platform():
    with pytest.raises(ValueError, match="unknown hw platform"):
        load("nonesuch")
