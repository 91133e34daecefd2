"""Which card (or simulator) a backend drives: board, chip, harvesting, firmware and clocks, and the store key.

Read once in the worker process through tt-umd's public API (TTDevice.get_chip_info, get_board_id,
get_firmware_info_provider; the cluster descriptor tt-exalens discovered). Under ttsim the TTDevice is never
initialised and its cluster descriptor is one tt-umd makes up (a mock), so those fields say
``not reported by ttsim``; the SoC descriptor (Tensix cores, harvested cores) is read for both.
"""
from __future__ import annotations

NOT_TTSIM = "not reported by ttsim"
NOT_READ = "not readable"


def _try(fn, absent: str):
    try:
        value = fn()
    except Exception:  # noqa: BLE001 - a field the device does not report
        return absent
    return absent if value is None else value


def _name(value) -> str:
    text = str(value)
    return text.rsplit(".", 1)[-1].lower()


class _Silent:
    """A TTDevice that answers nothing (the public API hands out no TTDevice for a remote chip)."""

    def __getattr__(self, name):
        def refuse():
            raise LookupError(name)
        return refuse


def read(ctx, device_id: int, umd_dev, tt_device, tensix_cores: int, harvested: list) -> dict:
    """The identity of device ``device_id``: everything a card reports about itself that can tell two cards,
    or two chips of one board, apart (plain data: it goes into provenance). ``tt_device``: its tt_umd.TTDevice,
    None for a chip reached over Ethernet."""
    sim = bool(umd_dev.is_simulation)
    absent = NOT_TTSIM if sim else NOT_READ
    ident: dict = {
        "arch": _name(_try(lambda: umd_dev.arch, absent)),
        "device_id": device_id,
        "tensix_cores": tensix_cores,
        "harvested_tensix": [f"{x},{y}" for x, y in harvested],
    }
    if sim:
        for key in ("board_id", "board_type", "chip_unique_id", "asic_location", "tensix_harvesting_mask",
                    "firmware", "aiclk_mhz", "axiclk_mhz", "arcclk_mhz", "pci_bdf"):
            ident[key] = NOT_TTSIM
        return ident
    desc = _try(lambda: ctx.umd_api.get_cluster_descriptor(), None)
    if tt_device is None:                  # a chip reached over Ethernet: only the cluster descriptor speaks for it
        tt_device = _Silent()
    info = _try(tt_device.get_chip_info, None)
    board = _try(tt_device.get_board_id, None)
    if board is None and desc is not None:
        board = _try(lambda: desc.get_board_id_for_chip(device_id), None)
    ident["board_id"] = f"{board:#x}" if isinstance(board, int) else absent
    ident["board_type"] = _name(_try(tt_device.get_board_type, absent))
    unique = _try(lambda: desc.get_chip_unique_ids()[device_id], None) if desc is not None else None
    ident["chip_unique_id"] = f"{unique:#x}" if isinstance(unique, int) else absent
    ident["asic_location"] = _try(lambda: info.asic_location, absent) if info is not None else absent
    mask = _try(lambda: info.harvesting_masks.tensix_harvesting_mask, None) if info is not None else None
    ident["tensix_harvesting_mask"] = f"{mask:#x}" if isinstance(mask, int) else absent
    fw = _try(tt_device.get_firmware_info_provider, None)
    ident["firmware"] = str(_try(fw.get_firmware_version, absent)) if fw is not None else absent
    for clock in ("aiclk", "axiclk", "arcclk"):
        ident[f"{clock}_mhz"] = _try(getattr(fw, f"get_{clock}"), absent) if fw is not None else absent
    ident["pci_bdf"] = _try(lambda: desc.get_chip_pci_bdfs()[device_id], absent) if desc is not None else absent
    return ident


def device_key(ident: dict) -> str:
    """The store's device name for a card: ``blackhole silicon <board id>``, plus ``chip N`` for the second chip
    of a two-chip board (P300), so two cards, or two chips of one card, are two devices. A card whose board id
    cannot be read is named by its chip's unique id; with neither it is plain ``blackhole silicon``."""
    arch = ident.get("arch") if ident.get("arch") not in (None, NOT_READ, NOT_TTSIM) else "blackhole"
    board, unique, loc = ident.get("board_id"), ident.get("chip_unique_id"), ident.get("asic_location")
    if isinstance(board, str) and board.startswith("0x"):
        return f"{arch} silicon {board}" + (f" chip {loc}" if isinstance(loc, int) and loc else "")
    if isinstance(unique, str) and unique.startswith("0x"):
        return f"{arch} silicon chip {unique}"
    return f"{arch} silicon"
