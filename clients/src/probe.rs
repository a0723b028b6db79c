//! The client's walk through the runtime and its deterministic report:
//! agents, regions, memory pools (with an allocation, allow_access and a
//! CPU write/read where the CPU can reach the pool), a queue per GPU agent
//! and a signal waited on with a timeout. The text holds no address, pid
//! or time, so two runs on the same machine compare byte for byte.

use std::fmt::Write as _;
use std::time::Duration;

use crate::hsa::*;
use crate::session::{Session, HSA_STATUS_ERROR_NULL};

/// The report and whether every call succeeded.
#[derive(Debug)]
pub struct Report {
    /// Deterministic text, one line per step.
    pub text: String,
    /// No call failed.
    pub ok: bool,
}

/// Collects report lines and remembers failures.
pub(crate) struct Out<'s, 'r> {
    pub(crate) session: &'s Session<'r>,
    pub(crate) text: String,
    pub(crate) ok: bool,
    /// Lines go to stdout at once instead of into `text` (for work whose
    /// failure can abort the process: the lines before it stay).
    live: bool,
}

impl<'s, 'r> Out<'s, 'r> {
    /// An empty report on `session`.
    pub(crate) fn new(session: &'s Session<'r>) -> Self {
        Self {
            session,
            text: String::new(),
            ok: true,
            live: false,
        }
    }

    /// An empty report on `session` whose lines are printed as they come
    /// (the report's text stays empty).
    pub(crate) fn live(session: &'s Session<'r>) -> Self {
        Self {
            live: true,
            ..Self::new(session)
        }
    }

    /// The finished report.
    pub(crate) fn report(self) -> Report {
        Report {
            text: self.text,
            ok: self.ok,
        }
    }

    /// Appends one line at `indent` (two spaces a level).
    pub(crate) fn line(&mut self, indent: usize, s: impl std::fmt::Display) {
        if self.live {
            // A line-buffered stdout: each line is out before the next step.
            println!("{:indent$}{s}", "", indent = indent * 2);
        } else {
            let _ = writeln!(self.text, "{:indent$}{s}", "", indent = indent * 2);
        }
    }

    /// `SUCCESS`, or the status and its text (and a failure noted).
    pub(crate) fn status(&mut self, r: Result<(), Status>) -> String {
        match r {
            Ok(()) => "SUCCESS".into(),
            Err(s) => {
                self.ok = false;
                status_name(self.session, s)
            }
        }
    }

    /// The value, or `?` + the status (and a failure noted).
    pub(crate) fn value<T>(
        &mut self,
        r: Result<T, Status>,
        show: impl FnOnce(T) -> String,
    ) -> String {
        match r {
            Ok(v) => show(v),
            Err(s) => {
                self.ok = false;
                format!("?({})", status_name(self.session, s))
            }
        }
    }
}

pub(crate) fn status_name(session: &Session<'_>, s: Status) -> String {
    if s == HSA_STATUS_ERROR_NULL {
        return "NULL result".into();
    }
    match session.status_text(s) {
        Some(t) => format!("{s:#x} \"{t}\""),
        None => format!("{s:#x}"),
    }
}

/// A NUL-padded `char[64]` as text.
fn name(n: Name) -> String {
    let end = n.iter().position(|b| *b == 0).unwrap_or(n.len());
    String::from_utf8_lossy(&n[..end]).trim_end().to_string()
}

fn device(d: u32) -> String {
    match d {
        HSA_DEVICE_TYPE_CPU => "CPU".into(),
        HSA_DEVICE_TYPE_GPU => "GPU".into(),
        HSA_DEVICE_TYPE_DSP => "DSP".into(),
        other => format!("device-type-{other}"),
    }
}

fn queue_type(t: u32) -> String {
    match t {
        HSA_QUEUE_TYPE_MULTI => "MULTI".into(),
        HSA_QUEUE_TYPE_SINGLE => "SINGLE".into(),
        other => format!("type-{other}"),
    }
}

/// `bits` as `A|B|...` (unknown bits in hex; `0` when none).
fn flags(bits: u32, names: &[(u32, &str)]) -> String {
    let mut parts: Vec<String> = names
        .iter()
        .filter(|(b, _)| bits & b != 0)
        .map(|(_, n)| (*n).to_string())
        .collect();
    let known = names.iter().fold(0, |a, (b, _)| a | b);
    if bits & !known != 0 {
        parts.push(format!("{:#x}", bits & !known));
    }
    if parts.is_empty() {
        "0".into()
    } else {
        parts.join("|")
    }
}

