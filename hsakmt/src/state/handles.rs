//! [`HandleTable`]: the one kind of table behind every opaque handle the
//! border hands to C (context handles, device handles, buffer handles of
//! the DRM-handle layer and of libdtif's libdrm entry points).
//!
//! A table issues serials counted up from 1, never reused, and gives
//! each a token (a 64-bit value C holds in a pointer-sized handle) of one
//! of two forms ([`Form`]):
//!
//! - **tagged**: not an address. The table's [`Tag`] in bits 63..48 (its
//!   top byte neither `0x00` nor `0xff`), the serial in bits 47..4, bits
//!   3..0 zero: never NULL, never canonical with 4- or 5-level paging,
//!   16-byte aligned. For handles C only passes back to us.
//! - **cell**: the address of a 16-byte, zeroed, writable cell made for
//!   the token and never freed (the table remembers which serial each
//!   of its cells carries). For handles C code may read or write through
//!   as through the C library's (which are pointers to live structs):
//!   that reads zeros, as it did before, instead of faulting. The price
//!   is 16 bytes (and 8 of the table's) per token for the life of the
//!   process.
//!
//! Either way a token names at most one object in the life of the
//! process: after its object is gone it stays unknown
//! ([`BadToken::Stale`]) instead of naming a later one, and a token of
//! another table is refused ([`BadToken::Foreign`]). Each caller turns a
//! [`BadToken`] into the status (or errno) its C function returns for a
//! bad handle.
//!
//! A table is not synchronised: its owner keeps it behind a lock.

use std::collections::BTreeMap;

/// The top 16 bits of every token of one tagged table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
// Tagged tables are those of buffer handles (the newest build).
#[cfg_attr(not(feature = "newest"), allow(dead_code))]
pub(crate) struct Tag(u16);

impl Tag {
    /// Buffer handles of the DRM-handle layer (`HsaMemoryObjectHandle`).
    #[cfg(feature = "newest")]
    pub(crate) const MEMORY_OBJECT: Tag = Tag(0xB0B1);
    /// libdtif's libdrm buffer objects (`amdgpu_bo_handle`).
    #[cfg(feature = "dtif")]
    pub(crate) const DTIF_BO: Tag = Tag(0xB0B0);
}

/// How a table's tokens look (see the module docs).
#[derive(Debug)]
pub(crate) enum Form {
    /// Tagged values, never addresses.
    // Tagged tables are those of buffer handles (the newest build).
    #[cfg_attr(not(feature = "newest"), allow(dead_code))]
    Tagged(Tag),
    /// Addresses of cells never freed, with the serial each carries.
    Cells(BTreeMap<u64, u64>),
}

/// Bits below a tagged token's serial (kept zero: 16-byte aligned).
const LOW_BITS: u32 = 4;
/// Bits of a tagged token's serial.
const SERIAL_BITS: u32 = 48 - LOW_BITS;
/// The largest serial a table issues.
const MAX_SERIAL: u64 = (1 << SERIAL_BITS) - 1;

/// A token as C holds it (see the module docs for its forms).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Token(u64);

impl Token {
    /// The token C passed back as a pointer (never dereferenced).
    pub(crate) fn from_ptr<T>(p: *const T) -> Token {
        Token(p as usize as u64)
    }

    /// The token as the pointer-sized handle C receives.
    pub(crate) fn as_ptr<T>(self) -> *mut T {
        self.0 as usize as *mut T
    }
}

/// Why a token names nothing in a table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BadToken {
    /// NULL.
    Null,
    /// Not a token of this table: another table's, or not a token at all.
    Foreign,
    /// A token this table issued whose object is gone.
    Stale,
    /// A tagged token with this table's tag and a serial it never issued.
    Unissued,
}

/// Objects named by never-reused tokens (see the module docs).
#[derive(Debug)]
pub(crate) struct HandleTable<T> {
    form: Form,
    /// The last serial issued (0: none yet).
    issued: u64,
    /// Live objects by serial, with their tokens.
    live: BTreeMap<u64, (Token, T)>,
}

