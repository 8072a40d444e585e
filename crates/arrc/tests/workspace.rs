//! The device-resident workspace (issue 15): arrays stay on the device between
//! statements, `eval` calls and REPL lines, and come back to the host once, when the
//! host needs them. Counts are of real uploads and readbacks on the Vulkan device.

use arrc::{Array, Backend, Data, Session, Stats};

fn gpu(backend: Backend) -> Session {
    Session::new(backend)
        .expect("a Vulkan device is required for these tests (install mesa-vulkan-drivers)")
}

fn show(s: &mut Session, src: &str) -> String {
    match s.eval(src) {
        Ok(o) => o.value.map(|v| arrc::display(&v)).unwrap_or_default(),
        Err(e) => e.class.name().to_string(),
    }
}

/// The counters that `src` moved.
fn moved(s: &mut Session, src: &str) -> (String, Stats) {
    let before = s.stats();
    let v = show(s, src);
    (v, s.stats().since(&before))
}

#[test]
fn a_chain_of_statements_moves_only_its_result() {
    let mut s = gpu(Backend::Vulkan);
    // Scans are not deferred: x and y are computed and stay on the device.
    let (v, d) = moved(&mut s, "x←+\\⍳100000 ⋄ y←+\\x ⋄ ¯1↑y");
    assert_eq!(v, "166671666700000");
    assert_eq!(d.uploads, 0, "{d:?}");
    // The last item's 8 bytes, and no array.
    assert_eq!(d.readback_bytes, 8, "{d:?}");
    assert_eq!(d.resident_arrays, 2, "{d:?}");
    // Later calls read x and y where they are.
    let (v, d) = moved(&mut s, "z←+\\y-x ⋄ ⌈/z");
    assert_eq!(v, "4166749999583325000");
    assert_eq!((d.uploads, d.readback_bytes), (0, 8), "{d:?}");
}

#[test]
fn elementwise_assignments_fuse_into_the_statements_that_read_them() {
    let mut s = gpu(Backend::Vulkan);
    // Issue 15's example: one readback, no upload, nothing stored.
    let (v, d) = moved(&mut s, "x←⍳100000 ⋄ y←x×2 ⋄ +/y");
    assert_eq!(v, "10000100000");
    assert_eq!(
        (d.uploads, d.readback_bytes, d.deferred),
        (0, 8, 2),
        "{d:?}"
    );
    assert_eq!(d.resident_arrays, 0, "{d:?}");
    // The names still hold their values, computed when something needs them.
    assert_eq!(show(&mut s, "¯3↑y"), "199996 199998 200000");
    assert_eq!(s.get("x").map(|a| a.len()), Some(100000));
    // A recipe keeps the values it read: assigning x later does not change y.
    assert_eq!(show(&mut s, "x←⍳1000 ⋄ y←x×2 ⋄ x←5 ⋄ +/y"), "1001000");
    // A deferred name read inside a dfn, a function by name, an index.
    assert_eq!(show(&mut s, "y←(⍳1000)×2 ⋄ +/{⍵+y}1"), "1002000");
    assert_eq!(show(&mut s, "f←{⍵+y} ⋄ +/f 1"), "1002000");
    assert_eq!(show(&mut s, "k←(⍳100)×3 ⋄ m←⍳300 ⋄ +/m[k]"), "15150");
    // A value lowered with large replicate counts, whose inputs are then reassigned.
    assert_eq!(
        show(&mut s, "c←1000⍴1 2 ⋄ x←⍳1000 ⋄ y←c/x ⋄ x←0 ⋄ c←0 ⋄ +/y"),
        "751000"
    );
    // Several names, one recipe; then each goes its own way.
    assert_eq!(
        show(&mut s, "a←b←(⍳1000)+0 ⋄ b←b×2 ⋄ (+/a),+/b"),
        "500500 1001000"
    );
    // A long chain stays correct (recipes are cut at a size).
    let chain: String = std::iter::repeat_n("x←x+1 ⋄ ", 300).collect();
    assert_eq!(show(&mut s, &format!("x←⍳1000 ⋄ {chain}+/x")), "800500");
    // Floats divided by a literal of magnitude 1 or more (or multiplied by one of at
    // most 1) cannot leave the float range: deferred too. By 0.5 they can: computed
    // there, where its error is raised.
    let (v, d) = moved(&mut s, "x←(⍳100000)÷4 ⋄ y←x×0.5 ⋄ +/y");
    assert_eq!(v, "625006300");
    assert_eq!((d.deferred, d.readback_bytes), (2, 4), "{d:?}");
    let (v, d) = moved(&mut s, "x←(1E38×1+⍳100000)÷0.5");
    assert_eq!((v.as_str(), d.deferred), ("DOMAIN ERROR", 0), "{d:?}");
}

