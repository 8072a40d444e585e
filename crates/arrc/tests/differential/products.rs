//! Structural functions as gathers, matrix products, generalized inner products
//! in tiles and products of booleans packed in words.

use super::*;

/// Structural functions as gathers, alone and fused into their users; products.
#[test]
fn gathers_and_products() {
    let mut s = gpu();
    for ty in [ElemType::F32, ElemType::I32] {
        check_shaped(
            &mut s,
            &[5, 7],
            ty,
            &[
                "⌽m",
                "⊖m",
                "⍉m",
                "2⌽m",
                "¯3⊖m",
                "+/⌽m",
                "3↑m",
                "¯2 9↑m",
                "1 ¯2↓m",
                "4 5⍴m",
                ",m",
                "⍪m",
                "m,m",
                "m⍪1",
                "m,[1]m",
                "m+.×⍉m",
                "(⍉m)⌈.+m",
                "(2↑,m)∘.×⍳3",
                "-⍉-m",
                "2 1⍉m",
                "1 1⍉5 5↑m",
                "+/,m",
                "m[2;]",
                "m[;3 1]",
                "m[5 1;7 7 2]",
                "m[⍳3;]",
                "m[(2 2⍴1 2 3 4);]",
                "+/m[;1+⍳3]",
                "2 3⌷m",
                "{⍵×⍵+1}¨m",
                "m{⍺-⍵}¨⌽m",
                "-⍨m",
                "m≡m",
                "m≡⌽m",
                "m≢m+1",
                "×⍨m",
            ],
        );
        check_shaped(
            &mut s,
            &[2, 3, 4],
            ty,
            &["⍉m", "⌽[2]m", "3 1 2⍉m", "m+.×⍳4"],
        );
    }
}

/// A session whose products of at least `large_from` outputs take `tile` (smaller
/// ones the small tile).
fn tiled_session(large_from: u64, tile: arrc_ir::plan::MatMulTile) -> Session {
    let mut s = gpu();
    s.tune(arrc::Tuning {
        matmul_large_from: Some(large_from),
        matmul_tile: Some(tile),
        ..Default::default()
    });
    s
}

/// `a` (m×k) and `b` (k×n) of type `ty` drawn from `rng`, in the session and a
/// reference: each of `exprs` runs on the device (in a tiled kernel, `MatMul`, where
/// `tiled`) and agrees with the reference (floats within `scale` times the
/// arguments' magnitudes).
fn products_against_the_reference(
    s: &mut Session,
    rng: &mut rand::rngs::StdRng,
    (ty, tiled): (ElemType, bool),
    (m, k, n): (usize, usize, usize),
    exprs: &[&str],
    scale: f64,
) {
    let a = random_shaped(rng, ty, &[m, k]);
    let b = random_shaped(rng, ty, &[k, n]);
    s.set("a", a.clone()).unwrap();
    s.set("b", b.clone()).unwrap();
    let mut cpu = arrc_ref::Env::default();
    cpu.arrays.insert("a".into(), a.clone());
    cpu.arrays.insert("b".into(), b.clone());
    for expr in exprs {
        let what = format!("{expr} {ty:?} {m}×{k}×{n}");
        let c = s.compile(expr).unwrap_or_else(|e| panic!("{what}: {e}"));
        let is_tiled = c
            .plan
            .kernels
            .iter()
            .any(|k| matches!(k.kind, arrc_ir::plan::KernelKind::MatMul { .. }));
        assert_eq!(is_tiled, tiled, "{what}: tiled");
        let g = s.eval(expr).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert!(g.notes.is_empty(), "{what}: {:?}", g.notes);
        let g = g.value.unwrap();
        let c = arrc_ref::eval_program(&arrc_syntax::parse_str(expr).unwrap(), &mut cpu)
            .unwrap()
            .unwrap();
        let scale = ((sum_abs(&a) + sum_abs(&b)) * scale).max(1.0);
        assert_close(&what, m * n, &g, &c, scale);
    }
}

