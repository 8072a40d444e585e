//! `EMITTER_HASH`: a hash of the sources that decide the SPIR-V emitted for a
//! kernel (this crate's and arrc-ir's), so that modules cached on disk by one build
//! are never taken for another's.

use std::path::Path;

fn visit(dir: &Path, files: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            visit(&p, files);
        } else if p.extension().is_some_and(|x| x == "rs") {
            files.push(p);
        }
    }
}

fn main() {
    // The package's directory when the script runs, not when it was compiled: a
    // script binary built in another checkout (a worktree sharing the target
    // directory) once hashed that checkout's sources, then none once it was gone,
    // and every build after took the same hash (and the modules cached under it).
    let dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let here = Path::new(&dir);
    let roots = [here.join("src"), here.join("../arrc-ir/src")];
    let mut files = vec![];
    for r in &roots {
        println!("cargo:rerun-if-changed={}", r.display());
        visit(r, &mut files);
    }
    assert!(
        !files.is_empty(),
        "no emitter sources under {}",
        here.display()
    );
    files.sort();
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for f in &files {
        let bytes = std::fs::read(f).unwrap_or_default();
        let name = f
            .strip_prefix(here)
            .unwrap_or(f)
            .to_string_lossy()
            .into_owned();
        for b in name.bytes().chain(bytes) {
            h = (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    println!("cargo:rustc-env=ARRC_EMITTER_HASH={h:016x}");
}