#[test]
fn a_deferred_assignment_still_raises_its_error_there() {
    let mut s = gpu(Backend::Vulkan);
    assert_eq!(show(&mut s, "y←7 ⋄ x←⍳1000 ⋄ y←x÷x-500"), "DOMAIN ERROR");
    assert_eq!(show(&mut s, "y"), "7");
    assert_eq!(show(&mut s, "y←1e30×⍳1000 ⋄ z←y×y"), "DOMAIN ERROR");
    assert_eq!(show(&mut s, "z"), "VALUE ERROR");
    assert_eq!(show(&mut s, "⍴y"), "1000");
    assert_eq!(show(&mut s, "x←⍳1000 ⋄ y←x+1 2"), "LENGTH ERROR");
    // The reference (Auto) reads deferred names too.
    let mut a = gpu(Backend::Auto);
    assert_eq!(
        show(
            &mut a,
            "x←⍳1000 ⋄ y←x×2 ⋄ f←{⍵≤1:⍵ ⋄ (∇⍵-1)+∇⍵-2} ⋄ +/y+f 15"
        ),
        "1611000"
    );
}

#[test]
fn host_arrays_are_uploaded_once() {
    let mut s = gpu(Backend::Vulkan);
    let x: Vec<f32> = (0..5000).map(|i| (i % 7) as f32).collect();
    s.set("x", Array::vector(Data::F32(x))).unwrap();
    let (v, d) = moved(&mut s, "+/x");
    assert_eq!(v, "14995");
    assert_eq!((d.uploads, d.upload_bytes), (1, 20000), "{d:?}");
    let (v, d) = moved(&mut s, "⌈/x");
    assert_eq!(v, "6");
    assert_eq!(d.uploads, 0, "{d:?}");
    // A new value replaces the device copy.
    s.set("x", Array::vector(Data::F32(vec![1.0; 3000])))
        .unwrap();
    let (v, d) = moved(&mut s, "+/x");
    assert_eq!(v, "3000");
    assert_eq!(d.uploads, 1, "{d:?}");
}

#[test]
fn get_reads_a_device_array_back_once() {
    let mut s = gpu(Backend::Vulkan);
    s.eval("x←⍳1000").unwrap();
    let before = s.stats();
    let a = s.get("x").cloned().expect("x");
    assert_eq!(a.shape, vec![1000]);
    assert_eq!(a.data.get(999).as_i64(), Some(1000));
    let after = s.stats();
    assert_eq!(after.readbacks - before.readbacks, 1);
    assert_eq!(after.readback_bytes - before.readback_bytes, 4000);
    s.get("x").expect("x");
    assert_eq!(s.stats().readbacks, after.readbacks);
    // Small arrays come back with the statement's status word.
    s.eval("n←⍳5").unwrap();
    let before = s.stats();
    assert_eq!(s.get("n").map(arrc::display).as_deref(), Some("1 2 3 4 5"));
    assert_eq!(s.stats().readbacks, before.readbacks);
}

#[test]
fn names_share_a_device_array_and_keep_their_values() {
    let mut s = gpu(Backend::Vulkan);
    assert_eq!(
        show(&mut s, "a←b←⍳1000 ⋄ b←b+1 ⋄ (+/a),+/b"),
        "500500 501500"
    );
    assert_eq!(show(&mut s, "a←a×0 ⋄ (+/a),+/b"), "0 501500");
    // An error leaves the names as they were.
    assert_eq!(show(&mut s, "b←b÷0"), "DOMAIN ERROR");
    assert_eq!(show(&mut s, "+/b"), "501500");
    assert_eq!(show(&mut s, "b←(1000⍴1 0)/b ⋄ ⍴b"), "500");
    assert_eq!(show(&mut s, "+/b"), "250500");
}

#[test]
fn statements_that_need_values_on_the_host_read_them_back() {
    let mut s = gpu(Backend::Vulkan);
    // Replicate counts of a large device array: lowering needs their values.
    assert_eq!(show(&mut s, "c←1000⍴0 1 2 ⋄ x←⍳1000 ⋄ +/c/x"), "500166");
    // A shape from a device array.
    assert_eq!(show(&mut s, "n←+/1000⍴1 ⋄ ⍴⍳n"), "1000");
}

#[test]
fn the_cpu_reference_sees_device_arrays_and_its_assignments_replace_them() {
    let mut s = gpu(Backend::Auto);
    show(&mut s, "x←⍳1000 ⋄ f←{⍵≤1:⍵ ⋄ (∇⍵-1)+∇⍵-2}");
    // A recursion on small arrays goes to the reference after 256 calls: it reads x
    // from the device, and assigns x.
    let o = s.eval("x←x+f 15 ⋄ 3↑x").unwrap();
    assert_eq!(
        o.value.map(|v| arrc::display(&v)).as_deref(),
        Some("611 612 613")
    );
    assert!(
        o.notes.iter().any(|n| n.contains("CPU")),
        "expected a fallback: {:?}",
        o.notes
    );
    // The device copy of the old x must not come back.
    assert_eq!(show(&mut s, "+/x"), "1110500");
    assert_eq!(show(&mut s, "y←x-610 ⋄ +/y"), "500500");
}

