//! Compress, replicate, `⍸`, rotations, indexed assignment, stencils, and arrays
//! that need more than one binding or more bindings than a kernel has.

use super::*;

/// Compress with the result's length left on the device: later kernels read it there,
/// and the statement reads back once (result, status and length together).
#[test]
fn compress_on_the_device() {
    let mut s = gpu();
    const EXPRS: &[&str] = &[
        "(x>0)/x",
        "+/(x>0)/x",
        "+\\(x>0)/x",
        "⌽(x>0)/x",
        "2×(x<y)/x-y",
        "⌈/(x>50)/x",
        "{(⍵>10)/⍵}(x>0)/x",
        "3↑(x>0)/x",
        "(x=x)/x",
        "(x>1000)/x",
        "1 0 1/3↑x",
        // Masks and values that compute, fused (session 38).
        "((x|7)>1)/x",
        "((x×x)>x+1)/x-1",
        "+\\((|x)>5)/x×2",
        // Masks of one array read four at a time, the values another's or indices
        // (only the keep bits held through the lookback).
        "⍸x>0",
        "(x>0)/y",
        "⍸(x|7)>1",
        "+/⍸x<y",
        "(2|⌊x)/⍳≢x",
    ];
    // Sizes around the scan's tile (4096 by default) and a grid of several tiles;
    // arrays of whole tiles, whose last element a whole tile holds (its count is
    // looked for in the last round only).
    let sizes = &[0, 1, 7, 33, 257, 4095, 4096, 4097, 8192, 100003];
    check_at(&mut s, sizes, EXPRS, ElemType::F32, false);
    check_at(&mut s, sizes, EXPRS, ElemType::I32, false);
    // NVIDIA's tile (384 × 32), whose compaction takes 24 items an invocation, in
    // 6 staged rounds a tile: sizes around it (9216).
    let mut t = gpu();
    t.tune(arrc::Tuning {
        scan_workgroup_size: Some(384),
        scan_items_per_thread: Some(32),
        ..Default::default()
    });
    // Values of every width staged (booleans as words), and with 16 KiB of
    // workgroup memory 8-byte values stored directly (staging them would take 12
    // KiB beside the scan's totals).
    let sizes = &[9215, 9216, 9217, 3 * 9216 + 5];
    let more = ["(x>0)/x>50", "(x>0)/⌊x"];
    for ty in [ElemType::F32, ElemType::I32, ElemType::F64] {
        check_at(&mut t, sizes, EXPRS, ty, false);
        check_at(&mut t, sizes, &more, ty, false);
    }
    let plan = t.compile("(x>0)/x").unwrap().plan;
    assert!(plan.kernels.iter().any(|k| k.items_per_thread == 24));
    let staged = |s: &mut Session| {
        let plan = s.compile("(x>0)/x").unwrap().plan;
        plan.kernels.iter().find_map(|k| match &k.kind {
            arrc_ir::plan::KernelKind::ScanChained {
                compact: Some(c), ..
            } => Some(c.staged),
            _ => None,
        })
    };
    assert_eq!(staged(&mut t), Some(true));
    // NVIDIA's compaction tile (512 × 24, `compact_tile`; a tuned 512 × 32 gives
    // it everywhere): sizes around it (12288).
    let mut w = gpu();
    w.tune(arrc::Tuning {
        scan_workgroup_size: Some(512),
        scan_items_per_thread: Some(32),
        ..Default::default()
    });
    let sizes = &[12287, 12288, 12289, 2 * 12288, 3 * 12288 + 5];
    for ty in [ElemType::F32, ElemType::I32, ElemType::F64] {
        check_at(&mut w, sizes, EXPRS, ty, false);
    }
    // The default tile holds the values it reads (`compact_holds_values`); the
    // other way, holding the mask and reading the values again, at lavapipe's
    // tile and NVIDIA's, staged and not.
    let holds = |s: &mut Session| {
        let plan = s.compile("((x|7)>1)/x").unwrap().plan;
        plan.kernels.iter().find_map(|k| match &k.kind {
            arrc_ir::plan::KernelKind::ScanChained {
                compact: Some(c), ..
            } => Some(c.holds_values),
            _ => None,
        })
    };
    assert_eq!(holds(&mut t), Some(true));
    let configs: [(_, _, _, &[ElemType]); 3] = [
        (None, None, None, &[ElemType::F32, ElemType::I32]),
        (Some(384), Some(32), None, &[ElemType::F32, ElemType::F64]),
        (Some(384), Some(32), Some(14000), &[ElemType::I32]),
    ];
    for (wg, items, shared, types) in configs {
        let mut h = gpu();
        h.tune(arrc::Tuning {
            compact_holds_values: Some(false),
            scan_workgroup_size: wg,
            scan_items_per_thread: items,
            max_shared_bytes: shared,
            ..Default::default()
        });
        let sizes = [0, 9, 4097, 9217, 2 * 9216 + 5];
        for &ty in types {
            check_at(&mut h, &sizes, EXPRS, ty, false);
        }
        assert_eq!(holds(&mut h), Some(false));
    }
    t.tune(arrc::Tuning {
        scan_workgroup_size: Some(384),
        scan_items_per_thread: Some(32),
        max_shared_bytes: Some(16384),
        ..Default::default()
    });
    assert_eq!(staged(&mut t), Some(false), "f64 values in 16 KiB");
    check_at(&mut t, &[9217], EXPRS, ElemType::F64, false);
    // Masks that read the values at their own places (with the checks of `×` and
    // `+`), at others, and not at all, at NVIDIA's compaction tile: on the H200
    // `((x×x)>x+1)/x` of i64 values kept 766 of 9215 (the overflow check of `×`
    // divided by 64 bits then).
    let masks = [
        "(x>0)/x",
        "(x>y)/x",
        "(y>0)/x",
        "(x>1⌽x)/x",
        "((x×x)>x+1)/x",
        "(0<x-⌽x)/x",
    ];
    t.tune(arrc::Tuning {
        scan_workgroup_size: Some(384),
        scan_items_per_thread: Some(32),
        ..Default::default()
    });
    for ty in [ElemType::F32, ElemType::I32, ElemType::F64, ElemType::I64] {
        check_at(&mut t, &[1, 9215, 9217, 2 * 9216 + 5], &masks, ty, false);
    }
    s.set("x", Array::vector(Data::F32(vec![-1.0, 2.0, 3.0, -4.0])))
        .unwrap();
    let before = s.stats().readbacks;
    let r = s.eval("+\\(x>0)/x").unwrap().value.unwrap();
    assert_eq!(r.data, Data::F32(vec![2.0, 5.0]));
    assert_eq!(
        s.stats().readbacks - before,
        1,
        "no host round trip before the final result"
    );
    // The scan after the compress is sized on the device: an indirect dispatch.
    let plan = s.compile("+\\((⍳10)>3)/⍳10").unwrap().plan;
    assert!(plan.dispatches.iter().any(|d| d.indirect.is_some()));
    assert!(plan
        .kernels
        .iter()
        .any(|k| matches!(k.kind, arrc_ir::plan::KernelKind::IndirectArgs { .. })));
}

