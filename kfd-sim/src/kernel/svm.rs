//! Shared virtual memory (kfd_svm.c): an interval map of page ranges with
//! attributes, split where attributes change.

use std::collections::BTreeMap;

use kfd_sys::kfd::*;
use kfd_sys::Errno;

use super::dispatch::{Ctx, R};
use super::usermem::{self, FromBuf, ToBuf};
use super::PAGE_SIZE;

/// Attributes of one range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Attrs {
    pub preferred_loc: u32,
    pub prefetch_loc: u32,
    /// Device indices with ACCESS.
    pub access: u64,
    /// Device indices with ACCESS_IN_PLACE.
    pub access_in_place: u64,
    pub flags: u32,
    pub granularity: u8,
}

impl Attrs {
    fn default_for(xnack: bool, supported: u64) -> Attrs {
        Attrs {
            preferred_loc: KFD_IOCTL_SVM_LOCATION_UNDEFINED,
            prefetch_loc: KFD_IOCTL_SVM_LOCATION_UNDEFINED,
            access: if xnack { supported } else { 0 },
            access_in_place: 0,
            flags: KFD_IOCTL_SVM_FLAG_HOST_ACCESS | KFD_IOCTL_SVM_FLAG_COHERENT,
            granularity: 9,
        }
    }
}

/// The ranges of one process: start page → (last page, attributes).
#[derive(Debug, Default)]
pub(crate) struct SvmMap {
    ranges: BTreeMap<u64, (u64, Attrs)>,
}

impl SvmMap {
    /// Number of ranges.
    pub fn len(&self) -> usize {
        self.ranges.len()
    }

    /// True if any range intersects pages `[start, last]`.
    pub fn overlaps(&self, start: u64, last: u64) -> bool {
        self.ranges
            .range(..=last)
            .next_back()
            .is_some_and(|(_, (l, _))| *l >= start)
            || self.ranges.range(start..=last).next().is_some()
    }

    /// Ranges intersecting `[start, last]`, in order.
    fn intersecting(&self, start: u64, last: u64) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        if let Some((s, (l, _))) = self.ranges.range(..start).next_back() {
            if *l >= start {
                out.push((*s, *l));
            }
        }
        for (s, (l, _)) in self.ranges.range(start..=last) {
            out.push((*s, *l));
        }
        out
    }

    /// Splits the range containing `page` so that one starts at `page`.
    fn split_at(&mut self, page: u64) {
        let Some((&s, (l, a))) = self.ranges.range(..page).next_back() else {
            return;
        };
        if *l >= page {
            let (l, a) = (*l, a.clone());
            self.ranges.insert(s, (page - 1, a.clone()));
            self.ranges.insert(page, (l, a));
        }
    }

    /// Drops the pages of ranges intersecting `[start, last]` that are no
    /// longer mapped in this OS process. The kernel removes SVM ranges
    /// when user space unmaps their memory (its MMU notifier); the model
    /// does not see `munmap`, so it catches up here, before anything that
    /// depends on which ranges exist.
    pub fn drop_unmapped(&mut self, start: u64, last: u64) {
        for (s, l) in self.intersecting(start, last) {
            if cpu_mapped(s, l) {
                continue;
            }
            // Find the unmapped runs page by page and cut them out.
            let mut page = s;
            while page <= l {
                if cpu_mapped(page, page) {
                    page += 1;
                    continue;
                }
                let mut end = page;
                while end < l && !cpu_mapped(end + 1, end + 1) {
                    end += 1;
                }
                self.split_at(page);
                self.split_at(end + 1);
                self.ranges.remove(&page);
                page = end + 1;
            }
        }
    }

    /// Removes pages `[start, last]` from every range (the kernel's MMU
    /// notifier on `munmap`: `svm_range_unmap_from_cpu` cuts the unmapped
    /// part out of each range it intersects, splitting one that it cuts in
    /// the middle). Returns the number of pages removed.
    pub fn remove_pages(&mut self, start: u64, last: u64) -> u64 {
        let mut removed = 0;
        for (s, l) in self.intersecting(start, last) {
            let (lo, hi) = (s.max(start), l.min(last));
            self.split_at(lo);
            if hi < u64::MAX {
                self.split_at(hi + 1);
            }
            self.ranges.remove(&lo);
            removed += hi - lo + 1;
        }
        removed
    }

    /// The range containing page `page`: (last page, attributes).
    pub fn range_of(&self, page: u64) -> Option<(u64, &Attrs)> {
        let (_, (l, a)) = self.ranges.range(..=page).next_back()?;
        (*l >= page).then_some((*l, a))
    }

    /// The ranges as (start page, last page) pairs (for tests and traces).
    #[allow(dead_code)]
    pub fn spans(&self) -> Vec<(u64, u64)> {
        self.ranges.iter().map(|(s, (l, _))| (*s, *l)).collect()
    }
}

