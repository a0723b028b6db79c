//! Every `AMDKFD_IOC_*` request of the system header
//! (`/usr/include/linux/kfd_ioctl.h`) must exist in
//! `kfd_sys::kfd::KFD_IOCTLS` under the same name and with the same
//! request number. The header's `AMDKFD_IOWR(nr, struct x)` macros are
//! parsed here (direction, number, argument struct) and the numbers are
//! evaluated by the C compiler through the probe.

use kfd_sys::ioctl::{ioc_dir, ioc_nr, ioc_size, ioc_type, IOC_NONE, IOC_READ, IOC_WRITE};
use kfd_sys::kfd::KFD_IOCTLS;
use layout_probe::Probe;

const HEADER: &str = "/usr/include/linux/kfd_ioctl.h";

/// Requests whose argument struct grew after the system header: the name,
/// and the argument size the system header has. For these only the type,
/// number and direction must match, and ours must be larger.
const GROWN: &[(&str, usize)] = &[("AMDKFD_IOC_CREATE_QUEUE", 88)];

/// One parsed `#define AMDKFD_IOC_NAME AMDKFD_IOxx(nr[, struct s])`.
#[derive(Debug)]
struct Request {
    name: String,
    dir: u32,
    nr: u8,
    arg: Option<String>,
}

fn parse_header(path: &str) -> Vec<Request> {
    let text = std::fs::read_to_string(path).unwrap();
    // Join continuation lines, then look at each #define.
    let joined = text.replace("\\\n", " ");
    let mut out = Vec::new();
    for line in joined.lines() {
        let Some(rest) = line.trim().strip_prefix("#define") else {
            continue;
        };
        let mut words = rest.split_whitespace();
        let Some(name) = words.next() else { continue };
        if !name.starts_with("AMDKFD_IOC_") {
            continue;
        }
        let body: String = words.collect::<Vec<_>>().join(" ");
        let (mac, args) = body
            .split_once('(')
            .unwrap_or_else(|| panic!("{name}: unexpected definition `{body}`"));
        let args = args.trim_end().trim_end_matches(')');
        let dir = match mac.trim() {
            "AMDKFD_IO" => IOC_NONE,
            "AMDKFD_IOR" => IOC_READ,
            "AMDKFD_IOW" => IOC_WRITE,
            "AMDKFD_IOWR" => IOC_READ | IOC_WRITE,
            other => panic!("{name}: unknown macro {other}"),
        };
        let mut parts = args.split(',').map(str::trim);
        let nr_text = parts.next().unwrap();
        let nr = u8::from_str_radix(nr_text.trim_start_matches("0x"), 16)
            .unwrap_or_else(|_| panic!("{name}: bad number {nr_text}"));
        let arg = parts.next().map(|s| s.to_string());
        out.push(Request {
            name: name.to_string(),
            dir,
            nr,
            arg,
        });
    }
    out
}

#[test]
fn every_system_header_request_is_declared() {
    let requests = parse_header(HEADER);
    assert!(
        requests.len() >= 35,
        "parsed only {} requests from {HEADER}",
        requests.len()
    );
    let mut p = Probe::new(&["linux/kfd_ioctl.h"]);
    let mut missing = Vec::new();
    let mut wrong = Vec::new();
    for r in &requests {
        let Some(ours) = KFD_IOCTLS.iter().find(|i| i.name == r.name) else {
            missing.push(r.name.clone());
            continue;
        };
        if ioc_nr(ours.request) != r.nr || ioc_dir(ours.request) != r.dir {
            wrong.push(format!(
                "{}: header nr {:#x} dir {}, ours nr {:#x} dir {}",
                r.name,
                r.nr,
                r.dir,
                ioc_nr(ours.request),
                ioc_dir(ours.request)
            ));
        }
        assert_eq!(ioc_type(ours.request), b'K', "{}", r.name);
        match GROWN.iter().find(|(n, _)| *n == r.name) {
            Some((_, old)) => {
                assert!(ioc_size(ours.request) > *old, "{} did not grow", r.name);
                p.constant(&format!("_IOC_SIZE({})", r.name), *old as u64);
                p.constant(&format!("_IOC_NR({})", r.name), ioc_nr(ours.request));
                p.constant(&format!("_IOC_DIR({})", r.name), ioc_dir(ours.request));
                p.constant(&format!("_IOC_TYPE({})", r.name), ioc_type(ours.request));
            }
            None => {
                // The number as the C compiler evaluates the macro, and the
                // argument size from the struct the header names.
                p.constant(&r.name, ours.request);
                if let Some(arg) = &r.arg {
                    p.constant(&format!("sizeof({arg})"), ioc_size(ours.request) as u64);
                }
            }
        }
    }
    assert!(
        missing.is_empty(),
        "requests of {HEADER} missing from KFD_IOCTLS: {missing:?}"
    );
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    p.run(env!("CARGO_TARGET_TMPDIR"));
}

#[test]
fn parser_sees_known_requests() {
    let requests = parse_header(HEADER);
    let svm = requests
        .iter()
        .find(|r| r.name == "AMDKFD_IOC_SVM")
        .unwrap();
    assert_eq!(svm.nr, 0x20);
    assert_eq!(svm.dir, IOC_READ | IOC_WRITE);
    assert_eq!(svm.arg.as_deref(), Some("struct kfd_ioctl_svm_args"));
    let get_version = requests
        .iter()
        .find(|r| r.name == "AMDKFD_IOC_GET_VERSION")
        .unwrap();
    assert_eq!((get_version.nr, get_version.dir), (0x01, IOC_READ));
}