#[test]
fn replicate_by_computed_counts() {
    // Counts whose magnitude the IR bounds (`3|x`: at most 2) stay on the device:
    // one chained scan of them stores each item its count of times. Others are
    // read back first (one stage); beyond 64 of them the statement is lowered again
    // with their values known, and they expand into gather indices. Negative counts
    // insert fills.
    let mut s = gpu();
    const EXPRS: &[&str] = &[
        "(3|x)/x",
        "+/(2|x)/x",
        "⍸3|x",
        "((3|x)-1)/x",
        "(3|x)/y",
        "(2|x)⌿x",
        "+\\(3|x)/x",
        "(7-5|x)/y",
        "(1+x>y)/y",
        "((2|x)×¯3)/y",
        "(3|x)/5",
        "(3|+/x)/x",
        "(0×x)/y",
        // Counts never negative (no fill items chosen), and some that may be.
        "(0⌈(3|x)-1)/y",
        "(¯1⌈(3|x)-1)/y",
        "(2⌊(3|x)×2)/y",
        "(+/3|x)/5",
        // `⍸` of counts: never negative, and checked on the device (none is).
        "⍸0⌈(3|x)-1",
        "⍸(1+3|x)-1",
        "+/⍸(2|x)×3",
    ];
    let sizes = &[0, 1, 7, 8, 9, 65, 257, 4095, 4097, 12289, 100003];
    check_at(&mut s, sizes, EXPRS, ElemType::I32, false);
    // At NVIDIA's compaction tile and others, and through the decoupled fallback
    // (a spin limit of 1: a tile that finds a predecessor unpublished reduces its
    // counts itself).
    for (wg, items, spin) in [(512, 24, None), (384, 32, Some(1)), (256, 16, Some(1))] {
        let mut t = gpu();
        t.tune(arrc::Tuning {
            scan_workgroup_size: Some(wg),
            scan_items_per_thread: Some(items),
            spin_limit: spin,
            ..Default::default()
        });
        // Counts computed from the values replicated (`(3|x)/x`) are computed
        // again from the values read for the stores.
        let exprs = [
            "(3|x)/y",
            "((3|x)-1)/x",
            "(1+x>y)/y",
            "(3|x)/x",
            "(1+x>0)/x",
        ];
        check_at(&mut t, &[9215, 12289, 100003], &exprs, ElemType::I32, false);
        for ty in [ElemType::F32, ElemType::F64] {
            check_at(&mut t, &[0, 65, 12289], &["(1+x>0)/x"], ty, false);
        }
    }
    // The largest counts on the device (`65|x`: at most 64), and one past them
    // (the host's way).
    check_at(
        &mut s,
        &[1, 9, 4097],
        &["(65|x)/x", "(66|x)/x"],
        ElemType::I32,
        false,
    );
    check_at(
        &mut s,
        &[0, 9, 4097],
        &["(3|⌊x)/y", "((3|⌊x)-1)/y"],
        ElemType::F64,
        false,
    );
    check_at(
        &mut s,
        &[0, 65, 4097],
        &["(3|⌊x)/x", "(2|⌊x)/y"],
        ElemType::F32,
        false,
    );
    let x = Array::vector(Data::I32((0..1000).collect()));
    s.set("x", x).unwrap();
    let before = s.stats().readbacks;
    let r = device_value(&mut s, "+/(3|x)/x");
    assert_eq!(
        r.data.get(0).as_i64(),
        Some((0..1000i64).map(|v| (v % 3) * v).sum())
    );
    // Was 2: the counts (4000 bytes), then the result.
    assert_eq!(s.stats().readbacks - before, 1, "the result alone");
    // `⍸` of such counts likewise (it read the counts back, and uploaded the
    // indices it made of them).
    let before = s.stats();
    let r = device_value(&mut s, "+/⍸3|x");
    assert_eq!(
        r.data.get(0).as_i64(),
        Some((0..1000i64).map(|v| (v % 3) * (v + 1)).sum())
    );
    assert_eq!(
        s.stats().readbacks - before.readbacks,
        1,
        "the result alone"
    );
    assert_eq!(s.stats().uploads - before.uploads, 0, "no indices uploaded");
    // A negative count is a DOMAIN ERROR, found on the device.
    for expr in ["⍸(3|x)-1", "+/⍸(3|x)-2×x=501"] {
        let e = s.eval(expr).expect_err(expr).to_string();
        assert!(e.contains("DOMAIN ERROR"), "{expr}: {e}");
    }
}

