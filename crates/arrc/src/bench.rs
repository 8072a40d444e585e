//! `arrc bench`: named workloads timed on the device with Vulkan timestamp queries,
//! input already resident, after a warm-up, median of many runs; plus one end-to-end
//! figure (host call to result on the host) for `+/`.

use crate::gpu::{self, Gpu, Prepared};
use crate::{Array, Data, ElemType, Error};
use arrc_ir::error::err;
use rand::{Rng, SeedableRng};
use serde::Serialize;
use std::collections::HashMap;
use std::time::Instant;

/// How a workload's inputs are shaped from the size `n`.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Inputs {
    /// One vector of n.
    Vector,
    /// Two vectors of n/2 (so that `n` counts all elements read).
    TwoHalves,
    /// One square matrix of about n elements.
    Square,
    /// Two square matrices of about n elements each.
    TwoSquares,
    /// Two vectors of n/2 whose integers range over 0..n (searches that find some
    /// items and miss others, as `⍳` and `∊` on real keys do).
    TwoHalvesWide,
    /// Values `x` of n and integer keys `y` of n drawn from 2^bits distinct ones.
    Keyed(u32),
    /// A device copy of n elements (the bandwidth baseline).
    Copy,
}

pub struct Workload {
    pub name: &'static str,
    pub expr: &'static str,
    inputs: Inputs,
}

pub const WORKLOADS: &[Workload] = &[
    Workload {
        name: "copy",
        expr: "+x",
        inputs: Inputs::Vector,
    },
    Workload {
        name: "dmacopy",
        expr: "(vkCmdCopyBuffer)",
        inputs: Inputs::Copy,
    },
    Workload {
        name: "sum",
        expr: "+/x",
        inputs: Inputs::Vector,
    },
    Workload {
        name: "max",
        expr: "⌈/x",
        inputs: Inputs::Vector,
    },
    Workload {
        name: "scan",
        expr: "+\\x",
        inputs: Inputs::Vector,
    },
    Workload {
        name: "maxscan",
        expr: "⌈\\x",
        inputs: Inputs::Vector,
    },
    Workload {
        name: "rowsum",
        expr: "+/x",
        inputs: Inputs::Square,
    },
    Workload {
        name: "colsum",
        expr: "+⌿x",
        inputs: Inputs::Square,
    },
    Workload {
        name: "sqdiff",
        expr: "+/(x-y)*2",
        inputs: Inputs::TwoHalves,
    },
    Workload {
        name: "compress",
        expr: "(x>0.5)/x",
        inputs: Inputs::Vector,
    },
    Workload {
        name: "replicate",
        expr: "(1+x>0.5)/x",
        inputs: Inputs::Vector,
    },
    Workload {
        name: "where",
        expr: "⍸x>0.5",
        inputs: Inputs::Vector,
    },
    Workload {
        name: "grade",
        expr: "⍋x",
        inputs: Inputs::Vector,
    },
    Workload {
        name: "matmul",
        expr: "x+.×y",
        inputs: Inputs::TwoSquares,
    },
    Workload {
        name: "maxplus",
        expr: "x⌈.+y",
        inputs: Inputs::TwoSquares,
    },
    Workload {
        name: "orand",
        expr: "(x>0.5)∨.∧y>0.5",
        inputs: Inputs::TwoSquares,
    },
    Workload {
        name: "boolcount",
        expr: "(x>0.5)+.×y>0.5",
        inputs: Inputs::TwoSquares,
    },
    Workload {
        name: "minplus",
        expr: "x⌊.+y",
        inputs: Inputs::TwoSquares,
    },
    Workload {
        name: "pluseq",
        expr: "x+.=y",
        inputs: Inputs::TwoSquares,
    },
    Workload {
        name: "stencil3",
        expr: "{+/,⍵}⌺3 3⊢x",
        inputs: Inputs::Square,
    },
    Workload {
        name: "stencil5",
        expr: "{+/,⍵}⌺5 5⊢x",
        inputs: Inputs::Square,
    },
    Workload {
        name: "index",
        expr: "x⍳y",
        inputs: Inputs::TwoHalvesWide,
    },
    Workload {
        name: "member",
        expr: "x∊y",
        inputs: Inputs::TwoHalvesWide,
    },
    Workload {
        name: "keycount10",
        expr: "y{≢⍵}⌸x",
        inputs: Inputs::Keyed(10),
    },
    Workload {
        name: "keycount20",
        expr: "y{≢⍵}⌸x",
        inputs: Inputs::Keyed(20),
    },
    Workload {
        name: "keysum10",
        expr: "y{+/⍵}⌸x",
        inputs: Inputs::Keyed(10),
    },
    Workload {
        name: "keysum20",
        expr: "y{+/⍵}⌸x",
        inputs: Inputs::Keyed(20),
    },
    Workload {
        name: "keymax10",
        expr: "y{⌈/⍵}⌸x",
        inputs: Inputs::Keyed(10),
    },
    Workload {
        name: "keymax20",
        expr: "y{⌈/⍵}⌸x",
        inputs: Inputs::Keyed(20),
    },
];

