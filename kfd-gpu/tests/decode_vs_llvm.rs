//! The decoder against LLVM 19's disassembler (issue 22): for a generated
//! corpus of instruction words per target, `isa::decode` must accept
//! exactly the words `llvm-mc --disassemble` accepts, with the same
//! mnemonic and length, and `Inst::disasm` must print the operands LLVM
//! prints.
//!
//! The corpus is deterministic (a fixed xorshift seed): per family,
//! opcodes drawn from the target's table (plus some opcodes the table has
//! no name for) with operand fields drawn mostly from valid values
//! (aligned register tuples, inline constants, literals, special
//! registers) and sometimes from any value.
//!
//! Normalisation of LLVM's text before comparing: the `; encoding` comment
//! is dropped, whitespace runs become one space, the mnemonic loses its
//! `_e32`/`_e64`/`_sdwa`/`_dpp` encoding suffix.
//!
//! Documented, counted exceptions (anything else fails the test):
//! - LLVM rejects a word whose opcode our table names: the decoder checks
//!   opcodes, not operand fields (unused fields that must be zero,
//!   register tuples out of range or misaligned, modifiers the opcode
//!   does not take); it executes what it accepts or reports it
//!   unimplemented.
//! - forms `Inst::disasm` reports it cannot print (its `Err` reason);
//!   it prints no gfx1100 operands yet, so for gfx1100 the decoder is
//!   checked on acceptance, mnemonic and length (its fields by the unit
//!   tests of `isa::gfx11` and the kernels of `tests/gfx11.rs`).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use kfd_gpu::shader::isa::{decode, tables_of, Enc, Inst};
use kfd_gpu::shader::Target;

mod common;

/// A line that separates two corpus lines' output: `s_mov_b32 s101, 0x7b`.
const MARKER: [u32; 2] = [0xbee5_00ff, 0x7b];
const MARKER_TEXT: &str = "s_mov_b32 s101, 0x7b";

/// Words per family and target.
const PER_FAMILY: usize = 300;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 16) as u32
    }
    fn below(&mut self, n: u32) -> u32 {
        self.next() % n
    }
    fn bit(&mut self, percent: u32) -> u32 {
        u32::from(self.below(100) < percent)
    }
    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len() as u32) as usize]
    }
    /// An SGPR number aligned for any tuple size.
    fn sgpr(&mut self) -> u32 {
        if self.bit(5) == 1 {
            self.below(102)
        } else {
            4 * self.below(24)
        }
    }
    /// A VGPR number (even, so 64-bit tuples are aligned on gfx90a).
    fn vgpr(&mut self) -> u32 {
        if self.bit(5) == 1 {
            self.below(256)
        } else {
            2 * self.below(120)
        }
    }
    /// An 8-bit scalar source code.
    fn ssrc(&mut self) -> u32 {
        match self.below(20) {
            0..=7 => self.sgpr(),
            8 => self.pick(&[106, 126, 124, 102, 104, 107, 127]),
            9 => 108 + 4 * self.below(4),
            10..=13 => 128 + self.below(81),
            14 | 15 => 240 + self.below(9),
            16 | 17 => 255,
            18 => self.pick(&[235, 236, 237, 238, 239, 251, 252, 253]),
            _ => self.below(256),
        }
    }
    /// A 9-bit vector source code.
    fn vsrc(&mut self) -> u32 {
        if self.bit(50) == 1 {
            256 + self.vgpr()
        } else {
            self.ssrc()
        }
    }
    /// A 9-bit source code without literals (VOP3).
    fn vsrc3(&mut self) -> u32 {
        loop {
            let s = self.vsrc();
            if s != 255 {
                return s;
            }
        }
    }
    /// An SGPR destination code.
    fn sdst(&mut self) -> u32 {
        match self.below(10) {
            0 => self.pick(&[106, 126, 124, 102]),
            1 => 108 + 4 * self.below(4),
            _ => self.sgpr(),
        }
    }
}

/// An opcode of a family: mostly one the target's table names.
fn opcode(r: &mut Rng, table: &[&str]) -> u32 {
    let named: Vec<u32> = (0..table.len() as u32)
        .filter(|&i| !table[i as usize].is_empty())
        .collect();
    if r.bit(8) == 1 || named.is_empty() {
        r.below(table.len() as u32)
    } else {
        r.pick(&named)
    }
}