#[test]
fn where_and_index_origin() {
    // `⍸` is a compress of `⍳`; `⎕IO←0` shifts `⍳ ⍸`, indexing and axes on the device.
    let mut s = gpu();
    let shows = |s: &mut Session, expr: &str, want: &str| {
        let o = s.eval(expr).unwrap_or_else(|e| panic!("{expr}: {e}"));
        assert!(o.notes.is_empty(), "{expr} left the device: {:?}", o.notes);
        let got = o.value.map(|v| arrc::display(&v)).unwrap_or_default();
        assert_eq!(got, want, "{expr}");
    };
    shows(&mut s, "x←¯3+⍳10 ⋄ ⍸x>0", "4 5 6 7 8 9 10");
    shows(&mut s, "x[⍸x>4]", "5 6 7");
    shows(&mut s, "⍸0 2 1", "2 2 3");
    s.eval("⎕IO←0").expect("⎕IO←0");
    shows(&mut s, "⍳5", "0 1 2 3 4");
    shows(&mut s, "(⍳5)[0 4]", "0 4");
    shows(&mut s, "+/[0]2 3⍴⍳6", "3 5 7");
    shows(&mut s, "⍸(⍳6)>2", "3 4 5");
    shows(&mut s, "1⌷10 20 30", "20");
    shows(&mut s, "1 0⍉2 3⍴⍳6", "0 3\n1 4\n2 5");
    let e = s.eval("(⍳5)[5]").expect_err("out of range");
    assert_eq!(e.class, arrc::ErrorClass::Index);
}

#[test]
fn rotate_by_computed_amounts() {
    // `a⌽x` with one amount per line (or a computed scalar), negative ones included.
    let mut s = gpu();
    for ty in [ElemType::I32, ElemType::F32] {
        check_shaped(
            &mut s,
            &[33, 7],
            ty,
            &[
                "(⌊m[;1]÷100)⌽m",
                "(⌊m[1;]÷100)⊖m",
                "(⌊m[1;1]÷10)⌽m",
                "+/(⌊m[;2]÷30)⌽m",
            ],
        );
    }
}

#[test]
fn replicate_by_one_literal_count() {
    // `k/x` with one count k for every item reads item ⌊c÷k⌋ (`Gather::Repeat`):
    // nothing is made on the host, which uploaded one index a result item.
    let mut s = gpu();
    const EXPRS: &[&str] = &[
        "2/x",
        "3/x+y",
        "+/5/x",
        "1/x",
        "(2/x)+2/y",
        "2 2/2↑x",
        "2⌿3 4⍴x",
        "3/[2]2 3 4⍴x",
        "2/3 5⍴x",
        "+/[1]2⌿x∘.+1 2 3",
    ];
    let sizes = &[0, 1, 7, 8, 9, 65, 4097, 100003];
    check_at(&mut s, sizes, EXPRS, ElemType::I32, false);
    check_at(&mut s, &[0, 9, 4097], EXPRS, ElemType::F32, false);
    let x = Array::vector(Data::I32((0..100000).collect()));
    s.set("x", x).unwrap();
    device_value(&mut s, "+/x");
    let before = s.stats();
    let r = device_value(&mut s, "+/3/x");
    assert_eq!(
        r.data.get(0).as_i64(),
        Some(3 * (0..100000i64).sum::<i64>())
    );
    // Was 1200000 bytes: the indices.
    assert_eq!(s.stats().upload_bytes - before.upload_bytes, 0);
}