#[derive(Clone, Debug)]
pub struct BenchOptions {
    pub workloads: Vec<String>,
    /// log2 of the sizes.
    pub sizes: Vec<u32>,
    pub types: Vec<ElemType>,
    pub runs: usize,
    pub warmup: usize,
    /// Runs per submission, back to back (the last one is timed): with more than one
    /// the device does not idle between timed runs.
    pub batch: usize,
    /// Check results against the CPU reference up to this size.
    pub check_up_to: usize,
    /// Idle time before each measurement (a diagnostic: whether a workload's speed
    /// depends on how soon it follows the previous one).
    pub pause_ms: u64,
    pub progress: bool,
    /// Kernel tuning over the device's defaults.
    pub tune: crate::Tuning,
    /// Report what the driver compiled for each new kernel (`BenchResult::pipelines`).
    pub pipeline_stats: bool,
    /// Time each kernel on its own (a timestamp after every dispatch; `BenchResult::kernels`).
    pub profile: bool,
}

/// One measurement.
#[derive(Clone, Debug, Serialize)]
pub struct BenchResult {
    pub workload: String,
    pub expr: String,
    #[serde(rename = "type")]
    pub elem: ElemType,
    pub n: usize,
    pub shape: Vec<usize>,
    /// Median device time of one run, in microseconds.
    pub median_us: Option<f64>,
    pub min_us: Option<f64>,
    /// Bytes a run must move: each input read once, each output written once.
    pub bytes: u64,
    pub gbps: Option<f64>,
    /// Host call to result on the host, median, microseconds (for `sum`).
    pub e2e_us: Option<f64>,
    pub runs: usize,
    pub checked: bool,
    pub note: Option<String>,
    /// With `pipeline_stats`: for each kernel first made by this measurement, its
    /// entry point, specialization constants and the driver's statistics.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pipelines: Vec<String>,
    /// With `profile`: each kernel's median time per run in microseconds (summed over
    /// its dispatches), in the plan's order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub kernels: Vec<(String, f64)>,
}

fn median(v: &mut [f64]) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    Some(v[v.len() / 2])
}

/// Random data: floats in [0, 1), integers in `0..range`.
fn random(rng: &mut rand::rngs::StdRng, ty: ElemType, shape: Vec<usize>, range: i32) -> Array {
    let n: usize = shape.iter().product();
    let data = match ty {
        ElemType::F32 => Data::F32((0..n).map(|_| rng.random::<f32>()).collect()),
        ElemType::F64 => Data::F64((0..n).map(|_| rng.random::<f64>()).collect()),
        ElemType::I64 => Data::I64((0..n).map(|_| rng.random_range(0..range as i64)).collect()),
        ElemType::Bool => Data::Bool((0..n).map(|_| rng.random_bool(0.5)).collect()),
        ElemType::I32 => Data::I32((0..n).map(|_| rng.random_range(0..range)).collect()),
        ElemType::Char => Data::Char((0..n).map(|_| rng.random_range('a'..='z')).collect()),
        // Mixed: characters and numbers alternating.
        ElemType::Mixed => Data::Mixed(
            (0..n)
                .map(|i| {
                    arrc_ir::array::Item::Simple(if i % 2 == 0 {
                        arrc_ir::Scalar::Char(rng.random_range('a'..='z'))
                    } else {
                        arrc_ir::Scalar::I32(rng.random_range(0..100))
                    })
                })
                .collect(),
        ),
    };
    Array::new(shape, data)
}

