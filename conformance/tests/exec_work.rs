//! The `exec` scenarios do real work: run on Debian's C libhsakmt 5.2.3
//! over kfd-sim, every value the GPU wrote is the expected one (the
//! conformance run only checks that ours records the same values, which
//! both libraries could get wrong alike).

mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use support::{sim_library, REFERENCE};

const SCENARIOS: &[&str] = &[
    "exec/pm4-write-data-release-mem",
    "exec/sdma-copy-fence-trap",
    "exec/pm4-wraparound",
    "exec/destroy-while-busy",
];

/// Runs one scenario in a child on the reference; its `R` records.
fn records(bin: &Path, sim: &Path, dir: &Path, scenario: &str) -> BTreeMap<String, String> {
    let tag = scenario.replace('/', "-");
    let list = dir.join(format!("{tag}.list"));
    let out = dir.join(format!("{tag}.out"));
    let trace = dir.join(format!("{tag}.trace"));
    std::fs::write(&list, scenario).unwrap();
    let o = Command::new(bin)
        .args(["child", "--abi", "rocm-5.2", "--lib", REFERENCE, "--list"])
        .arg(&list)
        .arg("--out")
        .arg(&out)
        .args(["--preset", "mi210", "--trace"])
        .arg(&trace)
        .env("LD_PRELOAD", sim)
        .env("KFD_SIM_TOPOLOGY", "mi210")
        .env("KFD_SIM_TRACE", &trace)
        .output()
        .expect("run kfd-conformance child");
    assert!(
        o.status.success(),
        "{scenario}: {:?}\n{}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .filter_map(|l| {
            let mut f = l.splitn(3, '\t');
            (f.next() == Some("R")).then_some(())?;
            Some((f.next()?.to_string(), f.next()?.to_string()))
        })
        .collect()
}

#[test]
fn exec_scenarios_leave_the_expected_results_on_the_c_library() {
    assert!(
        Path::new(REFERENCE).exists(),
        "{REFERENCE} missing: apt-get install libhsakmt1"
    );
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_kfd-conformance"));
    let sim = sim_library(&bin);
    let dir = std::env::temp_dir().join(format!("kfd-exec-work-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let expect: &[&[(&str, &str)]] = &[
        &[
            ("wait", "SUCCESS(0)"),
            ("data", "0x11 0x22 0x33 0x44"),
            ("rptr-caught-up", "true"),
            ("wait-again", "SUCCESS(0)"),
            ("data64", "0x1122334455667788"),
            ("queue.destroy", "SUCCESS(0)"),
        ],
        &[
            ("wait", "SUCCESS(0)"),
            ("bytes-differing", "0"),
            ("byte-after-copy", "0"),
            ("rptr-caught-up", "true"),
            ("queue.destroy", "SUCCESS(0)"),
        ],
        &[
            ("kept-up", "true"),
            ("wrapped-times", "11"),
            ("last-round-written", "true"),
        ],
        &[
            ("write-before-destroy", "0"),
            ("queue.destroy", "SUCCESS(0)"),
            ("destroy-within-1s", "true"),
            ("write-after-destroy", "0"),
        ],
    ];
    for (scenario, want) in SCENARIOS.iter().zip(expect) {
        let got = records(&bin, &sim, &dir, scenario);
        for (k, v) in *want {
            assert_eq!(
                got.get(*k).map(String::as_str),
                Some(*v),
                "{scenario}: `{k}`; all records: {got:?}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
