"""Generator profiles (configs/profiles/*.yaml): instruction weights, program lengths, threads, set-up style."""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import yaml

from golden import isa, yaml_tables

from .pipeline import FIDELITIES, FORMAT_NAMES, KERNELS, KERNEL_INPUTS, Narrowing

CONFIGS = Path(__file__).resolve().parent.parent / "configs"
PROFILE_DIR = CONFIGS / "profiles"
OBSERVABILITY = ("hw", "full")
THREAD_CONFIG_SETUPS = ("auto", "setc16", "init")
GOLDEN_ACCEPT = ("modelled", "effects", "absent", "handler")   # handler: golden has semantics registered
KEYS = {"description", "length", "threads", "golden", "observability", "thread_config_setup", "config_state",
        "dest_rows", "dest_edges", "gpr_special", "addrmod", "overrides", "thread_mix", "templates", "weights",
        "formats", "pipeline", "pipeline_draw"}


class ProfileError(ValueError):
    """A profile file or name that cannot be used (one line)."""


@dataclass(frozen=True)
class Profile:
    name: str
    description: str
    weights: dict[str, float]
    length: tuple[int, int] = (1, 64)
    threads: dict[int, float] = field(default_factory=lambda: {1: 1.0})
    golden: tuple[str, ...] = ("modelled",)
    observability: str = "hw"
    thread_config_setup: str = "auto"
    config_state: dict[int, float] = field(default_factory=lambda: {0: 1.0})
    dest_rows: tuple[int, int] = (0, 64)
    dest_edges: float = 0.0   # probability that a Dest cell is an edge value (generators/values.py)
    gpr_special: float = 0.3
    sections: tuple[int, ...] = tuple(range(8))
    addrmod_align: dict[str, int] = field(default_factory=dict)
    addrmod_fixed: dict[str, int] = field(default_factory=dict)
    addrmod_max: dict[str, int] = field(default_factory=dict)
    overrides: dict[str, dict[str, dict]] = field(default_factory=dict)
    thread_mix: dict[str, float] = field(default_factory=lambda: {"self": 1.0})
    templates: dict[str, float] = field(default_factory=dict)
    formats: "Formats | None" = None
    pipeline: dict[str, float] | None = None   # kernel -> weight: build literal tt-llk pipelines (generators.pipeline)
    pipeline_draw: "Narrowing | None" = None   # what the pipeline draw may pick (None: everything)


@dataclass(frozen=True)
class Formats:
    """The matrix unit's operand formats, drawn once per case when a profile gives them: a (SrcA, SrcB) data
    format pair by weight ('A/B', or 'A/B/32' / 'A/B/16' to fix the Dst width for that pair), an FP32 Dst
    with probability ``fp32_dest`` otherwise, and a fidelity phase base."""
    pairs: dict[tuple[int, int, int], float]     # (A, B, Dst bits or 0 for drawn)
    fp32_dest: float = 0.0
    fidelity: tuple[int, ...] = (0,)


def _formats(raw, where: str) -> Formats | None:
    if raw is None:
        return None
    _need(isinstance(raw, dict) and set(raw) <= {"pairs", "fp32_dest", "fidelity"} and "pairs" in raw, where,
          "formats takes pairs ({'A/B': weight}), fp32_dest and fidelity")
    pairs = {}
    for k, w in _weights(raw["pairs"], where, "formats.pairs").items():
        try:
            a, b, *bits = (int(x) for x in k.split("/"))
        except ValueError:
            raise ProfileError(f"{where}: formats.pairs key {k!r} must be 'A/B' or 'A/B/32|16'") from None
        _need(0 <= a <= 15 and 0 <= b <= 15, where, f"formats.pairs {k}: data format codes are 0..15")
        _need(bits in ([], [16], [32]), where, f"formats.pairs {k}: the Dst width is 16 or 32")
        pairs[(a, b, bits[0] if bits else 0)] = w
    fp32 = raw.get("fp32_dest", 0.0)
    _need(isinstance(fp32, (int, float)) and 0 <= fp32 <= 1, where, "formats.fp32_dest is a probability")
    fid = raw.get("fidelity", [0])
    _need(isinstance(fid, list) and fid and all(isinstance(v, int) and 0 <= v <= 3 for v in fid), where,
          "formats.fidelity lists fidelity phases 0..3")
    return Formats(pairs, float(fp32), tuple(fid))


