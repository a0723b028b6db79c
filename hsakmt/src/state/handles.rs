//! [`HandleTable`]: the one kind of table behind every opaque token the
//! border hands to C (context handles, device handles, buffer handles of
//! the DRM-handle layer and of libdtif's libdrm entry points).
//!
//! A token is a 64-bit value C holds in a pointer-sized handle:
//!
//! | bits | what |
//! |---|---|
//! | 63..48 | the table's [`Tag`] (its top byte neither `0x00` nor `0xff`) |
//! | 47..4 | a serial, counted up from 1 by the table, never reused |
//! | 3..0 | zero |
//!
//! so a token is never NULL, never the address of anything (bits 63..47
//! are not all equal: not canonical with 4- or 5-level paging), 16-byte
//! aligned as a heap cell would be, and names at most one object in the
//! life of the process: after its object is gone it stays unknown
//! ([`BadToken::Stale`]) instead of naming a later one, and a token of
//! another table is told apart by its tag ([`BadToken::Foreign`]). Each
//! caller turns a [`BadToken`] into the status (or errno) its C function
//! returns for a bad handle.
//!
//! A table is not synchronised: its owner keeps it behind a lock.

use std::collections::BTreeMap;

/// The top 16 bits of every token of one table, telling tables apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Tag(u16);

impl Tag {
    /// Secondary context handles (`HsaKFDContext *`).
    pub(crate) const CONTEXT: Tag = Tag(0xC7C7);
    /// Device handles of `hsaKmtGetAMDGPUDeviceHandle` (libdrm's
    /// `amdgpu_device_handle` for libdtif).
    pub(crate) const DEVICE: Tag = Tag(0xDE7C);
    /// Buffer handles of the DRM-handle layer (`HsaMemoryObjectHandle`).
    #[cfg(feature = "newest")]
    pub(crate) const MEMORY_OBJECT: Tag = Tag(0xB0B1);
    /// libdtif's libdrm buffer objects (`amdgpu_bo_handle`).
    #[cfg(feature = "dtif")]
    pub(crate) const DTIF_BO: Tag = Tag(0xB0B0);
}

/// Bits below the serial (kept zero: tokens are 16-byte aligned).
const LOW_BITS: u32 = 4;
/// Bits of the serial.
const SERIAL_BITS: u32 = 48 - LOW_BITS;
/// The largest serial a table issues.
const MAX_SERIAL: u64 = (1 << SERIAL_BITS) - 1;

/// A token as C holds it (see the module docs for its form).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Token(u64);

impl Token {
    fn new(tag: Tag, serial: u64) -> Token {
        Token(u64::from(tag.0) << 48 | serial << LOW_BITS)
    }

    /// The token C passed back as a pointer (never dereferenced).
    pub(crate) fn from_ptr<T>(p: *const T) -> Token {
        Token(p as usize as u64)
    }

    /// The token as the pointer-sized handle C receives.
    pub(crate) fn as_ptr<T>(self) -> *mut T {
        self.0 as usize as *mut T
    }

    fn tag(self) -> Tag {
        Tag((self.0 >> 48) as u16)
    }