/// `+.×` as a tiled matrix multiply: shapes that are not multiples of the tile, with
/// fused operands, against the reference, in both tile sizes (64×64, and 128×128 with
/// 8×8 outputs per invocation, 16 steps or as many as fit the device's workgroup
/// memory) and a tuned one of unequal sides and 16 steps, `k` not a multiple of the
/// steps staged at a time.
#[test]
fn matrix_products() {
    use arrc_ir::plan::MatMulTile;
    let tuned = MatMulTile::parse("4x8x16").unwrap();
    for (large_from, tile) in [
        (u64::MAX, MatMulTile::SMALL),
        (0, MatMulTile::LARGE),
        (0, tuned),
    ] {
        let mut s = tiled_session(large_from, tile);
        let mut rng = rand::rngs::StdRng::seed_from_u64(0x3a7);
        for ty in [ElemType::F32, ElemType::I32, ElemType::F64] {
            for (m, k, n) in [
                (1, 1, 1),
                (5, 7, 3),
                (65, 130, 63),
                (200, 17, 300),
                (64, 64, 64),
                (129, 9, 127),
                (128, 8, 128),
                (3, 1000, 2),
            ] {
                let exprs = ["a+.×b", "(a×2)+.×b-1", "(⍉b)+.×⍉a"];
                // Integer products too (in i64, each partial sum checked).
                let tiled = true;
                products_against_the_reference(
                    &mut s,
                    &mut rng,
                    (ty, tiled),
                    (m, k, n),
                    &exprs,
                    100.0,
                );
            }
        }
        let c = s.compile("(70 33⍴⍳7)+.×33 65⍴1.5").unwrap();
        assert!(matches!(
            c.plan.kernels[0].kind,
            arrc_ir::plan::KernelKind::MatMul { tile: t, .. }
                if (t.rows, t.cols) == (tile.rows, tile.cols)
        ));
    }
    // Cancellation is exact where the reference's f64 is (f32 products accumulate in
    // f64): 1e8×1 + 0.5×1 - 1e8×1 in one dot product.
    let mut s = gpu();
    let r = s.eval("(1 3⍴1e8 0.5 ¯1e8)+.×3 1⍴1").unwrap().value.unwrap();
    assert_eq!(arrc::display(&r), "0.5");
}

/// `expr` on the device (where it must run: no notes) and on the reference `cpu`,
/// each displayed, or its error.
fn on_both(
    s: &mut Session,
    cpu: &mut arrc_ref::Env,
    expr: &str,
) -> (Result<String, arrc::Error>, Result<String, arrc::Error>) {
    let shown = |v: Option<Array>| v.map_or(String::new(), |v| arrc::display(&v));
    let g = s.eval(expr).map(|g| {
        assert!(g.notes.is_empty(), "{expr}: {:?}", g.notes);
        shown(g.value)
    });
    let prog = arrc_syntax::parse_str(expr).unwrap();
    (g, arrc_ref::eval_program(&prog, cpu).map(shown))
}

