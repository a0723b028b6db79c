//! `cargo xtask gen-isa`: kfd-gpu's opcode tables, generated from LLVM.
//!
//! For every encoding family of the gfx9 and gfx11 ISAs and every target
//! the shader machine models, one instruction word per opcode value
//! (operands chosen valid for every operand size: even register numbers)
//! is disassembled with Debian's `llvm-mc` (LLVM 19, the oldest Debian
//! LLVM that knows gfx942); the mnemonic it prints (without the `_e32`/`_e64` encoding
//! suffix) is that opcode's name, an unknown encoding an empty name. The
//! tables go to `kfd-gpu/src/shader/isa/tables.rs`, which is committed:
//! `cargo xtask gen-isa --check` (run by `cargo xtask ci`) fails when
//! regenerating changes it.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use crate::project_root;

/// The LLVM that knows every modelled target.
pub const LLVM_MC: &str = "/usr/lib/llvm-19/bin/llvm-mc";

/// The targets with a table, as (table name, `-mcpu`, the encoding
/// families of its generation).
const TARGETS: &[(&str, &str, &[Family])] = &[
    ("GFX900", "gfx900", GFX9),
    ("GFX90A", "gfx90a", GFX9),
    ("GFX940", "gfx942", GFX9),
    ("GFX1100", "gfx1100", GFX11),
];

/// One encoding family: its name, how many opcodes, and candidate words
/// of the instruction with opcode `op` (LLVM's decoder wants the fields
/// an instruction does not use to be zero, so each family lists forms
/// with and without the optional operands; the first one LLVM accepts
/// names the opcode).
#[derive(Clone, Copy)]
struct Family {
    name: &'static str,
    ops: u32,
    forms: &'static [fn(u32) -> Vec<u32>],
}

