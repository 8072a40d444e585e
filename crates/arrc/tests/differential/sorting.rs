//! Grades by radix sort and bitonic network, searches, set functions, and `⌸`.

use super::*;

/// 64-bit integers known to fit 32 bits (a residue by a constant of at most 2^31:
/// |a|b| < |a|) are graded as 32-bit ones: the same order at the bound (±2^31), with
/// negative items and moduli, and not past it (2^31+1); keys of `⌸` too. Such a grade
/// takes 4 radix passes, not 8.
#[test]
fn grades_of_small_64_bit_integers_sort_in_32_bits() {
    let mut s = gpu();
    let exprs = [
        "⍋2147483648|x×1000003",
        "⍒¯2147483648|x×1000003",
        "⍋2147483649|x×1000003",
        "⍋1048576|x×7919",
        "⍋7|x×1000003",
        "{≢⍵}⌸1000|x×1000003",
        "{+/⍵}⌸1000|x×1000003",
        // The sorted keys from the sort's last pass, in 32 bits, back as i64.
        "{⍵[⍋⍵]}¯2147483648|x×1000003",
        "{⍵[⍒⍵]}2147483648|x×1000003",
        "{⍺,≢⍵}⌸1000|x×1000003",
    ];
    check_at(&mut s, &[1, 9, 4097, 100003], &exprs, ElemType::I64, false);
    check_at(&mut s, &[1, 4097], &exprs, ElemType::I32, false);
    let passes = |s: &mut Session, e: &str| {
        let c = s.compile(e).unwrap();
        c.plan
            .kernels
            .iter()
            .filter(|k| matches!(k.kind, arrc_ir::plan::KernelKind::RadixScatter { .. }))
            .count()
    };
    s.set("x", Array::vector(Data::I64(vec![5; 1 << 22])))
        .unwrap();
    assert_eq!(passes(&mut s, "⍋1048576|x×7919"), 4);
    assert_eq!(passes(&mut s, "⍋x×7919"), 8);
    // The items in sorted order are the sort's own keys, not a gather through ⍋.
    for e in ["x[⍋x]", "{⍺,≢⍵}⌸x", "(⌽x)⍳x"] {
        let plan = format!("{:?}", s.compile(e).unwrap().plan.kernels);
        assert!(plan.contains("SortedKey"), "{e}: {plan}");
    }
}

#[test]
fn sorting_and_searching() {
    // `⍋ ⍒` by a bitonic network over an index array (stable: ties by index), `⍳ ∊`
    // by binary search in grade order; padding to a power of two at odd sizes.
    let mut s = gpu();
    const EXPRS: &[&str] = &[
        "⍋x",
        "⍒x",
        "x[⍋x]",
        "⍋⌊x÷10",
        "⍒⌊x÷10",
        "(⌊x÷10)⍳⌊y÷10",
        "(⌊y÷10)∊⌊x÷10",
        "x⍳y",
        "x⍳x",
        "+/x∊y",
        "((⌊x÷10)∊7 ¯3 12)/x",
    ];
    // (The reference searches in O(n·m), so the sizes stay small; one grade at 70001
    // takes the network through 17 merge levels.)
    let sizes = &[0, 1, 2, 3, 7, 33, 1000, 4097];
    check_at(&mut s, sizes, EXPRS, ElemType::I32, false);
    check_at(&mut s, sizes, EXPRS, ElemType::F32, false);
    check_at(&mut s, &[0, 1, 33, 1000], EXPRS, ElemType::F64, false);
    check_at(&mut s, &[70001], &["⍋x", "⍒⌊x÷10"], ElemType::I32, false);
    // A search's first steps read every stride-th sorted key from a table in
    // workgroup memory (4096 keys of 4 bytes, 2048 of 8), its last ones the keys
    // between two samples: sizes on both sides of where the stride grows.
    let tabled = &[
        "x⍳y",
        "x⍳x",
        "(⌊x÷10)⍳⌊y÷10",
        "(⌊y÷10)∊⌊x÷10",
        "(x[⍋x])⍸y",
        "(x[⍋x])⍸x",
        // Needles below every key, and above.
        "x⍳y-3000",
        "x⍳y+3000",
        "(x[⍋x])⍸y-3000",
        "(x[⍋x])⍸y+3000",
    ];
    check_at(
        &mut s,
        &[4095, 4096, 4097, 8193],
        tabled,
        ElemType::I32,
        false,
    );
    check_at(&mut s, &[4097], tabled, ElemType::F32, false);
    check_at(
        &mut s,
        &[2047, 2048, 2049, 4097],
        tabled,
        ElemType::F64,
        false,
    );
    check_at(&mut s, &[4097], &["x⍳y", "y∊x"], ElemType::Bool, false);
    // Rows of a matrix (major cells) compare in ravel order.
    for shape in [[33, 3], [1000, 2], [5, 1]] {
        check_shaped(
            &mut s,
            &shape,
            ElemType::I32,
            &[
                "⍋⌊m÷300",
                "⍒⌊m÷300",
                "⍋m",
                "(⍳100)∊m",
                "m∊⌊m÷2",
                "(⌊m÷500)⍳⌊⊖m÷500",
                "m⍳m",
            ],
        );
    }
}

