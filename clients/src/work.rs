//! GPU work the runtime must finish on the simulator's engines, checked
//! and reported without addresses or times:
//!
//! - `hsa_amd_memory_async_copy` host→device, device→device and
//!   device→host of 4 KiB to 64 MiB on the first GPU, every byte
//!   compared; one copy gated on a dependency signal another thread
//!   clears later. Same-GPU copies of [`FORCE_SDMA_SIZE`] and more go to
//!   ROCr's blit kernels, which need a shader model the simulator does not
//!   have, so `main` raises that threshold above the largest copy and
//!   every copy runs on SDMA.
//! - BARRIER_AND / BARRIER_OR packets with and without dependency
//!   signals, an AMD barrier-value packet and a burst that wraps the
//!   ring, on a user-mode AQL queue of the runtime.
//!
//! Every completion is waited for with an infinite, blocking
//! `hsa_signal_wait_scacquire`, so only the completion can wake it. A
//! [`Watchdog`] turns a step that never completes into an abort naming the
//! step, instead of a silent hang.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::hsa::*;
use crate::probe::{Out, Report};
use crate::session::{Allocation, OwnedQueue, OwnedSignal, Session};

/// The environment variable that sets ROCr's same-GPU SDMA threshold,
/// and the value the client gives it (1 GiB, above every copy here).
pub const FORCE_SDMA_SIZE: (&str, &str) = ("HSA_FORCE_SDMA_SIZE", "1073741824");

/// The copy sizes.
pub const COPY_SIZES: &[usize] = &[4 << 10, 64 << 10, 1 << 20, 16 << 20, 64 << 20];

/// How long one step may take before the [`Watchdog`] aborts.
pub const STEP_LIMIT: Duration = Duration::from_secs(60);

/// How long the helper threads wait before clearing a dependency.
const DELAY: Duration = Duration::from_millis(100);

/// Aborts the process when a step does not finish within its limit: the
/// stderr line names the step (the runs compare stderr, so a hang shows
/// up as a named difference, not as a time-out).
#[derive(Debug, Clone)]
pub struct Watchdog {
    current: Arc<Mutex<(String, Instant)>>,
}

impl Watchdog {
    /// Starts the watching thread (it lives as long as the process).
    pub fn start(limit: Duration) -> Self {
        let current = Arc::new(Mutex::new(("start".to_string(), Instant::now())));
        let watched = Arc::clone(&current);
        std::thread::spawn(move || loop {
            std::thread::sleep(Duration::from_millis(200).min(limit));
            let (step, since) = match watched.lock() {
                Ok(g) => (g.0.clone(), g.1),
                Err(p) => (p.get_ref().0.clone(), p.get_ref().1),
            };
            if since.elapsed() > limit {
                eprintln!(
                    "kfd-rocr-client: `{step}` did not finish in {} s",
                    limit.as_secs()
                );
                std::process::abort();
            }
        });
        Self { current }
    }

    /// Marks the start of `step`.
    pub fn step(&self, step: impl Into<String>) {
        let mut g = match self.current.lock() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        *g = (step.into(), Instant::now());
    }
}

/// The byte at `i` of the buffer with `seed`.
pub fn pattern(i: usize, seed: u8) -> u8 {
    (i.wrapping_mul(131).wrapping_add((i >> 11).wrapping_mul(7)) as u8).wrapping_add(seed)
}

/// How many bytes of `bytes` differ from the pattern of `seed`.
pub fn differing(bytes: &[u8], seed: u8) -> usize {
    bytes
        .iter()
        .enumerate()
        .filter(|(i, b)| **b != pattern(*i, seed))
        .count()
}

/// The agents and pools the work uses.
pub(crate) struct Setup {
    pub(crate) cpu: Agent,
    pub(crate) gpu: Agent,
    pub(crate) host: MemoryPool,
    pub(crate) device: MemoryPool,
}

