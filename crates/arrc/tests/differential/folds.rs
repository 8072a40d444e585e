//! Reductions and scans: vectors, axes, n-wise windows, tile shapes and the
//! decoupled fallback, overflow of float folds, and the same bits every run.

use super::*;

#[test]
fn folds_f32() {
    check(&mut gpu(), FOLDS, ElemType::F32, false);
}

#[test]
fn folds_i32() {
    check(&mut gpu(), FOLDS, ElemType::I32, false);
}

#[test]
fn scans_through_the_decoupled_fallback() {
    // With a spin limit of 1 a tile that finds a predecessor unpublished reduces that
    // tile's input itself at once: the fallback path, which a device with
    // forward-progress guarantees rarely takes, must give the same answers.
    let mut s = gpu();
    s.tune(arrc::Tuning {
        spin_limit: Some(1),
        ..Default::default()
    });
    let scans = ["+\\x", "⌈\\x", "+\\2×x-1", "+\\x≤y", "(x>0)/x"];
    for ty in [ElemType::I32, ElemType::F32, ElemType::F64] {
        check_at(&mut s, &[4097, 65536 + 7, 1 << 20], &scans, ty, false);
    }
}

#[test]
fn scans_of_costly_expressions_at_nvidias_tile() {
    // A scan adds its subgroup's and its tile's prefix to the values it holds in
    // place, as the compaction did before session 38, when on the H200 a costly
    // mask made it store as if those prefixes were 0. Costly expressions scanned
    // at NVIDIA's tile (384 × 32; 8-byte sums at 16), whole tiles and a part tile:
    // right on the H200 with the scans as they are.
    let mut s = gpu();
    s.tune(arrc::Tuning {
        scan_workgroup_size: Some(384),
        scan_items_per_thread: Some(32),
        ..Default::default()
    });
    let scans = [
        "⌈\\(x|7)×x",
        "⌊\\-(x|7)×x",
        "+\\x|7",
        "⌈\\*x÷1000",
        "+\\(x×x)>x+1",
        "⌈\\⌊x×y|5",
    ];
    for ty in [ElemType::I32, ElemType::F32] {
        check_at(&mut s, &[9215, 3 * 12288 + 5], &scans, ty, true);
    }
}

#[test]
fn scans_at_other_tile_shapes() {
    // A tile is cut into one chunk per subgroup: workgroups of one or several
    // subgroups, elements per invocation that are not a multiple of 4 (no vector
    // loads) and a size that is not a whole number of subgroups (rounded down to one),
    // with the fallback taken at once, all give the reference's answers.
    let shapes = [(8, 4), (24, 6), (64, 12), (100, 8)];
    for (wg, items) in shapes {
        let mut s = gpu();
        s.tune(arrc::Tuning {
            scan_workgroup_size: Some(wg),
            scan_items_per_thread: Some(items),
            spin_limit: Some(1),
            ..Default::default()
        });
        let scans = ["+\\x", "⌈\\x", "+\\x≤y"];
        for ty in [ElemType::I32, ElemType::F32, ElemType::F64] {
            check_at(&mut s, &[1, 31, 4097, 65536 + 7], &scans, ty, false);
        }
    }
}

#[test]
fn scans_with_a_lookback_subgroup() {
    // One subgroup of each tile's workgroup holds no elements and looks back from
    // the moment the tile is claimed; the tile is the other subgroups'. Workgroups
    // of two subgroups (one holding the tile), tiles that are not whole vectors, and
    // the fallback taken at once. Where subgroups may wait on each other only at
    // barriers (lavapipe: `every_subgroup_looks_back`) the planner keeps the usual
    // tile, and these are its answers at these shapes.
    let shapes = [
        (256, 16, None),
        (16, 4, None),
        (24, 6, Some(1)),
        (64, 12, Some(1)),
    ];
    for (wg, items, spin) in shapes {
        let mut s = gpu();
        s.tune(arrc::Tuning {
            scan_workgroup_size: Some(wg),
            scan_items_per_thread: Some(items),
            spin_limit: spin,
            scan_lookback_subgroup: Some(true),
            ..Default::default()
        });
        let scans = ["+\\x", "⌈\\x", "+\\x≤y"];
        for ty in [ElemType::I32, ElemType::F32, ElemType::F64] {
            check_at(&mut s, &[1, 31, 4097, 65536 + 7], &scans, ty, false);
        }
    }
}