#[test]
fn eviction_sends_arrays_back_to_the_host_and_values_stay() {
    let mut s = gpu(Backend::Vulkan);
    s.set_device_budget(10_000);
    let (v, d) = moved(
        &mut s,
        "a←+\\2000⍴1 ⋄ b←+\\2001⍴1 ⋄ c←+\\2002⍴1 ⋄ (+/a),(+/b),+/c",
    );
    assert_eq!(v, "2001000 2003001 2005003");
    assert!(d.evictions >= 1, "{d:?}");
    assert!(d.resident_bytes <= 10_000, "{d:?}");
    assert_eq!(show(&mut s, "(+/a),(+/b),+/c"), "2001000 2003001 2005003");
    s.set_device_budget(0);
    assert_eq!(show(&mut s, "d←+\\a>0 ⋄ +/d+a"), "4002000");
    assert_eq!(s.stats().resident_arrays, 0);
    assert_eq!(show(&mut s, "+/d-a"), "0");
}

#[test]
fn a_value_not_displayed_is_not_read_back() {
    let mut s = gpu(Backend::Vulkan);
    let (v, d) = moved(&mut s, "⍳100000 ⋄ 1+2");
    assert_eq!(v, "3");
    assert_eq!(d.readback_bytes, 8, "{d:?}");
    // Its errors are still found.
    assert_eq!(show(&mut s, "÷0×⍳100000 ⋄ 1"), "DOMAIN ERROR");
}