impl<T> HandleTable<T> {
    /// An empty table of tagged tokens carrying `tag`.
    // Tagged tables are those of buffer handles (the newest build).
    #[cfg_attr(not(feature = "newest"), allow(dead_code))]
    pub(crate) const fn tagged(tag: Tag) -> Self {
        HandleTable {
            form: Form::Tagged(tag),
            issued: 0,
            live: BTreeMap::new(),
        }
    }

    /// An empty table whose tokens are addresses of cells never freed.
    pub(crate) const fn cells() -> Self {
        HandleTable {
            form: Form::Cells(BTreeMap::new()),
            issued: 0,
            live: BTreeMap::new(),
        }
    }

    /// Stores `value` under a new token; `value` back once the table has
    /// issued its last serial (2^44 - 1 of them).
    pub(crate) fn insert(&mut self, value: T) -> Result<Token, T> {
        if self.issued >= MAX_SERIAL {
            return Err(value);
        }
        self.issued += 1;
        let serial = self.issued;
        let token = match &mut self.form {
            Form::Tagged(tag) => Token(u64::from(tag.0) << 48 | serial << LOW_BITS),
            Form::Cells(cells) => {
                // Never freed: the address is never handed out again.
                let cell = Box::into_raw(Box::new(Cell([0; 16])));
                let token = Token::from_ptr(cell);
                cells.insert(token.0, serial);
                token
            }
        };
        self.live.insert(serial, (token, value));
        Ok(token)
    }

    /// The serial `t` carries in this table, or why it carries none.
    fn serial_of(&self, t: Token) -> Result<u64, BadToken> {
        if t.0 == 0 {
            return Err(BadToken::Null);
        }
        match &self.form {
            Form::Tagged(tag) => {
                let serial = (t.0 & ((1 << 48) - 1)) >> LOW_BITS;
                let aligned = t.0 & ((1 << LOW_BITS) - 1) == 0;
                if (t.0 >> 48) as u16 != tag.0 || !aligned || serial == 0 {
                    Err(BadToken::Foreign)
                } else if serial > self.issued {
                    Err(BadToken::Unissued)
                } else {
                    Ok(serial)
                }
            }
            Form::Cells(cells) => cells.get(&t.0).copied().ok_or(BadToken::Foreign),
        }
    }

    /// The serial of a live token, or why `t` is not one.
    fn live_serial(&self, t: Token) -> Result<u64, BadToken> {
        let serial = self.serial_of(t)?;
        if self.live.contains_key(&serial) {
            Ok(serial)
        } else {
            Err(BadToken::Stale)
        }
    }

    /// The object `t` names.
    pub(crate) fn get(&self, t: Token) -> Result<&T, BadToken> {
        let s = self.live_serial(t)?;
        Ok(&self.live[&s].1)
    }

    /// The object `t` names, to change it.
    // Only buffer handles (the newest build) change entries in place.
    #[cfg_attr(not(feature = "newest"), allow(dead_code))]
    pub(crate) fn get_mut(&mut self, t: Token) -> Result<&mut T, BadToken> {
        let s = self.live_serial(t)?;
        Ok(&mut self.live.get_mut(&s).expect("live serial").1)
    }

    /// Takes the object `t` names out of the table; `t` is stale from
    /// here on.
    pub(crate) fn remove(&mut self, t: Token) -> Result<T, BadToken> {
        let s = self.live_serial(t)?;
        Ok(self.live.remove(&s).expect("live serial").1)
    }

    /// The first live object (in the order they were inserted) for which
    /// `pred` holds, with its token.
    pub(crate) fn find(&self, mut pred: impl FnMut(&T) -> bool) -> Option<(Token, &T)> {
        self.live
            .values()
            .find(|(_, v)| pred(v))
            .map(|(t, v)| (*t, v))
    }

    /// [`find`](Self::find), to change the object found.
    // Only buffer handles (the newest build) change entries in place.
    #[cfg_attr(not(feature = "newest"), allow(dead_code))]
    pub(crate) fn find_mut(&mut self, mut pred: impl FnMut(&T) -> bool) -> Option<(Token, &mut T)> {
        self.live
            .values_mut()
            .find(|(_, v)| pred(v))
            .map(|(t, v)| (*t, v))
    }

