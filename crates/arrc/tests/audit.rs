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
        Ok(o) => o
            .value
            .map(|v| arrc::display(&v))
            .or(o.function)
            .unwrap_or_default(),
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

/// [`check`] of programs built with `format!`.
fn check_formatted(cases: &[(String, &str)]) {
    let cases: Vec<(&str, &str)> = cases.iter().map(|(a, b)| (a.as_str(), *b)).collect();
    check(&cases);
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

#[test]
fn integer_folds_that_leave_64_bits_are_domain_errors() {
    // The device folds integers modulo 2^64 (subgroup operations cannot trap); lowering
    // checks sums by their high halves and product scans against floats, and integer
    // products reduce as checked right folds. Sums are exact whatever the grouping.
    let big = "(⌊2*62)";
    let cases: Vec<(String, &str)> = vec![
        ("×/⍳21".into(), "DOMAIN ERROR"),
        ("×/⍳20".into(), "2432902008176640000"),
        ("¯1↑×\\⍳21".into(), "DOMAIN ERROR"),
        ("¯2↑×\\⍳20".into(), "121645100408832000 2432902008176640000"),
        ("+/3000000000×3000000000 3000000000".into(), "DOMAIN ERROR"),
        ("+/(⍳4000000)×⍳4000000".into(), "DOMAIN ERROR"),
        ("+/(⍳1000000)×⍳1000000".into(), "333333833333500000"),
        (format!("+⌿2 2⍴{big}"), "DOMAIN ERROR"),
        (format!("2+/3⍴{big}"), "DOMAIN ERROR"),
        (format!("(1 2⍴{big})+.×2 1⍴2 2"), "DOMAIN ERROR"),
        ("(2 2⍴⍳4)+.×2 2⍴⍳4".into(), " 7 10\n15 22"),
        (format!("{{⍺+⍵}}/3⍴{big}"), "DOMAIN ERROR"),
        (format!("+/{big},{big},-{big}"), "4611686018427387904"),
        (
            format!("{{⍺+⍵}}/(-{big}),{big},{big}"),
            "4611686018427387904",
        ),
        (format!("+/(50000⍴{big}),50000⍴-{big}"), "0"),
        (
            format!("+/(50001⍴{big}),50000⍴-{big}"),
            "4611686018427387904",
        ),
        (
            format!("+/(70001⍴{big}),70000⍴-{big}"),
            "4611686018427387904",
        ),
        ("⌈/+⌿3 7⍴⌊2*61".into(), "6917529027641081856"),
        ("+/+⌿3 7⍴⌊2*61".into(), "DOMAIN ERROR"),
        ("+/¯9223372036854775807 ¯1".into(), "¯9223372036854775808"),
        ("+/¯9223372036854775807 ¯2".into(), "DOMAIN ERROR"),
        (format!("¯1↑+\\(1000⍴1),{big}"), "4611686018427388904"),
        ("¯1↑+\\(1000⍴⌊2*53),⌊2*62".into(), "DOMAIN ERROR"),
        (format!("+\\{big},{big},-{big}"), "DOMAIN ERROR"),
        (
            "+\\3⍴⌊2*61".into(),
            "2305843009213693952 4611686018427387904 6917529027641081856",
        ),
        ("×\\1 2 3 0 5".into(), "1 2 6 0 0"),
        ("×\\¯3 ¯1 ¯4611686018427387904 2".into(), "DOMAIN ERROR"),
        ("×/¯4611686018427387904 2".into(), "¯9223372036854775808"),
        (format!("-/{big},(-{big}),0"), "DOMAIN ERROR"),
        ("+/⍳100000".into(), "5000050000"),
    ];
    check_formatted(&cases);
}

#[test]
fn integer_products_by_minus_one_check_the_most_negative_integer() {
    // `m×¯1` of the most negative 64-bit integer wrapped to itself on the device:
    // a product by a literal of magnitude at most 1 was taken to keep its left
    // argument's magnitude, which holds of floats and of every integer but that one.
    let m = "m←¯9223372036854775807-1 ⋄ ";
    let cases: Vec<(String, &str)> = vec![
        (format!("{m}m×¯1"), "DOMAIN ERROR"),
        (format!("{m}¯1×m"), "DOMAIN ERROR"),
        (format!("{m}(m+0)×¯1"), "DOMAIN ERROR"),
        (format!("{m}(m,5)×¯1"), "DOMAIN ERROR"),
        (format!("{m}m×1"), "¯9223372036854775808"),
        (format!("{m}m×0"), "0"),
        (format!("{m}(1+m)×¯1"), "9223372036854775807"),
        (format!("{m}m×0.5"), "¯4.611686E18"),
        ("x←¯2147483647-1 ⋄ x×¯1".into(), "2147483648"),
        ("x←3037000500 ⋄ x×x".into(), "DOMAIN ERROR"),
        ("x←3037000499 ⋄ x×x".into(), "9223372030926249001"),
        ("x←¯3037000499 ⋄ x×-x".into(), "¯9223372030926249001"),
        (
            "x←4294967296 ⋄ x×¯2147483648".into(),
            "¯9223372036854775808",
        ),
        ("x←4294967296 ⋄ x×2147483648".into(), "DOMAIN ERROR"),
    ];
    check_formatted(&cases);
}

#[test]
fn gcd_and_lcm_of_the_most_negative_integer() {
    // `arrc fuzz --seed 168 --index 1367`: `1E6∨j` gave ¯64 on the device where `j`
    // held ¯9223372036854775808 (Euclid's signed remainders of its wrapped
    // magnitude); the reference gave that number itself for `m∨0`, whose value 2^63
    // does not fit in 64 bits.
    let m = "m←¯9223372036854775807-1 ⋄ ";
    let cases: Vec<(String, &str)> = vec![
        (format!("{m}1E6∨m"), "64"),
        (format!("{m}m∨1000000"), "64"),
        (format!("{m}(m,m,5)∨1000000 64 10"), "64 64 5"),
        (format!("{m}m∨0"), "DOMAIN ERROR"),
        (format!("{m}m∨m"), "DOMAIN ERROR"),
        (format!("{m}m∨1"), "1"),
        (format!("{m}m∧1"), "¯9223372036854775808"),
        (format!("{m}m∧0"), "0"),
        (format!("{m}0∧m"), "0"),
        (format!("{m}m∧m"), "DOMAIN ERROR"),
        (format!("{m}m∧¯1"), "DOMAIN ERROR"),
        ("¯4∧¯6".into(), "12"),
        ("¯12∧18".into(), "¯36"),
        ("12∨¯18".into(), "6"),
    ];
    check_formatted(&cases);
}

#[test]
fn gcd_scans_pass_through_2_63_where_no_prefix_is() {
    // `arrc fuzz --seed 181 --float f64 --devices 0,0 --split-from 2`, program 140:
    // `∨\j` with j starting 9223372036854775807 ¯9223372036854775808 0 0 raised a
    // DOMAIN ERROR on the device (each item folds its prefix from the right, and
    // m∨0∨0 is 2^63), where the reference, folding from the left, found the prefix
    // 1. A scan's prefixes of 2^63 are still errors, and so is a reduction that
    // meets 2^63 from the right, as in the reference.
    let m = "m←¯9223372036854775807-1 ⋄ ";
    let cases: Vec<(String, &str)> = vec![
        (
            format!("{m}j←(9223372036854775807,m,0,0,5),300⍴7 ⋄ 5↑∨\\j"),
            "9223372036854775807 1 1 1 1",
        ),
        (format!("{m}∨\\12,m,0"), "12 4 4"),
        (format!("{m}∨\\,m"), "¯9223372036854775808"),
        (format!("{m}∨\\m,0"), "DOMAIN ERROR"),
        (format!("{m}∨\\0 0,m"), "DOMAIN ERROR"),
        (format!("{m}∨\\(3⍴m),7"), "DOMAIN ERROR"),
        (format!("{m}∨/m,m,12"), "4"),
        (format!("{m}∨/12,m,0"), "DOMAIN ERROR"),
        (format!("{m}∨/,m"), "¯9223372036854775808"),
    ];
    check_formatted(&cases);
}

#[test]
fn lcm_scans_pass_over_sums_past_i64_where_a_0_comes_first() {
    // `arrc fuzz --seed 191 --devices 0,0 --split-from 2`, program 1822: `∧\i` of
    // i32 items ¯14 … 127 0 … raised a DOMAIN ERROR on the device (each item folds
    // its prefix from the right, and the lcm of the items after the 0 leaves i64
    // before the fold reaches the 0), where the reference's prefixes are 0. A prefix
    // whose lcm leaves i64 is still an error, and so is a reduction that meets such
    // an lcm from the right, as in the reference.
    let big = "2147483647 2147483646 2147483645";
    let cases: Vec<(String, &str)> = vec![
        (
            format!("i←¯14 9 5 127 0 {big} 16319 16320 13 ⋄ ∧\\i"),
            "¯14 ¯126 ¯630 ¯80010 0 0 0 0 0 0 0",
        ),
        (format!("i←0 {big} ⋄ ∧\\i"), "0 0 0 0"),
        (format!("i←{big} 0 ⋄ ∧\\i"), "DOMAIN ERROR"),
        (format!("i←¯14 {big} ⋄ ∧\\i"), "DOMAIN ERROR"),
        (
            "i←2 3 4 5 6 7 8 9 10 ⋄ ∧\\i".to_string(),
            "2 6 12 60 60 420 840 2520 2520",
        ),
        (format!("i←{big} 0 ⋄ ∧/i"), "0"),
        (format!("i←0 {big} ⋄ ∧/i"), "DOMAIN ERROR"),
    ];
    check_formatted(&cases);
}

#[test]
fn products_with_long_inner_lengths_are_right_where_loops_are_cut_off() {
    // lavapipe leaves an invocation's loops after 65535 trips in all: `+.×` of
    // 4×600000 and 600000×4 f32 matrices summed 524280 of the 600000 products
    // (12582720 for 14400000), `+.=` 262144 of 300000. Such products are refused
    // there and computed by the reference; a GPU computes them itself.
    let mut s = Session::new(Backend::Auto).expect("a session");
    for (src, want) in [
        ("+/,(4 600000⍴1.5)+.×600000 4⍴1", "14400000"),
        ("+/,(8 300000⍴1)+.=300000 8⍴1", "19200000"),
        ("+/,(2 600000⍴1)+.≠600000 2⍴2", "2400000"),
        ("+/,(2 200000⍴1)+.=200000 2⍴1", "800000"),
    ] {
        let o = s.eval(src).unwrap_or_else(|e| panic!("{src}: {e}"));
        assert_eq!(arrc::display(&o.value.unwrap()), want, "{src}");
    }
}

#[test]
fn f64_search_through_long_runs_of_equal_keys() {
    // The tolerant search looked at every key in its window, one loop trip each, and
    // lavapipe stops an invocation's loops after 65535 trips.
    check(&[
        ("⎕FR←645 ⋄ ¯1↑(70000⍴2.5)⍳257⍴2.5", "1"),
        ("⎕FR←645 ⋄ +/(300⍴2.5)∊65535⍴2.5", "300"),
        ("⎕FR←645 ⋄ (1 2 3 2.5 2.5,1+1e¯15)⍳2.5 1 3 9", "4 1 3 7"),
        ("⎕FR←645 ⋄ +/(⍳100000)∊(⍳50000)÷1", "50000"),
        ("+/(⍳100000)∊⍳50000", "50000"),
        ("⎕FR←645 ⋄ ((70000⍴1.5),2.5)⍳2.5 1.5", "70001 1"),
    ]);
}

#[test]
fn counts_beyond_the_devices_indexing_are_refused() {
    // Kernels index in 32 bits: a count of 10^10 was truncated to 1410065408.
    check(&[
        ("+/,(1e5⍴1)∘.×1e5⍴1", "WS FULL"),
        ("+/,(⍳1e5)∘.×⍳1e5", "WS FULL"),
        ("+/31e9⍴⍳6", "WS FULL"),
        ("⍴1e10 1e10⍴1", "WS FULL"),
        // Found by `arrc fuzz --seed 11` on the H100 (index 1791): an outer product
        // of 2^32 elements under a fold, never stored, was computed (a 65537² one
        // would wrap its 32-bit indices).
        ("x←65536⍴1 ⋄ y←65536⍴2.5 ⋄ ⍴=/[1]x∘.<y", "WS FULL"),
        ("x←46341⍴1 ⋄ ⍴+/x∘.×x", "WS FULL"),
    ]);
}

#[test]
fn both_backends_raise_the_same_error_class() {
    check(&[
        ("x 1 2", "VALUE ERROR"),
        ("∇3", "SYNTAX ERROR"),
        ("∇", "SYNTAX ERROR"),
        ("⍳2 2⍴1", "RANK ERROR"),
        ("1⌷10", "RANK ERROR"),
        ("{⍵+1[0]}¨⍬", ""),
        ("⍴{⍵+1[0]}¨⍬", "0"),
        ("{⍵}", "{⍵}"),
        ("f←{⍵+1} ⋄ f", "{⍵+1}"),
        ("+/", "+/"),
    ]);
}

#[test]
fn found_by_the_fuzzer() {
    // `arrc fuzz` findings, by seed and index; each gave a wrong value, a wrong error
    // or a panic before its fix.
    check(&[
        // seed 2 index 5: the reference's inner product gave ∞ (APL has none).
        ("(4611686018427387904)×.+1.5 2 3×1e10", "DOMAIN ERROR"),
        // seed 2 index 1151: a constant folded in the untaken side of a guard raised
        // its error.
        ("{⍵=0:0 ⋄ ⍵⍲2}¨0", "0"),
        ("({⍵=0:0 ⋄ ⍵⍲2}¨0)∧.+1", "1"),
        // seed 20261124 index 38: constant folding of empty arguments panicked.
        ("⊖(0 ∨/⍬)⌊>⍨⍬", ""),
        ("÷⍨○⍬", ""),
        // seed 3 index 1358: 1!x of ±(2^63-1) flipped its sign on the device (the
        // exact i64 product started from 2^63, which wraps).
        (
            "x←9223372036854775807 ¯9223372036854775807 5 ⋄ 1!x",
            "9.223372E18 ¯9.223372E18 5",
        ),
        // seed 3 index 1494: a fold with no identity over an empty axis of an empty
        // array is empty, not a DOMAIN ERROR.
        ("⍴≥⍨⍲⌿(0⍴0.5)∘.>0⍴0.5", "0"),
        // seed 3 index 2008: ∧ ∨ of floats beyond 64-bit integers (the device gave
        // 0, the reference the saturated conversion's value).
        ("x←¯9.9e27 6 ⋄ x∧x", "DOMAIN ERROR"),
        ("x←12 18.0 ⋄ x∧8", "24 72"),
        // seed 2 index 1018: ⍸ checks every count before the result's size.
        ("⍸¯1 4611686018427387904", "DOMAIN ERROR"),
        // seed 4 index 3689: a quotient beyond f32 gave NaN on the device (its
        // refinement of ∞), and so did a reciprocal.
        ("x←1e30 1 ⋄ y←1e¯30 1 ⋄ x÷y", "DOMAIN ERROR"),
        ("x←1e¯39 1 ⋄ ÷x", "DOMAIN ERROR"),
        ("x←1e¯39 1 ⋄ 2÷x", "DOMAIN ERROR"),
        ("⎕FR←645 ⋄ x←1e300 1 ⋄ x÷1e¯300", "DOMAIN ERROR"),
        ("x←0 1 ⋄ x÷x", "1 1"),
        // seed 4 index 85: a one-item array extended over an empty result was never
        // computed on the device, so its error was lost.
        ("x←,0 ⋄ y←,1 ⋄ ⍬!{⍵=2}¨x⍟y", "DOMAIN ERROR"),
        ("x←,0 ⋄ ⍬+÷x", "DOMAIN ERROR"),
        ("x←,2 ⋄ ⍬+÷x", ""),
        // seed 4 index 1133: the device's f32 binomial took k-n-1 = 2^31+12 as 2^31
        // and gave 1 where the result is beyond f32.
        (
            "m←8 1⍴¯1 10 ¯11 ¯14 ¯13 13 7 5 ⋄ 4611686018427387904≠2147483647∘.!m",
            "DOMAIN ERROR",
        ),
        ("x←¯1 ¯11 ¯14 ⋄ 2147483647!x", "DOMAIN ERROR"),
        ("x←2.5 3 ⋄ x!10.5", "88.803314 141.3125"),
        // seed 5 index 856: a fold whose steps can fail, read only for its shape,
        // was never computed.
        ("m←3 3⍴0 1 2 ⋄ ⍴2 ⍟/m", "DOMAIN ERROR"),
        ("x←1 0 2 ⋄ ≢÷/x", "DOMAIN ERROR"),
        ("x←⍳10 ⋄ ⍴+/x", ""),
        // seed 5 index 3567: lavapipe folded float→int of int→float to the integer
        // (no f32 holds 2^62-13).
        (
            "x←4611686018427387904+¯14+⍳3 ⋄ ⌊x*1",
            "4611686018427387904 4611686018427387904 4611686018427387904",
        ),
        ("x←16777217+⍳2 ⋄ ⌊x×0.5+0.5", "16777218 16777220"),
        // seed 6 index 195: the device's f32 `!` erred by 1E¯5, which `x|!x`
        // magnified (0.25 for 9.25); f32 `!` and `⍺!⍵` now take f64 where they can.
        (
            "f←¯3.125 ¯30.75 ¯45.5 ¯23.5 ¯1.25 11.875 ¯15.25 ⋄ f|!f",
            "¯0.52141833 ¯30.75 0 ¯5.859755E¯22 ¯1.1516666 9.25 ¯2.6059299E¯11",
        ),
        // seed 7 index 1607: an index out of range into an empty array was never
        // read, so no INDEX ERROR; and running out of device memory is WS FULL.
        ("t←2 2 0⍴0 ⋄ ⍴4⌷t", "INDEX ERROR"),
        ("t←2 2 0⍴0 ⋄ ⍴2⌷t", "2 0"),
        ("x←⍳3 ⋄ (0⍴x)[4]", "INDEX ERROR"),
        // seed 8 index 2825: the reference compared integers as f64 (2^62-1 ≥ 2^62
        // was 1).
        ("x←4611686018427387903 ⋄ x≥4611686018427387904", "0"),
        ("x←4611686018427387903 4611686018427387904 ⋄ 2≥/x", "0"),
        ("x←9223372036854775807 ⋄ x>9223372036854775806", "1"),
        // seed 8 index 1212: the device's f32 exp erred by ulps, which ⌊ showed; f32
        // `* ⍟` and `⍺*⍵ ⍺⍟⍵` now compute in f64 where they can, as the reference.
        (
            "i←¯15 2 6 12 7 8 ¯9 19 20 ⋄ ⌊*i",
            "0 7 403 162754 1096 2980 0 178482304 485165184",
        ),
        ("x←2 10 0.5 ⋄ 3⍟x", "0.63092977 2.0959032 ¯0.63092977"),
        ("x←2 10 0.5 ⋄ x*1.5", "2.828427 31.622776 0.35355338"),
        // seed 20261124 index 589: the reference took the parity of a binomial's
        // argument beyond 2^63 from a saturated i64 (odd), the device from the float.
        ("x←¯5 3 ¯1 0 ⋄ ¯9223372036854775807!x", "1 0 1 0"),
        ("x←¯5 ¯3 ¯2 ⋄ ¯7!x", "15 15 ¯6"),
        // On the H100, `arrc fuzz --float f64 --seed 22`: index 2634, NVIDIA fused
        // the residue's ⍵-⍺×q (176 for 0); index 2970, the reference looped over a
        // replicate axis of 2^63 items of an empty array.
        (
            "h←2 3⍴¯28.875 ¯16.75 ¯37.5 ¯11.125 ¯40.875 ¯44.75 ⋄ ⎕FR←645 ⋄ h|¯9223372036854775807",
            "0 0 0\n0 0 0",
        ),
        ("j←¯9223372036854775807 3 ⋄ g←2 0⍴0.5 ⋄ ⍴j⌿g", "WS FULL"),
        // seed 9 index 5936: the reference graded integers as f64 (2^62-1 and 2^62
        // tied).
        ("j←4611686018427387904 4611686018427387903 5 ⋄ ⍋j", "3 2 1"),
        (
            "m←2 2⍴4611686018427387904 1 4611686018427387903 2 ⋄ ⍋m",
            "2 1",
        ),
        // seed 9 index 6785: a dfn fold whose guard chooses an integer or a float ran
        // every step in floats on the device (now on the reference: APL's integers
        // overflow at the first step).
        (
            "j←476 9223372036854775807 ⋄ {⍵>0:⍺+⍵ ⋄ ⍺⍟⍵}/j",
            "DOMAIN ERROR",
        ),
        ("j←4 5 6 ⋄ {⍵>0:⍺+⍵ ⋄ ⍺⍟⍵}/j", "15"),
        // seed 10 index 3524: f32 ○ multiplied by an f32 π (two roundings), so a
        // `-\` near 0 changed sign; it is now π×x rounded once, as the reference.
        (
            "g←7 9⍴¯17.5 ¯0.75 ¯33.375 ¯40.625 38.625 ¯18.625 ¯45.25 37.375 ¯37.25 33.75 ¯33.5 ¯29.75 ¯39.375 36.75 ¯24.125 ¯35.375 45.375 16.5 16.625 14 39.125 11.75 ¯3.125 33.625 20 13.25 24.625 ¯5.125 15.375 12.625 47.125 4 17.125 25.25 23.5 ¯39.25 19.125 10.25 15 ¯33.125 30.25 17 26.625 37.25 ¯38.25 19.25 ¯23.125 11.75 26.5 ¯27.875 23 ¯15.375 ¯6.125 ¯48.25 20 15.75 23.875 ¯44.25 ¯35.75 11.75 26.125 ¯23.375 ¯17.75 ⋄ +/,(-\\○g)<0",
            "22",
        ),
        // seed 12 index 5511: lavapipe does not fuse the f32 division's refinement,
        // so a quotient was an ulp off; f32 ÷ is now f64 rounded once where it can be.
        (
            "m←9 1⍴¯2147483647 ¯14 ¯2147483647 2147483647 2147483646 20 2147483647 17 1073741824 ⋄ g←9 1⍴25.75 ¯4.125 21.875 ¯47.25 50 0.25 6.75 6.75 6.875 ⋄ ⌈⌈/m÷g",
            "¯83397424 4 ¯98170680 ¯45449388 42949672 80 318145728 3 156180624",
        ),
        // seed 14 index 35895: an empty shape whose other axes multiply past 64 bits
        // (`(i)↑7` of a long `i` with a 0 in it) panicked counting its elements.
        ("i←(100⍴20),0 ⋄ ⍴⍴(i)↑7", "101"),
        ("i←(100⍴20),0 ⋄ !\\[2]-(i)↑7", ""),
        ("⍴⍴((100⍴20),0)⍴1", "101"),
        // seed 19 index 7493: `2147483647⌿t` made 2^31-1 gather indices on the host
        // (8 GB; in a long run the process was killed for memory).
        ("x←1 3⍴⍳3 ⋄ ⍴2147483647⌿x", "WS FULL"),
        ("x←1 3⍴⍳3 ⋄ ⍴1000⌿x", "1000 3"),
        // Found by the radix sort's tests (session 10): the reference's f64 search
        // sorted -0 before 0 but ran them together, so a 0 before a -0 was found at
        // the -0.
        ("⎕FR←645 ⋄ x←0.5 0 1.5 ⋄ y←x,-x ⋄ y⍳y", "1 2 3 4 2 6"),
        ("⎕FR←645 ⋄ x←0.5 0 1.5 ⋄ y←x,-x ⋄ (-y)⍳y", "4 2 6 1 2 3"),
        // seed 50 index 8914: `⍸` of a literal count was expanded on the host up to
        // 2^31-1 elements (8 GB: out of memory, the fuzzer's process was killed).
        ("a←⍸2147483647 ⋄ 1", "WS FULL"),
        ("⍴⍸3 4", "7"),
        // seed 50 index 675 (lavapipe; and NVIDIA): the device's f32 cosh erred by
        // 2 ulps, which ⌊ showed; f32 hyperbolic functions are f64 rounded once now.
        ("x←19 17 ⋄ ⌊6○x", "89241152 12077476"),
        ("x←19 17 ⋄ ⌊5○x", "89241152 12077476"),
        // seed 4 index 840: the reference's Γ overflowed in an intermediate beyond
        // 140 where the binomial is small and finite.
        (
            "x←157.3 120.5 ¯154.2 ⋄ x!2",
            "¯1.3489057E¯7 3.7308416E¯7 1.00100436E¯7",
        ),
    ]);
}

#[test]
fn f64_subnormals_are_kept() {
    // Seed 22 index 1922 (f64): the device's `*` scaled e^r by 2^k with one Ldexp,
    // which drivers do by a normal power of two (0 below 2^¯1022), and `⍺*⍵` of a
    // negative integer ⍵ took the reciprocal of |⍺|*|⍵|, which overflowed: both gave
    // 0 where the result is a subnormal.
    check(&[
        ("⎕FR←645 ⋄ x←1 ⋄ 2*¯1070+x-1", "7.905050333E¯323"),
        ("⎕FR←645 ⋄ x←1 ⋄ ¯2*¯1071+x-1", "¯3.952525167E¯323"),
        ("⎕FR←645 ⋄ x←1 ⋄ *¯740+x-1", "4.19955799E¯322"),
        ("⎕FR←645 ⋄ x←1 ⋄ *¯744+x-1", "9.881312917E¯324"),
        ("⎕FR←645 ⋄ x←1 ⋄ 0=*¯744+x-1", "0"),
        ("⎕FR←645 ⋄ x←1 ⋄ 3*¯600+x-1", "5.336385165E¯287"),
        ("⎕FR←645 ⋄ x←1 ⋄ 2*¯1080+x-1", "0"),
        ("⎕FR←645 ⋄ x←1 ⋄ (x×2*¯1074)=0", "0"),
    ]);
}

#[test]
fn f32_subnormals_sort_and_compare_as_numbers() {
    // On the H100 the bitonic grade took 1E¯40 for 0 (NVIDIA flushes f32 subnormals
    // in comparisons, and offers no DenormPreserve): floats sort by their ordered
    // bits now, in both sorts. (Arithmetic on f32 subnormals there is still flushed:
    // LANGUAGE.md.)
    check(&[
        ("x←1e¯40 0 ¯1e¯40 1e¯30 ⋄ ⍋x", "3 2 1 4"),
        ("x←1e¯40 0 ¯1e¯40 1e¯30 ⋄ ⍒x", "4 1 2 3"),
        ("x←2000⍴1e¯40 0 ¯1e¯40 ⋄ 4↑⍋x", "3 6 9 12"),
        ("x←2000⍴1e¯40 0 ¯1e¯40 ⋄ 4↑⍒x", "1 4 7 10"),
        // Rows of a matrix go through the bitonic network.
        ("m←3 2⍴1e¯40 0 0 0 ¯1e¯40 0 ⋄ ⍋m", "3 2 1"),
        ("m←3 2⍴1e¯40 0 0 0 ¯1e¯40 0 ⋄ ⍒m", "1 2 3"),
        // f32 comparisons are by ordered bits too (NVIDIA said `1e¯40=0`).
        ("x←1e¯40 0 ¯1e¯40 ⋄ x=0", "0 1 0"),
        ("x←1e¯40 0 ¯1e¯40 ⋄ x<0", "0 0 1"),
        ("x←1e¯40 0 ¯1e¯40 ⋄ (x≥0)∧x≤1", "1 1 0"),
        ("x←2000⍴1e¯40 0 ¯1e¯40 ⋄ +/x∊0", "667"),
        ("x←0 0.5 ⋄ (-x)=x", "1 0"),
    ]);
}

#[test]
fn f32_sums_and_products_round_once() {
    // They accumulated in f32 on the device (in a tree) and in f64 on the reference
    // (rounded once): where a sum cancels, the device lost its small items
    // (`+/x` gave 100000000), and a product whose partial products left f32 was a
    // DOMAIN ERROR. The device now accumulates them in f64 too.
    check(&[
        ("x←100000⍴1e8 0.5 ¯1e8 ⋄ +/x", "100016664"),
        ("x←100000⍴1e8 0.5 ¯1e8 ⋄ ¯1↑+\\x", "100016664"),
        ("x←100000⍴1e8 0.5 ¯1e8 ⋄ x+.×1", "100016664"),
        ("x←3 100000⍴1e8 0.5 ¯1e8 ⋄ +/x", "100016664 16667 ¯99983336"),
        ("x←100000 3⍴1e8 0.5 ¯1e8 ⋄ +⌿x", "1E13 50000 ¯1E13"),
        (
            "x←100001 4⍴1e8 0.5 ¯1e8 0.25 ⋄ +⌿x",
            "1.00001E13 50000.5 ¯1.00001E13 25000.25",
        ),
        (
            "x←3 100⍴1e8 0.5 ¯1e8 ⋄ ¯1↑[2]+\\x",
            "100000020\n       17\n¯99999980",
        ),
        ("x←1000⍴1e30 1e30 1e¯30 1e¯30 ⋄ ×/x", "1.0000091"),
        ("x←(50000⍴3.1e38),50000⍴¯3.1e38 ⋄ +/x", "0"),
        // Results beyond f32 are still errors.
        ("x←100⍴3.1e38 ⋄ +/x", "DOMAIN ERROR"),
        ("x←100⍴3.1e38 ⋄ ¯1↑+\\x", "DOMAIN ERROR"),
        ("x←1e30 1e30 1e¯30 1e¯30 ⋄ ×\\x", "DOMAIN ERROR"),
        ("x←2 50⍴3.1e38 ⋄ +/x", "DOMAIN ERROR"),
        // Matrix products too (found in review, session 10): the device gave 0 for
        // the first and ∞ (which APL has not) for the next two.
        ("a←1 3⍴1e8 0.5 ¯1e8 ⋄ b←3 1⍴1 ⋄ a+.×b", "0.5"),
        ("a←2 3⍴3e38 ⋄ b←3 2⍴1 ⋄ a+.×b", "DOMAIN ERROR"),
        ("a←64 64⍴3e38 ⋄ b←64 64⍴1 ⋄ ⍴a+.×b", "DOMAIN ERROR"),
        ("⎕FR←645 ⋄ a←2 3⍴1e308 ⋄ b←3 2⍴1 ⋄ a+.×b", "DOMAIN ERROR"),
        ("a←65 70⍴1e8 0.5 ¯1e8 ⋄ b←70 3⍴1 ⋄ +/,a+.×b", "300001820"),
    ]);
}

#[test]
fn a_zero_item_makes_a_float_product_zero_in_any_order() {
    // Seed 13 indices 4534, 17602, 19695: the device multiplied large items into ∞
    // before it met the 0 (a DOMAIN ERROR); the product is 0.
    check(&[
        ("x←1e30 1e30 0 ⋄ ×/x", "0"),
        ("x←0 1e30 1e30 ⋄ ×/x", "0"),
        ("x←(1000⍴1e30),0 ⋄ ×/x", "0"),
        ("x←0,1000⍴1e30 ⋄ ×/x", "0"),
        ("x←(100000⍴1e30 1e¯30),0 ⋄ ×/x", "0"),
        ("x←(1000 2⍴1e30),[1]0 5 ⋄ ×⌿x", "DOMAIN ERROR"),
        ("x←(1000 2⍴1e30),[1]0 0 ⋄ ×⌿x", "0 0"),
        ("x←(500 2⍴1e30),[1](2 2⍴0),[1]500 2⍴1e30 ⋄ ×⌿x", "0 0"),
        ("x←2 1000⍴1e30 ⋄ ×/x,0", "0 0"),
        ("x←(1000⍴1e30),0 ⋄ x×.+0", "0"),
        ("x←1e30 1e30 3 ⋄ ×/x", "DOMAIN ERROR"),
        ("x←2 3 4.5 0 2 ⋄ ×/x", "0"),
        ("x←2 3 4.5 ⋄ ×/x", "27"),
        ("⎕FR←645 ⋄ x←0,1e200 1e200 ⋄ ×/x", "0"),
        ("⎕FR←645 ⋄ x←1e200 1e200 0 ⋄ ×/x", "0"),
        // Scans: each prefix with a 0 is 0; a prefix before it still overflows.
        ("x←0 1e30 1e30 ⋄ ×\\x", "0 0 0"),
        ("x←2 3 4.5 0 1e30 1e30 ⋄ ×\\x", "2 6 27 0 0 0"),
        ("x←1e30 1e30 0 1e30 ⋄ ×\\x", "DOMAIN ERROR"),
        ("x←0,20⍴⌊2*62 ⋄ +/×\\x", "0"),
        ("x←2,0,20⍴⌊2*62 ⋄ ¯2↑×\\x", "0 0"),
    ]);
}

#[test]
fn empty_axes_among_large_ones_are_counted_without_overflow() {
    // Found in review (session 9): the identities of an empty reduction among large
    // axes were allocated whole (160 GB: the process aborted on both backends), so
    // was a large index, and
    // shape products overflowed before they met the 0 (a debug-build panic in the
    // planner).
    check(&[
        ("⍴+/[2](100000 0 100000)⍴0", "WS FULL"),
        ("⍴+/(100000 100000 0)⍴0", "WS FULL"),
        ("⍴+/[2](10 0 10)⍴0", "10 10"),
        ("⍴⍴(0,40⍴100000)⍴1", "41"),
        ("⍴,((40⍴100000),0)⍴1", "0"),
        // The reference allocated 10^10 items for this index (process aborted).
        ("x←2 2⍴1 ⋄ ⍴x[100000⍴1;100000⍴1]", "WS FULL"),
    ]);
}

#[test]
fn subtract_scans_of_integers_fold_every_prefix_exactly() {
    // The reference now scans `-\` of integers in O(n) (it folded each prefix:
    // `-\⍳40000` took 16 s); every step of every prefix's right fold is still checked.
    check(&[
        ("¯2↑-\\⍳40000", "20000 ¯20000"),
        ("-\\¯3 5 ¯7 2", "¯3 ¯8 ¯15 ¯17"),
        ("-\\3 4⍴⍳12", "1 ¯1  2 ¯2\n5 ¯1  6 ¯2\n9 ¯1 10 ¯2"),
        ("-\\(⌊2*62),(-⌊2*62),0", "DOMAIN ERROR"),
        (
            "x←9223372036854775807 1 ⋄ -\\x",
            "9223372036854775807 9223372036854775806",
        ),
        (
            "x←¯9223372036854775807 1 ⋄ -\\x",
            "¯9223372036854775807 ¯9223372036854775808",
        ),
        (
            "x←0 9223372036854775807 1 ⋄ -\\x",
            "0 ¯9223372036854775807 ¯9223372036854775806",
        ),
        ("x←¯1 9223372036854775807 ¯5 ⋄ -\\x", "DOMAIN ERROR"),
        ("x←(⌊2*62) 0 (⌊2*62) ⋄ -\\x", "DOMAIN ERROR"),
    ]);
}

#[test]
fn recursion_on_small_arrays_decides_early() {
    // Under the default backend a recursion of scalars goes to the CPU after a few
    // hundred calls instead of 20,000 device calls (13 s for fib 20 on lavapipe).
    let mut s = Session::new(Backend::Auto).unwrap();
    let o = s.eval("fib←{⍵≤1:⍵ ⋄ (∇⍵-1)+∇⍵-2} ⋄ fib 20").unwrap();
    assert_eq!(arrc::display(&o.value.unwrap()), "6765");
    assert!(
        o.notes.iter().any(|n| n.contains("small arrays")),
        "{:?}",
        o.notes
    );
    // Under `Vulkan` it still runs on the device.
    let mut g = gpu();
    let o = g.eval("fib←{⍵≤1:⍵ ⋄ (∇⍵-1)+∇⍵-2} ⋄ fib 8").unwrap();
    assert_eq!(arrc::display(&o.value.unwrap()), "21");
}

#[test]
fn caches_stay_bounded() {
    // Every distinct statement made pipelines that were kept forever.
    let mut s = gpu();
    for k in 0..300 {
        s.eval(&format!("+/(⍳10)×{k}")).unwrap();
    }
    let st = s.stats();
    assert!(
        st.pipelines_cached as usize <= arrc_vk::MAX_PIPELINES,
        "{st:?}"
    );
    assert!(st.pipelines_cached > 0 && st.modules_cached > 0, "{st:?}");
}