/// True if every page of `[start, last]` (page numbers) is mapped in this
/// OS process.
fn cpu_mapped(start: u64, last: u64) -> bool {
    usermem::is_mapped(start * PAGE_SIZE, (last - start + 1) * PAGE_SIZE)
}

/// The first KFD ioctl minor version whose kernel clamps an SVM
/// granularity to 0x3F (`min_t(uint32_t, value, 0x3F)` in
/// `svm_range_apply_attrs`, late 2023, next to the 1.14 event-age bump).
/// Older kernels store the value as given in the range's `u8`.
pub(crate) const GRANULARITY_CLAMP_MINOR: u32 = 14;

/// The granularity a kernel of ioctl minor version `minor` stores for
/// `value`.
fn stored_granularity(value: u32, minor: u32) -> u8 {
    if minor >= GRANULARITY_CLAMP_MINOR {
        value.min(0x3f) as u8
    } else {
        value as u8
    }
}

fn apply(
    a: &mut Attrs,
    attrs: &[kfd_ioctl_svm_attribute],
    gpuidx: &dyn Fn(u32) -> Option<usize>,
    minor: u32,
) {
    for at in attrs {
        let v = at.value;
        match at.r#type {
            KFD_IOCTL_SVM_ATTR_PREFERRED_LOC => a.preferred_loc = v,
            KFD_IOCTL_SVM_ATTR_PREFETCH_LOC => a.prefetch_loc = v,
            KFD_IOCTL_SVM_ATTR_ACCESS
            | KFD_IOCTL_SVM_ATTR_ACCESS_IN_PLACE
            | KFD_IOCTL_SVM_ATTR_NO_ACCESS => {
                if let Some(i) = gpuidx(v) {
                    let bit = 1u64 << i;
                    a.access &= !bit;
                    a.access_in_place &= !bit;
                    if at.r#type == KFD_IOCTL_SVM_ATTR_ACCESS {
                        a.access |= bit;
                    } else if at.r#type == KFD_IOCTL_SVM_ATTR_ACCESS_IN_PLACE {
                        a.access_in_place |= bit;
                    }
                }
            }
            KFD_IOCTL_SVM_ATTR_SET_FLAGS => a.flags |= v,
            KFD_IOCTL_SVM_ATTR_CLR_FLAGS => a.flags &= !v,
            KFD_IOCTL_SVM_ATTR_GRANULARITY => a.granularity = stored_granularity(v, minor),
            _ => {}
        }
    }
}

pub(crate) fn ioctl(c: &Ctx, buf: &mut [u8]) -> R {
    let a = kfd_ioctl_svm_args::from_buf(buf);
    if a.start_addr & (PAGE_SIZE - 1) != 0
        || a.size & (PAGE_SIZE - 1) != 0
        || a.start_addr == 0
        || a.size == 0
    {
        return Err(Errno::EINVAL);
    }
    let hdr = std::mem::size_of::<kfd_ioctl_svm_args>();
    let asz = std::mem::size_of::<kfd_ioctl_svm_attribute>();
    let need = (a.nattr as usize)
        .checked_mul(asz)
        .and_then(|n| n.checked_add(hdr));
    if need.map_or(true, |n| n > c.usize) {
        return Err(Errno::EINVAL);
    }
    let mut attrs: Vec<kfd_ioctl_svm_attribute> = (0..a.nattr as usize)
        .map(|i| kfd_ioctl_svm_attribute::from_buf(&buf[hdr + i * asz..]))
        .collect();
    let start = a.start_addr / PAGE_SIZE;
    let last = start + a.size / PAGE_SIZE - 1;
    let r = match a.op {
        KFD_IOCTL_SVM_OP_SET_ATTR => set_attr(c, a.start_addr, a.size, start, last, &attrs),
        KFD_IOCTL_SVM_OP_GET_ATTR => get_attr(c, a.start_addr, a.size, start, last, &mut attrs),
        // svm_ioctl returns a positive EINVAL here, which the ioctl
        // syscall passes through as its (successful) return value.
        _ => return Ok(libc::EINVAL),
    };
    for (i, at) in attrs.iter().enumerate() {
        at.to_buf(&mut buf[hdr + i * asz..]);
    }
    r
}

