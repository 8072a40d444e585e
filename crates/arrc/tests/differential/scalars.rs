//! Scalar functions: maps of every type, their domains and errors, f64 on request,
//! floats near their limits, and the reference's random numbers.

use super::*;

#[test]
fn maps_f32() {
    check(&mut gpu(), MAPS, ElemType::F32, true);
}

#[test]
fn folds_and_maps_f64() {
    // f64 on request (`⎕FR←645`): the same kernels in double precision.
    let mut s = gpu();
    check(&mut s, FOLDS, ElemType::F64, false);
    check(&mut s, MAPS, ElemType::F64, true);
    check_shaped(
        &mut s,
        &[33, 1000],
        ElemType::F64,
        &["+/m", "+⌿m", "⌈\\m", "+⍀m"],
    );
    // exp and log are arrc's own in f64 (GLSL.std.450 has them for f32 only).
    check_at(
        &mut s,
        &[1, 33, 4097],
        &[
            "*x÷10",
            "⍟1+|x",
            "(1+|x)*0.5",
            "2*x÷10",
            "2⍟1+|x",
            "x*3",
            "(|x)*¯1.5",
            "*⍟1+|x",
            // The circle functions too (x is within ±100).
            "1○x",
            "2○x",
            "3○x÷7",
            // Beyond 1.5e6 radians: the integer reduction by 2/π's bits.
            "1○x×1e10",
            "2○x×1e300",
            "3○x×3e7",
            "0○x÷100",
            "4○x",
            "5○x÷10",
            "6○x÷10",
            "7○x÷10",
            "¯1○x÷100",
            "¯2○x÷100",
            "¯3○x",
            "¯4○1+|x",
            "¯5○x",
            "¯6○1+|x",
            "¯7○x÷101",
            "(1+7|⌊x)○x÷100",
            // ! and binomials of integers: exact products.
            "!⌊|x÷5",
            "(⌊|x÷10)!⌊|x",
            "¯2!⌊x",
        ],
        ElemType::F64,
        false,
    );
    // Γ of other numbers: the device and the reference evaluate the same Lanczos sum
    // (each within about 1e-14 of Γ) in different orders, so they are compared to
    // 1e-12; near the poles at negative integers (sin πz ≈ 0) neither is that close,
    // so arguments stay away from them.
    let mut rng = rand::rngs::StdRng::seed_from_u64(0x9a);
    let x = random(&mut rng, ElemType::F64, 4097, false);
    s.set("x", x.clone()).unwrap();
    let mut cpu = arrc_ref::Env {
        float: ElemType::F64,
        ..Default::default()
    };
    cpu.arrays.insert("x".into(), x);
    for expr in ["!|x÷30", "(|x÷10)!|x", "!¯0.5+⌊x÷10"] {
        let g = s.eval(expr).expect("device").value.expect("a value");
        let prog = arrc_syntax::parse_str(expr).expect("parses");
        let c = arrc_ref::eval_program(&prog, &mut cpu)
            .expect("cpu")
            .expect("a value");
        for i in 0..c.len() {
            let (a, b) = (g.data.get(i).as_f64(), c.data.get(i).as_f64());
            assert!(
                (a - b).abs() <= 1e-12 * b.abs(),
                "{expr}: element {i}: gpu {a} cpu {b}"
            );
        }
    }
}

#[test]
fn maps_i32() {
    check(&mut gpu(), MAPS, ElemType::I32, true);
}

#[test]
fn products_of_small_numbers() {
    let mut s = gpu();
    for &n in &[1usize, 7, 33, 257] {
        let x = Array::vector(Data::I32(
            (0..n).map(|i| if i % 5 == 0 { -1 } else { 1 }).collect(),
        ));
        s.set("x", x.clone()).unwrap();
        let mut cpu = arrc_ref::Env::default();
        cpu.arrays.insert("x".into(), x);
        for expr in ["×/x", "×\\x", "×/x×2÷2"] {
            let g = s.eval(expr).unwrap().value.unwrap();
            let c = arrc_ref::eval_program(&arrc_syntax::parse_str(expr).unwrap(), &mut cpu)
                .unwrap()
                .unwrap();
            assert_close(expr, n, &g, &c, 1.0);
        }
    }
}

#[test]
fn device_errors_carry_spans() {
    let mut s = gpu();
    s.set("x", Array::vector(Data::F32(vec![1.0, 0.0, 2.0])))
        .unwrap();
    let e = s.eval("1+2÷x").unwrap_err();
    assert_eq!(e.class, arrc::ErrorClass::Domain);
    assert_eq!(e.span, 3..5);
    // 0÷0 is 1, as in Dyalog.
    let r = s.eval("0÷x×0").unwrap().value.unwrap();
    assert_eq!(r.data, Data::F32(vec![1.0, 1.0, 1.0]));
}