/// The first global pool of `agent` the runtime may allocate from,
/// coarse-grained first; its flags.
fn pick_pool(session: &Session<'_>, agent: Agent) -> Option<(MemoryPool, u32)> {
    let mut best: Option<(MemoryPool, u32)> = None;
    for pool in session.pools(agent).ok()? {
        let global = session.pool(pool, POOL_SEGMENT) == Ok(HSA_AMD_SEGMENT_GLOBAL);
        let alloc = session.pool(pool, POOL_RUNTIME_ALLOC_ALLOWED) == Ok(1);
        let Ok(flags) = session.pool(pool, POOL_GLOBAL_FLAGS) else {
            continue;
        };
        if !global || !alloc {
            continue;
        }
        if flags & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED != 0 {
            return Some((pool, flags));
        }
        best = best.or(Some((pool, flags)));
    }
    best
}

/// The first GPU and CPU agents and their pools (printed), or why not.
pub(crate) fn setup(out: &mut Out<'_, '_>) -> Option<Setup> {
    let s = out.session;
    let agents = s.agents().ok()?;
    let of = |t| {
        agents
            .iter()
            .enumerate()
            .find(|(_, a)| s.agent(**a, AGENT_DEVICE) == Ok(t))
    };
    let Some((gi, gpu)) = of(HSA_DEVICE_TYPE_GPU) else {
        // Not a failure of ours: a runtime that does not know the
        // preset's GPU (ROCr 5.2.3 and gfx942 or gfx1100) makes no agent.
        out.line(0, "work: skipped, the runtime made no GPU agent");
        return None;
    };
    let Some((ci, cpu)) = of(HSA_DEVICE_TYPE_CPU) else {
        out.ok = false;
        out.line(0, "work: no CPU agent");
        return None;
    };
    let (Some((host, hf)), Some((device, df))) = (pick_pool(s, *cpu), pick_pool(s, *gpu)) else {
        out.ok = false;
        out.line(0, "work: no global pool to allocate from");
        return None;
    };
    let grain = |f: u32| {
        if f & HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED != 0 {
            "coarse"
        } else {
            "fine"
        }
    };
    out.line(
        0,
        format_args!(
            "work: cpu agent {ci} ({} pool), gpu agent {gi} ({} pool)",
            grain(hf),
            grain(df)
        ),
    );
    Some(Setup {
        cpu: *cpu,
        gpu: *gpu,
        host,
        device,
    })
}

/// Runs every step on an initialised session.
pub fn run(session: &Session<'_>, dog: &Watchdog) -> Report {
    let mut out = Out::new(session);
    let Some(setup) = setup(&mut out) else {
        return out.report();
    };
    for (k, size) in COPY_SIZES.iter().enumerate() {
        copy_round(&mut out, &setup, dog, *size, k as u8);
    }
    dependent_copy(&mut out, &setup, dog);
    barriers(&mut out, &setup, dog);
    out.report()
}

/// An allocation of `size` bytes from `pool` that `gpu` may reach.
pub(crate) fn buffer<'s, 'r>(
    out: &mut Out<'s, 'r>,
    pool: MemoryPool,
    size: usize,
    gpu: Agent,
) -> Option<Allocation<'s, 'r>> {
    let r = out.session.allocate(pool, size).and_then(|m| {
        m.allow_access(&[gpu])?;
        Ok(m)
    });
    match r {
        Ok(m) => Some(m),
        Err(e) => {
            let t = out.status(Err(e));
            out.line(1, format_args!("allocate {size}: {t}"));
            None
        }
    }
}

/// A signal at `initial`, or the failure reported.
pub(crate) fn signal<'s, 'r>(
    out: &mut Out<'s, 'r>,
    initial: SignalValue,
) -> Option<OwnedSignal<'s, 'r>> {
    match out.session.signal(initial) {
        Ok(s) => Some(s),
        Err(e) => {
            let t = out.status(Err(e));
            out.line(1, format_args!("signal create: {t}"));
            None
        }
    }
}

/// Waits, infinitely and blocked, until `done` drops below 1.
pub(crate) fn wait_done(done: &OwnedSignal<'_, '_>) -> bool {
    done.wait(HSA_SIGNAL_CONDITION_LT, 1, u64::MAX) < 1
}

