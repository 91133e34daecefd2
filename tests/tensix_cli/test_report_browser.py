"""The campaign report in a real browser: headless Chromium renders a clean and a failing report at 1400 px;
the summary comes first, nothing scrolls sideways, and the failing one shows its signature section.
Skipped where no Chromium is installed (`apt-get install chromium`)."""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from hwbridge.golden_backend import GoldenBackend
from tensix_cli import cli, fuzz
from tensix_diff.result import Result

BROWSER = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
pytestmark = pytest.mark.skipif(BROWSER is None, reason="no Chromium installed (apt-get install chromium)")
WIDTH = 1400


def _chromium(*args: str) -> str:
    out = subprocess.run([BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                          f"--window-size={WIDTH},1000", *args], capture_output=True, text=True, timeout=120)
    return out.stdout


def _layout(page: Path) -> tuple[int, str]:
    """The page's scroll width at 1400 px and the text of its body as laid out (from a probe copy of it)."""
    probe = page.with_name("probe-" + page.name)
    probe.write_text(page.read_text().replace(
        "</body>", "<script>document.body.dataset.sw=document.documentElement.scrollWidth</script></body>"))
    dom = _chromium("--dump-dom", probe.as_uri())
    width = re.search(r'data-sw="(\d+)"', dom)
    assert width, dom[:500]
    return int(width.group(1)), dom


def _campaign(tmp_path: Path, name: str, skew: bool) -> Path:
    class Skewed:
        """Golden, with one GPR bit flipped on every third case when ``skew`` (a fake device bug)."""
        name = "hw"

        def __init__(self):
            self.g, self.n = GoldenBackend(), 0

        def run(self, case):
            r = self.g.run(case)
            self.n += 1
            if skew and r.ok and self.n % 3 == 0:
                r.state["gpr"]["0"][63] ^= 1
            return Result(r.status, r.state, r.message, {"device": "test-fixture"})

    dev, gold = Skewed(), GoldenBackend()
    report = tmp_path / f"{name}.json"
    old = fuzz._backend
    fuzz._backend = lambda n, args: gold if n == "golden" else dev
    try:
        cli.main(["fuzz", "--count", "9", "--seed", "11", "--profile", "scalar", "--backend", "hw", "--accept-golden",
                  "modelled,handler", "--report", str(report), "-q"])
    finally:
        fuzz._backend = old
    return report.with_suffix(".html")


@pytest.mark.parametrize("skew", [False, True], ids=["clean", "failing"])
def test_the_report_reads_at_1400_px_summary_first(tmp_path, skew):
    page = _campaign(tmp_path, "failing" if skew else "clean", skew)
    width, dom = _layout(page)
    assert width <= WIDTH, f"the page scrolls sideways: {width} px"
    assert dom.index('class="cards"') < dom.index("<h2>")            # the summary before any section
    if skew:
        assert re.search(r"<h2>gpr[^<]*@\S+ +\(\d+ cases?\)</h2>", dom)
        assert "<th>golden</th>" in dom and "<th>test-fixture</th>" in dom and "tensix-diff minimize" in dom
    else:
        assert "<h2>No divergence</h2>" in dom
    shot = tmp_path / "shot.png"
    _chromium(f"--screenshot={shot}", page.as_uri())
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 2000


def _three_way_page(tmp_path: Path) -> Path:
    """`run --three-way --html` over one case with a ttsim and a card recording (fixtures, not a device), the
    card's SrcA counter off by one, so one case differs."""
    import copy

    from golden import isa
    from tensix_diff.case import Case, dump_case
    from tensix_diff.store import Store
    case = Case("three", "", {0: [isa.assemble_line("INCRWC rwc_cr=0 rwc_d=3 rwc_b=1 rwc_a=2")]})
    sim = {"device": "ttsim 1.10.0", "device_kind": "simulator", "platform": "ttsim", "core": "1,2"}
    card = {**sim, "device": "card-fixture (test data, not a device)", "device_kind": "silicon",
            "platform": "blackhole"}
    store = Store(tmp_path / "rec")
    for prov, bump in ((sim, 0), (card, 1)):
        state = copy.deepcopy(GoldenBackend().run(case).state)
        state.pop("dest_valid")
        state["rwc"]["0"]["srca"] += bump
        store.record(case, Result("ok", state, provenance=prov), "all")
    path = tmp_path / "three.yaml"
    path.write_text(dump_case(case))
    page = tmp_path / "three.html"
    assert cli.main(["run", str(path), "--three-way", "--recordings", str(tmp_path / "rec"),
                     "--html", str(page)]) == 1
    return page


def test_the_three_way_page_reads_at_1400_px_summary_first(tmp_path):
    width, dom = _layout(_three_way_page(tmp_path))
    assert width <= WIDTH, f"the page scrolls sideways: {width} px"
    assert dom.index('class="cards"') < dom.index("<h2>")
    assert "<h2>Cases where the sides differ</h2>" in dom and "erratum/harness" in dom
    assert "<th>ttsim 1.10.0</th>" in dom and "<th>card-fixture (test data, not a device)</th>" in dom


def test_the_coverage_page_reads_at_1400_px_summary_first(tmp_path):
    page = tmp_path / "coverage.html"
    spec = Path(__file__).resolve().parents[1] / "corpus" / "spec"
    assert cli.main(["coverage", str(spec), "--jobs", "1", "--summary", "--html", str(page)]) == 0
    width, dom = _layout(page)
    assert width <= WIDTH, f"the page scrolls sideways: {width} px"
    assert dom.index('class="cards"') < dom.index("<h2>")
    assert re.search(r"<td>SETRWC</td>", dom), "the per-instruction table lists the instructions"