#[test]
fn scans_with_a_workgroup_wide_lookback() {
    // The whole workgroup looks back (`scan_wide_lookback`): subgroup `s` polls the
    // window of tiles `s` subgroup widths back, and subgroup 0 folds the windows
    // up to the first that holds an inclusive prefix or an unpublished tile. At
    // lavapipe's tile and at NVIDIA's, tiles taken in workgroup order (so that
    // predecessors are often unstarted, and windows stop at unpublished tiles),
    // the fallback taken at once, one-subgroup workgroups, and compactions.
    let shapes = [
        (None, None, None, false),
        (Some(384), Some(32), None, false),
        (Some(64), Some(4), None, true),
        (Some(24), Some(6), Some(1), false),
        (Some(8), Some(4), Some(1), true),
    ];
    for (wg, items, spin, by_wg) in shapes {
        let mut s = gpu();
        s.tune(arrc::Tuning {
            scan_workgroup_size: wg,
            scan_items_per_thread: items,
            spin_limit: spin,
            scan_tiles_by_workgroup: Some(by_wg),
            scan_wide_lookback: Some(true),
            ..Default::default()
        });
        let scans = ["+\\x", "⌈\\x", "+\\x≤y", "(x>0)/x"];
        for ty in [ElemType::I32, ElemType::F32, ElemType::F64] {
            check_at(
                &mut s,
                &[1, 31, 4097, 65536 + 7, (1 << 20) + 3],
                &scans,
                ty,
                false,
            );
        }
        let plan = s.compile("+\\x").unwrap().plan;
        assert!(plan.kernels.iter().any(|k| matches!(
            k.kind,
            arrc_ir::plan::KernelKind::ScanChained {
                wide_lookback: true,
                every_subgroup_looks_back: false,
                ..
            }
        )));
    }
}

#[test]
fn lookbacks_within_a_loop_trip_limit() {
    // lavapipe ends every loop of an invocation once all its loops together have run
    // 65535 trips. A lookback that waited on many tiles (each polled 2048 times,
    // then reduced) was cut off there and left a wrong prefix: `+\\x` of 2^20+3
    // i32 in workgroups of 32 (tiles of 128) with tiles taken in workgroup order, under load, went
    // wrong from element 2^19 in 49 of 400 runs. Where loops are cut off, a lookback
    // polls at most 4 times, tiles are claimed in order, and a lookback past half
    // the limit raises a device error instead of an answer.
    let x = "x←¯500+?100003⍴1000";
    let mut s = gpu();
    s.eval(x).expect("x");
    s.tune(arrc::Tuning {
        loop_trip_limit: Some(65_000),
        scan_tiles_by_workgroup: Some(true),
        spin_limit: Some(2048),
        scan_workgroup_size: Some(32),
        scan_items_per_thread: Some(4),
        ..Default::default()
    });
    let plan = s.compile("+\\x").unwrap().plan;
    let scan = plan
        .kernels
        .iter()
        .find(|k| matches!(k.kind, arrc_ir::plan::KernelKind::ScanChained { .. }))
        .expect("a chained scan");
    assert!(scan.spin_limit <= 4, "{}", scan.spin_limit);
    assert!(matches!(
        scan.kind,
        arrc_ir::plan::KernelKind::ScanChained {
            tiles_by_workgroup: false,
            ..
        }
    ));
    assert_eq!(scan.lookback_budget.map(|b| b.trips), Some(32_500));
    for e in [
        "r←+\\x ⋄ (∧/(1↓r)=(¯1↓r)+1↓x),r[1]=x[1]",
        "((≢(x>0)/x),+/(1+x>0)/x)=(+/x>0),+/x×1+x>0",
    ] {
        let got = s.eval(e).expect(e);
        assert_eq!(arrc::display(&got.value.expect("a value")), "1 1", "{e}");
    }
    // A budget of no trips: every tile past the first needs one poll at least, and
    // raises the error.
    for wide in [false, true] {
        let mut s = gpu();
        s.eval(x).expect("x");
        s.tune(arrc::Tuning {
            loop_trip_limit: Some(1),
            scan_wide_lookback: Some(wide),
            ..Default::default()
        });
        for e in ["+\\x", "(x>0)/x", "(1+x>0)/x"] {
            match s.eval(e) {
                Err(err) => assert!(
                    err.class == arrc::ErrorClass::Device
                        && err.message.contains("longer than this device's loops run"),
                    "{e}: {err}"
                ),
                Ok(o) => panic!("{e}: an answer past the lookback's budget: {:?}", o.notes),
            }
        }
        // One tile: no lookback.
        let got = s.eval("+\\⍳10").expect("one tile");
        assert_eq!(
            arrc::display(&got.value.expect("a value")),
            "1 3 6 10 15 21 28 36 45 55"
        );
    }
}