#[test]
fn radix_grades_of_every_key_type() {
    // Vectors from `PlanOptions::radix_from` elements on are graded by the radix sort:
    // keys of each type made unsigned in the same order (negative floats reversed,
    // -0 as 0, i64 extremes), ties in index order, ⍒ stable too, and `⍳ ∊` on it.
    // Each pass is one kernel finding its tiles' places by decoupled lookback
    // (below 2^30 keys), also with the fallback taken at once (a spin limit of 1);
    // and, as for longer vectors, a count kernel and a scan per pass.
    for tune in [
        arrc::Tuning::default(),
        arrc::Tuning {
            spin_limit: Some(1),
            ..Default::default()
        },
        arrc::Tuning {
            radix_lookback_below: Some(0),
            ..Default::default()
        },
    ] {
        let mut s = gpu();
        s.tune(tune.clone());
        radix_grades(&mut s);
        // Hundreds of tiles, claimed and looked back through by workgroups that run
        // at once (the first such bug gave wrong answers from 2^19 keys on lavapipe,
        // one workgroup claimed every tile and ran out of loop trips).
        let n = 600_007;
        // Passes whose keys all share a digit: the high digits of small keys, the
        // low ones of keys that differ only in their top byte, and every digit of
        // equal keys. Where the passes count and scan (`radix_lookback_below` 0),
        // passes above the keys' range are not run: 1, 2, 3 or all 4 run, the keys
        // read in sorted order after an odd and an even number of them.
        for expr in [
            format!("x←1000003|(⍳{n})×7919 ⋄ +/(⍳{n})×⍋x"),
            format!("x←60000|(⍳{n})×7919 ⋄ +/(⍳{n})×⍋x"),
            format!("x←60000|(⍳{n})×7919 ⋄ +/(⍳{n})×x[⍋x]"),
            format!("x←1000003|(⍳{n})×7919 ⋄ +/(⍳{n})×x[⍒x]"),
            format!("x←100|(⍳{n})×7919 ⋄ +/(⍳{n})×x[⍋x]"),
            format!("x←¯50+100|(⍳{n})×7919 ⋄ +/(⍳{n})×⍒x"),
            format!("x←100|(⍳{n})×7919 ⋄ +/(⍳{n})×⍒x"),
            format!("x←16777216×¯50+100|(⍳{n})×7919 ⋄ +/(⍳{n})×⍋x"),
            format!("x←0×⍳{n} ⋄ +/(⍳{n})×⍒x"),
            format!("x←0×⍳{n} ⋄ x[⍋x]≡x"),
        ] {
            let g = s.eval(&expr).unwrap_or_else(|e| panic!("{expr}: {e}"));
            assert!(g.notes.is_empty(), "{expr}: {:?}", g.notes);
            let prog = arrc_syntax::parse_str(&expr).expect("parses");
            let c = arrc_ref::eval_program(&prog, &mut arrc_ref::Env::default()).expect("cpu");
            assert_eq!(g.value, c, "{expr} with {tune:?}");
        }
    }
}

fn radix_grades(s: &mut arrc::Session) {
    let mut rng = rand::rngs::StdRng::seed_from_u64(0x50e7);
    let i64s = [
        -i64::MAX,
        -(1i64 << 62),
        -(1i64 << 32),
        -1,
        0,
        1,
        1 << 31,
        1 << 32,
        (1 << 62) - 1,
        1 << 62,
        i64::MAX,
    ];
    // (No f32 subnormals: `⍋-x` negates them, which NVIDIA flushes to 0, a known
    // difference; audit.rs sorts and compares them.)
    let f32s = [
        -0.0f32, 0.0, -1e38, 1e38, -0.5, 0.5, 1e-37, -1e-37, 3.0, -3.0, 1e-30,
    ];
    let f64s = [
        -0.0f64, 0.0, -1e300, 1e300, -0.5, 0.5, 1e-310, -1e-310, 3.0, -3.0, 2.5,
    ];
    for n in [1023usize, 1024, 1025, 4097, 65537] {
        let pick = |rng: &mut rand::rngs::StdRng, k: usize| rng.random_range(0..k);
        let arrays = [
            Array::vector(Data::Bool((0..n).map(|_| rng.random_bool(0.5)).collect())),
            Array::vector(Data::I32(
                (0..n)
                    .map(|_| rng.random_range(i32::MIN + 1..=i32::MAX))
                    .collect(),
            )),
            Array::vector(Data::I64(
                (0..n).map(|_| i64s[pick(&mut rng, 11)]).collect(),
            )),
            Array::vector(Data::F32(
                (0..n).map(|_| f32s[pick(&mut rng, 11)]).collect(),
            )),
            // Keys of narrow ranges: 1, 2 and 3 passes of 4 needed (the passes sort
            // the keys less the least: across the sign and a byte's edge too).
            Array::vector(Data::I32(
                (0..n).map(|_| rng.random_range(0..100)).collect(),
            )),
            Array::vector(Data::I32(
                (0..n).map(|_| rng.random_range(-50..50)).collect(),
            )),
            Array::vector(Data::I32(
                (0..n).map(|_| rng.random_range(250..262)).collect(),
            )),
            Array::vector(Data::I32(
                (0..n).map(|_| rng.random_range(0..60000)).collect(),
            )),
            Array::vector(Data::I32(
                (0..n).map(|_| rng.random_range(0..1000000)).collect(),
            )),
            Array::vector(Data::F64(
                (0..n).map(|_| f64s[pick(&mut rng, 11)]).collect(),
            )),
        ];
        for x in arrays {
            let float = if x.elem == ElemType::F64 {
                ElemType::F64
            } else {
                ElemType::F32
            };
            s.set_float(float);
            s.set("x", x.clone()).unwrap();
            let mut cpu = arrc_ref::Env {
                float,
                ..Default::default()
            };
            cpu.arrays.insert("x".into(), x.clone());
            // `x[⍋x]`, `⌸`, `∪` and the searches read the keys as the sort's last
            // pass wrote them (`KExpr::SortedKey`), not gathered through the grade.
            for expr in [
                "⍋x",
                "⍒x",
                "x⍳x",
                "(⌽x)∊x",
                "⍋-x",
                "⍒⌽x",
                "x[⍋x]",
                "x[⍒x]",
                "(⌽x)[⍒⌽x]",
                "{⍺,≢⍵}⌸x",
                "∪x",
            ] {
                let g = s.eval(expr).unwrap_or_else(|e| panic!("{expr} n={n}: {e}"));
                assert!(g.notes.is_empty(), "{expr}: {:?}", g.notes);
                let prog = arrc_syntax::parse_str(expr).expect("parses");
                let c = arrc_ref::eval_program(&prog, &mut cpu).expect("cpu");
                assert_eq!(
                    g.value, c,
                    "{expr} n={n} of {:?} on the device and the reference",
                    x.elem
                );
            }
        }
    }
}

