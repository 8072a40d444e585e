//! Whole statements and programs: fusion, dfns, guards and recursion, statements
//! in stages, trains, operators, `⍣`, `⌹`, rank and nested arrays.

use super::*;

#[test]
fn fusion_counts() {
    // Kernel and readback counts, the way tinygrad counts kernels.
    let s = Session::new(Backend::Cpu).unwrap();
    let kernels = |e: &str| s.compile(e).unwrap().plan.kernels.len();
    assert_eq!(
        kernels("1+2×-⍳10"),
        1,
        "a chain of scalar functions is one kernel"
    );
    assert_eq!(
        kernels("+/(⍳10)×⍳10"),
        1,
        "the chain feeding +/ fuses into its load (one workgroup's pass: a short vector)"
    );
    assert_eq!(
        kernels("+/(⍳100000)×⍳100000"),
        2,
        "a long vector's fold: partials, then one workgroup folds them"
    );
    assert_eq!(
        kernels("+\\1+⍳10"),
        1,
        "a single-pass chained scan, its input fused into its load"
    );
    assert_eq!(
        kernels("+/((⍳10)-1)*2"),
        1,
        "(x-1)*2 is (x-1)×(x-1) inside the reduction's load: no temporary"
    );
    assert_eq!(kernels("+/2 50⍴⍳9"), 1, "one subgroup per row, one pass");
    assert_eq!(
        kernels("+⌿1000 8⍴⍳9"),
        2,
        "a long column fold in pieces, then the pieces"
    );
    assert_eq!(kernels("⍉⌽2 3⍴⍳6"), 1, "gathers fuse into one map");
    assert_eq!(kernels("+/⌽2 3⍴⍳6"), 1, "a gather fuses into a fold's load");
    assert_eq!(
        kernels("(2 3⍴⍳6)+.×3 2⍴⍳6"),
        1,
        "an inner product: both arguments spread and multiplied inside the fold"
    );
    assert_eq!(kernels("(⍳3)∘.×⍳4"), 1, "an outer product is one map");
    assert_eq!(
        kernels("{+/,⍵×⍵}⌺3 3⊢5 5⍴⍳25"),
        2,
        "the board once, then one stencil kernel: a 3×3 window's 8 shifted reads and its centre from the tile (PlanOptions::stencil_from)"
    );
    let mut unstaged = Session::new(Backend::Cpu).unwrap();
    unstaged.tune(arrc::Tuning {
        stencil_from: Some(16),
        ..Default::default()
    });
    assert_eq!(
        unstaged
            .compile("{+/,⍵×⍵}⌺3 3⊢5 5⍴⍳25")
            .unwrap()
            .plan
            .kernels
            .len(),
        1,
        "unstaged, nine shifted reads of the board (each used twice, read again for each use: a load) and the formula in one map"
    );
    assert_eq!(
        kernels("{+/,⍵×⍵}⌺5 5⊢5 5⍴⍳25"),
        2,
        "the board once, then one stencil kernel: its 25 shifted reads from the tile staged in workgroup memory (each used twice) and the formula"
    );
    assert_eq!(
        kernels("{c←⍵[2;2] ⋄ s←(+/,⍵)-c ⋄ (s=3)∨c∧s=2}⌺3 3⊢12<5 5⍴⍳25"),
        3,
        "Life's rule: the board, the neighbour counts (used twice), the rule"
    );
    let mut g = gpu();
    g.set("x", Array::vector(Data::F32(vec![1.0, 2.0])))
        .unwrap();
    g.eval("+/x×x").unwrap();
    assert_eq!(g.stats().readbacks, 1, "one readback: the result");
}

