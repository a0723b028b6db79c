//! Work that runs on ROCr's blit kernels (`kfd-rocr-client --blit`).
//!
//! `hsa_amd_memory_fill` of device memory is always a dispatch of ROCr's
//! fill kernel; with SDMA off ([`SDMA_OFF`], set by `main` unless the
//! caller chose) every `hsa_amd_memory_async_copy` of the first GPU is a
//! dispatch of its copy kernels too: the aligned one (source and
//! destination equal modulo 4: bytes up to 256-byte alignment, then
//! dwordx4, dwords, bytes) or the misaligned one (bytes). Sizes run from
//! 1 byte to 64 MiB at byte offsets 0, 1, 3 and 4 (64 MiB at 0 only:
//! [`LARGE`]), and every byte of the
//! destination buffer is checked, [`GUARD`] bytes either side included:
//! those must keep what they held.
//!
//! The fill takes `count` 32-bit values at a 4-byte aligned address
//! (`hsa_ext_amd.h`: `HSA_STATUS_ERROR_INVALID_ARGUMENT` when "not 4
//! bytes aligned"), so its sizes are counts of dwords and a refusal at
//! offsets 1 and 3 is the contract, reported with its status; the bytes
//! must then be untouched.
//!
//! Device memory is read and written through copies: each case first
//! copies a background pattern over the whole device buffer, and reads
//! the whole buffer back after the step under test. Lines are printed as
//! they come (`Out::live`): a blit kernel the simulator cannot run makes
//! ROCr abort the process, and the lines before it are kept.

use std::ops::Range;

use crate::probe::{status_name, Out, Report};
use crate::session::{Allocation, Session};
use crate::work::{self, copy_at, pattern, Setup, Watchdog};

/// The environment variable that turns ROCr's SDMA engines off, and the
/// value `--blit` gives it.
pub const SDMA_OFF: (&str, &str) = ("HSA_ENABLE_SDMA", "0");

/// Copy sizes in bytes.
pub const COPY_SIZES: &[usize] = &[1, 3, 4, 7, 4096 + 5, (1 << 20) + 3, 64 << 20];

/// Fill sizes in dwords (4 bytes to 64 MiB).
pub const FILL_COUNTS: &[usize] = &[1, 3, 4, 7, 1024 + 5, (1 << 18) + 3, 16 << 20];

/// Byte offsets of the range under test from the start of the guarded
/// region.
pub const OFFSETS: &[usize] = &[0, 1, 3, 4];

/// Ranges of this many bytes and more run at offset 0 only: the
/// misaligned copy kernel moves single bytes, and a 64 MiB copy of it
/// took 42 s on the debug-built simulator (2 loaded cores), where an
/// aligned one took 3-6 s; offsets 1, 3 and 4 are covered up to 1 MiB.
pub const LARGE: usize = 16 << 20;

/// The offsets a range of `len` bytes runs at (see [`LARGE`]).
fn offsets_for(len: usize) -> &'static [usize] {
    if len >= LARGE {
        &OFFSETS[..1]
    } else {
        OFFSETS
    }
}

/// Bytes before and after the range under test that must not change.
pub const GUARD: usize = 64;

/// The dword the fills write.
pub const FILL_VALUE: u32 = 0xA1B2_C3D4;

/// A buffer's length for a range of `len` bytes at any of [`OFFSETS`]
/// after [`GUARD`] bytes, with [`GUARD`] bytes after it.
fn guarded(len: usize) -> usize {
    GUARD + OFFSETS.iter().max().copied().unwrap_or(0) + len + GUARD
}

/// How many bytes of `got` differ from `want`: inside `range`, outside.
fn differing(got: &[u8], range: &Range<usize>, want: impl Fn(usize) -> u8) -> (usize, usize) {
    let mut bad = (0, 0);
    for (i, b) in got.iter().enumerate() {
        if *b != want(i) {
            if range.contains(&i) {
                bad.0 += 1;
            } else {
                bad.1 += 1;
            }
        }
    }
    bad
}