/// Every scalar function on the device, on arguments inside its domain.
#[test]
fn scalar_functions() {
    let mut s = gpu();
    const BOTH: &[&str] = &[
        "*x÷1000",
        "⍟1+|x",
        "○x",
        "÷y",
        "⌈x÷7",
        "⌊x÷7",
        "7|x",
        "¯7|x",
        "y|x",
        "(|x)*0.5",
        "2*x÷1000",
        "x*2",
        "(x÷500)*3",
        "2⍟1+|x",
        "0 1 2 3 4 5 6 7∘.○x÷2000",
        "¯1 ¯2 ¯3 ¯5 ¯7∘.○x÷2000",
        "1○x",
        "2○x",
        "3○x÷700",
        "¯4○1+|x",
        "¯6○1+|x",
        "!|x÷200",
        "!⌊|x÷200",
        "(x>0)⍲y>0",
        "(x>0)⍱y>0",
        "~x>0",
        "+/1○x",
        "⌈/⍟1+|x",
        "(⌊x÷300)!⌊y÷100",
        "(|x÷1000)!|y÷250",
        "(⌊|x÷100)!⌊|y÷50",
    ];
    const INTS: &[&str] = &["x∧y", "x∨y", "12∧x", "~x>0", "(x>0)∧1", "+/x∨6"];
    // ∧ ∨ of floats with integral values, in the floats' type. `∨/` of floats is a
    // right fold, one loop in one invocation: at most 60000 items here, since lavapipe
    // stops longer loops (`long_serial_folds_are_right_on_every_device`).
    const INTEGRAL: &[&str] = &["(x÷1)∧y", "(x÷1)∨y", "∨/¯60000↑x÷1", "12.0∧x"];
    // Elementwise code has no size-dependent paths beyond the grid loop's bounds.
    let sizes = &[0, 1, 33, 4097, 70001];
    check_at(&mut s, sizes, BOTH, ElemType::F32, true);
    check_at(&mut s, sizes, BOTH, ElemType::I32, true);
    check_at(&mut s, sizes, INTS, ElemType::I32, true);
    check_at(&mut s, sizes, INTEGRAL, ElemType::I32, true);
}

/// DOMAIN ERRORs raised by the device carry the span of the function that raised them.
#[test]
fn device_domain_errors() {
    let mut s = gpu();
    s.set("x", Array::vector(Data::F32(vec![1.0, 0.0, 2.0])))
        .unwrap();
    s.set("i", Array::vector(Data::I32(vec![0, 1, 2]))).unwrap();
    s.set("b", Array::vector(Data::I64(vec![i64::MAX, 1, 2])))
        .unwrap();
    for (expr, span) in [
        ("1+⍟x", 2..5),
        ("÷x", 0..2),
        ("1+¯1*x÷3", 4..5),
        ("~i", 0..2),
        ("b+1", 1..2),
        ("b×2", 1..2),
        ("x×1e38×1e10", 1..2),
        ("-/x÷0", 3..4),
        ("x∨1.5", 1..2),
        ("x*¯1.5", 1..2),
        // A failing scalar extended over an empty result is still computed.
        ("(0↑x)+÷0", 5..6),
        // Values only counted or reshaped are still computed when they can fail.
        ("≢÷x", 1..2),
        ("⍴⍉3 1⍴÷x", 7..8),
        ("≢+\\÷x", 3..4),
        ("0×≢(x=0)/÷x", 10..11),
        // … and so are values indexed or taken from: every element, not those read.
        ("(÷x)[1]", 1..2),
        ("1↑÷x", 2..3),
        ("((÷x),0)[1]", 2..3),
        ("2⍴÷x", 2..3),
        // atanh at its poles is ±∞ (`¯7○1` was 354.89 on the device: the logarithm
        // of +∞ came out as that of the largest f64; fuzzer seed 103 index 1808).
        ("¯7○1+0×x", 2..5),
        ("¯7○¯1+0×x", 2..5),
    ] {
        let e = s.eval(expr).expect_err(expr);
        assert_eq!(e.class, arrc::ErrorClass::Domain, "{expr}: {e}");
        assert!(
            e.span.start >= span.start && e.span.end <= span.end + 8,
            "{expr}: span {:?}",
            e.span
        );
    }
}