/// Runs the benchmark matrix; `report` sees each result as it is made.
pub(crate) fn run(
    g: &mut Gpu,
    opts: &BenchOptions,
    mut report: impl FnMut(&BenchResult),
) -> Result<Vec<BenchResult>, Error> {
    let chosen: Vec<&Workload> = WORKLOADS
        .iter()
        .filter(|w| opts.workloads.is_empty() || opts.workloads.iter().any(|n| n == w.name))
        .collect();
    if chosen.is_empty() {
        let names: Vec<_> = WORKLOADS.iter().map(|w| w.name).collect();
        return Err(err::domain(
            format!("no such workload; choose from {}", names.join(", ")),
            0..0,
        ));
    }
    let total = (chosen.len() * opts.sizes.len() * opts.types.len()) as u64;
    let bar = opts.progress.then(|| progress::Bar::new(total));
    let mut rng = rand::rngs::StdRng::seed_from_u64(0xbe9c);
    let mut out = Vec::new();
    // Kernels are timed by the device's timestamps.
    let timing = std::mem::replace(&mut g.ctx.timing, true);
    // Inputs in place before the runs, as torch's are.
    let resident = std::mem::replace(&mut g.resident_params, true);
    let r = (|| -> Result<(), Error> {
        for w in &chosen {
            for &ty in &opts.types {
                for &lg in &opts.sizes {
                    let n = 1usize << lg;
                    if let Some(b) = &bar {
                        b.set_message(format!("{} {} 2^{lg}", w.name, ty));
                    }
                    std::thread::sleep(std::time::Duration::from_millis(opts.pause_ms));
                    let r = measure(g, w, ty, n, opts, &mut rng)?;
                    report(&r);
                    out.push(r);
                    if let Some(b) = &bar {
                        b.inc(1);
                    }
                }
            }
        }
        Ok(())
    })();
    g.ctx.timing = timing;
    g.resident_params = resident;
    r?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    Ok(out)
}