/// Integer `+.×` in tiles (it was an m×n×k array of products, then a fold, and ran
/// out of memory from about 1024³): i32 operands whose sums their bounds keep within
/// i32 folded in i32, within i64 in i64 unchecked, and otherwise each partial sum
/// checked; at shapes around the tiles, with errors where the reference errs and
/// values where only a partial sum leaves i64 (the CPU confirms such an error).
#[test]
fn integer_products_in_tiles() {
    use arrc_ir::plan::{KernelKind, MatMulTile};
    for (large_from, tile) in [(u64::MAX, MatMulTile::SMALL), (0, MatMulTile::LARGE)] {
        let mut s = tiled_session(large_from, tile);
        for (m, k, n) in [
            (1, 1, 1),
            (5, 7, 3),
            (65, 130, 63),
            (129, 9, 127),
            (3, 1000, 2),
        ] {
            let (mk, kn) = (format!("{m} {k}"), format!("{k} {n}"));
            for (expr, checked, wide) in [
                // Bounds keep the sums within i32: i32 operands, no check.
                (format!("(¯3+{mk}⍴⍳7)+.×{kn}⍴⍳5"), false, false),
                (format!("({mk}⍴1 0 0 1 1=1)+.×{kn}⍴0 1 1=1"), false, false),
                // Within i64 by their literals (2^24·2^24·k): i64, no check.
                (
                    format!("({mk}⍴16777216 ¯16777215 5)+.×{kn}⍴¯16777216 3"),
                    false,
                    true,
                ),
                // Bounds of their type only (arrays from outside): each partial
                // sum checked (2^31·2^31·k leaves i64 from k=2; where their shapes
                // are left open, k=1 is checked too).
                ("a+.×b".to_string(), true, true),
            ] {
                let x = Array::new(
                    vec![m, k],
                    Data::I32((0..m * k).map(|i| (i % 17) as i32 - 9).collect()),
                );
                let y = Array::new(
                    vec![k, n],
                    Data::I32((0..k * n).map(|i| (i % 11) as i32 + 1).collect()),
                );
                let mut cpu = bind_both(&mut s, ElemType::I32, &[("a", &x), ("b", &y)]);
                let c = s.compile(&expr).unwrap_or_else(|e| panic!("{expr}: {e}"));
                // (Operands within ±127 go to 8-bit cooperative matrices where the
                // device has them: `small_integer_products_on_cooperative_matrices`.)
                let coop = c
                    .plan
                    .kernels
                    .iter()
                    .any(|k| matches!(k.kind, KernelKind::CoopMatMul { .. }));
                let kind = &c.plan.kernels.last().unwrap().kind;
                match kind {
                    KernelKind::MatMul { a, checked_sum, .. } => {
                        if k > 1 || !checked {
                            assert_eq!(checked_sum.is_some(), checked, "{expr} {mk} {kn}: checked");
                        }
                        assert_eq!(a.elem() == ElemType::I64, wide, "{expr}: {a:?}");
                    }
                    _ => assert!(coop && !wide && !checked, "{expr}: not tiled: {kind:?}"),
                }
                let (g, r) = on_both(&mut s, &mut cpu, &expr);
                assert_eq!(g.unwrap(), r.unwrap(), "{expr}");
            }
        }
        // Arrays from outside: kernels see how large they are, and the fastest
        // product exact for them runs (8-bit matrices where the device has them,
        // i32 tiles, the checked tiles): past the i32 limit in every element, in one
        // element only (the last), past ±127 but within the i32 limit, and within
        // ±127.
        for (m, k, n) in [(5, 7, 3), (65, 130, 63), (3, 1000, 2)] {
            let big = |i: usize| ((i % 17) as i32 - 9) << 20;
            for (xs, ys) in [
                (
                    (0..m * k).map(big).collect::<Vec<_>>(),
                    (0..k * n).map(|i| (i % 11) as i32 + 1).collect::<Vec<_>>(),
                ),
                (
                    (0..m * k)
                        .map(|i| {
                            if i + 1 == m * k {
                                1 << 30
                            } else {
                                (i % 5) as i32
                            }
                        })
                        .collect(),
                    (0..k * n).map(|i| (i % 3) as i32 - 1).collect(),
                ),
                (
                    (0..m * k).map(|i| (i % 5) as i32 * 250).collect(),
                    (0..k * n).map(|i| (i % 3) as i32 - 1).collect(),
                ),
                (
                    (0..m * k).map(|i| (i % 5) as i32).collect(),
                    (0..k * n).map(|i| (i % 3) as i32 - 1).collect(),
                ),
            ] {
                let x = Array::new(vec![m, k], Data::I32(xs));
                let y = Array::new(vec![k, n], Data::I32(ys));
                let mut cpu = bind_both(&mut s, ElemType::I32, &[("a", &x), ("b", &y)]);
                let c = s.compile("a+.×b").unwrap();
                assert!(
                    c.plan.kernels.iter().any(|k| matches!(
                        k.kind,
                        KernelKind::RangeFlag { .. } | KernelKind::PackI8 { range: Some(_), .. }
                    )),
                    "{m}×{k}×{n}: no range check"
                );
                let (g, r) = on_both(&mut s, &mut cpu, "a+.×b");
                assert_eq!(g.unwrap(), r.unwrap(), "{m}×{k}×{n}");
            }
        }
        // A sum past i64 is the reference's DOMAIN ERROR; a partial sum past it that
        // later pairs bring back is the reference's value (computed on the CPU).
        let m = "m←⌊1 3⍴(2*62),(2*62),-2*62 ⋄ ";
        let err = s.eval(&format!("{m}m+.×3 1⍴2 2 1")).unwrap_err();
        assert_eq!(err.class, arrc::ErrorClass::Domain, "{err}");
        let g = s.eval(&format!("{m}m+.×3 1⍴1")).unwrap();
        assert_eq!(arrc::display(&g.value.unwrap()), "4611686018427387904");
        let err = s.eval("c←3 4⍴2147483647 ⋄ c+.×⍉c").unwrap_err();
        assert_eq!(err.class, arrc::ErrorClass::Domain, "{err}");
    }
}