/// `ok`, or how many bytes differ where (and a failure noted).
fn verdict(out: &mut Out<'_, '_>, (inside, outside): (usize, usize)) -> String {
    if inside == 0 && outside == 0 {
        return "ok".into();
    }
    out.ok = false;
    format!("{inside} differ in the range, {outside} outside")
}

/// Sets every byte of a host buffer to `pattern(i, seed)`.
fn paint(buf: &mut Allocation<'_, '_>, seed: u8) {
    // SAFETY: host-pool memory of a CPU agent; no copy is running.
    for (i, b) in unsafe { buf.bytes_mut() }.iter_mut().enumerate() {
        *b = pattern(i, seed);
    }
}

/// Runs the fills and the copies on an initialised session.
pub fn run(session: &Session<'_>, dog: &Watchdog) -> Report {
    let mut out = Out::live(session);
    let Some(st) = work::setup(&mut out) else {
        return out.report();
    };
    for (k, count) in FILL_COUNTS.iter().enumerate() {
        fills(&mut out, &st, dog, *count, 40 + k as u8);
    }
    for (k, size) in COPY_SIZES.iter().enumerate() {
        copies(&mut out, &st, dog, *size, 60 + k as u8);
    }
    out.report()
}

/// `hsa_amd_memory_fill` of `count` dwords at each offset of a device
/// buffer holding a background pattern (`seed`).
fn fills(out: &mut Out<'_, '_>, st: &Setup, dog: &Watchdog, count: usize, seed: u8) {
    let len = guarded(count * 4);
    let bufs = (
        work::buffer(out, st.host, len, st.gpu),
        work::buffer(out, st.host, len, st.gpu),
        work::buffer(out, st.device, len, st.gpu),
    );
    let (Some(mut background), Some(mut back), Some(dev)) = bufs else {
        return;
    };
    paint(&mut background, seed);
    let (host, gpu) = (st.cpu, st.gpu);
    for &at in offsets_for(count * 4) {
        let start = GUARD + at;
        dog.step(format!("fill {count}: background copy"));
        let put = copy_at(out, (&dev, 0, gpu), (&background, 0, host), len, &[]);
        dog.step(format!("fill {count} dwords at +{at}"));
        let filled = dev.fill(start, FILL_VALUE, count);
        dog.step(format!("fill {count}: read back"));
        // SAFETY: host-pool memory; no copy is running.
        unsafe { back.bytes_mut() }.fill(0);
        let get = copy_at(out, (&back, 0, host), (&dev, 0, gpu), len, &[]);
        // A refusal at a misaligned address is the contract.
        let status = match filled {
            Ok(()) => "SUCCESS".to_string(),
            Err(s) => {
                out.ok &= at % 4 != 0;
                // The status and its name, without the runtime's sentence.
                let name = status_name(out.session, s);
                name.split_once(':')
                    .map_or(name.clone(), |(n, _)| n.to_string() + "\"")
            }
        };
        let range = if filled.is_ok() {
            start..start + count * 4
        } else {
            start..start
        };
        let value = FILL_VALUE.to_le_bytes();
        // SAFETY: host-pool memory; the copy into it has completed.
        let bad = differing(unsafe { back.bytes_mut() }, &range, |i| {
            if range.contains(&i) {
                value[(i - start) % 4]
            } else {
                pattern(i, seed)
            }
        });
        let bytes = verdict(out, bad);
        let helpers = helper_copies(&[&put, &get]);
        out.line(
            0,
            format_args!("fill {count} dwords at +{at}: {status}, bytes {bytes}{helpers}"),
        );
    }
    work::free_all(out, [background, back, dev]);
}

/// Nothing when every helper copy (background in, read back) went
/// well, else their results.
fn helper_copies(results: &[&str]) -> String {
    if results.iter().all(|r| *r == "ok") {
        String::new()
    } else {
        format!(" (helper copies: {})", results.join(", "))
    }
}

