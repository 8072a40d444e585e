//! `arrc build`'s output run by a host that knows nothing of arrc
//! (`examples/aot_host.rs`, with ash): the module and its manifest alone suffice.

#[path = "../../../examples/aot_host.rs"]
mod aot_host;

use aot_host::Outcome;
use std::path::PathBuf;

/// A fresh temporary directory for one test's modules (`name` apart from the others).
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("arrc-aot-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Builds `src` with `arrc build` into a temporary directory; the `.spv`'s path.
fn build(dir: &std::path::Path, name: &str, src: &str, target: &str) -> PathBuf {
    build_with(dir, name, src, target, &[])
}

/// [`build`] with more options (`--omega i32`).
fn build_with(
    dir: &std::path::Path,
    name: &str,
    src: &str,
    target: &str,
    more: &[&str],
) -> PathBuf {
    let apl = dir.join(format!("{name}.apl"));
    std::fs::write(&apl, src).unwrap();
    let spv = dir.join(format!("{name}.spv"));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_arrc"))
        .args([
            "build",
            apl.to_str().unwrap(),
            "-o",
            spv.to_str().unwrap(),
            "--target",
            target,
        ])
        .args(more)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    spv
}

#[test]
fn aot_host_runs_a_module_from_its_manifest_alone() {
    let dir = scratch("host");
    // A two-kernel reduction (partial sums, then theirs), at awkward lengths.
    let sumsq = build(&dir, "sumsq", "{+/⍵×⍵}", "lavapipe");
    for n in [1usize, 7, 9, 255, 257, 4097, 100_000] {
        let w: Vec<f64> = (1..=n).map(|i| (i % 13) as f64).collect();
        let want: f64 = w.iter().map(|x| x * x).sum();
        match aot_host::run(&sumsq, &w).unwrap() {
            Outcome::Value { shape, data } => {
                assert!(shape.is_empty(), "{shape:?}");
                assert_eq!(data, [want], "n = {n}");
            }
            e => panic!("{e:?}"),
        }
    }
    // A compress: its length is computed on the device and read from the buffer the
    // manifest names.
    let keep = build(&dir, "keep", "{(⍵>0)/⍵}", "generic");
    let w = [-1.0, 2.0, -3.0, 4.0, 0.0, 6.5];
    assert_eq!(
        aot_host::run(&keep, &w).unwrap(),
        Outcome::Value {
            shape: vec![3],
            data: vec![2.0, 4.0, 6.5]
        }
    );
    // A scan and an elementwise chain with a constant.
    let scan = build(&dir, "scan", "{+\\⍵+1 0 0 0}", "generic");
    assert_eq!(
        aot_host::run(&scan, &[1.0, 2.0, 3.0, 4.0]).unwrap(),
        Outcome::Value {
            shape: vec![4],
            data: vec![2.0, 4.0, 7.0, 11.0]
        }
    );
    // A device error comes back as the manifest's error, not a value.
    let recip = build(&dir, "recip", "{÷⍵}", "generic");
    match aot_host::run(&recip, &[1.0, 0.0]).unwrap() {
        Outcome::Errors(es) => assert!(es.iter().any(|e| e.starts_with("DOMAIN ERROR")), "{es:?}"),
        v => panic!("{v:?}"),
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn generic_modules_scan_right_on_every_device() {
    // `arrc build`'s default target is a device it knows nothing of, so its scans
    // must be right on any: every subgroup of a tile looks back. A module whose
    // subgroup 0 handed the prefix on through workgroup memory gave wrong sums on
    // lavapipe (`{+\⍵}` of 200000 i32: 4096 wrong in one run of three).
    let dir = scratch("generic");
    let scan = build_with(&dir, "scani", "{+\\⍵}", "generic", &["--omega", "i32"]);
    let n = 200_000;
    let w = vec![1.0; n];
    for run in 0..6 {
        match aot_host::run(&scan, &w).unwrap() {
            Outcome::Value { shape, data } => {
                assert_eq!(shape, [n as u64]);
                let bad = (0..n).filter(|&i| data[i] != (i + 1) as f64).count();
                assert_eq!(
                    bad,
                    0,
                    "run {run}: {bad} wrong, the first at {:?}",
                    (0..n).find(|&i| data[i] != (i + 1) as f64)
                );
            }
            e => panic!("{e:?}"),
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn loops_a_device_would_cut_short_are_device_errors() {
    // lavapipe leaves a loop after 65535 trips in one invocation. A module whose
    // lengths are known only when it runs checks them against that limit: `{-/⍵}`
    // of ⍳70000 gave ¯32768 for ¯35000 from a generic or a lavapipe module; it is
    // now a device error, and short vectors are still computed.
    let dir = scratch("trips");
    for target in ["generic", "lavapipe"] {
        let fold = build_with(
            &dir,
            &format!("fold_{target}"),
            "{-/⍵}",
            target,
            &["--omega", "i32"],
        );
        for (n, want) in [(7, 4.0), (1000, -500.0)] {
            let w: Vec<f64> = (1..=n).map(f64::from).collect();
            match aot_host::run(&fold, &w).unwrap() {
                Outcome::Value { data, .. } => assert_eq!(data, [want], "{target} n = {n}"),
                e => panic!("{target} n = {n}: {e:?}"),
            }
        }
        let w: Vec<f64> = (1..=70000).map(f64::from).collect();
        match aot_host::run(&fold, &w).unwrap() {
            Outcome::Errors(es) => assert!(
                es.iter().any(|e| e.contains("stops loops after 65000")),
                "{target}: {es:?}"
            ),
            v => panic!("{target}: {v:?} (want a device error)"),
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn products_whose_inner_length_is_known_when_they_run_check_it() {
    // The same limit for a matrix product's inner length in a module: its kernel
    // checks `k` (push constant 2) where the target cuts loops off, and not where
    // it does not.
    use arrc::build::{build, parse_arg_type, target_options, BuildOptions};
    let m = parse_arg_type("f32[2]", 0).unwrap();
    for (target, guarded) in [("generic", true), ("lavapipe", true), ("nvidia", false)] {
        let opts = target_options(target).unwrap();
        let b = build(
            "{⍺+.×⍵}",
            m.clone(),
            Some(m.clone()),
            arrc_ir::ElemType::F32,
            &opts,
            &BuildOptions::default(),
        )
        .unwrap();
        let guards: Vec<_> = b.plan.kernels.iter().flat_map(|k| &k.trip_guards).collect();
        assert_eq!(!guards.is_empty(), guarded, "{target}: {guards:?}");
        for g in guards {
            assert_eq!(g.push, 2, "{target}");
            assert!(g.most > 100_000 && g.most < 65_000 * 16, "{target}: {g:?}");
        }
    }
}

#[test]
fn modules_hold_no_cooperative_matrices_nor_reconvergence() {
    // A build planned with a device's options (`--target device` on a GPU with
    // 8-bit cooperative matrices) keeps its integer products in the tiles: such a
    // kernel needs a module of its own, in the Vulkan memory model.
    use arrc::build::{build, parse_arg_type, target_options, BuildOptions};
    let m = parse_arg_type("i32[2]", 0).unwrap();
    let opts = arrc_ir::plan::PlanOptions {
        int8_matrices: Some((16, 16, 32)),
        // Nor maximal reconvergence (the H200 offers it): a host would have to
        // enable its extension.
        maximal_reconvergence: true,
        ..target_options("nvidia").unwrap()
    };
    let b = build(
        "{(⍺>0)+.×⍵>0}",
        m.clone(),
        Some(m.clone()),
        arrc_ir::ElemType::F32,
        &opts,
        &BuildOptions::default(),
    )
    .unwrap();
    assert!(b
        .plan
        .kernels
        .iter()
        .any(|k| matches!(k.kind, arrc_ir::plan::KernelKind::MatMul { .. })));
    assert!(!b
        .manifest
        .requires
        .capabilities
        .iter()
        .any(|c| c.contains("Cooperative")));
    assert!(
        b.manifest.requires.extensions.is_empty(),
        "{:?}",
        b.manifest.requires.extensions
    );
}

#[test]
fn modules_for_another_device_are_refused() {
    // A module built for NVIDIA (subgroups of 32, 64-bit status words, subgroup 0
    // handing each scan tile's prefix on) relies on what NVIDIA does; a device with
    // other subgroups refuses it instead of risking a wrong answer there.
    let dir = scratch("target");
    let scan = build(&dir, "scan_nv", "{+\\⍵}", "nvidia");
    let size = arrc::devices().unwrap()[0].subgroup_size;
    match aot_host::run(&scan, &[1.0, 2.0, 3.0]) {
        Ok(Outcome::Value { data, .. }) if size == 32 => assert_eq!(data, [1.0, 3.0, 6.0]),
        Err(e) if size != 32 => assert!(e.contains("built for subgroups of 32"), "{e}"),
        other => panic!("subgroups of {size}: {other:?}"),
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_compress_by_the_other_arguments_mask_builds() {
    // ⍺'s and ⍵'s lengths are two symbols, checked equal when the module runs; the
    // verifier refused the compress once it took counts (session 43: "internal
    // compiler error: IR verifier: … ill-typed instruction Compress").
    let dir = scratch("mask");
    let spv = build_with(
        &dir,
        "keep",
        "{(⍺>0)/⍵}",
        "generic",
        &["--alpha", "f32", "--omega", "f32"],
    );
    assert!(spv.exists());
}

#[test]
fn modules_agree_with_the_reference() {
    // `arrc build`'s modules, run by a host that knows nothing of arrc, against the
    // CPU reference: folds, scans, right folds, compress and `⍸` of i32 and f32 vectors
    // at lengths around a subgroup, a workgroup and a scan tile, for the generic
    // and lavapipe targets (a generic module's scans were wrong on lavapipe).
    let dir = scratch("ref");
    let fns = [
        "{+/⍵}",
        "{⌈/⍵}",
        "{+\\⍵}",
        "{⌈\\⍵}",
        "{⌽⍵}",
        "{(⍵>50)/⍵}",
        "{+/⍵×⍵}",
        "{+/⍵=⌈/⍵}",
        "{⍸⍵>90}",
        "{-\\⍵}",
        "{-/⍵}",
        "{×/1+⍵=0}",
    ];
    let mut cpu = arrc::Session::new(arrc::Backend::Cpu).unwrap();
    let mut bad = vec![];
    for target in ["generic", "lavapipe"] {
        for ty in ["i32", "f32"] {
            for (k, f) in fns.iter().enumerate() {
                let spv = build_with(
                    &dir,
                    &format!("f{k}_{ty}_{target}"),
                    f,
                    target,
                    &["--omega", ty],
                );
                for n in [1usize, 7, 9, 257, 4097, 65537] {
                    let w: Vec<f64> = (0..n)
                        .map(|i| {
                            ((i * 7919 + 13) % 100) as f64 + if ty == "f32" { 0.5 } else { 0.0 }
                        })
                        .collect();
                    let x = match ty {
                        "f32" => arrc::Data::F32(w.iter().map(|&v| v as f32).collect()),
                        _ => arrc::Data::I32(w.iter().map(|&v| v as i32).collect()),
                    };
                    cpu.set("x", arrc::Array::vector(x)).unwrap();
                    let got = aot_host::run(&spv, &w).unwrap();
                    // A serial fold past lavapipe's loop limit is a device error.
                    if n > 65000
                        && matches!(&got, Outcome::Errors(es) if es.iter().any(|m| m.contains("stops loops after")))
                    {
                        continue;
                    }
                    // Where the reference gives an error, so must the module.
                    let want = match cpu.eval(&format!("{f}x")) {
                        Ok(o) => o.value.unwrap(),
                        Err(e) => {
                            if !matches!(&got, Outcome::Errors(es) if es.iter().any(|m| m.contains(e.class.name())))
                            {
                                bad.push(format!("{target} {ty} {f} n={n}: {got:?}, not {e}"));
                            }
                            continue;
                        }
                    };
                    let want: Vec<f64> = cpu
                        .display(&want)
                        .split_whitespace()
                        .map(|t| t.replace('¯', "-").parse().unwrap())
                        .collect();
                    let got = match got {
                        Outcome::Value { data, .. } => data,
                        Outcome::Errors(e) => {
                            bad.push(format!("{target} {ty} {f} n={n}: {e:?}"));
                            continue;
                        }
                    };
                    let close = |a: f64, b: f64| (a - b).abs() <= 1e-6 * b.abs().max(1.0);
                    if got.len() != want.len() || !got.iter().zip(&want).all(|(&a, &b)| close(a, b))
                    {
                        let at = got.iter().zip(&want).position(|(&a, &b)| !close(a, b));
                        bad.push(format!(
                            "{target} {ty} {f} n={n}: {} items against {}, first apart at {at:?}",
                            got.len(),
                            want.len()
                        ));
                    }
                }
            }
        }
    }
    std::fs::remove_dir_all(&dir).ok();
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