/// `s_nop 0`: the last word of every corpus line, so that no instruction
/// LLVM decodes runs past its line (`llvm-mc` reads the next line's bytes
/// for an instruction longer than what is left of its line).
const NOP: u32 = 0xbf80_0000;

/// One corpus entry of family `enc`: three words (the instruction, room
/// for a literal or an SDWA/DPP word, and `s_nop 0`).
fn word(r: &mut Rng, target: Target, enc: Enc, table: &[&str]) -> [u32; 3] {
    let op = opcode(r, table);
    let lit = r.next();
    if target.is_gfx11() {
        // A gfx11 literal word alone is a VOP1/VOP2/VOPC word, at most
        // eight bytes: should LLVM reject the instruction and decode its
        // literal as one, it does not run into the next corpus line
        // (a VOPD word with its literal would).
        return pad(target, word11(r, enc, op, lit & 0x7fff_ffff));
    }
    let w = match enc {
        Enc::Sop2 => [
            0x8000_0000 | op << 23 | r.sdst() << 16 | r.ssrc() << 8 | r.ssrc(),
            lit,
        ],
        Enc::Sopk => {
            let imm = if r.bit(50) == 1 {
                r.below(64)
            } else {
                r.below(0x10000)
            };
            [0xb000_0000 | op << 23 | r.sdst() << 16 | imm, lit]
        }
        Enc::Sop1 => [0xbe80_0000 | r.sdst() << 16 | op << 8 | r.ssrc(), lit],
        Enc::Sopc => [0xbf00_0000 | op << 16 | r.ssrc() << 8 | r.ssrc(), lit],
        Enc::Sopp => {
            let imm = if r.bit(60) == 1 {
                r.below(16)
            } else {
                r.below(0x10000)
            };
            [0xbf80_0000 | op << 16 | imm, lit]
        }
        Enc::Smem => {
            let imm = r.bit(70);
            let w1 = if imm == 1 {
                r.below(0x100000)
            } else {
                r.sgpr()
            };
            [
                0xc000_0000
                    | op << 18
                    | imm << 17
                    | r.bit(20) << 16
                    | r.bit(3) << 14
                    | r.sgpr() << 6
                    | r.sgpr() >> 1,
                w1,
            ]
        }
        Enc::Vop2 => [op << 25 | r.vgpr() << 17 | r.vgpr() << 9 | vop_src0(r), lit],
        Enc::Vop1 => [0x7e00_0000 | r.vgpr() << 17 | op << 9 | vop_src0(r), lit],
        Enc::Vopc => [0x7c00_0000 | op << 17 | r.vgpr() << 9 | vop_src0(r), lit],
        Enc::Vop3 => {
            let dst = if r.bit(70) == 1 { r.vgpr() } else { r.sdst() };
            let abs = if r.bit(70) == 1 { 0 } else { r.below(8) };
            let opsel = if r.bit(85) == 1 { 0 } else { r.below(16) };
            let neg = if r.bit(70) == 1 { 0 } else { r.below(8) };
            let omod = if r.bit(85) == 1 { 0 } else { r.below(4) };
            let sdst = if r.bit(60) == 1 {
                r.sdst() << 8
            } else {
                abs << 8 | opsel << 11
            };
            // LLVM wants the fields of sources an opcode lacks zero.
            let n = r.pick(&[1, 2, 2, 3, 3]);
            let s1 = if n > 1 { r.vsrc3() } else { 0 };
            let s2 = if n > 2 { r.vsrc3() } else { 0 };
            [
                0xd000_0000 | op << 16 | r.bit(15) << 15 | sdst | dst,
                neg << 29 | omod << 27 | s2 << 18 | s1 << 9 | r.vsrc3(),
            ]
        }
        Enc::Vop3p => {
            let opsel = if r.bit(70) == 1 { 0 } else { r.below(8) };
            let neghi = if r.bit(70) == 1 { 0 } else { r.below(8) };
            let neg = if r.bit(70) == 1 { 0 } else { r.below(8) };
            let hi = if r.bit(70) == 1 { 7 } else { r.below(8) };
            [
                0xd380_0000
                    | op << 16
                    | r.bit(10) << 15
                    | (hi >> 2) << 14
                    | opsel << 11
                    | neghi << 8
                    | r.vgpr(),
                neg << 29 | (hi & 3) << 27 | r.vsrc3() << 18 | r.vsrc3() << 9 | r.vsrc3(),
            ]
        }
        Enc::Ds => {
            let off = if r.bit(50) == 1 { 0 } else { r.below(0x10000) };
            [
                0xd800_0000 | op << 17 | r.bit(5) << 16 | off,
                (r.vgpr() * r.bit(50)) << 24
                    | (r.vgpr() * r.bit(50)) << 16
                    | (r.vgpr() * r.bit(50)) << 8
                    | (r.vgpr() * r.bit(90)),
            ]
        }
        Enc::Flat | Enc::Global | Enc::Scratch => {
            let seg = match enc {
                Enc::Flat => 0,
                Enc::Scratch => 1,
                _ => 2,
            };
            let off = if r.bit(40) == 1 { 0 } else { r.below(0x2000) };
            let saddr = match (enc, r.below(3)) {
                (Enc::Flat, _) => 0x7f * r.bit(5),
                (_, 0) => 0x7f,
                (_, 1) => r.pick(&[106, 126]),
                _ => r.sgpr(),
            };
            [
                0xdc00_0000 | op << 18 | r.bit(30) << 17 | r.bit(40) << 16 | seg << 14 | off,
                (r.vgpr() * r.bit(60)) << 24 | saddr << 16 | (r.vgpr() * r.bit(60)) << 8 | r.vgpr(),
            ]
        }
        Enc::Mubuf => {
            let off = if r.bit(40) == 1 { 0 } else { r.below(0x1000) };
            let soff = match r.below(4) {
                0 => 128,
                1 => 128 + r.below(81),
                _ => r.sdst(),
            };
            [
                0xe000_0000
                    | op << 18
                    | r.bit(20) << 17
                    | r.bit(3) << 16
                    | r.bit(30) << 14
                    | r.bit(40) << 13
                    | r.bit(40) << 12
                    | off,
                soff << 24 | r.bit(3) << 23 | r.below(24) << 16 | r.vgpr() << 8 | r.vgpr(),
            ]
        }
        Enc::Vopd | Enc::Other => [0, 0],
    };
    let w1 = match (enc, w[0] & 0x1ff) {
        (Enc::Vop1 | Enc::Vop2 | Enc::Vopc, 249) => sdwa(r),
        (Enc::Vop1 | Enc::Vop2 | Enc::Vopc, 250) => dpp(r),
        _ => w[1],
    };
    pad(target, [w[0], w1, NOP])
}