    /// The serial, if the bits below it are clear.
    fn serial(self) -> Option<u64> {
        let serial = (self.0 & ((1 << 48) - 1)) >> LOW_BITS;
        (self.0 & ((1 << LOW_BITS) - 1) == 0 && serial != 0).then_some(serial)
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
    /// This table's tag, but a serial it never issued.
    Unissued,
}

/// Objects named by never-reused tokens (see the module docs).
#[derive(Debug)]
pub(crate) struct HandleTable<T> {
    tag: Tag,
    /// The last serial issued (0: none yet).
    issued: u64,
    live: BTreeMap<u64, T>,
}

impl<T> HandleTable<T> {
    /// An empty table whose tokens carry `tag`.
    pub(crate) const fn new(tag: Tag) -> Self {
        HandleTable {
            tag,
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
        self.live.insert(self.issued, value);
        Ok(Token::new(self.tag, self.issued))
    }

    /// The serial of a live token, or why `t` is not one.
    fn live_serial(&self, t: Token) -> Result<u64, BadToken> {
        if t.0 == 0 {
            return Err(BadToken::Null);
        }
        let serial = match t.serial() {
            Some(s) if t.tag() == self.tag => s,
            _ => return Err(BadToken::Foreign),
        };
        if self.live.contains_key(&serial) {
            Ok(serial)
        } else if serial <= self.issued {
            Err(BadToken::Stale)
        } else {
            Err(BadToken::Unissued)
        }
    }

    /// The object `t` names.
    pub(crate) fn get(&self, t: Token) -> Result<&T, BadToken> {
        let s = self.live_serial(t)?;
        Ok(&self.live[&s])
    }

    /// The object `t` names, to change it.
    // Only buffer handles (the newest build) change entries in place.
    #[cfg_attr(not(feature = "newest"), allow(dead_code))]
    pub(crate) fn get_mut(&mut self, t: Token) -> Result<&mut T, BadToken> {
        let s = self.live_serial(t)?;
        Ok(self.live.get_mut(&s).expect("live serial"))
    }

    /// Takes the object `t` names out of the table; `t` is stale from
    /// here on.
    pub(crate) fn remove(&mut self, t: Token) -> Result<T, BadToken> {
        let s = self.live_serial(t)?;
        Ok(self.live.remove(&s).expect("live serial"))
    }

    /// The first live object (in the order they were inserted) for which
    /// `pred` holds, with its token.
    pub(crate) fn find(&self, mut pred: impl FnMut(&T) -> bool) -> Option<(Token, &T)> {
        self.live
            .iter()
            .find(|(_, v)| pred(v))
            .map(|(&s, v)| (Token::new(self.tag, s), v))
    }

    /// [`find`](Self::find), to change the object found.
    // Only buffer handles (the newest build) change entries in place.
    #[cfg_attr(not(feature = "newest"), allow(dead_code))]
    pub(crate) fn find_mut(&mut self, mut pred: impl FnMut(&T) -> bool) -> Option<(Token, &mut T)> {
        let tag = self.tag;
        self.live
            .iter_mut()
            .find(|(_, v)| pred(v))
            .map(|(&s, v)| (Token::new(tag, s), v))
    }

    /// Drops every object for which `keep` is false (their tokens become
    /// stale).
    pub(crate) fn retain(&mut self, mut keep: impl FnMut(&T) -> bool) {
        self.live.retain(|_, v| keep(v));
    }

    /// A table that has issued serials up to `issued`: for tests of the
    /// end of the serials.
    #[cfg(test)]
    fn issued_up_to(tag: Tag, issued: u64) -> Self {
        HandleTable {
            tag,
            issued,
            live: BTreeMap::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::c_void;
    use std::sync::{Arc, Mutex};

    /// Every tag this build declares.
    fn every_tag() -> Vec<Tag> {
        let tags = vec![Tag::CONTEXT, Tag::DEVICE];
        #[cfg(feature = "newest")]
        let tags = [tags, vec![Tag::MEMORY_OBJECT]].concat();
        #[cfg(feature = "dtif")]
        let tags = [tags, vec![Tag::DTIF_BO]].concat();
        tags
    }

    /// A tag of the tests' own tables.
    const BOS: Tag = Tag(0xB0B1);

    #[test]
    fn tokens_are_never_null_pointers_or_misaligned() {
        let tags = every_tag();
        for (i, tag) in tags.iter().enumerate() {
            let mut t = HandleTable::new(*tag);
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
    fn a_stale_token_never_names_a_later_object() {
        let mut t = HandleTable::new(BOS);
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

    #[test]
    fn tokens_of_other_tables_and_garbage_are_refused() {
        let mut bos = HandleTable::new(BOS);
        let mut devs = HandleTable::new(Tag::DEVICE);
        let b = bos.insert(1).unwrap();
        let d = devs.insert(2).unwrap();
        // Same serial, other table.
        assert_eq!(b.serial(), d.serial());
        assert_eq!(bos.get(d), Err(BadToken::Foreign));
        assert_eq!(devs.get(b), Err(BadToken::Foreign));
        assert_eq!(
            bos.get(Token::from_ptr(std::ptr::null::<u8>())),
            Err(BadToken::Null)
        );
        // A heap address, a misaligned token, one never issued.
        let x = Box::new(0u64);
        assert_eq!(bos.get(Token::from_ptr(&*x)), Err(BadToken::Foreign));
        assert_eq!(bos.get(Token(b.0 + 1)), Err(BadToken::Foreign));
        assert_eq!(bos.get(Token(b.0 + 16)), Err(BadToken::Unissued));
        assert_eq!(
            bos.get(Token(u64::from(BOS.0) << 48)),
            Err(BadToken::Foreign)
        );
        assert_eq!(bos.get(b), Ok(&1));
    }

    #[test]
    fn find_retain_and_pointer_round_trip() {
        let mut t = HandleTable::new(Tag::DEVICE);
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

    #[test]
    fn the_last_serial_is_issued_once() {
        let mut t = HandleTable::issued_up_to(Tag::CONTEXT, MAX_SERIAL - 1);
        let last = t.insert(6).unwrap();
        assert_eq!(last.serial(), Some(MAX_SERIAL));
        assert_eq!(t.insert(7), Err(7));
        t.remove(last).unwrap();
        assert_eq!(t.insert(8), Err(8), "a serial came back");
    }

    /// Threads sharing one table (behind its owner's lock) never get the
    /// same token, and each finds exactly its own objects.
    #[test]
    fn shared_between_threads_tokens_stay_unique() {
        let t = Arc::new(Mutex::new(HandleTable::new(BOS)));
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