#[test]
fn f64_on_request() {
    // `⎕FR←645` switches the session to f64, as Dyalog computes; the device then
    // compares within ⎕CT and floors tolerantly, as the reference does.
    let mut s = gpu();
    s.eval("⎕FR←645").expect("⎕FR←645");
    assert_eq!(s.float(), ElemType::F64);
    for (expr, shown) in [
        ("÷3", "0.3333333333"),
        ("(0.1+0.2)=0.3", "1"),
        ("(0.1+0.2)-0.3", "5.551115123E¯17"),
        ("⌊0.1×30", "3"),
        ("⌈¯0.1×30", "¯3"),
        ("+/÷⍳100", "5.187377518"),
        ("⌈/⍬", "¯1.797693135E308"),
        ("2×1E300", "2E300"),
        ("⎕FR", "645"),
    ] {
        let o = s.eval(expr).unwrap_or_else(|e| panic!("{expr}: {e}"));
        if expr != "⎕FR" {
            assert!(o.notes.is_empty(), "{expr} left the device: {:?}", o.notes);
        }
        assert_eq!(arrc::display(&o.value.expect("a value")), shown, "{expr}");
    }
    let e = s.eval("1E300×1E10").expect_err("beyond f64");
    assert_eq!(e.message, "the result is not a finite f64 number");
    // Back to f32.
    s.eval("⎕FR←32").expect("⎕FR←32");
    let o = s.eval("÷3").expect("÷3");
    assert_eq!(o.value.expect("a value").elem, ElemType::F32);
    assert!(s.eval("⎕FR←1287").is_err(), "decimal floats are refused");
}

#[test]
fn f64_needs_shader_float64() {
    // On a device without shaderFloat64 an f64 program is refused with a way out.
    let opts = arrc_ir::plan::PlanOptions {
        float64: false,
        ..Default::default()
    };
    let what = arrc::build::BuildOptions::default();
    let omega = arrc::build::parse_arg_type("f64", 0).expect("type");
    let e = arrc::build::build("{+/⍵}", omega, None, ElemType::F64, &opts, &what)
        .err()
        .expect("refused");
    assert_eq!(e.class, arrc::ErrorClass::Unsupported);
    assert!(e.message.contains("shaderFloat64"), "{}", e.message);
    let omega = arrc::build::parse_arg_type("f32", 0).expect("type");
    assert!(arrc::build::build("{+/⍵}", omega, None, ElemType::F32, &opts, &what).is_ok());
}

#[test]
fn exact_binomials() {
    // Integral `⍺!⍵` is exact while it fits i64 (an f32 product drifted: 13!26 gave
    // 10400601), then correctly rounded to f32 like the reference's.
    let mut s = gpu();
    let o = s
        .eval("a←13 12 20 ⋄ b←26 28 40 ⋄ a!b")
        .expect("binomials")
        .value
        .expect("a value");
    assert_eq!(arrc::display(&o), "10400600 30421756 1.3784652E11");
}

#[test]
fn binomials_beyond_f32_factorials() {
    // Γ(121) is beyond f32 while 2.5!120 is not: the device computes the Γ quotient
    // in f64 where it has it, as the reference does.
    let mut s = gpu();
    s.set("x", Array::vector(Data::I32(vec![6, 120, 40])))
        .unwrap();
    let mut cpu = arrc_ref::Env::default();
    cpu.arrays
        .insert("x".into(), Array::vector(Data::I32(vec![6, 120, 40])));
    for expr in ["2.5!x", "0.5!x+0", "(x÷8)!x"] {
        let prog = arrc_syntax::parse_str(expr).unwrap();
        let want = arrc_ref::eval_program(&prog, &mut cpu).unwrap().unwrap();
        let got = s.eval(expr).unwrap_or_else(|e| panic!("{expr}: {e}"));
        assert_close(expr, 3, &got.value.expect("a value"), &want, 1.0);
    }
}

#[test]
fn f32_functions_match_the_reference() {
    // f32 sin, cos and tan are arrc's own: the argument reduced by 2/π's bits from
    // π/4 on (up to 1e32 here; tan next to its poles too).
    let mut s = gpu();
    check_at(
        &mut s,
        &[1, 33, 4097],
        &[
            "1○x×600",
            "2○x×597",
            "1○x×60",
            "1○x×1e6",
            "2○x×1e6",
            "3○x×655.36",
            "1○x×1e30",
            "2○x×3e29",
        ],
        ElemType::F32,
        false,
    );
    // asin, acos, atan: the devices' may err by 1e-4 (lavapipe's do); arrc's f64 ones
    // rounded to f32 match the reference.
    check_at(
        &mut s,
        &[1, 33, 4097],
        &["¯1○x÷100", "¯2○x÷100", "¯3○x", "¯3○x÷10", "(÷1+|⌊x÷10)|x"],
        ElemType::F32,
        false,
    );
}