#[test]
fn column_folds_four_columns_at_a_time() {
    // Folds along a leading axis whose rows come in fours (`Unit::Quad`): vector loads
    // of plain f32 and i32 arrays, fused arguments read element by element, several
    // pieces per column, and shapes that do not qualify (odd widths) beside them. Small
    // arrays read one column per invocation unless told otherwise.
    let mut s = gpu();
    s.tune(arrc::Tuning {
        quad_columns_from: Some(0),
        ..Default::default()
    });
    for ty in [ElemType::F32, ElemType::I32] {
        for shape in [
            &[5, 4][..],
            &[1000, 12],
            &[3000, 8],
            &[64, 1024],
            &[7, 3, 8],
            &[9, 6],
        ] {
            check_shaped(
                &mut s,
                shape,
                ty,
                &["+⌿m", "⌈⌿m", "⌊⌿m", "+⌿m×2", "+/[1]m", "+⌿|m"],
            );
        }
    }
}

#[test]
fn right_fold_scans_of_long_rows() {
    // A non-associative scan folds every prefix from the right, one invocation per
    // element. When one invocation folded a whole row, lavapipe cut its inner loop off
    // after 65535 steps in all: rows of 362 or more came out wrong (`¯2↑-\⍳1000`
    // was 0 0).
    let mut s = gpu();
    check_at(&mut s, &[361, 1000, 3001], &["-\\x"], ElemType::I32, false);
    check_shaped(&mut s, &[3, 700], ElemType::I32, &["-\\m", "-⍀m"]);
    check_shaped(&mut s, &[700, 3], ElemType::I32, &["-⍀m"]);
}

#[test]
fn long_serial_folds_are_right_on_every_device() {
    // A fold that loops along its axis in one invocation (a right fold, or a scan of
    // one row per invocation or per subgroup) for more trips than the device runs
    // (lavapipe stops an invocation's loops after 65535 in all: `-/⍳70000` gave
    // ¯32768, `+/,+⍀70000 2⍴1` 4294901760) is refused by the device path and computed
    // on the CPU; where the device runs it, it must agree.
    let mut auto = Session::new(arrc::Backend::Auto).expect("session");
    for (expr, want) in [
        ("-/⍳70000", "¯35000"),
        ("{⍺-⍵}/⍳70000", "¯35000"),
        ("-⌿70000 2⍴⍳4", "¯70000 ¯70000"),
        ("+/,+⍀70000 2⍴1", "4900070000"),
        ("+/,+\\3 600000⍴1", "540000900000"),
    ] {
        let o = auto.eval(expr).unwrap_or_else(|e| panic!("{expr}: {e}"));
        assert_eq!(arrc::display(&o.value.expect("a value")), want, "{expr}");
    }
}

