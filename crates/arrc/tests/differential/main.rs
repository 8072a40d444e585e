//! Differential tests: every GPU result equals the CPU reference (integers exactly,
//! floats within f32 or f64 rounding) on fresh random inputs at awkward sizes. They run on the
//! real Vulkan device (lavapipe on machines without a GPU) and fail when none exists.
//! The shared helpers are here; the tests are by concern in the modules below.

use arrc::{Array, Backend, Data, ElemType, Session};
use rand::{Rng, SeedableRng};

mod folds;
mod products;
mod programs;
mod scalars;
mod selection;
mod sorting;
mod split;
mod subnormals;

const SIZES: &[usize] = &[
    0, 1, 7, 8, 9, 31, 32, 33, 255, 256, 257, 1000, 4095, 4096, 4097, 1000003,
];

const FOLDS: &[&str] = &[
    "+/x",
    "⌈/x",
    "⌊/x",
    "+\\x",
    "⌈\\x",
    "⌊\\x",
    "+/x×y",
    "+/(x-y)×(x-y)",
    "+\\2×x-1",
    "+/x>0",
    "∧/x>¯1000",
    "∨\\x>50",
    "+\\x≤y",
    // Booleans folded with ⌈ ⌊: the identities must be booleans too.
    "⌈/x=0",
    "⌈\\x=0",
    "⌊/x>¯1000",
    "⌊\\x<50",
];

const MAPS: &[&str] = &[
    "-x",
    "x+y",
    "x-y",
    "x×y",
    "x⌈y",
    "x⌊y",
    "2×x+1",
    "¯3-x",
    "1.5×x",
    "x÷y",
    "x<y",
    "x=y",
    "x≥0",
    "(x>0)∧y>0",
    "|x",
    "×x",
    "~x>0",
    "+/|x",
    // Sign tests of values widened to i64 (lavapipe once got these wrong).
    "(x+0)<0",
    "0>x×1",
    "7|x+0",
];

fn gpu() -> Session {
    Session::new(Backend::Vulkan)
        .expect("a Vulkan device is required for these tests (install mesa-vulkan-drivers)")
}

/// `expr`'s value, computed on the device with no step left to the CPU.
fn device_value(s: &mut Session, expr: &str) -> Array {
    let o = s.eval(expr).unwrap_or_else(|e| panic!("{expr}: {e}"));
    assert!(o.notes.is_empty(), "{expr} left the device: {:?}", o.notes);
    o.value.unwrap_or_else(|| panic!("{expr}: no value"))
}

fn random(rng: &mut impl Rng, ty: ElemType, n: usize, nonzero: bool) -> Array {
    let data = match ty {
        ElemType::Char => Data::Char((0..n).map(|_| rng.random_range('a'..='z')).collect()),
        ElemType::Mixed => unreachable!("the differential tests draw simple arrays"),
        ElemType::Bool => Data::Bool((0..n).map(|_| nonzero || rng.random_bool(0.5)).collect()),
        ElemType::I32 => Data::I32(
            (0..n)
                .map(|_| {
                    let v = rng.random_range(-1000..=1000);
                    if nonzero && v == 0 {
                        1
                    } else {
                        v
                    }
                })
                .collect(),
        ),
        ElemType::I64 => Data::I64(
            (0..n)
                .map(|_| rng.random_range(-1_000_000i64..=1_000_000))
                .collect(),
        ),
        ElemType::F32 => Data::F32(
            (0..n)
                .map(|_| {
                    let v: f32 = rng.random_range(-100.0..100.0);
                    if nonzero && v.abs() < 1e-3 {
                        1.0
                    } else {
                        v
                    }
                })
                .collect(),
        ),
        ElemType::F64 => Data::F64(
            (0..n)
                .map(|_| {
                    let v: f64 = rng.random_range(-100.0..100.0);
                    if nonzero && v.abs() < 1e-3 {
                        1.0
                    } else {
                        v
                    }
                })
                .collect(),
        ),
    };
    Array::vector(data)
}

/// Compares a GPU result with the reference. `scale` is the sum of magnitudes that a
/// float result accumulated (1 for elementwise results).
fn assert_close(expr: &str, n: usize, gpu: &Array, cpu: &Array, scale: f64) {
    assert_eq!(gpu.shape, cpu.shape, "{expr} n={n}: shape");
    assert_eq!(gpu.elem, cpu.elem, "{expr} n={n}: type");
    match (&gpu.data, &cpu.data) {
        (Data::F32(g), Data::F32(c)) => {
            for (i, (a, b)) in g.iter().zip(c).enumerate() {
                let tol = 1e-5 * scale.max(b.abs() as f64) + 1e-6;
                assert!(
                    ((*a as f64) - (*b as f64)).abs() <= tol,
                    "{expr} n={n}: element {i}: gpu {a} cpu {b} (tolerance {tol})"
                );
            }
        }
        (Data::F64(g), Data::F64(c)) => {
            for (i, (a, b)) in g.iter().zip(c).enumerate() {
                let tol = 1e-13 * scale.max(b.abs()) + 1e-15;
                assert!(
                    (a - b).abs() <= tol,
                    "{expr} n={n}: element {i}: gpu {a} cpu {b} (tolerance {tol})"
                );
            }
        }
        (g, c) => assert_eq!(g, c, "{expr} n={n}"),
    }
}

