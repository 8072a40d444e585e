//! The benchmark programs of `bench/programs/` (whole multi-statement programs, timed
//! against torch by `bench/programs.py` on the lent GPU) run here at the small sizes
//! their first line names (`⍝ small: …`), entirely on the device, and agree with the
//! CPU reference.

use arrc::{Backend, Session};

#[test]
fn benchmark_programs_run_on_the_device_and_agree_with_the_reference() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../bench/programs");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("bench/programs")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "apl"))
        .collect();
    files.sort();
    assert!(files.len() >= 8, "{files:?}");
    let mut bad = vec![];
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        let (first, rest) = text.split_once('\n').unwrap();
        let small = first
            .split_once("⍝ small: ")
            .map(|(_, s)| s)
            .unwrap_or_else(|| panic!("{f:?}: the first line names no small size"));
        let src = format!("{small}\n{rest}");
        let mut dev = Session::new(Backend::Vulkan).expect("a Vulkan device");
        let mut cpu = Session::new(Backend::Cpu).unwrap();
        let d = dev.eval(&src).map(|o| o.value);
        let c = cpu.eval(&src).map(|o| o.value);
        match (d, c) {
            (Ok(Some(d)), Ok(Some(c))) if arrc::fuzz::close(&d, &c) => {}
            (d, c) => bad.push(format!("{f:?}: device {d:?}, reference {c:?}")),
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn a_programs_profile_times_each_dispatch_it_runs() {
    // `arrc bench prog.apl --profile`: one line per dispatch of a run, named by its
    // kernel, in the order they ran; as many as the run's dispatches.
    let mut s = Session::new(Backend::Vulkan).expect("a Vulkan device");
    let src = "x←⍳100000\ny←+\\x×2\n+/y";
    let b = arrc::bench::program(&mut s, "p", src, 2, 3, true).unwrap();
    assert_eq!(b.kernels.len() as u64, b.dispatches, "{:?}", b.kernels);
    assert!(
        b.kernels.iter().any(|(k, _)| k.starts_with("scan")),
        "{:?}",
        b.kernels
    );
    assert!(b.kernels.iter().all(|(_, us)| *us >= 0.0));
    assert!(arrc::bench::program_report(&b).contains("µs  scan"));
    // Without it, none (and no timestamps between dispatches).
    let b = arrc::bench::program(&mut s, "p", src, 1, 3, false).unwrap();
    assert!(b.kernels.is_empty());
}