#[test]
fn set_functions_find_decode_expand_on_the_device() {
    // `∪ ≠ ∩ ~` (searches and compresses), `⍷` of a known pattern (shifted
    // comparisons), `⍸` of known intervals, `⊥` of known radices (an inner product),
    // expand, laminate, and the operators `⍤ ⍥ @` where they are scalar functions
    // spread over frames or selections, all fused on the device.
    let mut s = gpu();
    let exprs = [
        "∪x",
        "≠x",
        "x∩y",
        "x~y",
        "(⍳10)∩x",
        "x~⍳5",
        "x∪y",
        "(⍳5)∪x",
        "∪x>0",
        "1 0 1⍷x>0",
        "5⍷x",
        "(2 2⍴1 0 0 1)⍷(3,≢x)⍴x>0",
        "(1 2⍴0 1)⍷(2,≢x)⍴x>0",
        "(0 2⍴0)⍷(2,≢x)⍴x",
        "¯50 0 50⍸x",
        // Computed intervals: a binary search, its order checked on the device.
        "b←x[⍋x] ⋄ b⍸y",
        "b←x[⍋x] ⋄ b⍸x",
        "(+\\|x)⍸y×5",
        "(3 2⍴1 2 1 5 4 0)⍸(5,2)⍴x",
        "10 10 10⊥3 3⍴x",
        "1 ¯2 1⊥3 3⍴x",
        "2⊥⍉4 3⍴x>0",
        "(2 3⍴2 2 2 10 10 10)⊥3 3⍴x",
        "(3 1⍴2 7 10)⊥4 2⍴x",
        "10 10 10⊤x",
        "(8⍴2)⊤x",
        "0 7⊤x",
        "¯3 5 0⊤x",
        "0 1⊤x÷4",
        // 64-bit integers divide exactly in 64 bits; 64 digits stack in one kernel
        // without blowing up (a left-deep chain of first-axis catenations).
        "1000 1000 1000 1000⊤x×3000000007",
        "(64⍴2)⊤x×3000000007",
        "0 1000⊤x×¯3000000007",
        "(32⍴2)⊤x",
        "m←(2,≢x)⍴x ⋄ 1 0 1⍀m",
        "m←(2,≢x)⍴x ⋄ 0 ¯2 1 1\\[1]m",
        "0 1 0\\1↑x",
        "x,[0.5]y",
        "x,[1.5]y",
        "x+⍤0 0⊢y",
        "(2 3⍴x)+⍤1 0⊢2↑y",
        "+/⍤1⊢(3,≢x)⍴x",
        "m←(3,≢x)⍴x ⋄ {⍵-⌈/⍵}⍤1⊢m",
        "m←(3,≢x)⍴x ⋄ (+/÷≢)⍤1⊢m",
        "m←(3,≢x)⍴x ⋄ {+/⍵×⍵}⍤1⊢m",
        "m←(3,≢x)⍴x÷100 ⋄ {e÷+/e←*⍵-⌈/⍵}⍤1⊢m",
        "m←(2 3,≢x)⍴x ⋄ {(⍵-m)×2+m←(⌊/⍵)}⍤1⊢m",
        "m←(3,≢x)⍴x ⋄ {7}⍤1⊢m",
        "x×⍥|y",
        "0@{⍵>0}x",
        "-@{⍵<0}x",
        "{1+⍵×2}@{⍵<0}x",
    ];
    for ty in [ElemType::I32, ElemType::F32] {
        check_at(&mut s, &[0, 1, 9, 33, 4097], &exprs, ty, false);
        check_at(
            &mut s,
            &[1, 8, 4097],
            &["0@1⊢x", "(2↑y)@1 1⊢2⍴x"],
            ty,
            false,
        );
    }
    // Intervals computed on the device and out of order: its DOMAIN ERROR.
    let e = s.eval("b←⌽⍳90 ⋄ b⍸3").expect_err("not ascending");
    assert_eq!(e.class.name(), "DOMAIN ERROR", "{e:?}");
    assert!(e.message.contains("ascending"), "{e:?}");
    // ⍺ is read as it is, not sorted first: no radix passes (there were four, and a
    // gather of ⍺ through its grade). Equal items, and ⍺ out of order only at its end.
    let plan = s.compile("(+\\|x)⍸y×5").unwrap().plan;
    assert!(
        !plan.kernels.iter().any(|k| k.name.starts_with("radix")),
        "{:?}",
        plan.kernels.iter().map(|k| &k.name).collect::<Vec<_>>()
    );
    let o = s.eval("b←⌊(⍳6)÷2 ⋄ b⍸0 1 2 3 4 ¯1").unwrap();
    assert!(o.notes.is_empty(), "{:?}", o.notes);
    assert_eq!(arrc::display(&o.value.unwrap()), "1 3 5 6 6 0");
    // ⍺ of a length computed on the device in the same statement: sorted as before
    // (read as it is, the search took the length's bound, 10, for the count, 7).
    let o = s.eval("x←¯3+⍳10 ⋄ ((x>0)/⍳10)⍸11 5").unwrap();
    assert_eq!(arrc::display(&o.value.unwrap()), "7 2");
    // ⍺ of a length computed on the device, and empty.
    for (e, want) in [
        ("x←¯3+⍳10 ⋄ b←(x>0)/⍳10 ⋄ b⍸5 7 0 11", "2 4 0 7"),
        ("x←¯3+⍳10 ⋄ b←(x>100)/x ⋄ b⍸2 3", "0 0"),
    ] {
        let o = s.eval(e).unwrap();
        assert!(o.notes.is_empty(), "{e}: {:?}", o.notes);
        assert_eq!(arrc::display(&o.value.unwrap()), want, "{e}");
    }
    let e = s.eval("b←(⍳90),0 ⋄ b⍸3").expect_err("not ascending");
    assert_eq!(e.class.name(), "DOMAIN ERROR", "{e:?}");
    f64_intervals_computed_on_the_device(&mut s);
}