/// A session and a reference environment whose floats are those of `ty` (f64 for
/// f64 data, f32 otherwise).
fn float_of(ty: ElemType) -> ElemType {
    ty.join(ElemType::F32)
}

fn sum_abs(a: &Array) -> f64 {
    (0..a.len()).map(|i| a.data.get(i).as_f64().abs()).sum()
}

/// Gives `s` the arrays and the floats of `ty`, and a reference environment the same.
fn bind_both(s: &mut Session, ty: ElemType, arrays: &[(&str, &Array)]) -> arrc_ref::Env {
    s.set_float(float_of(ty));
    let mut cpu = arrc_ref::Env {
        float: float_of(ty),
        ..Default::default()
    };
    for &(name, a) in arrays {
        s.set(name, a.clone()).unwrap();
        cpu.arrays.insert(name.into(), a.clone());
    }
    cpu
}

fn check(s: &mut Session, exprs: &[&str], ty: ElemType, nonzero_y: bool) {
    check_at(s, SIZES, exprs, ty, nonzero_y)
}

fn check_at(s: &mut Session, sizes: &[usize], exprs: &[&str], ty: ElemType, nonzero_y: bool) {
    let mut rng = rand::rngs::StdRng::seed_from_u64(0x5eed ^ ty as u64);
    for &n in sizes {
        let x = random(&mut rng, ty, n, false);
        let y = random(&mut rng, ty, n, nonzero_y);
        let mut cpu = bind_both(s, ty, &[("x", &x), ("y", &y)]);
        for expr in exprs {
            if std::env::var("ARRC_TRACE").is_ok() {
                eprintln!("{expr} n={n} {ty}");
            }
            let g = s
                .eval(expr)
                .unwrap_or_else(|e| panic!("{expr} n={n} on the GPU: {e}"));
            assert!(
                g.notes.is_empty(),
                "{expr} did not run on the GPU: {:?}",
                g.notes
            );
            let g = g.value.expect("a value");
            let prog = arrc_syntax::parse_str(expr).expect("parses");
            let c = arrc_ref::eval_program(&prog, &mut cpu)
                .expect("cpu")
                .expect("a value");
            // Folds accumulate rounding over their inputs; elementwise results are
            // compared relative to themselves.
            let folds = expr.contains(['/', '\\', '.']);
            let scale = if folds {
                (sum_abs(&x) + sum_abs(&y)) * 4.0 + 1.0
            } else {
                1.0
            };
            assert_close(expr, n, &g, &c, scale);
        }
    }
}

/// A random matrix (or higher-rank array) of this shape.
fn random_shaped(rng: &mut impl Rng, ty: ElemType, shape: &[usize]) -> Array {
    let n = shape.iter().product();
    let v = random(rng, ty, n, false);
    Array::new(shape.to_vec(), v.data)
}

fn check_shaped(s: &mut Session, shape: &[usize], ty: ElemType, exprs: &[&str]) {
    let mut rng = rand::rngs::StdRng::seed_from_u64(0xa715 ^ shape.iter().sum::<usize>() as u64);
    let m = random_shaped(&mut rng, ty, shape);
    let mut cpu = bind_both(s, ty, &[("m", &m)]);
    let n = m.len();
    for expr in exprs {
        let g = s
            .eval(expr)
            .unwrap_or_else(|e| panic!("{expr} shape {shape:?} on the GPU: {e}"));
        assert!(
            g.notes.is_empty(),
            "{expr} did not run on the GPU: {:?}",
            g.notes
        );
        let g = g.value.expect("a value");
        let prog = arrc_syntax::parse_str(expr).expect("parses");
        let c = arrc_ref::eval_program(&prog, &mut cpu)
            .expect("cpu")
            .expect("a value");
        let scale = sum_abs(&m) * 4.0 + 1.0;
        assert_close(&format!("{expr} {shape:?}"), n, &g, &c, scale);
    }
}

/// Compares one statement of `s` with the reference: the same value (floats within
/// rounding of the magnitudes folded) or an error of the same class.
fn agree(s: &mut Session, cpu: &mut arrc_ref::Env, expr: &str, n: usize, scale: f64) {
    let g = s.eval(expr);
    let prog = arrc_syntax::parse_str(expr).expect("parses");
    let c = arrc_ref::eval_program(&prog, cpu);
    match (g, c) {
        (Ok(g), Ok(c)) => {
            assert!(g.notes.is_empty(), "{expr} n={n}: {:?}", g.notes);
            let (g, c) = (g.value.expect("a value"), c.expect("a value"));
            assert_close(expr, n, &g, &c, scale);
        }
        (Err(g), Err(c)) => assert_eq!(g.class, c.class, "{expr} n={n}: {g} / {c}"),
        (g, c) => panic!(
            "{expr} n={n}: device {:?} reference {:?}",
            g.map(|o| o.value),
            c
        ),
    }
}
