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
    // Operands past ±127, or sums past i32 (127²·k), stay in the tiled kernel; so
    // does a product on a device with too little workgroup memory (Vulkan's least).
    for (src, k) in [
        ("(a>0)+.×b", 1000),
        ("(129|a)+.×7|b", 1000),
        ("(127|a)+.×127|b", 200000),
    ] {
        let p = planned(src, (4, k, 4), true);
        assert!(
            p.kernels
                .iter()
                .all(|k| !matches!(k.kind, KernelKind::CoopMatMul { .. })),
            "{src} k={k}"
        );
    }
}