#[test]
fn comparison_tolerance_is_the_sessions_on_the_device() {
    // `⎕CT←v` reaches the device's f64 comparisons, floors and searches: the same
    // answers as the reference for each tolerance, and different answers for
    // different tolerances (so a kernel keeping the default would fail here).
    let mut s = gpu();
    s.set_float(ElemType::F64);
    let x = Array::vector(Data::F64(vec![
        0.1 + 0.2,
        2.9999999999999996,
        1.0 + 1e-11,
        5.0,
    ]));
    s.set("x", x.clone()).unwrap();
    let exprs = [
        "x=0.3 3 1 5",
        "⌊x",
        "⌈x",
        "x∊0.3 3 1",
        "0.3 3 1⍳x",
        "x≤0.3 3 1 5",
    ];
    let mut seen: Vec<Vec<String>> = vec![];
    for ct in ["0", "1E¯14", "1E¯10"] {
        s.eval(&format!("⎕CT←{ct}")).unwrap();
        let mut cpu = arrc_ref::Env {
            float: ElemType::F64,
            ..Default::default()
        };
        cpu.arrays.insert("x".into(), x.clone());
        let set = arrc_syntax::parse_str(&format!("⎕CT←{ct}")).unwrap();
        arrc_ref::eval_program(&set, &mut cpu).unwrap();
        let mut shown = vec![];
        for e in exprs {
            let g = s
                .eval(e)
                .unwrap_or_else(|err| panic!("{e} ⎕CT={ct}: {err}"));
            assert!(
                g.notes.is_empty(),
                "{e} did not run on the GPU: {:?}",
                g.notes
            );
            let g = g.value.expect("a value");
            let c = arrc_ref::eval_program(&arrc_syntax::parse_str(e).unwrap(), &mut cpu)
                .unwrap()
                .expect("a value");
            assert_eq!(arrc::display(&g), arrc::display(&c), "{e} with ⎕CT={ct}");
            shown.push(arrc::display(&g));
        }
        seen.push(shown);
    }
    assert_ne!(
        seen[0], seen[1],
        "⎕CT←0 and the default gave the same answers"
    );
    assert_ne!(
        seen[1], seen[2],
        "⎕CT←1E¯10 and the default gave the same answers"
    );
    s.eval("⎕CT←1E¯14").unwrap();
}

#[test]
fn f64_quotients_near_the_largest_value() {
    // Fuzzer finding (seed 96 index 1225, f64): lavapipe does not fuse the division's
    // refinement, whose q·b then left the range near the largest f64: `(⌊/⍬)÷3` gave
    // ¯∞ (and NaN after a second division). The dividend is now scaled down first.
    let mut s = gpu();
    s.set_float(ElemType::F64);
    for (expr, want) in [
        ("x←2⍴⌊/⍬ ⋄ x÷3", "5.99231045E307 5.99231045E307"),
        ("x←2⍴⌊/⍬ ⋄ x÷¯7", "¯2.56813305E307 ¯2.56813305E307"),
        (
            "x←2⍴⌊/⍬ ⋄ ((3∘×)⍣2)⍣¯1⊢x",
            "1.997436817E307 1.997436817E307",
        ),
        ("x←2⍴⌊/⍬ ⋄ x÷x", "1 1"),
    ] {
        assert_eq!(arrc::display(&device_value(&mut s, expr)), want, "{expr}");
    }
    let e = s.eval("x←2⍴⌊/⍬ ⋄ x÷0.5").unwrap_err();
    assert_eq!(e.class, arrc::ErrorClass::Domain, "{e}");
}

#[test]
fn integer_products_by_two_to_the_31() {
    // Fuzzer finding (seed 96 index 1090, on the H100): NVIDIA's driver multiplied a
    // 64-bit integer by the constant 2^31 as if it were ¯2^31 (`s←,6 ⋄ s×2147483648`
    // gave ¯12884901888); the constant now reaches the product unfoldable.
    let mut s = gpu();
    let exprs = [
        "x×2147483648",
        "2147483648×x",
        "+/x×2147483648",
        "(⍳≢x)+.×2147483648",
        "x×¯2147483648",
    ];
    check_at(&mut s, &[1, 65, 4097], &exprs, ElemType::I32, false);
}

