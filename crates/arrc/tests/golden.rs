//! Golden tests, data-driven: every `tests/golden/<kind>/<name>.apl` in the workspace is
//! run through one stage and its output compared with `<name>.<kind>` beside it.
//! `UPDATE_EXPECT=1 cargo test --test golden` rewrites the expected files; review the diff.
//!
//! Kinds: `parse` (AST), `ir` (typed IR), `diagnostics` (rendered errors), `eval`
//! (CPU reference display, one line per expression, `⍝ ` lines are skipped).

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/golden")
}

fn run_kind(kind: &str, f: impl Fn(&str) -> String) {
    let dir = root().join(kind);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "apl"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no golden inputs in {}", dir.display());
    let update = std::env::var_os("UPDATE_EXPECT").is_some();
    let mut failures = vec![];
    for input in files {
        let src = std::fs::read_to_string(&input).unwrap();
        let actual = f(src.trim_end_matches('\n'));
        let expected_path = input.with_extension(kind);
        if update {
            std::fs::write(&expected_path, &actual).unwrap();
            continue;
        }
        let expected = std::fs::read_to_string(&expected_path).unwrap_or_default();
        if expected != actual {
            failures.push(format!(
                "{}:\n--- expected\n{expected}\n--- actual\n{actual}",
                expected_path.display()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "golden mismatches (UPDATE_EXPECT=1 to bless):\n{}",
        failures.join("\n")
    );
}

fn cpu_session() -> arrc::Session {
    arrc::Session::new(arrc::Backend::Cpu).unwrap()
}

#[test]
fn parse() {
    run_kind("parse", |src| match arrc_syntax::parse_str(src) {
        Ok(p) => p.to_string(),
        Err(e) => format!("{e} at {:?}\n", e.span),
    });
}

#[test]
fn ir() {
    run_kind("ir", |src| {
        // The first line may bind ⍵'s type: `⍝ ⍵: f32` (default f32 vector).
        let omega = src
            .lines()
            .next()
            .and_then(|l| l.strip_prefix("⍝ ⍵: "))
            .unwrap_or("f32")
            .trim()
            .to_string();
        let ty = arrc::build::parse_arg_type(&omega, 0).unwrap();
        let prog = arrc_syntax::parse_str(src).unwrap();
        match arrc_ir::lower::lower_function(&prog, ty, None, arrc::ElemType::F32, None, &[]) {
            Ok((f, _)) => format!("{f}\n"),
            Err(e) => format!("{e}\n"),
        }
    });
}

#[test]
fn diagnostics() {
    run_kind("diagnostics", |src| {
        let mut s = cpu_session();
        match s.eval(src) {
            Ok(_) => "no error\n".to_string(),
            Err(e) => arrc::diagnostics::render(src, &e, false),
        }
    });
}

#[test]
fn eval() {
    run_kind("eval", |src| {
        let mut out = String::new();
        for line in src
            .lines()
            .filter(|l| !l.trim().is_empty() && !l.starts_with("⍝"))
        {
            let mut s = cpu_session();
            out.push_str(line);
            out.push('\n');
            match s.eval(line) {
                Ok(o) => {
                    if let Some(v) = o.value {
                        for l in arrc_ir::display::display(&v).lines() {
                            out.push_str(&format!("  {l}\n"));
                        }
                    }
                }
                Err(e) => out.push_str(&format!("  {}: {}\n", e.class.name(), e.message)),
            }
        }
        out
    });
}