/// `w` with the words past the instruction we decode made `s_nop 0`.
fn pad(target: Target, mut w: [u32; 3]) -> [u32; 3] {
    if let Ok(i) = decode(target, &w) {
        for x in &mut w[usize::from(i.len / 4)..] {
            *x = NOP;
        }
    }
    w
}

/// A gfx11 scalar source: gfx9's choices plus `null` (124) and M0 (125).
fn ssrc11(r: &mut Rng) -> u32 {
    if r.bit(5) == 1 {
        r.pick(&[124, 125])
    } else {
        r.ssrc()
    }
}

/// A gfx11 scalar destination.
fn sdst11(r: &mut Rng) -> u32 {
    if r.bit(5) == 1 {
        r.pick(&[124, 125])
    } else {
        r.sdst()
    }
}

/// A gfx11 9-bit vector source (no DPP codes).
fn vsrc11(r: &mut Rng) -> u32 {
    if r.bit(50) == 1 {
        256 + r.vgpr()
    } else {
        ssrc11(r)
    }
}

/// A DPP8 word: a VGPR and eight lane selects, the upper ones fixed so
/// that the word alone is an `s_nop` (should LLVM decode the instruction
/// before it shorter than we do, the word does not run into the next
/// corpus line).
fn dpp8(r: &mut Rng) -> u32 {
    NOP | r.below(0x10000)
}