fn measure(
    g: &mut Gpu,
    w: &Workload,
    ty: ElemType,
    n: usize,
    opts: &BenchOptions,
    rng: &mut rand::rngs::StdRng,
) -> Result<BenchResult, Error> {
    let side = (n as f64).sqrt().round() as usize;
    let (shapes, n_eff): (Vec<Vec<usize>>, usize) = match w.inputs {
        Inputs::Vector | Inputs::Copy => (vec![vec![n]], n),
        Inputs::TwoHalves | Inputs::TwoHalvesWide => (vec![vec![n / 2], vec![n / 2]], n),
        Inputs::Keyed(_) => (vec![vec![n], vec![n]], n),
        Inputs::Square => (vec![vec![side, side]], side * side),
        Inputs::TwoSquares => (vec![vec![side, side], vec![side, side]], side * side),
    };
    let mut result = BenchResult {
        workload: w.name.into(),
        expr: w.expr.into(),
        elem: ty,
        n: n_eff,
        shape: shapes[0].clone(),
        median_us: None,
        min_us: None,
        bytes: 0,
        gbps: None,
        e2e_us: None,
        runs: 0,
        checked: false,
        note: None,
        pipelines: vec![],
        kernels: vec![],
    };
    if w.inputs == Inputs::TwoSquares && n > 1 << 24 {
        // n^1.5 multiply-adds: beyond 4096×4096 a run takes seconds.
        result.note = Some("skipped: matrix products above 2^24 elements".into());
        return Ok(result);
    }
    if w.inputs == Inputs::Copy {
        let bytes = (n * ty.size()) as u64;
        result.bytes = 2 * bytes;
        let times = g.time_copy(bytes, opts.warmup, opts.runs);
        match times {
            Ok(mut t) => {
                result.runs = t.len();
                result.min_us = t.iter().copied().reduce(f64::min).map(|x| x / 1e3);
                result.median_us = median(&mut t).map(|x| x / 1e3);
            }
            Err(e) => result.note = Some(e.message),
        }
        result.gbps = result.median_us.map(|us| result.bytes as f64 / (us * 1e3));
        return Ok(result);
    }
    let names = ["x", "y"];
    let mut arrays = HashMap::new();
    for (i, (name, shape)) in names.iter().zip(&shapes).enumerate() {
        let (ty, range) = match w.inputs {
            Inputs::TwoHalvesWide => (ty, n.min(i32::MAX as usize) as i32),
            Inputs::Keyed(bits) if i == 1 => (ElemType::I32, 1 << bits),
            _ => (ty, 100),
        };
        arrays.insert(name.to_string(), random(rng, ty, shape.clone(), range));
    }
    let prog = arrc_syntax::parse_str(w.expr)?;
    let arrc_syntax::Stmt::Expr(e) = &prog.stmts[0] else {
        return Err(err::domain("a workload must be an expression", 0..0));
    };
    let mut plan_opts = g.plan_options();
    opts.tune.apply(&mut plan_opts);
    // f64 workloads compute in f64 throughout.
    let float = ty.join(ElemType::F32);
    let cache = gpu::ModuleCache::default();
    let bound = gpu::host_names(&arrays);
    let compiled = match gpu::compile(
        e,
        &bound,
        gpu::Scopes::default(),
        float,
        1,
        &plan_opts,
        &cache,
        false,
    ) {
        Ok(c) => c,
        Err(e) => {
            result.note = Some(format!("{}: {}", e.class.name(), e.message));
            return Ok(result);
        }
    };
    let mut prepared = Prepared::default();
    g.ctx.capture_statistics = opts.pipeline_stats;
    g.ctx.profile = opts.profile;
    let made_before = g.ctx.pipeline_count();
    let r = (|| -> Result<(), Error> {
        g.prepare(&compiled, &bound, &mut prepared)?;
        result.pipelines = g
            .ctx
            .pipeline_reports(made_before)
            .into_iter()
            .map(|p| {
                let spec: Vec<String> = p.spec.iter().map(|(i, v)| format!("{i}={v}")).collect();
                let st: Vec<String> = p
                    .statistics
                    .iter()
                    .map(|(k, v)| format!("{k}: {v}"))
                    .collect();
                format!("{} [{}] {}", p.entry, spec.join(" "), st.join(", "))
            })
            .collect();
        // Warm up for at least `warmup` runs and 500 ms, keeping the device busy: runs
        // go back to back, about 20 ms of them per submission. Under Vulkan the H200's
        // clock governor lowers the SM clock when the GPU idles (between workloads,
        // while the host makes the next input) and, with one run per submission and a
        // wait after each, often leaves it at a third of its peak (docs/PERFORMANCE.md,
        // "Two speeds").
        let start = Instant::now();
        let first = g.execute(&prepared)?.device_ns.unwrap_or(1e6);
        let batch = (2e7 / first.max(1.0)).clamp(1.0, 1000.0) as usize;
        let mut warm = 1;
        while warm < opts.warmup || start.elapsed().as_millis() < 500 {
            g.execute_repeated(&prepared, batch)?;
            warm += batch;
        }
        let mut times = Vec::with_capacity(opts.runs);
        // Per kernel of the plan: its time in each run, summed over its dispatches.
        let kernels = compiled.plan.kernels.len();
        let mut ran = vec![false; kernels];
        prepared.kernels().iter().for_each(|&k| ran[k] = true);
        let mut per_kernel: Vec<Vec<f64>> = vec![vec![]; kernels];
        for _ in 0..opts.runs {
            let stats = g.execute_repeated(&prepared, opts.batch)?;
            times.extend(stats.device_ns);
            if stats.dispatch_ns.is_empty() {
                continue;
            }
            let mut run = vec![0.0; kernels];
            for (&k, ns) in prepared.kernels().iter().zip(&stats.dispatch_ns) {
                run[k] += ns;
            }
            for k in (0..kernels).filter(|&k| ran[k]) {
                per_kernel[k].push(run[k]);
            }
        }
        result.kernels = per_kernel
            .into_iter()
            .enumerate()
            .filter_map(|(k, mut v)| {
                let name = compiled.plan.kernels[k].name.clone();
                Some((name, median(&mut v)? / 1e3))
            })
            .collect();
        result.runs = times.len();
        result.min_us = times.iter().copied().reduce(f64::min).map(|x| x / 1e3);
        result.median_us = median(&mut times).map(|x| x / 1e3);
        let value = g.finish(&compiled, &prepared)?;
        let in_bytes: u64 = arrays
            .values()
            .map(|a| (a.len() * a.elem.size()) as u64)
            .sum();
        result.bytes = in_bytes + (value.len() * value.elem.size()) as u64;
        result.gbps = result.median_us.map(|us| result.bytes as f64 / (us * 1e3));
        if w.name == "sum" {
            // Where the time of a call goes: submitting, waiting for the device,
            // reading the result back; measured on a recording without timestamps
            // (as a session makes them), then on the timed one, whose wait splits
            // into the device's own time and, where the device calibrates its
            // timestamps against the host's clock, the time from the submission's
            // return to the device's first timestamp ("lead") and from its last
            // kernel to the wait's return ("tail", of which the readback "copy").
            let (timing, profile) = (g.ctx.timing, g.ctx.profile);
            g.ctx.timing = false;
            g.ctx.profile = false;
            let mut plain = Prepared::default();
            let made = g.prepare(&compiled, &bound, &mut plain);
            (g.ctx.timing, g.ctx.profile) = (timing, profile);
            made?;
            let untimed = e2e_calls(g, &compiled, &plain, opts.runs);
            g.release(plain);
            let untimed = untimed?;
            let timed = e2e_calls(g, &compiled, &prepared, opts.runs)?;
            result.e2e_us = untimed.e2e;
            let host = g.ctx.calibration();
            result.note = Some(format!(
                "e2e: {}; timed: {}",
                untimed.describe(None::<fn(u64) -> f64>),
                timed.describe(host)
            ));
        }
        // The reference's matrix product costs n^1.5: check small ones only.
        let check_limit = if w.inputs == Inputs::TwoSquares {
            opts.check_up_to.min(1 << 18)
        } else {
            opts.check_up_to
        };
        if n_eff <= check_limit {
            let mut env = arrc_ref::Env {
                arrays: arrays.clone(),
                ..Default::default()
            };
            let want = arrc_ref::eval_program(&prog, &mut env)?
                .ok_or_else(|| err::domain("no value", 0..0))?;
            check(w.name, &value, &want)?;
            result.checked = true;
        }
        Ok(())
    })();
    g.release(prepared);
    if let Err(e) = r {
        result.note = Some(format!("{}: {}", e.class.name(), e.message));
    }
    Ok(result)
}