/// The gfx9 encodings. Operands: sources s2/v2, second sources s4/v4,
/// destinations s6/v6, addresses `v[8:9]`; every one even, so 64-bit and
/// wider operands stay aligned (gfx90a requires it).
const GFX9: &[Family] = &[
    Family {
        name: "SOP2",
        ops: 0x60,
        forms: &[|op| vec![0x8000_0000 | op << 23 | 6 << 16 | 4 << 8 | 2]],
    },
    Family {
        name: "SOPK",
        ops: 0x1c,
        forms: &[|op| vec![0xb000_0000 | op << 23 | 6 << 16 | 0x10, 0]],
    },
    Family {
        name: "SOP1",
        ops: 0x100,
        forms: &[
            |op| vec![0xbe80_0000 | 6 << 16 | op << 8 | 2],
            |op| vec![0xbe80_0000 | op << 8 | 2],
            |op| vec![0xbe80_0000 | 6 << 16 | op << 8],
        ],
    },
    Family {
        name: "SOPC",
        ops: 0x80,
        forms: &[
            |op| vec![0xbf00_0000 | op << 16 | 4 << 8 | 2],
            |op| vec![0xbf00_0000 | op << 16],
        ],
    },
    Family {
        name: "SOPP",
        ops: 0x80,
        forms: &[|op| vec![0xbf80_0000 | op << 16]],
    },
    Family {
        name: "SMEM",
        ops: 0x100,
        forms: &[
            |op| vec![0xc002_0000 | op << 18 | 8 << 6 | 2, 0x10],
            |op| vec![0xc002_0000 | op << 18 | 8 << 6, 0],
            |op| vec![0xc002_0000 | op << 18, 0],
            // No operands at all (s_dcache_inv), or SDATA only
            // (s_memtime).
            |op| vec![0xc000_0000 | op << 18, 0],
            |op| vec![0xc000_0000 | op << 18 | 8 << 6, 0],
        ],
    },
    Family {
        name: "VOP2",
        ops: 0x3e,
        forms: &[|op| vec![op << 25 | 6 << 17 | 4 << 9 | 0x102, 0]],
    },
    Family {
        name: "VOP1",
        ops: 0x100,
        forms: &[
            |op| vec![0x7e00_0000 | 6 << 17 | op << 9 | 0x102],
            |op| vec![0x7e00_0000 | op << 9],
        ],
    },
    Family {
        name: "VOPC",
        ops: 0x100,
        forms: &[|op| vec![0x7c00_0000 | op << 17 | 4 << 9 | 0x102]],
    },
    Family {
        name: "VOP3",
        // Opcodes 0x380 and up put the VOP3P prefix in the first word.
        ops: 0x380,
        forms: &[
            |op| vec![0xd000_0000 | op << 16 | 6, 0x108 << 18 | 0x104 << 9 | 0x102],
            |op| vec![0xd000_0000 | op << 16 | 6, 0x104 << 9 | 0x102],
            |op| vec![0xd000_0000 | op << 16 | 6, 0x102],
            |op| {
                vec![
                    0xd000_0000 | op << 16 | 6 << 8 | 6,
                    0x108 << 18 | 0x104 << 9 | 0x102,
                ]
            },
            |op| vec![0xd000_0000 | op << 16 | 6, 0],
        ],
    },
    Family {
        name: "VOP3P",
        ops: 0x80,
        forms: &[
            |op| {
                vec![
                    0xd380_0000 | op << 16 | 8,
                    3 << 27 | 0x10c << 18 | 0x104 << 9 | 0x102,
                ]
            },
            |op| vec![0xd380_0000 | op << 16 | 8, 3 << 27 | 0x104 << 9 | 0x102],
            |op| vec![0xd380_0000 | op << 16 | 8, 0x10c << 18 | 0x104 << 9 | 0x102],
            // One source (v_accvgpr_read/write: an AccVGPR on one side).
            |op| vec![0xd380_0000 | op << 16 | 8, 3 << 27 | 0x102],
        ],
    },
    Family {
        name: "DS",
        ops: 0x100,
        forms: &[
            |op| vec![0xd800_0000 | op << 17, 6 << 24 | 4 << 16 | 2 << 8 | 8],
            |op| vec![0xd800_0000 | op << 17, 6 << 24 | 2 << 8 | 8],
            |op| vec![0xd800_0000 | op << 17, 6 << 24 | 8],
            |op| vec![0xd800_0000 | op << 17, 4 << 16 | 2 << 8 | 8],
            |op| vec![0xd800_0000 | op << 17, 2 << 8 | 8],
            |op| vec![0xd800_0000 | op << 17, 8],
            |op| vec![0xd800_0000 | op << 17, 6 << 24],
            |op| vec![0xd800_0000 | op << 17, 0],
        ],
    },
    Family {
        name: "FLAT",
        ops: 0x80,
        // FLAT has no SADDR: the field must be 0. Atomics that return
        // need GLC (bit 16).
        forms: &[
            |op| vec![0xdc00_0000 | op << 18, 6 << 24 | 4 << 8 | 8],
            |op| vec![0xdc00_0000 | op << 18, 6 << 24 | 8],
            |op| vec![0xdc00_0000 | op << 18, 4 << 8 | 8],
            |op| vec![0xdc01_0000 | op << 18, 6 << 24 | 4 << 8 | 8],
        ],
    },
    Family {
        name: "GLOBAL",
        ops: 0x80,
        forms: &[
            |op| vec![0xdc00_8000 | op << 18, 6 << 24 | 0x7f << 16 | 4 << 8 | 8],
            |op| vec![0xdc00_8000 | op << 18, 6 << 24 | 0x7f << 16 | 8],
            |op| vec![0xdc00_8000 | op << 18, 0x7f << 16 | 4 << 8 | 8],
            |op| vec![0xdc00_8000 | op << 18, 0x7f << 16 | 8],
        ],
    },
    Family {
        name: "SCRATCH",
        ops: 0x80,
        forms: &[
            |op| vec![0xdc00_4000 | op << 18, 6 << 24 | 0x7f << 16 | 4 << 8 | 8],
            |op| vec![0xdc00_4000 | op << 18, 6 << 24 | 0x7f << 16 | 8],
            |op| vec![0xdc00_4000 | op << 18, 0x7f << 16 | 4 << 8 | 8],
        ],
    },
    Family {
        name: "MUBUF",
        ops: 0x80,
        forms: &[
            |op| vec![0xe000_0000 | op << 18, 0x80 << 24 | 4 << 16 | 4 << 8 | 8],
            |op| vec![0xe000_0000 | op << 18, 0x80 << 24 | 4 << 16 | 8],
            |op| vec![0xe000_0000 | op << 18, 0x80 << 24 | 4 << 16],
        ],
    },
];