#[test]
fn dfn_operands() {
    // A dfn of scalar functions is the step of an exact right fold on the device
    // (`{⍺+⍵×2}/` is not associative), along either axis and as a scan; `∘.{…}` applies
    // it to the spread arguments.
    let mut s = gpu();
    const VECTORS: &[&str] = &[
        "{⍺+⍵×0.5}/x",
        "{⍺+⍵×2}/x÷1000",
        "{⍺-⍵÷2}/x",
        "{⍺⌈⍵-1}/x",
        "{⍺-⍵÷2}\\x",
        "{(⍺×2)+⍵}\\x÷1000",
        "{⍵}/x",
        "{⍺}/x",
        "x∘.{⍺+2×⍵}y",
        // Scalars computed from outside names, once, before the fold.
        "{⍺⌈⍵-⌈/y}/x",
        "{⍺-⍵÷1+|⌊/y}\\x",
        "{⍵×+/y}¨x",
        "x{⍺+⍵×y[1]}¨x",
        // Guards on scalars: selects, of which only the chosen side runs.
        "{⍵>0:⍺+⍵ ⋄ ⍺-⍵}/x",
        "{⍺>⍵:⍺-⍵ ⋄ ⍵-⍺}\\x",
        "{⍵=0:0 ⋄ 100÷⍵}¨x",
        "x∘.{⍺>⍵:⍺ ⋄ ⍵}y",
        "{⍵=0:⍺ ⋄ ⍺+1÷⍵}/x",
    ];
    // (`{⍺+⍵×2}` doubles per item: 33 items stay inside f32 and i64.)
    check_at(&mut s, &[1, 2, 7, 33], VECTORS, ElemType::I32, false);
    check_at(&mut s, &[1, 2, 7, 33], VECTORS, ElemType::F32, false);
    check_at(&mut s, &[300], &VECTORS[..1], ElemType::F32, false);
    check_at(&mut s, &[300], &VECTORS[2..], ElemType::I32, false);
    check_shaped(
        &mut s,
        &[5, 7],
        ElemType::I32,
        &["{⍺-⍵÷2}/m", "{⍺-⍵÷2}⌿m", "{⍺⌈⍵-1}\\m", "{⍺+⍵}⍀m"],
    );
    for expr in ["{⍺+⍵×2}/5", "{⍺+⍵×2}\\5"] {
        let o = s.eval(expr).unwrap_or_else(|e| panic!("{expr}: {e}"));
        assert_eq!(arrc::display(&o.value.expect("a value")), "5", "{expr}");
    }
    let e = s.eval("{⍺+⍵×2}/⍬").expect_err("no identity");
    assert_eq!(e.class, arrc::ErrorClass::Domain);
    // The outside value is computed as often as the operand runs: not at all for one
    // item, and its error when it does run.
    s.set("v", Array::vector(Data::I32(vec![0]))).unwrap();
    let one = device_value(&mut s, "{⍺+⍵÷+/v}/,7");
    assert_eq!(arrc::display(&one), "7");
    let e = s.eval("{⍺+⍵÷+/v}/7 8").expect_err("÷0");
    assert_eq!(e.class, arrc::ErrorClass::Domain);
    let none = device_value(&mut s, "⍴{⍵÷+/v}¨⍳0");
    assert_eq!(arrc::display(&none), "0");
    // A guarded operand runs in one statement on the device, not once per item from
    // the host; the side not chosen raises nothing.
    s.set("x", Array::vector(Data::I32(vec![4, 0, -2, 0, 8])))
        .unwrap();
    let before = s.stats().readbacks;
    let r = device_value(&mut s, "{⍵=0:0 ⋄ 8÷⍵}¨x");
    assert_eq!(arrc::display(&r), "2 0 ¯4 0 1");
    assert_eq!(s.stats().readbacks - before, 1);
    let e = s.eval("{⍵≠0:0 ⋄ 8÷⍵}¨x").expect_err("÷0 is chosen");
    assert_eq!(e.class, arrc::ErrorClass::Domain);
}

