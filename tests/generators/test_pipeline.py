"""Literal tt-llk pipelines (generators/pipeline.py): the generator emits exactly the programs of the kernel corpus
(tests/corpus/kernels, written from the tt-llk sources and recorded on ttsim), and its random cases run on golden."""
from __future__ import annotations

from pathlib import Path

import pytest

from generators.bulk import generate_one
from generators.pipeline import BF16, BFP2, BFP4, BFP8, BFP8A, FP16, FP32, INT8, INT32, TILE_BYTES, Pipeline, threads
from hwbridge.golden_backend import GoldenBackend
from tensix_diff.case import content, load_case

KERNELS = Path(__file__).resolve().parents[1] / "corpus" / "kernels"
P = Pipeline
CORPUS = {   # corpus case -> the pipeline the generator builds for it
    "kernel-datacopy-bf16": P("datacopy"),
    "kernel-datacopy-bf16-2x2-tiles": P("datacopy", blocks=2, per_block=2),
    "kernel-datacopy-fp16": P("datacopy", FP16, FP16),
    "kernel-datacopy-bf16-to-fp32": P("datacopy", BF16, FP32),
    "kernel-datacopy-fp16-to-bf16": P("datacopy", FP16, BF16),
    "kernel-datacopy-bf16-relu": P("datacopy", relu=1),
    "kernel-datacopy-bf16-to-bfp8b": P("datacopy", BF16, BFP8),
    "kernel-datacopy-bf16-to-bfp4b": P("datacopy", BF16, BFP4),
    "kernel-datacopy-bf16-to-bfp2b": P("datacopy", BF16, BFP2),
    "kernel-datacopy-bfp8b-to-bf16": P("datacopy", BFP8, BF16),
    "kernel-datacopy-bfp4b-to-bf16": P("datacopy", BFP4, BF16),
    "kernel-datacopy-bfp2b-to-bf16": P("datacopy", BFP2, BF16),
    "kernel-transpose-xy-bf16": P("transpose"),
    "kernel-tilize-bf16": P("tilize"),
    "kernel-eltwise-add-bf16": P("eltwise"),
    "kernel-eltwise-sub-bf16": P("eltwise", op="ELWSUB"),
    "kernel-eltwise-mul-bf16-lofi": P("eltwise", op="ELWMUL"),
    "kernel-eltwise-mul-bf16-hifi2": P("eltwise", op="ELWMUL", fidelity=2),
    "kernel-eltwise-mul-bf16-hifi4": P("eltwise", op="ELWMUL", fidelity=4),
    "kernel-eltwise-add-fp16": P("eltwise", FP16, FP16),
    "kernel-eltwise-add-bfp8b": P("eltwise", BFP8, BF16),
    "kernel-eltwise-mul-bfp8b-hifi2": P("eltwise", BFP8, BF16, op="ELWMUL", fidelity=2),
    "kernel-eltwise-add-bfp8b-to-bfp8b": P("eltwise", BFP8, BFP8),
    "kernel-eltwise-add-bf16-2x2-tiles": P("eltwise", blocks=2, per_block=2),
    "kernel-eltwise-add-bf16-bcast-col": P("eltwise", bcast="COL"),
    "kernel-eltwise-add-bf16-bcast-row": P("eltwise", bcast="ROW"),
    "kernel-eltwise-mul-bf16-bcast-scalar": P("eltwise", op="ELWMUL", bcast="SCALAR"),
    "kernel-matmul-bf16-lofi": P("matmul"),
    "kernel-matmul-bf16-hifi4": P("matmul", fidelity=4),
    "kernel-matmul-bfp8b-hifi2": P("matmul", BFP8, BF16, fidelity=2),
    "kernel-matmul-bf16-ct2-kt2": P("matmul", ct_dim=2, kt_dim=2),
    "kernel-datacopy-bf16-l1-acc": P("datacopy", l1_acc=True),
    "kernel-datacopy-fp16-l1-acc": P("datacopy", FP16, FP16, l1_acc=True),
    "kernel-eltwise-add-bf16-to-fp32-l1-acc": P("eltwise", BF16, FP32, l1_acc=True, blocks=2),
    "kernel-datacopy-bf16-fp32-dest": P("datacopy", fp32_dest=True),
    "kernel-eltwise-mul-bf16-hifi4-fp32-dest": P("eltwise", BF16, FP32, op="ELWMUL", fidelity=4, fp32_dest=True),
    "kernel-matmul-bf16-ct2-kt2-fp32-dest": P("matmul", BF16, FP32, ct_dim=2, kt_dim=2, fp32_dest=True),
    "kernel-eltwise-add-int8": P("eltwise", INT8, INT8, fp32_dest=True),
    "kernel-eltwise-sub-int8-2x2-tiles": P("eltwise", INT8, INT8, op="ELWSUB", fp32_dest=True, blocks=2, per_block=2),
    "kernel-untilize-pack-bf16": P("untilize"),
    "kernel-untilize-pack-bf16-block-of-2": P("untilize", per_block=2),
    "kernel-untilize-pack-fp16-to-fp32-2-blocks": P("untilize", FP16, FP32, blocks=2),
    "kernel-datacopy-bfp8b-pack-in-bfp8b-to-bf16": P("datacopy", BFP8, BF16, pack_in=BFP8),
    "kernel-datacopy-bfp8b-pack-in-bfp8b-to-fp32": P("datacopy", BFP8, FP32, pack_in=BFP8),
    "kernel-datacopy-bfp8b-pack-in-bfp8b-to-bfp8b": P("datacopy", BFP8, BFP8, pack_in=BFP8),
    "kernel-datacopy-bfp8b-pack-in-bfp8b-to-bfp4b": P("datacopy", BFP8, BFP4, pack_in=BFP8),
    "kernel-eltwise-add-bfp8b-pack-in-bfp8b-relu": P("eltwise", BFP8, BF16, relu=1, pack_in=BFP8),
    "kernel-datacopy-bf16-fp32-dest-pack-in-bfp8b-to-bfp8b": P("datacopy", BF16, BFP8, fp32_dest=True, pack_in=BFP8),
    "kernel-eltwise-mul-bf16-hifi4-fp32-dest-pack-in-bfp8b-to-bfp4b": P("eltwise", BF16, BFP4, op="ELWMUL", fidelity=4,
                                                                        fp32_dest=True, pack_in=BFP8),
    "kernel-datacopy-fp16-pack-in-bfp8a-to-bfp8b": P("datacopy", FP16, BFP8, pack_in=BFP8A),
    **{f"kernel-reduce-{d.lower()}-{k.lower()}-bf16": P("reduce", op=k, dim=d)
       for d in ("ROW", "COL", "SCALAR") for k in ("SUM", "MAX")},
}


