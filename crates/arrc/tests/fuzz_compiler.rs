//! The compiler never panics on mutated programs: lines of the language corpus, with
//! characters deleted, inserted, swapped and repeated, go through the whole device
//! compile path (parse, lower, verify, plan, emit, spirv-val) and through `arrc
//! build` (as functions of ⍵ and of ⍺ and ⍵, at several types and ranks). Each must
//! end in a module or an APL error; an internal compiler error fails too.

use arrc::build::{build, parse_arg_type};
use arrc_ir::plan::PlanOptions;
use arrc_ir::ElemType;
use proptest::prelude::*;

/// The corpus's input lines (indented six spaces in its transcripts).
fn corpus() -> Vec<String> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/corpus");
    let mut lines = vec![];
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("tests/corpus")
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    for f in files {
        for l in std::fs::read_to_string(f).unwrap().lines() {
            if let Some(src) = l.strip_prefix("      ") {
                lines.push(src.to_string());
            }
        }
    }
    assert!(lines.len() > 500);
    lines
}

const GLYPHS: &[char] = &[
    '+', '-', '×', '÷', '⌈', '⌊', '|', '*', '⍟', '○', '!', '~', '<', '≤', '=', '≥', '>', '≠', '∧',
    '∨', '⍲', '⍱', '⍴', ',', '⍪', '⌽', '⊖', '⍉', '↑', '↓', '⍳', '≢', '∊', '⍸', '⍋', '⍒', '⌷', '≡',
    '/', '\\', '⌿', '⍀', '¨', '⍨', '.', '∘', '(', ')', '{', '}', '[', ']', ';', ':', '⋄', '←', '⍺',
    '⍵', '⍬', '∇', '¯', '0', '1', '2', '7', ' ', 'x', 'f',
];

#[derive(Clone, Debug)]
enum Edit {
    Delete(usize),
    Insert(usize, char),
    Swap(usize, usize),
    Repeat(usize, usize),
}

fn mutate(src: &str, edits: &[Edit]) -> String {
    let mut c: Vec<char> = src.chars().collect();
    for e in edits {
        let n = c.len().max(1);
        match *e {
            Edit::Delete(i) if !c.is_empty() => {
                c.remove(i % n);
            }
            Edit::Insert(i, g) => c.insert(i % (c.len() + 1), g),
            Edit::Swap(i, j) if !c.is_empty() => c.swap(i % n, j % n),
            Edit::Repeat(i, len) if !c.is_empty() => {
                let a = i % n;
                let b = (a + len).min(c.len());
                let piece: Vec<char> = c[a..b].to_vec();
                c.splice(b..b, piece);
            }
            _ => {}
        }
    }
    c.into_iter().collect()
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        any::<usize>().prop_map(Edit::Delete),
        (any::<usize>(), prop::sample::select(GLYPHS)).prop_map(|(i, g)| Edit::Insert(i, g)),
        (any::<usize>(), any::<usize>()).prop_map(|(i, j)| Edit::Swap(i, j)),
        (any::<usize>(), 1usize..6).prop_map(|(i, l)| Edit::Repeat(i, l)),
    ]
}

fn no_internal_error(
    what: &str,
    src: &str,
    r: Result<(), arrc::Error>,
) -> Result<(), TestCaseError> {
    if let Err(e) = r {
        prop_assert!(
            !e.message.contains("internal compiler error"),
            "{what} {src:?}: {e}"
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]
    #[test]
    fn mutated_programs_compile_or_give_an_error(
        line in any::<prop::sample::Index>(),
        edits in prop::collection::vec(edit(), 1..4),
    ) {
        thread_local!(static LINES: Vec<String> = corpus());
        let src = LINES.with(|l| mutate(l[line.index(l.len())].as_str(), &edits));
        arrc_ref::set_limits(1 << 12, 10_000);
        let s = arrc::Session::new(arrc::Backend::Cpu).unwrap();
        no_internal_error("compile", &src, s.compile(&src).map(|_| ()))?;
        let dfn = format!("{{{src}}}");
        for (w, a) in [("f32", None), ("i32[2]", Some("i64")), ("f64[0]", Some("f64[0]"))] {
            let omega = parse_arg_type(w, 0).unwrap();
            let alpha = a.map(|a| parse_arg_type(a, omega.rank() as u32).unwrap());
            let float = if w.starts_with("f64") { ElemType::F64 } else { ElemType::F32 };
            let r = build(&dfn, omega, alpha, float, &PlanOptions::default(), &Default::default()).map(|_| ());
            no_internal_error("build", &dfn, r)?;
        }
    }
}

#[test]
fn literals_beyond_memory_are_ws_full_when_compiling() {
    // `⊥` of known radices makes its place values as a literal: for digits beyond
    // any memory that was a capacity-overflow panic (`arrc fuzz --seed 160 --float
    // f64`, program 1122).
    let s = arrc::Session::new(arrc::Backend::Cpu).unwrap();
    for src in ["10⊥(¯9223372036854775807)↑3", "2⊥(2*40)⍴1"] {
        let e = s.compile(src).map(|_| ()).unwrap_err();
        assert_eq!(e.class, arrc::ErrorClass::WsFull, "{src}: {e}");
    }
}

#[test]
fn residues_of_an_empty_left_argument_compile() {
    // The bound of `a|b` for a constant `a` with no zero is `|a|-1`: an empty `a`
    // (no zero, magnitude 0; here the windows of an empty vector) took 1 from 0
    // (the compiler fuzzer, in a debug build).
    let s = arrc::Session::new(arrc::Backend::Cpu).unwrap();
    for src in ["⍴{+|/⍵}⌺3⊢⍬", "⍬|⍬", "(0⍴5)|⍳0"] {
        s.compile(src)
            .unwrap_or_else(|e| panic!("{src} does not compile: {e}"));
    }
}

#[test]
fn not_of_floats_in_a_stencil_is_valid_spir_v() {
    // `~` of a float window value compared its operand with integer equality, which
    // spirv-val refuses (an internal compiler error; the compiler fuzzer with 5000
    // cases). It checks 0 and 1 as floats now, raising DOMAIN ERROR otherwise.
    let s = arrc::Session::new(arrc::Backend::Cpu).unwrap();
    for src in ["{~(+/⍵)÷≢⍵}⌺3⊢6 9 12", "{~(⌈/⍵)÷6}⌺3⊢6 6 6 0 0"] {
        if let Err(e) = s.compile(src) {
            assert!(!e.message.contains("internal compiler error"), "{src}: {e}");
        }
    }
}
