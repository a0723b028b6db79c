//! Context options, read once from the environment variables the C
//! library honours.

use kfd_debug::DebugRules;
use kfd_fmm::FmmOptions;
use kfd_queue::QueueOptions;

/// Options fixed when a context is opened.
#[derive(Debug, Clone)]
pub struct ContextOptions {
    /// Use the SVM API (`HSA_USE_SVM` != "0"); always off for secondaries.
    pub svm_api: bool,
    /// Memory-manager knobs (`HSA_USERPTR_FOR_PAGED_MEM`,
    /// `HSA_DISABLE_CACHE`, `HSA_CHECK_USERPTR`, `HSA_RESERVE_SVM`,
    /// `HSA_SVM_GUARD_PAGES`, `HSA_MAX_VA_ALIGN`, `HSA_ZFB`).
    pub fmm: FmmOptions,
    /// How the queue sub-context allocates queue buffers: the C library's
    /// choices ([`kfd_queue::QueueRules`]; default the newest library's)
    /// and whether save areas may be SVM memory. `svm_save_area` is a
    /// permission: the context passes it on only for a primary context
    /// with the SVM API on ([`ContextOptions::svm_api`]) on a kernel whose
    /// GPU nodes all support the SVM API (their `SVMAPISupported`
    /// capability), as the C library's `is_svm_api_supported`.
    pub queues: QueueOptions,
    /// The last close of the primary context keeps it — the descriptor,
    /// every kernel object (memory, queues, events) and the topology
    /// snapshot — and the next open takes it up again, as libhsakmt 6.2.4
    /// and the newest library do (their CloseKFD never closes `/dev/kfd`).
    /// Without it the last close tears everything down (5.2.3). A forked
    /// child never takes up its parent's context either way.
    pub keep_after_close: bool,
    /// The debug sub-context's choices ([`kfd_debug::DebugRules`];
    /// default the newest library's).
    pub debug: DebugRules,
}

impl Default for ContextOptions {
    fn default() -> Self {
        ContextOptions {
            keep_after_close: true,
            svm_api: true,
            fmm: FmmOptions::primary(),
            queues: QueueOptions::default(),
            debug: DebugRules::default(),
        }
    }
}

/// Where environment values come from (the process environment, or a
/// fixed list in tests).
pub trait EnvSource {
    /// The value of `name`, if set.
    fn get(&self, name: &str) -> Option<String>;
}

/// The process environment.
#[derive(Debug, Clone, Copy, Default)]
pub struct ProcessEnv;

impl EnvSource for ProcessEnv {
    fn get(&self, name: &str) -> Option<String> {
        std::env::var(name).ok()
    }
}

impl EnvSource for [(&str, &str)] {
    fn get(&self, name: &str) -> Option<String> {
        self.iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.to_string())
    }
}

/// Parses an integer the way the C library's `atoi` would for these
/// switches: leading decimal digits, anything else 0.
fn int(v: &str) -> i64 {
    let v = v.trim();
    let (neg, digits) = match v.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, v),
    };
    let n: i64 = digits
        .chars()
        .take_while(|c| c.is_ascii_digit())
        .fold(0i64, |acc, c| {
            acc.saturating_mul(10)
                .saturating_add(i64::from(c as u8 - b'0'))
        });
    if neg {
        -n
    } else {
        n
    }
}

impl ContextOptions {
    /// Options from the process environment.
    pub fn from_env() -> ContextOptions {
        ContextOptions::from_source(&ProcessEnv)
    }

    /// Options from any environment source.
    pub fn from_source(env: &(impl EnvSource + ?Sized)) -> ContextOptions {
        let mut o = ContextOptions::default();
        let flag = |name: &str| env.get(name).map(|v| int(&v) != 0);
        if let Some(v) = env.get("HSA_USE_SVM") {
            o.svm_api = v != "0";
        }
        o.fmm.svm_api_enabled = o.svm_api;
        if let Some(b) = flag("HSA_USERPTR_FOR_PAGED_MEM") {
            o.fmm.userptr_for_paged_mem = b;
        }
        if let Some(b) = flag("HSA_DISABLE_CACHE") {
            o.fmm.disable_cache = b;
        }
        if let Some(b) = flag("HSA_CHECK_USERPTR") {
            o.fmm.check_userptr = b;
        }
        if let Some(b) = flag("HSA_RESERVE_SVM") {
            o.fmm.reserve_svm = b;
        }
        if let Some(v) = env.get("HSA_SVM_GUARD_PAGES") {
            o.fmm.guard_pages = int(&v).clamp(0, 1 << 20) as u32;
        }
        if let Some(v) = env.get("HSA_MAX_VA_ALIGN") {
            o.fmm.max_va_align_order = int(&v).clamp(0, 63) as u32;
        }
        if let Some(v) = env.get("HSA_ZFB") {
            o.fmm.zero_fb = int(&v) != 0;
        }
        o
    }

    /// The options a secondary context gets: no SVM API, no userptr for
    /// paged memory, its own render nodes; the other knobs are kept.
    pub fn for_secondary(&self) -> ContextOptions {
        let mut o = self.clone();
        o.svm_api = false;
        o.fmm.svm_api_enabled = false;
        o.fmm.userptr_for_paged_mem = false;
        o.fmm.render_nodes = kfd_fmm::RenderNodes::Open;
        o.queues.svm_save_area = false;
        o
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn environment_switches() {
        let env: &[(&str, &str)] = &[
            ("HSA_USE_SVM", "0"),
            ("HSA_USERPTR_FOR_PAGED_MEM", "0"),
            ("HSA_DISABLE_CACHE", "1"),
            ("HSA_SVM_GUARD_PAGES", "4"),
            ("HSA_MAX_VA_ALIGN", "12junk"),
        ];
        let o = ContextOptions::from_source(env);
        assert!(!o.svm_api && !o.fmm.svm_api_enabled);
        assert!(!o.fmm.userptr_for_paged_mem);
        assert!(o.fmm.disable_cache);
        assert_eq!(o.fmm.guard_pages, 4);
        assert_eq!(o.fmm.max_va_align_order, 12);
        let d = ContextOptions::from_source(&[] as &[(&str, &str)]);
        assert!(d.svm_api && d.fmm.userptr_for_paged_mem);
        let mut d = d;
        d.queues.svm_save_area = true;
        let s = d.for_secondary();
        assert!(!s.svm_api && !s.fmm.userptr_for_paged_mem);
        assert!(!s.queues.svm_save_area);
    }
}