#[test]
fn reductions_in_one_dispatch_and_in_two_agree() {
    // The last workgroup done folds the partials, or a second dispatch of one
    // workgroup does (the default): both at sizes around a workgroup's share and the most
    // workgroups, with the items' errors and the result's overflow.
    let exprs = ["+/x", "⌈/x", "⌊/x-y", "+/x×y", "∧/x≥y", "+/(x>y)/x"];
    for single in [true, false] {
        let mut s = gpu();
        s.tune(arrc::Tuning {
            single_pass_reduce: Some(single),
            ..Default::default()
        });
        for ty in [ElemType::I32, ElemType::F32, ElemType::F64] {
            check_at(
                &mut s,
                &[0, 1, 7, 8, 9, 4095, 4096, 4097, (1 << 20) + 3],
                &exprs,
                ty,
                false,
            );
        }
        // A short vector's first pass takes fewer items an invocation so that 256
        // workgroups share it (`Planner::reduce_shape`): 1, 2, 8 and 16 items of
        // four-element loads around where each starts, and a bool's one element.
        if !single {
            let sizes = [
                (1 << 18) - 1,
                1 << 18,
                (1 << 19) + 5,
                (1 << 21) + 1,
                (1 << 22) + 7,
            ];
            for ty in [ElemType::I32, ElemType::F32, ElemType::Bool] {
                check_at(&mut s, &sizes, &["+/x", "⌈/x", "+/x×y"], ty, false);
            }
            // Up to 2^14 elements one workgroup folds a vector in one dispatch, in
            // trips of 1 to 16 items (of four-element loads, or of one), the
            // items' errors and the overflow checked there.
            let sizes = [255, 256, 257, 1023, 1025, 16383, 16384, 16385];
            for ty in [ElemType::I32, ElemType::F32, ElemType::F64, ElemType::Bool] {
                check_at(&mut s, &sizes, &["+/x", "⌈/x", "⌊/x×y", "+/x-y"], ty, false);
            }
        }
        s.set_float(ElemType::F32);
        for (e, want) in [("+/3e38 3e38", "DOMAIN ERROR"), ("+/÷0 1", "DOMAIN ERROR")] {
            let got = s
                .eval(e)
                .map(|_| String::new())
                .unwrap_or_else(|e| e.class.name().into());
            assert_eq!(got, want, "{e} (single pass: {single})");
        }
    }
}

#[test]
fn scans_of_device_computed_lengths_take_every_tile() {
    // A scan whose length a compress computes is dispatched indirectly, one workgroup
    // per tile: with tiles of 32 elements, 2^21+ kept elements need more than 65535
    // workgroups, where a clamp to 65535 left the end unscanned (and a compaction of
    // such a result without its count).
    let mut s = gpu();
    s.tune(arrc::Tuning {
        scan_workgroup_size: Some(32),
        scan_items_per_thread: Some(1),
        ..Default::default()
    });
    for (e, want) in [
        ("¯1↑+\\(0=2|⍳4400000)/⍳4400000", "4840002200000"),
        ("≢(0=3|x)/x←(0=2|⍳4400000)/⍳4400000", "733333"),
    ] {
        // The right count, or (lavapipe: at most 65535 workgroups) a device error
        // that says so; never another value.
        match s.eval(e) {
            Ok(o) => assert_eq!(arrc::display(&o.value.expect("a value")), want, "{e}"),
            Err(err) => assert!(
                err.class == arrc::ErrorClass::Device && err.message.contains("workgroups exceed"),
                "{e}: {err}"
            ),
        }
    }
}

#[test]
fn scans_with_tiles_out_of_order() {
    // Tiles numbered by workgroup id may start before their predecessors (lavapipe
    // runs workgroups on a few threads, each from its own range of ids), so tiles
    // reduce unstarted predecessors themselves: the case the decoupled fallback
    // exists for. This found lavapipe reading packed 64-bit tile words torn.
    let mut s = gpu();
    s.tune(arrc::Tuning {
        scan_tiles_by_workgroup: Some(true),
        ..Default::default()
    });
    let scans = ["+\\x", "⌈\\x", "+\\x≤y"];
    for ty in [ElemType::I32, ElemType::F32, ElemType::F64] {
        check_at(
            &mut s,
            &[65536 + 7, 1 << 20, (1 << 21) + 3],
            &scans,
            ty,
            false,
        );
    }
}

#[test]
fn determinism_same_bits() {
    let mut s = gpu();
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let x = random(&mut rng, ElemType::F32, 1000003, false);
    s.set("x", x).unwrap();
    let a = s.eval("+/x").unwrap().value.unwrap();
    let b = s.eval("+/x").unwrap().value.unwrap();
    let bits = |a: &Array| match &a.data {
        Data::F32(v) => v[0].to_bits(),
        _ => panic!("f32 expected"),
    };
    assert_eq!(bits(&a), bits(&b));
}

#[test]
fn exact_integer_sums() {
    let mut s = gpu();
    let r = s.eval("+/⍳1000000").unwrap().value.unwrap();
    assert_eq!(r.data, Data::I64(vec![500000500000]));
    let r = s.eval("+\\⍳5").unwrap().value.unwrap();
    assert_eq!(r.data, Data::I64(vec![1, 3, 6, 10, 15]));
}