/// Source 0 of a gfx11 32-bit VALU word: sometimes a DPP16 or DPP8 word.
fn vop_src0_11(r: &mut Rng) -> u32 {
    match r.below(12) {
        0 => 250,
        1 => r.pick(&[233, 234]),
        _ => vsrc11(r),
    }
}

/// The instruction words (first two, then the third word) of a gfx11
/// corpus entry of family `enc` with opcode `op`.
fn word11(r: &mut Rng, enc: Enc, op: u32, lit: u32) -> [u32; 3] {
    let w = match enc {
        Enc::Sop2 => [
            0x8000_0000 | op << 23 | sdst11(r) << 16 | ssrc11(r) << 8 | ssrc11(r),
            lit,
        ],
        Enc::Sopk => {
            let imm = if r.bit(50) == 1 {
                r.below(64)
            } else {
                r.below(0x10000)
            };
            [0xb000_0000 | op << 23 | sdst11(r) << 16 | imm, lit]
        }
        Enc::Sop1 => [0xbe80_0000 | sdst11(r) << 16 | op << 8 | ssrc11(r), lit],
        Enc::Sopc => [0xbf00_0000 | op << 16 | ssrc11(r) << 8 | ssrc11(r), lit],
        Enc::Sopp => {
            let imm = if r.bit(60) == 1 {
                r.below(16)
            } else {
                r.below(0x10000)
            };
            [0xbf80_0000 | op << 16 | imm, lit]
        }
        Enc::Smem => {
            let soff = if r.bit(70) == 1 { 124 } else { r.sgpr() };
            [
                0xf400_0000
                    | op << 18
                    | r.bit(10) << 14
                    | r.bit(10) << 13
                    | r.sgpr() << 6
                    | r.sgpr() >> 1,
                soff << 25 | (r.below(0x20_0000) * r.bit(70)),
            ]
        }
        Enc::Vop2 => [
            op << 25 | r.vgpr() << 17 | r.vgpr() << 9 | vop_src0_11(r),
            lit,
        ],
        Enc::Vop1 => [0x7e00_0000 | r.vgpr() << 17 | op << 9 | vop_src0_11(r), lit],
        Enc::Vopc => [0x7c00_0000 | op << 17 | r.vgpr() << 9 | vop_src0_11(r), lit],
        Enc::Vop3 | Enc::Vop3p => {
            let dst = if r.bit(70) == 1 { r.vgpr() } else { sdst11(r) };
            let mods = if r.bit(70) == 1 { 0 } else { r.below(0x80) };
            let neg = if r.bit(70) == 1 { 0 } else { r.below(8) };
            let omod = if r.bit(85) == 1 { 0 } else { r.below(4) };
            let n = r.pick(&[1, 2, 2, 3, 3]);
            let s1 = if n > 1 { vsrc11(r) } else { 0 };
            let s2 = if n > 2 { vsrc11(r) } else { 0 };
            let (prefix, op) = if enc == Enc::Vop3 {
                (0xd400_0000, op << 16)
            } else {
                (0xcc00_0000, op << 16)
            };
            [
                prefix | op | r.bit(15) << 15 | mods << 8 | dst,
                neg << 29 | omod << 27 | s2 << 18 | s1 << 9 | vsrc11(r),
            ]
        }
        Enc::Ds => {
            let off = if r.bit(50) == 1 { 0 } else { r.below(0x10000) };
            [
                0xd800_0000 | op << 18 | r.bit(5) << 17 | off,
                (r.vgpr() * r.bit(50)) << 24
                    | (r.vgpr() * r.bit(50)) << 16
                    | (r.vgpr() * r.bit(50)) << 8
                    | (r.vgpr() * r.bit(90)),
            ]
        }
        Enc::Flat | Enc::Global | Enc::Scratch => {
            let seg = match enc {
                Enc::Flat => 0,
                Enc::Scratch => 1,
                _ => 2,
            };
            let off = if r.bit(40) == 1 { 0 } else { r.below(0x2000) };
            let saddr = match (enc, r.below(3)) {
                (Enc::Flat, _) => 124,
                (_, 0) => 124,
                (_, 1) => r.pick(&[106, 126]),
                _ => r.sgpr(),
            };
            let sve = u32::from(enc == Enc::Scratch) * r.bit(50);
            [
                0xdc00_0000
                    | op << 18
                    | seg << 16
                    | r.bit(20) << 15
                    | r.bit(40) << 14
                    | r.bit(10) << 13
                    | off,
                (r.vgpr() * r.bit(60)) << 24
                    | sve << 23
                    | saddr << 16
                    | (r.vgpr() * r.bit(60)) << 8
                    | r.vgpr(),
            ]
        }
        Enc::Mubuf => {
            let soff = match r.below(4) {
                0 => 128,
                1 => 124,
                _ => r.sgpr(),
            };
            [
                0xe000_0000 | op << 18 | (r.below(1 << 16) * r.bit(50)),
                soff << 24
                    | r.below(4) << 22
                    | r.bit(3) << 21
                    | r.below(24) << 16
                    | r.vgpr() << 8
                    | r.vgpr(),
            ]
        }
        Enc::Vopd => {
            // `op` is Y's (the table iterated is Y's); X's drawn apart.
            let opx = r.below(16);
            let src0 = |r: &mut Rng| {
                if r.bit(70) == 1 {
                    256 + r.vgpr()
                } else {
                    ssrc11(r)
                }
            };
            // X's destination is the second word's top byte: not one
            // that would make the word alone a 12-byte instruction (VOPD,
            // VOP3, VOP3P with a literal; MIMG), should LLVM reject the
            // first.
            let vdstx = match r.vgpr() {
                v @ (0xc8..=0xd7 | 0xf0..=0xf3) => v & 0x7f,
                v => v,
            };
            [
                0xc800_0000 | opx << 22 | op << 17 | (r.vgpr() >> 1) << 9 | src0(r),
                vdstx << 24 | r.below(128) << 17 | (r.vgpr() >> 1) << 9 | src0(r),
            ]
        }
        Enc::Other => [0, 0],
    };
    let w1 = match (enc, w[0] & 0x1ff) {
        (Enc::Vop1 | Enc::Vop2 | Enc::Vopc, 250) => dpp(r),
        (Enc::Vop1 | Enc::Vop2 | Enc::Vopc, 233 | 234) => dpp8(r),
        _ => w[1],
    };
    // A VOP3 literal is an `s_nop`: should LLVM decode the instruction
    // shorter than we do, the word stays one instruction on its line.
    let w2 = match (enc, w1 & 0x1ff) {
        (Enc::Vop3, 250) => dpp(r),
        (Enc::Vop3, 233 | 234) => dpp8(r),
        _ => NOP | r.below(0x10000),
    };
    [w[0], w1, w2]
}