/// `⍺⍸⍵` of an f64 ⍺ computed on the device: its order is checked exactly, as the
/// reference does (f64 `≤` is tolerant, and took `(0.1+0.2),0.3` for ascending: the
/// device answered 1 where APL says DOMAIN ERROR), with -0 equal to 0 and
/// subnormals apart from it; ⍺ is then read as it is, not sorted.
fn f64_intervals_computed_on_the_device(s: &mut Session) {
    let exprs = ["b←x[⍋x] ⋄ b⍸y", "b←x[⍋x] ⋄ b⍸x", "b←x[⍋x] ⋄ b⍸0 ¯1e6 1e6"];
    check_at(s, &[0, 1, 9, 33, 4097], &exprs, ElemType::F64, false);
    s.set_float(ElemType::F64);
    let mut cpu = arrc_ref::Env {
        float: ElemType::F64,
        ..Default::default()
    };
    let cases: [(&[f64], &str); 8] = [
        (&[0.1 + 0.2, 0.3], "x⍸0.3"),
        (&[0.3, 0.1 + 0.2], "x⍸0.3 0.31 0.30000000000000004"),
        (&[0.0, -5e-324], "x⍸0"),
        (&[5e-324, 0.0], "x⍸0"),
        (&[0.0, -0.0, 0.0, -0.0], "x⍸0 ¯1 1"),
        (&[-5e-324, -0.0, 0.0, 5e-324], "x⍸0 ¯5e¯324 5e¯324 1"),
        (&[1.0, 2.0, 3.0, 3.0 - 4.440892098500626e-16], "x⍸2"),
        (&[-1e300, -1.0, 1.0, 1e300], "x⍸¯1e300 0 1e301"),
    ];
    for (items, expr) in cases {
        let a = Array::vector(Data::F64(items.to_vec()));
        s.set("x", a.clone()).unwrap();
        cpu.arrays.insert("x".into(), a);
        // Through the device: ⍺ is x×1 (computed there; -0 stays -0), not the
        // bound array.
        let expr = expr.replacen("x⍸", "(x×1)⍸", 1);
        let prog = arrc_syntax::parse_str(&expr).expect("parses");
        let want = arrc_ref::eval_program(&prog, &mut cpu);
        match (s.eval(&expr), want) {
            (Ok(g), Ok(c)) => {
                assert!(g.notes.is_empty(), "{expr} left the device: {:?}", g.notes);
                let (g, c) = (g.value.unwrap(), c.unwrap());
                assert_eq!(arrc::display(&g), arrc::display(&c), "{expr} of {items:?}");
            }
            (Err(g), Err(c)) => {
                assert_eq!(g.class.name(), c.class.name(), "{expr} of {items:?}");
                assert_eq!(g.class.name(), "DOMAIN ERROR", "{expr} of {items:?}");
            }
            (g, c) => panic!("{expr} of {items:?}: device {g:?}, reference {c:?}"),
        }
    }
    // The literal cases, as a user writes them.
    let e = s.eval("((0.1+0.2),0.3)⍸0.3").expect_err("not ascending");
    assert_eq!(e.class.name(), "DOMAIN ERROR", "{e:?}");
    let o = s
        .eval("(0.3,0.1+0.2)⍸0.3 0.31 0.30000000000000004")
        .unwrap();
    assert_eq!(arrc::display(&o.value.unwrap()), "1 2 2");
    let radix = |s: &mut Session, e: &str| {
        let plan = s.compile(e).unwrap().plan;
        plan.kernels
            .iter()
            .filter(|k| k.name.starts_with("radix"))
            .count()
    };
    // The grade's own passes only: ⍺ is not sorted a second time for the search.
    let (search, grade) = (radix(s, "x[⍋x]⍸y"), radix(s, "x[⍋x]"));
    assert_eq!(search, grade, "radix kernels of x[⍋x]⍸y");
}

