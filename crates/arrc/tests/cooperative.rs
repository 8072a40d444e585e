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
    // allows (`b` from outside).
    for (src, k, guarded) in [
        ("(a>0)+.×b", 1000, true),
        ("(129|a)+.×7|b", 1000, false),
        ("(127|a)+.×127|b", 200000, false),
    ] {
        let p = planned(src, (4, k, 4), true);
        let coop: Vec<_> = p
            .kernels
            .iter()
            .filter(|k| matches!(k.kind, KernelKind::CoopMatMul { .. }))
            .collect();
        assert_eq!(coop.len(), guarded as usize, "{src} k={k}");
        assert!(
            coop.iter().all(|k| k.guard.is_some_and(|g| g.when_zero)),
            "{src} k={k}"
        );
    }
}

#[test]
fn products_of_arrays_from_outside_choose_their_kernel_on_the_device() {
    // Bounds of their type only: two range checks, then the product on 8-bit
    // matrices (where both are within ±127) or the checked tiles (elsewhere), each
    // guarded by the checks' word; all valid SPIR-V.
    for int8 in [true, false] {
        let p = planned("a+.×b", (300, 1000, 200), int8);
        let flags = p
            .kernels
            .iter()
            .filter(|k| matches!(k.kind, KernelKind::RangeFlag { .. }))
            .count();
        assert_eq!(flags, 2);
        let fast = p
            .kernels
            .iter()
            .filter(|k| k.guard.is_some_and(|g| g.when_zero));
        let names: Vec<&str> = fast.map(|k| k.name.as_str()).collect();
        if int8 {
            assert_eq!(names.len(), 4, "{names:?}");
            let limit = p.kernels.iter().find_map(|k| match k.kind {
                KernelKind::RangeFlag { limit, .. } => Some(limit),
                _ => None,
            });
            assert_eq!(limit, Some(127));
        } else {
            assert_eq!(names.len(), 1, "{names:?}");
        }
        let checked: Vec<&KernelKind> = p
            .kernels
            .iter()
            .filter(|k| k.guard.is_some_and(|g| !g.when_zero))
            .map(|k| &k.kind)
            .collect();
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
    assert!(CoopTile::parse("4x2x2x4").is_err());
    assert!(CoopTile::parse("4x0x2x4x2").is_err());
}