/// `svm_range_is_valid`: every page must be mapped in the process and not
/// overlap a KFD buffer mapped in one of the process's GPU VMs
/// (`svm_range_check_vm`; userptr BOs are not counted, as before).
fn range_valid(c: &Ctx, addr: u64, size: u64) -> Result<(), Errno> {
    if !usermem::is_mapped(addr, size) {
        return Err(Errno::EFAULT);
    }
    let st = c.lock_state();
    let end = addr.saturating_add(size);
    let clash = st
        .vm_va
        .iter()
        .any(|v| v.intersecting(addr, end).any(|(_, e)| !e.userptr));
    if clash {
        return Err(Errno::EADDRINUSE);
    }
    Ok(())
}

fn set_attr(
    c: &Ctx,
    addr: u64,
    size: u64,
    start: u64,
    last: u64,
    attrs: &[kfd_ioctl_svm_attribute],
) -> R {
    range_valid(c, addr, size)?;
    let mut st = c.lock_state();
    st.svm.drop_unmapped(start, last);
    let gpus: Vec<u32> = st.pdds.iter().map(|p| p.gpu_id).collect();
    let gpuidx = |id: u32| gpus.iter().position(|g| *g == id);
    // svm_range_check_attr
    for at in attrs {
        let v = at.value;
        let ok = match at.r#type {
            KFD_IOCTL_SVM_ATTR_PREFERRED_LOC => {
                v == KFD_IOCTL_SVM_LOCATION_SYSMEM
                    || v == KFD_IOCTL_SVM_LOCATION_UNDEFINED
                    || gpuidx(v).is_some()
            }
            KFD_IOCTL_SVM_ATTR_PREFETCH_LOC => {
                v == KFD_IOCTL_SVM_LOCATION_SYSMEM || gpuidx(v).is_some()
            }
            KFD_IOCTL_SVM_ATTR_ACCESS
            | KFD_IOCTL_SVM_ATTR_ACCESS_IN_PLACE
            | KFD_IOCTL_SVM_ATTR_NO_ACCESS => gpuidx(v).is_some(),
            KFD_IOCTL_SVM_ATTR_SET_FLAGS
            | KFD_IOCTL_SVM_ATTR_CLR_FLAGS
            | KFD_IOCTL_SVM_ATTR_GRANULARITY => true,
            _ => false,
        };
        if !ok {
            return Err(Errno::EINVAL);
        }
    }
    let supported = if gpus.len() >= 64 {
        u64::MAX
    } else {
        (1u64 << gpus.len()) - 1
    };
    let xnack = st.xnack;
    let minor = c.m.minor_version.load(std::sync::atomic::Ordering::Relaxed);
    let prefetching = attrs
        .iter()
        .any(|a| a.r#type == KFD_IOCTL_SVM_ATTR_PREFETCH_LOC);
    let mut moves = Vec::new();
    let map = &mut st.svm;
    // Existing ranges: split at the boundaries when their attributes
    // change, then update the overlapping part.
    for (s, l) in map.intersecting(start, last) {
        let cur = map.ranges[&s].1.clone();
        let mut new = cur.clone();
        apply(&mut new, attrs, &gpuidx, minor);
        if new == cur {
            continue;
        }
        if prefetching && location(new.prefetch_loc) != location(cur.prefetch_loc) {
            moves.push(Move {
                start: s.max(start),
                last: l.min(last),
                from: location(cur.prefetch_loc),
                attrs: new.clone(),
            });
        }
        if s < start {
            map.split_at(start);
        }
        if l > last {
            map.split_at(last + 1);
        }
        let key = s.max(start);
        if let Some(e) = map.ranges.get_mut(&key) {
            e.1 = new;
        }
    }
    // Gaps get new ranges with default attributes plus the update.
    let mut cursor = start;
    let spans = map.intersecting(start, last);
    let mut gaps = Vec::new();
    for (s, l) in spans {
        if s > cursor {
            gaps.push((cursor, s - 1));
        }
        cursor = l + 1;
    }
    if cursor <= last {
        gaps.push((cursor, last));
    }
    for (gs, gl) in gaps {
        let mut a = Attrs::default_for(xnack, supported);
        apply(&mut a, attrs, &gpuidx, minor);
        if prefetching && location(a.prefetch_loc) != KFD_IOCTL_SVM_LOCATION_SYSMEM {
            moves.push(Move {
                start: gs,
                last: gl,
                from: KFD_IOCTL_SVM_LOCATION_SYSMEM,
                attrs: a.clone(),
            });
        }
        map.ranges.insert(gs, (gl, a));
    }
    drop(st);
    for m in moves {
        m.report(c);
    }
    Ok(0)
}