    /// Drops every object for which `keep` is false (their tokens become
    /// stale).
    pub(crate) fn retain(&mut self, mut keep: impl FnMut(&T) -> bool) {
        self.live.retain(|_, (_, v)| keep(v));
    }

    /// A table that has issued serials up to `issued`: for tests of the
    /// end of the serials.
    #[cfg(test)]
    fn issued_up_to(form: Form, issued: u64) -> Self {
        HandleTable {
            form,
            issued,
            live: BTreeMap::new(),
        }
    }
}

/// What a cell token points at: 16 zero bytes, never read by us, aligned
/// as the C library's structs are.
#[repr(C, align(16))]
struct Cell([u8; 16]);

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::c_void;
    use std::sync::{Arc, Mutex};

    /// A tag of the tests' own tagged tables.
    const TEST_TAG: Tag = Tag(0x7E57);

    /// A tagged table and a cell table, for tests that hold for both.
    fn both<T>() -> [HandleTable<T>; 2] {
        [HandleTable::tagged(TEST_TAG), HandleTable::cells()]
    }

    #[test]
    fn tagged_tokens_are_never_null_pointers_or_misaligned() {
        let tags = [TEST_TAG];
        #[cfg(feature = "newest")]
        let tags = [&tags[..], &[Tag::MEMORY_OBJECT]].concat();
        #[cfg(feature = "dtif")]
        let tags = [&tags[..], &[Tag::DTIF_BO]].concat();
        for (i, tag) in tags.iter().enumerate() {
            let mut t = HandleTable::tagged(*tag);
            let a = t.insert(()).unwrap();
            assert_ne!(a.0, 0);
            assert_eq!(a.0 % 16, 0);
            // Not canonical with 4-level (bits 63..47) or 5-level
            // (bits 63..56) paging.
            assert!(a.0 >> 47 != 0 && a.0 >> 47 != (1 << 17) - 1);
            assert!(a.0 >> 56 != 0 && a.0 >> 56 != 0xff);
            for other in &tags[i + 1..] {
                assert_ne!(tag, other, "two tables share a tag");
            }
        }
    }

    #[test]
    fn cell_tokens_are_zeroed_writable_cells() {
        let mut t = HandleTable::cells();
        let a = t.insert(()).unwrap();
        let b = t.insert(()).unwrap();
        assert_ne!(a, b);
        assert_eq!(a.0 % 16, 0);
        let p = a.as_ptr::<u8>();
        // SAFETY: a cell token is the address of a live 16-byte cell
        // that is never freed and that nothing of ours reads.
        unsafe {
            assert_eq!(p.cast::<[u8; 16]>().read(), [0; 16]);
            p.write(0x5a);
        }
        // What C writes through it changes nothing of the table.
        assert_eq!(t.get(a), Ok(&()));
        t.remove(a).unwrap();
        // SAFETY: as above: removing the object leaves the cell.
        unsafe { p.write(0x5b) };
        assert_eq!(t.get(a), Err(BadToken::Stale));
    }

    #[test]
    fn a_stale_token_never_names_a_later_object() {
        for mut t in both() {
            let a = t.insert("a").unwrap();
            assert_eq!(t.get(a), Ok(&"a"));
            assert_eq!(t.remove(a), Ok("a"));
            assert_eq!(t.get(a), Err(BadToken::Stale));
            assert_eq!(t.remove(a), Err(BadToken::Stale));
            // Many objects made and freed after it: none takes its token.
            for i in 0..1000 {
                let b = t.insert("b").unwrap();
                assert_ne!(b, a, "reuse after {i} inserts");
                if i % 2 == 0 {
                    t.remove(b).unwrap();
                }
            }
            assert_eq!(t.get(a), Err(BadToken::Stale));
            assert_eq!(t.get_mut(a), Err(BadToken::Stale));
        }
    }

    #[test]
    fn tokens_of_other_tables_and_garbage_are_refused() {
        let mut bos = HandleTable::tagged(TEST_TAG);
        let mut other = HandleTable::tagged(Tag(0x7E58));
        let mut cells = HandleTable::cells();
        let mut cells2 = HandleTable::cells();
        let b = bos.insert(1).unwrap();
        let o = other.insert(2).unwrap();
        let c = cells.insert(3).unwrap();
        let c2 = cells2.insert(4).unwrap();
        // The same serial in another table, each form with the other's.
        assert_eq!(bos.get(o), Err(BadToken::Foreign));
        assert_eq!(other.get(b), Err(BadToken::Foreign));
        assert_eq!(cells.get(c2), Err(BadToken::Foreign));
        assert_eq!(bos.get(c), Err(BadToken::Foreign));
        assert_eq!(cells.get(b), Err(BadToken::Foreign));
        let null = Token::from_ptr(std::ptr::null::<u8>());
        assert_eq!(bos.get(null), Err(BadToken::Null));
        assert_eq!(cells.get(null), Err(BadToken::Null));
        // A heap address, a misaligned token, one never issued.
        let x = Box::new(0u64);
        assert_eq!(bos.get(Token::from_ptr(&*x)), Err(BadToken::Foreign));
        assert_eq!(cells.get(Token::from_ptr(&*x)), Err(BadToken::Foreign));
        assert_eq!(cells.get(Token(c.0 + 1)), Err(BadToken::Foreign));
        assert_eq!(bos.get(Token(b.0 + 1)), Err(BadToken::Foreign));
        assert_eq!(bos.get(Token(b.0 + 16)), Err(BadToken::Unissued));
        assert_eq!(
            bos.get(Token(u64::from(TEST_TAG.0) << 48)),
            Err(BadToken::Foreign)
        );
        assert_eq!((bos.get(b), cells.get(c)), (Ok(&1), Ok(&3)));
    }

    #[test]
    fn find_retain_and_pointer_round_trip() {
        for mut t in both() {
            let a = t.insert((1, 128)).unwrap();
            let b = t.insert((2, 128)).unwrap();
            assert_eq!(t.find(|v| v.0 == 2).map(|(k, _)| k), Some(b));
            if let Some((k, v)) = t.find_mut(|v| v.0 == 1) {
                assert_eq!(k, a);
                v.1 = 129;
            }
            assert_eq!(t.get(a), Ok(&(1, 129)));
            t.retain(|v| v.0 != 1);
            assert_eq!(t.get(a), Err(BadToken::Stale));
            assert_eq!(Token::from_ptr(b.as_ptr::<c_void>()), b);
        }
    }

    #[test]
    fn the_last_serial_is_issued_once() {
        for form in [Form::Tagged(TEST_TAG), Form::Cells(BTreeMap::new())] {
            let mut t = HandleTable::issued_up_to(form, MAX_SERIAL - 1);
            let last = t.insert(6).unwrap();
            assert_eq!(t.insert(7), Err(7));
            t.remove(last).unwrap();
            assert_eq!(t.insert(8), Err(8), "a serial came back");
        }
    }

    /// Threads sharing one table (behind its owner's lock) never get the
    /// same token, and each finds exactly its own objects.
    #[test]
    fn shared_between_threads_tokens_stay_unique() {
        for table in both() {
            let t = Arc::new(Mutex::new(table));
            let workers: Vec<_> = (0..4u32)
                .map(|w| {
                    let t = t.clone();
                    std::thread::spawn(move || {
                        let mut mine = Vec::new();
                        for i in 0..500u32 {
                            let tok = t.lock().unwrap().insert((w, i)).unwrap();
                            if i % 3 == 0 {
                                assert_eq!(t.lock().unwrap().remove(tok), Ok((w, i)));
                            }
                            mine.push((tok, i));
                        }
                        mine
                    })
                })
                .collect();
            let mut all = Vec::new();
            for (w, h) in workers.into_iter().enumerate() {
                for (tok, i) in h.join().unwrap() {
                    let got = t.lock().unwrap().get(tok).copied();
                    if i % 3 == 0 {
                        assert_eq!(got, Err(BadToken::Stale));
                    } else {
                        assert_eq!(got, Ok((w as u32, i)));
                    }
                    all.push(tok);
                }
            }
            let n = all.len();
            all.sort();
            all.dedup();
            assert_eq!(all.len(), n, "a token was issued twice");
        }
    }
}