#[test]
fn key_counts_and_sums_on_the_device() {
    // `⌸` of counts, sums, maxima and minima: groups in order of first occurrence,
    // as runs of the sorted keys (by searches and atomics for f64 keys).
    let mut s = gpu();
    let counts = [
        "{≢⍵}⌸x",
        "{⍺,≢⍵}⌸x",
        "{+/⍵}⌸x",
        "{≢⍵}⌸x>0",
        "{⍺,≢⍵}⌸⌊x÷7",
        "{⌈/⍵}⌸x",
        "{⍺,⌊/⍵}⌸x",
    ];
    for ty in [ElemType::I32, ElemType::F32] {
        check_at(&mut s, &[1, 9, 33, 4097], &counts, ty, false);
    }
    let sums = [
        "x{+/⍵}⌸y",
        "(x>0){⍺,+/⍵}⌸y",
        "(⌊x÷10){+/⍵}⌸y>0",
        "x{⌈/⍵}⌸y",
        "(x>0){⍺,⌊/⍵}⌸y-100",
    ];
    check_at(&mut s, &[1, 9, 33, 4097], &sums, ElemType::I32, false);
    // Maxima and minima of floats by key, as integer atomics of integers in the
    // floats' order (`UnOp::OrderedBits`), in one compiled statement; before, they
    // ran from the host, one device call per group (the statement did not compile:
    // NOT YET SUPPORTED). Negative zero, subnormals and the largest floats keep their
    // order.
    let float_folds = [
        "x{⌈/⍵}⌸y",
        "(3|⌊|x){⍺,⌊/⍵}⌸y-0.5",
        "(x>0){⌈/⍵}⌸-y",
        "(⌊x){⌊/⍵}⌸y×1e30",
    ];
    for ty in [ElemType::F32, ElemType::F64] {
        check_at(
            &mut s,
            &[1, 7, 8, 9, 255, 257, 4097],
            &float_folds,
            ty,
            false,
        );
        for e in float_folds {
            s.compile(e).unwrap_or_else(|err| panic!("{e} {ty}: {err}"));
        }
    }
    s.set_float(ElemType::F32);
    let mut cpu = arrc_ref::Env::default();
    for e in [
        "1 2 1 2 1 2 3{⌈/⍵}⌸3e38 ¯3e38 1e¯40 ¯1e¯40 ¯2 ¯1,-0",
        "1 2 1 2 1 2 3{⍺,⌊/⍵}⌸3e38 ¯3e38 1e¯40 ¯1e¯40 ¯2 ¯1,-0",
        "1 1 2 2{⌈/⍵}⌸(-0),0,0,-0",
    ] {
        agree(&mut s, &mut cpu, e, 7, 0.0);
    }
    // Counts by key check that there is one key per major cell (they counted the
    // keys alone: `1 2 1{≢⍵}⌸1 2` gave 2 1 on the device, not a LENGTH ERROR).
    for e in [
        "1 2 1{≢⍵}⌸1 2",
        "1 2 1{⍺,≢⍵}⌸5",
        "1 2 1{≢⍵}⌸2 2⍴1",
        "1 2 1{≢⍵}⌸3 2⍴1",
        "(,1){≢⍵}⌸5",
    ] {
        agree(&mut s, &mut cpu, e, 3, 0.0);
    }
    // Groups with many items across many workgroups, at the sizes where the atomic
    // fold's strategies change, and sums whose low words carry and borrow. Exactly
    // compared keys group by runs of the sorted keys (maxima fold into each run's
    // first place); f64 keys below fold each item into its group with an atomic.
    for e in [
        "{⍺,≢⍵}⌸100000⍴⍳3",
        "{≢⍵}⌸100000⍴⍳4096",
        "{≢⍵}⌸100000⍴⍳4097",
        "(100000⍴⍳3){⍺,+/⍵}⌸100000⍴2147483647 ¯2147483648 2147483647 5",
        "(100000⍴⍳2048){+/⍵}⌸100000⍴2147483647 ¯1 ¯2147483648",
        "(100000⍴⍳2049){+/⍵}⌸100000⍴2147483647 ¯1 ¯2147483648",
        "(100000⍴⍳7){+/⍵}⌸100000⍴¯2147483648",
        "(100000⍴⍳4096){⌈/⍵}⌸⍳100000",
        "(100000⍴⍳4097){⌊/⍵}⌸-⍳100000",
        "(100000⍴⍳5){⍺,⌊/⍵}⌸100000⍴2147483647",
        "(100000⍴⍳5){⌈/⍵}⌸100000⍴¯2147483647",
        // Floats' maxima and minima as i32 in their order, in workgroup memory.
        "(100000⍴⍳5){⌈/⍵}⌸100000⍴¯1.5 2.5 0 ¯0.25 ¯7 3 ¯0",
        "(100000⍴⍳5){⍺,⌊/⍵}⌸100000⍴¯1.5 2.5 0 ¯0.25 ¯7 3 ¯0",
        // Indexed assignment's last writer of each position is an atomic `⌈` too.
        "x←⍳4000 ⋄ x[100000⍴⍳4000]←⍳100000 ⋄ x",
        // Groups as runs of the sorted keys: as many groups as items, one group,
        // keys and items beyond 32 bits, and groups put back in reverse order.
        "{≢⍵}⌸⍳100000",
        "{⍺,+/⍵}⌸⌽⍳100000",
        "{⍺,+/⍵}⌸100000⍴5",
        "(⌽⍳100000){⌈/⍵}⌸⍳100000",
        "{⍺,≢⍵}⌸(⌊2*40)+100000⍴3 1 2",
        "(100000⍴(⌊2*40)+3 1 2){⍺,⌈/⍵}⌸(⌊2*40)×100000⍴⍳1000",
        "(100000⍴3 1 2 3){⍺,⌊/⍵}⌸(⌊2*40)×100000⍴⍳1000",
        "≠100000⍴⍳777",
        "∪⌽100000⍴⍳777",
    ] {
        agree(&mut s, &mut cpu, e, 100000, 0.0);
    }
    // f64 keys group by `k⍳k`, and each workgroup folds its share in workgroup
    // memory where the groups fit (4096 slots of i32, 2048 of i64 as two words whose
    // low word carries into the high one), in device memory beyond: both sides of
    // each limit.
    s.set_float(ElemType::F64);
    let mut cpu64 = arrc_ref::Env {
        float: ElemType::F64,
        ..Default::default()
    };
    for e in [
        "{≢⍵}⌸0.5+100000⍴⍳4096",
        "{≢⍵}⌸0.5+100000⍴⍳4097",
        "(0.5+100000⍴⍳3){⍺,+/⍵}⌸100000⍴2147483647 ¯2147483648 2147483647 5",
        "(0.5+100000⍴⍳2048){+/⍵}⌸100000⍴2147483647 ¯1 ¯2147483648",
        "(0.5+100000⍴⍳2049){+/⍵}⌸100000⍴2147483647 ¯1 ¯2147483648",
        "(0.5+100000⍴⍳4096){⌈/⍵}⌸⍳100000",
    ] {
        agree(&mut s, &mut cpu64, e, 100000, 0.0);
    }
    s.set_float(ElemType::F32);
    // Other operands run from the host, one device call per group.
    let others = ["{⍺,⍴⍵}⌸3|⌊|x", "(3|⌊|x){⍺,(⌈/⍵)-⌊/⍵}⌸y", "(3|⌊|x){+/⍵×⍵}⌸y"];
    for ty in [ElemType::I32, ElemType::F32] {
        check_at(&mut s, &[1, 9, 4097], &others, ty, false);
    }
}

