//! The differential fuzzer: random well-formed programs run on the device and on the
//! CPU reference, which must give the same value (floats within rounding) or the same
//! APL error class. `arrc fuzz` runs it for a while; a test runs a fixed-seed slice.
//!
//! Each program is generated from `(seed, index)` alone, its arrays too, so a finding
//! is reproduced by `arrc fuzz --seed S --index I`. Programs use every primitive and
//! operator the language has, arrays of rank 0 to 4 at awkward sizes (0 1 7 8 9 63 64
//! 65 255 256 257, the scan and compaction tiles ± 1, 65535 65536 65537), integers near
//! 2^31, 2^32, 2^62 and 2^63, and f32 or f64 floats.

use crate::{Array, Backend, Data, ElemType, ErrorClass, Session};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::panic::AssertUnwindSafe;
use std::time::{Duration, Instant};

/// What to run.
#[derive(Clone, Debug)]
pub struct FuzzOptions {
    pub seed: u64,
    /// Stop after this many programs (with `seconds`, whichever comes first).
    pub programs: Option<u64>,
    /// Stop after this long.
    pub seconds: Option<f64>,
    /// Run only this program of the seed's sequence.
    pub index: Option<u64>,
    /// Start the seed's sequence at this program (after a run stopped by a stall).
    pub from: u64,
    /// Floats are f32 (the default) or f64 (`⎕FR←645`).
    pub float: ElemType,
    /// The largest array length used (sizes above it are left out).
    pub max_len: usize,
    /// A program running longer than this on one side is interrupted and skipped.
    pub timeout: Duration,
    /// Compare the device path alone (`Backend::Vulkan`): its errors as it finds them,
    /// not as APL's order of evaluation would (which `Backend::Auto`, the default
    /// users have, asks the reference for).
    pub raw_device: bool,
    /// Several devices (`Session::with_devices`; `0,0` opens one twice), arrays of
    /// at least `split_from` elements split across them.
    pub devices: Vec<usize>,
    pub split_from: usize,
    /// The device's native f32 fast paths flush subnormals as NVIDIA's does
    /// (`Tuning::flush_f32`), whatever the device keeps.
    pub flush_f32: bool,
}

impl Default for FuzzOptions {
    fn default() -> Self {
        FuzzOptions {
            seed: 0,
            programs: Some(500),
            seconds: None,
            index: None,
            from: 0,
            float: ElemType::F32,
            max_len: 100_000,
            timeout: Duration::from_secs(20),
            raw_device: false,
            devices: vec![],
            split_from: crate::shard::DEFAULT_SPLIT_FROM,
            flush_f32: false,
        }
    }
}

/// A program on which the device and the reference disagree (or which crashed).
#[derive(Clone, Debug)]
pub struct Finding {
    pub seed: u64,
    pub index: u64,
    pub program: String,
    /// The arrays it reads, described (not their values).
    pub arrays: String,
    pub what: String,
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "seed {} index {}: {}\n  arrays: {}\n  {}",
            self.seed, self.index, self.program, self.arrays, self.what
        )
    }
}

/// What a run found.
#[derive(Clone, Debug, Default)]
pub struct FuzzReport {
    pub programs: u64,
    /// Both sides gave a value, and the values agree.
    pub same_value: u64,
    /// Both sides gave an error of the same class.
    pub same_error: u64,
    /// The device path does not run it (NOT YET SUPPORTED).
    pub unsupported: u64,
    /// Interrupted after `FuzzOptions::timeout`, or past the device's wait.
    pub slow: u64,
    /// The program whose submission outlasted the device's wait
    /// (`Session::device_stalled`): the run stopped there, since the device may still
    /// be running it (on lavapipe it takes the CPU until the process ends).
    pub stalled_at: Option<u64>,
    /// The reference stopped at its own limit (2^28 elements) below the device's: the
    /// device's value or later error has nothing to compare to.
    pub beyond_reference: u64,
    /// Float values that differ where the reference itself differs as much when
    /// its float arrays move by a few ulps (`ill_conditioned`): such a program
    /// magnifies rounding (a residue of a large sum, a difference of near
    /// values), so its two sides' roundings cannot be judged. Not counted as
    /// disagreements; listed to look at.
    pub ill_conditioned: Vec<Finding>,
    /// A value against an error, or different values.
    pub disagreements: Vec<Finding>,
    /// Errors of different classes.
    pub class_mismatches: Vec<Finding>,
    /// A panic, or an internal compiler error.
    pub crashes: Vec<Finding>,
    pub seconds: f64,
    /// Statements the device side ran split across several devices (`--devices`).
    pub split: u64,
}

impl FuzzReport {
    pub fn clean(&self) -> bool {
        self.disagreements.is_empty() && self.class_mismatches.is_empty() && self.crashes.is_empty()
    }

    pub fn summary(&self) -> String {
        format!(
            "{} programs in {:.0} s: {} same value, {} same error, {} not on the device, {} slow, {} beyond the reference, {} ill-conditioned, {} statements split across devices; {} disagreements, {} error-class mismatches, {} crashes",
            self.programs,
            self.seconds,
            self.same_value,
            self.same_error,
            self.unsupported,
            self.slow,
            self.beyond_reference,
            self.ill_conditioned.len(),
            self.split,
            self.disagreements.len(),
            self.class_mismatches.len(),
            self.crashes.len()
        )
    }
}

/// Runs the fuzzer; `progress` sees the report after each program.
pub fn run(
    opts: &FuzzOptions,
    progress: &mut dyn FnMut(&FuzzReport),
) -> Result<FuzzReport, crate::Error> {
    let mut dev = device_session(opts)?;
    let mut cpu = Session::new(Backend::Cpu)?;
    for s in [&mut dev, &mut cpu] {
        s.set_float(opts.float);
    }
    let start = Instant::now();
    let mut report = FuzzReport::default();
    let indices: Box<dyn Iterator<Item = u64>> = match opts.index {
        Some(i) => Box::new(std::iter::once(i)),
        None => Box::new(opts.from..),
    };
    for index in indices {
        if opts.programs.is_some_and(|p| report.programs >= p)
            || opts
                .seconds
                .is_some_and(|s| start.elapsed().as_secs_f64() >= s)
        {
            break;
        }
        let case = Case::new(opts, index);
        one(opts, &case, &mut dev, &mut cpu, &mut report)?;
        report.programs += 1;
        report.seconds = start.elapsed().as_secs_f64();
        report.split = dev.stats().split_statements;
        progress(&report);
        if report.stalled_at.is_some() {
            break;
        }
    }
    report.seconds = start.elapsed().as_secs_f64();
    report.split = dev.stats().split_statements;
    Ok(report)
}

/// The device side as a user has it (`Backend::Auto`): a statement the device path
/// refuses runs on the reference with a note, and counts as not on the device.
fn device_session(opts: &FuzzOptions) -> Result<Session, crate::Error> {
    let backend = if opts.raw_device {
        Backend::Vulkan
    } else {
        Backend::Auto
    };
    let mut s = if opts.devices.len() > 1 {
        Session::with_devices(backend, &opts.devices)?
    } else {
        Session::with_device(backend, opts.devices.first().copied())?
    };
    s.set_split_from(opts.split_from);
    if opts.flush_f32 {
        s.tune(crate::Tuning {
            flush_f32: Some(true),
            ..Default::default()
        });
    }
    match &s.no_device {
        Some(why) => Err(crate::Error::new(
            ErrorClass::Device,
            format!(
                "the fuzzer compares the device with the reference, and there is no device: {why}"
            ),
            0..0,
        )),
        None => Ok(s),
    }
}