/// Where pages of a range live, as a migration names it: a gpu_id, or 0
/// for system memory (an undefined location is system memory).
fn location(loc: u32) -> u32 {
    if loc == KFD_IOCTL_SVM_LOCATION_UNDEFINED {
        KFD_IOCTL_SVM_LOCATION_SYSMEM
    } else {
        loc
    }
}

/// A prefetch that moved a range (pages `start..=last`) from `from` to
/// its new prefetch location. The model keeps no pages per location: the
/// move is the attribute change, reported to SMI clients as the kernel's
/// `svm_migrate_*` does (trigger 0, prefetch; error 0).
struct Move {
    start: u64,
    last: u64,
    from: u32,
    attrs: Attrs,
}

impl Move {
    fn report(&self, c: &Ctx) {
        let to = location(self.attrs.prefetch_loc);
        let gpu = if to != KFD_IOCTL_SVM_LOCATION_SYSMEM {
            to
        } else {
            self.from
        };
        let pid = c.proc.os_pid;
        let pages = self.last - self.start + 1;
        let start = format!(
            "{} -{pid} @{:x}({pages:x}) {:x}->{to:x} {:x}:{:x} 0\n",
            super::smi::boottime_ns(),
            self.start,
            self.from,
            self.attrs.prefetch_loc,
            self.attrs.preferred_loc,
        );
        c.m.smi_event(gpu, pid, KFD_SMI_EVENT_MIGRATE_START, &start);
        let end = format!(
            "{} -{pid} @{:x}({pages:x}) {:x}->{to:x} 0 0\n",
            super::smi::boottime_ns(),
            self.start,
            self.from,
        );
        c.m.smi_event(gpu, pid, KFD_SMI_EVENT_MIGRATE_END, &end);
    }
}

