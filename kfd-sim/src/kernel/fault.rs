//! Fault injection: make the Nth call of a named ioctl fail.

use std::collections::HashMap;
use std::fmt;
use std::sync::Mutex;

use kfd_sys::sync::lock;
use kfd_sys::Errno;

/// One rule: the `nth` call (1-based) of ioctl `name` fails with `errno`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FaultRule {
    /// Ioctl name without the `AMDKFD_IOC_` prefix, e.g. `ALLOC_MEMORY_OF_GPU`.
    pub name: String,
    /// Which call fails (1 = the first).
    pub nth: u64,
    /// The errno it fails with.
    pub errno: Errno,
}

/// A set of fault rules, as given by `KFD_SIM_FAULTS`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FaultPlan {
    /// The rules.
    pub rules: Vec<FaultRule>,
}

/// A `KFD_SIM_FAULTS` string that does not parse.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FaultParseError(pub String);

impl fmt::Display for FaultParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "bad KFD_SIM_FAULTS entry: {}", self.0)
    }
}

impl std::error::Error for FaultParseError {}

/// Strips an optional `AMDKFD_IOC_` prefix and upper-cases.
pub(crate) fn normalize_name(name: &str) -> String {
    let n = name.trim().to_ascii_uppercase();
    n.strip_prefix("AMDKFD_IOC_").unwrap_or(&n).to_string()
}

/// Parses an errno name (`ENOMEM`, any case; the names of
/// [`Errno::name`]) or number (`12`).
pub fn parse_errno(s: &str) -> Option<Errno> {
    let s = s.trim();
    if let Ok(n) = s.parse::<i32>() {
        return (n > 0).then_some(Errno(n));
    }
    Errno::from_name(&s.to_ascii_uppercase())
}

impl FaultPlan {
    /// Parses `NAME:N:ERRNO[,NAME:N:ERRNO...]`, e.g.
    /// `ALLOC_MEMORY_OF_GPU:1:ENOMEM`. Names may carry the `AMDKFD_IOC_`
    /// prefix; ERRNO is a name or a number. An empty string is no rules.
    pub fn parse(s: &str) -> Result<FaultPlan, FaultParseError> {
        let mut rules = Vec::new();
        for item in s.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let parts: Vec<&str> = item.split(':').collect();
            if parts.len() != 3 || parts[0].trim().is_empty() {
                return Err(FaultParseError(item.to_string()));
            }
            let nth = parts[1]
                .trim()
                .parse::<u64>()
                .ok()
                .filter(|n| *n >= 1)
                .ok_or_else(|| FaultParseError(item.to_string()))?;
            let errno = parse_errno(parts[2]).ok_or_else(|| FaultParseError(item.to_string()))?;
            rules.push(FaultRule {
                name: normalize_name(parts[0]),
                nth,
                errno,
            });
        }
        Ok(FaultPlan { rules })
    }
}

/// Call counters plus the active rules.
#[derive(Debug, Default)]
pub(crate) struct Faults {
    inner: Mutex<FaultState>,
}

#[derive(Debug, Default)]
struct FaultState {
    rules: Vec<FaultRule>,
    counts: HashMap<String, u64>,
}

impl Faults {
    /// Adds rules.
    pub fn add(&self, plan: FaultPlan) {
        let mut st = lock(&self.inner);
        st.rules.extend(plan.rules);
    }

    /// Counts one call of `name` (normalized) and says whether it must fail.
    pub fn check(&self, name: &str) -> Option<Errno> {
        let mut st = lock(&self.inner);
        if st.rules.is_empty() {
            return None;
        }
        let c = st.counts.entry(name.to_string()).or_insert(0);
        *c += 1;
        let n = *c;
        st.rules
            .iter()
            .find(|r| r.name == name && r.nth == n)
            .map(|r| r.errno)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_plans() {
        let p =
            FaultPlan::parse("ALLOC_MEMORY_OF_GPU:1:ENOMEM, AMDKFD_IOC_CREATE_QUEUE:3:22").unwrap();
        assert_eq!(p.rules.len(), 2);
        assert_eq!(p.rules[0].name, "ALLOC_MEMORY_OF_GPU");
        assert_eq!(p.rules[0].errno, Errno::ENOMEM);
        assert_eq!(p.rules[1].name, "CREATE_QUEUE");
        assert_eq!(p.rules[1].nth, 3);
        assert_eq!(p.rules[1].errno, Errno::EINVAL);
        assert!(FaultPlan::parse("").unwrap().rules.is_empty());
        assert!(FaultPlan::parse("X:0:ENOMEM").is_err());
        assert!(FaultPlan::parse("X:1:EWHAT").is_err());
        assert!(FaultPlan::parse("X:1").is_err());
        let f = Faults::default();
        f.add(FaultPlan::parse("A:2:EIO").unwrap());
        assert_eq!(f.check("A"), None);
        assert_eq!(f.check("A"), Some(Errno::EIO));
        assert_eq!(f.check("A"), None);
    }
}
