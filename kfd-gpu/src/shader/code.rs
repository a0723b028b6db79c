//! Decoded code, cached: instructions are decoded once per code page and
//! kept for every later dispatch whose page holds the same words.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use super::exec::{self, Exec};
use super::isa::{decode, Illegal, Inst, Target};
use crate::mem::{Fault, Tlb};
use kfd_sys::sync::lock;
use kfd_sys::PAGE_SIZE;

/// Words per cached code page (one GPU page).
const WORDS: usize = (PAGE_SIZE / 4) as usize;

/// A decoded instruction with its executor, or why it cannot run.
#[derive(Debug, Clone, Copy)]
pub enum Slot {
    /// Ready to run.
    Run(Inst, Exec),
    /// Not an instruction of the target.
    Illegal(Illegal),
    /// An instruction of the target that the model does not execute.
    Missing(Inst),
}

/// One page of code: its words (and the two after it, for an instruction
/// that crosses into the next page) and its instructions decoded on
/// first use.
#[derive(Debug)]
pub struct Page {
    words: Box<[u32]>,
    slots: Box<[OnceLock<Slot>]>,
    target: Target,
}

impl Page {
    fn new(target: Target, words: Box<[u32]>) -> Page {
        Page {
            words,
            slots: (0..WORDS).map(|_| OnceLock::new()).collect(),
            target,
        }
    }

    /// The instruction at word `i` of the page.
    #[inline]
    pub fn slot(&self, i: usize) -> &Slot {
        self.slots[i].get_or_init(|| {
            let w = [self.words[i], self.words[i + 1], self.words[i + 2]];
            match decode(self.target, &w) {
                Ok(inst) => match exec::lookup_inst(self.target, &inst) {
                    Some(e) => Slot::Run(inst, e),
                    None => Slot::Missing(inst),
                },
                Err(e) => Slot::Illegal(e),
            }
        })
    }
}

/// Decoded pages of every code object run so far, by target and page
/// address (shared by the dispatches of one GPU).
#[derive(Debug, Default)]
pub struct CodeCache {
    pages: Mutex<HashMap<(Target, u64), Arc<Page>>>,
}

impl CodeCache {
    /// An empty cache.
    pub fn new() -> CodeCache {
        CodeCache::default()
    }

    /// Pages held.
    pub fn len(&self) -> usize {
        lock(&self.pages).len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The page at `base` as memory holds it now: the cached one if its
    /// words are the same, else a new one (which replaces it).
    fn page(&self, target: Target, base: u64, tlb: &mut Tlb<'_>) -> Result<Arc<Page>, Fault> {
        let mut words = vec![0u32; WORDS + 2].into_boxed_slice();
        for (k, w) in words.iter_mut().enumerate() {
            match tlb.load::<u32>(base + 4 * k as u64) {
                Ok(v) => *w = v,
                // The words past the page may be unmapped: an instruction
                // that needs them reads zeros (and cannot be valid code).
                Err(_) if k >= WORDS => {}
                Err(f) => return Err(f),
            }
        }
        let mut pages = lock(&self.pages);
        if let Some(p) = pages.get(&(target, base)) {
            if p.words == words {
                return Ok(p.clone());
            }
        }
        let p = Arc::new(Page::new(target, words));
        pages.insert((target, base), p.clone());
        Ok(p)
    }
}

/// One dispatch's view of the code: pages checked against memory once
/// per dispatch.
#[derive(Debug)]
pub struct CodeView<'c> {
    cache: &'c CodeCache,
    target: Target,
    pages: HashMap<u64, Arc<Page>>,
}

impl<'c> CodeView<'c> {
    /// A view for one dispatch.
    pub fn new(cache: &'c CodeCache, target: Target) -> CodeView<'c> {
        CodeView {
            cache,
            target,
            pages: HashMap::new(),
        }
    }

    /// The page holding `pc` and the word index of `pc` in it.
    pub fn page(&mut self, pc: u64, tlb: &mut Tlb<'_>) -> Result<(Arc<Page>, usize), Fault> {
        let base = pc & !(PAGE_SIZE - 1);
        let i = ((pc - base) / 4) as usize;
        if let Some(p) = self.pages.get(&base) {
            return Ok((p.clone(), i));
        }
        let p = self.cache.page(self.target, base, tlb)?;
        self.pages.insert(base, p.clone());
        Ok((p, i))
    }
}

/// The first address of the page holding `pc`.
pub fn page_base(pc: u64) -> u64 {
    pc & !(PAGE_SIZE - 1)
}