fn get_attr(
    c: &Ctx,
    addr: u64,
    size: u64,
    start: u64,
    last: u64,
    attrs: &mut [kfd_ioctl_svm_attribute],
) -> R {
    if !usermem::is_mapped(addr, size) {
        return Err(Errno::EFAULT);
    }
    for at in attrs.iter() {
        match at.r#type {
            KFD_IOCTL_SVM_ATTR_PREFERRED_LOC
            | KFD_IOCTL_SVM_ATTR_PREFETCH_LOC
            | KFD_IOCTL_SVM_ATTR_ACCESS
            | KFD_IOCTL_SVM_ATTR_SET_FLAGS
            | KFD_IOCTL_SVM_ATTR_CLR_FLAGS
            | KFD_IOCTL_SVM_ATTR_GRANULARITY => {}
            _ => return Err(Errno::EINVAL),
        }
    }
    let st = c.lock_state();
    let gpus: Vec<u32> = st.pdds.iter().map(|p| p.gpu_id).collect();
    let supported = if gpus.len() >= 64 {
        u64::MAX
    } else {
        (1u64 << gpus.len()) - 1
    };
    let spans = st.svm.intersecting(start, last);
    let mut location = KFD_IOCTL_SVM_LOCATION_UNDEFINED;
    let mut prefetch = KFD_IOCTL_SVM_LOCATION_UNDEFINED;
    let mut granularity: u8 = 0xff;
    let (mut flags_and, mut flags_or) = (u32::MAX, 0u32);
    let (mut access, mut aip);
    if spans.is_empty() {
        let d = Attrs::default_for(st.xnack, supported);
        location = d.preferred_loc;
        prefetch = d.prefetch_loc;
        granularity = d.granularity;
        flags_and = d.flags;
        flags_or = d.flags;
        access = d.access;
        aip = 0;
    } else {
        access = supported;
        aip = supported;
        let (mut get_pref, mut get_pf) = (true, true);
        for (s, _) in spans {
            let r = &st.svm.ranges[&s].1;
            if get_pref {
                if r.preferred_loc == KFD_IOCTL_SVM_LOCATION_UNDEFINED
                    || (location != KFD_IOCTL_SVM_LOCATION_UNDEFINED && location != r.preferred_loc)
                {
                    location = KFD_IOCTL_SVM_LOCATION_UNDEFINED;
                    get_pref = false;
                } else {
                    location = r.preferred_loc;
                }
            }
            if get_pf {
                if r.prefetch_loc == KFD_IOCTL_SVM_LOCATION_UNDEFINED
                    || (prefetch != KFD_IOCTL_SVM_LOCATION_UNDEFINED && prefetch != r.prefetch_loc)
                {
                    prefetch = KFD_IOCTL_SVM_LOCATION_UNDEFINED;
                    get_pf = false;
                } else {
                    prefetch = r.prefetch_loc;
                }
            }
            access &= r.access;
            aip &= r.access_in_place;
            flags_and &= r.flags;
            flags_or |= r.flags;
            granularity = granularity.min(r.granularity);
        }
    }
    for at in attrs.iter_mut() {
        match at.r#type {
            KFD_IOCTL_SVM_ATTR_PREFERRED_LOC => at.value = location,
            KFD_IOCTL_SVM_ATTR_PREFETCH_LOC => at.value = prefetch,
            KFD_IOCTL_SVM_ATTR_ACCESS => {
                let Some(i) = gpus.iter().position(|g| *g == at.value) else {
                    return Err(Errno::EINVAL);
                };
                at.r#type = if access & (1 << i) != 0 {
                    KFD_IOCTL_SVM_ATTR_ACCESS
                } else if aip & (1 << i) != 0 {
                    KFD_IOCTL_SVM_ATTR_ACCESS_IN_PLACE
                } else {
                    KFD_IOCTL_SVM_ATTR_NO_ACCESS
                };
            }
            KFD_IOCTL_SVM_ATTR_SET_FLAGS => at.value = flags_and,
            KFD_IOCTL_SVM_ATTR_CLR_FLAGS => at.value = !flags_or,
            KFD_IOCTL_SVM_ATTR_GRANULARITY => at.value = granularity as u32,
            _ => {}
        }
    }
    Ok(0)
}

impl super::Machine {
    /// The kernel's MMU notifier for an `munmap` (or an `mmap` with
    /// `MAP_FIXED` over existing memory) of `[addr, addr + len)` in
    /// simulated OS process `os_pid`: every SVM range of its kernel
    /// processes loses the unmapped pages, as `svm_range_unmap_from_cpu`
    /// does. Returns the number of pages removed from all ranges.
    pub fn cpu_unmapped(&self, os_pid: u32, addr: u64, len: u64) -> u64 {
        if len == 0 {
            return 0;
        }
        let start = addr / PAGE_SIZE;
        let last = addr.saturating_add(len - 1) / PAGE_SIZE;
        self.processes_of(os_pid)
            .iter()
            .map(|p| super::lock(&p.state).svm.remove_pages(start, last))
            .sum()
    }
}
