//! `arrc build` over a grid of dfns × element types × ranks, with run-time lengths on
//! both sides: every combination compiles to a module that passes spirv-val, or gives
//! an APL error; never an internal compiler error (`{⍺+⍵}` with f32 ⍺ and ⍵ failed the
//! IR verifier: the lengths of ⍺ and ⍵ are distinct symbols the host checks equal).

use arrc::build::{build, parse_arg_type};
use arrc_ir::plan::PlanOptions;
use arrc_ir::ElemType;

const DYADIC: &[&str] = &[
    "{⍺+⍵}",
    "{⍺-⍵}",
    "{⍺×⍵}",
    "{⍺÷⍵}",
    "{⍺⌈⍵}",
    "{⍺*⍵}",
    "{⍺|⍵}",
    "{⍺=⍵}",
    "{⍺<⍵}",
    "{(⍺×⍺)+⍵×⍵}",
    "{+/⍺×⍵}",
    "{⍺+.×⍵}",
    "{⍺∘.×⍵}",
    "{⍺,⍵}",
    "{(⍺+1)÷⍵+2}",
];

const MONADIC: &[&str] = &[
    "{+/⍵}",
    "{+\\⍵}",
    "{⌈\\⍵}",
    "{⌈/⍵}",
    "{×/⍵}",
    "{⌽⍵}",
    "{⍉⍵}",
    "{-⍵}",
    "{+/⍵×⍵}",
    "{⍵+1 ⋄ ⍵+2}",
    "{1↓⍵}",
];

const TYPES: &[&str] = &["f32", "i32", "i64", "f64"];

/// `None` if it built (`Some(true)` in `built`) or gave an APL error; else the failure.
fn one(
    src: &str,
    omega: &str,
    alpha: Option<&str>,
    opts: &PlanOptions,
    built: &mut usize,
) -> Option<String> {
    let w = parse_arg_type(omega, 0).unwrap();
    let a = alpha.map(|a| parse_arg_type(a, w.rank() as u32).unwrap());
    let float = if omega.starts_with("f64") || alpha.is_some_and(|a| a.starts_with("f64")) {
        ElemType::F64
    } else {
        ElemType::F32
    };
    match build(src, w, a, float, opts, &Default::default()) {
        Ok(b) => {
            // Validated by build(); check once more that it is a real module.
            assert!(b.words.len() > 5 && b.words[0] == 0x0723_0203, "{src}");
            *built += 1;
            None
        }
        Err(e) if e.message.contains("internal compiler error") => Some(format!(
            "{src} ⍺ {alpha:?} ⍵ {omega} ({} atomics): {}",
            if opts.int64_atomics {
                "64-bit"
            } else {
                "32-bit"
            },
            e.message
        )),
        Err(e) if e.message.contains("panicked") => Some(format!("{src}: {}", e.message)),
        Err(_) => None,
    }
}

#[test]
fn every_dfn_type_and_rank_builds_or_gives_an_apl_error() {
    let mut bad = vec![];
    let mut built = 0;
    let default = PlanOptions::default();
    let ranks = ["[0]", "", "[2]"];
    for src in DYADIC {
        for at in TYPES {
            for wt in TYPES {
                for ar in ranks {
                    for wr in ranks {
                        let (a, w) = (format!("{at}{ar}"), format!("{wt}{wr}"));
                        bad.extend(one(src, &w, Some(&a), &default, &mut built));
                    }
                }
            }
        }
    }
    // Monadic functions also for each named target: their kernels differ (tile
    // shapes, the scans' 64-bit status words where the device has such atomics).
    let targets: Vec<PlanOptions> = ["lavapipe", "nvidia", "generic"]
        .iter()
        .map(|t| arrc::build::target_options(t).unwrap())
        .chain([PlanOptions::default()])
        .collect();
    for src in MONADIC {
        for wt in TYPES {
            for wr in ranks {
                for opts in &targets {
                    bad.extend(one(src, &format!("{wt}{wr}"), None, opts, &mut built));
                }
            }
        }
    }
    assert!(
        bad.is_empty(),
        "{} failures:\n{}",
        bad.len(),
        bad.join("\n")
    );
    // Most of the grid is valid APL (scalar extension, equal ranks): it must build.
    assert!(built > 1000, "only {built} combinations built");
    let mut one_more = 0;
    assert_eq!(
        one("{⍺+⍵}", "f32", Some("f32"), &default, &mut one_more),
        None
    );
    assert_eq!(one_more, 1, "{{⍺+⍵}} of two f32 vectors builds");
}