/// Integer `+.×` of operands within ±127 (booleans, residues, small literals) on the
/// device's 8-bit cooperative matrices where it has them (`PackI8`, `CoopMatMul`;
/// elsewhere the tiled kernel in i32): at shapes around the fragments (16×16×32)
/// and the workgroup tile (64×128), `k` not a multiple of 4, against the reference.
#[test]
fn small_integer_products_on_cooperative_matrices() {
    use arrc_ir::plan::KernelKind;
    let mut s = gpu();
    let int8 = s.plan_options().int8_matrices.is_some();
    let mut rng = rand::rngs::StdRng::seed_from_u64(0x1e8);
    for (m, k, n) in [
        (1, 1, 1),
        (5, 7, 3),
        (16, 32, 16),
        (17, 33, 15),
        (64, 64, 128),
        (65, 130, 129),
        (129, 5, 257),
        (3, 4097, 2),
        (200, 301, 150),
    ] {
        let x = random_shaped(&mut rng, ElemType::I32, &[m, k]);
        let y = random_shaped(&mut rng, ElemType::I32, &[k, n]);
        let mut cpu = bind_both(&mut s, ElemType::I32, &[("a", &x), ("b", &y)]);
        for expr in [
            "(a>0)+.×b>0",
            "(¯3+5|a)+.×7|b",
            "(a=1)+.×(b>2)-b<0",
            "(⍉¯50+61|b)+.×⍉127|a",
        ] {
            let what = format!("{expr} {m}×{k}×{n}");
            let c = s.compile(expr).unwrap_or_else(|e| panic!("{what}: {e}"));
            let coop = c
                .plan
                .kernels
                .iter()
                .any(|k| matches!(k.kind, KernelKind::CoopMatMul { .. }));
            assert_eq!(coop, int8, "{what}: on cooperative matrices");
            let (g, r) = on_both(&mut s, &mut cpu, expr);
            assert_eq!(g.unwrap(), r.unwrap(), "{what}");
        }
    }
}