/// One copy waited for: `ok` or the failure.
#[allow(clippy::too_many_arguments)]
fn copy(
    out: &mut Out<'_, '_>,
    dst: &Allocation<'_, '_>,
    dst_agent: Agent,
    src: &Allocation<'_, '_>,
    src_agent: Agent,
    size: usize,
    deps: &[&OwnedSignal<'_, '_>],
) -> String {
    copy_at(out, (dst, 0, dst_agent), (src, 0, src_agent), size, deps)
}

/// One copy between byte offsets (see [`Session::async_copy_at`])
/// waited for: `ok` or the failure.
pub(crate) fn copy_at(
    out: &mut Out<'_, '_>,
    dst: (&Allocation<'_, '_>, usize, Agent),
    src: (&Allocation<'_, '_>, usize, Agent),
    size: usize,
    deps: &[&OwnedSignal<'_, '_>],
) -> String {
    let Some(done) = signal(out, 1) else {
        return "no signal".into();
    };
    match out.session.async_copy_at(dst, src, size, deps, &done) {
        Ok(()) if wait_done(&done) => "ok".into(),
        Ok(()) => {
            out.ok = false;
            "woke before completion".into()
        }
        Err(e) => out.status(Err(e)),
    }
}

/// Host→device→device→host of `size` bytes, then the bytes compared.
fn copy_round(out: &mut Out<'_, '_>, st: &Setup, dog: &Watchdog, size: usize, seed: u8) {
    dog.step(format!("copy {size}"));
    let bufs = (
        buffer(out, st.host, size, st.gpu),
        buffer(out, st.host, size, st.gpu),
        buffer(out, st.device, size, st.gpu),
        buffer(out, st.device, size, st.gpu),
    );
    let (Some(mut host), Some(mut back), Some(dev), Some(dev2)) = bufs else {
        return;
    };
    // SAFETY: host-pool memory of a CPU agent; no copy is running.
    for (i, b) in unsafe { host.bytes_mut() }.iter_mut().enumerate() {
        *b = pattern(i, seed);
    }
    // SAFETY: as above.
    unsafe { back.bytes_mut() }.fill(0);
    let h2d = copy(out, &dev, st.gpu, &host, st.cpu, size, &[]);
    let d2d = copy(out, &dev2, st.gpu, &dev, st.gpu, size, &[]);
    let d2h = copy(out, &back, st.cpu, &dev2, st.gpu, size, &[]);
    // SAFETY: host-pool memory; every copy into it has completed.
    let bad = differing(unsafe { back.bytes_mut() }, seed);
    out.ok &= bad == 0;
    let bytes = if bad == 0 {
        "ok".to_string()
    } else {
        format!("{bad} differ")
    };
    out.line(
        0,
        format_args!("copy {size}: h2d {h2d}, d2d {d2d}, d2h {d2h}, bytes {bytes}"),
    );
    free_all(out, [host, back, dev, dev2]);
}

/// Frees every buffer, reporting failures.
pub(crate) fn free_all<const N: usize>(out: &mut Out<'_, '_>, bufs: [Allocation<'_, '_>; N]) {
    for b in bufs {
        if let Err(e) = b.free() {
            let t = out.status(Err(e));
            out.line(1, format_args!("free: {t}"));
        }
    }
}

/// Runs `f` while helper threads store 0 into each of `clear` after
/// [`DELAY`]; `f`'s result and whether it took at least 90 % of the
/// delay (always true with nothing to clear).
fn with_cleared<T>(clear: &[&OwnedSignal<'_, '_>], f: impl FnOnce() -> T) -> (T, bool) {
    let t0 = Instant::now();
    let v = std::thread::scope(|scope| {
        for s in clear {
            scope.spawn(move || {
                std::thread::sleep(DELAY);
                s.store(0);
            });
        }
        f()
    });
    let waited = clear.is_empty() || t0.elapsed() >= DELAY.mul_f64(0.9);
    (v, waited)
}

