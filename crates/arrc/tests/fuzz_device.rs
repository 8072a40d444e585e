//! Random well-formed programs on the device against the CPU reference: the same
//! value (floats within rounding), an APL error on both sides, or NOT YET SUPPORTED —
//! never a different answer. The programs come from a small grammar of the
//! primitives the GPU path compiles: scalar functions, reductions and scans (n-wise
//! too), structural functions, indexing, compress and replicate, products and dfns
//! (with guards, also as operands, and reading outside names).

use arrc::{Array, Backend, Data, ErrorClass, Session};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use std::cell::{Cell, RefCell};

fn atom() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("x".to_string()),
        Just("y".to_string()),
        Just("m".to_string()),
        (0i32..20).prop_map(|n| n.to_string()),
        (1i32..9).prop_map(|n| format!("¯{n}")),
        Just("2.5".to_string()),
        Just("(⍳7)".to_string()),
        Just("(3 1 2)".to_string()),
        Just("(1 0 1 1 0 1 0)".to_string()),
        Just("(⍳0)".to_string()),
        Just("(2 0⍴0)".to_string()),
        Just("(2 3⍴÷⍳6)".to_string()),
    ]
}

fn expr() -> impl Strategy<Value = String> {
    let monadic = [
        "-",
        "|",
        "⌽",
        "⍉",
        "≢",
        "⍴",
        "+/",
        "⌈/",
        "⌊/",
        "×/",
        "+\\",
        "⌈\\",
        "-/",
        "⍋",
        "⍒",
        "⌊",
        "⌈",
        "×",
        ",",
        "↑",
        "⊖",
        "+⌿",
        "-\\",
        "{⍵×2}",
        "{⍺←1 ⋄ ⍺+⍵}",
        "~0=",
        "⍸0<",
        "*",
        "!",
        "○",
        "{+/⍵}¨",
        "⍳",
        "{⍵≤1:⍵ ⋄ 2×⍵}",
        "+/[1]",
        "2-/",
        "{⍺×⍵+1}/",
        "⌽[1]",
        "{⍵>0:⍺+⍵ ⋄ ⍺-⍵}/",
        "{⍵=0:0 ⋄ 1÷⍵}¨",
        "{⍺+⍵×+/x}/",
        "{⍵×⌈/y}¨",
        "1○",
        "(3|x)/",
        "1↑[1]",
    ];
    let dyadic = [
        "+",
        "-",
        "×",
        "÷",
        "⌈",
        "⌊",
        "=",
        "<",
        "≥",
        "≠",
        "|",
        "*",
        "↑",
        "↓",
        "⍴",
        ",",
        "⌽",
        "/",
        "∊",
        "⍳",
        "∧",
        "∨",
        "!",
        "○",
        "⍪",
        "∘.+",
        "+.×",
        "{⍺-⍵}",
        "{⍺+⍵}/",
        "⊖",
        "-/",
        "⌈⌿",
        "⌿",
        "∧.=",
        "{⍺>⍵:⍺ ⋄ ⍵}¨",
        "∘.{⍺<⍵:⍺ ⋄ -⍵}",
    ];
    atom().prop_recursive(4, 24, 3, move |inner| {
        prop_oneof![
            (prop::sample::select(monadic.to_vec()), inner.clone())
                .prop_map(|(f, a)| format!("{f}{a}")),
            (
                inner.clone(),
                prop::sample::select(dyadic.to_vec()),
                inner.clone()
            )
                .prop_map(|(a, f, b)| format!("({a}){f}{b}")),
            inner.clone().prop_map(|a| format!("({a})")),
            // Inner assignments, read after and before (the name persists between
            // programs, on both sides alike).
            inner.clone().prop_map(|a| format!("((q←{a})+q)")),
            inner.clone().prop_map(|a| format!("(q×(q←{a}))")),
            (inner.clone(), 1u8..4).prop_map(|(a, k)| format!("({a})[{k}]")),
        ]
    })
}

fn close(a: &Array, b: &Array) -> bool {
    if a.shape != b.shape || a.len() != b.len() {
        return false;
    }
    let float = a.elem.is_float() || b.elem.is_float();
    (0..a.len()).all(|i| {
        let (x, y) = (a.data.get(i).as_f64(), b.data.get(i).as_f64());
        if float {
            x == y || (x - y).abs() <= 1e-4 * y.abs().max(1.0)
        } else {
            x == y
        }
    })
}