#[test]
fn float_sums_by_key_on_the_device() {
    // `k{+/⍵}⌸v` of floats: a `+` scan restarted at each run of the sorted keys
    // (`Inst::SegScan`), in f64, read at each run's end. Before, the statement did
    // not compile for the device (NOT YET SUPPORTED) and ran from the host, one
    // device call per group.
    let mut s = gpu();
    let f32_sums = [
        "x{+/⍵}⌸y",
        "(⌊x÷10){⍺,+/⍵}⌸y",
        "(x>0){+/⍵}⌸y",
        "(7|⌊|x){+/⍵}⌸y×1e30",
    ];
    // Around a tile (2048 elements), an invocation's 8 and lavapipe's subgroup.
    let sizes = [1, 7, 8, 9, 255, 2047, 2048, 2049, 4097, 100000];
    check_at(&mut s, &sizes, &f32_sums, ElemType::F32, false);
    // f64 items (keys of integers: f64 keys still group by `k⍳k`).
    let f64_sums = ["(⌊x){+/⍵}⌸y", "(x>0){⍺,+/⍵}⌸y", "(⌊x÷10){+/⍵}⌸y×1e300"];
    check_at(&mut s, &sizes, &f64_sums, ElemType::F64, false);
    s.set_float(ElemType::F32);
    let mut cpu = arrc_ref::Env::default();
    for e in [
        // A group of small items sorted after one of large ones: each group's sum
        // is its own (a difference of a float `+\` would give 0 for the second).
        "(100000⍴1 2){+/⍵}⌸100000⍴1e33 0.25",
        "(100000⍴2 1){⍺,+/⍵}⌸100000⍴1e33 0.25",
        // One group over every tile; a group to a tile; a group per item.
        "(100000⍴5){+/⍵}⌸100000⍴0.25 ¯0.5 2",
        "(⌊(⍳100000)÷2048){+/⍵}⌸100000⍴0.25 ¯0.5 2",
        "(⌽⍳100000){⍺,+/⍵}⌸0.5×⍳100000",
        // A total beyond f32 is a DOMAIN ERROR; a run's running sum beyond it whose
        // total is not, is not (also across a tile's end).
        "(1 1 2){+/⍵}⌸3e38 3e38 1",
        "(1 1 1 2){+/⍵}⌸3e38 3e38 ¯3e38 1",
        "(5000⍴1){+/⍵}⌸(2046⍴0),3e38 3e38 ¯3e38,2951⍴0",
        "(5000⍴1 2){+/⍵}⌸5000⍴3e38",
    ] {
        agree(&mut s, &mut cpu, e, 100000, 0.0);
        s.compile(e).unwrap_or_else(|err| panic!("{e}: {err}"));
    }
    // Runs that start on each tile's first element.
    let e = "(⌊(¯1+⍳100000)÷2048){⍺,+/⍵}⌸100000⍴0.25 ¯0.5 2";
    agree(&mut s, &mut cpu, e, 100000, 0.0);
    // Three levels of tiles: 2048² elements and more.
    let e = "(4194305⍴⍳3){⍺,+/⍵}⌸4194305⍴0.25 0.5 ¯1";
    agree(&mut s, &mut cpu, e, 4194305, 0.0);
    // Within the 16 KiB of workgroup memory every device has, 8-byte values (f64
    // items, and every level of f32 items but the first) are stored directly, not
    // through workgroup memory.
    s.tune(arrc::Tuning {
        max_shared_bytes: Some(16 << 10),
        ..Default::default()
    });
    let plan = s
        .compile("(⌊(⍳100000)÷7){+/⍵}⌸0.5×⍳100000")
        .expect("compiles")
        .plan_text();
    assert!(plan.contains("staged: false"), "{plan}");
    for e in [
        "(100000⍴1 2){+/⍵}⌸100000⍴1e33 0.25",
        "(⌊(¯1+⍳100000)÷2048){⍺,+/⍵}⌸100000⍴0.25 ¯0.5 2",
        "(5000⍴1){+/⍵}⌸(2046⍴0),3e38 3e38 ¯3e38,2951⍴0",
    ] {
        agree(&mut s, &mut cpu, e, 100000, 0.0);
    }
    check_at(&mut s, &[2049, 100000], &f64_sums, ElemType::F64, false);
    s.tune(arrc::Tuning::default());
}