/// The gfx11 encodings (SOP*, VOP1/VOP2/VOPC and the DS operand word as
/// gfx9's; other prefixes and field positions moved). Operands as for
/// gfx9; `null` (code 124) is the scalar "none": SMEM's SOFFSET and the
/// SADDR of FLAT/GLOBAL/SCRATCH.
const GFX11: &[Family] = &[
    GFX9[0],
    GFX9[1],
    GFX9[2],
    GFX9[3],
    GFX9[4],
    Family {
        name: "SMEM",
        ops: 0x100,
        forms: &[
            |op| vec![0xf400_0000 | op << 18 | 8 << 6 | 1, 0xf800_0010],
            |op| vec![0xf400_0000 | op << 18 | 8 << 6 | 1, 0xf800_0000],
            // No operands at all (s_dcache_inv), or SDATA only
            // (s_memtime).
            |op| vec![0xf400_0000 | op << 18, 0xf800_0000],
            |op| vec![0xf400_0000 | op << 18 | 8 << 6, 0xf800_0000],
        ],
    },
    GFX9[6],
    GFX9[7],
    GFX9[8],
    Family {
        name: "VOP3",
        ops: 0x400,
        forms: &[
            |op| vec![0xd400_0000 | op << 16 | 6, 0x108 << 18 | 0x104 << 9 | 0x102],
            |op| vec![0xd400_0000 | op << 16 | 6, 0x104 << 9 | 0x102],
            |op| vec![0xd400_0000 | op << 16 | 6, 0x102],
            |op| {
                vec![
                    0xd400_0000 | op << 16 | 6 << 8 | 6,
                    0x108 << 18 | 0x104 << 9 | 0x102,
                ]
            },
            |op| vec![0xd400_0000 | op << 16 | 6, 0],
        ],
    },
    Family {
        name: "VOP3P",
        ops: 0x80,
        forms: &[
            |op| {
                vec![
                    0xcc00_0000 | op << 16 | 8,
                    3 << 27 | 0x10c << 18 | 0x104 << 9 | 0x102,
                ]
            },
            |op| vec![0xcc00_0000 | op << 16 | 8, 3 << 27 | 0x104 << 9 | 0x102],
            |op| vec![0xcc00_0000 | op << 16 | 8, 0x10c << 18 | 0x104 << 9 | 0x102],
        ],
    },
    Family {
        name: "DS",
        ops: 0x100,
        forms: &[
            |op| vec![0xd800_0000 | op << 18, 6 << 24 | 4 << 16 | 2 << 8 | 8],
            |op| vec![0xd800_0000 | op << 18, 6 << 24 | 2 << 8 | 8],
            |op| vec![0xd800_0000 | op << 18, 6 << 24 | 8],
            |op| vec![0xd800_0000 | op << 18, 4 << 16 | 2 << 8 | 8],
            |op| vec![0xd800_0000 | op << 18, 2 << 8 | 8],
            |op| vec![0xd800_0000 | op << 18, 8],
            |op| vec![0xd800_0000 | op << 18, 6 << 24],
            |op| vec![0xd800_0000 | op << 18, 0],
        ],
    },
    Family {
        name: "FLAT",
        ops: 0x80,
        // Atomics that return need GLC (bit 14).
        forms: &[
            |op| vec![0xdc00_0000 | op << 18, 6 << 24 | 0x7c << 16 | 4 << 8 | 8],
            |op| vec![0xdc00_0000 | op << 18, 6 << 24 | 0x7c << 16 | 8],
            |op| vec![0xdc00_0000 | op << 18, 0x7c << 16 | 4 << 8 | 8],
            |op| vec![0xdc00_4000 | op << 18, 6 << 24 | 0x7c << 16 | 4 << 8 | 8],
        ],
    },
    Family {
        name: "GLOBAL",
        ops: 0x80,
        forms: &[
            |op| vec![0xdc02_0000 | op << 18, 6 << 24 | 0x7c << 16 | 4 << 8 | 8],
            |op| vec![0xdc02_0000 | op << 18, 6 << 24 | 0x7c << 16 | 8],
            |op| vec![0xdc02_0000 | op << 18, 0x7c << 16 | 4 << 8 | 8],
            |op| vec![0xdc02_0000 | op << 18, 0x7c << 16 | 8],
            |op| vec![0xdc02_4000 | op << 18, 6 << 24 | 0x7c << 16 | 4 << 8 | 8],
        ],
    },
    Family {
        name: "SCRATCH",
        ops: 0x80,
        // SVE (second word, bit 23): the address VGPR is used.
        forms: &[
            |op| {
                vec![
                    0xdc01_0000 | op << 18,
                    6 << 24 | 1 << 23 | 0x7c << 16 | 4 << 8 | 8,
                ]
            },
            |op| vec![0xdc01_0000 | op << 18, 6 << 24 | 1 << 23 | 0x7c << 16 | 8],
            |op| vec![0xdc01_0000 | op << 18, 1 << 23 | 0x7c << 16 | 4 << 8 | 8],
        ],
    },
    Family {
        name: "MUBUF",
        ops: 0x100,
        forms: &[
            |op| vec![0xe000_0000 | op << 18, 0x80 << 24 | 4 << 16 | 4 << 8 | 8],
            |op| vec![0xe000_0000 | op << 18, 0x80 << 24 | 4 << 16 | 8],
            |op| vec![0xe000_0000 | op << 18, 0x80 << 24 | 4 << 16],
            |op| vec![0xe000_4000 | op << 18, 0x80 << 24 | 4 << 16 | 4 << 8 | 8],
        ],
    },
    // VOPD, two operations in one instruction: X's opcodes (bits 25:22)
    // with `v_dual_mov_b32` (8) as Y, and Y's (bits 21:17) with it as X;
    // `Y` names come after LLVM's `::`. X: v6 = f(v2[, v4]); Y: v7 =
    // f(v3[, v5]) (VGPR banks apart, as VOPD wants); the mov's second
    // source field is 0.
    Family {
        name: "VOPDX",
        ops: 0x10,
        forms: &[
            |op| {
                vec![
                    0xc800_0000 | op << 22 | 8 << 17 | 4 << 9 | 0x102,
                    0x0606_0103,
                ]
            },
            |op| vec![0xc800_0000 | op << 22 | 8 << 17 | 0x102, 0x0606_0103],
        ],
    },
    Family {
        name: "VOPDY",
        ops: 0x20,
        forms: &[
            |op| vec![0xc800_0000 | 8 << 22 | op << 17 | 0x102, 0x0606_0b03],
            |op| vec![0xc800_0000 | 8 << 22 | op << 17 | 0x102, 0x0606_0103],
        ],
    },
];

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

