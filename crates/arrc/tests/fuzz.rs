//! Untrusted text never panics, hangs or crashes arrc: random programs over the APL
//! alphabet go through parsing and the CPU reference, and must end in a value or an
//! APL error.

use proptest::prelude::*;

fn eval(src: &str) {
    // Small arrays only: random text must not build legal but enormous computations.
    arrc_ref::set_limits(1 << 12, 10_000);
    let mut s = arrc::Session::new(arrc::Backend::Cpu).unwrap();
    let _ = s.eval(src);
    // Rendering any error must not panic either.
    if let Err(e) = s.eval(src) {
        let _ = arrc::diagnostics::render(src, &e, false);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]
    #[test]
    fn random_programs_end_in_a_value_or_an_error(
        src in "([0-9]{1,2}|¯[0-9]|[ +\\-×÷|⌈⌊*⍟○!<≤=≥>≠∧∨⍲⍱~⍴,⍪⌽⊖⍉↑↓⍳≢∊⍸⍋⍒⌷≡/\\\\⌿⍀¨⍨.∘(){}\\[\\];:⋄←⍺⍵⍬∇xf]){0,16}"
    ) {
        eval(&src);
    }
}

#[test]
fn deep_recursion_is_an_error_not_a_crash() {
    // On a thread with the default 2 MiB test stack.
    let h = std::thread::spawn(|| {
        let mut s = arrc::Session::new(arrc::Backend::Cpu).unwrap();
        s.eval("f←{1+∇ ⍵} ⋄ f 1").unwrap_err().class
    });
    assert_eq!(h.join().unwrap(), arrc::ErrorClass::Domain);
}

#[test]
fn runaway_recursion_ends() {
    arrc_ref::set_limits(1 << 12, 10_000);
    let mut s = arrc::Session::new(arrc::Backend::Cpu).unwrap();
    // Depth-first, the first branch hits the depth limit.
    let e = s.eval("{(∇⍵)+∇⍵}1").unwrap_err();
    assert_eq!(e.class, arrc::ErrorClass::Domain, "{e}");
    // Wide but shallow: 2^20 calls at depth 20 hit the call limit.
    let e = s.eval("f←{⍵=0:0 ⋄ (f ⍵-1)+f ⍵-1} ⋄ f 20").unwrap_err();
    assert_eq!(e.class, arrc::ErrorClass::WsFull, "{e}");
}

#[test]
fn huge_results_are_ws_full() {
    let mut s = arrc::Session::new(arrc::Backend::Cpu).unwrap();
    for src in ["⍳2000000000", "1e9⍴1", "(⍳100000)∘.+⍳100000", "1e9/1"] {
        let e = s.eval(src).unwrap_err();
        assert_eq!(e.class, arrc::ErrorClass::WsFull, "{src}: {e}");
    }
}
