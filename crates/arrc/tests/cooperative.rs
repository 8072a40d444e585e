//! Integer products on cooperative matrices: planned where the device offers 8-bit
//! ones and the operands' bounds allow, and valid SPIR-V (spirv-val, Vulkan memory
//! model). They run on GPUs with VK_KHR_cooperative_matrix (the differential tests on
//! such a device compare them with the reference); lavapipe has none.

use arrc_ir::array::ElemType;
use arrc_ir::ir::{Dim, Param, Type};
use arrc_ir::plan::{plan, KernelKind, Plan, PlanOptions};

fn planned(src: &str, (m, k, n): (u64, u64, u64), int8: bool) -> Plan {
    let prog = arrc_syntax::parse_str(src).unwrap();
    let param = |name: &str, r: u64, c: u64| Param {
        name: name.into(),
        ty: Type {
            elem: ElemType::I32,
            shape: vec![Dim::Known(r), Dim::Known(c)],
        },
        value: None,
        magnitude: None,
    };
    let params = [param("a", m, k), param("b", k, n)];
    let f = arrc_ir::lower::lower_program(&prog, &params, &[], &[], ElemType::F32, 1).unwrap();
    let v = arrc_ir::verify::verify(&f).unwrap();
    let opts = PlanOptions {
        int8_matrices: int8.then_some((16, 16, 32)),
        // An NVIDIA GPU's 48 KiB (the kernel stages two steps in 38 KiB).
        max_shared_bytes: 48 << 10,
        ..PlanOptions::default()
    };
    plan(&v, &opts).unwrap()
}

#[test]
fn small_integer_products_take_int8_matrices_where_the_device_has_them() {
    for src in ["(a>0)+.×b>0", "(¯3+5|a)+.×7|b", "(a=1)+.×(b>2)-b<0"] {
        let p = planned(src, (300, 1000, 200), true);
        let kinds: Vec<&str> = p.kernels.iter().map(|k| k.name.as_str()).collect();
        assert!(
            p.kernels
                .iter()
                .any(|k| matches!(k.kind, KernelKind::CoopMatMul { .. })),
            "{src}: {kinds:?}"
        );
        assert_eq!(
            p.kernels
                .iter()
                .filter(|k| matches!(k.kind, KernelKind::PackI8 { .. }))
                .count(),
            2,
            "{src}: {kinds:?}"
        );
        for k in &p.kernels {
            let words = arrc_spirv::emit_validated(&[(k, "main")])
                .unwrap_or_else(|e| panic!("{src}: {}: {e}", k.name));
            if matches!(k.kind, KernelKind::CoopMatMul { .. }) {
                let (caps, exts) = arrc_spirv::requirements(&words).unwrap();
                assert!(caps.iter().any(|c| c == "CooperativeMatrixKHR"), "{caps:?}");
                assert!(
                    exts.iter().any(|e| e == "SPV_KHR_cooperative_matrix"),
                    "{exts:?}"
                );
            }
        }
        // Without them, the tiled kernel.
        let p = planned(src, (300, 1000, 200), false);
        assert!(p
            .kernels
            .iter()
            .all(|k| !matches!(k.kind, KernelKind::CoopMatMul { .. })));
    }
    // Operands past ±127 by their bounds, or sums past i32 (127²·k), stay in the
    // tiled kernel, or reach 8-bit matrices only where a range check on the device
    // allows (`b` from outside: one product where it is within ±127, and, in
    // products of 2^32 or more, two of its slices where it is within ±16319).
    for (src, (m, k, n), products) in [
        ("(a>0)+.×b", (4, 1000, 4), 1),
        ("(a>0)+.×b", (2048, 1024, 2048), 3),
        ("(129|a)+.×7|b", (4, 1000, 4), 0),
        ("(127|a)+.×127|b", (4, 200000, 4), 0),
    ] {
        let p = planned(src, (m, k, n), true);
        let coop: Vec<_> = p
            .kernels
            .iter()
            .filter(|k| matches!(k.kind, KernelKind::CoopMatMul { .. }))
            .collect();
        assert_eq!(coop.len(), products, "{src} k={k}");
        assert!(
            coop.iter()
                .all(|k| k.guard.is_some_and(|g| g.zero.is_some())),
            "{src} k={k}"
        );
    }
}

