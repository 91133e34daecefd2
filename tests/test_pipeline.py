"""Literal tt-llk pipelines (generators/pipeline.py): the generator emits exactly the programs of the kernel corpus
(tests/corpus/kernels, written from the tt-llk sources and recorded on ttsim), and its random cases run on golden."""
from __future__ import annotations

from pathlib import Path

import pytest

from generators.bulk import generate_one
from generators.pipeline import BF16, BFP2, BFP4, BFP8, FP16, FP32, TILE_BYTES, Pipeline, threads
from hwbridge.golden_backend import GoldenBackend
from tensix_diff.case import content, load_case

KERNELS = Path(__file__).resolve().parent / "corpus" / "kernels"
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
    **{f"kernel-reduce-{d.lower()}-{k.lower()}-bf16": P("reduce", op=k, dim=d)
       for d in ("ROW", "COL", "SCALAR") for k in ("SUM", "MAX")},
}


def _addresses(case, base: int) -> list[int]:
    return sorted((a >> 4) - 1 for a, _ in case.init.l1 if a >> 16 == base >> 16)


def _outputs(case, p: Pipeline) -> list[int]:
    """L1_ADDRESS of each output tile: the observed regions, split into tiles of the output format."""
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