#[test]
fn device_and_reference_agree_on_random_programs() {
    let mut dev = Session::new(Backend::Vulkan)
        .expect("a Vulkan device is required for these tests (install mesa-vulkan-drivers)");
    let mut cpu = Session::new(Backend::Cpu).expect("reference");
    let x = Array::vector(Data::I32(vec![3, -1, 4, 1, -5, 9, 2]));
    let y = Array::vector(Data::F32(vec![0.5, 2.0, -1.5, 3.25, 0.0, 7.0, -2.0]));
    let m = Array::new(vec![2, 3], Data::I32(vec![1, 2, 3, 4, 5, 6]));
    // ARRC_FUZZ_FLOAT=f64 runs the programs with f64 floats (`⎕FR←645`).
    let f64_floats = std::env::var("ARRC_FUZZ_FLOAT").is_ok_and(|v| v == "f64");
    for s in [&mut dev, &mut cpu] {
        s.set("x", x.clone()).unwrap();
        s.set("y", y.clone()).unwrap();
        s.set("m", m.clone()).unwrap();
        if f64_floats {
            s.set_float(arrc::ElemType::F64);
        }
    }
    // ARRC_FUZZ_SEED picks another deterministic sequence, ARRC_FUZZ_CASES a length.
    let seed: u64 = std::env::var("ARRC_FUZZ_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let cases: u32 = std::env::var("ARRC_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300);
    let mut seed_bytes = [0u8; 32];
    seed_bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let algo = proptest::test_runner::RngAlgorithm::ChaCha;
    let mut runner = TestRunner::new_with_rng(
        Config {
            cases,
            failure_persistence: None,
            // Programs share the sessions' state (`q`): a shrunk program would run
            // in another state, so the failure reported is the first one met.
            max_shrink_iters: 0,
            rng_algorithm: algo,
            ..Config::default()
        },
        proptest::test_runner::TestRng::from_seed(algo, &seed_bytes),
    );
    let (dev, cpu) = (RefCell::new(dev), RefCell::new(cpu));
    let (ran, unsupported) = (Cell::new(0), Cell::new(0));
    let result = runner.run(&expr(), |src| {
        let want = cpu.borrow_mut().eval(&src);
        let got = dev.borrow_mut().eval(&src);
        // The compiler's own faults are failures, whatever their class.
        if let Err(e) = &got {
            prop_assert!(!e.message.contains("internal compiler error"), "{src}: {e}");
        }
        match (&want, &got) {
            (_, Err(e)) if e.class == ErrorClass::Unsupported => {
                if std::env::var("ARRC_FUZZ_SHOW").is_ok() {
                    println!("not on the device: {src}: {}", e.message);
                }
                unsupported.set(unsupported.get() + 1);
                // The reference may have assigned `q`; the device did not run it.
                if let Some(q) = cpu.borrow_mut().get("q") {
                    dev.borrow_mut().set("q", q.clone()).unwrap();
                }
            }
            (Ok(w), Ok(g)) => {
                ran.set(ran.get() + 1);
                let (w, g) = (w.value.as_ref().unwrap(), g.value.as_ref().unwrap());
                prop_assert!(
                    close(g, w),
                    "{src}: device {} reference {}",
                    arrc::display(g),
                    arrc::display(w)
                );
            }
            (Err(w), Err(g)) => {
                // Both refuse. The class may differ: the device finds shape and rank
                // errors while compiling, before a data error that APL's right-to-left
                // evaluation would meet first (`((8)○m)[1]`: RANK, not DOMAIN).
                ran.set(ran.get() + 1);
                if w.class != g.class {
                    println!("{src}: reference {w}; device {g}");
                }
                if w.class != g.class || w.span != g.span {
                    // The device met another error than APL's first: the inner
                    // assignments it kept follow its own error's place.
                    if let Some(q) = cpu.borrow_mut().get("q") {
                        dev.borrow_mut().set("q", q.clone()).unwrap();
                    }
                }
            }
            (Ok(w), Err(g)) => prop_assert!(
                false,
                "{src}: device error {g}, reference {}",
                arrc::display(w.value.as_ref().unwrap())
            ),
            (Err(w), Ok(g)) => prop_assert!(
                false,
                "{src}: device {}, reference error {w}",
                arrc::display(g.value.as_ref().unwrap())
            ),
        }
        // Inner assignments leave the same `q` on both sides, an error or not (APL
        // keeps those made before the error).
        let (qd, qc) = (
            dev.borrow_mut().get("q").cloned(),
            cpu.borrow_mut().get("q").cloned(),
        );
        match (&qd, &qc) {
            (Some(d), Some(c)) => prop_assert!(
                close(d, c),
                "{src}: q differs: device {:?} reference {:?}",
                d,
                c
            ),
            _ => prop_assert!(qd.is_none() && qc.is_none(), "{src}: q set on one side"),
        }
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
    let (ran, unsupported) = (ran.get(), unsupported.get());
    println!("{ran} programs compared, {unsupported} not supported on the device");
    assert!(
        ran >= cases as usize / 2,
        "only {ran} of {cases} programs ran on both sides"
    );
}
