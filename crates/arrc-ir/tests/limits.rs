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
        magnitude: None,
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

#[test]
fn matrix_product_tiles_fit_the_devices_workgroup_memory() {
    // A 128×128 tile staging 16 steps of f64 needs 33 KiB: fewer steps on a device
    // with less (lavapipe's 32 KiB, Vulkan's least 16 KiB); no device gets more than
    // it has.
    use arrc_ir::plan::{KernelKind, MatMulTile};
    let large = MatMulTile::LARGE;
    assert_eq!(large.shared_bytes(8), 16 * (129 + 128) * 8);
    assert_eq!(large.fitted(48 << 10, 8), large);
    assert_eq!(large.fitted(32 << 10, 8).steps, 8);
    assert_eq!(large.fitted(16 << 10, 8).steps, 4);
    assert_eq!(large.fitted(16 << 10, 4).steps, 8);
    assert_eq!(large.fitted(4 << 10, 8), MatMulTile::SMALL);
    let src = "a+.×b";
    let prog = arrc_syntax::parse_str(src).unwrap();
    let param = |name: &str| Param {
        name: name.into(),
        ty: Type {
            elem: ElemType::F32,
            shape: vec![Dim::Known(2048), Dim::Known(2048)],
        },
        value: None,
        magnitude: None,
    };
    let params = [param("a"), param("b")];
    let f = arrc_ir::lower::lower_program(&prog, &params, &[], &[], ElemType::F32, 1).unwrap();
    let v = arrc_ir::verify::verify(&f).unwrap();
    for max in [16 << 10, 32 << 10, 48 << 10] {
        let opts = PlanOptions {
            max_shared_bytes: max,
            ..PlanOptions::default()
        };
        let p = plan(&v, &opts).unwrap();
        let KernelKind::MatMul { tile, .. } = p.kernels[0].kind else {
            panic!("not a matrix product: {:?}", p.kernels[0].kind);
        };
        assert!(tile.shared_bytes(8) <= max, "{tile:?} over {max}");
        assert_eq!(tile.rows, 8);
    }
}

#[test]
fn hash_tables_only_within_one_storage_binding() {
    // `x⍳y` hashes into 4n words and `y∊x` into 2n (2n slots for n keys): a table
    // past one storage binding (`window_bytes`) is not made, the keys are sorted.
    use arrc_ir::plan::KernelKind;
    let hashes = |src: &str, n: u64, window_bytes: u64| {
        let prog = arrc_syntax::parse_str(src).unwrap();
        let param = |name: &str, d: u64| Param {
            name: name.into(),
            ty: Type {
                elem: ElemType::I32,
                shape: vec![Dim::Known(d)],
            },
            value: None,
            magnitude: None,
        };
        let params = [param("x", n), param("y", 10)];
        let f = arrc_ir::lower::lower_program(&prog, &params, &[], &[], ElemType::F32, 1).unwrap();
        let v = arrc_ir::verify::verify(&f).unwrap();
        let opts = PlanOptions {
            window_bytes,
            ..PlanOptions::default()
        };
        let p = plan(&v, &opts).unwrap();
        p.kernels
            .iter()
            .any(|k| matches!(k.kind, KernelKind::HashInsert { .. }))
    };
    for window in [1u64 << 27, 1 << 31] {
        let most = window / 16;
        assert!(hashes("x⍳y", most, window));
        assert!(!hashes("x⍳y", most + 1, window));
        assert!(hashes("y∊x", most + 1, window));
        assert!(hashes("y∊x", 2 * most, window));
        assert!(!hashes("y∊x", 2 * most + 1, window));
    }
}

#[test]
fn solves_within_the_devices_loop_trips() {
    // lavapipe leaves every loop of an invocation after 65535 trips in all: `⌹` of
    // an 1800×1800 matrix gave a wrong solution there (back substitution sums 1800
    // rows in one invocation), and a panel of 59 columns of 60 rows a wrong
    // factorisation. Such solves are refused, and panels narrowed.
    use arrc_ir::plan::KernelKind;
    let solve = |n: u64, limit: Option<u64>, block: u32| {
        let prog = arrc_syntax::parse_str("⌹m").unwrap();
        let params = [Param {
            name: "m".into(),
            ty: Type {
                elem: ElemType::F64,
                shape: vec![Dim::Known(n), Dim::Known(n)],
            },
            value: None,
            magnitude: None,
        }];
        let f = arrc_ir::lower::lower_program(&prog, &params, &[], &[], ElemType::F64, 1).unwrap();
        let v = arrc_ir::verify::verify(&f).unwrap();
        let opts = PlanOptions {
            loop_trip_limit: limit,
            workgroup_size: 256,
            subgroup_size: 8,
            qr_block: block,
            ..PlanOptions::default()
        };
        plan(&v, &opts).map(|p| {
            p.kernels
                .iter()
                .find_map(|k| match k.kind {
                    KernelKind::QrStep { block, .. } => Some(block),
                    _ => None,
                })
                .expect("a QR step")
        })
    };
    let lavapipe = Some(65_000);
    assert_eq!(solve(100, lavapipe, 8).unwrap(), 8);
    assert_eq!(PlanOptions::default().qr_block, 4);
    // At most 16 columns a panel; fewer where a panel step's trips (2 + 32 + 6 for
    // 60 rows in workgroups of 256 of subgroups of 8) would pass the limit.
    assert_eq!(solve(60, lavapipe, 64).unwrap(), 16);
    assert_eq!(solve(60, None, 64).unwrap(), 16);
    assert_eq!(solve(1500, lavapipe, 8).unwrap(), 8);
    let e = solve(1800, lavapipe, 8).expect_err("too many loop trips");
    assert_eq!(e.class, arrc_ir::ErrorClass::Unsupported, "{e}");
    assert!(e.message.contains("loop trips"), "{e}");
    assert_eq!(solve(1800, None, 8).unwrap(), 8);
}
