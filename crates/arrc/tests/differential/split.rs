//! Statements over arrays split across two devices (`shard.rs`).

use super::*;

/// Statements over arrays split across devices (`shard.rs`), with whether each
/// runs split (`true`) or gathers its arrays first.
const SPLIT: &[(&str, bool)] = &[
    ("x×2+y", true),
    ("+/x", true),
    ("⌈/x", true),
    ("⌊/y", true),
    ("+/x×y", true),
    ("∨/x>50", true),
    ("+\\x", true),
    ("⌈\\x", true),
    ("⌊\\y", true),
    ("+\\x>0", true),
    ("(x>0)/y", true),
    ("+/(x>0)/y", true),
    ("x-(+/x)÷≢x", true),
    ("(+/x)÷≢x", true),
    ("x÷y", true),
    ("¯3↑x", false),
    ("⍋x", false),
    ("x[≢x]", false),
];

#[test]
fn split_across_two_devices_agrees_with_the_reference() {
    // lavapipe opened twice: two VkDevices, each with its own queue and pipelines.
    let mut s = Session::with_devices(Backend::Vulkan, &[0, 0]).expect("a Vulkan device");
    assert_eq!(s.device_count(), 2);
    s.set_split_from(2);
    for ty in [ElemType::I32, ElemType::F32, ElemType::I64, ElemType::F64] {
        let mut rng = rand::rngs::StdRng::seed_from_u64(0xd1ce ^ ty as u64);
        for &n in SIZES {
            let (x, y) = (
                random(&mut rng, ty, n, false),
                random(&mut rng, ty, n, false),
            );
            s.set_float(float_of(ty));
            let mut cpu = arrc_ref::Env {
                float: float_of(ty),
                ..Default::default()
            };
            for (name, a) in [("x", &x), ("y", &y)] {
                cpu.arrays.insert(name.into(), a.clone());
            }
            let scale = (sum_abs(&x) + sum_abs(&y)) * 4.0 + 1.0;
            for &(expr, splits) in SPLIT {
                // Fresh arrays each time: a statement that gathers leaves them whole.
                s.set("x", x.clone()).unwrap();
                s.set("y", y.clone()).unwrap();
                let before = s.stats().split_statements;
                agree(&mut s, &mut cpu, expr, n, scale);
                let split = s.stats().split_statements > before;
                // Arrays of one row stay whole; so do statements the split path refuses.
                assert_eq!(
                    split,
                    splits && n >= 2,
                    "{expr} n={n} {ty}: ran split {split}"
                );
            }
        }
    }
}

#[test]
fn split_matrices_products_and_generated_rows() {
    let mut s = Session::with_devices(Backend::Vulkan, &[0, 0, 0]).expect("a Vulkan device");
    assert_eq!(s.device_count(), 3);
    s.set_split_from(3);
    let mut rng = rand::rngs::StdRng::seed_from_u64(0x3d);
    // One reference for all: its generator moves on with the session's.
    let mut cpu = arrc_ref::Env::default();
    for rows in [3, 4, 8, 9, 33, 257, 4097] {
        let m = random(&mut rng, ElemType::F32, rows * 3, false);
        let m = Array::new(vec![rows, 3], m.data);
        let b = random(&mut rng, ElemType::F32, 6, false);
        let b = Array::new(vec![3, 2], b.data);
        let v = random(&mut rng, ElemType::I32, 3, false);
        let x = random(&mut rng, ElemType::I32, rows, false);
        for (name, a) in [("M", &m), ("B", &b), ("v", &v), ("x", &x)] {
            cpu.arrays.insert(name.into(), a.clone());
            s.set(name, a.clone()).unwrap();
        }
        let n = rows as i64;
        cpu.arrays
            .insert("n".into(), Array::scalar(arrc::Scalar::I64(n)));
        s.set("n", Array::scalar(arrc::Scalar::I64(n))).unwrap();
        let scale = sum_abs(&m) * 40.0 + 1.0;
        // (A fold of rows made from scalars alone reads no memory: one device does it.)
        for (expr, splits) in [
            ("+/M", true),
            ("+⌿M", true),
            ("⌈⌿M", true),
            ("⌽M", true),
            ("M×2", true),
            ("M+.×B", true),
            ("+/M+.×B", true),
            ("x∘.×v", true),
            ("+⌿x∘.×v", true),
            ("(⍳n)×2", true),
            ("+\\⍳n", true),
            ("+/⍳n", false),
            ("+/(2|⍳n)/⍳n", false),
            ("+/x×⍳n", true),
            // Each piece draws from its first row's place in the sequence: the same
            // numbers as one device and the reference draw (⎕IO unmoved for `?`).
            ("x×?n⍴6", true),
            ("(?n⍴0)×2", true),
            ("+/?n⍴6", false),
            ("(⍳n)+?n⍴6", false),
        ] {
            let before = s.stats().split_statements;
            agree(&mut s, &mut cpu, expr, rows, scale);
            let split = s.stats().split_statements > before;
            assert_eq!(split, splits, "{expr} rows={rows}: ran split {split}");
        }
    }
}

