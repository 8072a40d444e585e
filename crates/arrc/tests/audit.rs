//! Regression tests for the wrong answers an outside audit found (issue 14): each
//! program gives the same value, or the same APL error class, on the device
//! (`Backend::Vulkan`, nothing left to the CPU) and on the reference, and that is the
//! value written here. Every case failed on one side or both before its fix.

use arrc::{Array, Backend, Data, Session};

fn gpu() -> Session {
    Session::new(Backend::Vulkan)
        .expect("a Vulkan device is required for these tests (install mesa-vulkan-drivers)")
}

/// The display of a program's last value, or its error class.
fn outcome(s: &mut Session, src: &str) -> String {
    match s.eval(src) {
        Ok(o) => o.value.map_or(String::new(), |v| arrc::display(&v)),
        Err(e) => e.class.name().to_string(),
    }
}

/// Each `(program, expected)` on fresh sessions of both backends.
fn check(cases: &[(&str, &str)]) {
    let mut bad = vec![];
    for (src, want) in cases {
        for backend in [Backend::Vulkan, Backend::Cpu] {
            let mut s = if backend == Backend::Vulkan {
                gpu()
            } else {
                Session::new(Backend::Cpu).unwrap()
            };
            let got = outcome(&mut s, src);
            if got != *want {
                bad.push(format!("{backend:?} {src}: got {got:?}, want {want:?}"));
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn a_dfn_returns_its_first_expression() {
    check(&[
        ("{1 ⋄ 2}0", "1"),
        ("{⍵+1 ⋄ ⍵+2}5", "6"),
        ("{a←⍵+1 ⋄ a×2 ⋄ 0}5", "12"),
        ("+/{x←⍵×2 ⋄ x+1 ⋄ x}⍳4", "24"),
    ]);
}

#[test]
fn equal_and_not_equal_scan_as_right_folds_on_non_booleans() {
    check(&[
        ("=\\1 2 0", "1 0 0"),
        ("≠\\1 2 2", "1 1 1"),
        ("=\\1 0 0 1", "1 0 1 1"),
        ("=/1 2 0", "0"),
    ]);
}

#[test]
fn nand_and_nor_check_both_arguments() {
    check(&[
        ("1⍱2", "DOMAIN ERROR"),
        ("1 0⍲1 2", "DOMAIN ERROR"),
        ("0⍲2", "DOMAIN ERROR"),
        ("1 0⍱0 0", "0 1"),
    ]);
}

#[test]
fn system_variables_set_inside_expressions() {
    check(&[
        ("x←(⎕IO←0)+1 ⋄ ⍳3", "0 1 2"),
        ("x←(⎕IO←0)+1 ⋄ x", "1"),
        ("(⎕IO←2)+⍳3", "DOMAIN ERROR"),
        ("2⌽⎕FR←645 4 5", "DOMAIN ERROR"),
    ]);
}

#[test]
fn functions_that_take_no_axis() {
    check(&[
        ("2 2⍴[1]⍳4", "AXIS ERROR"),
        ("2⍴[1]⍳4", "AXIS ERROR"),
        ("⍉[1]2 2⍴⍳4", "AXIS ERROR"),
        ("1↓[1]2 2⍴⍳4", "3 4"),
    ]);
}

#[test]
fn integer_literals_stay_exact() {
    check(&[
        ("4611686018427387905", "4611686018427387905"),
        ("4611686018427387904-1", "4611686018427387903"),
        ("¯9223372036854775807", "¯9223372036854775807"),
        ("9007199254740993 1", "9007199254740993 1"),
    ]);
}

#[test]
fn inconsistent_arrays_are_refused() {
    // Fields are public, so the constructor and `Session::set` check them.
    assert!(Array::try_new(vec![1000, 1000], Data::F32(vec![1.0, 2.0, 3.0])).is_err());
    assert!(Array::try_new(vec![usize::MAX, 3], Data::F32(vec![])).is_err());
    let mut bad = Array::vector(Data::F32(vec![1.0, 2.0, 3.0]));
    bad.shape = vec![1000, 1000];
    let mut s = gpu();
    let e = s.set("bad", bad).expect_err("an inconsistent array");
    assert_eq!(e.class.name(), "DOMAIN ERROR");
    assert!(s.get("bad").is_none());
    let mut typed = Array::vector(Data::F32(vec![1.0]));
    typed.elem = arrc::ElemType::I64;
    assert!(s.set("t", typed).is_err());
    assert!(s.set("1x", Array::vector(Data::F32(vec![1.0]))).is_err());
    s.set("ok", Array::vector(Data::F32(vec![1.0, 2.0])))
        .expect("a consistent array");
    assert_eq!(outcome(&mut s, "+/ok"), "3");
}