#[test]
fn replicate_along_an_axis_on_the_device() {
    // `1 0 1/[1]m`, `⌿[2]`, replicate with fills, along each axis of a rank-3 array;
    // take and drop along several axes.
    let mut s = gpu();
    let exprs = [
        "m←(3,⌈(≢x)÷3)⍴x ⋄ 1 0 1/[1]m",
        "m←(3,⌈(≢x)÷3)⍴x ⋄ 2/[1]m",
        "m←((⌈(≢x)÷3),3)⍴x ⋄ 1 0 2⌿[2]m",
        "a←2 3 2⍴x ⋄ 1 0 2/[2]a",
        "a←2 3 2⍴x ⋄ ¯1 1/[3]a",
        "a←2 3 4⍴x ⋄ 1 ¯1↑[2 3]a",
        "a←2 3 4⍴x ⋄ 1 2↓[1 3]a",
        "m←3 4⍴x ⋄ 5 ¯5↑[1 2]m",
    ];
    for ty in [ElemType::I32, ElemType::F32] {
        check_at(&mut s, &[1, 33, 4097], &exprs, ty, false);
    }
}

#[test]
fn indexed_assignment_on_the_device() {
    // `x[I]←V` and `x[I] f←V` of a workspace array indexed on its first axis run on
    // the device as `x←V@I⊢x` (`V f⍨@I⊢x`); `x f←V` as `x←x f V`.
    let mut s = gpu();
    let exprs = [
        "z←x ⋄ z[1]←0 ⋄ z",
        "z←x ⋄ z[3 1 3]←y[1 2 3] ⋄ z",
        "z←x ⋄ z[2 1]+←100 ⋄ z",
        "z←x ⋄ z+←y ⋄ z",
        "m←(3,≢x)⍴x ⋄ m[2;]←y ⋄ m",
        "m←(3,≢x)⍴x ⋄ m[1 3;]×←2 ⋄ m",
        // Float indices that are integers index; others are a DOMAIN ERROR.
        "x[⌽(⍳≢x)÷1]",
        "m←(3,≢x)⍴x ⋄ m[2.0 1;(≢x)÷1]",
        // Indices computed on the device: a scatter, the last of repeated indices
        // winning (|y has repeats).
        "z←x ⋄ i←1+(≢x)|⌊|y ⋄ z[i]←y ⋄ z",
        "z←x ⋄ i←1+(≢x)|⌊|y ⋄ z[i]+←1 ⋄ z",
        "z←x ⋄ z[1+(≢x)|⌊|y]←0.5 ⋄ z",
        "z←x ⋄ z[⌽⍳≢x]←x ⋄ z",
        "z←x ⋄ z[(≢x)⌊1+⍳5]←-⍳5 ⋄ z",
        "m←(3,≢x)⍴x ⋄ i←1+3|⌊|y ⋄ m[i;]←((≢i),≢x)⍴y ⋄ m",
        "m←(3,≢x)⍴x ⋄ m[1+3|⌊|y;]×←2 ⋄ m",
        "(y×2)@(1+(≢x)|⌊|y)⊢x",
        "{⍵×10}@(1+(≢x)|⌊|y)⊢x",
        // Selective assignment: the selection of the items' places, then a scatter.
        "z←x ⋄ (2↑z)←y[1 2] ⋄ z",
        "z←x ⋄ (¯3↑z)+←1 ⋄ z",
        "z←x ⋄ (⌽z)←y ⋄ z",
        "z←x ⋄ (1↓⌽z)×←2 ⋄ z",
        "m←(3,≢x)⍴x ⋄ (1 1⍉2 2↑m)←0 ⋄ m",
        "m←(3,≢x)⍴x ⋄ (,m)←(3×≢x)⍴y ⋄ m",
        "m←(3,≢x)⍴x ⋄ (⊖m)+←1 ⋄ m",
        // Indexed along other axes: the selective assignment of `m[i;j]`.
        "m←(3,≢x)⍴x ⋄ m[2 3;1]←y[1 2] ⋄ m",
        "m←(3,≢x)⍴x ⋄ m[;1+(≢x)|⌊|y]←0 ⋄ m",
        "m←(3,≢x)⍴x ⋄ m[1+3|⌊|y;1]+←1 ⋄ m",
        // The same forms on a dfn's own local array, inlined.
        "{v←⍵ ⋄ v[1+(≢v)|⌊|y]←y ⋄ v}x",
        "{v←⍵ ⋄ (2↑v)+←1 ⋄ v}x",
        "{m←(3,≢⍵)⍴⍵ ⋄ m[2;]×←2 ⋄ m}x",
        // Indices whose count is computed on the device (a compress) in the same
        // statement: the scatters read that count (before, NOT YET SUPPORTED).
        "z←x ⋄ z[(x>0)/⍳≢x]←0 ⋄ z",
        "z←x ⋄ z[(y>x)/⌽⍳≢x]←0.5 ⋄ z",
        "z←x ⋄ z[(x>1000)/⍳≢x]←7 ⋄ z",
        "z←x ⋄ z[(x>0)/1+(≢x)|⌊|y]+←1 ⋄ z",
        "m←(3,≢x)⍴x ⋄ m[(1 0 1)/⍳3;]←0 ⋄ m",
        "z←x ⋄ z[⍸x>0]×←2 ⋄ z",
    ];
    for ty in [ElemType::I32, ElemType::F32] {
        check_at(&mut s, &[3, 33, 4097], &exprs, ty, false);
    }
    // Their new items must be a scalar there: nothing could check a length against
    // the computed count before the statement runs.
    let e = "z←x ⋄ z[(x>0)/⍳≢x]←x ⋄ z";
    let err = s.eval(e).expect_err(e);
    assert_eq!(err.class, arrc::ErrorClass::Unsupported, "{e}: {err}");
    // A computed index out of range is an INDEX ERROR from the device, and the array
    // keeps its items; a fraction is a DOMAIN ERROR.
    s.eval("x←⍳4097 ⋄ z←x×2 ⋄ i←(≢x)+⍳3").unwrap();
    let err = s.eval("z[i]←0").expect_err("out of range");
    assert_eq!(err.class, arrc::ErrorClass::Index, "{err}");
    let err = s.eval("z[i÷2]←0").expect_err("fractions");
    assert_eq!(err.class, arrc::ErrorClass::Domain, "{err}");
    let same = s.eval("z≡x×2").unwrap().value.expect("a value");
    assert_eq!(arrc::display(&same), "1");
    // A selection reaching past the array (a fill item) is no place of it.
    let err = s.eval("(4100↑z)←0").expect_err("fills");
    assert_eq!(err.class, arrc::ErrorClass::Index, "{err}");
    let same = s.eval("z≡x×2").unwrap().value.expect("a value");
    assert_eq!(arrc::display(&same), "1");
    for e in ["x←⍳5 ⋄ x[1.5]", "x←⍳5 ⋄ i←÷2 ⋄ x[i]", "x←⍳5 ⋄ x[(⍳3)÷2]"] {
        let err = s.eval(e).expect_err(e);
        assert_eq!(err.class, arrc::ErrorClass::Domain, "{e}: {err}");
    }
}

