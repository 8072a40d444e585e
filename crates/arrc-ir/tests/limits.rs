//! Plans that exceed a device's binding limits are errors that point at the source.

use arrc_ir::array::ElemType;
use arrc_ir::ir::{Dim, Param, Type};
use arrc_ir::plan::{plan, PlanOptions};

#[test]
fn arrays_beyond_the_bindings_point_at_their_source() {
    // 2^21 f32 (8 MiB) in windows of 64 KiB needs 128 bindings; at most 64 exist.
    let src = "1+x×2";
    let prog = arrc_syntax::parse_str(src).unwrap();
    let params = [Param {
        name: "x".into(),
        ty: Type {
            elem: ElemType::F32,
            shape: vec![Dim::Known(1 << 21)],
        },
        value: None,
    }];
    let f = arrc_ir::lower::lower_program(&prog, &params, &[], &[], ElemType::F32, 1).unwrap();
    let v = arrc_ir::verify::verify(&f).unwrap();
    let opts = PlanOptions {
        window_bytes: 1 << 16,
        ..PlanOptions::default()
    };
    let e = plan(&v, &opts).expect_err("too many windows");
    assert_eq!(e.class, arrc_ir::ErrorClass::Unsupported, "{e}");
    assert!(e.message.contains("bindings"), "{e}");
    assert!(
        e.span.end > 0 && e.span.end <= src.len(),
        "span {:?}",
        e.span
    );
}