/// Generalized inner products in the same tiles (`⌈.+ ⌊.- ⌈.⌊ ∨.∧ ∧.∨ +.= ∧.≤ +.∧`):
/// each pair computed and folded as the reference does, `k` stopped exactly (the
/// zeros staged past it would change a maximum or a count), in both tile sizes, with
/// errors of pairs raised (`⌈.×` past f32's range).
#[test]
fn generalized_inner_products_in_tiles() {
    use arrc_ir::plan::MatMulTile;
    let exprs: &[(&str, &[ElemType])] = &[
        ("a⌈.+b", &[ElemType::F32, ElemType::I32]),
        ("a⌊.-b", &[ElemType::F32, ElemType::I32]),
        ("a⌈.⌊b", &[ElemType::F32, ElemType::I32]),
        ("a⌊.×b", &[ElemType::F32]),
        ("(5|⌊a)+.=5|⌊b", &[ElemType::F32, ElemType::I32]),
        ("a∧.≤b", &[ElemType::F32, ElemType::I32]),
        ("(a>0)∨.∧b<0", &[ElemType::F32, ElemType::I32]),
        ("a∨.∧b", &[ElemType::Bool]),
        ("a∧.∨b", &[ElemType::Bool]),
        ("a+.∧b", &[ElemType::Bool]),
        ("a∨.≠b", &[ElemType::Bool]),
    ];
    for (large_from, tile) in [(u64::MAX, MatMulTile::SMALL), (0, MatMulTile::LARGE)] {
        let mut s = tiled_session(large_from, tile);
        let mut rng = rand::rngs::StdRng::seed_from_u64(0x1e7);
        for ty in [ElemType::F32, ElemType::I32, ElemType::Bool] {
            for (m, k, n) in [
                (1, 1, 1),
                (5, 7, 3),
                (65, 130, 63),
                (129, 9, 127),
                (3, 1000, 2),
            ] {
                let exprs: Vec<&str> = exprs
                    .iter()
                    .filter(|(_, t)| t.contains(&ty))
                    .map(|&(e, _)| e)
                    .collect();
                products_against_the_reference(
                    &mut s,
                    &mut rng,
                    (ty, true),
                    (m, k, n),
                    &exprs,
                    0.0,
                );
            }
        }
    }
    // A pair's error is raised as the elementwise function raises it.
    let mut s = gpu();
    let e = s.eval("(2 3⍴1e38 1 1)⌈.×3 2⍴10 1").unwrap_err();
    assert!(e.to_string().contains("DOMAIN ERROR"), "{e}");
    let e = s.eval("(1 2⍴¯3e38 1)⌈.+2 1⍴¯3e38 5").unwrap_err();
    assert!(e.to_string().contains("DOMAIN ERROR"), "{e}");
    // And no other: rows past the result's (a tile of 64 holds 3) read its last row,
    // not 0, whose `0-b` of the most negative i64 would overflow (it raised a DOMAIN
    // ERROR on the device, and the statement went to the reference).
    // i32 items summed in i64 cannot overflow: their pairs carry no check, and
    // `¯2*31` twice is ¯2*32, not wrapped.
    s.set("m", Array::new(vec![2, 2], Data::I32(vec![i32::MIN; 4])))
        .unwrap();
    let c = s.compile("m⌈.+m").unwrap();
    assert!(
        matches!(
            &c.plan.kernels[0].kind,
            arrc_ir::plan::KernelKind::MatMul {
                pair: Some(arrc_ir::plan::KExpr::Binary {
                    error_bit: None,
                    ..
                }),
                ..
            }
        ),
        "{:?}",
        c.plan.kernels[0].kind
    );
    let g = s.eval("m⌈.+m").unwrap();
    assert_eq!(
        arrc::display(&g.value.unwrap()),
        "¯4294967296 ¯4294967296\n¯4294967296 ¯4294967296"
    );
    let g = s.eval("(3 1⍴¯1)⌈.-1 1⍴¯9223372036854775807-1").unwrap();
    assert!(g.notes.is_empty(), "{:?}", g.notes);
    assert_eq!(
        arrc::display(&g.value.unwrap()),
        "9223372036854775807\n9223372036854775807\n9223372036854775807"
    );
}

/// Products of booleans packed 32 to a word (`∨.∧ ∧.∨ ∨.∨ ∧.∧ +.∧ +.∨`, as
/// `KernelKind::PackBits` and a `MatMul` of words): inner lengths about a word's
/// (31, 32, 33, 64, 65, 97, 200), negated operands, comparisons of floats packed
/// where they are computed, in both tile sizes, against the reference.
#[test]
fn boolean_products_in_words() {
    use arrc_ir::plan::{KernelKind, MatMulTile};
    let exprs = [
        "a∨.∧b",
        "a∧.∨b",
        "a∨.∨b",
        "a∧.∧b",
        "a+.∧b",
        "a+.∨b",
        "(~a)∨.∧b",
        "a∧.∨~b",
        "(a∨~a)∧.∧b∨~b",
    ];
    let compared = ["(a>0)∨.∧b<0", "(a>0)+.∧b<0", "(a>0)∧.∨b<0"];
    for (large_from, tile) in [(u64::MAX, MatMulTile::SMALL), (0, MatMulTile::LARGE)] {
        let mut s = tiled_session(large_from, tile);
        let mut rng = rand::rngs::StdRng::seed_from_u64(0xb175);
        for (m, k, n) in [
            (1, 1, 1),
            (3, 31, 5),
            (17, 32, 9),
            (33, 33, 1),
            (5, 64, 40),
            (65, 65, 17),
            (2, 97, 130),
            (130, 200, 3),
        ] {
            products_against_the_reference(
                &mut s,
                &mut rng,
                (ElemType::Bool, true),
                (m, k, n),
                &exprs,
                0.0,
            );
        }
        for (m, k, n) in [(7, 45, 9), (70, 100, 66)] {
            products_against_the_reference(
                &mut s,
                &mut rng,
                (ElemType::F32, true),
                (m, k, n),
                &compared,
                0.0,
            );
        }
        // Each operand packed once, then a product of words.
        let c = s.compile("(a>0)∨.∧b<0").unwrap();
        let kinds: Vec<_> = c.plan.kernels.iter().map(|k| &k.kind).collect();
        assert!(
            matches!(
                kinds[..],
                [
                    KernelKind::PackBits { cols: false, .. },
                    KernelKind::PackBits { cols: true, .. },
                    KernelKind::MatMul { bits: Some(_), .. }
                ]
            ),
            "{kinds:?}"
        );
    }
}