#[test]
fn roll_draws_the_references_numbers_on_the_device() {
    // `?` on the device computes Philox4x32-10 of the draw's number under ⎕RL's seed:
    // the same numbers as the reference, for integers and floats, every size (0, 1,
    // subgroups ± 1, workgroups ± 1, 2^20), ⎕IO 0 and 1, f32 and f64, several rolls in
    // one statement and statements in a row; the counter moves on by each draw.
    for float in [ElemType::F32, ElemType::F64] {
        let mut s = gpu();
        s.set_float(float);
        let mut cpu = arrc_ref::Env {
            float,
            ..Default::default()
        };
        let programs = [
            "⎕RL←42",
            "?6",
            "?0",
            "?0⍴6",
            "?7⍴1000",
            "?9⍴2147483647",
            "?33⍴0",
            "?255⍴6",
            "?257 3⍴6 0 9",
            "(?4097⍴10)-?4097⍴10",
            "+/?1048576⍴100",
            "⌈/?1048576⍴0",
            "⎕IO←0",
            "?10⍴3",
            "⎕IO←1",
            "x←?100⍴6",
            "x+?100⍴6",
            "⎕RL←7",
            "?5⍴1E9",
            // Items computed on the device, checked there.
            "x←1+⍳100",
            "?x×3",
            "?(⍳1000)+5",
            "(?x+1),?x",
            "?x-1",
            // Deal of at least a 64th of the items, or from at most 4096: the grade
            // of a roll of keys, on the device (few items from many, a partial
            // shuffle, run on the reference: NOT YET SUPPORTED under `--backend
            // vulkan`).
            "1?1",
            "5?5",
            "4?7",
            "8?8",
            "9?9",
            "255?255",
            "129?257",
            "4097?4097",
            "x←100000?100000",
            "(+/x),(∧/x∊⍳100000),¯5↑x",
            "⎕IO←0",
            "33?33",
            "⎕IO←1",
            "(?6),3?6",
            "3?100",
            "0?5",
            "100?5000",
        ];
        for p in programs {
            let g = s.eval(p).unwrap_or_else(|e| panic!("{p}: {e}"));
            // (`?x-1` draws a float for its 0: the reference computes it.)
            if !p.starts_with('⎕') && p != "?x-1" {
                assert!(
                    g.notes.is_empty(),
                    "{p} did not run on the GPU: {:?}",
                    g.notes
                );
            }
            let prog = arrc_syntax::parse_str(p).unwrap();
            let c = arrc_ref::eval_program(&prog, &mut cpu).expect("cpu");
            if p.contains('←') {
                continue;
            }
            assert_eq!(
                g.value.map(|v| arrc::display(&v)),
                c.map(|v| arrc::display(&v)),
                "{p} in {float}"
            );
        }
        // Such a deal is the first items of the grade of `?n⍴DEAL_KEYS`.
        let same = s
            .eval("⎕RL←5 ⋄ a←7?10 ⋄ ⎕RL←5 ⋄ a≡7↑⍋?10⍴2147483647")
            .unwrap()
            .value
            .map(|v| arrc::display(&v));
        assert_eq!(same.as_deref(), Some("1"));
        // The draws of one statement differ from the next's.
        let a = device_value(&mut s, "?100⍴1000000");
        let b = device_value(&mut s, "?100⍴1000000");
        assert_ne!(a, b);
    }
}

/// Each element of `got` within `ulps` units in the last place of `want`'s (f64).
fn within_ulps(what: &str, got: &Array, want: &Array, ulps: f64) {
    assert_eq!(got.shape, want.shape, "{what}");
    for i in 0..want.len() {
        let (g, w) = (got.data.get(i).as_f64(), want.data.get(i).as_f64());
        let ulp = if w == 0.0 {
            f64::MIN_POSITIVE
        } else {
            let b = w.abs().to_bits();
            f64::from_bits(b + 1) - f64::from_bits(b)
        };
        assert!(
            g == w || (g - w).abs() <= ulps * ulp,
            "{what}[{i}]: device {g:e}, reference {w:e} ({:.1} ulps)",
            (g - w).abs() / ulp
        );
    }
}

