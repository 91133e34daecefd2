"""Random literal tt-llk pipelines: unpack -> math -> pack kernels with drawn parameters, as three threads.

A profile with a ``pipeline`` key (configs/profiles/pipeline.yaml) builds its cases here instead of from
single instructions: the kernel (datacopy, transpose, eltwise binary with broadcasts and fidelities, matmul
over CT x KT tiles, row/column/scalar reductions, tilize, pack untilize), the L1 input format (BF16, FP16,
Bfp8_b/Bfp4_b/Bfp2_b), the pack output format, ReLU, L1 accumulation, a 32-bit Dest, the number of tiles and
their data. Each thread is what the tt-llk
Blackhole functions issue (generators.llk_unpack / llk_math / llk_pack, commit 36b092e8), RISC-V side
included, so the whole data path L1 -> UNPACR -> math -> PACR -> L1 is exercised as kernels use it.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from golden.fpu_formats import BF16, BFP2, BFP4, BFP8, BFP8A, FP16, FP32, INT8, INT32
from golden.pack.l1_acc import FORMATS as L1_ACC_OUTPUTS
from tensix_diff.case import Case, Init, Observe

from . import llk_math as M
from . import llk_pack as P
from . import llk_unpack as U
from .draw import Draw
from .llk_thread import KernelThread

FORMAT_NAMES = {FP32: "Float32", FP16: "Float16", BF16: "Float16_b", BFP8: "Bfp8_b", BFP4: "Bfp4_b", BFP2: "Bfp2_b",
                INT8: "Int8", INT32: "Int32", BFP8A: "Bfp8"}
DEST_OF = {BF16: BF16, FP16: FP16, BFP8: BF16, BFP4: BF16, BFP2: BF16}
PACK_OUTPUTS = {BF16: (BF16, FP32, BFP8, BFP4, BFP2), FP16: (FP16, FP32, BF16)}   # golden.pack_formats modes
TILE_BYTES = {FP32: 4096, FP16: 2048, BF16: 2048, BFP8: 64 + 1024, BFP4: 64 + 512, BFP2: 64 + 256, INT8: 1024,
              INT32: 4096}
A_BASE, B_BASE, OUT_BASE, SLOT = 0x20000, 0x30000, 0x40000, 0x1000
KERNELS = ("datacopy", "transpose", "eltwise", "matmul", "reduce", "tilize", "untilize", "eltwise-int8", "matmul-int8",
           "reduce-dst32")
# Kernels whose correctness rests on the unpacker setting SrcB valid before the matrix unit's SETRWC CLR_AB
# (SETRWC.md flips without waiting): golden's other schedules deadlock, so they pin the sequential one.
TIMING_PINNED = ("datacopy", "tilize", "untilize")


@dataclass(frozen=True)
class Pipeline:
    kernel: str
    in_fmt: int = BF16
    out_fmt: int = BF16
    relu: int = 0                  # STACC_RELU mode | threshold << 16
    blocks: int = 1
    per_block: int = 1
    op: str = "ELWADD"             # eltwise: ELWADD / ELWSUB / ELWMUL; reduce: SUM / MAX
    bcast: str = "NONE"
    fidelity: int = 0
    dim: str = "COL"               # reduce
    ct_dim: int = 1                # matmul
    kt_dim: int = 1
    l1_acc: bool = False           # pack with L1 accumulation onto the output tiles' earlier contents
    fp32_dest: bool = False        # is_fp32_dest_acc_en: a 32-bit Dest; the packer reads it as out_fmt
    pack_in: int | None = None     # the packer's input format when not the default (pack_src): Bfp8_b / Bfp8
    pack_y_cr: bool = False        # the pack AddrMods return Ysrc to its checkpoint instead of clearing it

    @property
    def tiles(self) -> int:
        return self.ct_dim if self.kernel == "matmul" else self.blocks * self.per_block

    def text(self) -> str:
        parts = [self.kernel, f"{FORMAT_NAMES[self.in_fmt]} -> {FORMAT_NAMES[self.out_fmt]}"]
        if self.kernel == "eltwise":
            parts.append(f"{self.op} bcast {self.bcast} fidelity {self.fidelity}")
        if self.kernel == "reduce":
            parts.append(f"{self.op} {self.dim}")
        if self.kernel == "matmul":
            parts.append(f"CT {self.ct_dim} KT {self.kt_dim} fidelity {self.fidelity}")
        if self.kernel in ("datacopy", "eltwise", "untilize"):
            parts.append(f"{self.blocks} block(s) of {self.per_block}")
        if self.relu:
            parts.append(f"relu {self.relu & 0xF} threshold {self.relu >> 16:#x}")
        if self.l1_acc:
            parts.append("L1 accumulation")
        if self.fp32_dest:
            parts.append("FP32 Dest")
        if self.pack_in is not None:
            parts.append(f"packer input {FORMAT_NAMES[self.pack_in]}")
        if self.pack_y_cr:
            parts.append("pack AddrMods YsrcCR")
        return ", ".join(parts)


@dataclass(frozen=True)
class Narrowing:
    """A profile's ``pipeline_draw`` key: what draw_pipeline may pick, narrowed to reach given matrix cells.
    ``inputs``: L1 input format -> weight (kernels that take none of them are not drawn); ``fp32_dest``: the
    probability of a 32-bit Dest where the kernel allows one; ``fidelity``: math fidelity -> weight (0 LoFi,
    2..4 HiFi2..HiFi4, which run phases 0..fidelity-1); ``bfp_pack_in``: the probability of a block-float
    packer input (bfp_pack_in below); ``pack_y_cr``: the probability of Pipeline.pack_y_cr."""
    inputs: dict[int, float] | None = None
    fp32_dest: float = 0.3
    fidelity: dict[int, float] | None = None
    bfp_pack_in: float = 0.0
    pack_y_cr: float = 0.0


FIDELITIES = (0, 2, 3, 4)
WIDE = Narrowing()
# L1 input formats each kernel takes (repeats weight the unnarrowed draw); the matrix unit's MVMUL and
# ELWMUL take no BFP2 operands (ttsim refuses), so eltwise and matmul do not draw it
KERNEL_INPUTS = {"reduce": (BF16,), "tilize": (BF16,), "eltwise-int8": (INT8,), "matmul-int8": (INT8,),
                 "reduce-dst32": (BF16,),
                 **{k: (BF16, BF16, FP16, BFP8, BFP8, BFP4, BFP2) for k in ("datacopy", "transpose", "untilize")},
                 **{k: (BF16, BF16, FP16, BFP8, BFP8, BFP4) for k in ("eltwise", "matmul")}}


def _input(draw: Draw, kernel: str, narrow: Narrowing) -> int:
    choices = KERNEL_INPUTS[kernel]
    if narrow.inputs is None:        # one-format kernels draw nothing (the random streams of recorded seeds)
        return choices[0] if len(choices) == 1 else draw.choice(choices)
    allowed = [f for f in narrow.inputs if f in choices]
    return draw.weighted(allowed, [narrow.inputs[f] for f in allowed])


def _fidelity(draw: Draw, narrow: Narrowing) -> int:
    if narrow.fidelity is None:
        return draw.choice(FIDELITIES)
    return draw.weighted(list(narrow.fidelity), list(narrow.fidelity.values()))


def draw_pipeline(draw: Draw, kernels: dict[str, float], narrow: Narrowing = WIDE) -> Pipeline:
    """A pipeline whose every choice stays inside what golden models (tt-llk's own asserts respected).
    ``eltwise-int8`` is the eltwise kernel as tt-llk tests it on Int8 (tests/python_tests/test_zzz_eltwise_binary.py
    test_eltwise_binary_int8_format: Int8 in, ELWADD/ELWSUB, no broadcast, LoFi, a 32-bit Dest, Int8 out), widened
    to what the same LLK calls accept: ELWMUL at every fidelity, and an Int32 output (packer input Int32).
    ``matmul-int8`` is the matmul kernel on Int8 tiles the same way (MVMUL with INT8_math_enabled, which ttsim
    v1.10.0 accepts with both Src formats Int8, tensix.cpp:1440-1442, always into a 32-bit Dest, :1450);
    ``reduce-dst32`` the reduce kernel's program with a 32-bit Dest (GMPOOL/GAPOOL accumulate in Dst32b)."""
    names = [k for k in KERNELS if kernels.get(k, 0) > 0
             and (narrow.inputs is None or set(narrow.inputs) & set(KERNEL_INPUTS[k]))]
    kernel = draw.weighted(names, [kernels[k] for k in names])
    if kernel == "eltwise-int8":                    # ELWMUL half the time: its fidelity phases are the new cells
        op = draw.choice(("ELWADD", "ELWSUB", "ELWMUL", "ELWMUL"))
        out, blocks, per_block = draw.choice((INT8, INT32)), draw.integer(1, 2), draw.integer(1, 2)
        fidelity = _fidelity(draw, narrow) if op == "ELWMUL" else 0
        return Pipeline("eltwise", INT8, out, blocks=blocks, per_block=per_block, op=op, fidelity=fidelity,
                        fp32_dest=True)
    if kernel == "matmul-int8":                     # the matmul kernel on Int8 tiles, INT8_math_enabled
        return Pipeline("matmul", INT8, draw.choice((INT8, INT32)), fidelity=_fidelity(draw, narrow),
                        ct_dim=draw.integer(1, 2), kt_dim=draw.integer(1, 2), fp32_dest=True)
    if kernel == "reduce-dst32":                    # the reduce kernel's program with a 32-bit Dest
        return Pipeline("reduce", BF16, draw.choice((FP32, BF16)), op=draw.choice(("SUM", "MAX")),
                        dim=draw.choice(("ROW", "COL", "SCALAR")), fp32_dest=True)
    in_fmt = _input(draw, kernel, narrow)
    outputs = PACK_OUTPUTS[DEST_OF[in_fmt]]
    if kernel == "untilize":                        # row-major output: no block-float
        outputs = tuple(f for f in outputs if f in (FP32, FP16, BF16))
    out_fmt = draw.choice(outputs)
    relu = 0
    if draw.boolean(0.2):
        mode = draw.integer(1, 3)
        relu = mode | (draw.choice((0x3F80, 0x3C00, 0x4100, 0x0000)) << 16 if mode > 1 else 0)
    if kernel == "eltwise":
        op = draw.choice(("ELWADD", "ELWSUB", "ELWMUL"))
        return Pipeline(kernel, in_fmt, out_fmt, relu, draw.integer(1, 2), draw.integer(1, 2), op,
                        draw.choice(("NONE", "NONE", "COL", "ROW", "SCALAR")),
                        _fidelity(draw, narrow) if op == "ELWMUL" else 0)
    if kernel == "matmul":
        return Pipeline(kernel, in_fmt, out_fmt, relu, fidelity=_fidelity(draw, narrow),
                        ct_dim=draw.integer(1, 2), kt_dim=draw.integer(1, 2))
    if kernel == "reduce":
        return Pipeline(kernel, in_fmt, out_fmt, relu, op=draw.choice(("SUM", "MAX")),
                        dim=draw.choice(("ROW", "COL", "SCALAR")))
    if kernel in ("datacopy", "untilize"):
        return Pipeline(kernel, in_fmt, out_fmt, relu, draw.integer(1, 2), draw.integer(1, 2))
    return Pipeline(kernel, in_fmt, out_fmt, relu)


def tile_bytes(fmt: int, rng: np.random.Generator, exps=(0x70, 0x90)) -> bytes:
    """One 32x32 tile in L1 (faces in order): BF16/FP16/FP32 patterns from a few magnitudes or raw bits; BFP
    tiles as 64 shared exponents then the sign-magnitude datums."""
    if fmt == INT8:                                 # sign-magnitude, -50..50 as tt-llk's Int8 test draws them
        vals = rng.integers(-50, 51, 1024)
        return (np.where(vals < 0, 0x80, 0) | np.abs(vals)).astype(np.uint8).tobytes()
    if fmt in (BFP8, BFP4, BFP2):
        bits = {BFP8: 8, BFP4: 4, BFP2: 2}[fmt]
        return (rng.integers(*exps, 64, dtype=np.uint8).tobytes()
                + rng.integers(0, 256, 1024 * bits // 8, dtype=np.uint8).tobytes())
    if rng.random() < 0.25:
        if fmt == FP32:
            return rng.integers(0, 1 << 32, 1024, dtype=np.uint32).astype("<u4").tobytes()
        return rng.integers(0, 1 << 16, 1024, dtype=np.uint16).astype("<u2").tobytes()
    vals = rng.choice([-3.5, -1.0, -0.25, 0.0, 0.5, 1.0, 2.75, -100.0, 7.0, 0.1, 300.0, -2.0, 1e-3], 1024)
    vals = vals * rng.integers(1, 8, 1024)
    if fmt == FP16:
        with np.errstate(over="ignore"):
            return vals.astype("<f2").tobytes()
    if fmt == FP32:
        return vals.astype("<f4").tobytes()
    return (vals.astype("<f4").view("<u4") >> 16).astype("<u2").tobytes()


def threads(p: Pipeline, a: list[int], b: list[int], out: list[int]) -> tuple[KernelThread, ...]:
    """The three TRISCs of pipeline ``p``; a, b, out are L1_ADDRESS values of the input and output tiles."""
    u, m, k = KernelThread(0), KernelThread(1), KernelThread(2)
    dst = pack_src(p)
    tile16 = TILE_BYTES[p.in_fmt] // 16
    sizes = (tile16, tile16) if p.kernel in ("eltwise", "matmul", "reduce") else (0, 0)   # as the tests pass them
    U.hw_configure(u, p.in_fmt, p.in_fmt, p.in_fmt, p.in_fmt, sizes)
    if p.kernel in ("eltwise", "reduce"):          # the order each tt-llk test calls the math inits in
        M.pack_sync_init(m)
        M.hw_configure(m, p.fp32_dest, p.in_fmt == INT8)
    if p.kernel in ("datacopy", "transpose", "tilize", "untilize"):
        if p.kernel == "tilize":
            U.tilize_init(u, p.in_fmt)
            U.tilize(u, a[0], 0)
        else:
            U.A_init(u, int(p.kernel == "transpose"))
            for i, addr in enumerate(a):
                U.A(u, addr, i % 2)
        M.datacopy_init(m, tilize=p.kernel == "tilize", fp32_dest=p.fp32_dest)
    elif p.kernel == "eltwise":
        U.AB_init(u, p.bcast)
        for i, (x, y) in enumerate(zip(a, b)):
            U.AB(u, x, y, i % 2)
        M.binary_init(m, p.op, p.fidelity, p.bcast)
    elif p.kernel == "matmul":
        U.matmul_init(u, p.kt_dim)
        for j in range(p.kt_dim):
            U.matmul(u, a[0] + tile16 * j, b[0] + tile16 * j * p.ct_dim, j % 2, p.ct_dim)
        M.matmul_init(m, p.fidelity)
    else:
        U.reduce_init(u, p.dim)
        U.AB(u, a[0], b[0], 0)
        M.reduce_init(m)
    if p.kernel not in ("eltwise", "reduce"):
        M.pack_sync_init(m)
        M.hw_configure(m, p.fp32_dest, p.in_fmt == INT8)
    if p.kernel == "untilize":
        M.reconfig_remap(m)
    base, blocks = 0, (p.blocks if p.kernel in ("datacopy", "eltwise", "untilize") else 1)
    per_block = p.tiles // blocks
    for blk in range(blocks):
        M.wait_for_dest(m)
        for t in range(per_block):
            if p.kernel == "eltwise":
                M.binary(m, p.op, p.fidelity, p.bcast, t, base)
            elif p.kernel == "reduce":
                M.reduce(m, p.op, p.dim, t, base)
            elif p.kernel != "matmul":
                M.datacopy(m, t, base)
        if p.kernel == "matmul":
            for _ in range(p.kt_dim):
                M.matmul(m, p.ct_dim, base)
        base = M.DEST_HALF - base
        M.dest_section_done(m, base)
    if p.kernel == "untilize":                      # tt-llk tests/sources/pack_untilize_test.cpp, one tile row
        P.hw_configure(k, dst, p.out_fmt, p.relu, untilize=True)
        P.dest_init(k)
        P.untilize_init(k, per_block, p.tiles, dst, p.out_fmt)
        if p.l1_acc:
            P.reconfig_l1_acc(k, 1)
        for blk in range(blocks):
            P.wait_for_math(k)
            P.untilize_block(k, out[0] + blk * per_block * 2 * 16 * P.DATUM_BYTES[p.out_fmt] // 16)
            P.dest_section_done(k, blk)
        P.untilize_uninit(k, dst)
        return u, m, k
    P.hw_configure(k, dst, p.out_fmt, p.relu, tilize=p.kernel == "tilize", fp32_dest=p.fp32_dest)
    P.init(k, tilize=p.kernel == "tilize", y_cr=p.pack_y_cr)
    if p.kernel == "reduce":
        P.reduce_mask(k, p.dim)
    P.dest_init(k)
    if p.l1_acc:                                    # where tests/sources/pack_dest_bank_test.cpp sets it
        P.reconfig_l1_acc(k, 1)
    for blk in range(blocks):
        P.wait_for_math(k)
        for t in range(per_block):
            P.tile(k, t, out[blk * per_block + t])
        P.dest_section_done(k, blk, p.fp32_dest)
    if p.kernel == "reduce":
        P.reduce_mask_clear(k)
    return u, m, k


FP32_DEST_KERNELS = ("datacopy", "eltwise", "matmul")
FP32_DEST_OUTPUTS = (FP32, FP16, BF16)              # the packer's input format is the output format


def pack_src(p: Pipeline) -> int:
    """The packer's input format (tt-llk tests' infer_pack_in on Blackhole): the Dest format of a 16-bit Dest,
    the output format of a 32-bit one, unless the pipeline names one."""
    if p.pack_in is not None:
        return p.pack_in
    return p.out_fmt if p.fp32_dest else DEST_OF[p.in_fmt]


def bfp_pack_in(draw: Draw, p: Pipeline) -> Pipeline:
    """``p`` packed from a block-float input format where tt-llk's infer_pack_in gives one and ttsim v1.10.0 PACR
    accepts it (tensix.cpp pack_fmt_conv_mode 0x26, 0x60, 0x65..0x67, 0x166, 0x167): a Bfp8_b tile through a
    16-bit Dest packed from Bfp8_b to BF16, FP32, Bfp8_b or Bfp4_b; a 32-bit Dest packed from Bfp8_b to Bfp8_b
    or Bfp4_b; a Float16 tile packed from Bfp8 (a) to Bfp8_b. Unchanged when none applies."""
    options = []
    if p.kernel != "untilize" and p.in_fmt == BFP8:
        options += [(BFP8, out, False) for out in (BF16, FP32, BFP8, BFP4)]
    if p.kernel in FP32_DEST_KERNELS:
        options += [(BFP8, out, True) for out in (BFP8, BFP4)]
    if p.kernel != "untilize" and p.in_fmt == FP16:
        options.append((BFP8A, BFP8, False))
    if not options:
        return p
    pack_in, out, wide = draw.choice(options)
    return replace(p, pack_in=pack_in, out_fmt=out, fp32_dest=wide)


def build_pipeline_case(draw: Draw, kernels: dict[str, float], name: str, narrow: Narrowing = WIDE) -> Case:
    p = draw_pipeline(draw, kernels, narrow)
    if narrow.bfp_pack_in and draw.boolean(narrow.bfp_pack_in):
        p = bfp_pack_in(draw, p)
    if narrow.pack_y_cr and p.kernel not in ("tilize", "untilize") and draw.boolean(narrow.pack_y_cr):
        p = replace(p, pack_y_cr=True)
    if p.out_fmt in L1_ACC_OUTPUTS and draw.boolean(0.25):
        p = replace(p, l1_acc=True)
    if p.kernel in FP32_DEST_KERNELS and not p.fp32_dest and p.pack_in is None and draw.boolean(narrow.fp32_dest):
        p = replace(p, fp32_dest=True, out_fmt=draw.choice(FP32_DEST_OUTPUTS if p.in_fmt == FP16 else (FP32, BF16)))
    return pipeline_case(p, np.random.default_rng(draw.integer(0, 2 ** 32 - 1)), name)


def pipeline_case(p: Pipeline, rng: np.random.Generator, name: str) -> Case:
    """The case running pipeline ``p`` on input tiles drawn from ``rng``."""
    n_a = p.kt_dim if p.kernel == "matmul" else p.tiles
    n_b = p.kt_dim * p.ct_dim if p.kernel == "matmul" else (p.tiles if p.kernel == "eltwise" else 1)
    a = [A_BASE + SLOT * i for i in range(n_a)]
    b = [B_BASE + SLOT * i for i in range(n_b if p.kernel in ("eltwise", "matmul", "reduce") else 0)]
    size = TILE_BYTES[p.out_fmt]
    out = [OUT_BASE + SLOT * i for i in range(p.tiles)]
    if p.kernel in ("matmul", "untilize"):          # consecutive tiles (matmul: the replay bumps the base)
        step = TILE_BYTES[p.in_fmt]
        a = [A_BASE + step * i for i in range(n_a)]
        b = [B_BASE + step * i for i in range(n_b)]
        out = [OUT_BASE + size * i for i in range(p.tiles)]
    l1 = [(x, tile_bytes(p.in_fmt, rng)) for x in a]
    if p.kernel == "reduce":                        # the scaler tile: one value everywhere
        value = 0x3F80 if p.op == "MAX" else rng.choice([0x3F80, 0x3F00, 0x3E80, 0x4000])   # GMPOOL needs 1.0
        scaler = np.full(1024, value, dtype="<u2")
        l1.append((b[0], scaler.tobytes()))
    else:
        l1 += [(y, tile_bytes(p.in_fmt, rng)) for y in b]
    l1 += [(o, tile_bytes(p.out_fmt, rng) if p.l1_acc else bytes(size)) for o in out]
    u, m, k = threads(p, [(x >> 4) - 1 for x in a], [(y >> 4) - 1 for y in b], [(o >> 4) - 1 for o in out])
    tags = ["pipeline", "llk", p.kernel] + (["schedule:sequential"] if p.kernel in TIMING_PINNED else [])
    tags += ["dest-remap"] if p.kernel == "untilize" else []    # math turns Dst remap_addrs on
    return Case(name=name, description=f"Probes a literal tt-llk pipeline (commit 36b092e8): {p.text()}.",
                threads={t.t: t.words for t in (u, m, k)}, init=Init(l1=l1),
                observe=Observe(l1=[(o, size) for o in out]),
                actions={t.t: t.actions for t in (u, m, k) if t.actions}, tags=tags)