#[test]
fn products_of_arrays_from_outside_choose_their_kernel_on_the_device() {
    // Bounds of their type only: range checks on both operands, then the product on
    // 8-bit matrices (where both are within ±127), in i32 tiles (where their sums
    // fit i32: within √(2^31÷k) = 1465 for k=1000) or in the checked tiles, each
    // way's kernels guarded by the checks' words; all valid SPIR-V. Operands within
    // ±16319 are cut into 8-bit slices in products of 2^32 or more.
    for (int8, (m, n)) in [
        (true, (300, 200)),
        (true, (2048, 2200)),
        (false, (300, 200)),
    ] {
        let slices = int8 && m * n > 1 << 22;
        let p = planned("a+.×b", (m, 1000, n), int8);
        // With 8-bit matrices the packing checks the ranges; else two kernels do.
        let limits: Vec<&Vec<u32>> = p
            .kernels
            .iter()
            .filter_map(|k| match &k.kind {
                KernelKind::RangeFlag { limits, .. } => Some(limits),
                KernelKind::PackI8 {
                    range: Some((_, limits)),
                    ..
                } => Some(limits),
                _ => None,
            })
            .collect();
        let expect = if int8 {
            vec![127, 16319, 1465]
        } else {
            vec![1465]
        };
        assert_eq!(limits, [&expect, &expect]);
        let flags = p
            .kernels
            .iter()
            .filter(|k| matches!(k.kind, KernelKind::RangeFlag { .. }))
            .count();
        assert_eq!(flags, if int8 { 0 } else { 2 });
        let way = |zero: Option<u32>, nonzero: Option<u32>| -> Vec<&KernelKind> {
            p.kernels
                .iter()
                .filter(|k| {
                    k.guard
                        .is_some_and(|g| (g.zero, g.nonzero) == (zero, nonzero))
                })
                .map(|k| &k.kind)
                .collect()
        };
        let i32_word = if int8 { 2 } else { 0 };
        if int8 {
            // The product and its read-out; the packing runs either way.
            let fast = way(Some(0), None);
            assert_eq!(fast.len(), 2, "{fast:?}");
            assert!(matches!(fast[0], KernelKind::CoopMatMul { .. }), "{fast:?}");
            // Within ±16319: both operands in two slices, four products, one sum.
            let sliced = way(Some(1), Some(0));
            let count = |f: fn(&KernelKind) -> bool| sliced.iter().filter(|k| f(k)).count();
            assert_eq!(
                count(|k| matches!(k, KernelKind::PackI8 { slice: Some(_), .. })),
                if slices { 4 } else { 0 }
            );
            assert_eq!(
                count(|k| matches!(k, KernelKind::CoopMatMul { .. })),
                if slices { 4 } else { 0 }
            );
            assert_eq!(sliced.len(), if slices { 9 } else { 0 }, "{sliced:?}");
        }
        // The i32 tiles: past what the 8-bit products take.
        let past = if slices { 1 } else { 0 };
        let small = way(Some(i32_word), int8.then_some(past));
        assert!(
            matches!(small[..], [KernelKind::MatMul { checked_sum: None, a, .. }] if a.elem() == ElemType::I32),
            "{small:?}"
        );
        let checked = way(None, Some(i32_word));
        assert!(
            matches!(
                checked[..],
                [KernelKind::MatMul {
                    checked_sum: Some(_),
                    ..
                }]
            ),
            "{checked:?}"
        );
        for k in &p.kernels {
            arrc_spirv::emit_validated(&[(k, "main")])
                .unwrap_or_else(|e| panic!("{}: {e}", k.name));
        }
    }
    // A boolean operand leaves the other the rest of i32: within 2^31÷k.
    let p = planned("(a>0)+.×b", (300, 1000, 200), false);
    let limits: Vec<&Vec<u32>> = p
        .kernels
        .iter()
        .filter_map(|k| match &k.kind {
            KernelKind::RangeFlag { limits, .. } => Some(limits),
            _ => None,
        })
        .collect();
    assert_eq!(limits, [&vec![1], &vec![2147483]]);
}

