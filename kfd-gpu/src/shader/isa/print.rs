//! Instructions as text in LLVM's AMDGPU assembly syntax.

use super::{Inst, Target};

impl Inst {
    /// The instruction in LLVM's assembly syntax (mnemonic without the
    /// `_e32`/`_e64`/`_sdwa`/`_dpp` encoding suffix), or why this printer
    /// cannot print its form.
    pub fn disasm(&self, target: Target) -> Result<String, &'static str> {
        let _ = target;
        Err("printer: not yet")
    }
}
