"""One TRISC of a literal tt-llk kernel: the Tensix words it pushes and its RISC-V actions, in program order.

The helpers mirror tt-llk Blackhole's building blocks (tt_llk_blackhole/common/inc, commit 36b092e8):
ckernel.h cfg_reg_rmw_tensix (one RMWCIBn per non-zero mask byte), ckernel_template.h ckernel_template::program
(MOP config words 0..8) and ckernel_unpack_template::program (words 1..8), ckernel_addrmod.h addr_mod_t::set
and addr_mod_pack_t::set (SETC16 of the AddrMod sections), TT_SETDMAREG (a 16-bit payload into one GPR half).
Words are encoded from golden/isa.yaml; the RISC-V actions are golden.riscv's.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from golden import isa
from golden.registers import RegField, config_field, thread_config_field
from golden.riscv import RiscvAction

NOP = isa.encode("NOP")


def word(name: str, **fields: int) -> int:
    """The Tensix word of ``name`` with ``fields`` (the others zero)."""
    return isa.encode(name, fields)


def replay(start: int, length: int, load: bool = False) -> int:
    """lltt::record (load=True, no execution while loading) / lltt::replay_insn: one REPLAY word."""
    return word("REPLAY", start_idx=start, len=length, load_mode=int(load))


def _field(name: str) -> RegField:
    return config_field(name)


@dataclass
class KernelThread:
    t: int
    words: list[int] = field(default_factory=list)
    actions: list[tuple[int, RiscvAction]] = field(default_factory=list)

    # --- Tensix side ---
    def op(self, name: str, **fields: int) -> None:
        self.words.append(word(name, **fields))

    def raw(self, *words: int) -> None:
        self.words.extend(words)

    def rmw(self, index: int, shift: int, mask: int, value: int) -> None:
        """cfg_reg_rmw_tensix<index, shift, mask>(value)."""
        data = (value << shift) & 0xFFFFFFFF
        for b in range(4):
            if mask >> 8 * b & 0xFF:
                self.op(f"RMWCIB{b}", mask=mask >> 8 * b & 0xFF, data=data >> 8 * b & 0xFF, cfgregaddr=index)

    def rmw_field(self, name: str, value: int) -> None:
        f = _field(name)
        self.rmw(f.index, f.shift, f.mask, value)

    def setc16(self, name: str, value: int) -> None:
        self.op("SETC16", setc16_reg=thread_config_field(name).index, setc16_value=value)

    def setdmareg(self, value16: int, half: int) -> None:
        """TT_SETDMAREG(0, value16, 0, half): GPR half ``half`` (2 * gpr for the low 16 bits, + 1 for the high)."""
        self.op("SETDMAREG", payload_sigselsize=value16 >> 14, payload_sigsel=value16 & 0x3FFF, regindex16b=half)

    def wrcfg(self, gpr: int, index: int, wide: int = 0) -> None:
        self.op("WRCFG", gpraddress=gpr, wr128b=wide, cfgreg=index)

    def stallwait(self, stall: int, wait: int) -> None:
        self.op("STALLWAIT", stall_res=stall, wait_res=wait)

    def run_mop(self, mop_type: int = 1, count: int = 0, zmask: int = 0) -> None:
        self.op("MOP", mop_type=mop_type, loop_count=count, zmask_lo16_or_loop_count=zmask)

    # --- RISC-V side ---
    def act(self, kind: str, *args) -> None:
        self.actions.append((len(self.words), RiscvAction(kind, tuple(args))))

    def cfg(self, name_or_index: str | int, value: int) -> None:
        index = name_or_index if isinstance(name_or_index, int) else _field(name_or_index).index
        self.act("cfg", index, value, None)

    def template(self, outer: int, inner: int, loop0: int, loop1: int | None = None, *, start: int = NOP,
                 end0: int = NOP, end1: int = NOP, last_inner: int | None = None, last_outer: int | None = None) -> None:
        """ckernel_template(outer, inner, loop_op0[, loop_op1]) with its setters, then program()."""
        last = loop0 if loop1 is None else loop1
        words = [outer, inner, start, end0, end1, loop0, NOP if loop1 is None else loop1,
                 last if last_outer is None else last_outer, last if last_inner is None else last_inner]
        for i, w in enumerate(words):
            self.act("mop_cfg", i, w)

    def unpack_template(self, unpack_b: bool, a0: int, skip_a: int, b: int = 0, skip_b: int = 0) -> None:
        """ckernel_unpack_template(unpackB, halo=false, A0, 0, 0, 0, skipA, B, skipB).program()."""
        for i, w in enumerate([int(unpack_b), b, a0, 0, 0, 0, skip_a, skip_b], start=1):
            self.act("mop_cfg", i, w)

    def addr_mod(self, index: int, srca=(0, 0, 0), srcb=(0, 0, 0), dest=(0, 0, 0, 0), fidelity=(0, 0)) -> None:
        """addr_mod_t{.srca/.srcb = (incr, clr, cr), .dest = (incr, clr, cr, c_to_cr), .fidelity = (incr, clr)}."""
        def src(incr, clr, cr):
            return incr & 0x3F | cr << 6 | clr << 7
        incr, clr, cr, c_to_cr = dest
        d = incr & 0x3FF | cr << 10 | clr << 11 | c_to_cr << 12 | (fidelity[0] & 3 | fidelity[1] << 2) << 13
        self.setc16(f"ADDR_MOD_AB_SEC{index}_SrcAIncr", src(*srca) | src(*srcb) << 8)
        self.setc16(f"ADDR_MOD_DST_SEC{index}_DestIncr", d)
        self.setc16(f"ADDR_MOD_BIAS_SEC{index}_BiasIncr", 0)

    def pack_addr_mod(self, index: int, y_src=(0, 0, 0), y_dst=(0, 0, 0), z_src=(0, 0), z_dst=(0, 0)) -> None:
        """addr_mod_pack_t{.y_src/.y_dst = (incr, clr, cr), .z_src/.z_dst = (incr, clr)}."""
        def y(incr, clr, cr):
            return incr & 0xF | cr << 4 | clr << 5

        def z(incr, clr):
            return incr & 1 | clr << 1
        self.setc16(f"ADDR_MOD_PACK_SEC{index}_YsrcIncr", y(*y_src) | y(*y_dst) << 6 | z(*z_src) << 12 | z(*z_dst) << 14)