/// Host→device, device→device and device→host copies of `size` bytes
/// at each offset, each checked over its whole destination buffer.
///
/// At offset `at`: host `G+at` → device `G+at` (equal alignment: the
/// aligned kernel), device `G+at` → device `G` (the misaligned kernel at
/// offsets 1 and 3), device `G` → host `G+at` (likewise), where `G` is
/// [`GUARD`]; the device buffers hold a background pattern first.
fn copies(out: &mut Out<'_, '_>, st: &Setup, dog: &Watchdog, size: usize, seed: u8) {
    let len = guarded(size);
    let bg = seed.wrapping_add(100);
    let bufs = (
        work::buffer(out, st.host, len, st.gpu),
        work::buffer(out, st.host, len, st.gpu),
        work::buffer(out, st.host, len, st.gpu),
        work::buffer(out, st.device, len, st.gpu),
        work::buffer(out, st.device, len, st.gpu),
    );
    let (Some(mut src), Some(mut background), Some(mut back), Some(dev), Some(dev2)) = bufs else {
        return;
    };
    paint(&mut src, seed);
    paint(&mut background, bg);
    let (host, gpu) = (st.cpu, st.gpu);
    let g = GUARD;
    for &at in offsets_for(size) {
        let step = |what: &str| dog.step(format!("copy {size} at +{at}: {what}"));
        step("background copies");
        let mut helpers = vec![
            copy_at(out, (&dev, 0, gpu), (&background, 0, host), len, &[]),
            copy_at(out, (&dev2, 0, gpu), (&background, 0, host), len, &[]),
        ];
        step("h2d");
        let h2d = copy_at(out, (&dev, g + at, gpu), (&src, g + at, host), size, &[]);
        step("d2d");
        let d2d = copy_at(out, (&dev2, g, gpu), (&dev, g + at, gpu), size, &[]);

        // The first device buffer: the source bytes at G+at.
        step("h2d read back");
        helpers.push(copy_at(out, (&back, 0, host), (&dev, 0, gpu), len, &[]));
        let range = g + at..g + at + size;
        // SAFETY: host-pool memory; the copy into it has completed.
        let bad = differing(unsafe { back.bytes_mut() }, &range, |i| {
            pattern(i, if range.contains(&i) { seed } else { bg })
        });
        let h2d_bytes = verdict(out, bad);

        // The second: the source bytes of G+at.. at G.
        step("d2d read back");
        helpers.push(copy_at(out, (&back, 0, host), (&dev2, 0, gpu), len, &[]));
        let range = g..g + size;
        // SAFETY: as above.
        let bad = differing(unsafe { back.bytes_mut() }, &range, |i| {
            if range.contains(&i) {
                pattern(i + at, seed)
            } else {
                pattern(i, bg)
            }
        });
        let d2d_bytes = verdict(out, bad);

        // Back to the host at G+at, over the background pattern.
        paint(&mut back, bg);
        step("d2h");
        let d2h = copy_at(out, (&back, g + at, host), (&dev2, g, gpu), size, &[]);
        let range = g + at..g + at + size;
        // SAFETY: as above.
        let bad = differing(unsafe { back.bytes_mut() }, &range, |i| {
            pattern(i, if range.contains(&i) { seed } else { bg })
        });
        let d2h_bytes = verdict(out, bad);

        let helpers: Vec<&str> = helpers.iter().map(String::as_str).collect();
        let helpers = helper_copies(&helpers);
        out.line(
            0,
            format_args!(
                "copy {size} at +{at}: h2d {h2d} bytes {h2d_bytes}, d2d {d2d} bytes \
                 {d2d_bytes}, d2h {d2h} bytes {d2h_bytes}{helpers}"
            ),
        );
    }
    work::free_all(out, [src, background, back, dev, dev2]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_fit_their_buffers() {
        for &size in COPY_SIZES {
            for &at in OFFSETS {
                assert!(GUARD + at + size + GUARD <= guarded(size));
            }
        }
        assert_eq!(guarded(1), 64 + 4 + 1 + 64);
        assert_eq!(offsets_for((1 << 20) + 3), OFFSETS);
        assert_eq!(offsets_for(64 << 20), [0]);
    }

    #[test]
    fn differences_are_counted_inside_and_outside() {
        let got = [1u8, 2, 9, 9, 5, 9];
        let want = |i: usize| i as u8 + 1;
        assert_eq!(differing(&got, &(2..4), want), (2, 1));
        assert_eq!(differing(&got[..2], &(0..0), want), (0, 0));
    }
}
