//! `mpirun -np 2` and `-np 3` of `arrc-mpi` on this machine's Vulkan device
//! (lavapipe in CI, each rank opening it): the same values as one process, and
//! statements that did run split across the ranks. Needs Open MPI's `mpirun`
//! (package openmpi-bin); a missing one fails.

use arrc::{Backend, Session};
use std::process::Command;

/// Programs whose values are exact (integers, or floats far from a rounding
/// boundary at ⎕PP=10), so the text of rank 0's output must equal one process's.
const PROGRAMS: &[&str] = &[
    // Elementwise, folds, a fold inside an expression.
    "n←100003 ⋄ x←(1000|(⍳n)×7919)÷1000 ⋄ m←(+/x)÷n ⋄ d←x-m ⋄ v←(+/d×d)÷n ⋄ ⌈/|d÷v*0.5",
    // Each rank draws its rows of one sequence: the numbers of one process.
    "x←?100003⍴100 ⋄ y←x×2 ⋄ (+/y),(⌈/x),⌊/x",
    // A scan with carries across the ranks, then the host reads its end.
    "x←?100003⍴100 ⋄ y←+\\x ⋄ ¯3↑y",
    // Compress: ranks keep different counts; its length and sum.
    "x←?100003⍴100 ⋄ c←(x>50)/x ⋄ (≢c),+/c",
    // Rows of a product on each rank, the right argument copied to all.
    "A←1000 30⍴⍳97 ⋄ B←30 4⍴⍳11 ⋄ C←A+.×B ⋄ +⌿C",
    // A statement that is not split reads the pieces of every rank.
    // `÷0.5` keeps its check, so x is computed (and split); `÷1`, bounded by its
    // dividend, cannot fail, and the whole program fused into one statement.
    "x←(⍳100003)÷0.5 ⋄ y←x+1 ⋄ (⍋¯5↑y),y[1 50000 100003]",
];

fn mpirun(np: usize, program: &str) -> std::process::Output {
    Command::new("mpirun")
        .args(["--oversubscribe", "-np", &np.to_string()])
        .arg(env!("CARGO_BIN_EXE_arrc-mpi"))
        .args(["--split-from", "2", "--stats", program])
        // CI runs as root, in a container without cross-memory attach.
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_btl_vader_single_copy_mechanism", "none")
        .output()
        .expect("mpirun (Open MPI, package openmpi-bin) is required for these tests")
}

fn one_process(program: &str) -> String {
    let mut s = Session::new(Backend::Vulkan).expect("a Vulkan device");
    let v = s.eval(program).unwrap().value.expect("a value");
    s.display(&v)
}

/// The statements rank 0 says ran split.
fn split_count(stderr: &str) -> u64 {
    stderr
        .lines()
        .find_map(|l| l.split("statements split ").nth(1))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

#[test]
fn ranks_give_one_processs_values() {
    for np in [2, 3] {
        for p in PROGRAMS {
            let out = mpirun(np, p);
            let stdout = String::from_utf8_lossy(&out.stdout);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success(), "-np {np} {p}: {stderr}");
            assert_eq!(stdout.trim_end(), one_process(p), "-np {np} {p}\n{stderr}");
            assert!(
                split_count(&stderr) > 0,
                "-np {np} {p}: nothing split\n{stderr}"
            );
        }
    }
}

#[test]
fn an_error_on_the_ranks_is_one_processs() {
    let out = mpirun(2, "x←(⍳1000)-500 ⋄ ÷x");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("DOMAIN ERROR"), "{stderr}");
    assert!(out.stdout.is_empty());
}