/// One program and its arrays.
#[derive(Clone)]
pub struct Case {
    pub seed: u64,
    pub index: u64,
    pub program: String,
    pub arrays: Vec<(&'static str, Array)>,
}

impl Case {
    /// The program `index` of `opts.seed`'s sequence.
    pub fn new(opts: &FuzzOptions, index: u64) -> Case {
        let mut rng = StdRng::seed_from_u64(
            opts.seed
                .wrapping_mul(0x9E37_79B9_7F4A_7C15)
                .wrapping_add(index.wrapping_mul(0xD1B5_4A32_D192_ED03)),
        );
        let mut arrays = arrays(&mut rng, opts);
        // Seeds from 224 on also put edge values in some float arrays (subnormals,
        // the least normal, 2^-100, huge values, -0), from a stream of their own.
        if opts.seed >= EDGE_FLOATS_FROM_SEED {
            let mut edges =
                StdRng::seed_from_u64(opts.seed ^ index.wrapping_mul(0x4F1B_BCDC_BFA5_3E0B));
            edge_floats(&mut edges, &mut arrays);
        }
        // Forms added later draw from a stream of their own, so that the programs
        // (and the findings replayed by seed and index) stay what they were.
        let mut tacit =
            StdRng::seed_from_u64(opts.seed ^ index.wrapping_mul(0xA24B_AED4_963E_E407));
        let mut newer =
            StdRng::seed_from_u64(opts.seed ^ index.wrapping_mul(0x9FB2_1C65_1E98_DF25));
        // Seeds from 64 on also write the functions added in session 12; earlier
        // seeds' programs, and the findings replayed from them, stay what they were.
        let newer_forms = opts.seed >= NEWER_FORMS_FROM_SEED;
        // Seeds from 70 on also write the device paths added later in session 12 (a
        // stream of their own again: the findings of seeds 64 to 69 replay as found).
        let mut newest =
            StdRng::seed_from_u64(opts.seed ^ index.wrapping_mul(0xC2B2_AE3D_27D4_EB4F));
        let newest_forms = opts.seed >= NEWEST_FORMS_FROM_SEED;
        // Seeds from 80 on also write session 13's forms (inverses, array operands
        // of dops), from a stream of their own.
        let mut latest =
            StdRng::seed_from_u64(opts.seed ^ index.wrapping_mul(0x94D0_49BB_1331_11EB));
        let latest_forms = opts.seed >= LATEST_FORMS_FROM_SEED;
        // Seeds from 90 on also write session 14's forms (scatters of indexed and
        // selective assignment, in dfns too; `⌹`; `⌺` with steps; `⍤` and `⌸` of any
        // function), from a stream of their own.
        let mut current =
            StdRng::seed_from_u64(opts.seed ^ index.wrapping_mul(0xD6E8_FEB8_6659_FD93));
        let current_forms = opts.seed >= CURRENT_FORMS_FROM_SEED;
        // Seeds from 113 on also write session 16's nested arrays (held item by item
        // or dense on the device), from a stream of their own.
        let mut nested =
            StdRng::seed_from_u64(opts.seed ^ index.wrapping_mul(0x8CB9_2BA7_2F3D_8DD7));
        let nested_forms = opts.seed >= NESTED_FORMS_FROM_SEED;
        // Seeds from 136 on also write inner products of matrices with any scalar
        // functions (session 19's tiles), in `nested`'s stream where it had none.
        let inner_forms = opts.seed >= INNER_FORMS_FROM_SEED;
        // Seeds from 144 on also write dyadic `⌸` and products of booleans over
        // several words (session 20), in `nested`'s stream where it had none.
        let key_forms = opts.seed >= KEY_FORMS_FROM_SEED;
        // Seeds from 256 on also write replicates by computed counts whose magnitude
        // the IR bounds (session 43), in `newer`'s stream where it had none.
        let replicate_forms = opts.seed >= REPLICATE_FORMS_FROM_SEED;
        let mut g = Gen {
            rng: &mut rng,
            tacit: &mut tacit,
            newer: &mut newer,
            newer_forms,
            newest: &mut newest,
            newest_forms,
            latest: &mut latest,
            latest_forms,
            current: &mut current,
            current_forms,
            nested: &mut nested,
            nested_forms,
            inner_forms,
            key_forms,
            replicate_forms,
        };
        let mut stmts = vec![];
        if g.rng.random_bool(0.1) {
            stmts.push("⎕IO←0".to_string());
        }
        if g.rng.random_bool(0.15) {
            let e = g.expr(2);
            stmts.push(format!("a←{e}"));
        }
        // On several devices (`--devices`), half the programs end in statements of
        // the forms that run split (`shard.rs`), from a stream of their own.
        let mut split =
            StdRng::seed_from_u64(opts.seed ^ index.wrapping_mul(0xBF58_476D_1CE4_E5B9));
        // Seeds from 127 on also assign nested arrays the device keeps (`nests.rs`) and
        // read them in the last statement, from a stream of their own.
        let mut held = StdRng::seed_from_u64(opts.seed ^ index.wrapping_mul(0x2545_F491_4F6C_DD1D));
        if opts.devices.len() > 1 && split.random_bool(0.5) {
            stmts.push(split_statement(&mut split));
        } else if opts.seed >= HELD_NESTED_FROM_SEED && held.random_bool(0.3) {
            let (x, y) = (g.expr(1), g.expr(1));
            stmts.extend(held_nested(&mut held, &x, &y));
        } else {
            stmts.push(g.expr(3));
        }
        Case {
            seed: opts.seed,
            index,
            program: stmts.join(" ⋄ "),
            arrays,
        }
    }