#[test]
fn guards_and_recursion_on_the_device() {
    // A dfn with guards or ∇ runs from the host: every value (conditions included) is
    // computed on the device, and the host reads back one number per guard.
    let mut s = gpu();
    s.eval("fact←{⍵≤1:1 ⋄ ⍵×∇ ⍵-1} ⋄ fib←{⍵≤2:1 ⋄ (∇ ⍵-1)+∇ ⍵-2}")
        .expect("definitions");
    for (expr, want) in [
        ("fact 10", "3628800"),
        ("fib 12", "144"),
        ("fact¨⍳5", "1 2 6 24 120"),
        ("1 2 3{⍺>⍵:⍺ ⋄ ⍵}¨3 2 1", "3 2 3"),
        ("+/fib¨1+⍳6", "32"),
        ("{⍵>0:1 ⋄ ⍵<0:¯1 ⋄ 0}¯2.5", "¯1"),
        ("{a←⍵×2 ⋄ a>5:a ⋄ ∇ a}1", "8"),
        ("x←fact 4 ⋄ x+1", "25"),
        // A hosted call's argument computed by another (its result a named temporary).
        ("fact fact 3", "720"),
        ("{⍵≤1:⍵ ⋄ 2×⍵}{⍵≤1:⍵ ⋄ 2×⍵}3", "12"),
        // Names resolve lexically: a workspace function does not see the locals of
        // the dfn that calls it; a dfn written inside one does.
        ("n←100 ⋄ f←{⍵+n} ⋄ g←{n←⍵ ⋄ ⍵≤0:0 ⋄ f n} ⋄ g 5", "105"),
        ("n←100 ⋄ g←{n←⍵ ⋄ h←{⍵+n} ⋄ ⍵≤0:0 ⋄ (h 1)+∇ ⍵-1} ⋄ g 3", "9"),
        (
            "x←7 ⋄ f←{⍵×x} ⋄ g←{x←⍵ ⋄ ⍵≤0:f 1 ⋄ (f x)+∇ ⍵-1} ⋄ g 3",
            "49",
        ),
    ] {
        let before = s.stats();
        assert_eq!(arrc::display(&device_value(&mut s, expr)), want, "{expr}");
        assert!(
            s.stats().dispatches > before.dispatches,
            "{expr} ran no kernel"
        );
    }
    // Operators whose dfn operand computes arrays from its arguments, which no
    // kernel step holds, apply it item by item from the host.
    for (expr, want) in [
        ("{+/⍺,⍵}/3 1 4 1 5", "14"),
        ("{⌈/⍺ ⍵}\\3 1 4 1 5", "3 3 4 4 5"),
        ("{⍺+⍵×+/⍳⍵}/3 1 4", "35304"),
        ("{-/⍺,⍵}\\2 3⍴⍳6", "1 ¯1 2\n4 ¯1 5"),
        ("{+/⍳⍵}¨3 1 4", "6 1 10"),
        ("⍴{+/⍺,⍵}/0 3⍴0", "0"),
        ("1 2∘.{+/⍺,⍵}1 2", "2 3\n3 4"),
        ("(2 3⍴⍳6){+/⍺,⍵}.×3 2⍴⍳6", "22 28\n49 64"),
        ("1 2+.{+/⍺,⍵}1 2", "6"),
        ("¯3{-/⍺,⍵}/1 2 3 4", "2 3"),
        ("{+/⍺,⍵}/[1]2 3⍴⍳6", "5 7 9"),
        ("{⍵>1:⍺+⍵ ⋄ +/⍺,⍵}/1 2 3", "6"),
    ] {
        let before = s.stats().readbacks;
        assert_eq!(arrc::display(&device_value(&mut s, expr)), want, "{expr}");
        assert!(
            s.stats().readbacks - before > 1,
            "{expr}: one call per item"
        );
    }
    let e = s.eval("{+/⍺,⍵}/⍬").expect_err("no identity");
    assert_eq!(e.class, arrc::ErrorClass::Domain);
    let e = s
        .eval("{⍵:1 ⋄ 0}1 0")
        .expect_err("a guard needs one boolean");
    assert_eq!(e.class, arrc::ErrorClass::Domain);
    assert_eq!(e.span, 1..4, "the error points at the condition (⍵)");
    // Recursion deeper than the device path follows is a clear error, not a crash.
    let e = s.eval("{⍵≤0:0 ⋄ ∇ ⍵-1}5000").expect_err("too deep");
    assert_eq!(e.class, arrc::ErrorClass::Unsupported);
    assert!(e.message.contains("deeper"), "{}", e.message);
}