/// Integer `+.×` of arrays from outside, drawn at random: shapes around the tiles
/// and fragments, each operand's values from one of the ranges that decide its
/// kernel on the device (within ±127, within two 8-bit slices' ±16319 or the i32
/// tiles' limit, anywhere in i32, i64 near 2^40, and those ranges' edges), against
/// the reference: the same value or the same error. Half the cases cut operands
/// within ±16319 into 8-bit slices whatever the product's size (by default only
/// products of 2^32 or more are).
#[test]
fn random_integer_products_agree_with_the_reference() {
    for slices_from in [None, Some(0)] {
        let mut s = gpu();
        s.tune(arrc::Tuning {
            int8_slices_from: slices_from,
            ..Default::default()
        });
        random_integer_products(s, 32);
    }
}

fn random_integer_products(s: Session, cases: u32) {
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};
    let s = std::cell::RefCell::new(s);
    let dims = prop::sample::select(vec![1usize, 2, 15, 16, 17, 31, 33, 64, 65, 129]);
    let range = prop::sample::select(vec![0u8, 1, 2, 3, 4]);
    let mut runner = TestRunner::new(Config {
        cases,
        ..Config::default()
    });
    let strategy = (
        dims.clone(),
        dims.clone(),
        dims,
        range.clone(),
        range,
        any::<u64>(),
    );
    runner
        .run(&strategy, |(m, k, n, ra, rb, seed)| {
            let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
            let mut draw = |r: u8, len: usize| -> Data {
                match r {
                    0 => Data::I32((0..len).map(|_| rng.random_range(-127..=127)).collect()),
                    1 => Data::I32((0..len).map(|_| rng.random_range(-1500..=1500)).collect()),
                    2 => Data::I32(
                        (0..len)
                            .map(|_| {
                                if rng.random_bool(0.3) {
                                    [i32::MAX, i32::MIN, i32::MIN + 1][rng.random_range(0..3)]
                                } else {
                                    rng.random()
                                }
                            })
                            .collect(),
                    ),
                    // The edges of the ranges that pick a kernel: 8-bit, the low
                    // slice's -64..63, two slices' ±16319 (1465 is the i32 tiles'
                    // edge at k = 1000; here k ≤ 129).
                    4 => Data::I32(
                        (0..len)
                            .map(|_| {
                                let e = [127, 128, 63, 64, 16319, 16320, 1465, 1466, 0, 1]
                                    [rng.random_range(0..10)];
                                if rng.random_bool(0.5) {
                                    -e
                                } else {
                                    e
                                }
                            })
                            .collect(),
                    ),
                    _ => Data::I64(
                        (0..len)
                            .map(|_| rng.random_range(-(1i64 << 40)..=1 << 40))
                            .collect(),
                    ),
                }
            };
            let x = Array::new(vec![m, k], draw(ra, m * k));
            let y = Array::new(vec![k, n], draw(rb, k * n));
            let mut s = s.borrow_mut();
            let mut cpu = bind_both(&mut s, ElemType::I32, &[("a", &x), ("b", &y)]);
            let what = format!("{m}×{k}×{n} ranges {ra} {rb}");
            match on_both(&mut s, &mut cpu, "a+.×b") {
                (Ok(g), Ok(r)) => prop_assert_eq!(g, r, "{}", what),
                (Err(g), Err(r)) => prop_assert_eq!(g.class, r.class, "{}", what),
                (g, r) => prop_assert!(false, "{what}: device {g:?}, reference {r:?}"),
            }
            Ok(())
        })
        .unwrap();
}