/// Reductions and scans along either axis at the row lengths where strategies change
/// (one invocation, one subgroup or one workgroup per row; pieces of long columns).
#[test]
fn axis_folds() {
    let mut s = gpu();
    const EXPRS: &[&str] = &[
        "+/m",
        "⌈/m",
        "⌊⌿m",
        "+⌿m",
        "+\\m",
        "⌈⍀m",
        "-/m",
        "-⌿m",
        "×/m≠0",
        "∨/m>900",
    ];
    for ty in [ElemType::F32, ElemType::I32] {
        for len in [1usize, 2, 3, 7, 32, 33, 1000] {
            check_shaped(&mut s, &[37, len], ty, EXPRS);
            check_shaped(&mut s, &[len, 37], ty, EXPRS);
        }
        check_shaped(
            &mut s,
            &[3, 2, 5],
            ty,
            &["+/m", "+⌿m", "+/[2]m", "+\\[2]m", "-\\m"],
        );
        check_shaped(&mut s, &[2, 5000], ty, &["+/m", "⌈/m", "+⌿m", "+\\m"]);
        check_shaped(&mut s, &[20000, 3], ty, &["+/m", "+⌿m", "⌈⌿m", "+⍀m"]);
    }
    // Few long rows: several workgroups per row, then a second pass.
    check_shaped(&mut s, &[2, 1000000], ElemType::F32, &["+/m", "⌈/m"]);
    check_shaped(&mut s, &[1000000, 2], ElemType::I32, &["+⌿m", "⌊⌿m"]);
}

/// N-wise reduction: each window's fold, windows gathered from the argument.
#[test]
fn nwise_folds() {
    let mut s = gpu();
    const EXPRS: &[&str] = &[
        "2+/m",
        "2-/m",
        "¯2-/m",
        "3⌈⌿m",
        "¯3-⌿m",
        "1+/m",
        "0+/m",
        "0⌊⌿m",
        "2{⍺-⍵×2}/m",
        "5+/[1]m",
        "2=/m>500",
    ];
    for ty in [ElemType::F32, ElemType::I32] {
        for shape in [[7usize, 9], [33, 5], [5, 1000], [1000, 6]] {
            check_shaped(&mut s, &shape, ty, EXPRS);
        }
    }
    check_shaped(&mut s, &[5000, 3], ElemType::F32, &["1000+⌿m", "¯99-⌿m"]);
}

#[test]
fn float_folds_that_overflow() {
    // APL has no infinities: f32 (and f64) sums and products of finite items that
    // leave the type's range are DOMAIN ERRORs, as elementwise results are; the
    // reference agrees.
    let mut s = gpu();
    s.set("z", Array::vector(Data::F32(vec![3e38; 3]))).unwrap();
    let mut cpu = arrc::Session::new(arrc::Backend::Cpu).expect("reference");
    cpu.set("z", Array::vector(Data::F32(vec![3e38; 3])))
        .unwrap();
    for expr in [
        "+/z",
        "+\\z",
        "×/z",
        "+⌿3 3⍴z",
        "+/3 3⍴z",
        "+\\3 3⍴z",
        "+⍀3 3⍴z",
        "+/(100000⍴z)÷1e4",
        // Not the result: checked on the device (a result is checked as it is read).
        "0×+/z",
        "0×+\\z",
        "0×+⌿3 3⍴z",
    ] {
        for (side, sess) in [("device", &mut s), ("reference", &mut cpu)] {
            let e = sess.eval(expr).expect_err(expr);
            assert_eq!(
                e.class,
                arrc::ErrorClass::Domain,
                "{expr} on the {side}: {e}"
            );
        }
    }
    // Within range they are values.
    assert_eq!(arrc::display(&device_value(&mut s, "+/z÷3")), "3E38");
}

#[test]
fn comparison_folds_of_empty_vectors_on_the_device() {
    // `=/⍬` and friends give the function's identity on the device (they fell back
    // to the reference: the fold of integers by a comparison is a right fold, which
    // an empty axis does not run).
    let mut s = gpu();
    let folds = ["=/x", "≠/x", "</x", "≤/x", ">/x", "≥/x", "=⌿x", "≠\\x"];
    for ty in [ElemType::I32, ElemType::F32, ElemType::I64] {
        check_at(&mut s, &[0], &folds, ty, false);
    }
    let g = s.eval("m←3 0⍴5 ⋄ ≤/m").expect("runs");
    assert!(g.notes.is_empty(), "{:?}", g.notes);
    let v = g.value.expect("a value");
    assert_eq!(v.shape, vec![3]);
    assert!((0..3).all(|i| v.data.get(i).as_f64() == 1.0), "{v:?}");
}