#[test]
fn stencils_on_the_device() {
    // `f⌺s` with `f` a reduction of a scalar formula of its window: one shifted read
    // of ⍵ per window position (padding read as fill), fused into one kernel.
    let mut s = gpu();
    let exprs = [
        "{+/⍵}⌺3⊢x",
        "{⌈/⍵}⌺5⊢x",
        "{-/⍵}⌺3⊢x",
        "m←(3,≢x)⍴x ⋄ {+/,⍵}⌺3 3⊢m",
        "m←(3,≢x)⍴x ⋄ {⌊/,⍵}⌺1 5⊢m",
        "m←(3,≢x)⍴x ⋄ A←3 3⍴1 2 1 2 4 2 1 2 1 ⋄ {+/,A×⍵}⌺3 3⊢m",
        "m←(3,≢x)⍴x>0 ⋄ {3=s-⍵∧4=s←{+/,⍵}⌺3 3⊢⍵}m",
        "m←(4,≢x)⍴x ⋄ {0<+/,⍵×⍵}⌺3 3⊢m",
        // Items of the window, local names, an assignment inside the result.
        "m←(3,≢x)⍴x ⋄ {⍵[2;2]}⌺3 3⊢m",
        "m←(3,≢x)⍴x ⋄ {⍵[1;3]-⍵[3;1]}⌺3 3⊢m",
        "m←(3,≢x)⍴x>0 ⋄ {c←⍵[2;2] ⋄ s←(+/,⍵)-c ⋄ (s=3)∨c∧s=2}⌺3 3⊢m",
        "m←(3,≢x)⍴x>0 ⋄ {3=s-⍵[2;2]∧4=s←+/,⍵}⌺3 3⊢m",
        "m←(3,≢x)⍴x ⋄ {k←3 3⍴1 2 1 2 4 2 1 2 1 ⋄ v←k×⍵ ⋄ (+/,v)-⍵[1;3]}⌺3 3⊢m",
        "{a←⍵ ⋄ (⌈/a)-a[1]}⌺3⊢x",
        "{(+/⍵)÷≢⍵}⌺5⊢x",
        "m←(3,≢x)⍴x ⋄ {(+/,⍵)÷≢,⍵}⌺3 3⊢m",
        // Steps: every step-th window (a strided read of ⍵ per window position).
        "{+/⍵}⌺(2 1⍴3 2)⊢x",
        "m←(3,≢x)⍴x ⋄ {⌈/,⍵}⌺(2 2⍴2 2 2 2)⊢m",
        "m←(4,≢x)⍴x ⋄ {+/,⍵}⌺(2 2⍴3 3 2 3)⊢m",
    ];
    for ty in [ElemType::I32, ElemType::F32] {
        check_at(&mut s, &[1, 2, 9, 33, 1025], &exprs, ty, false);
    }
    // An even size gives one window per gap between items.
    let g = s.eval("{+/,⍵}⌺2 2⊢4 5⍴⍳20").expect("runs");
    assert!(g.notes.is_empty(), "{:?}", g.notes);
    assert_eq!(g.value.expect("a value").shape, vec![3, 4]);
}