#[test]
fn f64_powers_exponentials_and_logarithms_to_about_an_ulp() {
    // Fuzzer finding (seed 194 index 3538, f64): `a*b` was e^(b·ln a) from one f64
    // logarithm, erring by as many ulps as b·ln a is large (`1.001*1000` by 120,
    // `7.5*300.5` by 300), and integral powers by repeated squaring by up to one
    // ulp a square (`1.1*400` by 24); a residue of such sums showed it. And lavapipe
    // rewrote e^x's reduction, whose two parts of ln 2 must stay apart (`*700` erred
    // by 22 ulps). Now ln a is a double-double, b·ln a too (Dekker's product:
    // Vulkan's `Fma` need not be fused, and lavapipe's is not), integral powers are
    // squared only where exact, and every step of the reduction stays as written.
    let mut s = gpu();
    s.set_float(ElemType::F64);
    let mut cpu = arrc_ref::Env {
        float: ElemType::F64,
        ..Default::default()
    };
    let mut both = |s: &mut Session, expr: &str, ulps: f64| {
        let got = device_value(s, expr);
        let prog = arrc_syntax::parse_str(expr).unwrap();
        let want = arrc_ref::eval_program(&prog, &mut cpu)
            .unwrap_or_else(|e| panic!("{expr}: {e}"))
            .expect("a value");
        within_ulps(expr, &got, &want, ulps);
    };
    let cases = "x←1.001 66 7.5 1.1 10 0.5 3 2 1.0000001 123.456 0.999 ⋄ \
                 y←1000 4.625 300.5 400 ¯300 1020.5 33 ¯1020 1E9 ¯140.25 ¯700000";
    both(&mut s, &format!("{cases} ⋄ x*y"), 2.0);
    both(&mut s, &format!("{cases} ⋄ (÷x)*y"), 2.0);
    // Random bases and exponents, the results within f64's normal range.
    let mut rng = rand::rngs::StdRng::seed_from_u64(0xf64);
    let n = 4097;
    let bases: Vec<f64> = (0..n).map(|_| rng.random_range(0.01..50.0)).collect();
    let exps: Vec<f64> = bases
        .iter()
        .map(|b: &f64| {
            let most = 700.0 / b.ln().abs().max(1e-3);
            rng.random_range(-most..most)
        })
        .collect();
    let mut cpu2 = bind_both(
        &mut s,
        ElemType::F64,
        &[
            ("a", &Array::vector(Data::F64(bases))),
            ("b", &Array::vector(Data::F64(exps))),
        ],
    );
    for (expr, ulps) in [("a*b", 2.0), ("a*⌊b", 2.0), ("*b÷1000", 2.0), ("⍟a", 2.0)] {
        let got = device_value(&mut s, expr);
        let prog = arrc_syntax::parse_str(expr).unwrap();
        let want = arrc_ref::eval_program(&prog, &mut cpu2)
            .unwrap_or_else(|e| panic!("{expr}: {e}"))
            .expect("a value");
        within_ulps(expr, &got, &want, ulps);
    }
    both(
        &mut s,
        "x←1 ¯1 0.5 ¯690.7755278982137 ¯100 100 700 ¯700 ⋄ *x",
        2.0,
    );
    both(&mut s, "x←10 66 1.001 7.5 0.5 1E300 1E¯300 ⋄ ⍟x", 2.0);
}

#[test]
fn f64_quotients_are_correctly_rounded() {
    // IEEE's `a÷b`, to the last bit, on any device. The refinement's residual
    // a - q·b was an unfused multiply-add on lavapipe, so 1653.6666666666667÷3 came
    // out an ulp low (found by the fuzzer: a residue scan made it a wrong cell).
    let mut s = gpu();
    s.eval("⎕FR←645").expect("⎕FR←645");
    let mut rng = rand::rngs::StdRng::seed_from_u64(19);
    let mut a = vec![
        1_653.666_666_666_666_7,
        1.0,
        301.0,
        1e300,
        3e-300,
        7.0,
        f64::MAX,
        1.771_792_344_394_268e161,
    ];
    let mut b = vec![
        3.0,
        3.0,
        7.0,
        3e-8,
        7.0,
        1e-300,
        3.0,
        4.785_830_684_052_921e-139,
    ];
    for _ in 0..4093 {
        let m = |rng: &mut rand::rngs::StdRng| {
            let e: i32 = rng.random_range(-60..60);
            let s = if rng.random_bool(0.5) { -1.0 } else { 1.0 };
            s * rng.random_range(1.0..2.0f64) * 2f64.powi(e)
        };
        a.push(m(&mut rng));
        // Small integral divisors too: their quotients sit nearest to halfway.
        b.push(if rng.random_bool(0.3) {
            f64::from(rng.random_range(1..100u8))
        } else {
            m(&mut rng)
        });
    }
    // Near the ends of the range, where the residual's exact product would
    // overflow or lose bits below the subnormals: operands past 2^900 and below
    // 2^-900, quotients too, subnormal ones among them (each finite; a quotient
    // of 2^994 erred by an ulp before such quotients were scaled).
    for _ in 0..8192 {
        let (ea, eb) = loop {
            let ea: i32 = rng.random_range(-1070..1023);
            let eb: i32 = rng.random_range(-1070..1023);
            if (-1060..1020).contains(&(ea - eb)) && (ea.abs() > 900 || eb.abs() > 900) {
                break (ea, eb);
            }
        };
        let m = |rng: &mut rand::rngs::StdRng, e: i32| {
            let s = if rng.random_bool(0.5) { -1.0 } else { 1.0 };
            // 2^e in two steps (2^-1070 is below f64's normal range).
            s * rng.random_range(1.0..2.0f64) * 2f64.powi(e / 2) * 2f64.powi(e - e / 2)
        };
        a.push(m(&mut rng, ea));
        b.push(m(&mut rng, eb));
    }
    // Quotients about the smallest normal value and below it: the refinement's
    // step was itself subnormal there (2^-1021 rounded to a tie), and a subnormal
    // quotient rounds twice; exact ties of the subnormals too (3·2^-1074 ÷ 2).
    let tiny = f64::from_bits(1);
    a.extend([3.0 * tiny, 5.0 * tiny, 3.0 * tiny, -7.0 * tiny, 0.0, -0.0]);
    b.extend([2.0, 2.0, -2.0, 4.0, 3.0, 5.0]);
    for _ in 0..8192 {
        let eq: i32 = rng.random_range(-1080..-1010);
        let eb: i32 = rng.random_range(-60..900);
        let s = if rng.random_bool(0.5) { -1.0 } else { 1.0 };
        let bv = rng.random_range(1.0..2.0f64) * 2f64.powi(eb);
        let av =
            s * rng.random_range(1.0..2.0f64) * 2f64.powi(eq / 2 + eb) * 2f64.powi(eq - eq / 2);
        a.push(av);
        b.push(if rng.random_bool(0.1) {
            f64::from(rng.random_range(1..100u8))
        } else {
            bv
        });
    }
    s.set("a", Array::vector(Data::F64(a.clone()))).unwrap();
    s.set("b", Array::vector(Data::F64(b.clone()))).unwrap();
    let q = device_value(&mut s, "a÷b");
    let Data::F64(q) = &q.data else {
        panic!("an f64 quotient, not {:?}", q.elem)
    };
    for ((q, a), b) in q.iter().zip(&a).zip(&b) {
        // (APL has no negative zero: ¯0 and 0 are one number.)
        let want = a / b;
        if want != 0.0 {
            assert_eq!(q.to_bits(), want.to_bits(), "{a:e}÷{b:e}: {q:e}");
        } else {
            assert_eq!(*q, 0.0, "{a:e}÷{b:e}: {q:e}");
        }
    }
}

