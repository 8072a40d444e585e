//! The `arrc` binary as a user runs it.

use std::process::Command;

fn arrc(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_arrc"))
        .args(args)
        .output()
        .expect("runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn sum_of_a_million_on_the_device() {
    let (code, out, err) = arrc(&["eval", "--backend", "vulkan", "+/⍳1000000"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "500000500000\n");
}

#[test]
fn json_scan() {
    let (code, out, err) = arrc(&[
        "eval",
        "--backend",
        "vulkan",
        "--format",
        "json",
        "+\\1.5 2 ¯3",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        "{\"shape\":[3],\"type\":\"f32\",\"data\":[1.5,3.5,0.5]}\n"
    );
}

#[test]
fn apl_display_and_cpu_backend_agree() {
    let (_, gpu, _) = arrc(&["eval", "--backend", "vulkan", "¯3+2×⍳4"]);
    let (_, cpu, _) = arrc(&["eval", "--backend", "cpu", "¯3+2×⍳4"]);
    assert_eq!(gpu, "¯1 1 3 5\n");
    assert_eq!(gpu, cpu);
}

#[test]
fn errors_exit_nonzero_with_a_caret() {
    let (code, out, err) = arrc(&["eval", "1 2 3+4 5"]);
    assert_eq!(code, 1);
    assert!(out.is_empty());
    assert!(err.contains("LENGTH ERROR"), "{err}");
    assert!(err.contains('^') || err.contains('─'), "{err}");
    let (code, _, err) = arrc(&["eval", "x+1"]);
    assert_eq!(code, 1);
    assert!(err.contains("VALUE ERROR"), "{err}");
}

#[test]
fn devices_lists_subgroup_size() {
    let (code, out, err) = arrc(&["devices"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("subgroup size"), "{out}");
}

#[test]
fn build_writes_validated_spirv_and_manifest() {
    let dir = std::env::temp_dir().join(format!("arrc-build-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let prog = dir.join("sumsq.apl");
    std::fs::write(&prog, "{+/⍵×⍵}\n").unwrap();
    let spv = dir.join("sumsq.spv");
    let (code, _, err) = arrc(&["build", prog.to_str().unwrap(), "-o", spv.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let bytes = std::fs::read(&spv).unwrap();
    let words: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    arrc_spirv::validate(&words).expect("spirv-val passes");
    let asm = arrc_spirv::disassemble(&words).unwrap();
    assert!(asm.contains("OpGroupNonUniformFAdd"), "{asm}");
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("sumsq.json")).unwrap()).unwrap();
    assert_eq!(manifest["entry_points"].as_array().unwrap().len(), 2);
    assert_eq!(
        manifest["specialization_constants"][0]["name"],
        "workgroup_size"
    );
    let (code, out, _) = arrc(&["build", prog.to_str().unwrap(), "--emit", "spvasm"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("OpGroupNonUniformFAdd Reduce")
            || out.contains("OpGroupNonUniformFAdd %float %uint_3 Reduce"),
        "{out}"
    );
    // A dfn fold along a length known only at run time can be empty: the module then
    // raises the DOMAIN ERROR the manifest lists (a dfn has no identity element).
    let fold = dir.join("fold.apl");
    std::fs::write(&fold, "{{⍺+⍵×2}/⍵}\n").unwrap();
    let out = dir.join("fold.spv");
    let (code, _, err) = arrc(&["build", fold.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("fold.json")).unwrap()).unwrap();
    let errors = manifest["device_errors"].as_array().unwrap();
    assert!(
        errors.iter().any(|e| e["message"]
            .as_str()
            .unwrap()
            .contains("no identity element")),
        "{errors:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn without_a_device_the_default_backend_says_so_and_uses_the_cpu() {
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_arrc"))
            .args(args)
            .env("VK_ICD_FILENAMES", "/nonexistent/icd.json")
            .env("VK_DRIVER_FILES", "/nonexistent/icd.json")
            .output()
            .expect("runs");
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, out, err) = run(&["eval", "+/⍳10"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "55\n");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("mesa-vulkan-drivers"), "{err}");
    let (code, _, err) = run(&["eval", "--backend", "vulkan", "+/⍳10"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("DEVICE ERROR"), "{err}");
}
