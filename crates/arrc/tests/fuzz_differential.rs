//! CI's slice of the differential fuzzer (`arrc fuzz`, crates/arrc/src/fuzz.rs): a
//! fixed seed's programs over every primitive and operator, ranks 0–4, awkward
//! lengths up to 65537, integers near 2^31, 2^32 and 2^62, in f32 and in f64. The
//! device (as users have it, `Backend::Auto`) and the reference must agree on every
//! one: the same value, or the same error class; and nothing may crash.

use arrc::fuzz::{run, FuzzOptions};
use arrc::ElemType;
use std::time::Duration;

fn slice(seed: u64, float: ElemType, programs: u64) {
    let opts = FuzzOptions {
        seed,
        programs: Some(programs),
        float,
        max_len: 65537,
        timeout: Duration::from_secs(60),
        ..FuzzOptions::default()
    };
    let report = run(&opts, &mut |_| {}).expect("a Vulkan device is required");
    println!("{}", report.summary());
    let findings: Vec<String> = report
        .disagreements
        .iter()
        .chain(&report.class_mismatches)
        .chain(&report.crashes)
        .map(|f| f.to_string())
        .collect();
    assert!(
        findings.is_empty(),
        "{}\n{}",
        report.summary(),
        findings.join("\n")
    );
    assert!(
        report.same_value >= programs / 4,
        "too few programs gave values: {}",
        report.summary()
    );
}

#[test]
fn fuzz_slice_f32() {
    slice(20261124, ElemType::F32, 400);
}

#[test]
fn fuzz_slice_f64() {
    slice(20261125, ElemType::F64, 400);
}
