"""Which device and cores a hw backend drives (--device-id, --core one/list/all, --jobs, pytest-xdist workers), and
the card's identity in the store key; no device needed (hwbridge.hw.cores, hwbridge.hw.identity)."""
from __future__ import annotations

import pytest

from hwbridge.hw.cores import PlacementError, choose_cores, parse_cores, place, xdist_share
from hwbridge.hw.identity import NOT_TTSIM, device_key
from tensix_cli.cli import main

GRID = [(x, y) for y in range(2, 12) for x in [*range(1, 8), *range(10, 17)]]   # Blackhole's 140 Tensix cores
HARVESTED = [c for c in GRID if c[0] not in (4, 13)]                          # two columns harvested


@pytest.mark.parametrize("text, cores", [
    ("1,2", [(1, 2)]), ("1-2", [(1, 2)]), (" 3 , 4 ", [(3, 4)]),
    ("1,2;2,2", [(1, 2), (2, 2)]), ("1,2 2,2  3,2", [(1, 2), (2, 2), (3, 2)]), ("1-2,2-2", [(1, 2), (2, 2)]),
    ("all", "all"), ("ALL", "all"), (None, None),
])
def test_core_values(text, cores):
    assert parse_cores(text) == cores


@pytest.mark.parametrize("text, says", [
    ("1", "--core '1': give X,Y"), ("a,b", "--core 'a,b': give X,Y"), ("1,2;1,2", "names 1,2 more than once"),
    ("1,2,3", "--core '1,2,3': give X,Y"), ("", "--core '': give X,Y"), ("1,2;x", "--core '1,2;x': 'x' is not a core"),
])
def test_bad_core_values_say_why(text, says):
    with pytest.raises(PlacementError, match=says):
        parse_cores(text)


def test_cores_from_spec_and_jobs():
    assert choose_cores(GRID, None, None) == [(1, 2)]
    assert choose_cores(GRID, None, 3) == [(1, 2), (2, 2), (3, 2)]
    assert choose_cores(GRID, "all", None) == GRID
    assert choose_cores(HARVESTED, "all", 8) == HARVESTED[:8] and (4, 2) not in choose_cores(HARVESTED, "all", 20)
    assert choose_cores(GRID, "5,3;1,2", None) == [(5, 3), (1, 2)]
    assert choose_cores(GRID, "5,3;1,2", 1) == [(5, 3)]
    with pytest.raises(PlacementError, match="core 4,2 is not a Tensix core of this device"):
        choose_cores(HARVESTED, "4,2", None)
    with pytest.raises(PlacementError, match="core 0,0 is not a Tensix core"):
        choose_cores(GRID, "0,0", None)
    with pytest.raises(PlacementError, match="--jobs 3 needs 3 cores; --core lists 2"):
        choose_cores(GRID, "1,2;2,2", 3)
    with pytest.raises(PlacementError, match="--jobs 141 needs 141 cores; the device has 140"):
        choose_cores(GRID, None, 141)


def test_device_choice():
    grids = {0: GRID, 1: HARVESTED}
    assert place([1, 0], grids.get, None, None, None) == (0, [(1, 2)])
    assert place([0, 1], grids.get, 1, "all", 4) == (1, HARVESTED[:4])
    with pytest.raises(PlacementError, match=r"no device 2 \(tt-exalens found 0, 1\)"):
        place([0, 1], grids.get, 2, None, None)


def test_xdist_workers_take_a_device_each_or_cores_of_one():
    grids = {0: GRID, 1: GRID, 2: GRID}
    # enough devices: worker k takes device k (and the usual cores on it)
    assert [place([0, 1, 2], grids.get, None, None, None, (k, 3)) for k in range(3)] == \
        [(0, [(1, 2)]), (1, [(1, 2)]), (2, [(1, 2)])]
    # one device: worker k takes the k-th core (of --core when given), or k-th group of --jobs cores
    assert [place([0], grids.get, None, None, None, (k, 4))[1] for k in range(4)] == [[c] for c in GRID[:4]]
    assert place([0], grids.get, None, "5,3;6,3;7,3", None, (2, 3)) == (0, [(7, 3)])
    assert place([0], grids.get, None, None, 2, (1, 2)) == (0, GRID[2:4])
    # fewer devices than workers: round robin over devices, then cores
    assert [place([0, 1], grids.get, None, None, None, (k, 3)) for k in range(3)] == \
        [(0, [(1, 2)]), (1, [(1, 2)]), (0, [(2, 2)])]
    # --device-id pins every worker to that device
    assert place([0, 1, 2], grids.get, 1, None, None, (2, 3)) == (1, [GRID[2]])
    with pytest.raises(PlacementError, match="xdist worker gw2: 2 cores of device 0 for 3 workers"):
        place([0], grids.get, None, "1,2;2,2", None, (2, 3))


def test_xdist_share_from_the_environment():
    assert xdist_share({}) is None
    assert xdist_share({"PYTEST_XDIST_WORKER": "gw3", "PYTEST_XDIST_WORKER_COUNT": "8"}) == (3, 8)
    assert xdist_share({"PYTEST_XDIST_WORKER": "master"}) is None