#[test]
fn statements_in_stages() {
    // Shapes computed on the device, and arrays whose lengths the device computes
    // where a later function needs them known: those parts run first, their values
    // are read back, and the rest runs with them known. Every value comes from the
    // device; each stage is one more readback.
    let mut rng = rand::rngs::StdRng::seed_from_u64(0x57a6);
    let mut s = gpu();
    let x = random(&mut rng, ElemType::I32, 1000, false);
    s.set("x", x.clone()).unwrap();
    let mut cpu = arrc_ref::Env::default();
    cpu.arrays.insert("x".into(), x);
    for (expr, stages) in [
        ("(+/x>500)⍴2", 2),
        ("(⌈/x)↑⍳10", 2),
        ("⍳+/x>900", 2),
        ("⍋(x>100)/x", 2),
        // Counts the IR bounds (`2|`) stay on the device, for `/` and `⍸`; x's are
        // read back.
        ("(2|10↑x)/10↑x", 1),
        ("(10↑x)/10↑x", 2),
        ("((x>0)/x)⍳x", 2),
        ("(⌊/|x)+/x", 2),
        ("⍸2|10↑x", 1),
        ("⍸|10↑x", 2),
        ("+/[1+0×⌈/x]x", 2),
        ("((⍳3)÷1)⌽3 4⍴x", 2),
        ("1.0 2 3⌽3 4⍴x", 1),
    ] {
        let prog = arrc_syntax::parse_str(expr).unwrap();
        let want = arrc_ref::eval_program(&prog, &mut cpu).unwrap().unwrap();
        let before = s.stats();
        let o = s.eval(expr).unwrap_or_else(|e| panic!("{expr}: {e}"));
        assert!(o.notes.is_empty(), "{expr}: {:?}", o.notes);
        assert_close(expr, 1000, &o.value.expect("a value"), &want, 1.0);
        assert_eq!(s.stats().readbacks - before.readbacks, stages, "{expr}");
    }
    // A stage's own error is the statement's.
    let e = s
        .eval("(x>0)/(x>1)/x")
        .expect_err("counts of the wrong length");
    assert_eq!(e.class, arrc::ErrorClass::Length);
    for expr in ["((⍳3)÷2)⌽3 4⍴x", "1.5⌽x"] {
        let e = s.eval(expr).expect_err(expr);
        assert_eq!(e.class, arrc::ErrorClass::Domain, "{expr}");
    }
}

#[test]
fn inner_assignments() {
    // An assignment inside a statement runs first when nothing APL evaluates before
    // it (to its right) reads its name: the name is bound, then the rest runs.
    let mut s = gpu();
    for (prog, want) in [
        ("x←⍳5 ⋄ (n←2)⍴x", "1 2"),
        ("x←⍳5 ⋄ z←(n←3)↑x ⋄ z,n", "1 2 3 3"),
        ("n←1 ⋄ n+(n←2)×10", "22"),
        ("y←(a←3)+b←4 ⋄ y,a,b", "7 3 4"),
        ("+/v×(v←⍳4)", "30"),
        // Read before it is assigned (to its right), or by its own value: those
        // reads see the old value, later ones the new.
        ("n←1 ⋄ r←(n←2)+n ⋄ r,n", "3 2"),
        ("x←5 ⋄ r←(x←x+1)×x ⋄ r,x", "30 6"),
        ("x←5 ⋄ r←x+(x←1)+(y←x)+x ⋄ r,x,y", "12 1 5"),
        ("x←5 ⋄ r←(x←2)+(x←x+1)+x ⋄ r,x", "13 2"),
        ("x←1 2 3 ⋄ r←x[2]+(x←10 20 30)[1]+x[3] ⋄ r,x", "33 10 20 30"),
        ("n←3 ⋄ z←(n←n-1)⍴⍳5 ⋄ z,n", "1 2 2"),
        ("f←{⍵+x} ⋄ x←1 ⋄ (x←10)+f 1", "12"),
        ("f←{⍵+x} ⋄ x←1 ⋄ (f 1)+x←10", "21"),
        // A function that cannot read the name may follow a renamed assignment.
        ("g←{⍵×2} ⋄ x←1 ⋄ r←(g 1)+(x←10)+x ⋄ r,x", "13 10"),
        ("x←1 ⋄ r←({⍵×2}1)+(x←10)+x ⋄ r,x", "13 10"),
    ] {
        assert_eq!(arrc::display(&device_value(&mut s, prog)), want, "{prog}");
    }
    // After an error, the assignments APL made before meeting it stay.
    s.eval("q←0").expect("q");
    let e = s.eval("(q←5)+1 2+1 2 3").expect_err("length");
    assert_eq!(e.class, arrc::ErrorClass::Length);
    assert_eq!(s.get("q").map(arrc::display).as_deref(), Some("0"));
    let e = s.eval("q×(q←1 2 3)+1 2").expect_err("length");
    assert_eq!(e.class, arrc::ErrorClass::Length);
    assert_eq!(s.get("q").map(arrc::display).as_deref(), Some("1 2 3"));
    let e = s.eval("(q←9)+q÷0").expect_err("domain");
    assert_eq!(e.class, arrc::ErrorClass::Domain);
    assert_eq!(s.get("q").map(arrc::display).as_deref(), Some("1 2 3"));
    // A function called after it could read either value: refused, and nothing is
    // assigned.
    let e = s
        .eval("f←{⍵+x} ⋄ x←1 ⋄ (f 1)+(x←10)+x")
        .expect_err("f may read x");
    assert_eq!(e.class, arrc::ErrorClass::Unsupported);
    assert_eq!(s.get("x").map(arrc::display).as_deref(), Some("1"));
    // A statement that leaves the device runs whole on the reference, from the
    // values before it.
    let mut auto = Session::new(arrc::Backend::Auto).expect("session");
    let o = auto
        .eval("x←5 ⋄ r←(x←x+1)+{⍵>0:⍺+⍵ ⋄ ⍺-⍵}/1 2 3 ⋄ r,x")
        .expect("falls back");
    assert_eq!(arrc::display(&o.value.expect("a value")), "12 6");
}