#[test]
fn stencils_staged_in_workgroup_memory() {
    // `⌺` of a matrix reads it at every window position; a workgroup stages its tile
    // of the matrix (16 rows of 64 outputs, 8 rows past 25 positions) with the halo
    // in workgroup memory once, and the positions read there (`KernelKind::Stencil`). Matrices on each side of a tile's
    // rows and columns, halos of 1 to 4 on either side (even windows have unequal
    // ones), the matrix computed by an expression first, booleans, i64 and f64; and
    // workgroups that take several tiles in turn (`busy_groups` 3: 96 workgroups).
    // Windows of 8 offsets or more (3×3 and up) are staged; smaller ones read device
    // memory (as every window does in `window_folds_share_their_rows`'s last
    // tuning, and smaller windows here: `{⍵[1;1]-⍵[3;5]+⍵[4;2]}`).
    let exprs = [
        "{+/,⍵}⌺5 5⊢m",
        "{⌈/,⍵}⌺5 5⊢m",
        "{+/,⍵}⌺4 4⊢m",
        "{⍵[1;1]-⍵[3;5]+⍵[4;2]}⌺4 5⊢m",
        "{+/,⍵×⍵}⌺7 9⊢m",
        "{+/,⍵}⌺5 5⊢m×2",
        "{c←⍵[3;3] ⋄ s←(+/,⍵)-c ⋄ (s=3)∨c∧s=2}⌺5 5⊢m>0",
        "{+/,⍵}⌺5 5⊢⌊m×2*33",
        "{+/,⍵}⌺3 3⊢m",
        // A formula that fails where a window is all padding, as it is past the
        // matrix's edge in a tile: such outputs are not evaluated then.
        "{÷+/,⍵≠0}⌺5 5⊢1+|m",
        // Windows reached through a gather are not staged.
        "⊖{+/,⍵}⌺5 5⊢m",
    ];
    for busy in [None, Some(3)] {
        let mut s = gpu();
        s.tune(arrc::Tuning {
            busy_groups: busy,
            ..Default::default()
        });
        for shape in [
            [1, 2],
            [15, 63],
            [16, 64],
            [17, 65],
            [33, 129],
            [40, 7],
            [300, 700],
        ] {
            for ty in [ElemType::I32, ElemType::F32] {
                check_shaped(&mut s, &shape, ty, &exprs);
            }
        }
        check_shaped(&mut s, &[17, 65], ElemType::F64, &exprs[..5]);
        let c = s.compile("{+/,⍵}⌺5 5⊢m").unwrap();
        let staged = c
            .plan
            .kernels
            .iter()
            .any(|k| matches!(k.kind, arrc_ir::plan::KernelKind::Stencil { .. }));
        assert!(staged, "{:?}", c.plan.kernels);
    }
    window_folds_share_their_rows();
}