/// Random programs of assignments over a few names (elementwise functions that can
/// and cannot fail, structural ones, folds, reassignments, names read twice and read
/// from dfns), on the device and on the reference: every name ends with the same
/// value, and every statement with the same error class. They exercise the resident
/// workspace and fusion across statements together.
#[test]
fn random_programs_of_assignments_agree_with_the_reference() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand::rngs::StdRng::seed_from_u64(20261124);
    let names = ["a", "b", "c", "d"];
    let exprs = [
        "⍳N",
        "X×2",
        "X+1",
        "X-Y",
        "X×Y",
        "X÷3",
        "X÷Y",
        "⌽X",
        "1⌽X",
        "X⌈Y",
        "X>Y",
        "X=Y",
        "|X-Y",
        "-X",
        "X×X",
        "+\\X",
        "(+/X)+0×X",
        "X+Y×2",
        "{⍵+X}Y",
        "N⍴X",
        "⌊X÷7",
        "X*2",
        "1000000000×X",
        "X×Y×X",
        "(X>Y)/X",
    ];
    let mut bad = vec![];
    let mut deferred = 0;
    for case in 0..40 {
        let n = [70, 100, 257, 1000][rng.random_range(0..4)];
        let mut prog = vec![];
        // Every name starts as an array of n items.
        for (k, v) in names.iter().enumerate() {
            prog.push(format!("{v}←(⍳{n})+{k}"));
        }
        for _ in 0..rng.random_range(3..10) {
            let target = names[rng.random_range(0..names.len())];
            let e = exprs[rng.random_range(0..exprs.len())]
                .replace('N', &n.to_string())
                .replace('X', names[rng.random_range(0..names.len())])
                .replace('Y', names[rng.random_range(0..names.len())]);
            prog.push(format!("{target}←{e}"));
        }
        let mut dev = gpu(Backend::Vulkan);
        let mut cpu = Session::new(Backend::Cpu).unwrap();
        for stmt in &prog {
            let (d, c) = (dev.eval(stmt), cpu.eval(stmt));
            if d.is_err() != c.is_err()
                || d.as_ref().err().map(|e| e.class) != c.as_ref().err().map(|e| e.class)
            {
                bad.push(format!(
                    "case {case} `{stmt}` in {prog:?}: device {:?}, reference {:?}",
                    d.err().map(|e| e.class),
                    c.err().map(|e| e.class)
                ));
                break;
            }
        }
        deferred += dev.stats().deferred;
        for v in names {
            let (d, c) = (dev.get(v).cloned(), cpu.get(v).cloned());
            let same = match (&d, &c) {
                (Some(d), Some(c)) => arrc::fuzz::close(d, c),
                (None, None) => true,
                _ => false,
            };
            if !same {
                bad.push(format!(
                    "case {case} name {v} in {prog:?}: device {d:?}, reference {c:?}"
                ));
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    assert!(deferred > 40, "only {deferred} statements were deferred");
}

#[test]
fn a_statement_compiled_again_is_reused_only_where_nothing_it_read_changed() {
    let mut s = gpu(Backend::Vulkan);
    // The same text with other small values, functions, shapes or large counts.
    for (src, want) in [
        ("n←3 ⋄ +/⍳n", "6"),
        ("n←4 ⋄ +/⍳n", "10"),
        ("f←{⍵+1} ⋄ f 1", "2"),
        ("f←{⍵+2} ⋄ f 1", "3"),
        ("x←⍳100 ⋄ +/x", "5050"),
        ("x←⍳200 ⋄ +/x", "20100"),
        ("c←100⍴1 0 ⋄ x←⍳100 ⋄ +/c/x", "2500"),
        ("c←100⍴0 1 ⋄ x←⍳100 ⋄ +/c/x", "2550"),
        ("c←100⍴2 ⋄ x←⍳100 ⋄ +/c/x", "10100"),
    ] {
        for _ in 0..2 {
            assert_eq!(show(&mut s, src), want, "{src}");
        }
    }
    // Run again, the same statements come from the cache.
    let before = s.stats();
    assert_eq!(show(&mut s, "x←⍳200 ⋄ +/x"), "20100");
    assert_eq!(s.stats().since(&before).compiles_reused, 2);
}

#[test]
fn compile_sees_deferred_names() {
    let mut s = gpu(Backend::Vulkan);
    s.eval("x←⍳1000 ⋄ y←x×2").unwrap();
    assert!(s.stats().deferred >= 2);
    let c = s.compile("+/y").expect("y is known to compile");
    assert!(!c.plan.kernels.is_empty());
}

#[test]
fn a_chain_of_recipes_run_again_compiles_nothing() {
    // Each run makes new snapshots for its recipes; compiled statements are keyed by
    // the snapshots' places, not their names, so once the workspace holds the same
    // names, every statement's compilation comes from the cache (with the names in
    // the key, two were compiled again on every run).
    let mut s = gpu(Backend::Vulkan);
    let chain = "n←1000 ⋄ x←⍳n ⋄ y←x×2 ⋄ z←y+1 ⋄ +/z";
    for _ in 0..2 {
        assert_eq!(show(&mut s, chain), "1002000");
    }
    let before = s.stats();
    assert_eq!(show(&mut s, chain), "1002000");
    let st = s.stats().since(&before);
    assert_eq!(st.deferred, 3, "{st:?}");
    assert_eq!(st.compiles_reused, 5, "{st:?}");
}

#[test]
fn an_indexed_assignment_with_computed_indices_stays_on_the_device() {
    let mut s = gpu(Backend::Vulkan);
    // `x[i]←0` with `i` computed: a scatter on the device; x is neither read back
    // nor uploaded, and the sum is the one readback.
    let (v, d) = moved(&mut s, "x←⍳100000 ⋄ i←1+100000|7×⍳5000 ⋄ x[i]←0 ⋄ +/x");
    assert_eq!(v, "4912527500");
    assert_eq!((d.uploads, d.readback_bytes), (0, 8), "{d:?}");
    // The last of repeated indices wins.
    let (v, _) = moved(&mut s, "i←1+100000|⌊(⍳6000)÷2 ⋄ x[i]←⍳6000 ⋄ x[1+⍳3]");
    assert_eq!(v, "3 5 7");
}

#[test]
fn an_indexed_assignment_writes_an_array_nothing_else_holds_in_place() {
    let mut s = gpu(Backend::Vulkan);
    s.eval("x←+\\⍳100000 ⋄ i←1+100000|7×⍳5000").unwrap();
    let (_, d) = moved(&mut s, "x[i]←0");
    assert_eq!(d.in_place, 1, "{d:?}");
    // Another name holds the same array: a copy is scattered into, and y keeps its
    // items.
    let (_, d) = moved(&mut s, "y←x ⋄ x[i]←¯1");
    assert_eq!(d.in_place, 0, "{d:?}");
    assert_eq!(show(&mut s, "(+/x=¯1),+/y=¯1"), "5000 0");
    // An error leaves the array as it was: the scatter stores nothing once an
    // earlier kernel found an index out of range (the first of 100001 … 2).
    let before = show(&mut s, "+/x");
    s.eval("j←⌽1+⍳100000").unwrap();
    let err = s.eval("x[j]←0").expect_err("index 100001");
    assert_eq!(err.class, arrc::ErrorClass::Index, "{err}");
    assert_eq!(show(&mut s, "+/x"), before);
    let (_, d) = moved(&mut s, "x[j-1]←0");
    assert_eq!(d.in_place, 1, "{d:?}");
    assert_eq!(show(&mut s, "+/x"), "0");
}

#[test]
fn a_strand_assignment_runs_on_the_device_and_reads_back_only_its_items() {
    let mut s = gpu(Backend::Vulkan);
    s.eval("x←+\\⍳100000").unwrap();
    // Was: the CPU reference, after reading every device array back (x's 800 KB).
    let (_, d) = moved(&mut s, "(a b)←¯2↑x");
    assert!(d.readback_bytes <= 64, "{d:?}");
    assert_eq!(show(&mut s, "b-a"), "100000");
    assert_eq!(show(&mut s, "(p q r)←7 ⋄ p,q,r"), "7 7 7");
    assert_eq!(show(&mut s, "(a b)←x"), "LENGTH ERROR");
    assert_eq!(show(&mut s, "(a b)←2 2⍴x"), "RANK ERROR");
    // The names keep their values after an error.
    assert_eq!(show(&mut s, "b-a"), "100000");
}

#[test]
fn launched_assignments_raise_their_errors_where_apl_would() {
    // Assignments of large arrays are submitted without waiting; an error one
    // raised is found later, the workspace goes back to the state before it, and
    // the program runs again from it: the same error, the same workspace, as if
    // each statement had been waited for.
    let mut s = gpu(Backend::Vulkan);
    s.eval("b←5 ⋄ c←7").unwrap();
    let before = s.stats();
    let program = "a←⍳100000 ⋄ b←÷a-5 ⋄ c←b+1 ⋄ d←c×2";
    let e = s.eval(program).expect_err("÷0 is a DOMAIN ERROR");
    assert_eq!(e.class.name(), "DOMAIN ERROR");
    // The span is `÷` of the second statement.
    let at = program.find('÷').unwrap();
    assert_eq!(e.span, at..at + '÷'.len_utf8(), "{e:?}");
    let st = s.stats().since(&before);
    assert!(st.launched >= 2, "{st:?}");
    assert_eq!(st.relaunched, 1, "{st:?}");
    // a was made; b and c keep their values; d was never made.
    assert_eq!(show(&mut s, "+/a"), "5000050000");
    assert_eq!(show(&mut s, "b c"), "5 7");
    assert_eq!(show(&mut s, "d"), "VALUE ERROR");
    // Without an error nothing runs twice, and the values are the reference's.
    let before = s.stats();
    let v = show(&mut s, "x←0.0001×⍳300000 ⋄ y←*x ⋄ z←y÷+/y ⋄ w←z×x ⋄ +/w");
    let st = s.stats().since(&before);
    assert_eq!(st.relaunched, 0, "{st:?}");
    assert!(st.launched >= 3, "{st:?}");
    let mut cpu = Session::new(Backend::Cpu).unwrap();
    assert_eq!(
        v,
        show(&mut cpu, "x←0.0001×⍳300000 ⋄ y←*x ⋄ z←y÷+/y ⋄ w←z×x ⋄ +/w")
    );
    // A statement after a failing one that reads its (unchecked) result and gives
    // a small value, and one that fails for another reason: the first error is
    // still the one APL meets first.
    let e = s
        .eval("p←⍳100000 ⋄ q←p*1000 ⋄ r←+/q ⋄ t←(r>0)↑1 2 ⋄ u←1 2+1 2 3")
        .expect_err("overflow");
    assert_eq!(e.class.name(), "DOMAIN ERROR", "{e:?}");
    assert_eq!(show(&mut s, "≢p"), "100000");
    assert_eq!(show(&mut s, "q"), "VALUE ERROR");
    assert_eq!(show(&mut s, "r"), "VALUE ERROR");
    // A roll in a statement after the failing one draws nothing: ⎕RL goes back.
    s.eval("⎕RL←7").unwrap();
    let first = show(&mut s, "?5⍴100");
    s.eval("⎕RL←7").unwrap();
    assert!(s.eval("k←÷0×⍳100000 ⋄ m←?100000⍴100").is_err());
    assert_eq!(show(&mut s, "?5⍴100"), first);
}

#[test]
fn a_program_run_again_compiles_nothing() {
    // Life's recipes read twice are computed on their own ("forced"): those compiles
    // were keyed by the snapshots' names, new on every run, so each run compiled them
    // again (0.75 ms of Life's 3.4 on the H100). By the snapshots' places, the third
    // run finds every statement compiled.
    let mut s = gpu(Backend::Vulkan);
    let life = "m←16\nB←3>7|(m m⍴⍳m-1)×13\nN←(1⊖B)+(¯1⊖B)+(1⌽B)+(¯1⌽B)+(1⊖1⌽B)+(1⊖¯1⌽B)+(¯1⊖1⌽B)+¯1⊖¯1⌽B\nB←(N=3)∨B∧N=2\nN←(1⊖B)+(¯1⊖B)+(1⌽B)+(¯1⌽B)+(1⊖1⌽B)+(1⊖¯1⌽B)+(¯1⊖1⌽B)+¯1⊖¯1⌽B\nB←(N=3)∨B∧N=2\n+/,B";
    let first = show(&mut s, life);
    assert_eq!(show(&mut s, life), first);
    let before = s.stats();
    assert_eq!(show(&mut s, life), first);
    let st = s.stats().since(&before);
    assert_eq!(st.compiles, 0, "{st:?}");
    assert!(st.compiles_reused > 0, "{st:?}");
}

/// Functions that set a system variable or show output, called from a statement that
/// would otherwise run on the device: `⎕IO←0` inside `f` changes `f`'s `⍳`, and `⎕←`
/// shows its value once. (The device path bound `⎕IO` and `⎕` as local names: `f 3`
/// was `1 2 3`, `+/f 3` was 6, and the output was lost.)
#[test]
fn functions_that_set_system_variables_or_show_output_keep_their_effects() {
    for backend in [Backend::Vulkan, Backend::Auto] {
        let mut s = gpu(backend);
        s.eval("f←{⎕IO←0 ⋄ ⍳⍵} ⋄ g←{+/f ⍵} ⋄ h←{⎕←⍵ ⋄ ⍵+1}")
            .unwrap();
        assert_eq!(show(&mut s, "f 3"), "0 1 2");
        assert_eq!(show(&mut s, "+/f 3"), "3");
        assert_eq!(show(&mut s, "g 4"), "6");
        assert_eq!(show(&mut s, "⍳3"), "1 2 3");
        s.take_output();
        assert_eq!(show(&mut s, "+/h¨1 2"), "5");
        assert_eq!(s.take_output(), vec!["1".to_string(), "2".to_string()]);
        assert_eq!(show(&mut s, "x←h 3 ⋄ x×2"), "8");
        assert_eq!(s.take_output(), vec!["3".to_string()]);
    }
}

/// `)save` and `)load` (`Session::save_workspace`, `load_workspace`): arrays of every
/// type (device-resident ones read back), nested ones with an empty one's prototype,
/// functions by their text and the system variables come back exactly; a bad file
/// leaves the workspace as it was.
#[test]
fn a_saved_workspace_loads_back_exactly() {
    let dir = std::env::temp_dir().join(format!("arrc-ws-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("ws.json");
    let mut s = gpu(Backend::Auto);
    s.eval("⎕IO←0 ⋄ ⎕PP←5 ⋄ x←+\\⍳100000 ⋄ big←4611686018427387903 ⋄ f←{⍵×2} ⋄ avg←+/÷≢")
        .unwrap();
    s.eval("c←2 3⍴'abcdef' ⋄ n←(1 2)'ab' (2 2⍴0.1 0.2 0.3 0.4) ⋄ e←0⍴⊂1 2 ⋄ r←÷3 7")
        .unwrap();
    // A function that names one defined before it, whose name sorts after its own.
    s.eval("zsq←{⍵×⍵} ⋄ anorm←{(+/zsq ⍵)*0.5}").unwrap();
    let shown = |s: &mut Session| {
        [
            "x[99999]",
            "big",
            "c",
            "n",
            "⊃e",
            "≡e",
            "r",
            "f 21",
            "avg 1 2 3 4",
            "⍳3",
            "anorm 3 4",
        ]
        .map(|e| show(s, e))
    };
    let before = shown(&mut s);
    assert_eq!(before[1], "4611686018427387903");
    s.save_workspace(&file).unwrap();
    let mut t = gpu(Backend::Auto);
    t.eval("old←1").unwrap();
    t.load_workspace(&file).unwrap();
    assert_eq!(shown(&mut t), before);
    assert_eq!(show(&mut t, "old"), "VALUE ERROR");
    assert_eq!(t.variables(), ["big", "c", "e", "n", "r", "x"]);
    std::fs::write(dir.join("bad.json"), "{\"format\":\"arrc workspace 1\",\"arrays\":{\"x\":{\"shape\":[2],\"type\":\"i32\",\"data\":[1]}}}").unwrap();
    let e = t.load_workspace(&dir.join("bad.json")).unwrap_err();
    assert!(e.message.contains("not an arrc workspace"), "{e}");
    assert_eq!(show(&mut t, "f 1"), "2");
    // A function that cannot be read leaves the workspace as it was.
    let text = std::fs::read_to_string(&file)
        .unwrap()
        .replace("{⍵×2}", "{⍵×2");
    std::fs::write(dir.join("broken.json"), text).unwrap();
    assert!(t.load_workspace(&dir.join("broken.json")).is_err());
    assert_eq!(show(&mut t, "f 1"), "2");
    assert_eq!(show(&mut t, "x[99999]"), before[0]);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn text_and_nested_arrays_elsewhere_in_the_workspace_leave_statements_on_the_device() {
    let mut s = gpu(Backend::Auto);
    show(&mut s, "s←'label' ⋄ t←(1 2)(3 4 5) ⋄ x←⍳100");
    // Neither `s` nor `t` is read: the statement runs its kernels (it was computed on
    // the CPU reference, as if it had read them).
    let (v, d) = moved(&mut s, "+/x×2");
    assert_eq!(v, "10100");
    assert!(d.kernels > 0, "{d:?}");
    // An assignment to a name the statement does not read leaves it compiled.
    show(&mut s, "k←0");
    let (v, d) = moved(&mut s, "+/x×2");
    assert_eq!(v, "10100");
    show(&mut s, "k←1");
    let (v2, d2) = moved(&mut s, "+/x×2");
    assert_eq!(v2, "10100");
    assert_eq!((d.compiles, d2.compiles), (0, 0), "{d:?} {d2:?}");
}

#[test]
fn nested_arrays_the_device_computed_stay_there_between_statements() {
    let mut s = gpu(Backend::Vulkan);
    // Issue 17: two items made on the device, summed there; only the two sums (16
    // bytes) come back, nothing goes up.
    let (v, d) = moved(&mut s, "x←(⍳100000)(⍳200000) ⋄ +/¨x");
    assert_eq!(v, "5000050000 20000100000");
    assert_eq!((d.uploads, d.readback_bytes), (0, 16), "{d:?}");
    assert_eq!(s.variables(), ["x"]);
    // Read again in later calls, by functions of items and of the whole.
    let (v, d) = moved(&mut s, "y←x×2 ⋄ (+/¨y),≢y");
    assert_eq!(v, "10000100000 40000200000 2");
    assert_eq!(d.uploads, 0, "{d:?}");
    // Split rows, held as one dense array; each function of a row applied to all.
    let (v, d) = moved(
        &mut s,
        "r←↓1000 1000⍴⍳1000000 ⋄ m←⌈/¨r ⋄ (+/m),(⍴r),+/(+/÷≢)¨⌽¨r",
    );
    assert_eq!(v, "500500000 1000 500000500", "{d:?}");
    assert_eq!(d.uploads, 0, "{d:?}");
    // The host copy is made when the host needs it, and is the same value.
    assert_eq!(show(&mut s, "z←↓2 3⍴⍳6 ⋄ z"), " 1 2 3  4 5 6");
    assert_eq!(show(&mut s, "≡z"), "2");
    let z = s.get("z").expect("z").clone();
    assert_eq!(z.shape, vec![2]);
    let mut cpu = gpu(Backend::Cpu);
    cpu.eval("z←(1 2 3)(4 5 6)").expect("cpu");
    assert_eq!(cpu.get("z"), Some(&z));
    // Assigned again, the name is a flat array; erased, it is gone.
    assert_eq!(show(&mut s, "x←5 ⋄ x+1"), "6");
    assert!(s.erase("y"));
    assert_eq!(show(&mut s, "y"), "VALUE ERROR");
}

#[test]
fn nested_values_kept_on_the_device_agree_with_the_reference() {
    // Programs over nested names, each run on the device path (Auto: what the
    // device path cannot do runs on the reference) and on the reference alone.
    let programs = [
        "x←(⍳5)(⍳7) ⋄ x",
        "x←(⍳5)(⍳7) ⋄ y←x ⋄ y,⊂⍳2",
        "x←⊂⍳3 ⋄ x ⋄ ⍴x",
        "x←,⊂⍳3 ⋄ (⍴x),≡x",
        "x←(⍳5)(2 3⍴⍳6) ⋄ ⍴¨x",
        "x←(⍳5)(⍳7) ⋄ x[2]←⊂⍳2 ⋄ x",
        "x←(⍳5)(⍳7) ⋄ (a b)←x ⋄ a+b[⍳5]",
        "x←(⍳5)(⍳7) ⋄ f←{+/⍵} ⋄ f¨x",
        "x←(⍳5)(⍳7) ⋄ g←{x} ⋄ g 0",
        "x←(⍳5)(⍳7) ⋄ x,←⊂⍳2 ⋄ ≢x",
        "r←↓3 4⍴⍳12 ⋄ r[2]",
        "r←⊂[1]3 4⍴⍳12 ⋄ ↑r",
        "r←⊂[1 3]2 3 4⍴⍳24 ⋄ ↑r",
        "r←↓0 3⍴0 ⋄ ⍴r",
        "r←↓3 0⍴0 ⋄ r",
        "r←↓5 ⋄ r",
        "r←↓0 3⍴0 ⋄ ⊃r",
        "r←↓0 3⍴0.5 ⋄ 1↑r",
        "r←↓0 3⍴0 ⋄ r≡↓0 3⍴0",
        "x←(1.5 2)(¯3 4) ⋄ x×x",
        "x←(⍳3)(÷0) ⋄ 1",
        "x←(⍳3)(⍳4) ⋄ x+1 2 3",
        "x←2?10 ⋄ y←(⍳3)(?5⍴6) ⋄ ⍴¨y",
    ];
    let mut bad = vec![];
    for p in programs {
        let mut dev = gpu(Backend::Auto);
        let mut cpu = gpu(Backend::Cpu);
        let (a, b) = (show(&mut dev, p), show(&mut cpu, p));
        if a != b {
            bad.push(format!("{p}\n  device path: {a}\n  reference:   {b}"));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn names_that_execute_assigns_are_read_again_from_the_host() {
    // `⍎'x←5'` runs on the reference, which assigns `x` where no text of the
    // statement shows it: the device copy (resident, a recipe, or a nested value
    // kept there) must not outlive it. Each gave the old value before.
    for (src, want) in [
        ("x←⍳100 ⋄ ⍎'x←5' ⋄ x", "5"),
        ("x←⍳100 ⋄ y←+\\x ⋄ ⍎'y←5' ⋄ y", "5"),
        ("x←2×⍳100 ⋄ ⍎'x←5' ⋄ x", "5"),
        ("x←(⍳3)(⍳4) ⋄ ⍎'x←5' ⋄ x", "5"),
        ("x←⍳100 ⋄ ⍎'x←1+⍳3' ⋄ +/x", "9"),
    ] {
        let mut s = gpu(Backend::Auto);
        assert_eq!(show(&mut s, src), want, "{src}");
    }
}

#[test]
fn nested_values_kept_on_the_device_are_evicted_too() {
    // Past the budget, a nested value's arrays go back to the host like any array
    // (they were never freed: every later statement sent every other array back).
    let mut s = gpu(Backend::Auto);
    s.set_device_budget(10_000);
    let (v, d) = moved(&mut s, "n←(+\\3000⍴1)(+\\4000⍴1) ⋄ +/¨n");
    assert_eq!(v, "4501500 8002000");
    assert!(d.evictions >= 1, "{d:?}");
    assert!(d.resident_bytes <= 10_000, "{d:?}");
    assert_eq!(show(&mut s, "+/¨n"), "4501500 8002000");
    assert_eq!(show(&mut s, "≢¨n"), "3000 4000");
}

#[test]
fn a_statement_on_the_reference_reads_back_only_what_it_reads() {
    // Text runs on the reference; it read every device array back first (8 MB here,
    // at every statement of text in a loop). Now only the arrays it can read: its own
    // names and those of the functions it calls, or all where `⍎` may read any.
    let mut s = gpu(Backend::Auto);
    show(&mut s, "x←+\\⍳1000000 ⋄ g←{+/x}");
    let (v, d) = moved(&mut s, "t←⌽'abc' ⋄ ⍴t");
    assert_eq!(v, "3");
    assert_eq!(d.readback_bytes, 0, "{d:?}");
    for (src, want) in [
        ("⍎'+/x'", "166667166667000000"),
        ("(g 0),⍴'ab'", "166667166667000000 2"),
        ("f←{⍎'+/x'} ⋄ f 0", "166667166667000000"),
    ] {
        let mut s = gpu(Backend::Auto);
        show(&mut s, "x←+\\⍳1000000 ⋄ g←{+/x}");
        assert_eq!(show(&mut s, src), want, "{src}");
    }
}

#[test]
fn small_results_are_written_where_the_host_reads_them() {
    let mut s = gpu(Backend::Vulkan);
    let x: Vec<f32> = (0..5000).map(|i| (i % 7) as f32).collect();
    s.set("x", Array::vector(Data::F32(x))).unwrap();
    // A fold's kernels write its value into host-visible memory: no copy.
    let (v, d) = moved(&mut s, "+/x");
    assert_eq!(v, "14995");
    assert_eq!((d.readbacks, d.direct_results), (1, 1), "{d:?}");
    // So does a small map; the status word it raises an error in is zeroed by
    // the host before every run, so the same statement runs clean after an error
    // (its buffers come again from the same cache).
    s.eval("y←0 1 2 ⋄ z←4 5 6").unwrap();
    for _ in 0..3 {
        let (v, d) = moved(&mut s, "(1+x[⍳3])÷y");
        assert_eq!(v, "DOMAIN ERROR");
        assert!(d.direct_results >= 1, "{d:?}");
        let (v, d) = moved(&mut s, "(1+x[⍳3])÷z");
        assert_eq!(v, "0.25 0.4 0.5", "{d:?}");
        assert!(d.direct_results >= 1, "{d:?}");
    }
    // Large results, results kept on the device and results whose kernels
    // scatter or scan are copied back as before.
    for src in ["2000⍴x", "w←+/x", "+\\x[⍳3]", "⍋x[⍳100]"] {
        let (_, d) = moved(&mut s, src);
        assert_eq!(d.direct_results, 0, "{src}: {d:?}");
    }
    // Values stay right where kernels write host memory: a row sum, a maximum, an
    // f32 overflow raised in it.
    assert_eq!(show(&mut s, "+/2 3⍴x"), "3 12");
    assert_eq!(show(&mut s, "⌈/x"), "6");
    assert_eq!(show(&mut s, "+/3e38 3e38×x[2 3]"), "DOMAIN ERROR");
}

#[test]
fn replicate_by_computed_counts_keeps_its_counts_on_the_device() {
    let mut s = gpu(Backend::Vulkan);
    // `?10` bounds x's items, and the bound goes with x to later statements: `x-5`
    // is at most 16 in magnitude, so the replicate runs on the device (its result
    // bounded by 16 items for each of y's). Was: x's 400 KB read back, and the
    // result's gather indices made on the host and uploaded.
    s.eval("x←?100000⍴10 ⋄ y←⍳100000").unwrap();
    let (v, d) = moved(&mut s, "r←(x-5)/y ⋄ (≢r),+/r");
    assert!(d.readback_bytes <= 64 && d.uploads <= 1, "{d:?}");
    let x = s.get("x").cloned().expect("x");
    let want = |x: &Array| {
        let (mut n, mut sum) = (0i64, 0i64);
        for i in 0..x.len() {
            let c = x.data.get(i).as_i64().unwrap() - 5;
            n += c.abs();
            // A negative count inserts that many fills (0).
            sum += c.max(0) * (i as i64 + 1);
        }
        format!("{n} {sum}")
    };
    assert_eq!(v, want(&x));
    // An indexed assignment in place puts an item past that bound: the bound is
    // not kept (else its count would be cut to 16).
    s.eval("i←1+100000|7×⍳5000").unwrap();
    let (_, d) = moved(&mut s, "x[i]←1000");
    assert_eq!(d.in_place, 1, "{d:?}");
    let x = s.get("x").cloned().expect("x");
    assert_eq!(show(&mut s, "r←(x-5)/y ⋄ (≢r),+/r"), want(&x));
}