def _narrowing(raw, where: str, kernels: dict[str, float]):
    """``pipeline_draw``: {inputs: {L1 format name: weight}, fp32_dest: probability, fidelity: {0|2|3|4: weight}},
    narrowing the pipeline profile whose kernel weights are ``kernels``."""
    _need(isinstance(raw, dict) and set(raw) <= {"inputs", "fp32_dest", "fidelity"}, where,
          "pipeline_draw takes inputs, fp32_dest and fidelity")
    codes = {name: code for code, name in FORMAT_NAMES.items()
             if any(code in formats for formats in KERNEL_INPUTS.values())}
    inputs = None
    if "inputs" in raw:
        named = _weights(raw["inputs"], where, "pipeline_draw.inputs")
        _need(set(named) <= set(codes), where, f"pipeline_draw.inputs: L1 input formats are {', '.join(codes)}")
        inputs = {codes[n]: w for n, w in named.items() if w > 0}
        _need(any(set(inputs) & set(KERNEL_INPUTS[k]) for k, w in kernels.items() if w > 0), where,
              "pipeline_draw.inputs: no kernel of the profile takes any of them")
    fid = None
    if "fidelity" in raw:
        fid = {k: w for k, w in _weights(raw["fidelity"], where, "pipeline_draw.fidelity", int).items() if w > 0}
        _need(set(fid) <= set(FIDELITIES), where, "pipeline_draw.fidelity: math fidelities are 0, 2, 3, 4")
    fp32 = raw.get("fp32_dest", Narrowing.fp32_dest)
    _need(isinstance(fp32, (int, float)) and not isinstance(fp32, bool) and 0 <= fp32 <= 1, where,
          "pipeline_draw.fp32_dest is a probability")
    return Narrowing(inputs, float(fp32), fid)


def profile_names() -> list[str]:
    return sorted(p.stem for p in PROFILE_DIR.glob("*.yaml"))


def _need(cond: bool, where: str, msg: str) -> None:
    if not cond:
        raise ProfileError(f"{where}: {msg}")


def _weights(raw, where: str, key: str, keytype=str) -> dict:
    _need(isinstance(raw, dict) and raw, where, f"'{key}' must be a non-empty mapping of name: weight")
    out = {}
    for k, w in raw.items():
        _need(isinstance(w, (int, float)) and not isinstance(w, bool) and w >= 0, where,
              f"'{key}' weight of {k} must be a number >= 0")
        try:
            out[keytype(k)] = float(w)
        except ValueError:
            raise ProfileError(f"{where}: '{key}' key {k!r} is not a {keytype.__name__}") from None
    _need(any(out.values()), where, f"'{key}' needs at least one positive weight")
    return out


def _pair(raw, where: str, key: str, lo: int, hi: int) -> tuple[int, int]:
    _need(isinstance(raw, list) and len(raw) == 2 and all(isinstance(v, int) for v in raw)
          and lo <= raw[0] <= raw[1] <= hi, where, f"'{key}' must be [min, max] within {lo}..{hi}")
    return raw[0], raw[1]