/// An SDWA word with valid selects (LLVM 19's disassembler crashes on
/// select value 7).
fn sdwa(r: &mut Rng) -> u32 {
    let s = if r.bit(20) == 1 { r.ssrc() } else { r.vgpr() };
    s | r.below(7) << 8
        | r.below(3) << 11
        | r.bit(20) << 13
        | (r.below(16) * r.bit(20)) << 12
        | r.below(7) << 16
        | r.bit(20) << 19
        | r.bit(20) << 20
        | r.bit(20) << 21
        | r.bit(20) << 23
        | r.below(7) << 24
        | r.bit(20) << 27
        | r.bit(20) << 28
        | r.bit(20) << 29
        | r.bit(10) << 31
}

/// A DPP word: a valid control most of the time.
fn dpp(r: &mut Rng) -> u32 {
    let ctrl = match r.below(8) {
        0 => r.below(0x100),
        1 => 0x101 + r.below(15),
        2 => 0x111 + r.below(15),
        3 => 0x121 + r.below(15),
        4 => r.pick(&[0x130, 0x134, 0x138, 0x13c, 0x140, 0x141, 0x142, 0x143]),
        5 => r.below(0x200),
        _ => r.below(0x100),
    };
    r.vgpr()
        | ctrl << 8
        | r.bit(30) << 19
        | (r.below(16) * r.bit(30)) << 20
        | r.below(16) << 24
        | r.below(16) << 28
}