def test_two_cards_are_two_devices_and_two_chips_of_one_board_too():
    card = {"arch": "blackhole", "board_id": "0x100014611904047", "asic_location": 0}
    assert device_key(card) == "blackhole silicon 0x100014611904047"
    assert device_key({**card, "board_id": "0x100014611904048"}) != device_key(card)
    assert device_key({**card, "asic_location": 1}) == "blackhole silicon 0x100014611904047 chip 1"
    assert device_key({"arch": "blackhole", "board_id": "not readable", "chip_unique_id": "0x7a"}) == \
        "blackhole silicon chip 0x7a"
    assert device_key({"board_id": NOT_TTSIM}) == "blackhole silicon"


@pytest.mark.parametrize("argv, says", [
    (["--core", "1"], "--core '1': give X,Y"),
    (["--core", "1,2;1,2"], "more than once"),
    (["--jobs", "0"], "--jobs takes a whole number of at least 1"),
    (["--jobs", "two"], "--jobs takes a whole number"),
    (["--device-id", "-1"], "--device-id takes a device number"),
])
def test_bad_values_one_line_exit_2(tmp_path, capsys, argv, says):
    case = tmp_path / "c.yaml"
    case.write_text("name: c\nthreads:\n  0: [NOP]\n")
    for cmd in (["run", str(case), "--backend", "hw"], ["fuzz", "--count", "1", "--backend", "hw"],
                ["record", str(case)]):
        assert main(cmd + argv) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and says in err[0], err
    if "--jobs" not in argv:          # minimize takes the device options, not --jobs
        assert main(["minimize", str(case), "--backend", "hw"] + argv) == 2
        assert says in capsys.readouterr().err


def test_pytest_says_a_bad_value_in_one_line_exit_2(tmp_path):
    import subprocess
    import sys
    from pathlib import Path
    root = Path(__file__).resolve().parents[2]
    (tmp_path / "conftest.py").write_text((root / "conftest.py").read_text())
    (tmp_path / "test_x.py").write_text("def test_x():\n    pass\n")
    env = {"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--backend=hw", "--core=9",
                        "test_x.py"], cwd=tmp_path, capture_output=True, text=True, env=env, timeout=120)
    lines = [ln for ln in (p.stdout + p.stderr).splitlines() if ln.strip()]
    assert p.returncode == 2 and lines == ["Exit: tensix-diff: --core '9': give X,Y (NOC0 coordinates), a list"
                                           " 'X,Y;X,Y' or 'all'"], p.stdout + p.stderr


class _Obj:
    def __init__(self, **kw):
        self.__dict__.update(kw)


def _card(board: int | None, loc: int = 0):
    """tt-umd's objects as a card reports them (stand-ins: this test needs no card)."""
    def board_id():
        if board is None:
            raise RuntimeError("ARC did not answer")
        return board
    fw = _Obj(get_firmware_version=lambda: "18.7.0", get_aiclk=lambda: 1350, get_axiclk=lambda: 900,
              get_arcclk=lambda: 540)
    tt = _Obj(get_board_id=board_id, get_board_type=lambda: "BoardType.P300",
              get_chip_info=lambda: _Obj(asic_location=loc, harvesting_masks=_Obj(tensix_harvesting_mask=0x2)),
              get_firmware_info_provider=lambda: fw)
    desc = _Obj(get_board_id_for_chip=lambda c: board_id(), get_chip_unique_ids=lambda: {0: 0xABC},
                get_chip_pci_bdfs=lambda: {0: "0000:41:00.0"})
    ctx = _Obj(umd_api=_Obj(get_cluster_descriptor=lambda: desc))
    return ctx, _Obj(is_simulation=False, arch="ARCH.BLACKHOLE"), tt


def test_a_cards_identity_and_key():
    from hwbridge.hw.identity import read
    ctx, umd_dev, tt = _card(0x100014611904047, loc=1)
    ident = read(ctx, 0, umd_dev, tt, 120, [(4, 2), (13, 2)])
    assert ident == {"arch": "blackhole", "device_id": 0, "tensix_cores": 120, "harvested_tensix": ["4,2", "13,2"],
                     "board_id": "0x100014611904047", "board_type": "p300", "chip_unique_id": "0xabc",
                     "asic_location": 1, "tensix_harvesting_mask": "0x2", "firmware": "18.7.0", "aiclk_mhz": 1350,
                     "axiclk_mhz": 900, "arcclk_mhz": 540, "pci_bdf": "0000:41:00.0"}
    assert device_key(ident) == "blackhole silicon 0x100014611904047 chip 1"
    ctx, umd_dev, tt = _card(None)
    ident = read(ctx, 0, umd_dev, tt, 140, [])
    assert ident["board_id"] == "not readable" and device_key(ident) == "blackhole silicon chip 0xabc"


def test_ttsims_identity_says_what_it_does_not_report():
    from hwbridge.hw.identity import read
    ctx, _, tt = _card(0x40000000000)          # tt-umd's mock cluster descriptor answers; ttsim does not
    ident = read(ctx, 0, _Obj(is_simulation=True, arch="ARCH.BLACKHOLE"), tt, 140, [])
    assert ident["arch"] == "blackhole" and ident["tensix_cores"] == 140 and ident["harvested_tensix"] == []
    assert {k for k, v in ident.items() if v == NOT_TTSIM} == {
        "board_id", "board_type", "chip_unique_id", "asic_location", "tensix_harvesting_mask", "firmware",
        "aiclk_mhz", "axiclk_mhz", "arcclk_mhz", "pci_bdf"}