fn check(name: &str, got: &Array, want: &Array) -> Result<(), Error> {
    let bad = |at: String| {
        err::domain(
            format!("benchmark {name}: the device result differs from the CPU reference{at}"),
            0..0,
        )
    };
    if got.shape != want.shape || got.len() != want.len() {
        return Err(bad(" in shape".into()));
    }
    let scale: f64 = (0..want.len())
        .map(|i| want.data.get(i).as_f64().abs())
        .fold(1.0, f64::max);
    let wrong = |i: usize| {
        let (a, b) = (got.data.get(i).as_f64(), want.data.get(i).as_f64());
        (a - b).abs() > 1e-4 * scale.max(b.abs())
    };
    if let Some(i) = (0..got.len()).find(|&i| wrong(i)) {
        let count = (i..got.len()).filter(|&i| wrong(i)).count();
        let (a, b) = (got.data.get(i).as_f64(), want.data.get(i).as_f64());
        return Err(bad(format!(
            " in {count} elements, the first at {i}: {a} (device) vs {b}"
        )));
    }
    Ok(())
}

/// The results as a table.
pub fn table(results: &[BenchResult]) -> String {
    let copy: HashMap<usize, f64> = results
        .iter()
        .filter(|r| r.workload == "copy" || r.workload == "dmacopy")
        .filter_map(|r| Some((r.n * r.elem.size(), r.gbps?)))
        .collect();
    let best_copy = copy.values().copied().fold(0.0, f64::max);
    let mut s = format!(
        "{:<9} {:<4} {:>10} {:>12} {:>10} {:>8} {:>10}  {}\n",
        "workload", "type", "n", "median µs", "GB/s", "%copy", "e2e µs", "note"
    );
    for r in results {
        let f = |v: Option<f64>, p: usize| v.map_or("-".to_string(), |x| format!("{x:.p$}"));
        let pct = match (r.gbps, best_copy > 0.0) {
            (Some(g), true) => format!("{:.0}%", 100.0 * g / best_copy),
            _ => "-".into(),
        };
        s.push_str(&format!(
            "{:<9} {:<4} {:>10} {:>12} {:>10} {:>8} {:>10}  {}\n",
            r.workload,
            r.elem.name(),
            r.n,
            f(r.median_us, 1),
            f(r.gbps, 1),
            pct,
            f(r.e2e_us, 1),
            r.note.clone().unwrap_or_default()
        ));
        for p in &r.pipelines {
            s.push_str(&format!("    kernel {p}\n"));
        }
        for (k, us) in &r.kernels {
            s.push_str(&format!("    {us:>10.1} µs  {k}\n"));
        }
    }
    s
}