/// A window of 0 along an axis whose other lengths the device computes (rows of a
/// compress) gives the identities, spread over the run-time shape, on the device (it
/// raised "no identity element" there: fuzz seed 118 f64 index 499).
#[test]
fn empty_windows_over_device_computed_rows() {
    let mut s = gpu();
    for (expr, want) in [
        ("0 ≠/((⍳5)~2)∘.≥1 2", "0 0 0\n0 0 0\n0 0 0\n0 0 0"),
        ("0 +/((⍳5)~2)∘.×1 2 3", "0 0 0 0\n0 0 0 0\n0 0 0 0\n0 0 0 0"),
    ] {
        let v = device_value(&mut s, expr);
        assert_eq!(s.display(&v), want, "{expr}");
    }
}

#[test]
fn scans_whose_tile_values_are_the_unpublished_pattern() {
    // Where 64-bit atomics are used, an 8-byte scan's tile value is its own flag:
    // stored exclusive-or a pattern, zero meaning unpublished. A value equal to the
    // pattern (the most negative integer, for i64) reads as unpublished, and the
    // tiles after it must reduce it themselves (the decoupled fallback): slower,
    // never wrong. Tiles of every size at NVIDIA's and lavapipe's shapes.
    let mut s = gpu();
    let m = "m←¯9223372036854775807-1";
    for n in [9215, 50000] {
        for expr in [
            format!("{m} ⋄ x←{n}⍴0 ⋄ x[1]←m ⋄ ∧/(+\\x)=m"),
            format!("{m} ⋄ x←{n}⍴0 ⋄ x[⌈{n}÷2]←m ⋄ (+\\x)≡m×(⍳{n})≥⌈{n}÷2"),
            format!("{m} ⋄ ∧/(⌈\\{n}⍴m)=m"),
            format!("{m} ⋄ x←{n}⍴m ⋄ x[{n}]←5 ⋄ (⌈\\x)≡(({n}-1)⍴m),5"),
        ] {
            let v = device_value(&mut s, &expr);
            assert_eq!(s.display(&v), "1", "{expr}");
        }
    }
}

#[test]
fn f32_sums_whose_rounds_leave_f32s_range() {
    // An f32 `+\` whose sums within a round of four elements leave f32's range
    // (3E38+3E38) while every prefix stays in it: the answer, not a DOMAIN ERROR.
    // Sums in f64 give it; a build that summed rounds as pairs of f32 (session 30,
    // not kept) needed a fallback to f64 for such rounds.
    let mut s = gpu();
    for n in [1, 1000, 5000] {
        let expr = format!(
            "x←(¯3E38 0 0 0),({}⍴3E38 3E38 ¯3E38 ¯3E38) ⋄ (⌈/+\\x),⌊/+\\x",
            4 * n
        );
        let v = device_value(&mut s, &expr);
        assert_eq!(s.display(&v), "3E38 ¯3E38", "{expr}");
    }
    // Sums that do leave f32's range are still an error.
    let e = s.eval("+\\(4000⍴3E38)").map(|_| ()).unwrap_err();
    assert_eq!(e.class, arrc::ErrorClass::Domain, "{e}");
}

#[test]
fn scans_tuned_to_hand_the_prefix_on() {
    // `every_subgroup_looks_back: false` asks subgroup 0 to hand each tile's prefix
    // on through workgroup memory. On a GPU that is the default; on lavapipe it
    // gave wrong sums (`+\x` of 50000 i32 at 256 × 16), so there the
    // tuning is ignored. Either way the answers are right.
    let mut s = gpu();
    s.tune(arrc::Tuning {
        every_subgroup_looks_back: Some(false),
        scan_workgroup_size: Some(256),
        scan_items_per_thread: Some(16),
        ..Default::default()
    });
    for _ in 0..4 {
        check_at(
            &mut s,
            &[50000, 200000],
            &["+\\x", "⌈\\x"],
            ElemType::I32,
            false,
        );
    }
}