#[test]
fn trains_on_the_device() {
    // Tacit functions compile like the dfns they stand for: atops, forks (with an
    // array as the left tine), nested trains, ⊢ ⊣, `/⍨`, `∘` (bound arrays and
    // composition) and `⍣` with a known count (inlined), monadic and dyadic,
    // fused into the device's kernels (no statement falls back to the reference).
    let mut s = gpu();
    let trains = [
        "(+/÷≢) x",
        "(⌈/-⌊/) x",
        "(2×+) x",
        "x (2×+) y",
        "x (⊢×⊣) y",
        "x (+,-) y",
        "(-,÷) 1+|x",
        "(⊢-+/÷≢) x",
        "(+ (- × ⌈)) x",
        "x (⌈/+) y",
        "((+/)×(⌈/)) x",
        "x/⍨x>0",
        "{⍵/⍨⍵>2} x",
        "+/(x>0) (⊣×⊢) y",
        "2∘×x",
        "×∘2⊢x",
        "x -∘| y",
        "(+/÷≢)∘|x",
        "+/∘(2∘×)x",
        "1 2 3∘.+x",
        "(×∘2)⍣3⊢x",
        "x +⍣2 y",
        "+\\⍣2⊢x",
        "{⍵-1}⍣0⊢x",
    ];
    for ty in [ElemType::I32, ElemType::F32] {
        check_at(&mut s, &[1, 33, 4097], &trains, ty, false);
    }
}

#[test]
fn operators_of_the_users_on_the_device() {
    // A dop's body is inlined with its operands bound (captured where they are
    // written), so it fuses like a dfn: no statement falls back to the reference.
    let mut s = gpu();
    let exprs = [
        "+{⍺⍺/⍵}x",
        "x ×{⍺ ⍺⍺ ⍵} y",
        "(×∘2){⍺⍺ ⍺⍺ ⍵}x",
        "-{⍺⍺ ⍵⍵ ⍵}|x",
        "(×∘2){⍺⍺⍣⍵⍵⊢⍵}3⊢x",
        "k←3 ⋄ (k∘+){⍺⍺ ⍵}x",
        "{⍵×⍵}{⍺⍺¨⍵}x",
        "x +{⍺⍺/⍺,⍵}⍨ y",
    ];
    for ty in [ElemType::I32, ElemType::F32] {
        check_at(&mut s, &[1, 33, 4097], &exprs, ty, false);
    }
}

#[test]
fn power_until_on_the_device() {
    // `f⍣g` with a function right operand: each step and each test runs on the
    // device, the host reads the test's one boolean back and decides.
    let mut s = gpu();
    let exprs = [
        "{⌊⍵÷2}⍣≡|x",
        "{⍵×2}⍣{∧/⍺>1000}1+|x",
        "3 {⍺+⍵÷2}⍣{(⌈/|⍺-⍵)<0.01} |x",
        "+/{0⌈⍵-1}⍣≡ x",
    ];
    for ty in [ElemType::I32, ElemType::F32] {
        check_at(&mut s, &[1, 33, 4097], &exprs, ty, false);
    }
}