#[test]
fn split_names_stay_on_their_devices_between_statements() {
    let mut s = Session::with_devices(Backend::Vulkan, &[0, 0]).expect("a Vulkan device");
    s.set_split_from(1000);
    // (`÷0.5` can fail, so `x` is computed, not kept as a recipe.) The folds'
    // values are held under names no APL text can write: a user's `⍙split1` stays.
    let o = s
        .eval("⍙split1←7 ⋄ n←100003 ⋄ x←(⍳n)÷0.5 ⋄ y←x×2 ⋄ z←y+1 ⋄ m←(+/z)÷n ⋄ d←z-m ⋄ ⌈/|d")
        .unwrap();
    assert_eq!(arrc::display(&o.value.unwrap()), "200004.02");
    assert_eq!(arrc::display(s.get("⍙split1").unwrap()), "7");
    for name in ["x", "y", "z", "d"] {
        assert!(s.is_split_array(name), "{name} was gathered");
    }
    // Rows made from scalars alone are a recipe, fused into the fold that reads them
    // (which one device does: it reads no memory).
    let before = s.stats();
    let o = s.eval("a←⍳n ⋄ b←a×2 ⋄ +/b+1").unwrap();
    assert_eq!(arrc::display(&o.value.unwrap()), "10000800015");
    let st = s.stats().since(&before);
    assert_eq!(
        (st.deferred, st.split_statements, st.kernels),
        (2, 0, 2),
        "{st:?}"
    );
    assert!(!s.is_split_array("m"));
    let st = s.stats();
    // Nothing split came from the host or moved between the devices.
    assert_eq!(st.moved_bytes, 0, "{st:?}");
    assert!(st.upload_bytes < 4096, "{st:?}");
    // A fold runs split first and the rest, which reads a recipe's scalar, on one
    // device (the scalar still bound then).
    let o = s.eval("w←⌈(⍳n)÷1 ⋄ a←⍳n ⋄ ¯3↑(+/w)+⌽a").unwrap();
    assert!(s.is_split_array("w"));
    assert_eq!(
        arrc::display(&o.value.unwrap()),
        "5000350009 5000350008 5000350007"
    );
    // Reading a split name gathers it, once.
    let z = s.get("z").unwrap().clone();
    assert_eq!(
        (z.shape.clone(), z.data.get(100002).as_f64()),
        (vec![100003], 400013.0)
    );
    assert!(!s.is_split_array("z"));
    // Assigning a name again drops its pieces; small results come back whole.
    let o = s.eval("x←3 ⋄ x+1").unwrap();
    assert_eq!(arrc::display(&o.value.unwrap()), "4");
    assert!(!s.is_split_array("x"));
    // An error on a device is APL's, as on one device.
    let e = s.eval("y÷y-4").unwrap_err();
    assert_eq!(e.class, arrc::ErrorClass::Domain, "{e}");
    assert!(s.is_split_array("y") || s.get("y").is_some());
}

#[test]
fn a_name_split_and_read_whole_in_one_statement_runs_as_on_one_device() {
    // Fuzzer finding (seed 84, index 1731 of `arrc fuzz --devices 0,0 --split-from
    // 2`): `b` was both split (the outer product's left) and copied whole to every
    // device (its right); copying gathered it back, and the split run then panicked.
    let mut s = Session::with_devices(Backend::Vulkan, &[0, 0]).expect("a Vulkan device");
    s.set_split_from(2);
    let o = s
        .eval("b←8⍴0 0 0 1 0 1 0 1 ⋄ a←((b)⍱b)∘.⍲b ⋄ +/,a")
        .expect("a value");
    assert_eq!(arrc::display(&o.value.unwrap()), "49");
}

#[test]
fn nested_and_mixed_names_are_never_split() {
    // Fuzzer findings (seed 167, indices 3401 and 1761 of `arrc fuzz --devices 0,0
    // --split-from 2`): a nested or mixed name long enough to split was split as if
    // its items were numbers, and the devices read garbage: false DOMAIN ERRORs.
    // (Nested values themselves are computed by the reference, as `Auto` does.)
    let mut s = Session::with_devices(Backend::Auto, &[0, 0]).expect("a Vulkan device");
    s.set_split_from(2);
    for (program, want) in [
        ("s←,1 ⋄ n←↓2 3⍴(a←s) ⋄ n-2", " ¯1 ¯1 ¯1  ¯1 ¯1 ¯1"),
        ("n←↓2 3⍴5 ⋄ n×n", " 25 25 25  25 25 25"),
        ("n←1 (2 3) ⋄ n+n", "2  4 6"),
        ("n←1 'a' 2 ⋄ (≢n),n≡n", "3 1"),
        ("n←(⊂1 2),⊂3 4 ⋄ m←2 2⍴⍳4 ⋄ +/¨n+m[1;]", "5 11"),
    ] {
        let before = s.stats().split_statements;
        let o = s
            .eval(program)
            .unwrap_or_else(|e| panic!("{program}: {e:?}"));
        assert_eq!(arrc::display(&o.value.unwrap()), want, "{program}");
        assert_eq!(s.stats().split_statements, before, "{program} ran split");
    }
}