fn segment(s: u32, names: &[&str]) -> String {
    names
        .get(s as usize)
        .map(|n| n.to_string())
        .unwrap_or_else(|| format!("segment-{s}"))
}

const REGION_SEGMENTS: &[&str] = &["GLOBAL", "READONLY", "PRIVATE", "GROUP", "KERNARG"];
const POOL_SEGMENTS: &[&str] = &["GLOBAL", "READONLY", "PRIVATE", "GROUP"];
const REGION_FLAGS: &[(u32, &str)] = &[
    (HSA_REGION_GLOBAL_FLAG_KERNARG, "KERNARG"),
    (HSA_REGION_GLOBAL_FLAG_FINE_GRAINED, "FINE_GRAINED"),
    (HSA_REGION_GLOBAL_FLAG_COARSE_GRAINED, "COARSE_GRAINED"),
];
const POOL_FLAGS: &[(u32, &str)] = &[
    (HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_KERNARG_INIT, "KERNARG_INIT"),
    (HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_FINE_GRAINED, "FINE_GRAINED"),
    (
        HSA_AMD_MEMORY_POOL_GLOBAL_FLAG_COARSE_GRAINED,
        "COARSE_GRAINED",
    ),
];
const QUEUE_FEATURES: &[(u32, &str)] = &[
    (HSA_QUEUE_FEATURE_KERNEL_DISPATCH, "KERNEL_DISPATCH"),
    (HSA_QUEUE_FEATURE_AGENT_DISPATCH, "AGENT_DISPATCH"),
];

/// How many GPU agents get a queue created and destroyed. Each destroy
/// under ROCr 5.2.3 is a chance of its lost wakeup (a hang in
/// `hsa_queue_destroy` that a real kernel has too; docs/clients.md), and
/// large64's 64 GPUs made it one run in eight; two keep the check and
/// make the hang rare.
const QUEUE_WALK_GPUS: usize = 2;

fn yes(b: Bool) -> &'static str {
    if b != 0 {
        "yes"
    } else {
        "no"
    }
}

/// Runs the whole walk on an initialised session.
pub fn run(session: &Session<'_>) -> Report {
    let mut out = Out::new(session);
    let major = session.system(SYSTEM_VERSION_MAJOR);
    let minor = session.system(SYSTEM_VERSION_MINOR);
    let version = match (major, minor) {
        (Ok(a), Ok(b)) => format!("{a}.{b}"),
        (Err(s), _) | (_, Err(s)) => out.value::<()>(Err(s), |_| String::new()),
    };
    out.line(0, format_args!("system: version {version}"));
    let agents = match session.agents() {
        Ok(a) => a,
        Err(s) => {
            let t = out.value::<()>(Err(s), |_| String::new());
            out.line(0, format_args!("agents: {t}"));
            return out.report();
        }
    };
    out.line(0, format_args!("agents: {}", agents.len()));
    let mut queues_left = QUEUE_WALK_GPUS;
    for (i, agent) in agents.iter().enumerate() {
        walk_agent(&mut out, &agents, i, *agent, &mut queues_left);
    }
    walk_signal(&mut out);
    out.report()
}

fn walk_agent(
    out: &mut Out<'_, '_>,
    agents: &[Agent],
    i: usize,
    agent: Agent,
    queues_left: &mut usize,
) {
    let s = out.session;
    let dev = s.agent(agent, AGENT_DEVICE);
    let dev_text = out.value(dev, device);
    let mut head = format!("agent {i}: {dev_text}");
    for (label, attr) in [
        ("name", AGENT_NAME),
        ("vendor", AGENT_VENDOR_NAME),
        ("product", AGENT_PRODUCT_NAME),
    ] {
        let v = out.value(s.agent(agent, attr), |n| format!("\"{}\"", name(n)));
        let _ = write!(head, " {label} {v}");
    }
    for (label, attr) in [
        ("node", AGENT_NODE),
        ("driver-node", AGENT_DRIVER_NODE_ID),
        ("chip", AGENT_CHIP_ID),
        ("cus", AGENT_COMPUTE_UNIT_COUNT),
    ] {
        let v = out.value(s.agent(agent, attr), |n| n.to_string());
        let _ = write!(head, " {label} {v}");
    }
    out.line(0, head);

    let qmax = s.agent(agent, AGENT_QUEUES_MAX);
    let qmin_size = s.agent(agent, AGENT_QUEUE_MIN_SIZE);
    let qmax_size = s.agent(agent, AGENT_QUEUE_MAX_SIZE);
    let qtype = s.agent(agent, AGENT_QUEUE_TYPE);
    let qline = format!(
        "queues: max {} sizes {}..{} type {}",
        out.value(qmax, |v| v.to_string()),
        out.value(qmin_size, |v| v.to_string()),
        out.value(qmax_size, |v| v.to_string()),
        out.value(qtype, queue_type),
    );
    out.line(1, qline);

    match s.regions(agent) {
        Ok(regions) => {
            for (r, region) in regions.iter().enumerate() {
                walk_region(out, r, *region);
            }
        }
        Err(e) => {
            let t = out.value::<()>(Err(e), |_| String::new());
            out.line(1, format_args!("regions: {t}"));
        }
    }
    let cpu = dev == Ok(HSA_DEVICE_TYPE_CPU);
    match s.pools(agent) {
        Ok(pools) => {
            for (p, pool) in pools.iter().enumerate() {
                walk_pool(out, agents, p, *pool, cpu);
            }
        }
        Err(e) => {
            let t = out.value::<()>(Err(e), |_| String::new());
            out.line(1, format_args!("pools: {t}"));
        }
    }
    if dev == Ok(HSA_DEVICE_TYPE_GPU) {
        if let (Ok(max), Ok(size), Ok(t)) = (qmax, qmin_size, qtype) {
            if max > 0 && *queues_left > 0 {
                *queues_left -= 1;
                walk_queue(out, agent, size, t);
            } else if max > 0 {
                out.line(
                    1,
                    format_args!(
                        "queue: not created (the first {QUEUE_WALK_GPUS} GPU agents only)"
                    ),
                );
            }
        }
    }
}

