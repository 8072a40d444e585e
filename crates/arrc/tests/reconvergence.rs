//! Kernels ask for maximal reconvergence (SPV_KHR_maximal_reconvergence) where the
//! device offers it (`PlanOptions::maximal_reconvergence`): valid SPIR-V (spirv-val)
//! with the extension and the execution mode, and neither where it does not.
//! lavapipe has no such extension, so the device tests there run without it; the
//! H200's runs with it.

use arrc_ir::array::ElemType;
use arrc_ir::ir::{Dim, Param, Type};
use arrc_ir::plan::{plan, Plan, PlanOptions};

fn planned(src: &str, elem: ElemType, maximal_reconvergence: bool) -> Plan {
    let prog = arrc_syntax::parse_str(src).unwrap();
    let params = [Param {
        name: "x".into(),
        ty: Type {
            elem,
            shape: vec![Dim::Known(100_003)],
        },
        value: None,
        magnitude: None,
    }];
    let f = arrc_ir::lower::lower_program(&prog, &params, &[], &[], ElemType::F32, 1).unwrap();
    let v = arrc_ir::verify::verify(&f).unwrap();
    let opts = PlanOptions {
        maximal_reconvergence,
        // f32 computed from its bits, with the checked fast paths that branch.
        denorm_preserve_f32: false,
        ..PlanOptions::default()
    };
    plan(&v, &opts).unwrap()
}

#[test]
fn kernels_ask_for_maximal_reconvergence_where_the_device_offers_it() {
    let exprs = [
        ("((x|7)>1)/x", ElemType::F32),
        ("+\\x", ElemType::F32),
        ("⌈\\(x|7)×x", ElemType::I32),
        ("+/(x-1)*2", ElemType::F32),
        ("⍋x", ElemType::F32),
    ];
    for (src, elem) in exprs {
        for on in [true, false] {
            let p = planned(src, elem, on);
            assert!(!p.kernels.is_empty(), "{src}");
            for k in &p.kernels {
                let words = arrc_spirv::emit_validated(&[(k, "main")])
                    .unwrap_or_else(|e| panic!("{src}: {}: {e}", k.name));
                let (_, exts) = arrc_spirv::requirements(&words).unwrap();
                let has = exts.iter().any(|e| e == "SPV_KHR_maximal_reconvergence");
                assert_eq!(has, on, "{src}: {}: {exts:?}", k.name);
                let text = arrc_spirv::disassemble(&words).unwrap();
                assert_eq!(
                    text.contains("MaximallyReconvergesKHR"),
                    on,
                    "{src}: {}",
                    k.name
                );
            }
        }
    }
}