    /// The arrays' types and shapes; small ones also as APL that makes them.
    pub fn describe(&self) -> String {
        self.arrays
            .iter()
            .map(|(n, a)| {
                // ARRC_FUZZ_FULL=1 shows every array whole (to reproduce by hand).
                let full = std::env::var_os("ARRC_FUZZ_FULL").is_some();
                if (1..=100).contains(&a.len()) || (full && !a.is_empty()) {
                    let items = Array::vector(take(&a.data, a.len()));
                    let shape: Vec<String> = a.shape.iter().map(|d| d.to_string()).collect();
                    format!("{n}←{}⍴{}", shape.join(" "), crate::display(&items))
                } else {
                    format!("{n}: {}{:?}", a.elem, a.shape)
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn finding(&self, what: String) -> Finding {
        Finding {
            seed: self.seed,
            index: self.index,
            program: self.program.clone(),
            arrays: self.describe(),
            what,
        }
    }
}

/// The result of one side, its panic caught.
type Side = Result<Result<crate::Outcome, crate::Error>, String>;

fn eval_guarded(s: &mut Session, case: &Case, timeout: Duration) -> Side {
    // Every program starts from the same state on both sides.
    let _ = s.eval("⎕IO←1");
    for (n, a) in &case.arrays {
        s.set(n, a.clone()).expect("consistent arrays");
    }
    let _ = s.set("a", Array::scalar(crate::Scalar::I32(0)));
    crate::interrupt::clear();
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watch = {
        let done = done.clone();
        std::thread::spawn(move || {
            let t0 = Instant::now();
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                if t0.elapsed() > timeout {
                    crate::interrupt::request();
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        })
    };
    let r = std::panic::catch_unwind(AssertUnwindSafe(|| s.eval(&case.program)));
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    let _ = watch.join();
    crate::interrupt::clear();
    r.map_err(|p| {
        p.downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "a panic".into())
    })
}

fn one(
    opts: &FuzzOptions,
    case: &Case,
    dev: &mut Session,
    cpu: &mut Session,
    report: &mut FuzzReport,
) -> Result<(), crate::Error> {
    let want = eval_guarded(cpu, case, opts.timeout);
    // (Read now: the device side may run the reference too.)
    let ref_refused = arrc_ref::last_refused_size() as u64;
    let got = eval_guarded(dev, case, opts.timeout);
    let (want, got) = match (want, got) {
        (Ok(w), Ok(g)) => (w, g),
        (w, g) => {
            let side = if w.is_err() { "reference" } else { "device" };
            let msg = w.err().or(g.err()).unwrap_or_default();
            report
                .crashes
                .push(case.finding(format!("the {side} panicked: {msg}")));
            // A panic may leave a session half-way: start both again.
            *dev = device_session(opts)?;
            *cpu = Session::new(Backend::Cpu)?;
            for s in [dev, cpu] {
                s.set_float(opts.float);
            }
            return Ok(());
        }
    };
    let interrupted = |r: &Result<crate::Outcome, crate::Error>| matches!(r, Err(e) if e.class == ErrorClass::Interrupt);
    if dev.device_stalled() {
        // A kernel outlasted the runtime's wait (an O(n³) dfn scan of a large matrix,
        // say): slow, not wrong. The device may still be running it, and every later
        // program would meet it (a DEVICE ERROR, or a new device with no CPU left on
        // lavapipe): the run stops here (`run`).
        report.slow += 1;
        report.stalled_at = Some(case.index);
        return Ok(());
    }
    if interrupted(&want) || interrupted(&got) {
        report.slow += 1;
        return Ok(());
    }
    let note = |what: &str| matches!(&got, Ok(o) if o.notes.iter().any(|n| n.contains(what)));
    let (refused, raised) = (note("NOT YET SUPPORTED"), note("the device path raised"));
    let reference_limit = matches!(&want, Err(w) if w.class == ErrorClass::WsFull)
        && ref_refused > 0
        && ref_refused <= arrc_ir::plan::MAX_DEVICE_COUNT;
    let judge = |want: &Result<crate::Outcome, crate::Error>| {
        verdict(want, &got, refused, raised, reference_limit)
    };
    let v = judge(&want);
    match v {
        Verdict::SameValue => report.same_value += 1,
        Verdict::SameError => report.same_error += 1,
        Verdict::Unsupported => report.unsupported += 1,
        Verdict::BeyondReference => report.beyond_reference += 1,
        Verdict::Crash(m) => report.crashes.push(case.finding(m)),
        Verdict::Disagreement(m) if ill_conditioned(case, &want, &got, cpu, opts) => {
            report.ill_conditioned.push(case.finding(m))
        }
        Verdict::Disagreement(m) => report.disagreements.push(case.finding(m)),
        Verdict::ClassMismatch(m) => report.class_mismatches.push(case.finding(m)),
    }
    Ok(())
}

/// Whether the reference's float value `want` moves beyond `close` when each
/// element of the case's float arrays moves by a few ulps (alternately up and
/// down), or when its f64 sums and products fold left to right
/// (`arrc_ref::set_left_float_folds`): then a difference in the last bits on the way
/// (folds in another order, a library's rounding) can move the result as far, and
/// the sides' values say nothing about either's correctness. Also where the
/// reference's DOMAIN ERROR (a float fold's partial result out of range) is a value
/// when its folds run the other way: a device folding in a tree meets other partial
/// results (and only where the device's value, `got`, is finite: a device that let
/// an infinity through is wrong whatever the order). Otherwise only for float values:
/// an integer or another error is exact on both sides.
fn ill_conditioned(
    case: &Case,
    want: &Result<crate::Outcome, crate::Error>,
    got: &Result<crate::Outcome, crate::Error>,
    cpu: &mut Session,
    opts: &FuzzOptions,
) -> bool {
    if matches!(want, Err(e) if e.class == ErrorClass::Domain) {
        let finite = |a: &Array| match &a.data {
            Data::F64(v) => v.iter().all(|x| x.is_finite()),
            Data::F32(v) => v.iter().all(|x| x.is_finite()),
            _ => true,
        };
        if !matches!(got, Ok(crate::Outcome { value: Some(g), .. }) if finite(g)) {
            return false;
        }
        arrc_ref::set_left_float_folds(true);
        let reordered = eval_guarded(cpu, case, opts.timeout);
        arrc_ref::set_left_float_folds(false);
        return matches!(reordered, Ok(Ok(_)));
    }
    let Ok(crate::Outcome { value: Some(w), .. }) = want else {
        return false;
    };
    if !w.elem.is_float() {
        return false;
    }
    let sign = |i: usize| if i.is_multiple_of(2) { 4.0 } else { -4.0 };
    let nudge = |a: &Array| -> Array {
        let mut a = a.clone();
        match &mut a.data {
            Data::F64(v) => {
                for (i, x) in v.iter_mut().enumerate() {
                    *x *= 1.0 + sign(i) * f64::EPSILON;
                }
            }
            Data::F32(v) => {
                for (i, x) in v.iter_mut().enumerate() {
                    *x *= 1.0 + sign(i) as f32 * f32::EPSILON;
                }
            }
            _ => {}
        }
        a
    };
    let moves =
        |r: Side| matches!(r, Ok(Ok(crate::Outcome { value: Some(m), .. })) if !close(&m, w));
    let moved = Case {
        arrays: case.arrays.iter().map(|(n, a)| (*n, nudge(a))).collect(),
        ..case.clone()
    };
    let nudged = moved
        .arrays
        .iter()
        .zip(&case.arrays)
        .any(|((_, m), (_, a))| m.data != a.data);
    if nudged && moves(eval_guarded(cpu, &moved, opts.timeout)) {
        return true;
    }
    arrc_ref::set_left_float_folds(true);
    let reordered = eval_guarded(cpu, case, opts.timeout);
    arrc_ref::set_left_float_folds(false);
    moves(reordered)
}

/// How one program's two sides compare.
enum Verdict {
    SameValue,
    SameError,
    Unsupported,
    BeyondReference,
    Crash(String),
    Disagreement(String),
    ClassMismatch(String),
}

/// `refused`: the device path said NOT YET SUPPORTED and the reference ran it;
/// `raised`: the device path raised an error and the reference gave the value shown;
/// `reference_limit`: the reference refused a size the device takes.
fn verdict(
    want: &Result<crate::Outcome, crate::Error>,
    got: &Result<crate::Outcome, crate::Error>,
    refused: bool,
    raised: bool,
    reference_limit: bool,
) -> Verdict {
    // An internal compiler error is a crash, also where `Backend::Auto` refused the
    // statement to the reference with a note (an emitted module that failed
    // spirv-val or the f32 flush check of `arrc_spirv::f32_flushing`).
    let ice = "internal compiler error";
    if let Ok(g) = got {
        if let Some(n) = g.notes.iter().find(|n| n.contains(ice)) {
            return Verdict::Crash(format!("device: {n}"));
        }
    }
    match (want, got) {
        (_, Err(g)) if g.message.contains(ice) => {
            Verdict::Crash(format!("device: {}: {}", g.class.name(), g.message))
        }
        (_, Err(g)) if g.class == ErrorClass::Unsupported => Verdict::Unsupported,
        // The reference stopped at its own 2^28 limit: whatever the device did with
        // the larger array (a value, or an error met later) has nothing to compare to.
        (Err(_), _) if reference_limit => Verdict::BeyondReference,
        // The device raised an error where APL has a value (`Auto` then shows the
        // reference's value): a wrong error is a disagreement.
        (_, Ok(g)) if raised => Verdict::Disagreement(format!(
            "device error where the reference gives {}: {}",
            show(g.value.as_ref()),
            g.notes.join("; ")
        )),
        _ if refused => Verdict::Unsupported,
        (Ok(w), Ok(g)) => match (&w.value, &g.value) {
            (Some(wv), Some(gv)) if close(gv, wv) => Verdict::SameValue,
            (None, None) => Verdict::SameValue,
            (wv, gv) => Verdict::Disagreement(format!(
                "device {} reference {}",
                show(gv.as_ref()),
                show(wv.as_ref())
            )),
        },
        (Err(w), Err(g)) if w.class == g.class => Verdict::SameError,
        (Err(w), Err(g)) => Verdict::ClassMismatch(format!(
            "device {}: {}; reference {}: {}",
            g.class.name(),
            g.message,
            w.class.name(),
            w.message
        )),
        (Ok(w), Err(g)) => Verdict::Disagreement(format!(
            "device {}: {}; reference {}",
            g.class.name(),
            g.message,
            show(w.value.as_ref())
        )),
        (Err(w), Ok(g)) => Verdict::Disagreement(format!(
            "device {}; reference {}: {}",
            show(g.value.as_ref()),
            w.class.name(),
            w.message
        )),
    }
}

fn show(a: Option<&Array>) -> String {
    match a {
        None => "no value".into(),
        Some(a) if a.len() > 12 => format!(
            "{}{:?} starting {}",
            a.elem,
            a.shape,
            crate::display(&Array::vector(take(&a.data, 12)))
        ),
        Some(a) => crate::display(a),
    }
}

fn take(d: &Data, n: usize) -> Data {
    let mut out = Data::with_capacity(d.elem_type(), n);
    (0..n.min(d.len())).for_each(|i| out.push(d.get(i)));
    out
}

/// Equal values: integers exactly, floats within rounding (f32 sums and products are
/// accumulated in f64 by the reference and in a tree by the device).
pub fn close(a: &Array, b: &Array) -> bool {
    if a.shape != b.shape || a.len() != b.len() {
        return false;
    }
    let float = a.elem.is_float() || b.elem.is_float();
    let f64s = a.elem == ElemType::F64 || b.elem == ElemType::F64;
    let tol = if f64s { 1e-9 } else { 1e-3 };
    // A subnormal on one side and 0 on the other is a flushed value, not rounding
    // (the H200 flushed f32 subnormals until session 35; the tolerance above, 1e-3
    // at least, never saw it).
    let least = if f64s {
        f64::MIN_POSITIVE
    } else {
        f64::from(f32::MIN_POSITIVE)
    };
    (0..a.len()).all(|i| {
        let (x, y) = (a.data.get(i), b.data.get(i));
        if float {
            let (x, y) = (x.as_f64(), y.as_f64());
            let flushed = (x == 0.0) != (y == 0.0) && x.abs().max(y.abs()) < least;
            x == y || (!flushed && (x - y).abs() <= tol * y.abs().max(1.0))
        } else {
            x.as_i64() == y.as_i64()
        }
    })
}

/// Lengths that meet kernels' edges: subgroup and workgroup sizes ± 1, scan and
/// compaction tiles ± 1 (lavapipe's 4096; NVIDIA's 384 × 32 and 384 × 24), 2^16 ± 1.
const AWKWARD: &[usize] = &[
    0, 1, 7, 8, 9, 63, 64, 65, 255, 256, 257, 4095, 4097, 9215, 9217, 12287, 12289, 65535, 65536,
    65537, 100000,
];

/// The arrays a program may read: `b` booleans, `i` i32 (near 2^31 sometimes, or at
/// the edges of the integer products' kernels), `j`
/// i64 (near 2^32 and 2^62), `f` floats, `m` an i32 matrix, `g` a float matrix, `t` a
/// rank-3 and `h` a rank-4 array, `s` a scalar, `e` an empty vector.
fn arrays(rng: &mut StdRng, opts: &FuzzOptions) -> Vec<(&'static str, Array)> {
    let lens: Vec<usize> = AWKWARD
        .iter()
        .copied()
        .filter(|&n| n <= opts.max_len)
        .collect();
    // Mostly short vectors; a large one in one program of five.
    let len = |rng: &mut StdRng| {
        let small = lens.iter().filter(|&&n| n <= 257).count().max(1);
        if rng.random_bool(0.2) {
            lens[rng.random_range(0..lens.len())]
        } else {
            lens[rng.random_range(0..small)]
        }
    };
    let n = len(rng);
    let ints = |rng: &mut StdRng, n: usize| -> Vec<i32> {
        let edge = rng.random_bool(0.15);
        (0..n)
            .map(|_| {
                if edge && rng.random_bool(0.3) {
                    [i32::MAX, i32::MIN + 1, i32::MAX - 1, 1 << 30][rng.random_range(0..4)]
                } else if edge && rng.random_bool(0.2) {
                    // The edges of the ranges that choose an integer product's
                    // kernel: 8-bit, its low slice's -64..63, two slices' ±16319.
                    [127, 128, -128, 63, 64, -65, 16319, 16320, -16320][rng.random_range(0..9)]
                } else {
                    rng.random_range(-20..=20)
                }
            })
            .collect()
    };
    let floats = |rng: &mut StdRng, n: usize| -> Vec<f64> {
        (0..n)
            .map(|_| (rng.random_range(-400..=400) as f64) / 8.0)
            .collect()
    };
    let float_data = |v: Vec<f64>| {
        if opts.float == ElemType::F64 {
            Data::F64(v)
        } else {
            Data::F32(v.into_iter().map(|x| x as f32).collect())
        }
    };
    let big = [
        1i64 << 31,
        (1 << 32) - 1,
        1 << 32,
        (1 << 62) - 1,
        1 << 62,
        -(1 << 62),
        i64::MAX,
        -i64::MAX,
        i64::MIN,
    ];
    let j: Vec<i64> = (0..n)
        .map(|_| {
            if rng.random_bool(0.3) {
                big[rng.random_range(0..big.len())]
            } else {
                rng.random_range(-1000..=1000)
            }
        })
        .collect();
    let dims = [0usize, 1, 2, 3, 7, 8, 9, 33];
    let dim = |rng: &mut StdRng| dims[rng.random_range(0..dims.len())];
    let (r, c) = (dim(rng), dim(rng));
    let (r, c) = if rng.random_bool(0.05) {
        (257, 256)
    } else {
        (r, c)
    };
    let t = [dim(rng).min(7), dim(rng).min(7), dim(rng).min(9)];
    let h = [2usize, dim(rng).min(3), 3, dim(rng).min(4)];
    vec![
        (
            "b",
            Array::vector(Data::Bool((0..n).map(|_| rng.random_bool(0.5)).collect())),
        ),
        ("i", Array::vector(Data::I32(ints(rng, n)))),
        ("j", Array::vector(Data::I64(j))),
        ("f", Array::vector(float_data(floats(rng, n)))),
        ("m", Array::new(vec![r, c], Data::I32(ints(rng, r * c)))),
        ("g", Array::new(vec![r, c], float_data(floats(rng, r * c)))),
        (
            "t",
            Array::new(t.to_vec(), Data::I32(ints(rng, t.iter().product()))),
        ),
        (
            "h",
            Array::new(h.to_vec(), float_data(floats(rng, h.iter().product()))),
        ),
        (
            "s",
            Array::scalar(crate::Scalar::I32(rng.random_range(-9..=9))),
        ),
        ("e", Array::vector(Data::I32(vec![]))),
    ]
}

/// The first seed whose float arrays hold edge values sometimes ([`edge_floats`]).
pub const EDGE_FLOATS_FROM_SEED: u64 = 224;

/// Puts edge values into about a fifth of the items of a third of the float arrays:
/// subnormals and the least normal (of the array's type; f32 ones in f64 arrays
/// too), 2^-100 (where the guarded f32 fast paths check sums), tiny and huge
/// values, and -0.
fn edge_floats(rng: &mut StdRng, arrays: &mut [(&'static str, Array)]) {
    let f32s: [f64; 8] = [
        f64::from(f32::from_bits(1)),
        1e-40,
        f64::from(f32::from_bits(0x007f_ffff)),
        f64::from(f32::MIN_POSITIVE),
        2f64.powi(-100),
        1e-20,
        1e30,
        3e38,
    ];
    let f64s: [f64; 5] = [f64::from_bits(1), 1e-310, f64::MIN_POSITIVE, 1e-200, 1e300];
    for (_, a) in arrays.iter_mut() {
        if !a.elem.is_float() || a.is_empty() || !rng.random_bool(0.35) {
            continue;
        }
        let f64_array = matches!(a.data, Data::F64(_));
        let pick = |rng: &mut StdRng| -> Option<f64> {
            if !rng.random_bool(0.2) {
                return None;
            }
            let v = if rng.random_bool(0.1) {
                -0.0
            } else if f64_array && rng.random_bool(0.5) {
                f64s[rng.random_range(0..f64s.len())]
            } else {
                f32s[rng.random_range(0..f32s.len())]
            };
            Some(if rng.random_bool(0.5) { -v } else { v })
        };
        match &mut a.data {
            Data::F32(v) => v.iter_mut().for_each(|x| {
                if let Some(e) = pick(rng) {
                    *x = e as f32;
                }
            }),
            Data::F64(v) => v.iter_mut().for_each(|x| {
                if let Some(e) = pick(rng) {
                    *x = e;
                }
            }),
            _ => {}
        }
    }
}

/// The first seed whose programs assign nested arrays and read them later
/// ([`held_nested`]).
pub const HELD_NESTED_FROM_SEED: u64 = 127;

/// Two statements: a nested array made of `x` and `y` assigned to `n`, then read.
fn held_nested(r: &mut StdRng, x: &str, y: &str) -> [String; 2] {
    let c = r.random_range(1..4);
    let g = SCALAR2[r.random_range(0..SCALAR2.len())];
    let make = match r.random_range(0..7) {
        0 => format!("n←({x})({y})"),
        1 => format!("n←↓2 3⍴{x}"),
        2 => format!("n←⊂[1]3 2⍴{x}"),
        3 => format!("n←⊂{x}"),
        4 => format!("n←,⊂{x}"),
        5 => format!("n←{c} ¯1⌽¨⊂{x}"),
        _ => format!("n←({x})({y})({c}×{x})"),
    };
    let read = match r.random_range(0..12) {
        0 => "+/¨n".to_string(),
        1 => "⊃n".to_string(),
        2 => "(≢n),⍴n".to_string(),
        3 => "↑n".to_string(),
        4 => "n".to_string(),
        5 => format!("{g}/¨n"),
        6 => "(+/÷≢)¨n".to_string(),
        7 => "⌽¨n".to_string(),
        8 => format!("n{g}n"),
        9 => "≡n".to_string(),
        10 => "∊n".to_string(),
        _ => format!("m←n{g}{c} ⋄ +/¨m"),
    };
    [make, read]
}

/// A statement of a form that runs split across devices, over the fuzzer's names.
fn split_statement(r: &mut StdRng) -> String {
    let pick = |r: &mut StdRng, from: &[&'static str]| from[r.random_range(0..from.len())];
    let v = pick(r, NAMES);
    let c = pick(r, LITERALS);
    let f = pick(r, SCALAR2);
    let g = pick(r, &["+", "×", "⌈", "⌊", "∧", "∨"]);
    match r.random_range(0..9) {
        0 => format!("{v}{f}{c}"),
        1 => format!("{g}/{v}{f}{c}"),
        2 => format!("{g}\\{v}"),
        3 => format!("({v}>{c})/{v}"),
        4 => format!("+/({v}>{c})/{v}"),
        5 => format!("{v}-(+/{v})÷≢{v}"),
        6 => format!("q←{v}{f}{v} ⋄ {g}/q"),
        7 => format!("q←{v}×{c} ⋄ ¯3↑{g}\\q"),
        _ => format!("q←{g}⌿{v} ⋄ q"),
    }
}

const SCALAR2: &[&str] = &[
    "+", "-", "×", "÷", "|", "⌈", "⌊", "*", "⍟", "○", "!", "<", "≤", "=", "≥", ">", "≠", "∧", "∨",
    "⍲", "⍱",
];
const SCALAR1: &[&str] = &["+", "-", "×", "÷", "|", "⌈", "⌊", "*", "⍟", "○", "!", "~"];
const STRUCT1: &[&str] = &[
    "⍴", ",", "⌽", "⊖", "⍉", "↑", "↓", "≢", "∊", "⍸", "⍋", "⍒", "≡", "⍪", "⍳",
];
const STRUCT2: &[&str] = &[
    "⍴", ",", "⍪", "⌽", "⊖", "⍉", "↑", "↓", "⍳", "∊", "/", "⌿", "⌷", "≡", "≢", "⊣", "⊢",
];
const NAMES: &[&str] = &["b", "i", "j", "f", "m", "g", "t", "h", "s", "e", "a"];
const LITERALS: &[&str] = &[
    "0",
    "1",
    "2",
    "¯1",
    "3",
    "7",
    "2.5",
    "¯0.5",
    "1E6",
    "2147483647",
    "¯2147483648",
    "4294967296",
    "4611686018427387904",
    "¯9223372036854775807",
    "(⍳5)",
    "(1 0 1)",
    "(2 3⍴⍳6)",
    "⍬",
    "(0⍴0)",
];

struct Gen<'r> {
    rng: &'r mut StdRng,
    /// Whether a scalar function is written as an equivalent train.
    tacit: &'r mut StdRng,
    /// Whether a structural function gives way to one of session 12's (set
    /// functions, find, expand, laminate, `⍤ ⍥ @ ⌺`, operators of the user's).
    newer: &'r mut StdRng,
    newer_forms: bool,
    /// Whether a scalar function of one argument gives way to a later form (`f⍤1` of
    /// rows, `f@g` of a dfn, `⊤`, `⍷` of a matrix, `f⍣g`).
    newest: &'r mut StdRng,
    newest_forms: bool,
    /// Whether a scalar function of one argument gives way to one of session 13's
    /// forms (`f⍣¯1` of invertible functions, dops with an array operand).
    latest: &'r mut StdRng,
    latest_forms: bool,
    /// Whether a scalar function of one argument gives way to one of session 14's
    /// forms.
    current: &'r mut StdRng,
    current_forms: bool,
    /// Whether a structural function gives way to a form of session 16's nested
    /// arrays (whose value is simple: `⊃`, reductions and products of items).
    nested: &'r mut StdRng,
    nested_forms: bool,
    /// Whether a structural function may give way to an inner product of two
    /// matrices (`f.g` of any fold and scalar function: tiled or not).
    inner_forms: bool,
    /// Whether dyadic `⌸` and products of booleans over several words appear.
    key_forms: bool,
    /// Whether replicates by computed, bounded counts appear (`((3|⌊x)-1)/x`).
    replicate_forms: bool,
}

/// The first seed whose programs write replicates by computed, bounded counts.
pub const REPLICATE_FORMS_FROM_SEED: u64 = 256;

/// The first seed whose programs write inner products of matrices.
pub const INNER_FORMS_FROM_SEED: u64 = 136;

/// The first seed whose programs write dyadic `⌸` and products of booleans over
/// several words.
pub const KEY_FORMS_FROM_SEED: u64 = 144;

/// The first seed whose programs use [`Gen::nested`]'s forms.
pub const NESTED_FORMS_FROM_SEED: u64 = 113;

/// The first seed whose programs use [`Gen::newer`]'s forms.
pub const NEWER_FORMS_FROM_SEED: u64 = 64;

/// The first seed whose programs use [`Gen::newest`]'s forms.
pub const NEWEST_FORMS_FROM_SEED: u64 = 70;

/// The first seed whose programs use [`Gen::latest`]'s forms.
pub const LATEST_FORMS_FROM_SEED: u64 = 80;

/// The first seed whose programs use [`Gen::current`]'s forms.
pub const CURRENT_FORMS_FROM_SEED: u64 = 90;

impl Gen<'_> {
    fn pick(&mut self, from: &[&'static str]) -> &'static str {
        from[self.rng.random_range(0..from.len())]
    }

    fn atom(&mut self) -> String {
        if self.rng.random_bool(0.7) {
            self.pick(NAMES).to_string()
        } else {
            self.pick(LITERALS).to_string()
        }
    }

    /// A small left argument for structural functions (shapes, counts, amounts).
    fn small(&mut self) -> String {
        match self.rng.random_range(0..6) {
            0 => self.rng.random_range(0..5).to_string(),
            1 => format!("¯{}", self.rng.random_range(1..4)),
            2 => format!(
                "{} {}",
                self.rng.random_range(0..4),
                self.rng.random_range(0..5)
            ),
            3 => "(≢i)".to_string(),
            4 => "(1 0 1 1)".to_string(),
            _ => self.atom(),
        }
    }

    /// A scalar function, a dfn of scalar functions, or a dfn with a guard.
    fn operand(&mut self) -> String {
        match self.rng.random_range(0..10) {
            0 => format!("{{⍺{}⍵}}", self.pick(SCALAR2)),
            1 => format!("{{(⍺{}⍵){}2}}", self.pick(SCALAR2), self.pick(SCALAR2)),
            2 => format!(
                "{{⍵>0:⍺{}⍵ ⋄ ⍺{}⍵}}",
                self.pick(SCALAR2),
                self.pick(SCALAR2)
            ),
            _ => self.pick(SCALAR2).to_string(),
        }
    }

    fn expr(&mut self, depth: u32) -> String {
        if depth == 0 || self.rng.random_bool(0.25) {
            return self.atom();
        }
        let d = depth - 1;
        match self.rng.random_range(0..20) {
            0..=3 => {
                let f = self.pick(SCALAR1);
                let x = self.expr(d);
                if self.current_forms {
                    let c = self.current.random_range(1..5);
                    match self.current.random_range(0..20) {
                        0 => return format!("{{v←,⍵ ⋄ v[1+(≢v)|⍳3]←3⍴⌽v ⋄ v}}{x}"),
                        1 => return format!("{{v←,⍵ ⋄ (2↑v)←{c} ⋄ v}}{x}"),
                        2 => return format!("{{v←,⍵ ⋄ v[⍋v]+←{c} ⋄ v}}{x}"),
                        3 => return format!("{{(⌽⍵)@(⍳≢⍵)⊢⍵}},{x}"),
                        // A well-conditioned matrix (diagonal at least 3, the rest
                        // within [1, 2)): `2 2⍴x` itself could be as ill-conditioned
                        // as `(3+K)(1+K)(1+K)(3+K)` with K = 2^32 (seed 126 f64 index
                        // 249), where any two f64 solvers differ in the 8th digit.
                        4 => return format!("⌹(2 2⍴{d} 1 1 {d})+2 2⍴1|{x}", d = c + 2),
                        5 => return format!("{{⌈/,⍵}}⌺(2 2⍴3 3 2 2)⊢3 4⍴{x}"),
                        6 => return format!("{{⍵[⍋⍵]}}⍤1⊢2 3⍴{x}"),
                        7 => return format!("{{⍺,⍴⍵}}⌸,{x}"),
                        8 => return format!("{{c←⍵[2;2] ⋄ (c×+/,⍵)-⍵[1;3]}}⌺3 3⊢3 4⍴{x}"),
                        9 => return format!("(3 2⍴1 2 1 5 {} 0)⍸5 2⍴{x}", c + 1),
                        10 => return format!("(+\\|,{x})⍸{c}×{x}"),
                        _ => {}
                    }
                }
                if self.latest_forms {
                    let k = self.latest.random_range(0..6);
                    let c = self.latest.random_range(1..4);
                    match self.latest.random_range(0..16) {
                        0 => return format!("(({c}∘+)⍣¯{k}){x}"),
                        1 => return format!("((×∘{c})∘(-∘1))⍣¯1⊢{x}"),
                        2 => return format!("({f}⍣¯1){x}"),
                        3 => return format!("(({c}∘×)⍣2)⍣¯1⊢{x}"),
                        4 => return format!("({c}{{⍺⍺×⍵}}){x}"),
                        5 => return format!("(⍳3){{⍵+⍺⍺}}{c}+{x}"),
                        _ => {}
                    }
                }
                let k = if self.newest_forms {
                    self.newest.random_range(0..24)
                } else {
                    99
                };
                match k {
                    0 => return format!("{{⍵-⌈/⍵}}⍤1⊢2 3⍴{x}"),
                    1 => return format!("(+/÷≢)⍤1⊢3 2⍴{x}"),
                    2 => return format!("{{⍵{f}1}}@{{⍵>0}}{x}"),
                    3 => return format!("2 2 2⊤{x}"),
                    4 => return format!("(2 2⍴1 0 0 1)⍷3 3⍴{x}"),
                    5 => return format!("{{e÷+/e←⍵-⌊/⍵}}⍤1⊢2 2⍴{x}"),
                    6 => return format!("0 1 0⍷{x}>0"),
                    7 => return format!("{{⍵+1}}⍣{{∧/⍺>5}}{x}"),
                    _ => {}
                }
                match self.tacit.random_range(0..10) {
                    0 => format!("({f}⊢){x}"),
                    1 => format!("(⊢⊢{f}){x}"),
                    2 => format!("(0+{f}){x}"),
                    3 => format!("({f}⍣1){x}"),
                    4 => format!("{f}∘⊢{x}"),
                    _ => format!("{f}{x}"),
                }
            }
            4..=7 => {
                let a = self.expr(d);
                let f = self.pick(SCALAR2);
                let b = self.expr(d);
                match self.tacit.random_range(0..10) {
                    0 => format!("({a})(⊣{f}⊢){b}"),
                    1 => format!("({b})(⊢{f}⊣){a}"),
                    2 => format!("({a})(+{f}){b}"),
                    3 => format!("({a})(0+{f}){b}"),
                    4 => format!("({a}){f}∘⊢{b}"),
                    5 => format!("({a})({f}⍣1){b}"),
                    _ => format!("({a}){f}{b}"),
                }
            }
            8 => {
                let f = self.pick(STRUCT1);
                let x = self.expr(d);
                if self.nested_forms {
                    let c = self.nested.random_range(1..4);
                    let g = SCALAR2[self.nested.random_range(0..SCALAR2.len())];
                    let h = SCALAR1[self.nested.random_range(0..SCALAR1.len())];
                    match self.nested.random_range(0..24) {
                        0 => return format!("⊃+/{c} ¯1⌽¨⊂{x}"),
                        1 => return format!("⊃(⊂{x}){g}⊂⌽{x}"),
                        2 => return format!("⊃+⌿,1 0∘.⊖1 ¯1⌽¨⊂2 3⍴{x}"),
                        3 => return format!("⊃⌽(1 {c}){g}⊂{x}"),
                        4 => return format!("⊃{g}/({x})(⌽{x})"),
                        5 => return format!("⊃(({x})({c}×{x}))+.×2 {c}"),
                        6 => return format!("⊃{h}¨⊂{x}"),
                        7 => return format!("{{⊃1 ⍵∨.∧3 4=+⌿,1 0 ¯1∘.⊖1 0 ¯1⌽¨⊂⍵}}3 4⍴0<{x}"),
                        8 => return format!("⊃(⍳70){g}⊂{x}"),
                        9 => return format!("⊃+/(⍳66){g}⊂,{x}"),
                        10 => return format!("⊃+/,(⍳9)∘.{g}(⍳8)+¨⊂{x}"),
                        11 => return format!("+/∊({x})({c}+{x})"),
                        12 => return format!("≢⊃⍳¨{c} 2"),
                        13 => return format!("⊃(⊂{x}){g}¨⊂{x}"),
                        // Functions that are not scalar functions of nested arrays
                        // (they must not be applied item by item).
                        14 => return format!("⊃{c}⌽({x})({c}×{x})"),
                        15 => return format!("≢{c}⍴⊂{x}"),
                        16 => return format!("⊃1↓({x})(⌽{x})"),
                        17 => return format!("({x})≡⊂{x}"),
                        18 => return format!("⊃⌽(⍳70)+⊂{x}"),
                        19 | 20 if self.inner_forms => {
                            const FOLDS: &[&str] = &["+", "⌈", "⌊", "∨", "∧", "×", "-"];
                            let f = FOLDS[self.nested.random_range(0..FOLDS.len())];
                            let (m, k, n) = (
                                self.nested.random_range(1..5),
                                self.nested.random_range(1..6),
                                self.nested.random_range(1..5),
                            );
                            let y = self.expr(d);
                            let bools = self.nested.random_bool(0.3);
                            let (p, q) = if bools { ("0<", "0<") } else { ("", "") };
                            return format!("({p}{m} {k}⍴{x}){f}.{g}({q}{k} {n}⍴{y})");
                        }
                        // Dyadic `⌸` of the device's folds, the keys' length now and
                        // then not the items'.
                        21 if self.key_forms => {
                            const OPS: &[&str] = &["≢⍵", "+/⍵", "⌈/⍵", "⌊/⍵", "⍺,≢⍵", "⍺,⌈/⍵"];
                            let op = OPS[self.nested.random_range(0..OPS.len())];
                            let n = self.nested.random_range(1..9);
                            let m = if self.nested.random_bool(0.2) {
                                self.nested.random_range(1..9)
                            } else {
                                n
                            };
                            let y = self.expr(d);
                            return format!("({n}⍴{c}|⌊{x}){{{op}}}⌸{m}⍴{y}");
                        }
                        // Products of booleans over more than one word of 32.
                        22 if self.key_forms => {
                            let f = ["∨", "∧", "+"][self.nested.random_range(0..3)];
                            let g = ["∧", "∨"][self.nested.random_range(0..2)];
                            let (m, k, n) = (
                                self.nested.random_range(1..4),
                                self.nested.random_range(30..70),
                                self.nested.random_range(1..4),
                            );
                            let y = self.expr(d);
                            return format!("(0<{m} {k}⍴{x}){f}.{g}(0<{k} {n}⍴{y})");
                        }
                        _ => {}
                    }
                }
                let k = if self.newer_forms {
                    self.newer.random_range(0..16)
                } else {
                    99
                };
                match k {
                    0 => format!("∪{x}"),
                    1 => format!("≠{x}"),
                    2 => format!("+/⍤1⊢{x}"),
                    3 => format!("{{+/⍵}}⌺3⊢,{x}"),
                    4 => format!("{{⌈/,⍵}}⌺3 3⊢2 3⍴{x}"),
                    5 => format!("-@{{⍵>0}}{x}"),
                    6 => format!("0@1⊢,{x}"),
                    7 => format!("{f}{{⍺⍺ ⍵}}⊢{x}"),
                    8 => format!("2×⍥|{x}"),
                    _ => format!("{f}{x}"),
                }
            }
            9 => {
                let a = self.small();
                let f = self.pick(STRUCT2);
                let x = self.expr(d);
                let k = if self.newer_forms {
                    self.newer.random_range(0..16)
                } else {
                    99
                };
                match k {
                    0 => format!("({a})∩{x}"),
                    1 => format!("({a})~{x}"),
                    2 => format!("({a})⍷{x}"),
                    3 => format!("1 ¯1 0 1\\({a}){f}{x}"),
                    4 => format!("({a}),[0.5]{x}"),
                    5 => format!("10⊥({a}){f}{x}"),
                    6 => format!("(1 2 3)⍸{x}"),
                    7 => format!("({a})+⍤0 1⊢{x}"),
                    // Counts some of which may be negative (fill items).
                    8 if self.replicate_forms => {
                        let m = self.newer.random_range(2..7);
                        let s = self.newer.random_range(0..3);
                        let r = if self.newer.random_bool(0.5) {
                            "/"
                        } else {
                            "⌿"
                        };
                        format!("(({m}|⌊{x})-{s}){r}{x}")
                    }
                    _ => format!("({a}){f}{x}"),
                }
            }
            10 => {
                let op = self.pick(&["/", "⌿", "\\", "⍀"]);
                format!("{}{op}{}", self.operand(), self.expr(d))
            }
            11 => format!("{}¨{}", self.operand_monadic(), self.expr(d)),
            12 => format!("({})∘.{}{}", self.expr(d), self.pick(SCALAR2), self.expr(d)),
            13 => format!(
                "({}){}.{}{}",
                self.expr(d),
                self.pick(&["+", "⌈", "∧", "-", "×"]),
                self.pick(&["×", "+", "=", "⌊"]),
                self.expr(d)
            ),
            14 => format!(
                "{}{}[{}]{}",
                self.operand(),
                self.pick(&["/", "\\"]),
                self.rng.random_range(1..4),
                self.expr(d)
            ),
            15 => format!(
                "{} {}/{}",
                self.rng.random_range(-3..5),
                self.operand(),
                self.expr(d)
            ),
            16 => format!("({})[{}]", self.expr(d), self.rng.random_range(1..5)),
            17 => format!("{}⍨{}", self.pick(SCALAR2), self.expr(d)),
            18 => format!("(a←{})", self.expr(d)),
            _ => format!("{{⍵≤1:⍵ ⋄ {}}}{}", self.body(), self.expr(d)),
        }
    }

    fn operand_monadic(&mut self) -> String {
        match self.rng.random_range(0..3) {
            0 => format!("{{{}⍵}}", self.pick(SCALAR1)),
            1 => format!("{{⍵=0:0 ⋄ ⍵{}2}}", self.pick(SCALAR2)),
            _ => format!("{{⍵{}{}}}", self.pick(SCALAR2), self.pick(&["1", "2", "s"])),
        }
    }

    fn body(&mut self) -> String {
        format!(
            "⍵{}{}",
            self.pick(SCALAR2),
            self.pick(&["1", "2", "s", "⍵"])
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flushed_subnormal_is_not_close() {
        let v = |x: f32| Array::vector(Data::F32(vec![x, 2.0]));
        let tiny = f32::from_bits(0x0001_0000);
        assert!(!close(&v(0.0), &v(tiny)));
        assert!(!close(&v(tiny), &v(0.0)));
        assert!(close(&v(tiny), &v(tiny)));
        assert!(close(&v(0.0), &v(0.0)));
        // Rounding apart, as before: within 1e-3 of the larger of |y| and 1.
        assert!(close(&v(0.0), &v(1e-30)));
        let w = |x: f64| Array::vector(Data::F64(vec![x]));
        assert!(!close(&w(0.0), &w(1e-310)));
        assert!(close(&w(0.0), &w(1e-300)));
    }

    #[test]
    fn internal_compiler_errors_are_crashes_also_when_refused() {
        // Under `Backend::Auto` a statement whose module the emitter refused runs on
        // the reference with a note; the fuzzer must still count it as a crash.
        let value = Some(Array::scalar(arrc_ir::Scalar::I32(1)));
        let outcome = |notes: Vec<String>| crate::Outcome {
            value: value.clone(),
            notes,
            function: None,
        };
        let want = Ok(outcome(vec![]));
        let refused = Ok(outcome(vec![
            "NOT YET SUPPORTED: internal compiler error: SPIR-V builder: f32 arithmetic \
             that a device flushing f32 subnormals would get wrong — computed on the CPU \
             reference"
                .into(),
        ]));
        assert!(matches!(
            verdict(&want, &refused, true, false, false),
            Verdict::Crash(_)
        ));
        let other = Ok(outcome(vec![
            "NOT YET SUPPORTED: monadic ~ is not supported on the GPU path yet — computed \
             on the CPU reference"
                .into(),
        ]));
        assert!(matches!(
            verdict(&want, &other, true, false, false),
            Verdict::Unsupported
        ));
    }

    #[test]
    fn seeds_from_224_put_edge_floats_in_some_arrays() {
        let subnormal = |c: &Case| {
            c.arrays.iter().any(|(_, a)| match &a.data {
                Data::F32(v) => v.iter().any(|x| x.is_subnormal()),
                Data::F64(v) => v.iter().any(|x| x.is_subnormal()),
                _ => false,
            })
        };
        let at = |seed: u64, float: ElemType| FuzzOptions {
            seed,
            float,
            ..Default::default()
        };
        for float in [ElemType::F32, ElemType::F64] {
            let o = at(EDGE_FLOATS_FROM_SEED, float);
            assert!((0..50).any(|i| subnormal(&Case::new(&o, i))));
            // Earlier seeds' programs and arrays stay what they were.
            let o = at(EDGE_FLOATS_FROM_SEED - 1, float);
            assert!(!(0..50).any(|i| subnormal(&Case::new(&o, i))));
        }
    }

    #[test]
    fn programs_are_reproducible_from_seed_and_index() {
        let o = FuzzOptions::default();
        let (a, b) = (Case::new(&o, 17), Case::new(&o, 17));
        assert_eq!(a.program, b.program);
        assert_eq!(a.arrays.len(), b.arrays.len());
        assert!(a.arrays.iter().zip(&b.arrays).all(|(x, y)| x.1 == y.1));
        assert_ne!(Case::new(&o, 18).program, a.program);
    }

    fn device_value(x: f64) -> Result<crate::Outcome, crate::Error> {
        Ok(crate::Outcome {
            value: Some(Array::vector(Data::F64(vec![x]))),
            notes: vec![],
            function: None,
        })
    }

    #[test]
    fn a_device_infinity_is_never_ill_conditioned() {
        // Where the reference raises a DOMAIN ERROR that the other fold order avoids,
        // a finite device value is excused, an infinity is not.
        let opts = FuzzOptions {
            float: ElemType::F64,
            ..FuzzOptions::default()
        };
        let mut cpu = Session::new(Backend::Cpu).unwrap();
        cpu.set_float(ElemType::F64);
        let case = Case {
            seed: 0,
            index: 0,
            program: "×/p".into(),
            arrays: vec![(
                "p",
                Array::vector(Data::F64(vec![1e-300, 1e-300, 1e300, 1e300])),
            )],
        };
        let want = eval_guarded(&mut cpu, &case, opts.timeout).unwrap();
        assert!(want.is_err());
        assert!(ill_conditioned(
            &case,
            &want,
            &device_value(0.0),
            &mut cpu,
            &opts
        ));
        for x in [f64::INFINITY, f64::NAN] {
            assert!(!ill_conditioned(
                &case,
                &want,
                &device_value(x),
                &mut cpu,
                &opts
            ));
        }
    }

    #[test]
    fn only_programs_that_magnify_rounding_are_ill_conditioned() {
        // `arrc fuzz --seed 194 --float f64 --index 3538`: a residue scan of sums of
        // 66 powers (`|⍀⊃+/(⍳66)*⊂,h`), where the sums' last ulp (the device adds
        // them in a tree) moves a residue by 2e-6. A sum of the same arrays is not.
        let opts = FuzzOptions {
            float: ElemType::F64,
            ..FuzzOptions::default()
        };
        let mut cpu = Session::new(Backend::Cpu).unwrap();
        cpu.set_float(ElemType::F64);
        // `--seed 199 --index 1981`: means of i64 rows near ±2^63, summed in another
        // order on the device: `m1+m3+m2` is 146.5 from the right, 0 from the left.
        let h = Array::vector(Data::F64(vec![47.875, -28.375, 4.625, 23.5, -0.125]));
        let j = Array::vector(Data::I64(vec![
            -109,
            -622,
            -i64::MAX,
            860,
            -240,
            i64::MAX,
            199,
        ]));
        for (program, ill) in [
            ("|⍀⊃+/(⍳66)*⊂h", true),
            ("+/⊃+/(⍳66)*⊂h", false),
            ("h×2", false),
            ("⌊h", false),
            ("n←⊂[1]3 2⍴(+/÷≢)⍤1⊢3 2⍴j ⋄ +/¨n", true),
            ("+/|j÷7", false),
            ("+/¨⊂[1]3 2⍴|j÷7", false),
            // `--seed 238 --float f64 --index 1030`: `×/[1]g` of rows holding 1e300
            // and 5e¯324 overflows from the right (DOMAIN ERROR), underflows from the
            // left, and in the device's tree is finite.
            ("×/p", true),
            ("×/p[3 4]", false),
            ("1÷0×p", false),
        ] {
            let p = Array::vector(Data::F64(vec![1e-300, 1e-300, 1e300, 1e300]));
            let case = Case {
                seed: 0,
                index: 0,
                program: program.into(),
                arrays: vec![("h", h.clone()), ("j", j.clone()), ("p", p)],
            };
            let want = eval_guarded(&mut cpu, &case, opts.timeout).unwrap();
            // The device's side: a finite value (for the values above, only the
            // reference's side counts).
            let got = device_value(-1.8e-15);
            assert_eq!(
                ill_conditioned(&case, &want, &got, &mut cpu, &opts),
                ill,
                "{program}"
            );
        }
    }
}