def _addresses(case, base: int) -> list[int]:
    return sorted((a >> 4) - 1 for a, _ in case.init.l1 if a >> 16 == base >> 16)


def _outputs(case, p: Pipeline) -> list[int]:
    """L1_ADDRESS of each output tile: the observed regions, split into tiles of the output format (untilize:
    one region, the tiles' rows side by side)."""
    size = TILE_BYTES[p.out_fmt]
    return [(a + size * i >> 4) - 1 for a, n in case.observed_l1() for i in range(n // size)]


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_the_generator_emits_the_corpus_kernel_programs(name):
    case = load_case(KERNELS / f"{name}.yaml")
    p = CORPUS[name]
    u, m, k = threads(p, _addresses(case, 0x20000), _addresses(case, 0x30000), _outputs(case, p))
    for t in (u, m, k):
        assert t.words == case.threads[t.t], f"{name}: thread {t.t} words differ"
        assert t.actions == case.actions.get(t.t, []), f"{name}: thread {t.t} RISC-V actions differ"


def test_generated_pipelines_are_deterministic_and_run_on_golden():
    golden = GoldenBackend()
    kinds = set()
    for i in range(24):
        case = generate_one(7, i, "pipeline")
        assert content(case) == content(generate_one(7, i, "pipeline"))
        result = golden.run(case)
        assert result.status == "ok", f"{case.name} ({case.description}): {result.message}"
        kinds.add(case.tags[2])
    assert len(kinds) >= 5, kinds


@pytest.mark.parametrize("p", [P("untilize"), P("untilize", per_block=2), P("untilize", FP16, FP16, blocks=2),
                               P("untilize", blocks=2, per_block=2)], ids=Pipeline.text)
def test_pack_untilize_writes_the_tiles_row_major(p):
    """Golden's pack untilize output is the input tiles (faces 0..3 of 16x16) side by side as 32 rows."""
    import dataclasses

    import numpy as np

    from generators.pipeline import pipeline_case
    case = pipeline_case(p, np.random.default_rng(5), "untilize")
    tiles = [np.arange(1024, dtype="<u2") + 0x3C00 + 0x40 * i for i in range(p.tiles)]   # normal, distinct
    l1 = [(a, tiles[i].tobytes()) for i, (a, _) in enumerate(case.init.l1[:p.tiles])] + case.init.l1[p.tiles:]
    case = dataclasses.replace(case, init=dataclasses.replace(case.init, l1=l1))
    result = GoldenBackend().run(case)
    assert result.status == "ok", result.message
    regions = case.observed_l1()            # one per tile, consecutive
    assert [a for a, _ in regions] == [regions[0][0] + 2048 * i for i in range(p.tiles)]
    got = np.frombuffer(b"".join(bytes.fromhex(result.state["l1"][f"{a:#x}"]) for a, _ in regions), dtype="<u2")
    rows = [t.reshape(2, 2, 16, 16).transpose(0, 2, 1, 3).reshape(32, 32) for t in tiles]
    assert np.array_equal(got.reshape(32, 32 * p.tiles), np.concatenate(rows, axis=1))


@pytest.mark.parametrize("op,fidelity,out", [("ELWADD", 0, INT8), ("ELWSUB", 0, INT8), ("ELWMUL", 4, INT32)])
def test_int8_eltwise_is_exact_integer_arithmetic(op, fidelity, out):
    """tt-llk's Int8 eltwise kernel on golden: every output datum is A + B, A - B, or (HiFi4, all four
    fidelity phases) A * B, in sign-magnitude Int8 (|A +/- B| <= 100) or Int32."""
    import numpy as np

    from generators.pipeline import pipeline_case
    p = P("eltwise", INT8, out, op=op, fidelity=fidelity, fp32_dest=True, blocks=2)
    case = pipeline_case(p, np.random.default_rng(3), "i8")
    result = GoldenBackend().run(case)
    assert result.status == "ok", result.message

    def values(raw: bytes, dtype: str) -> np.ndarray:
        v = np.frombuffer(raw, dtype).astype(np.int64)
        top = 0x80 if dtype == "u1" else 0x80000000
        return np.where(v & top, -(v & (top - 1)), v & (top - 1))
    l1 = dict(case.init.l1)
    for i, (addr, size) in enumerate(case.observed_l1()):
        a, b = values(l1[0x20000 + 0x1000 * i], "u1"), values(l1[0x30000 + 0x1000 * i], "u1")
        got = values(bytes.fromhex(result.state["l1"][f"{addr:#x}"]), "u1" if out == INT8 else "<u4")
        assert np.array_equal(got, {"ELWADD": a + b, "ELWSUB": a - b, "ELWMUL": a * b}[op])
        assert np.abs(got).max() > 0


def test_pipeline_dst32_profile_reaches_its_matrix_cells():
    """Profile pipeline-dst32 narrows the draw (pipeline_draw) to FP16 and Bfp2_b tiles into a 32-bit Dest: every
    matrix-unit operation golden runs is FP16 x FP16 or BFP2 x BFP2 into 32 bits, and HiFi4 reaches phase 3."""
    from tensix_diff.matrix_cells import cells
    seen = set()
    for i in range(16):
        case = generate_one(9, i, "pipeline-dst32")
        assert "FP32 Dest" in case.description, case.description
        seen |= cells(case)
    assert {(a, b, bits) for a, b, bits, _ in seen} == {("FP16", "FP16", 32), ("BFP2", "BFP2", 32)}, seen
    assert {phase for a, _, _, phase in seen if a == "FP16"} == {0, 1, 2, 3}, seen


def test_pipeline_draw_is_checked():
    from generators.profiles import ProfileError, parse_profile
    base = {"pipeline": {"eltwise": 1}}
    for bad in ({"inputs": {"Float17": 1}}, {"inputs": {"Bfp2_b": 1}}, {"fidelity": {1: 1}}, {"fp32_dest": 2},
                {"fp32_dest": True}, {"fidelity": {"HiFi4": 1}}, {"colour": 1}, [1]):
        with pytest.raises(ProfileError):
            parse_profile("x", {**base, "pipeline_draw": bad}, "x.yaml")
    with pytest.raises(ProfileError, match="narrows a 'pipeline' profile"):
        parse_profile("x", {"weights": {"NOP": 1}, "pipeline_draw": {}}, "x.yaml")
    p = parse_profile("x", {**base, "pipeline_draw": {"inputs": {"Float16": 2}, "fidelity": {4: 1}}}, "x.yaml")
    assert p.pipeline_draw.inputs == {FP16: 2.0} and p.pipeline_draw.fidelity == {4: 1.0}


# ttsim v1.10.0 PACR pack_fmt_conv_mode values from a block-float input (Read_32b_data << 8 | In << 4 | Out)
TTSIM_BFP_INPUT_MODES = {0x26, 0x60, 0x65, 0x66, 0x67, 0x166, 0x167}


def test_gap_pipeline_profiles_draw_what_they_name():
    """pipeline-bfp-pack packs from Bfp8_b / Bfp8 only in modes ttsim accepts (and golden runs them all);
    pipeline-int8-matmul is Int8 MVMUL into a 32-bit Dest; pipeline-reduce-dst32 reductions into a 32-bit Dest;
    pipeline-pack-cr sets YsrcCR (never YdstCR, which ttsim refuses) in the pack AddrMods."""
    from golden.registers import thread_config_field
    from generators.draw import RandomDraw
    from generators.pipeline import Narrowing, bfp_pack_in, draw_pipeline, pack_src
    golden = GoldenBackend()
    modes, bfp_in = set(), 0
    for i in range(24):
        case = generate_one(28, i, "pipeline-bfp-pack")
        assert golden.run(case).status == "ok", case.description
        bfp_in += "packer input Bfp8" in case.description
    assert bfp_in >= 18, bfp_in            # transpose of a BF16 tile has no block-float packer input to take
    for i in range(40):
        d = RandomDraw(i)
        p = bfp_pack_in(d, draw_pipeline(d, {"datacopy": 1, "eltwise": 1, "matmul": 1}, Narrowing(
            inputs={BFP8: 1, FP16: 1, BF16: 1})))
        if p.pack_in is not None:
            modes.add(int(p.fp32_dest) << 8 | pack_src(p) << 4 | p.out_fmt)
    assert modes and modes <= TTSIM_BFP_INPUT_MODES and len(modes) >= 5, sorted(map(hex, modes))
    for i in range(6):
        case = generate_one(28, i, "pipeline-int8-matmul")
        assert case.tags[2] == "matmul" and "Int8 ->" in case.description and "FP32 Dest" in case.description
        assert golden.run(case).status == "ok"
        case = generate_one(28, i, "pipeline-reduce-dst32")
        assert case.tags[2] == "reduce" and "FP32 Dest" in case.description
    cr = thread_config_field("ADDR_MOD_PACK_SEC1_YsrcCR")
    for i in range(6):
        case = generate_one(28, i, "pipeline-pack-cr")
        assert "pack AddrMods YsrcCR" in case.description
        words = [w for w in case.threads[2] if isa_name(w) == "SETC16"]
        assert any(decode_fields(w)["setc16_reg"] == cr.index and decode_fields(w)["setc16_value"] >> cr.shift & 1
                   for w in words)


def isa_name(word: int) -> str:
    from golden import isa
    return isa.decode(word)[0].name


def decode_fields(word: int) -> dict:
    from golden import isa
    return isa.decode(word)[1]


@pytest.mark.parametrize("name", ["kernel-datacopy-bf16-relu", "kernel-eltwise-add-bfp8b-pack-in-bfp8b-relu"])
def test_the_relu_kernels_pack_no_negative_datum(name):
    """ReLU mode 1 (cpack_common.h configure_pack: ApplyRelu in STACC_RELU bits 5:2) packs negatives as zero:
    golden's BF16 output holds no sign bit and hundreds of zeros (with ApplyRelu left 0 it held 453 / 530
    negatives)."""
    import numpy as np
    case = load_case(KERNELS / f"{name}.yaml")
    result = GoldenBackend().run(case)
    assert result.status == "ok", result.message
    (addr, _), = case.observed_l1()
    out = np.frombuffer(bytes.fromhex(result.state["l1"][f"{addr:#x}"]), dtype="<u2")
    assert not (out & 0x8000).any() and (out == 0).sum() >= 400