fn walk_region(out: &mut Out<'_, '_>, r: usize, region: Region) {
    let s = out.session;
    let seg = s.region(region, REGION_SEGMENT);
    let line = format!(
        "region {r}: {} flags {} size {} alloc {} granule {} alignment {} max {}",
        out.value(seg, |v| segment(v, REGION_SEGMENTS)),
        out.value(s.region(region, REGION_GLOBAL_FLAGS), |v| flags(
            v,
            REGION_FLAGS
        )),
        out.value(s.region(region, REGION_SIZE), |v| v.to_string()),
        out.value(s.region(region, REGION_RUNTIME_ALLOC_ALLOWED), |v| yes(v)
            .to_string()),
        out.value(s.region(region, REGION_RUNTIME_ALLOC_GRANULE), |v| v
            .to_string()),
        out.value(s.region(region, REGION_RUNTIME_ALLOC_ALIGNMENT), |v| v
            .to_string()),
        out.value(s.region(region, REGION_ALLOC_MAX_SIZE), |v| v.to_string()),
    );
    out.line(1, line);
}

fn walk_pool(out: &mut Out<'_, '_>, agents: &[Agent], p: usize, pool: MemoryPool, cpu: bool) {
    let s = out.session;
    let seg = s.pool(pool, POOL_SEGMENT);
    let alloc = s.pool(pool, POOL_RUNTIME_ALLOC_ALLOWED);
    let granule = s.pool(pool, POOL_RUNTIME_ALLOC_GRANULE);
    let line = format!(
        "pool {p}: {} flags {} size {} alloc {} granule {} alignment {} max {} all-agents {}",
        out.value(seg, |v| segment(v, POOL_SEGMENTS)),
        out.value(s.pool(pool, POOL_GLOBAL_FLAGS), |v| flags(v, POOL_FLAGS)),
        out.value(s.pool(pool, POOL_SIZE), |v| v.to_string()),
        out.value(alloc, |v| yes(v).to_string()),
        out.value(granule, |v| v.to_string()),
        out.value(s.pool(pool, POOL_RUNTIME_ALLOC_ALIGNMENT), |v| v
            .to_string()),
        out.value(s.pool(pool, POOL_ALLOC_MAX_SIZE), |v| v.to_string()),
        out.value(s.pool(pool, POOL_ACCESSIBLE_BY_ALL), |v| yes(v).to_string()),
    );
    out.line(1, line);

    // One digit per agent: 0 never, 1 allowed by default, 2 needs
    // allow_access.
    let mut access = String::new();
    let mut reachable = Vec::new();
    for a in agents {
        match s.access(*a, pool) {
            Ok(v) => {
                let _ = write!(access, "{v}");
                if v != HSA_AMD_MEMORY_POOL_ACCESS_NEVER_ALLOWED {
                    reachable.push(*a);
                }
            }
            Err(e) => {
                let t = out.value::<()>(Err(e), |_| String::new());
                access.push_str(&t);
            }
        }
    }
    out.line(2, format_args!("access by agent: {access}"));

    let (Ok(1), Ok(granule)) = (alloc, granule) else {
        return;
    };
    let Ok(size) = usize::try_from(granule.max(4096)) else {
        out.ok = false;
        out.line(2, format_args!("allocate: granule {granule} too large"));
        return;
    };
    let mut mem = match s.allocate(pool, size) {
        Ok(m) => {
            out.line(2, format_args!("allocate {size}: SUCCESS"));
            m
        }
        Err(e) => {
            let t = out.status(Err(e));
            out.line(2, format_args!("allocate {size}: {t}"));
            return;
        }
    };
    let t = out.status(mem.allow_access(&reachable));
    out.line(
        2,
        format_args!("allow_access {} agents: {t}", reachable.len()),
    );
    if cpu {
        // SAFETY: a pool of a CPU agent is system memory the CPU reaches.
        let good = unsafe { mem.fill_and_check(0xA5) };
        out.ok &= good;
        out.line(
            2,
            format_args!(
                "cpu write/read {size} bytes: {}",
                if good { "ok" } else { "MISMATCH" }
            ),
        );
    }
    let t = out.status(mem.free());
    out.line(2, format_args!("free: {t}"));
}