/// Source 0 of a 32-bit VALU word: sometimes an SDWA or DPP word.
fn vop_src0(r: &mut Rng) -> u32 {
    match r.below(10) {
        0 => 249,
        1 => 250,
        _ => r.vsrc(),
    }
}

fn hex(words: &[u32]) -> String {
    let mut s = String::new();
    for w in words {
        for b in w.to_le_bytes() {
            let _ = write!(s, "0x{b:02x},");
        }
    }
    s.pop();
    s
}

/// What LLVM made of one corpus line: `None` when it rejected the first
/// word, else the first instruction's text (normalised) and length.
type Llvm = Option<(String, usize)>;

/// Disassembles every corpus entry in one `llvm-mc` run.
fn llvm(target: Target, corpus: &[[u32; 3]]) -> Vec<Llvm> {
    let mut input = String::new();
    for w in corpus {
        let _ = writeln!(input, "{}\n{}", hex(w), hex(&MARKER));
    }
    let mut child = std::process::Command::new(common::LLVM_MC)
        .args([
            "--disassemble",
            "-triple=amdgcn-amd-amdhsa",
            &format!("-mcpu={}", target.llvm_cpu()),
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("llvm-mc (apt-get install llvm-19)");
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        stdin.write_all(input.as_bytes())
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    // Invalid words make the exit status 1; a crash is something else.
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        matches!(out.status.code(), Some(0 | 1)) && !err.contains("Stack dump"),
        "llvm-mc crashed: {}",
        err.lines().rev().take(30).collect::<Vec<_>>().join("\n")
    );
    // An invalid first word is reported at its line, column 1.
    let mut rejected = std::collections::BTreeSet::new();
    for l in err.lines() {
        let mut it = l.strip_prefix("<stdin>:").unwrap_or("").split(':');
        if let (Some(line), Some("1")) =
            (it.next().and_then(|n| n.parse::<usize>().ok()), it.next())
        {
            if l.contains("invalid instruction encoding") && line % 2 == 1 {
                rejected.insert((line - 1) / 2);
            }
        }
    }
    let mut res = Vec::with_capacity(corpus.len());
    let mut first: Option<String> = None;
    let mut nops = 0;
    for l in String::from_utf8_lossy(&out.stdout).lines() {
        let l = l.trim();
        if l.is_empty() || l.starts_with('.') {
            continue;
        }
        let text = l.split_whitespace().collect::<Vec<_>>().join(" ");
        if text == MARKER_TEXT {
            let n = res.len();
            res.push(if rejected.contains(&n) {
                None
            } else {
                // The words after the instruction are `s_nop 0`s: its
                // length is what they leave of the line's 12 bytes.
                first.take().map(|t| (t, 12usize.saturating_sub(4 * nops)))
            });
            first = None;
            nops = 0;
            continue;
        }
        if first.is_none() {
            first = Some(text);
        } else if text == "s_nop 0" {
            nops += 1;
        } else {
            // Not a padding word: LLVM's instruction is shorter than
            // ours; report an impossible length.
            nops = 3;
        }
    }
    assert_eq!(res.len(), corpus.len(), "llvm-mc output out of step");
    res
}

/// LLVM's mnemonic without its encoding suffix.
fn base_mnemonic(m: &str) -> &str {
    ["_e32", "_e64", "_sdwa", "_dpp"]
        .iter()
        .find_map(|s| m.strip_suffix(s))
        .unwrap_or(m)
}

/// Per family counts.
#[derive(Default)]
struct Tally {
    words: usize,
    both_reject: usize,
    llvm_rejects_fields: usize,
    mnemonic_agree: usize,
    compared: usize,
    agreed: usize,
    skipped: BTreeMap<&'static str, usize>,
}

#[test]
fn decoder_agrees_with_llvm() {
    let mut failures = Vec::new();
    let mut report = String::new();
    for (seed, target) in [
        Target::Gfx900,
        Target::Gfx90a,
        Target::Gfx940,
        Target::Gfx1100,
    ]
    .into_iter()
    .enumerate()
    {
        let mut r = Rng(0x9e37_79b9_7f4a_7c15 ^ ((seed as u64 + 1) * 0x1234_5678_9abc));
        let mut corpus = Vec::new();
        for (enc, table) in tables_of(target) {
            // Most random DS and VOP3 words have fields their opcode
            // lacks set: twice the words.
            let n = PER_FAMILY
                * if matches!(enc, Enc::Ds | Enc::Vop3) {
                    2
                } else {
                    1
                };
            for _ in 0..n {
                corpus.push(word(&mut r, target, enc, table));
            }
        }
        let theirs = llvm(target, &corpus);
        let mut tally: BTreeMap<&'static str, Tally> = BTreeMap::new();
        for (w, l) in corpus.iter().zip(&theirs) {
            let enc = Enc::on(target, w[0]);
            let t = tally.entry(enc.name()).or_default();
            t.words += 1;
            let ours = decode(target, w);
            let mut fail = |why: String| {
                failures.push(format!("{target:?} {} [{}]: {why}", enc.name(), hex(w)))
            };
            let (text, len) = match (&ours, l) {
                (Err(_), None) => {
                    t.both_reject += 1;
                    continue;
                }
                (Ok(i), None) => {
                    if std::env::var_os("DUMP_REJECTS").is_some() {
                        eprintln!("REJ {target:?} {} {} {}", enc.name(), i.name, hex(w));
                    }
                    t.llvm_rejects_fields += 1;
                    continue;
                }
                (Err(e), Some((text, _))) => {
                    fail(format!("LLVM decodes `{text}`, we reject: {e}"));
                    continue;
                }
                (Ok(_), Some(x)) => x,
            };
            let i: &Inst = ours.as_ref().unwrap();
            if std::env::var_os("DUMP_LLVM").is_some() {
                eprintln!("LLVM {target:?} {} {text}", enc.name());
            }
            let m = base_mnemonic(text.split(' ').next().unwrap_or(""));
            if m != i.name || *len != usize::from(i.len) {
                fail(format!(
                    "LLVM decodes `{text}` ({len} bytes), we `{}` ({} bytes)",
                    i.name, i.len
                ));
                continue;
            }
            // VOPD: Y's mnemonic follows `::`.
            if let Some(y) = i.y {
                if !text.contains(&format!(":: {} ", y.name)) {
                    fail(format!("LLVM decodes `{text}`, we Y `{}`", y.name));
                    continue;
                }
            }
            t.mnemonic_agree += 1;
            if text.contains("/*") {
                // LLVM decodes the word but comments an operand as
                // invalid (a register class or immediate the opcode does
                // not take): a field-level rejection.
                *t.skipped
                    .entry("LLVM comments an operand invalid")
                    .or_default() += 1;
                continue;
            }
            match i.disasm(target) {
                Err(why) => *t.skipped.entry(why).or_default() += 1,
                Ok(mine) => {
                    t.compared += 1;
                    let theirs = normalise(text);
                    if mine == theirs {
                        t.agreed += 1;
                    } else {
                        fail(format!("LLVM `{theirs}`, we `{mine}`"));
                    }
                }
            }
        }
        let _ = writeln!(report, "{target:?}:");
        for (fam, t) in &tally {
            let _ = writeln!(
                report,
                "  {fam:8} words {:4}, both reject {:4}, LLVM rejects fields {:4}, \
                 mnemonic agrees {:4}; operands compared {:4}, agreed {:4}, skipped {:?}",
                t.words,
                t.both_reject,
                t.llvm_rejects_fields,
                t.mnemonic_agree,
                t.compared,
                t.agreed,
                t.skipped
            );
        }
    }
    println!("{report}");
    let n = failures.len();
    failures.truncate(400);
    assert!(
        n == 0,
        "{n} disagreements with LLVM (first {}):\n{}\n{report}",
        failures.len(),
        failures.join("\n")
    );
}

/// LLVM's text with the mnemonic's encoding suffix dropped.
fn normalise(text: &str) -> String {
    let (m, rest) = text.split_once(' ').unwrap_or((text, ""));
    let m = base_mnemonic(m);
    if rest.is_empty() {
        m.to_string()
    } else {
        format!("{m} {rest}")
    }
}
