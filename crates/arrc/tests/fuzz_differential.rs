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
    let report = check(&opts);
    assert!(
        report.same_value >= programs / 4,
        "too few programs gave values: {}",
        report.summary()
    );
}

/// Runs the fuzzer and asserts it found nothing; the report, for more checks.
fn check(opts: &FuzzOptions) -> arrc::fuzz::FuzzReport {
    let report = run(opts, &mut |_| {}).expect("a Vulkan device is required");
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
    report
}

#[test]
fn fuzz_slice_f32() {
    slice(20261124, ElemType::F32, 400);
}

#[test]
fn fuzz_slice_f64() {
    slice(20261125, ElemType::F64, 400);
}

/// The device side on two devices (one lavapipe opened twice), arrays of two
/// elements and more split across them: split statements and gathers agree with the
/// reference.
#[test]
fn fuzz_slice_two_devices() {
    let opts = FuzzOptions {
        seed: 20261126,
        programs: Some(300),
        float: ElemType::F32,
        max_len: 65537,
        timeout: Duration::from_secs(60),
        devices: vec![0, 0],
        split_from: 2,
        ..FuzzOptions::default()
    };
    let report = check(&opts);
    assert!(report.split > 0, "nothing ran split: {}", report.summary());
}

/// Programs of longer runs that disagreed, replayed by seed and index (the sequence
/// is fixed by the seed; `arrc fuzz --seed S --index I` shows each).
#[test]
fn fuzz_findings_replayed() {
    for (seed, index, float) in [
        // f32 sums and products that accumulated in f32 on the device: a sum that
        // cancels (`(-f)+.+t`, `+\○j` under a `≠` fold) and a product whose partials
        // left f32 (`×⌿*f`). They accumulate in f64 now, as the reference does.
        (14, 14110, ElemType::F32),
        (20, 11515, ElemType::F32),
        (23, 3684, ElemType::F32),
        // f64 subnormals (`{⍵=0:0 ⋄ ⍵-2}¨…*j` of powers below 2.2E¯308) were 0 on
        // the device: `*` scaled by a power of two below the normal range, and an
        // integer power's reciprocal overflowed.
        (22, 1922, ElemType::F64),
        // A dfn fold of i64 items whose steps give floats computed its first step in
        // floats (`{(⍺×⍵)!2}⌿` gave 0 where ⍺×⍵ overflows: DOMAIN ERROR).
        (52, 14121, ElemType::F32),
        // Empty folds of dfns that compute a comparison (`{⍺<⍵}/⍬`, `0 {⍺≤⍵}/x`,
        // along a first axis) gave the comparison's identity on the device (session
        // 11's `=/⍬` change) where a dfn has none: DOMAIN ERROR.
        (63, 2997, ElemType::F32),
        (63, 6686, ElemType::F32),
        (63, 8730, ElemType::F32),
        // Session 12's forms: a stencil of an empty vector had the window's shape
        // appended on the reference (`{+/⍵}⌺3⊢,⍬` gave shape 0 3, Dyalog's is 0);
        // a 3-item f32 stencil sum that left f32 was ¯∞ on the device (the f64 sum
        // rounded back unchecked) where the reference gives DOMAIN ERROR.
        (66, 1434, ElemType::F32),
        (66, 3393, ElemType::F32),
        (66, 7609, ElemType::F32),
        // `0@1⊢,×⍨¯9223372036854775807` was 0 on the device: the select of `@` read
        // ⍵ only where it was kept, so the DOMAIN ERROR of computing it was lost.
        (72, 1662, ElemType::F32),
        // `(+\|,j÷…)⍸…` in f64: the device's sums of non-negative items fell back
        // an ulp (added in another order) and the order check raised DOMAIN ERROR
        // where the reference's ⍺ rises (session 35: a float `+\` of items at least
        // 0 counts as ascending).
        (210, 7665, ElemType::F64),
    ] {
        let opts = FuzzOptions {
            seed,
            index: Some(index),
            float,
            ..FuzzOptions::default()
        };
        let report = check(&opts);
        assert_eq!(
            report.same_value + report.same_error,
            1,
            "seed {seed} index {index} was not compared: {}",
            report.summary()
        );
    }
}

/// `∧\` of f32 multiples of 2^32 (least common multiples past 2^24, rounded at each
/// step): the reference scanned by running left to right, the device folds each prefix
/// from the right as APL defines; one item differed 8-fold (found with two devices;
/// one device disagreed too).
#[test]
fn float_lcm_scans_fold_each_prefix() {
    let opts = FuzzOptions {
        seed: 103,
        index: Some(1191),
        devices: vec![0, 0],
        split_from: 2,
        ..FuzzOptions::default()
    };
    let report = check(&opts);
    assert_eq!(report.same_value, 1, "{}", report.summary());
    // The same scan on one device, against the reference.
    let h = "2 3 3 4⍴23.5 ¯41.75 37.375 ¯17.25 22.25 ¯34 39.25 ¯42.625 ¯5.375 25.375 40.5 ¯46.75 ¯39.625 ¯38.75 ¯42.5 ¯32.375 ¯27 ¯37.875 32.25 ¯6.375 ¯7.625 5 0.75 48.125 42.25 ¯38.25 ¯3.875 ¯43.625 25 29.75 ¯7.375 ¯13.75 30.375 ¯38.25 7.375 ¯43.375 39.25 28.375 46.25 39.125 7.5 49.5 15.25 ¯5.875 42.625 ¯42.75 34.75 ¯48.75 ¯34.125 5 36.125 6.625 44.75 ¯22.875 ¯22.125 ¯17.375 36.625 ¯45.125 44.375 ¯28 ¯5.625 ¯31.75 ¯32.25 34.125 32 ¯26.375 ¯43.625 ¯17.5 31 ¯35.75 41.75 34.25";
    let program = format!("h←{h} ⋄ q←h×4294967296 ⋄ ∧\\q");
    let mut gpu = arrc::Session::new(arrc::Backend::Vulkan).expect("a Vulkan device");
    let mut cpu = arrc::Session::new(arrc::Backend::Cpu).unwrap();
    let d = gpu.eval(&program).unwrap().value.unwrap();
    let c = cpu.eval(&program).unwrap().value.unwrap();
    assert_eq!(d, c);
}

/// Findings where the device raised an error the reference did not, now refused by
/// the device (and computed on the reference) instead: a vector whose length is
/// computed on the device (`0~h`, one item) with an array of another rank, which a
/// single item extends to.
#[test]
fn fuzz_findings_the_device_now_refuses() {
    for (seed, index) in [(66, 7181), (66, 7967)] {
        let opts = FuzzOptions {
            seed,
            index: Some(index),
            ..FuzzOptions::default()
        };
        check(&opts);
    }
}