/// One run of a whole program (`arrc bench PROGRAM.apl`): its wall time and what
/// the session counted during it.
#[derive(Clone, Debug, Default)]
struct ProgramRun {
    wall_ns: u64,
    stats: crate::Stats,
}

/// Median and spread of one figure over the timed runs.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Spread {
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

impl Spread {
    fn of(mut v: Vec<f64>) -> Spread {
        if v.is_empty() {
            return Spread::default();
        }
        v.sort_by(|a, b| a.total_cmp(b));
        Spread {
            median: v[v.len() / 2],
            min: v[0],
            max: v[v.len() - 1],
        }
    }
}

/// `arrc bench PROGRAM.apl`: the program run `warmup` times, then `runs` times, in one
/// session (so its compiled kernels and pipelines are warm, as in a REPL or a server
/// that runs it again). Times are in microseconds.
#[derive(Clone, Debug, Serialize)]
pub struct ProgramBench {
    pub program: String,
    pub device: String,
    /// Devices the session splits large arrays across (1 unless `--devices`).
    pub devices: usize,
    pub runs: usize,
    /// The first run's cost (compiling and creating pipelines), µs.
    pub first_run_us: f64,
    pub wall_us: Spread,
    pub compile_us: Spread,
    pub pipeline_us: Spread,
    pub upload_us: Spread,
    /// Creating device buffers and recording commands.
    pub prepare_us: Spread,
    pub run_us: Spread,
    /// The kernels' own time, from as many runs again with timestamps (which the
    /// runs timed above do without, as a session does).
    pub device_us: Spread,
    pub readback_us: Spread,
    pub host_us: Spread,
    /// Per run (the same every run for a deterministic program).
    pub uploads: u64,
    pub upload_bytes: u64,
    pub readbacks: u64,
    pub readback_bytes: u64,
    pub dispatches: u64,
    /// The program's value, as displayed (cut at 200 characters).
    pub value: String,
    /// With `profile`: each dispatch of a run in order, its kernel's name and median
    /// device time in microseconds (a program that runs other dispatches each time
    /// has none).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub kernels: Vec<(String, f64)>,
}

/// A program's value as the bench shows it: a large array by its shape and first
/// items (displaying all of a 8192² result took minutes, every run).
fn shown(v: &arrc_ir::Array) -> String {
    const MOST_ITEMS: usize = 1000;
    if v.len() <= MOST_ITEMS {
        return crate::display(v);
    }
    let mut first = arrc_ir::Data::with_capacity(v.data.elem_type(), MOST_ITEMS);
    for i in 0..MOST_ITEMS {
        first.push_from(&v.data, i);
    }
    let shape: Vec<String> = v.shape.iter().map(|d| d.to_string()).collect();
    format!(
        "shape {}, first items {}",
        shape.join(" "),
        crate::display(&arrc_ir::Array::vector(first))
    )
}