fn walk_queue(out: &mut Out<'_, '_>, agent: Agent, size: u32, supported: u32) {
    let s = out.session;
    let t = if supported == HSA_QUEUE_TYPE_SINGLE {
        HSA_QUEUE_TYPE_SINGLE
    } else {
        HSA_QUEUE_TYPE_MULTI
    };
    match s.queue(agent, size, t) {
        Ok(q) => {
            let f = q.facts();
            out.line(
                1,
                format_args!(
                    "queue create {} size {size}: SUCCESS (type {} features {} size {} id {})",
                    queue_type(t),
                    queue_type(f.queue_type),
                    flags(f.features, QUEUE_FEATURES),
                    f.size,
                    f.id
                ),
            );
            let r = out.status(q.destroy());
            out.line(1, format_args!("queue destroy: {r}"));
        }
        Err(e) => {
            let r = out.status(Err(e));
            out.line(
                1,
                format_args!("queue create {} size {size}: {r}", queue_type(t)),
            );
        }
    }
}

/// A signal at 1: a wait for 0 with a 10 ms timeout must time out (and
/// report 1); a wait for 0 with a 10 s timeout must return 0 once another
/// thread stores 0 after 20 ms.
fn walk_signal(out: &mut Out<'_, '_>) {
    let s = out.session;
    let freq = match s.system(SYSTEM_TIMESTAMP_FREQUENCY) {
        Ok(f) if f > 0 => f,
        other => {
            let t = out.value(other, |f| format!("frequency {f}"));
            out.line(0, format_args!("signal: no timestamp frequency: {t}"));
            out.ok = false;
            return;
        }
    };
    let signal = match s.signal(1) {
        Ok(sig) => {
            out.line(0, "signal create 1: SUCCESS");
            sig
        }
        Err(e) => {
            let t = out.status(Err(e));
            out.line(0, format_args!("signal create 1: {t}"));
            return;
        }
    };
    let timed_out = signal.wait(HSA_SIGNAL_CONDITION_EQ, 0, freq / 100);
    out.ok &= timed_out == 1;
    out.line(
        0,
        format_args!("signal wait EQ 0 timeout 10ms: {timed_out}"),
    );
    let woken = std::thread::scope(|scope| {
        scope.spawn(|| {
            std::thread::sleep(Duration::from_millis(20));
            signal.store(0);
        });
        signal.wait(HSA_SIGNAL_CONDITION_EQ, 0, freq.saturating_mul(10))
    });
    out.ok &= woken == 0;
    out.line(
        0,
        format_args!("signal wait EQ 0 timeout 10s, stored 0 by a thread: {woken}"),
    );
    let loaded = signal.load();
    out.line(0, format_args!("signal load: {loaded}"));
    let t = out.status(signal.destroy());
    out.line(0, format_args!("signal destroy: {t}"));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flag_text() {
        assert_eq!(flags(0, POOL_FLAGS), "0");
        assert_eq!(flags(3, POOL_FLAGS), "KERNARG_INIT|FINE_GRAINED");
        assert_eq!(flags(0x14, POOL_FLAGS), "COARSE_GRAINED|0x10");
    }

    #[test]
    fn names_and_segments() {
        let mut n = [0u8; 64];
        n[..6].copy_from_slice(b"gfx90a");
        assert_eq!(name(n), "gfx90a");
        assert_eq!(name([b'x'; 64]), "x".repeat(64));
        assert_eq!(segment(4, REGION_SEGMENTS), "KERNARG");
        assert_eq!(segment(4, POOL_SEGMENTS), "segment-4");
        assert_eq!(device(7), "device-type-7");
    }
}