/// The whole-window folds of a staged stencil (`KExpr::WindowFold`): each staged
/// row an invocation reads is folded over the window's columns once, and each
/// output folds its window's rows of those. Alone and inside a formula, at 1 to 8
/// outputs an invocation, and with the folds off, against the reference; which windows are folds, over which rows and columns.
fn window_folds_share_their_rows() {
    let folds = [
        "{+/,⍵}⌺5 5⊢m",
        "{⌈/,⍵}⌺5 5⊢m",
        "{⌊/,⍵}⌺5 5⊢m",
        "{+/,⍵}⌺5 5⊢0⌈m",
        "{∨/,⍵}⌺5 5⊢m>90",
        "{∧/,⍵}⌺5 5⊢m>¯90",
        "{(⍵[3;3]×2)-(+/,⍵)÷≢,⍵}⌺5 5⊢m",
        "{⌈/,⍵}⌺3 7⊢m",
        "{+/,⍵}⌺7 3⊢m",
        "{+/,⍵×⍵}⌺5 5⊢m",
        "{(+/,⍵)-⌊/,⍵}⌺5 5⊢m",
        // A fold over part of the window beside one over all of it.
        "{(⍵[1;2]⌈⍵[1;3]⌈⍵[2;2]⌈⍵[2;3])-⌊/,⍵}⌺5 5⊢m",
    ];
    let mut s = gpu();
    // (outputs an invocation, folds on, the tile widened, the fewest offsets
    // staged)
    for (rows, on, widen, from) in [
        (None, true, false, None),
        (Some(1), true, false, None),
        (Some(2), true, true, None),
        (Some(3), true, false, None),
        (Some(8), true, false, None),
        (None, true, true, None),
        (Some(2), false, false, None),
        (None, false, true, None),
        (None, true, false, Some(1000)),
    ] {
        s.tune(arrc::Tuning {
            stencil_rows: rows,
            window_folds: Some(on),
            stencil_widen: Some(widen),
            stencil_from: from,
            ..Default::default()
        });
        for shape in [[1, 2], [5, 5], [17, 65], [40, 7], [70, 130]] {
            for ty in [ElemType::I32, ElemType::F32] {
                check_shaped(&mut s, &shape, ty, &folds);
            }
        }
        check_shaped(&mut s, &[33, 70], ElemType::F64, &folds);
    }
    s.tune(arrc::Tuning::default());
    // Which windows are folds: (expression, its folds as (rows, columns)).
    let whole = ([-2, 2], [-2, 2]);
    // A fold's rows and columns, as offsets from the output.
    type Rect = ([i32; 2], [i32; 2]);
    let cases: [(&str, &[Rect]); 8] = [
        ("{+/,⍵}⌺5 5⊢m", &[whole]),
        ("{⌈/,⍵}⌺5 5⊢m", &[whole]),
        ("{∨/,⍵}⌺5 5⊢m>90", &[whole]),
        // The centre is read from the tile too: before, it was a read of the
        // matrix, and only rows 1..2 (a suffix of the right-to-left sum) were a fold.
        ("{(⍵[3;3]×2)-(+/,⍵)÷≢,⍵}⌺5 5⊢m", &[whole]),
        ("{⌈/,⍵}⌺3 7⊢m", &[([-1, 1], [-3, 3])]),
        ("{(+/,⍵)-⌊/,⍵}⌺5 5⊢m", &[whole, whole]),
        ("{+/,⍵×⍵}⌺5 5⊢m", &[]),
        (
            "{(⍵[1;2]⌈⍵[1;3]⌈⍵[2;2]⌈⍵[2;3])-⌊/,⍵}⌺5 5⊢m",
            &[([-2, -1], [-1, 0]), whole],
        ),
    ];
    let m = Array::new(
        vec![20, 30],
        Data::F32((0..600).map(|i| i as f32).collect()),
    );
    s.set("m", m).unwrap();
    for (expr, want) in cases {
        let c = s.compile(expr).unwrap();
        let mut got = vec![];
        for k in &c.plan.kernels {
            if let arrc_ir::plan::KernelKind::Stencil { expr, .. } = &k.kind {
                for f in expr.window_folds() {
                    if let arrc_ir::plan::KExpr::WindowFold { rows, cols, .. } = f {
                        got.push((rows, cols));
                    }
                }
            }
        }
        got.sort();
        let mut want = want.to_vec();
        want.sort();
        assert_eq!(got, want, "{expr}");
    }
    // Off, there are none.
    s.tune(arrc::Tuning {
        window_folds: Some(false),
        ..Default::default()
    });
    let c = s.compile("{+/,⍵}⌺5 5⊢m").unwrap();
    assert!(
        c.plan.kernels.iter().all(|k| match &k.kind {
            arrc_ir::plan::KernelKind::Stencil { expr, .. } => expr.window_folds().is_empty(),
            _ => true,
        }),
        "{:?}",
        c.plan.kernels
    );
}