#[test]
fn domino_on_the_device() {
    // `⌹` by Householder QR in f64 on the device (panels of columns, then back
    // substitution), as the reference computes it: inverses, solutions, least
    // squares of tall matrices, at sizes around the subgroup and workgroup, with
    // panels of the default width, of one column, of three (sizes not a multiple
    // of them) and wider than the matrix; a singular matrix and a wide one are
    // DOMAIN ERRORs from the device.
    let mut s = gpu();
    let runs: [(Option<u32>, &[usize]); 4] = [
        (None, &[1, 7, 8, 9, 33, 100, 257]),
        (Some(1), &[9, 33]),
        (Some(3), &[8, 9, 100]),
        (Some(16), &[8, 9, 33]),
    ];
    for (block, sizes) in runs {
        s.tune(arrc::Tuning {
            qr_block: block,
            ..Default::default()
        });
        for ty in [ElemType::F32, ElemType::F64] {
            for &n in sizes {
                let mut rng = rand::rngs::StdRng::seed_from_u64(0xd0 ^ n as u64);
                let m = random_shaped(&mut rng, ty, &[n, n]);
                let mut cpu = bind_both(&mut s, ty, &[("m", &m)]);
                let exprs = [
                    "⌹m+1000×(⍳≢m)∘.=⍳≢m",
                    "(⍳≢m)⌹m+1000×(⍳≢m)∘.=⍳≢m",
                    "(2 3⍴⍳6)⌹⍉(m+1000×(⍳≢m)∘.=⍳≢m)[;⍳2]",
                    "(m⍪m)⌹(m+1000×(⍳≢m)∘.=⍳≢m)⍪m",
                ];
                for expr in exprs {
                    let prog = arrc_syntax::parse_str(expr).expect("parses");
                    let c = arrc_ref::eval_program(&prog, &mut cpu);
                    let g = s.eval(expr);
                    let (g, c) = match (g, c) {
                        (Ok(g), Ok(c)) => {
                            assert!(g.notes.is_empty(), "{expr} n={n}: {:?}", g.notes);
                            (g.value.expect("a value"), c.expect("a value"))
                        }
                        (Err(g), Err(c)) => {
                            assert_eq!(g.class, c.class, "{expr} n={n}");
                            continue;
                        }
                        (g, c) => panic!("{expr} n={n} {ty}: gpu {g:?} cpu {c:?}"),
                    };
                    assert_eq!((&g.shape, g.elem), (&c.shape, c.elem), "{expr} n={n}");
                    let big = (0..c.len())
                        .map(|i| c.data.get(i).as_f64().abs())
                        .fold(0.0, f64::max);
                    let tol = if ty == ElemType::F64 { 1e-11 } else { 1e-5 } * big.max(1e-30);
                    for i in 0..c.len() {
                        let (a, b) = (g.data.get(i).as_f64(), c.data.get(i).as_f64());
                        assert!(
                            (a - b).abs() <= tol,
                            "{expr} n={n} {ty} item {i}: gpu {a} cpu {b}"
                        );
                    }
                }
            }
        }
    }
    for (expr, class) in [
        ("⌹2 2⍴1 2 2 4", arrc::ErrorClass::Domain),
        ("x←100 100⍴1 ⋄ ⌹x", arrc::ErrorClass::Domain),
        ("x←100 101⍴⍳7 ⋄ ⌹x", arrc::ErrorClass::Domain),
        ("x←100 100⍴⍳7 ⋄ (⍳99)⌹x", arrc::ErrorClass::Length),
        ("⌹2 2 2⍴1", arrc::ErrorClass::Rank),
    ] {
        let err = s.eval(expr).expect_err(expr);
        assert_eq!(err.class, class, "{expr}: {err}");
    }
}

#[test]
fn rank_of_other_functions_cell_by_cell() {
    // `f⍤k` that no kernel maps over cells runs from the host: one device call per
    // cell (`⍤`'s frames and mix as on the reference), never the CPU reference.
    let mut s = gpu();
    let exprs = [
        "{⍵[⍋⍵]}⍤1⊢m",
        "(⊢,+/)⍤1⊢m",
        "{⍵⍳⌈/⍵}⍤1⊢m",
        "{(2×≢⍵)⍴⍵}⍤1⊢m",
        "(⌊m[;1]){⍺⌽⍵}⍤0 1⊢m",
        "{⍉⍵}⍤2⊢2 2 3⍴m",
    ];
    for ty in [ElemType::I32, ElemType::F32] {
        check_shaped(&mut s, &[3, 4], ty, &exprs[..4]);
        check_shaped(&mut s, &[5, 9], ty, &exprs);
    }
}

