//! Test support: assemble with Debian's LLVM 19 (`llvm-mc`), run one
//! workgroup-grid kernel on flat memory.
#![allow(dead_code)]

use std::process::{Command, Stdio};

use kfd_gpu::mem::FlatMemory;
use kfd_gpu::shader::{
    self, CodeCache, Dispatch, DispatchError, KernelCode, Limits, Stats, Target,
};

/// The LLVM that knows every modelled target (`apt-get install llvm-19`;
/// `cargo xtask ci` installs it).
pub const LLVM_MC: &str = "/usr/lib/llvm-19/bin/llvm-mc";

/// `llvm-objcopy` of the same LLVM.
pub const LLVM_OBJCOPY: &str = "/usr/lib/llvm-19/bin/llvm-objcopy";

/// Runs `tool` with `args`, `input` on its standard input; its standard
/// output. Panics (failing the test loudly) when the tool is missing or
/// fails.
pub fn pipe(tool: &str, args: &[&str], input: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut child = Command::new(tool)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{tool}: {e}: install llvm-19 (cargo xtask ci does)"));
    let mut stdin = child.stdin.take().unwrap();
    let owned = input.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&owned));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && !err.contains("error"),
        "{tool} failed:\n{}\n{err}",
        String::from_utf8_lossy(input)
    );
    out.stdout
}

/// The instruction words of `asm` for `target`: assembled into an object
/// (so branches to labels are resolved) whose `.text` is extracted.
pub fn assemble(target: Target, asm: &str) -> Vec<u32> {
    assemble_with(target, "", asm)
}

/// As [`assemble`], with `llvm-mc -mattr=<mattr>` (e.g.
/// `+wavefrontsize64`) when `mattr` is not empty.
pub fn assemble_with(target: Target, mattr: &str, asm: &str) -> Vec<u32> {
    let cpu = format!("-mcpu={}", target.llvm_cpu());
    let attr = format!("-mattr={mattr}");
    let mut args = vec![
        "-triple=amdgcn-amd-amdhsa",
        &cpu,
        "-filetype=obj",
        "-o",
        "-",
    ];
    if !mattr.is_empty() {
        args.push(&attr);
    }
    let obj = pipe(LLVM_MC, &args, asm.as_bytes());
    let text = pipe(
        LLVM_OBJCOPY,
        &["-O", "binary", "--only-section=.text", "-", "-"],
        &obj,
    );
    assert_eq!(text.len() % 4, 0);
    text.chunks(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// Where the test kernel's pieces live in its flat memory.
pub const MEM_BASE: u64 = 0x100_0000;
/// Size of the flat memory.
pub const MEM_SIZE: u64 = 16 << 20;
/// The code.
pub const CODE: u64 = MEM_BASE;
/// The kernel arguments.
pub const KERNARG: u64 = MEM_BASE + 0x10_0000;
/// Free memory for the test's data.
pub const DATA: u64 = MEM_BASE + 0x20_0000;
/// The LDS aperture (gfx9's).
pub const SHARED_BASE: u64 = 1 << 48;
/// The private aperture (gfx9's).
pub const PRIVATE_BASE: u64 = 2 << 48;

/// A test kernel: its code, user SGPRs and launch shape.
#[derive(Debug, Clone)]
pub struct Kernel {
    /// The target.
    pub target: Target,
    /// Assembly source.
    pub asm: String,
    /// Kernel code properties (user SGPRs): default kernarg pointer only,
    /// in s[0:1].
    pub properties: u32,
    /// `compute_pgm_rsrc1` (the float mode: 0 flushes denormals).
    pub rsrc1: u32,
    /// `compute_pgm_rsrc2` without the USER_SGPR field (computed).
    pub rsrc2: u32,
    /// Extra user SGPRs (preloaded kernargs).
    pub extra_user_sgprs: u32,
    /// Grid and workgroup sizes.
    pub grid: [u32; 3],
    /// Workgroup size.
    pub workgroup: [u16; 3],
    /// LDS bytes.
    pub lds: u32,
    /// Private bytes per work-item.
    pub private: u32,
}

impl Kernel {
    /// One wave of 64 work-items running `asm`, with the kernarg pointer
    /// in s[0:1] and the workgroup id X in s2.
    pub fn new(target: Target, asm: &str) -> Kernel {
        Kernel {
            target,
            asm: asm.to_string(),
            properties: 1 << 3,
            rsrc1: 0,
            rsrc2: 1 << 7,
            extra_user_sgprs: 0,
            grid: [64, 1, 1],
            workgroup: [64, 1, 1],
            lds: 0,
            private: 0,
        }
    }

    /// Runs the kernel on `mem` (which it writes its code into).
    pub fn run(&self, mem: &FlatMemory) -> Result<Stats, DispatchError> {
        self.run_code(mem, &assemble(self.target, &self.asm))
    }

    /// Runs machine code `words` (not [`Kernel::asm`]) with this
    /// kernel's set-up.
    pub fn run_code(&self, mem: &FlatMemory, words: &[u32]) -> Result<Stats, DispatchError> {
        for (k, w) in words.iter().enumerate() {
            mem.store(CODE + 4 * k as u64, *w);
        }
        // Pad with s_endpgm's neighbour s_code_end-like zeros: nothing
        // past the code is executed by a correct kernel.
        let user = (self.properties & 1) * 4
            + (1..6).filter(|b| self.properties >> b & 1 != 0).count() as u32 * 2
            + (self.properties >> 6 & 1)
            + self.extra_user_sgprs;
        let d = Dispatch {
            target: self.target,
            code: KernelCode {
                entry: CODE,
                rsrc1: self.rsrc1,
                rsrc2: self.rsrc2 | user << 1,
                rsrc3: 0,
                properties: self.properties,
                kernarg_preload: 0,
            },
            grid: self.grid,
            workgroup: self.workgroup,
            group_segment_size: self.lds,
            private_segment_size: self.private,
            kernarg: KERNARG,
            packet: 0,
            queue: 0,
            dispatch_id: 0,
            shared_base: SHARED_BASE,
            private_base: PRIVATE_BASE,
            mem,
            limits: Limits {
                wave_instructions: 1 << 24,
                ..Limits::default()
            },
            stop: &|| false,
            clock: &|| 1000,
            realtime: &|| 2000,
        };
        shader::run(&d, &CodeCache::new())
    }
}

/// A fresh flat memory for a test kernel.
pub fn memory() -> FlatMemory {
    FlatMemory::new(MEM_BASE, MEM_SIZE)
}

/// Runs `asm` as one wave whose kernarg holds `DATA`: a common shape for
/// instruction tests that store results at `DATA + 4 * lane`.
pub fn run_wave(target: Target, asm: &str) -> FlatMemory {
    let mem = memory();
    mem.store::<u64>(KERNARG, DATA);
    Kernel::new(target, asm)
        .run(&mem)
        .unwrap_or_else(|e| panic!("{e}"));
    mem
}

/// The u32 at `DATA + 4 * i` for i in 0..n.
pub fn results(mem: &FlatMemory, n: usize) -> Vec<u32> {
    (0..n)
        .map(|i| mem.load::<u32>(DATA + 4 * i as u64))
        .collect()
}