/// The kinds of a statement's kernels, by name (`HashInsert`, `RadixScatter`, …).
fn kernel_kinds(s: &mut Session, e: &str) -> Vec<String> {
    let c = s.compile(e).unwrap_or_else(|err| panic!("{e}: {err}"));
    c.plan
        .kernels
        .iter()
        .map(|k| {
            let d = format!("{:?}", k.kind);
            d[..d.find([' ', '{', '(']).unwrap_or(d.len())].to_string()
        })
        .collect()
}

#[test]
fn searches_by_hashing_on_the_device() {
    // `x⍳y` and `y∊x` of integers and booleans build a hash table of x (its keys
    // claimed with compare-exchange, x⍳y's least index by an atomic max) and probe
    // it: key 0 (the empty slot's mark) is kept apart, and ¯1, ±2^31 edges, runs of
    // one key (every invocation racing for one slot) and absent needles are all
    // answered as the reference does, at sizes around a subgroup and a workgroup.
    let mut s = gpu();
    let exprs = [
        "x⍳y",
        "y⍳x",
        "x⍳x",
        "x∊y",
        "y∊x",
        "(0×x)⍳y",
        "(x×0)∊y",
        "(5+0×x)⍳y",
        "(x>0)⍳y>0",
        "(y>0)∊x>0",
        "(x>0)⍳1 0",
        "(0↑x)⍳y",
        "x⍳0↑y",
        "(0↑x)∊y",
        "(⌽x)⍳y",
        "(1000|x×1000003)⍳1000|y×1000003",
        "(¯1+0×x)⍳¯1 0 1",
    ];
    let mut rng = rand::rngs::StdRng::seed_from_u64(0x4a54);
    let edges = [0, -1, 1, i32::MIN, i32::MAX, i32::MIN + 1, i32::MAX - 1];
    for &n in &[0usize, 1, 7, 8, 9, 31, 32, 33, 255, 256, 257, 4097, 20011] {
        for range in [3i32, 1000, i32::MAX] {
            let draw = |rng: &mut rand::rngs::StdRng| -> Vec<i32> {
                (0..n)
                    .map(|_| match rng.random_range(0..10) {
                        0 => edges[rng.random_range(0..edges.len())],
                        _ if range == i32::MAX => rng.random(),
                        _ => rng.random_range(-range..=range),
                    })
                    .collect()
            };
            let x = Array::vector(Data::I32(draw(&mut rng)));
            let y = Array::vector(Data::I32(draw(&mut rng)));
            let mut cpu = bind_both(&mut s, ElemType::I32, &[("x", &x), ("y", &y)]);
            // Tables with as few spare slots as may be (a quarter of the keys: long
            // runs of taken slots, which wrap past the last) and with many.
            for spare in [None, Some(1), Some(16)] {
                s.tune(arrc::Tuning {
                    hash_spare_quarters: spare,
                    ..Default::default()
                });
                for e in exprs {
                    agree(&mut s, &mut cpu, e, n, 1.0);
                }
            }
            s.tune(arrc::Tuning::default());
        }
    }
    // Which searches hash: 4-byte integers and booleans, and 64-bit integers only
    // where both sides are known to fit 32 bits; floats and intervals search sorted
    // keys. Hashing computes no grade.
    s.set("x", Array::vector(Data::I32(vec![3; 5000]))).unwrap();
    s.set("w", Array::vector(Data::I64(vec![3; 5000]))).unwrap();
    s.set("f", Array::vector(Data::F32(vec![3.0; 5000])))
        .unwrap();
    for (e, hashed) in [
        ("x⍳x", true),
        ("x∊x", true),
        ("(x>3)⍳x>4", true),
        ("(1000|w)⍳1000|w", true),
        ("(1000|w)⍳w", false),
        ("w⍳w", false),
        ("f⍳f", true),
        ("f∊f", true),
        ("(x[⍋x])⍸x", false),
    ] {
        let kinds = kernel_kinds(&mut s, e);
        let hashes =
            kinds.iter().any(|k| k == "HashInsert") && kinds.iter().any(|k| k == "HashProbe");
        assert_eq!(hashes, hashed, "{e}: {kinds:?}");
        if hashed {
            assert!(
                !kinds
                    .iter()
                    .any(|k| k.starts_with("Radix") || k == "SortStep" || k == "Search"),
                "{e} sorts: {kinds:?}"
            );
        }
    }
    // f64 keys match within ⎕CT: sorted and searched.
    s.set_float(ElemType::F64);
    s.set("d", Array::vector(Data::F64(vec![3.0; 5000])))
        .unwrap();
    assert!(!kernel_kinds(&mut s, "d⍳d")
        .iter()
        .any(|k| k == "HashInsert"));
    s.set_float(ElemType::F32);
    // f32 keys hash by their bits, -0 as 0: subnormals, ±0, the largest and the
    // least normal floats, runs of one value.
    let specials = [
        0.0f32,
        -0.0,
        1e-40,
        -1e-40,
        f32::MIN_POSITIVE,
        f32::MAX,
        f32::MIN,
        1.0,
        -1.0,
        1.0 + f32::EPSILON,
    ];
    for &n in &[1usize, 9, 33, 257, 4097] {
        let draw = |rng: &mut rand::rngs::StdRng| -> Vec<f32> {
            (0..n)
                .map(|_| match rng.random_range(0..4) {
                    0 => specials[rng.random_range(0..specials.len())],
                    1 => rng.random_range(-3..=3) as f32 * 0.5,
                    _ => rng.random_range(-100.0..100.0),
                })
                .collect()
        };
        let x = Array::vector(Data::F32(draw(&mut rng)));
        let y = Array::vector(Data::F32(draw(&mut rng)));
        let mut cpu = bind_both(&mut s, ElemType::F32, &[("x", &x), ("y", &y)]);
        // (No arithmetic on the subnormals: NVIDIA's f32 arithmetic flushes them,
        // with no DenormPreserve to ask for; loaded, they compare as they are.)
        for e in [
            "x⍳y",
            "y⍳x",
            "x⍳x",
            "x∊y",
            "y∊x",
            "(x×0)⍳y×0",
            "(0.5×⌊x)∊0.5×⌊y",
        ] {
            agree(&mut s, &mut cpu, e, n, 1.0);
        }
    }
    // Off, the same searches sort and agree.
    s.tune(arrc::Tuning {
        hash_search: Some(false),
        ..Default::default()
    });
    assert!(!kernel_kinds(&mut s, "x⍳x")
        .iter()
        .any(|k| k == "HashInsert"));
    s.tune(arrc::Tuning::default());
}