/// `a÷b` on the device; where it raises an error, the pairs that raise it.
fn f32_quotients(s: &mut Session, a: &[f32], b: &[f32]) -> Array {
    let set = |s: &mut Session, a: &[f32], b: &[f32]| {
        s.set("a", Array::vector(Data::F32(a.to_vec()))).unwrap();
        s.set("b", Array::vector(Data::F32(b.to_vec()))).unwrap();
    };
    set(s, a, b);
    if let Ok(o) = s.eval("a÷b") {
        assert!(o.notes.is_empty(), "a÷b left the device: {:?}", o.notes);
        return o.value.expect("a value");
    }
    let mut bad = vec![];
    for (ca, cb) in a.chunks(256).zip(b.chunks(256)) {
        set(s, ca, cb);
        if s.eval("a÷b").is_ok() {
            continue;
        }
        for (x, y) in ca.iter().zip(cb) {
            set(s, &[*x], &[*y]);
            if let Err(e) = s.eval("a÷b") {
                bad.push(format!("{x:e}÷{y:e}: {e}"));
            }
        }
    }
    panic!(
        "{} quotients raise errors: {:?}",
        bad.len(),
        &bad[..bad.len().min(8)]
    )
}

#[test]
fn f32_quotients_without_f64_are_correctly_rounded() {
    // On a device without shaderFloat64 (planned so here), f32 `÷` is refined in
    // f32: IEEE's quotient to the last bit, at the ends of f32's range too. Where
    // the device cannot keep f32 subnormals either (the H200 planned so), operands
    // and quotients are kept above 2^-77: such a device flushes subnormals, and
    // the low parts of Dekker's product below 2^-126 with them (on the H200
    // 9.632271e¯31÷1.5855994e¯24 was an ulp off; docs/LANGUAGE.md, "Subnormals").
    let mut s = gpu();
    // (lavapipe keeps them, though it does not promise to.)
    let d = s.device().expect("a device");
    let keeps = d.denorm_preserve_f32 || d.name.starts_with("llvmpipe");
    let least = if keeps { -149 } else { -77 };
    s.tune(arrc::Tuning {
        float64: Some(false),
        ..Default::default()
    });
    let mut rng = rand::rngs::StdRng::seed_from_u64(32);
    let mut a: Vec<f32> = vec![1.0, 301.0, 1e30, 3e-30, 7.0, f32::MAX, 1e-38];
    let mut b: Vec<f32> = vec![3.0, 7.0, 3e-8, 7.0, 1e-30, 3.0, 3.0];
    let m = |rng: &mut rand::rngs::StdRng, e: i32| {
        let s = if rng.random_bool(0.5) { -1.0 } else { 1.0 };
        (s * rng.random_range(1.0..2.0f64) * 2f64.powi(e)) as f32
    };
    for _ in 0..8192 {
        // Ordinary quotients, and quotients about the ends of f32's range.
        let (ea, eb) = if rng.random_bool(0.5) {
            (rng.random_range(-30..30), rng.random_range(-30..30))
        } else {
            loop {
                let ea: i32 = rng.random_range(least..128);
                let eb: i32 = rng.random_range(least..128);
                if (least..127).contains(&(ea - eb)) {
                    break (ea, eb);
                }
            }
        };
        let av = m(&mut rng, ea);
        let bv = if rng.random_bool(0.2) {
            f32::from(rng.random_range(1..100u8))
        } else {
            m(&mut rng, eb)
        };
        if av.is_finite() && bv.is_finite() && bv != 0.0 && (av / bv).is_finite() {
            a.push(av);
            b.push(bv);
        }
    }
    if !keeps {
        let normal = |v: f32| v == 0.0 || v.abs() >= 2f32.powi(-77);
        let (ka, kb): (Vec<f32>, Vec<f32>) = a
            .iter()
            .zip(&b)
            .filter(|(x, y)| normal(**x) && normal(**y) && normal(**x / **y))
            .unzip();
        (a, b) = (ka, kb);
    }
    let q = f32_quotients(&mut s, &a, &b);
    let Data::F32(q) = &q.data else {
        panic!("an f32 quotient, not {:?}", q.elem)
    };
    let mut wrong = vec![];
    for ((q, a), b) in q.iter().zip(&a).zip(&b) {
        let want = a / b;
        if want != 0.0 && q.to_bits() != want.to_bits() || want == 0.0 && *q != 0.0 {
            wrong.push(format!("{a:e}÷{b:e}: {q:e}, not {want:e}"));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} wrong: {:?}",
        wrong.len(),
        &wrong[..wrong.len().min(8)]
    );
}