/// Runs `src` as [`ProgramBench`] describes.
pub fn program(
    s: &mut crate::Session,
    name: &str,
    src: &str,
    warmup: usize,
    runs: usize,
    profile: bool,
) -> Result<ProgramBench, Error> {
    let once = |s: &mut crate::Session| -> Result<(ProgramRun, String), Error> {
        let a = s.stats();
        let t = Instant::now();
        let out = s.eval(src)?;
        let wall_ns = t.elapsed().as_nanos() as u64;
        let value = out
            .value
            .map(|v| shown(&v))
            .or(out.function)
            .unwrap_or_default();
        let r = ProgramRun {
            wall_ns,
            stats: s.stats().since(&a),
        };
        Ok((r, value))
    };
    let (first, mut value) = once(s)?;
    for _ in 1..warmup.max(1) {
        once(s)?;
    }
    let mut all = Vec::with_capacity(runs);
    for _ in 0..runs.max(1) {
        let (r, v) = once(s)?;
        value = v;
        all.push(r);
    }
    // The kernels' time from as many runs again with timestamps (the runs above
    // have none, as a session's statements: they lengthen every submission's wait).
    let mut dispatches: Vec<Vec<(String, f64)>> = vec![];
    let mut timed = Vec::with_capacity(runs);
    s.set_timing(true);
    s.set_profile(profile);
    s.take_profile();
    let r = (|| -> Result<(), Error> {
        for _ in 0..runs.max(1) {
            timed.push(once(s)?.0);
            dispatches.push(s.take_profile());
        }
        Ok(())
    })();
    s.set_profile(false);
    s.set_timing(false);
    r?;
    // Each dispatch's median over the runs, where every run ran the same ones.
    let same = dispatches
        .windows(2)
        .all(|w| w[0].len() == w[1].len() && w[0].iter().zip(&w[1]).all(|(a, b)| a.0 == b.0));
    let kernels = match dispatches.first() {
        Some(first) if profile && same => (0..first.len())
            .map(|i| {
                let mut t: Vec<f64> = dispatches.iter().map(|d| d[i].1 / 1e3).collect();
                (first[i].0.clone(), median(&mut t).unwrap_or(0.0))
            })
            .collect(),
        _ => vec![],
    };
    let us = |f: &dyn Fn(&ProgramRun) -> u64| {
        Spread::of(all.iter().map(|r| f(r) as f64 / 1e3).collect())
    };
    let device_us = Spread::of(
        timed
            .iter()
            .map(|r| r.stats.device_ns as f64 / 1e3)
            .collect(),
    );
    let last = all.last().cloned().unwrap_or_default();
    if value.chars().count() > 200 {
        value = value.chars().take(200).collect::<String>() + "…";
    }
    Ok(ProgramBench {
        program: name.to_string(),
        device: s.device().map_or("none".into(), |d| d.name.clone()),
        devices: s.device_count(),
        runs: all.len(),
        first_run_us: first.wall_ns as f64 / 1e3,
        wall_us: us(&|r| r.wall_ns),
        compile_us: us(&|r| r.stats.compile_ns),
        pipeline_us: us(&|r| r.stats.pipeline_ns),
        upload_us: us(&|r| r.stats.upload_ns),
        prepare_us: us(&|r| r.stats.prepare_ns),
        run_us: us(&|r| r.stats.run_ns),
        device_us,
        readback_us: us(&|r| r.stats.readback_ns),
        host_us: us(&|r| r.stats.host_ns(r.wall_ns)),
        uploads: last.stats.uploads,
        upload_bytes: last.stats.upload_bytes,
        readbacks: last.stats.readbacks,
        readback_bytes: last.stats.readback_bytes,
        dispatches: last.stats.dispatches,
        value,
        kernels,
    })
}

/// A [`ProgramBench`] as a few lines of text.
pub fn program_report(b: &ProgramBench) -> String {
    let f = |s: &Spread| format!("{:.1} µs [{:.1}–{:.1}]", s.median, s.min, s.max);
    format!(
        "{} on {}: {} runs, median (min–max)\n  wall      {}\n  compile   {}\n  pipelines {}\n  upload    {}\n  buffers   {}\n  submit    {} (kernels {})\n  readback  {}\n  host      {}\n  first run {:.1} µs; per run {} uploads ({} B), {} readbacks ({} B), {} dispatches\n  value: {}",
        b.program,
        b.device,
        b.runs,
        f(&b.wall_us),
        f(&b.compile_us),
        f(&b.pipeline_us),
        f(&b.upload_us),
        f(&b.prepare_us),
        f(&b.run_us),
        f(&b.device_us),
        f(&b.readback_us),
        f(&b.host_us),
        b.first_run_us,
        b.uploads,
        b.upload_bytes,
        b.readbacks,
        b.readback_bytes,
        b.dispatches,
        b.value
    ) + &b
        .kernels
        .iter()
        .map(|(k, us)| format!("\n    {us:>10.1} µs  {k}"))
        .collect::<String>()
}

/// The progress bar of `arrc bench` (indicatif's, with the `cli` feature; nothing
/// without it, so that the library alone does not depend on it).
mod progress {
    #[cfg(feature = "cli")]
    pub struct Bar(indicatif::ProgressBar);

    #[cfg(feature = "cli")]
    impl Bar {
        pub fn new(total: u64) -> Bar {
            let b = indicatif::ProgressBar::new(total);
            b.set_style(
                indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} {msg}")
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
            );
            Bar(b)
        }
        pub fn set_message(&self, m: String) {
            self.0.set_message(m);
        }
        pub fn inc(&self, n: u64) {
            self.0.inc(n);
        }
        pub fn finish_and_clear(&self) {
            self.0.finish_and_clear();
        }
    }

    #[cfg(not(feature = "cli"))]
    pub struct Bar;

    #[cfg(not(feature = "cli"))]
    impl Bar {
        pub fn new(_: u64) -> Bar {
            Bar
        }
        pub fn set_message(&self, _: String) {}
        pub fn inc(&self, _: u64) {}
        pub fn finish_and_clear(&self) {}
    }
}

