//! The language corpus: `tests/corpus/*.apl` in the workspace, written as APL session
//! transcripts. A line indented by six spaces is input; the lines after it, up to the
//! next input, are the expected display (trailing blanks ignored), or an error class
//! such as `LENGTH ERROR` (or `NOT YET SUPPORTED`, `WS FULL`). Lines starting with `⍝` are comments, except `⍝f64: …`,
//! the display when floats are f64 (`⎕FR←645`), where it differs from f32's. Each
//! file is one session, so names persist from line to line. Expected values follow
//! Dyalog APL (whose floats are f64).

use std::path::Path;

struct Case {
    stdlib: bool,
    file: String,
    line: usize,
    input: String,
    expected: String,
    /// The display with f64 floats, when it differs (one line).
    expected_f64: Option<String>,
}

fn cases() -> Vec<Case> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/corpus");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/corpus exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "apl"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        // A first line `⍝!stdlib` loads the standard library into the file's session.
        let stdlib = text.starts_with("⍝!stdlib");
        let mut current: Option<Case> = None;
        for (i, line) in text.lines().enumerate() {
            if let Some(input) = line.strip_prefix("      ") {
                if let Some(c) = current.take() {
                    out.push(c);
                }
                current = Some(Case {
                    stdlib,
                    file: name.clone(),
                    line: i + 1,
                    input: input.to_string(),
                    expected: String::new(),
                    expected_f64: None,
                });
            } else if let Some(f64_display) = line.strip_prefix("⍝f64: ") {
                if let Some(c) = current.as_mut() {
                    c.expected_f64 = Some(f64_display.trim_end().to_string());
                }
            } else if line.starts_with('⍝') {
                continue;
            } else if let Some(c) = current.as_mut() {
                c.expected.push_str(line.trim_end());
                c.expected.push('\n');
            }
        }
        out.extend(current);
    }
    for c in &mut out {
        c.expected = c.expected.trim_end_matches('\n').to_string();
    }
    out
}

/// Whether two displays agree: exactly, or (`rounding`, for device results) number by
/// number within f32 rounding (the device's `*`, `⍟`, `○` may differ from the
/// reference's correctly rounded values in the last digits, which changes column
/// widths too).
fn same_display(actual: &str, expected: &str, rounding: bool) -> bool {
    if actual == expected {
        return true;
    }
    if !rounding {
        return false;
    }
    let num = |t: &str| t.replace('¯', "-").parse::<f64>().ok();
    let a_lines: Vec<&str> = actual.lines().collect();
    let e_lines: Vec<&str> = expected.lines().collect();
    a_lines.len() == e_lines.len()
        && a_lines.iter().zip(&e_lines).all(|(a, e)| {
            let (at, et): (Vec<&str>, Vec<&str>) = (
                a.split_whitespace().collect(),
                e.split_whitespace().collect(),
            );
            at.len() == et.len()
                && at.iter().zip(&et).all(|(x, y)| {
                    x == y
                        || matches!((num(x), num(y)), (Some(p), Some(q))
                            if (p - q).abs() <= 4e-6 * q.abs().max(1e-30))
                })
        })
}