#[test]
fn maps_f32_without_f64() {
    // Planned as for a device without shaderFloat64 (f32 computed in f32 only):
    // the same maps and f32 functions against the reference. The inverse circle
    // functions are arrc's own f32 ones there (lavapipe's `¯1○` erred by 3e-4:
    // `¯1○x÷100` gave ¯1.0646735 for ¯1.0643687).
    let mut s = gpu();
    s.tune(arrc::Tuning {
        float64: Some(false),
        ..Default::default()
    });
    check(&mut s, MAPS, ElemType::F32, true);
    check_at(
        &mut s,
        &[1, 33, 4097],
        &[
            "1○x×600",
            "2○x×597",
            "3○x×655.36",
            "1○x×1e30",
            "¯1○x÷100",
            "¯2○x÷100",
            "¯3○x",
            "¯3○x÷10",
            "¯3○x÷1e4",
            "5○x÷10",
            "6○x÷10",
            "7○x÷10",
            "¯5○x",
            "¯6○1+|x",
            "¯7○x÷101",
            "*x÷10",
            "⍟1+|x",
            "(1+|x)*0.5",
            "2⍟1+|x",
            "!⌊|x÷5",
            "(÷1+|⌊x÷10)|x",
        ],
        ElemType::F32,
        false,
    );
}

/// i32 compared with float constants: compared as integers on the device (no
/// conversion), with the reference's answers where f32 rounds the integers (past
/// 2^24, `16777217=16777216.5` holds in f32) and at i32's ends, in f32 and f64
/// sessions, as masks and as a compaction's.
#[test]
fn integers_compared_with_float_constants() {
    let mut vals: Vec<i32> = vec![0, 1, -1, 2, -2, 3, i32::MAX, i32::MIN, i32::MIN + 1];
    vals.extend(16_777_213..16_777_222);
    vals.extend(-16_777_221..-16_777_213);
    vals.extend(2_147_483_500..2_147_483_530);
    // 67 items: past a subgroup of 32 and several of lavapipe's 8.
    let x: Vec<i32> = (0..67).map(|i| vals[i % vals.len()]).collect();
    let x = Array::vector(Data::I32(x));
    let exprs = [
        "x>0.5",
        "0.5<x",
        "x≤¯0.5",
        "x≥2.5",
        "x=16777216.5",
        "x≠16777218.5",
        "16777218.5>x",
        "x≥2147483520.5",
        "x<¯2147483647.5",
        "x=¯16777216.5",
        "(x>0.5)/x",
        "(x=16777216.5)/x",
    ];
    let mut s = gpu();
    for float in [ElemType::F32, ElemType::F64] {
        let mut cpu = bind_both(&mut s, float, &[("x", &x)]);
        for expr in exprs {
            let g = device_value(&mut s, expr);
            let c = arrc_ref::eval_program(&arrc_syntax::parse_str(expr).unwrap(), &mut cpu)
                .unwrap()
                .unwrap();
            assert_eq!(g, c, "{expr} ({float:?} session)");
        }
    }
}