#[test]
fn hash_tables_within_one_storage_binding() {
    // A table of 4n words for x⍳y (2n slots for n keys) is made only where it fits
    // one storage binding: at lavapipe's 128 MiB that is n = 2^23, and one key more
    // is sorted and searched (the H200's 4 GiB range hashes both). Both answer the
    // same; a table past one binding was first bound short (its far slots read as
    // empty), then reached through windows at a branch per access (on the H200 3×
    // slower than sorting).
    let mut s = gpu();
    let limit = s.device().expect("a device").max_storage_buffer_range as u64;
    let window = 1u64 << (63 - limit.max(1 << 16).leading_zeros());
    for n in [1u64 << 23, (1 << 23) + 1] {
        for (e, want) in [
            (
                format!("(⌽⍳{n})⍳1 {n} 5 0 ¯1 {}", n + 1),
                format!("{n} 1 {} {} {} {}", n - 4, n + 1, n + 1, n + 1),
            ),
            (
                format!("(⌽0,⍳{})⍳0 1 {}", n - 1, n - 1),
                format!("{n} {} 1", n - 1),
            ),
            (
                format!("1 0 ¯1 {n} {}∊2×⍳{n}", 2 * n),
                format!("0 0 0 {} 1", (n % 2 == 0) as u8),
            ),
            (format!("+/(⍳{n})∊⌽⍳{n}"), format!("{n}")),
        ] {
            assert_eq!(arrc::display(&device_value(&mut s, &e)), want, "{e}");
        }
        let c = s.compile(&format!("(⌽⍳{n})⍳1 2")).unwrap();
        let hashed = c
            .plan
            .kernels
            .iter()
            .any(|k| matches!(k.kind, arrc_ir::plan::KernelKind::HashInsert { .. }));
        assert_eq!(hashed, 16 * n <= window, "n = {n}, window {window}");
    }
}

#[test]
fn interval_index_of_a_float_scan() {
    // The device adds a `+\` of floats in another order than the reference, and its
    // sums of items that are all at least 0 may fall back an ulp where the
    // reference's never do: `(+\w)⍸x` raised DOMAIN ERROR (⍺ not ascending) on
    // lavapipe (fuzzer seed 210, f64). Such an ⍺ counts as ascending; where an
    // addend is negative the order is checked as before.
    let mut s = gpu();
    let mut cpu = bind_both(&mut s, ElemType::F64, &[]);
    for expr in [
        "w←(10*?5000⍴18)÷7 ⋄ x←(?1000⍴1000000000)×4000000000 ⋄ +/(+\\w)⍸x",
        "w←1 ¯1 2 ⋄ (+\\w)⍸1.5",
        "w←1 ¯0.5 2 ⋄ (+\\w)⍸1.5 3.5",
        "w←0.5 0 2.25 ⋄ (+\\w)⍸0 0.5 1 3",
    ] {
        agree(&mut s, &mut cpu, expr, 0, 1.0);
    }
}