/// The host's CLOCK_MONOTONIC in nanoseconds (the clock calibrated timestamps map
/// the device's onto).
#[cfg(unix)]
fn monotonic_ns() -> Option<f64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid clock id and a live timespec.
    let r = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    (r == 0).then_some(ts.tv_sec as f64 * 1e9 + ts.tv_nsec as f64)
}

/// (Elsewhere the wait is not split.)
#[cfg(not(unix))]
fn monotonic_ns() -> Option<f64> {
    None
}

/// End-to-end calls of one prepared statement (`sum`'s e2e columns): per call,
/// the submission, the wait, the device's time and the readback, µs; with the host's
/// clock around the wait and the device's timestamps where the recording has them.
struct E2eCalls {
    e2e: Option<f64>,
    parts: [Vec<f64>; 4],
    windows: Vec<(f64, (u64, u64), u64, f64)>,
}

fn e2e_calls(
    g: &mut Gpu,
    compiled: &crate::CompiledStatement,
    prepared: &Prepared,
    runs: usize,
) -> Result<E2eCalls, Error> {
    let mut e2e = Vec::with_capacity(runs);
    let mut parts: [Vec<f64>; 4] = Default::default();
    let mut windows = Vec::with_capacity(runs);
    for _ in 0..runs {
        let device = g.stats.device_ns;
        let t = Instant::now();
        g.launch(prepared)?;
        let t1 = Instant::now();
        let h1 = monotonic_ns();
        g.wait(prepared)?;
        let h2 = monotonic_ns();
        let t2 = Instant::now();
        g.finish(compiled, prepared)?;
        let t3 = Instant::now();
        e2e.push((t3 - t).as_secs_f64() * 1e6);
        parts[0].push((t1 - t).as_secs_f64() * 1e6);
        parts[1].push((t2 - t1).as_secs_f64() * 1e6);
        parts[2].push((g.stats.device_ns - device) as f64 / 1e3);
        parts[3].push((t3 - t2).as_secs_f64() * 1e6);
        if let (Some(h1), Some(w), Some(c), Some(h2)) = (h1, g.last_ticks, g.last_copied, h2) {
            windows.push((h1, w, c, h2));
        }
    }
    Ok(E2eCalls {
        e2e: median(&mut e2e),
        parts,
        windows,
    })
}

impl E2eCalls {
    /// `submit S, wait W (device D: lead L, tail T of which copy C), read R µs;
    /// slowest wait …` (the device's part where timed; the split where `host`
    /// maps its timestamps to the host's clock).
    fn describe(&self, host: Option<impl Fn(u64) -> f64>) -> String {
        let waits = &self.parts[1];
        // The slowest wait's call, split likewise (the slow mode is occasional).
        let slowest = (0..waits.len()).max_by(|&a, &b| waits[a].total_cmp(&waits[b]));
        let [s, w, d, r] = self
            .parts
            .clone()
            .map(|mut v| median(&mut v).unwrap_or(0.0));
        let mut split: [Vec<f64>; 3] = Default::default();
        let mut slow_split = String::new();
        let timed = self.windows.len() == waits.len() && !waits.is_empty();
        if let Some(host) = host.filter(|_| timed) {
            for (k, &(h1, (start, end), copied, h2)) in self.windows.iter().enumerate() {
                let lead = (host(start) - h1) / 1e3;
                let tail = (h2 - host(end)) / 1e3;
                let copy = (host(copied) - host(end)) / 1e3;
                if Some(k) == slowest {
                    slow_split =
                        format!(": lead {lead:.1}, tail {tail:.1} of which copy {copy:.1}");
                }
                split[0].push(lead);
                split[1].push(tail);
                split[2].push(copy);
            }
        }
        let lead_tail = match split.map(|mut v| median(&mut v)) {
            [Some(lead), Some(tail), Some(copy)] => {
                format!(": lead {lead:.1}, tail {tail:.1} of which copy {copy:.1}")
            }
            _ => String::new(),
        };
        let device = if timed {
            format!(" (device {d:.1}{lead_tail})")
        } else {
            String::new()
        };
        let slow = slowest.map_or(String::new(), |k| {
            format!("; slowest wait {:.1}{slow_split}", waits[k])
        });
        format!("submit {s:.1}, wait {w:.1}{device}, read {r:.1} µs{slow}")
    }
}