/// A 1 MiB host→device copy that must wait for a dependency signal.
fn dependent_copy(out: &mut Out<'_, '_>, st: &Setup, dog: &Watchdog) {
    let size = 1 << 20;
    dog.step("copy behind a dependency");
    let bufs = (
        buffer(out, st.host, size, st.gpu),
        buffer(out, st.host, size, st.gpu),
        buffer(out, st.device, size, st.gpu),
        signal(out, 1),
    );
    let (Some(mut host), Some(mut back), Some(dev), Some(dep)) = bufs else {
        return;
    };
    // SAFETY: host-pool memory; no copy is running.
    for (i, b) in unsafe { host.bytes_mut() }.iter_mut().enumerate() {
        *b = pattern(i, 99);
    }
    // SAFETY: as above.
    unsafe { back.bytes_mut() }.fill(0);
    let session = out.session;
    let (r, waited) = with_cleared(&[&dep], || {
        session.signal(1).and_then(|done| {
            session.async_copy(&dev, st.gpu, &host, st.cpu, size, &[&dep], &done)?;
            Ok(wait_done(&done))
        })
    });
    let first = match r {
        Ok(true) if waited => "ok".to_string(),
        Ok(true) => {
            out.ok = false;
            "completed before its dependency was cleared".into()
        }
        Ok(false) => {
            out.ok = false;
            "woke before completion".into()
        }
        Err(e) => out.status(Err(e)),
    };
    let d2h = copy(out, &back, st.cpu, &dev, st.gpu, size, &[]);
    // SAFETY: host-pool memory; the copy into it has completed.
    let bad = differing(unsafe { back.bytes_mut() }, 99);
    out.ok &= bad == 0;
    out.line(
        0,
        format_args!(
            "copy {size} h2d behind a dependency cleared by a thread: {first}, d2h {d2h}, bytes {}",
            if bad == 0 {
                "ok".into()
            } else {
                format!("{bad} differ")
            }
        ),
    );
    free_all(out, [host, back, dev]);
}

fn header(packet_type: u32) -> u16 {
    let h = packet_type << HSA_PACKET_HEADER_TYPE
        | 1 << HSA_PACKET_HEADER_BARRIER
        | HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCACQUIRE_FENCE_SCOPE
        | HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_SCRELEASE_FENCE_SCOPE;
    h as u16
}

/// Barrier packets on a user queue of the first GPU.
fn barriers(out: &mut Out<'_, '_>, st: &Setup, dog: &Watchdog) {
    let s = out.session;
    dog.step("barrier queue create");
    let size = s.agent(st.gpu, AGENT_QUEUE_MIN_SIZE).unwrap_or(64).max(64);
    let q = match s.queue(st.gpu, size, HSA_QUEUE_TYPE_MULTI) {
        Ok(q) => q,
        Err(e) => {
            let t = out.status(Err(e));
            out.line(0, format_args!("barrier queue create size {size}: {t}"));
            return;
        }
    };
    let cases: [(&str, u32, usize, usize); 4] = [
        (
            "barrier-and, no dependencies",
            HSA_PACKET_TYPE_BARRIER_AND,
            0,
            0,
        ),
        (
            "barrier-or, no dependencies",
            HSA_PACKET_TYPE_BARRIER_OR,
            0,
            0,
        ),
        (
            "barrier-and, 2 dependencies cleared by threads",
            HSA_PACKET_TYPE_BARRIER_AND,
            2,
            2,
        ),
        (
            "barrier-or, 1 of 3 dependencies cleared by a thread",
            HSA_PACKET_TYPE_BARRIER_OR,
            3,
            1,
        ),
    ];
    let mut submitted = 0u64;
    for (name, t, deps, clear) in cases {
        dog.step(name);
        let r = barrier(out, &q, t, deps, clear);
        submitted += 1;
        out.line(0, format_args!("{name}: {r}"));
    }
    dog.step("barrier-value");
    let r = barrier_value(out, &q);
    submitted += 1;
    out.line(0, format_args!("barrier-value EQ 7, set by a thread: {r}"));
    let burst = u64::from(size) + 8;
    dog.step("barrier burst");
    let r = burst_of(out, &q, burst);
    submitted += burst;
    out.line(
        0,
        format_args!("barrier-and x{burst} on a {size}-packet ring (wraps): {r}"),
    );
    let (read, write) = (q.read_index(), q.write_index());
    let caught_up = read == write && read == submitted;
    out.ok &= caught_up;
    out.line(
        0,
        format_args!(
            "queue read index caught up: {}",
            if caught_up {
                "ok".to_string()
            } else {
                format!("read {read} write {write} of {submitted}")
            }
        ),
    );
    let t = out.status(q.destroy());
    out.line(0, format_args!("barrier queue destroy: {t}"));
}