def parse_profile(name: str, raw: dict, where: str) -> Profile:
    _need(isinstance(raw, dict), where, "a profile is a mapping")
    unknown = set(raw) - KEYS
    _need(not unknown, where, f"unknown key(s) {', '.join(sorted(unknown))}")
    pipeline = None
    if "pipeline" in raw:
        pipeline = _weights(raw["pipeline"], where, "pipeline")
        _need(set(pipeline) <= set(KERNELS), where, f"pipeline: kernels are {', '.join(KERNELS)}")
    _need("weights" in raw or pipeline, where, "needs 'weights' (or 'pipeline')")
    _need("pipeline_draw" not in raw or pipeline, where, "pipeline_draw narrows a 'pipeline' profile")
    narrow = _narrowing(raw["pipeline_draw"], where, pipeline) if "pipeline_draw" in raw else None
    weights = _weights(raw["weights"], where, "weights") if "weights" in raw else {}
    for ins in weights:
        _need(ins in isa.table(), where, f"weights: '{ins}' is not an instruction in golden/isa.yaml")
    obs = raw.get("observability", "hw")
    _need(obs in OBSERVABILITY, where, f"observability must be one of {OBSERVABILITY}")
    tcs = raw.get("thread_config_setup", "auto")
    _need(tcs in THREAD_CONFIG_SETUPS, where, f"thread_config_setup must be one of {THREAD_CONFIG_SETUPS}")
    threads = _weights(raw.get("threads", {1: 1}), where, "threads", int)
    _need(all(1 <= n <= 3 for n in threads), where, "threads: thread counts are 1..3")
    state = _weights(raw.get("config_state", {0: 1}), where, "config_state", int)
    _need(all(s in (0, 1) for s in state), where, "config_state: states are 0 and 1")
    golden = raw.get("golden", ["modelled"])
    _need(isinstance(golden, list) and golden and all(g in GOLDEN_ACCEPT for g in golden), where,
          f"golden must be a list drawn from {GOLDEN_ACCEPT}")
    am = raw.get("addrmod") or {}
    _need(isinstance(am, dict) and set(am) <= {"sections", "align", "fixed", "max"}, where,
          "addrmod takes sections, align, fixed and max")
    sections = tuple(am.get("sections", range(8)))
    _need(sections and all(isinstance(s, int) and 0 <= s <= 7 for s in sections), where, "addrmod.sections are 0..7")
    align = am.get("align") or {}
    _need(isinstance(align, dict) and all(isinstance(v, int) and v >= 1 for v in align.values()), where,
          "addrmod.align maps AddrMod field names to alignments >= 1")
    fixed = am.get("fixed") or {}
    _need(isinstance(fixed, dict) and all(isinstance(v, int) and v >= 0 for v in fixed.values()), where,
          "addrmod.fixed maps AddrMod field names to the value every section gets")
    amax = am.get("max") or {}
    _need(isinstance(amax, dict) and all(isinstance(v, int) and v >= 0 for v in amax.values()), where,
          "addrmod.max maps AddrMod field names to the largest value drawn")
    overrides = raw.get("overrides") or {}
    _need(isinstance(overrides, dict) and all(k in isa.table() and isinstance(v, dict) for k, v in overrides.items()),
          where, "overrides maps instruction names to {field: constraint}")
    mix = _weights(raw.get("thread_mix", {"self": 1}), where, "thread_mix")
    for other in mix:
        _need(other == "self" or other in profile_names(), where, f"thread_mix: no profile named '{other}'")
    templates = raw.get("templates") or {}
    _need(isinstance(templates, dict) and set(templates) <= {"replay", "ccstack", "mop"}, where,
          "templates: 'replay' (REPLAY load and plays), 'ccstack' (balanced SFPU flag-stack blocks) and 'mop' "
          "(a MOP template-0 block with its MopCfg and MOP_CFG) exist")
    edges = raw.get("dest_edges", 0.0)
    _need(isinstance(edges, (int, float)) and 0 <= edges <= 1, where, "dest_edges is a probability")
    special = raw.get("gpr_special", 0.3)
    _need(isinstance(special, (int, float)) and 0 <= special <= 1, where, "gpr_special is a probability")
    return Profile(
        name=name, description=str(raw.get("description", "")), weights=weights,
        length=_pair(raw.get("length", [1, 64]), where, "length", 0, 4096), threads=threads,
        golden=tuple(golden), observability=obs, thread_config_setup=tcs, config_state=state,
        dest_rows=_pair(raw.get("dest_rows", [0, 64]), where, "dest_rows", 0, 1024), gpr_special=float(special),
        dest_edges=float(edges), sections=sections, addrmod_align=dict(align), addrmod_fixed=dict(fixed), addrmod_max=dict(amax), overrides=overrides, thread_mix=mix,
        templates={k: float(v) for k, v in templates.items()}, formats=_formats(raw.get("formats"), where),
        pipeline=pipeline, pipeline_draw=narrow)


@cache
def load_profile(name: str) -> Profile:
    """A profile by name (configs/profiles/NAME.yaml) or by path to a YAML file."""
    path = Path(name)
    if path.suffix not in (".yaml", ".yml"):
        path = PROFILE_DIR / f"{name}.yaml"
    if not path.is_file():
        raise ProfileError(f"no profile '{name}' (profiles: {', '.join(profile_names())})")
    try:
        raw = yaml_tables.parse(path.read_text())
    except yaml.YAMLError as e:
        raise ProfileError(f"{path}: invalid YAML: {str(e).splitlines()[0]}") from None
    return parse_profile(path.stem, raw, str(path))