#[test]
fn tuned_int8_tiles_plan_and_validate() {
    use arrc_ir::plan::CoopTile;
    let prog = arrc_syntax::parse_str("(a>0)+.×b>0").unwrap();
    let param = |name: &str| Param {
        name: name.into(),
        ty: Type {
            elem: ElemType::I32,
            shape: vec![Dim::Known(300), Dim::Known(300)],
        },
        value: None,
        magnitude: None,
    };
    let f =
        arrc_ir::lower::lower_program(&prog, &[param("a"), param("b")], &[], &[], ElemType::F32, 1)
            .unwrap();
    let v = arrc_ir::verify::verify(&f).unwrap();
    for (s, runs) in [
        ("4x2x2x4x2", true),
        ("4x4x2x2x2", true),
        ("4x4x2x4x1", true),
        ("2x2x4x4x2", true),
        ("4x4x4x4x1", true),
        // 73 KiB of workgroup memory: the default tile instead.
        ("4x4x2x2x4", false),
    ] {
        let tile = CoopTile::parse(s).unwrap();
        let opts = PlanOptions {
            int8_matrices: Some((16, 16, 32)),
            max_shared_bytes: 48 << 10,
            coop_tile: Some(tile),
            ..PlanOptions::default()
        };
        let p = plan(&v, &opts).unwrap();
        let k = p
            .kernels
            .iter()
            .find(|k| matches!(k.kind, KernelKind::CoopMatMul { .. }))
            .unwrap_or_else(|| panic!("{s}"));
        let KernelKind::CoopMatMul { tile: t, .. } = k.kind else {
            unreachable!()
        };
        assert_eq!(t == tile, runs, "{s}: {t:?}");
        assert_eq!(k.workgroup_size, t.subgroups() * 32, "{s}");
        for k in &p.kernels {
            arrc_spirv::emit_validated(&[(k, "main")])
                .unwrap_or_else(|e| panic!("{s}: {}: {e}", k.name));
        }
    }
    assert!(CoopTile::parse("4x2x2x4x2r").is_err());
    assert!(CoopTile::parse("4x2x2x4").is_err());
    assert!(CoopTile::parse("4x0x2x4x2").is_err());
}

#[test]
fn fragments_that_are_not_whole_vectors_take_no_8_bit_products() {
    // The kernel addresses workgroup memory in 16-byte vectors: a device whose only
    // 8-bit shape were 16×8×32 or 16×16×8 keeps its integer products in the tiles.
    use arrc_ir::plan::CoopTile;
    for shape in [(16, 8, 32), (16, 16, 8)] {
        assert!(
            !CoopTile::of_shape(shape).runs_on(32, 1024, 48 << 10),
            "{shape:?}"
        );
    }
    let nvidia = CoopTile::for_device((16, 16, 32), 32, 1024, 48 << 10);
    assert_eq!(nvidia.map(|t| t.steps), Some(1));
    // Subgroups of 64: a step of 32 bytes is half a vector an invocation, so two
    // steps are staged at a time (one vector of each operand an invocation); of
    // 128, a workgroup of 1024 with half a vector each does not share out.
    assert!(!CoopTile::of_shape((16, 16, 32)).runs_on(64, 1024, 48 << 10));
    let wave64 = CoopTile::for_device((16, 16, 32), 64, 1024, 48 << 10);
    assert_eq!(wave64.map(|t| t.steps), Some(2));
    assert!(CoopTile::for_device((16, 16, 32), 128, 1024, 48 << 10).is_none());
}