/// A verdict for a completion wait that also had to wait for its
/// dependencies.
fn verdict(out: &mut Out<'_, '_>, woke: bool, waited: bool) -> String {
    match (woke, waited) {
        (true, true) => "ok".into(),
        (true, false) => {
            out.ok = false;
            "completed before its dependencies were cleared".into()
        }
        (false, _) => {
            out.ok = false;
            "woke before completion".into()
        }
    }
}

fn barrier(
    out: &mut Out<'_, '_>,
    q: &OwnedQueue<'_, '_>,
    packet_type: u32,
    deps: usize,
    clear: usize,
) -> String {
    let Some(done) = signal(out, 1) else {
        return "no signal".into();
    };
    let mut dep_signals = Vec::new();
    for _ in 0..deps {
        match signal(out, 1) {
            Some(d) => dep_signals.push(d),
            None => return "no signal".into(),
        }
    }
    let mut p = BarrierPacket {
        header: header(packet_type),
        completion_signal: done.handle(),
        ..Default::default()
    };
    for (slot, d) in p.dep_signal.iter_mut().zip(&dep_signals) {
        *slot = d.handle();
    }
    q.submit(&p);
    let to_clear: Vec<&OwnedSignal<'_, '_>> = dep_signals.iter().take(clear).collect();
    let (woke, waited) = with_cleared(&to_clear, || wait_done(&done));
    verdict(out, woke, waited)
}

fn barrier_value(out: &mut Out<'_, '_>, q: &OwnedQueue<'_, '_>) -> String {
    let (Some(watched), Some(done)) = (signal(out, 5), signal(out, 1)) else {
        return "no signal".into();
    };
    let p = BarrierValuePacket {
        header: header(HSA_PACKET_TYPE_VENDOR_SPECIFIC),
        amd_format: HSA_AMD_PACKET_TYPE_BARRIER_VALUE as u8,
        signal: watched.handle(),
        value: 7,
        mask: -1,
        cond: HSA_SIGNAL_CONDITION_EQ,
        completion_signal: done.handle(),
        ..Default::default()
    };
    q.submit(&p);
    let t0 = Instant::now();
    let woke = std::thread::scope(|scope| {
        scope.spawn(|| {
            std::thread::sleep(DELAY);
            watched.store(7);
        });
        wait_done(&done)
    });
    let waited = t0.elapsed() >= DELAY.mul_f64(0.9);
    verdict(out, woke, waited)
}

/// `n` barrier-AND packets sharing one completion signal at `n`: more
/// than the ring holds, so the producer waits for slots and the packet
/// processor follows the ring round.
fn burst_of(out: &mut Out<'_, '_>, q: &OwnedQueue<'_, '_>, n: u64) -> String {
    let Some(done) = signal(out, SignalValue::try_from(n).unwrap_or(SignalValue::MAX)) else {
        return "no signal".into();
    };
    let p = BarrierPacket {
        header: header(HSA_PACKET_TYPE_BARRIER_AND),
        completion_signal: done.handle(),
        ..Default::default()
    };
    for _ in 0..n {
        q.submit(&p);
    }
    let woke = wait_done(&done);
    verdict(out, woke, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pattern_varies_and_is_checked() {
        let bytes: Vec<u8> = (0..8192).map(|i| pattern(i, 3)).collect();
        assert_eq!(differing(&bytes, 3), 0);
        assert_eq!(differing(&bytes, 4), 8192);
        assert_ne!(bytes[0], bytes[1]);
        // The (i >> 11) term makes 2 KiB blocks differ, not only bytes.
        assert_ne!(bytes[..256], bytes[2048..2304]);
    }

    #[test]
    fn barrier_headers() {
        // type 3, barrier bit, system acquire and release scopes.
        assert_eq!(
            header(HSA_PACKET_TYPE_BARRIER_AND),
            3 | 1 << 8 | 2 << 9 | 2 << 11
        );
        assert_eq!(header(HSA_PACKET_TYPE_VENDOR_SPECIFIC) & 0xff, 0);
    }
}