/// Nested arrays on the device (issue 17, item 3): a nested array whose items share a
/// shape is one dense array, and `¨ ∘. / .` and pervasion over it compile to flat
/// kernels. Each expression runs with no step on the CPU and equals the reference, on
/// boolean boards of awkward shapes (subgroup and workgroup sizes around them).
#[test]
fn nested_arrays_on_the_device() {
    const LIFE: &str = "{⊃1 ⍵∨.∧3 4=+⌿,1 0 ¯1∘.⊖1 0 ¯1⌽¨⊂⍵}";
    let exprs = [
        format!("{LIFE}b"),
        format!("{LIFE}{LIFE}b"),
        "⊃+/1 ¯2 3⌽¨⊂b".to_string(),
        "⊃+⌿,0 1∘.⌽1 ¯1⊖¨⊂b".to_string(),
        "⊃(⊂b)+⊂⌽b".to_string(),
        "⊃1 2 3×⊂b".to_string(),
        "⊃-⊂b".to_string(),
        "⊃+/b b".to_string(),
        "⊃(b (⌽b))+.×2 3".to_string(),
        // More items than are held one by one: a dense array of higher rank.
        "⊃+/(⍳70)⌽¨⊂b".to_string(),
        "⊃+⌿(⍳70)×⊂b".to_string(),
        "⊃+/,(⍳9)∘.⊖(⍳8)⌽¨⊂b".to_string(),
        "⊃-(⍳65)+⊂b".to_string(),
        "⊃⌽+\\⍤1¨⊂b".to_string(),
    ];
    let mut s = gpu();
    let mut rng = rand::rngs::StdRng::seed_from_u64(17);
    for (r, c) in [
        (1, 1),
        (1, 5),
        (2, 2),
        (3, 3),
        (5, 7),
        (8, 8),
        (9, 9),
        (31, 33),
        (64, 65),
    ] {
        let data = Data::Bool((0..r * c).map(|_| rng.random_bool(0.4)).collect());
        let b = Array::new(vec![r, c], data);
        s.set("b", b.clone()).unwrap();
        let mut cpu = arrc_ref::Env::default();
        cpu.arrays.insert("b".into(), b);
        for expr in &exprs[..exprs.len() - 1] {
            let g = device_value(&mut s, expr);
            let prog = arrc_syntax::parse_str(expr).expect("parses");
            let want = arrc_ref::eval_program(&prog, &mut cpu)
                .expect("cpu")
                .expect("a value");
            assert_eq!(g, want, "{expr} on a {r}×{c} board");
        }
        // A function the GPU path does not apply to nested arrays is NOT YET SUPPORTED
        // there (the default backend hands such a statement to the reference).
        let expr = exprs.last().unwrap();
        let e = s.eval(expr).unwrap_err();
        assert_eq!(e.class, arrc::ErrorClass::Unsupported, "{expr}: {e}");
    }
    // Life on an 8192² board compiles to three kernels.
    let kernels = s
        .compile(&format!("{LIFE}8192 8192⍴1 0 0 1 1"))
        .unwrap()
        .plan
        .kernels
        .len();
    assert!(kernels <= 3, "Life compiles to {kernels} kernels");
}

#[test]
fn a_small_arrays_values_are_part_of_its_compiled_statement() {
    // Arrays of at most 64 items are compiled into a statement's kernels as
    // constants, so their values are part of the compiled statement's cache key
    // (their bytes): the same text over other values must compile again.
    let mut s = gpu();
    let mut cpu = Session::new(Backend::Cpu).unwrap();
    let cases = [
        Data::F32(vec![1.5, 2.5]),
        Data::F32(vec![1.5, 3.5]),
        Data::F32(vec![1.5, 3.500_000_2]),
        Data::I32(vec![1, 2]),
        Data::I32(vec![1, 3]),
        Data::I32(vec![1, 2 + (1 << 16)]),
        Data::Bool(vec![true, false]),
        Data::Bool(vec![false, true]),
    ];
    for data in cases {
        let what = format!("{data:?}");
        for t in [&mut s, &mut cpu] {
            t.set("x", Array::vector(data.clone())).unwrap();
        }
        for expr in ["0.5++/x", "+/x×⍳2", "x/10 20"] {
            match (s.eval(expr), cpu.eval(expr)) {
                (Ok(g), Ok(c)) => {
                    assert!(g.notes.is_empty(), "{expr} of {what}: {:?}", g.notes);
                    assert_eq!(g.value, c.value, "{expr} of {what}");
                }
                (Err(g), Err(c)) => assert_eq!(g.class, c.class, "{expr} of {what}"),
                (g, c) => panic!("{expr} of {what}: device {g:?}, reference {c:?}"),
            }
        }
    }
}