/// Runs the corpus; returns the number of cases, the failures, and the cases the
/// device path did not run (computed on the CPU reference instead).
fn run(backend: arrc::Backend, float: arrc::ElemType) -> (usize, Vec<String>, Vec<String>) {
    // The device runs take turns. Each opens and closes a Vulkan instance and device
    // per corpus file; with two such threads at once, Debian's Khronos validation
    // layer (1.3.239, as CI installs it) crashed about once in 40 to 150 runs of this
    // binary, inside the layer (core dumps: in vkGetFenceStatus and in
    // vkCreateShaderModule while the other thread tore its device down).
    static DEVICE: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _turn = (backend != arrc::Backend::Cpu).then(|| {
        DEVICE
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    });
    let cases = cases();
    let mut failures = Vec::new();
    let mut fallbacks = Vec::new();
    let mut session: Option<(String, arrc::Session)> = None;
    for c in &cases {
        if session.as_ref().is_none_or(|(f, _)| *f != c.file) {
            let mut s = arrc::Session::new(backend).expect("session");
            s.set_float(float);
            if c.stdlib {
                s.load_stdlib().expect("stdlib loads");
            }
            session = Some((c.file.clone(), s));
        }
        let s = &mut session.as_mut().unwrap().1;
        let actual = match s.eval(&c.input) {
            Ok(o) => {
                if let Some(n) = o.notes.iter().find(|n| n.contains("computed on the CPU")) {
                    fallbacks.push(format!("{}:{}: {}  ({n})", c.file, c.line, c.input));
                }
                o.value.map(|v| s.display(&v)).unwrap_or_default()
            }
            Err(e)
                if c.expected.ends_with("ERROR")
                    || c.expected == "NOT YET SUPPORTED"
                    || c.expected == "WS FULL" =>
            {
                e.class.name().to_string()
            }
            Err(e) => format!("{e}"),
        };
        let actual: Vec<&str> = actual.lines().map(|l| l.trim_end()).collect();
        let actual = actual.join("\n");
        let expected = match (&c.expected_f64, float) {
            (Some(e), arrc::ElemType::F64) => e,
            _ => &c.expected,
        };
        if !same_display(&actual, expected, backend != arrc::Backend::Cpu) {
            failures.push(format!(
                "{}:{}: {}\n  expected: {:?}\n  actual:   {:?}",
                c.file, c.line, c.input, expected, actual
            ));
        }
    }
    (cases.len(), failures, fallbacks)
}

/// Corpus cases known to run on the device (see `corpus_on_the_device_with_fallback`).
const GPU_COVERAGE_FLOOR: usize = 850;

#[test]
fn corpus_on_the_cpu_reference() {
    let (n, failures, _) = run(arrc::Backend::Cpu, arrc::ElemType::F32);
    assert!(
        n >= 300,
        "the corpus should hold at least 300 expressions, has {n}"
    );
    assert!(
        failures.is_empty(),
        "{} of {n} corpus cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn corpus_on_the_device_with_fallback() {
    // Every statement the GPU path supports runs on the Vulkan device; the rest falls
    // back to the reference. The displays must not change.
    let (n, failures, fallbacks) = run(arrc::Backend::Auto, arrc::ElemType::F32);
    assert!(
        failures.is_empty(),
        "{} of {n} corpus cases failed on Vulkan:\n{}",
        failures.len(),
        failures.join("\n")
    );
    // Coverage of the GPU path: cases that ran on the device. It may only grow;
    // raise the floor when it does.
    let on_device = n - fallbacks.len();
    println!(
        "{on_device} of {n} corpus cases ran on the device; on the CPU:\n{}",
        fallbacks.join("\n")
    );
    assert!(
        on_device >= GPU_COVERAGE_FLOOR,
        "only {on_device} of {n} corpus cases ran on the device (floor {GPU_COVERAGE_FLOOR})"
    );
}

/// Corpus cases known to run on the device with f64 floats (`⎕FR←645`).
const GPU_F64_COVERAGE_FLOOR: usize = 850;

#[test]
fn corpus_in_f64_on_the_reference_and_the_device() {
    // With f64 floats (Dyalog's own precision) the same transcripts hold, on the CPU
    // reference and on the device (which has shaderFloat64 on lavapipe and NVIDIA).
    let (n, failures, _) = run(arrc::Backend::Cpu, arrc::ElemType::F64);
    assert!(
        failures.is_empty(),
        "{} of {n} corpus cases failed on the reference in f64:\n{}",
        failures.len(),
        failures.join("\n")
    );
    let (n, failures, fallbacks) = run(arrc::Backend::Auto, arrc::ElemType::F64);
    assert!(
        failures.is_empty(),
        "{} of {n} corpus cases failed on Vulkan in f64:\n{}",
        failures.len(),
        failures.join("\n")
    );
    let on_device = n - fallbacks.len();
    println!(
        "{on_device} of {n} corpus cases ran on the device in f64; on the CPU:\n{}",
        fallbacks.join("\n")
    );
    assert!(
        on_device >= GPU_F64_COVERAGE_FLOOR,
        "only {on_device} of {n} corpus cases ran on the device in f64 (floor {GPU_F64_COVERAGE_FLOOR})"
    );
}