#[test]
fn float_windows_summed_in_f64_check_only_their_results() {
    // An f32 window is summed in f64, where 9 or 25 f32 values cannot overflow: by
    // the bounds on its operands no add of the sum carries a check (each was a
    // comparison and a flag an add), and the f32 result still does. A window beyond
    // f32's range is a DOMAIN ERROR; one whose partial sums leave the range and come
    // back is not. Read from device memory (3×3) and staged (5×5), at the matrix's
    // edges (fill) and inside, and the same with the data from literals.
    let mut s = gpu();
    let big = f32::MAX * 0.9;
    let patterns: [&[f32]; 4] = [
        &[big, big, -big, -big, 0.5],
        &[big, -big, 1.0],
        &[big, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
        &[big, big, big],
    ];
    for (rows, cols) in [(1usize, 2usize), (3, 4), (17, 65), (40, 7)] {
        for p in patterns {
            let m = Array::new(
                vec![rows, cols],
                Data::F32((0..rows * cols).map(|i| p[i % p.len()]).collect()),
            );
            let mut cpu = bind_both(&mut s, ElemType::F32, &[("m", &m)]);
            for w in [3, 5] {
                for arg in ["m", "m÷1", "m÷¯1", "m÷1000"] {
                    let expr = format!("{{+/,⍵}}⌺{w} {w}⊢{arg}");
                    agree(&mut s, &mut cpu, &expr, m.len(), 4.0 * f64::from(f32::MAX));
                }
            }
        }
    }
    for (w, shape) in [(3, "3 4"), (5, "17 65")] {
        let expr = format!("{{+/,⍵}}⌺{w} {w}⊢{shape}⍴3e38 3e38 ¯3e38 ¯3e38 0.5");
        let mut cpu = bind_both(&mut s, ElemType::F32, &[]);
        agree(&mut s, &mut cpu, &expr, 0, 4.0 * f64::from(f32::MAX));
        // One error bit: the f32 result's.
        let c = s.compile(&format!("{{+/,⍵}}⌺{w} {w}⊢m")).unwrap();
        assert_eq!(c.plan.errors.len(), 1, "{:?}", c.plan.errors);
        // Also of a quotient by a literal of at least 1 (`x÷1000`: at most x's
        // magnitude), so its sum is a window fold too (before, every add of it
        // carried a check: 8 or 24 more bits); of `⍳7`'s, not even the result.
        for (arg, bits) in [("m÷1000", 1), ("(5 5⍴⍳7)÷1000", 0)] {
            let c = s.compile(&format!("{{+/,⍵}}⌺{w} {w}⊢{arg}")).unwrap();
            assert_eq!(c.plan.errors.len(), bits, "{arg}: {:?}", c.plan.errors);
            let folds = c.plan.kernels.iter().any(|k| match &k.kind {
                arrc_ir::plan::KernelKind::Stencil { expr, .. } => !expr.window_folds().is_empty(),
                _ => false,
            });
            assert!(folds, "{arg}: no window fold");
        }
    }
}

#[test]
fn arrays_beyond_one_storage_binding() {
    // 36 million f32 (144 MB) exceed lavapipe's 128 MiB maxStorageBufferRange (the
    // H200's is 4 GiB): kernels bind such an array as several windows.
    let mut s = gpu();
    let n = 36_000_000;
    let limit = s.device().expect("a device").max_storage_buffer_range as usize;
    let x = Array::vector(Data::F32(
        (0..n).map(|i| (i % 1000) as f32 - 500.0).collect(),
    ));
    assert!(
        n * 4 > limit || limit >= 1 << 31,
        "the test array should exceed the device's storage range"
    );
    s.set("x", x).unwrap();
    for (expr, want) in [
        ("+/x", "¯18000000"),
        ("⌈/x", "499"),
        ("x[1 35999999 36000000]", "¯500 498 499"),
        ("(⌽x)[1 2]", "499 498"),
        ("+/(x>0)", "17964000"),
        ("+/(x>498)/x", "17964000"),
    ] {
        assert_eq!(arrc::display(&device_value(&mut s, expr)), want, "{expr}");
    }
    // A result beyond one binding comes back whole.
    let o = s.eval("x+1").expect("x+1").value.expect("a value");
    assert_eq!(o.len(), n);
    assert_eq!(o.data.get(n - 1), arrc::Scalar::F32(500.0));
}

#[test]
fn a_statement_reading_more_arrays_than_a_kernel_binds() {
    // 40 device arrays in one expression, beyond lavapipe's 32 storage buffers per
    // kernel: computed in parts (it crashed the driver).
    let mut s = gpu();
    let mut setup = String::new();
    let mut sum = String::new();
    for i in 1..=40 {
        setup.push_str(&format!("a{i}←+\\(⍳1000)+{i} ⋄ "));
        sum.push_str(&format!("a{i}+"));
    }
    s.eval(&setup).unwrap();
    let v = device_value(&mut s, &format!("+/{sum}0"));
    assert_eq!(arrc::display(&v), "7097090000");
}

#[test]
fn compress_masks_through_the_decoupled_fallback() {
    // On the H200 a compaction whose mask costs more than a comparison kept about
    // a twelfth of its items (`((x|7)>1)/x` kept 766 of 9189, `((*x÷100)>2)/x` 778
    // of 8730), with such masks fused: each subgroup stored as if the subgroups
    // before it kept nothing. With a spin limit of 1 every tile that finds a
    // predecessor unpublished reduces that tile's mask itself.
    let masks = [
        "((x|7)>1)/x",
        "((*x÷100)>2)/x",
        "((x×x)>x+1)/x",
        "(((x×2)-x)>3)/x",
        "+\\(x|7)>1",
    ];
    for (wg, items) in [(384, 32), (256, 16)] {
        for (spin, fuse) in [(Some(1), true), (None, false), (None, true)] {
            let mut s = gpu();
            s.tune(arrc::Tuning {
                scan_workgroup_size: Some(wg),
                scan_items_per_thread: Some(items),
                spin_limit: spin,
                fuse_computed_masks: Some(fuse),
                ..Default::default()
            });
            for ty in [ElemType::F32, ElemType::I32] {
                check_at(&mut s, &[9215, 100003], &masks, ty, false);
            }
            // Fused, the compaction is the statement's one kernel.
            let plan = s.compile("((x|7)>1)/x").unwrap().plan;
            assert_eq!(plan.kernels.len() == 1, fuse, "{:?}", plan.kernels);
        }
    }
}