/// A line between two opcodes' lines: `s_mov_b32 s101, 0x7b`.
const MARKER: u32 = 0xbee5_00ff;
const MARKER_TEXT: &str = "s_mov_b32 s101, 0x7b";

/// The mnemonic of every opcode of one family in one form. `llvm-mc --disassemble`
/// decodes each input line on its own and prints nothing for an invalid
/// one, so each opcode's line (its words and a spare word for a literal)
/// is followed by a marker line, and the first instruction between two
/// markers is that opcode's.
fn disassemble_form(
    mcpu: &str,
    f: &Family,
    form: fn(u32) -> Vec<u32>,
) -> Result<Vec<String>, String> {
    let mut input = String::new();
    for op in 0..f.ops {
        let mut w = form(op);
        w.push(0);
        input.push_str(&hex(&w));
        input.push('\n');
        input.push_str(&hex(&[MARKER, 0x7b]));
        input.push('\n');
    }
    let mut child = Command::new(LLVM_MC)
        .args([
            "--disassemble",
            "-triple=amdgcn-amd-amdhsa",
            &format!("-mcpu={mcpu}"),
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("{LLVM_MC}: {e} (apt-get install llvm-19)"))?;
    let feed = {
        use std::io::Write;
        let mut stdin = child.stdin.take().ok_or("llvm-mc: no stdin")?;
        std::thread::spawn(move || stdin.write_all(input.as_bytes()))
    };
    let out = child
        .wait_with_output()
        .map_err(|e| format!("llvm-mc: {e}"))?;
    feed.join()
        .map_err(|_| "llvm-mc: input thread panicked".to_string())?
        .map_err(|e| format!("llvm-mc: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    // An invalid first word is skipped with a warning naming its line and
    // column 1, and decoding goes on with the words after it: such an
    // opcode has no instruction, whatever follows on its line.
    let mut invalid = std::collections::BTreeSet::new();
    for l in String::from_utf8_lossy(&out.stderr).lines() {
        let mut it = l.strip_prefix("<stdin>:").unwrap_or("").split(':');
        if let (Some(line), Some("1")) = (it.next().and_then(|n| n.parse::<u32>().ok()), it.next())
        {
            if l.contains("invalid instruction encoding") && line % 2 == 1 {
                invalid.insert((line - 1) / 2);
            }
        }
    }
    let mut names = Vec::with_capacity(f.ops as usize);
    let mut first: Option<String> = None;
    for l in text.lines() {
        let l = l.trim();
        if l.is_empty() || l.starts_with('.') {
            continue;
        }
        if l == MARKER_TEXT {
            let name = first.take().unwrap_or_default();
            let op = names.len() as u32;
            names.push(if invalid.contains(&op) {
                String::new()
            } else {
                name
            });
            continue;
        }
        if first.is_none() {
            // VOPD's Y operation follows `::`.
            let l = match (f.name, l.split_once("::")) {
                ("VOPDY", Some((_, y))) => y,
                _ => l,
            };
            let m = l.split_whitespace().next().unwrap_or("");
            let m = m
                .strip_suffix("_e32")
                .or_else(|| m.strip_suffix("_e64"))
                .unwrap_or(m);
            first = Some(m.to_string());
        }
    }
    if names.len() != f.ops as usize {
        return Err(format!(
            "{mcpu} {}: {} opcodes disassembled, {} expected",
            f.name,
            names.len(),
            f.ops
        ));
    }
    Ok(names)
}

/// The mnemonic of every opcode of one family: from the first form LLVM
/// decodes.
fn disassemble(mcpu: &str, f: &Family) -> Result<Vec<String>, String> {
    let mut names = vec![String::new(); f.ops as usize];
    for form in f.forms {
        for (n, m) in names.iter_mut().zip(disassemble_form(mcpu, f, *form)?) {
            if n.is_empty() {
                *n = m;
            }
        }
    }
    Ok(names)
}

fn render() -> Result<String, String> {
    let mut s = String::from(
        "//! Opcode tables of the gfx9 and gfx11 ISAs, per target and encoding family:\n\
         //! the mnemonic LLVM 19's disassembler gives each opcode value (empty\n\
         //! when it has none). Generated by `cargo xtask gen-isa`; do not edit.\n\n",
    );
    for (table, mcpu, families) in TARGETS {
        let _ = writeln!(
            s,
            "/// The tables of `{mcpu}`.\npub(crate) mod {} {{",
            table.to_lowercase()
        );
        for f in *families {
            let names = disassemble(mcpu, f)?;
            let _ = writeln!(
                s,
                "    /// {} opcodes.\n    pub(crate) static {}: [&str; {}] = [",
                f.name, f.name, f.ops
            );
            for n in names {
                let _ = writeln!(s, "        \"{n}\",");
            }
            s.push_str("    ];\n");
        }
        s.push_str("}\n\n");
    }
    s.pop();
    Ok(s)
}

fn out_path() -> PathBuf {
    project_root().join("kfd-gpu/src/shader/isa/tables.rs")
}

/// Entry point: `args` are the words after `gen-isa`.
pub fn run(args: &[String]) -> Result<(), String> {
    let check = args.iter().any(|a| a == "--check");
    let text = render()?;
    crate::write_generated(&out_path(), &text, check, "gen-isa")
}
