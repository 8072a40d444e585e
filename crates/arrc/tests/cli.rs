//! The `arrc` binary as a user runs it.

use std::process::Command;

fn arrc(args: &[&str]) -> (i32, String, String) {
    arrc_env(&[], args)
}

/// `arrc` with these environment variables set; a process ended by a signal exits -1.
fn arrc_env(env: &[(&str, &str)], args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_arrc"))
        .envs(env.iter().copied())
        .args(args)
        .output()
        .expect("runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn sum_of_a_million_on_the_device() {
    let (code, out, err) = arrc(&["eval", "--backend", "vulkan", "+/⍳1000000"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "500000500000\n");
}

#[test]
fn json_scan() {
    let (code, out, err) = arrc(&[
        "eval",
        "--backend",
        "vulkan",
        "--format",
        "json",
        "+\\1.5 2 ¯3",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        "{\"shape\":[3],\"type\":\"f32\",\"data\":[1.5,3.5,0.5]}\n"
    );
}

#[test]
fn apl_display_and_cpu_backend_agree() {
    let (_, gpu, _) = arrc(&["eval", "--backend", "vulkan", "¯3+2×⍳4"]);
    let (_, cpu, _) = arrc(&["eval", "--backend", "cpu", "¯3+2×⍳4"]);
    assert_eq!(gpu, "¯1 1 3 5\n");
    assert_eq!(gpu, cpu);
}

#[test]
fn errors_exit_nonzero_with_a_caret() {
    let (code, out, err) = arrc(&["eval", "1 2 3+4 5"]);
    assert_eq!(code, 1);
    assert!(out.is_empty());
    assert!(err.contains("LENGTH ERROR"), "{err}");
    assert!(err.contains('^') || err.contains('─'), "{err}");
    let (code, _, err) = arrc(&["eval", "x+1"]);
    assert_eq!(code, 1);
    assert!(err.contains("VALUE ERROR"), "{err}");
}

#[test]
fn devices_lists_subgroup_size() {
    let (code, out, err) = arrc(&["devices"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("subgroup size"), "{out}");
    // The workgroup memory a kernel may use, which tiles held there must fit.
    assert!(out.contains("workgroup memory "), "{out}");
}

#[test]
fn build_writes_validated_spirv_and_manifest() {
    let dir = std::env::temp_dir().join(format!("arrc-build-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let prog = dir.join("sumsq.apl");
    std::fs::write(&prog, "{+/⍵×⍵}\n").unwrap();
    let spv = dir.join("sumsq.spv");
    let (code, _, err) = arrc(&["build", prog.to_str().unwrap(), "-o", spv.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let bytes = std::fs::read(&spv).unwrap();
    let words: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    arrc_spirv::validate(&words).expect("spirv-val passes");
    let asm = arrc_spirv::disassemble(&words).unwrap();
    assert!(asm.contains("OpGroupNonUniformFAdd"), "{asm}");
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("sumsq.json")).unwrap()).unwrap();
    assert_eq!(manifest["entry_points"].as_array().unwrap().len(), 2);
    assert_eq!(
        manifest["specialization_constants"][0]["name"],
        "workgroup_size"
    );
    let (code, out, _) = arrc(&["build", prog.to_str().unwrap(), "--emit", "spvasm"]);
    assert_eq!(code, 0);
    // An f32 sum accumulates in f64 (`--no-float64`: in f32).
    assert!(
        out.contains("OpGroupNonUniformFAdd %double %uint_3 Reduce"),
        "{out}"
    );
    let (code, out, _) = arrc(&[
        "build",
        prog.to_str().unwrap(),
        "--emit",
        "spvasm",
        "--no-float64",
    ]);
    assert_eq!(code, 0);
    assert!(
        out.contains("OpGroupNonUniformFAdd %float %uint_3 Reduce") && !out.contains("Float64"),
        "{out}"
    );
    // A dfn fold along a length known only at run time can be empty: the module then
    // raises the DOMAIN ERROR the manifest lists (a dfn has no identity element).
    let fold = dir.join("fold.apl");
    std::fs::write(&fold, "{{⍺+⍵×2}/⍵}\n").unwrap();
    let out = dir.join("fold.spv");
    let (code, _, err) = arrc(&["build", fold.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("fold.json")).unwrap()).unwrap();
    let errors = manifest["device_errors"].as_array().unwrap();
    assert!(
        errors.iter().any(|e| e["message"]
            .as_str()
            .unwrap()
            .contains("no identity element")),
        "{errors:?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn chained_scans_publish_their_status_by_exchange() {
    // Other workgroups poll a tile's status words. On the H200 a relaxed atomic store
    // reached them late (session 40: `⌈\` of 2^28 items 720 µs, 599 by exchange), so
    // every status word a scan or compaction publishes is an atomic exchange, in each
    // status layout: packed words (NVIDIA), wide words (f64 sums), flag and words.
    let dir = std::env::temp_dir().join(format!("arrc-publish-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (src, omega) in [
        ("{⌈\\⍵}", "i32"),
        ("{+\\⍵}", "f32"),
        ("{+\\⍵}", "i32"),
        ("{(⍵>0)/⍵}", "f32"),
    ] {
        let prog = dir.join("scan.apl");
        std::fs::write(&prog, format!("{src}\n")).unwrap();
        for target in ["generic", "lavapipe", "nvidia"] {
            let (code, out, err) = arrc(&[
                "build",
                prog.to_str().unwrap(),
                "--omega",
                omega,
                "--target",
                target,
                "--emit",
                "spvasm",
            ]);
            assert_eq!(code, 0, "{src} {target}: {err}");
            assert!(
                out.contains("OpAtomicExchange") && !out.contains("OpAtomicStore"),
                "{src} on {target}: {out}"
            );
        }
    }
}

#[test]
fn a_statement_past_the_device_wait_is_an_error_not_a_crash() {
    // A dfn scan down a 3000×3000 matrix is about 10^10 dfn steps: minutes on
    // lavapipe, far past a one-second wait. arrc must say so and exit with 1. Before
    // session 40 the process then crashed as it ended (SIGSEGV: the memory
    // allocator freed the blocks the kernel, still running, read).
    let (code, _, err) = arrc_env(
        &[("ARRC_DEVICE_TIMEOUT", "1")],
        &["eval", "b←3000⍴0 1 1 ⋄ +/,{⍺|⍵}\\[1]!(b)∘.≤b"],
    );
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("DEVICE ERROR")
            && err.contains("within 1 s")
            && err.contains("ARRC_DEVICE_TIMEOUT"),
        "{err}"
    );
}

#[test]
fn a_fuzz_run_stops_where_the_device_stalls_and_says_where_to_go_on() {
    // Seed 245's program 340 (f64) is a dfn scan down a 12289×12289 matrix: it
    // outlasts any wait on lavapipe. Before session 40 the run went on with the
    // stalled device, whose every later statement failed (a false finding at 822)
    // and the process crashed as it ended.
    let (code, stdout, err) = arrc_env(
        &[("ARRC_DEVICE_TIMEOUT", "1")],
        &[
            "fuzz",
            "--seed",
            "245",
            "--float",
            "f64",
            "--from",
            "339",
            "--programs",
            "5",
            "--timeout",
            "1",
        ],
    );
    assert_eq!(code, 0, "{stdout}{err}");
    assert!(
        stdout.contains("2 programs in")
            && stdout.contains("1 slow")
            && stdout.contains("program 340 outlasted the device's wait")
            && stdout.contains("--from 341"),
        "{stdout}{err}"
    );
}

#[test]
fn without_a_device_the_default_backend_says_so_and_uses_the_cpu() {
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_arrc"))
            .args(args)
            .env("VK_ICD_FILENAMES", "/nonexistent/icd.json")
            .env("VK_DRIVER_FILES", "/nonexistent/icd.json")
            .output()
            .expect("runs");
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, out, err) = run(&["eval", "+/⍳10"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "55\n");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("mesa-vulkan-drivers"), "{err}");
    let (code, _, err) = run(&["eval", "--backend", "vulkan", "+/⍳10"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("DEVICE ERROR"), "{err}");
}

/// `arrc repl` with `input` on its standard input (a pipe), optionally sending it
/// SIGINT once `after` has passed.
fn repl(input: &[u8], interrupt_after: Option<std::time::Duration>) -> (String, String) {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_arrc"))
        .args(["repl", "--backend", "cpu"])
        .env("HOME", std::env::temp_dir())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runs");
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input).unwrap();
    if let Some(t) = interrupt_after {
        std::thread::sleep(t);
        // SAFETY: sends a signal to our own child process.
        unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn the_repl_reads_past_invalid_utf8_and_runs_every_line() {
    let (out, err) = repl(b"1+1\n\xff\xfe\nx\xe2\x86\x905\nx\xc3\x972\n", None);
    assert_eq!(
        out.lines().skip(1).collect::<Vec<_>>(),
        ["2", "10"],
        "{err}"
    );
    assert!(err.contains("not valid UTF-8"), "{err}");
}

#[test]
fn ctrl_c_interrupts_a_statement_and_the_session_goes_on() {
    // A recursion that runs for minutes on the reference, then two more lines.
    let src = "x←42\nfib←{⍵≤1:⍵ ⋄ (∇⍵-1)+∇⍵-2}\nfib 40\nx+1\n";
    let (out, err) = repl(src.as_bytes(), Some(std::time::Duration::from_secs(2)));
    let lines: Vec<&str> = out.lines().skip(1).collect();
    assert_eq!(lines, ["INTERRUPT", "43"], "{err}");
}

#[test]
fn ctrl_c_interrupts_a_long_scan_on_the_reference() {
    // A scan of a function that is not associative folds each prefix on its own
    // (O(n²) steps): `-\` of 65537 floats took about a minute and never looked for
    // the interrupt (nor could the fuzzer's timeout stop it: seed 51 hung at about
    // program 22800).
    let src = "x←42\n¯1↑-\\0.5×⍳65537\nx+1\n";
    let (out, err) = repl(src.as_bytes(), Some(std::time::Duration::from_secs(2)));
    let lines: Vec<&str> = out.lines().skip(1).collect();
    assert_eq!(lines, ["INTERRUPT", "43"], "{err}");
}

#[test]
fn a_closed_pipe_ends_quietly() {
    use std::io::Read;
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_arrc"))
        .args(["eval", "--backend", "cpu", "⍳100000"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runs");
    let mut first = [0u8; 1];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap();
    // stdout is closed now: the rest of the display meets a closed pipe.
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked"), "{err}");
    assert_ne!(out.status.code(), Some(101), "{err}");
}

#[test]
fn a_device_that_cannot_open_falls_back_without_crashing() {
    let (code, out, err) = arrc(&["eval", "--device", "5", "1+1"]);
    assert_eq!((code, out.as_str()), (0, "2\n"), "{err}");
    assert!(err.contains("device 5 does not exist"), "{err}");
    let out = Command::new(env!("CARGO_BIN_EXE_arrc"))
        .args(["eval", "1+1"])
        .env("ARRC_DEVICE", "3")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "2\n");
}

#[test]
fn the_pipeline_cache_on_disk_survives_a_corrupt_file() {
    let dir = std::env::temp_dir().join(format!("arrc-cli-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let run = || {
        let out = Command::new(env!("CARGO_BIN_EXE_arrc"))
            .args(["eval", "--backend", "vulkan", "+/¯3↑+\\⍳100000"])
            .env("ARRC_CACHE_DIR", &dir)
            .output()
            .expect("run arrc");
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    assert_eq!(run(), "14999850001");
    let files: Vec<_> = std::fs::read_dir(&dir)
        .expect("the cache directory was made")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let whole = std::fs::read(&files[0]).unwrap();
    // Damaged in each way a file can be: the next run ignores it and writes a whole one.
    let mut flipped = whole.clone();
    let last = flipped.len() - 1;
    flipped[last] ^= 0xff;
    for bad in [
        vec![],
        whole[..whole.len() / 2].to_vec(),
        flipped,
        vec![0xAA; 4096],
    ] {
        std::fs::write(&files[0], &bad).unwrap();
        assert_eq!(run(), "14999850001");
        assert!(std::fs::read(&files[0]).unwrap().starts_with(b"ARRCPC01"));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn spirv_modules_cached_on_disk_are_read_back_and_damaged_ones_ignored() {
    // A second process compiling the same statement reads its validated modules
    // from the disk cache (no emission, no spirv-val); a damaged or truncated file
    // is emitted and validated again, with the same answer.
    let dir = std::env::temp_dir().join(format!("arrc-cli-modules-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let run = || {
        let out = Command::new(env!("CARGO_BIN_EXE_arrc"))
            .args(["eval", "--backend", "vulkan", "--stats", "+/¯3↑+\\⍳100000"])
            .env("ARRC_CACHE_DIR", &dir)
            .output()
            .expect("run arrc");
        assert!(out.status.success(), "{out:?}");
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        let from_disk: u64 = err
            .split("from disk ")
            .nth(1)
            .and_then(|t| t.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no module count in {err}"));
        (
            String::from_utf8_lossy(&out.stdout).trim().to_string(),
            from_disk,
        )
    };
    assert_eq!(run(), ("14999850001".to_string(), 0));
    let (v, read) = run();
    assert_eq!(v, "14999850001");
    assert!(read > 0, "nothing read from the disk cache");
    let modules: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .flat_map(|d| {
            std::fs::read_dir(d)
                .unwrap()
                .filter_map(|e| e.ok().map(|e| e.path()))
        })
        .collect();
    assert_eq!(modules.len() as u64, read, "{modules:?}");
    for (i, m) in modules.iter().enumerate() {
        let whole = std::fs::read(m).unwrap();
        let bad = if i % 2 == 0 {
            whole[..whole.len() / 2].to_vec()
        } else {
            let mut b = whole.clone();
            b[whole.len() - 5] ^= 0x40;
            b
        };
        std::fs::write(m, bad).unwrap();
    }
    assert_eq!(run(), ("14999850001".to_string(), 0));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn long_vectors_fold_at_the_print_width() {
    // ⎕PW (80 in a clear workspace) folds a long vector between its numbers, the
    // folded parts indented 6 spaces, as Dyalog shows them; ⎕PW←n sets it.
    let (code, out, err) = arrc(&["eval", "⍳40"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30\n      31 32 33 34 35 36 37 38 39 40\n"
    );
    let (code, out, err) = arrc(&["eval", "⎕PW←42 ⋄ ⍳30"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17\n      18 19 20 21 22 23 24 25 26 27 28 29\n      30\n"
    );
    let (code, _, err) = arrc(&["eval", "⎕PW←41"]);
    assert_ne!(code, 0);
    assert!(err.contains("DOMAIN ERROR"), "{err}");
    // A wider matrix shows the columns that fit, then the rest in blocks indented 6
    // spaces (Dyalog's example for "Display of arrays", at ⎕PW←42).
    let (code, out, err) = arrc(&[
        "eval",
        "⎕PW←42 ⋄ 3 20⍴54 22 5 68 68 94 39 52 84 4 6 53 68 1 39 7 42 69 49 94 85 53 10 66 42 71 92 77 27 5 74 33 64 76 100 37 25 99 73 76 66 8 64 89 28 44 77 48 24 28 36 17 49 90 91 7 91 51 52 32",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        "\
54 22  5 68 68 94 39 52 84  4  6 53 68  1
85 53 10 66 42 71 92 77 27  5 74 33 64 76
66  8 64 89 28 44 77 48 24 28 36 17 49 90
       39  7 42 69 49 94
      100 37 25 99 73 76
       91  7 91 51 52 32
"
    );
}

#[test]
fn two_devices_from_the_command_line() {
    // One lavapipe opened twice: statements split across both, the same value.
    let (code, out, err) = arrc(&[
        "eval",
        "--devices",
        "0,0",
        "--split-from",
        "1000",
        "--stats",
        "x←(⍳100003)÷0.5 ⋄ y←x×2 ⋄ +/y",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "2.00014E10\n");
    // (`÷0.5` keeps its check, so each statement is computed, each split. With
    // `÷1`, bounded by its dividend, none can fail: the three fuse into one
    // reduction, which is not split.)
    assert!(err.contains("arrc: devices 2 statements split 3 "), "{err}");
    // A device that does not exist is an error that says so.
    let (code, _, err) = arrc(&["eval", "--devices", "0,7", "1"]);
    assert_eq!(code, 1);
    assert!(err.contains("device 7 does not exist"), "{err}");
}

#[test]
fn emit_plan_names_what_runs_from_the_host() {
    // `⍤` of a function no kernel maps over cells has no single plan: --emit plan
    // says which part runs from the host, cell by cell, instead of an error.
    let (code, out, err) = arrc(&["eval", "--emit", "plan", "{⍵[⍋⍵]}⍤1⊢2 3⍴⍳6"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("{⍵[⍋⍵]}⍤1 from the host"), "{out}");
    // A glyph arrc does not support is still an error.
    let (code, _, err) = arrc(&["eval", "--emit", "plan", "⍕1 2"]);
    assert_ne!(code, 0);
    assert!(err.contains("NOT YET SUPPORTED"), "{err}");
}

#[test]
fn characters_run_on_the_reference() {
    // Character literals, shown as text; the GPU path hands such statements to the
    // reference (with a note), refuses them under `--backend vulkan`, and numeric
    // statements beside them stay on the device.
    let (code, out, err) = arrc(&["eval", "x←'hello' ⋄ x[1]←'J' ⋄ ⌽x"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "olleJ\n");
    assert!(err.contains("computed on the CPU reference"), "{err}");
    let (code, _, err) = arrc(&["eval", "--backend", "vulkan", "⌽'abc'"]);
    assert_ne!(code, 0);
    assert!(err.contains("NOT YET SUPPORTED"), "{err}");
    let (code, out, err) = arrc(&["eval", "--stats", "x←'abc' ⋄ y←⍳3 ⋄ +/y×2"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "12\n");
    // Characters and numbers in one array (Dyalog's mixed arrays), on the reference.
    let (code, out, err) = arrc(&["eval", "'abc',1"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "abc 1\n");
    let (code, _, err) = arrc(&["eval", "'a'+1"]);
    assert_ne!(code, 0);
    assert!(err.contains("DOMAIN ERROR"), "{err}");
}

#[test]
fn quad_output_shows_values_in_order() {
    // `⎕←x` shows x where the statement runs, before the program's value or its
    // error; `⍕` and `⍎` make and run text.
    let (code, out, err) = arrc(&["eval", "⎕←1 2 3 ⋄ x←⎕←'sum: ',⍕+/⍳4 ⋄ ⍴x"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "1 2 3\nsum: 10\n7\n");
    let (code, out, err) = arrc(&["eval", "⎕←2 2⍴⍳4 ⋄ ⍎'÷0'"]);
    assert_ne!(code, 0);
    assert_eq!(out, "1 2\n3 4\n");
    assert!(err.contains("DOMAIN ERROR"), "{err}");
}

#[test]
fn the_repl_has_system_commands() {
    // `)vars )fns )erase )clear )off` as Dyalog's session has them, and `]help`.
    let (out, err) = repl(
        "x←⍳3\nf←{⍵+1}\ny←2\n)vars\n)fns\n)erase x zz\n)vars\n⎕IO←0\n)clear\n⎕IO\n)vars\n)bogus\n)off\n1+1\n"
            .as_bytes(),
        None,
    );
    let lines: Vec<&str> = out.lines().skip(1).collect();
    assert_eq!(
        lines,
        [
            "x y",
            "f",
            "not found zz",
            "y",
            "clear ws",
            "1",
            "unknown command )bogus (]help lists them)"
        ],
        "{out}\n{err}"
    );
    let (out, _) = repl(b"]help\n", None);
    assert!(out.contains(")erase"), "{out}");
    // `]save` and `]load` move arrays through NumPy files.
    let path = std::env::temp_dir().join(format!("arrc-repl-{}.npy", std::process::id()));
    let p = path.to_str().unwrap();
    let (out, err) = repl(
        format!("]save {p} 2 3⍴⍳6\n]load y {p}\n+/y\n]load z /no/such.npy\n").as_bytes(),
        None,
    );
    let lines: Vec<&str> = out.lines().skip(1).collect();
    assert_eq!(lines[0], "6 15", "{out}\n{err}");
    assert!(lines[1].contains("/no/such.npy"), "{out}");
    let _ = std::fs::remove_file(&path);
}

#[test]
fn eval_reads_the_program_from_standard_input() {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_arrc"))
        .args(["eval", "--backend", "cpu"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all("x←⍳10\n+/x\n".as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout), "55\n");
}

#[test]
fn the_repl_reads_dfns_over_several_lines_and_summarizes_large_arrays() {
    // An open `{` goes on to the next line (quotes and comments aside); a large
    // array shows its ends and its shape.
    let (out, err) = repl(
        "f←{\n  a←⍵×2 ⍝ {\n  a+1\n}\nf 3\n'{'\n⍳1e6\n".as_bytes(),
        None,
    );
    let lines: Vec<&str> = out.lines().skip(1).collect();
    assert_eq!(lines[..2], ["7", "{"], "{out}\n{err}");
    assert!(out.contains("…"), "{out}");
    assert!(
        out.ends_with("(shape 1000000; 1000000 items, the middle not shown)\n"),
        "{out}"
    );
    assert!(out.lines().count() < 40, "{out}");
}

#[test]
fn json_errors() {
    let (code, out, _) = arrc(&["eval", "--format", "json", "1 2+1 2 3"]);
    assert_eq!(code, 1);
    assert_eq!(
        out,
        "{\"error\":\"LENGTH ERROR\",\"message\":\"lengths 2 and 3 do not match\",\"span\":[3,4]}\n"
    );
}

#[test]
fn the_repl_has_user_commands() {
    // `]time` runs a statement and says where the time went; `]plan` shows what it
    // compiles to; `]keys` the backtick layout.
    let (out, err) = repl(
        b"x\xe2\x86\x90\xe2\x8d\xb310\n]time +/x\n]plan +/x\n]keys\n]device\n",
        None,
    );
    assert!(out.contains("\n55\ntime "), "{out}\n{err}");
    assert!(out.contains("compile "), "{out}");
    assert!(out.contains("kernel 0 "), "{out}");
    assert!(out.contains("`i ⍳"), "{out}");
    assert!(out.contains("no device: the CPU reference"), "{out}");
}

#[test]
fn shell_completions() {
    for shell in ["bash", "zsh", "fish"] {
        let (code, out, err) = arrc(&["completions", shell]);
        assert_eq!(code, 0, "{err}");
        assert!(
            out.contains("eval") && out.contains("--backend"),
            "{shell}: {out}"
        );
    }
    let (code, _, err) = arrc(&["completions", "nope"]);
    assert_ne!(code, 0);
    assert!(err.contains("possible values"), "{err}");
}

#[test]
fn numpy_files_in_and_out() {
    // Files NumPy wrote (tests/data: Fortran order, big-endian u16, i8, bool), read
    // into names; a value written with --out reads back; files arrc cannot take name
    // themselves in the error.
    let data = |f: &str| format!("{}/../../tests/data/{f}", env!("CARGO_MANIFEST_DIR"));
    let set = |n: &str, f: &str| format!("{n}={}", data(f));
    let (code, out, err) = arrc(&["eval", "--set", &set("a", "f64_fortran.npy"), ",a"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "0 0.25 0.5 0.75 1 1.25\n");
    let (code, out, err) = arrc(&[
        "eval",
        "--set",
        &set("b", "u16_big.npy"),
        "--set",
        &set("c", "i8.npy"),
        "--set",
        &set("d", "bool.npy"),
        "(+/b),c,,d",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "10000 ¯128 0 127 1 0 0 1\n");
    for (f, why) in [("f16.npy", "<f2"), ("nan.npy", "not a finite number")] {
        let (code, _, err) = arrc(&["eval", "--set", &set("e", f), "e"]);
        assert_ne!(code, 0);
        assert!(err.contains(f) && err.contains(why), "{err}");
    }
    let path = std::env::temp_dir().join(format!("arrc-out-{}.npy", std::process::id()));
    let p = path.to_str().unwrap();
    let (code, out, err) = arrc(&["eval", "--out", p, "2 3⍴⍳6"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "");
    let (code, out, err) = arrc(&["eval", "--set", &format!("z={p}"), "+/z"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "6 15\n");
    let _ = std::fs::remove_file(&path);
}

#[test]
fn csv_files_of_numbers_in() {
    // A CSV file of numbers is a matrix (integers, or floats where a field is one;
    // `¯` or `-` for negatives); a ragged file names the file and line; a word is
    // text in the matrix.
    let data = |f: &str| format!("{}/../../tests/data/{f}", env!("CARGO_MANIFEST_DIR"));
    let (code, out, err) = arrc(&["eval", "--set", &format!("a={}", data("ints.csv")), "a"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "1  2 3\n4 ¯5 6\n");
    let (code, out, err) = arrc(&["eval", "--set", &format!("b={}", data("floats.csv")), "+/b"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "1.5 ¯0.25\n");
    let (code, _, err) = arrc(&["eval", "--set", &format!("c={}", data("ragged.csv")), "c"]);
    assert_ne!(code, 0);
    assert!(
        err.contains("ragged.csv") && err.contains("line 2"),
        "{err}"
    );
    let (code, out, err) = arrc(&["eval", "--set", &format!("c={}", data("word.csv")), "≡c"]);
    assert_eq!((code, out.as_str()), (0, "¯2\n"), "{err}");
}

#[test]
fn nested_arrays_display_as_dyalog_and_boxed() {
    // Dyalog's default display: a blank each side of an enclosed item.
    let (code, out, err) = arrc(&["eval", "(1 2)(3 4 5)"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, " 1 2  3 4 5\n");
    // `--box` (the REPL's `]box on`): frames, as Dyalog's `]box on`.
    let (code, out, err) = arrc(&["eval", "--box", "1 (2 (3 4))"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        "┌─┬───────┐\n│1│┌─┬───┐│\n│ ││2│3 4││\n│ │└─┴───┘│\n└─┴───────┘\n"
    );
    let (code, out, err) = arrc(&["eval", "--box", "2 2⍴'ab' (1 2) 3 (2 2⍴⍳4)"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        "┌──┬───┐\n│ab│1 2│\n├──┼───┤\n│3 │1 2│\n│  │3 4│\n└──┴───┘\n"
    );
    // Simple arrays are shown as they are.
    let (_, out, _) = arrc(&["eval", "--box", "2 2⍴⍳4"]);
    assert_eq!(out, "1 2\n3 4\n");
}

/// `⍞` and `⎕` read lines of standard input: `⍞` after (and with) its prompt, `⎕`
/// evaluated; `⍞←` output stays on its line; the end of the input is an INPUT
/// INTERRUPT, never a hang.
#[test]
fn quote_quad_and_quad_read_standard_input() {
    use std::io::Write;
    use std::process::Stdio;
    let run = |program: &str, input: &str| {
        let mut child = Command::new(env!("CARGO_BIN_EXE_arrc"))
            .args(["eval", program])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("runs");
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, out, err) = run("⍞←'Name: ' ⋄ n←⍞ ⋄ ⍴n", "Ada\n");
    assert_eq!((code, out.as_str()), (0, "Name: 9\n"), "{err}");
    let (code, out, err) = run("10×⎕+2", "⍳3\n");
    assert_eq!((code, out.as_str()), (0, "⎕:\n      30 40 50\n"), "{err}");
    let (code, out, err) = run("⍞←'2+2' ⋄ ⍞←'=' ⋄ ⍞←4", "");
    assert_eq!((code, out.as_str()), (0, "2+2=4\n"), "{err}");
    let (code, out, err) = run("⎕←1 ⋄ f←{⌽⍞} ⋄ f 0", "abc\n");
    assert_eq!((code, out.as_str()), (0, "1\ncba\n"), "{err}");
    let (code, _, err) = run("x←⍞", "");
    assert_eq!(code, 1);
    assert!(err.contains("INPUT INTERRUPT"), "{err}");
    // In the REPL, ⍞ reads the next line of its input (the REPL reads on after it).
    let (out, err) = repl("x←⍞\nabc\n⌽x\n1+1\n".as_bytes(), None);
    assert_eq!(
        out.lines().skip(1).collect::<Vec<_>>(),
        ["cba", "2"],
        "{err}"
    );
}

/// An error inside a named function is shown in that function's own text, in the file
/// it came from, with its name and line (`in avg[2]`, as Dyalog's `avg[2]`), whether
/// the function came from `--file`, `--load` or an earlier line.
#[test]
fn errors_in_named_functions_show_the_function_and_its_line() {
    let dir = std::env::temp_dir().join(format!("arrc-fnerr-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let prog = dir.join("prog.apl");
    std::fs::write(&prog, "avg←{\n  s←+/⍵\n  s÷≢⍵+⍳3\n}\navg 1 2\n").unwrap();
    let (code, _, err) = arrc(&["eval", "--backend", "cpu", "--file", prog.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert!(err.contains("LENGTH ERROR"), "{err}");
    assert!(err.contains("prog.apl:3:7"), "{err}");
    assert!(err.contains("in avg[2]"), "{err}");
    let lib = dir.join("lib.apl");
    std::fs::write(&lib, "⍝ a library\nnorm←{\n  ⍵÷+/⍵\n}\n").unwrap();
    let (code, _, err) = arrc(&[
        "eval",
        "--backend",
        "cpu",
        "--load",
        lib.to_str().unwrap(),
        "norm 1 0 ¯1",
    ]);
    assert_eq!(code, 1);
    assert!(err.contains("DOMAIN ERROR"), "{err}");
    assert!(err.contains("lib.apl:3:4"), "{err}");
    assert!(err.contains("in norm[1]"), "{err}");
    let (code, out, _) = arrc(&[
        "eval",
        "--backend",
        "cpu",
        "--format",
        "json",
        "--load",
        lib.to_str().unwrap(),
        "norm 1 0 ¯1",
    ]);
    assert_eq!(code, 1);
    assert!(out.contains("\"function\":\"norm\""), "{out}");
    let (out, err) = repl(
        "f←{\n  a←⍵\n  a+1 2 3\n}\ng←{1+f ⍵}\ng 1 2\n".as_bytes(),
        None,
    );
    assert!(
        err.contains("in f[2]") && err.contains("a+1 2 3"),
        "{out}\n{err}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// `--set NAME=FILE:TYPE:SHAPE` reads raw little-endian numbers; a CSV file with text
/// gives a matrix of numbers and text; a bad file names itself.
#[test]
fn set_reads_raw_binary_and_csv_with_text() {
    let dir = std::env::temp_dir().join(format!("arrc-set-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bin = dir.join("d.bin");
    let bytes: Vec<u8> = (1..=6).flat_map(|i| (i as f32).to_le_bytes()).collect();
    std::fs::write(&bin, bytes).unwrap();
    let spec = format!("x={}:f32:2,3", bin.display());
    let (code, out, err) = arrc(&["eval", "--set", &spec, "+/x"]);
    assert_eq!((code, out.as_str()), (0, "6 15\n"), "{err}");
    let spec = format!("x={}:f64:5", bin.display());
    let (code, _, err) = arrc(&["eval", "--set", &spec, "x"]);
    assert_eq!(code, 1);
    assert!(err.contains("d.bin") && err.contains("shape"), "{err}");
    let csv = dir.join("t.csv");
    std::fs::write(&csv, "item,price\npen,1.5\nink,2\n").unwrap();
    let spec = format!("t={}", csv.display());
    let (code, out, err) = arrc(&["eval", "--backend", "cpu", "--set", &spec, "+/1↓t[;2]"]);
    assert_eq!((code, out.as_str()), (0, "3.5\n"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

/// `arrc man` prints the man page in roff, and `arrc man eval` the subcommand's.
#[test]
fn man_pages() {
    let (code, out, err) = arrc(&["man"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains(".TH arrc 1") && out.contains("arrc\\-eval(1)"),
        "{out}"
    );
    let (code, out, err) = arrc(&["man", "eval"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains(".TH arrc-eval 1") && out.contains("\\-\\-backend"),
        "{out}"
    );
    let (code, _, err) = arrc(&["man", "nope"]);
    assert_eq!(code, 2);
    assert!(err.contains("no subcommand nope"), "{err}");
}

/// `arrc build`: `--entry` chooses among a file's functions (several without it is an
/// error naming them), `--stdlib` lets it call the standard library, `--target`
/// plans for a device, and the manifest says what the module needs of the device and
/// where each length the device computes is left.
#[test]
fn build_entry_stdlib_target_and_requirements() {
    let dir = std::env::temp_dir().join(format!("arrc-build-entry-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("two.apl");
    std::fs::write(&src, "avg←{(+/⍵)÷≢⍵}\nkeep←{(⍵>avg ⍵)/⍵}\n").unwrap();
    let out = dir.join("two.spv");
    let (code, _, err) = arrc(&["build", src.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert_ne!(code, 0);
    assert!(err.contains("--entry") && err.contains("avg keep"), "{err}");
    let (code, _, err) = arrc(&[
        "build",
        src.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--entry",
        "keep",
        "--target",
        "nvidia",
    ]);
    assert_eq!(code, 0, "{err}");
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("two.json")).unwrap()).unwrap();
    assert_eq!(m["entry"], "keep");
    // docs/MANIFEST.md's JSON Schema names every field the manifest has.
    let doc = std::fs::read_to_string(format!(
        "{}/../../docs/MANIFEST.md",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let schema = doc
        .split("```json\n")
        .last()
        .unwrap()
        .split("```")
        .next()
        .unwrap();
    let schema: serde_json::Value = serde_json::from_str(schema).unwrap();
    let required: Vec<&str> = schema["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let fields: Vec<&String> = m.as_object().unwrap().keys().collect();
    assert_eq!(required.len(), fields.len(), "{required:?} {fields:?}");
    assert!(
        fields.iter().all(|f| required.contains(&f.as_str())),
        "{required:?} {fields:?}"
    );
    assert_eq!(m["target"]["name"], "nvidia");
    assert_eq!(m["requires"]["subgroup_size"], 32);
    let caps = m["requires"]["capabilities"].as_array().unwrap();
    assert!(
        caps.iter().any(|c| c == "GroupNonUniformArithmetic"),
        "{caps:?}"
    );
    assert!(m["requires"]["subgroup_operations"]
        .as_array()
        .unwrap()
        .iter()
        .any(|o| o == "ARITHMETIC"));
    // The compress's count: computed on the device, left in a buffer the manifest names.
    let d = &m["device_lengths"][0];
    assert_eq!(m["result"]["shape"][0], d["length"]);
    assert!(d["buffer"].as_u64().unwrap() < m["buffers"].as_array().unwrap().len() as u64);
    let (code, _, err) = arrc(&["build", src.to_str().unwrap(), "--entry", "nope"]);
    assert_ne!(code, 0);
    assert!(err.contains("no function nope"), "{err}");
    let sm = dir.join("sm.apl");
    std::fs::write(&sm, "f←{softmax ⍵}\n").unwrap();
    let (code, _, err) = arrc(&[
        "build",
        sm.to_str().unwrap(),
        "-o",
        dir.join("sm.spv").to_str().unwrap(),
    ]);
    assert_ne!(code, 0, "softmax is not defined without --stdlib");
    let (code, _, err2) = arrc(&[
        "build",
        sm.to_str().unwrap(),
        "-o",
        dir.join("sm.spv").to_str().unwrap(),
        "--stdlib",
    ]);
    assert_eq!(code, 0, "{err}\n{err2}");
    let (code, _, err) = arrc(&["build", sm.to_str().unwrap(), "--target", "tpu"]);
    assert_eq!(code, 2);
    assert!(err.contains("lavapipe, nvidia, generic or device"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

/// A mistyped option is a usage error (exit 2), not APL's VALUE ERROR for `-(-bogus)`.
#[test]
fn a_mistyped_option_is_a_usage_error() {
    for args in [
        &["eval", "--bogus"][..],
        &["eval", "--bogus", "1"],
        &["eval", "--stat", "x"],
    ] {
        let (code, _, err) = arrc(args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(!err.contains("VALUE ERROR"), "{err}");
    }
    let (code, out, err) = arrc(&["eval", "--backend", "cpu", "- -3"]);
    assert_eq!((code, out.as_str()), (0, "3\n"), "{err}");
}

#[test]
fn emit_plan_shows_how_a_nested_value_is_held() {
    // Issue 17: item by item (one flat plan per item), or dense.
    let (code, out, err) = arrc(&["eval", "--emit", "plan", "(⍳5)(2×⍳7)"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with("nested result mixed[2]: item by item: 2 arrays"),
        "{out}"
    );
    assert!(
        out.contains("part 1:") && out.contains("kernel 0 map_0"),
        "{out}"
    );
    let (code, out, err) = arrc(&["eval", "--emit", "plan", "↓3 4⍴⍳12"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with("nested result mixed[3]: dense: i32[3,4] with its last 1 axes an item's"),
        "{out}"
    );
}

#[test]
fn bench_of_a_program_takes_the_tuning_flags() {
    // `arrc bench prog.apl --stencil-from N` plans the program with that tuning: a
    // 3×3 window is staged by default and read from device memory past the flag's
    // count (the flags were ignored for programs: both plans were the default's).
    let dir = std::env::temp_dir().join(format!("arrc-bench-tune-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let prog = dir.join("sq3.apl");
    std::fs::write(&prog, "A←(20 30⍴⍳1000)÷1000\nS←{+/,⍵×⍵}⌺3 3⊢A\nS\n").unwrap();
    let prog = prog.to_str().unwrap();
    let kernels = |flags: &[&str]| {
        let mut args = vec!["bench", prog, "--runs", "1", "--warmup", "1", "--profile"];
        args.extend_from_slice(flags);
        let (code, out, err) = arrc(&args);
        assert_eq!(code, 0, "{err}");
        out
    };
    let staged = kernels(&[]);
    assert!(staged.contains("stencil_"), "{staged}");
    let unstaged = kernels(&["--stencil-from", "1000"]);
    assert!(!unstaged.contains("stencil_"), "{unstaged}");
    let value = |out: &str| {
        out.lines()
            .find(|l| l.contains("value:"))
            .map(str::to_owned)
    };
    assert!(value(&unstaged).is_some(), "{unstaged}");
    assert_eq!(value(&staged), value(&unstaged));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn eval_takes_the_tuning_flags() {
    // `arrc eval --fuse-computed-masks false` computes a compaction's costly mask
    // by a kernel of its own first (the default fuses it); both give the answer.
    let src = "x←(⍳9215)÷7 ⋄ ((x|7)>1)/x";
    let kernels = |flags: &[&str]| {
        let mut args = vec!["eval", "--emit", "plan"];
        args.extend_from_slice(flags);
        args.push(src);
        let (code, out, err) = arrc(&args);
        assert_eq!(code, 0, "{err}");
        out.lines().filter(|l| l.starts_with("kernel ")).count()
    };
    assert_eq!(kernels(&[]), 1);
    assert_eq!(kernels(&["--fuse-computed-masks", "false"]), 3);
    let count = "x←(⍳9215)÷7 ⋄ ≢((x|7)>1)/x";
    for flags in [&[][..], &["--fuse-computed-masks", "false"]] {
        let mut args = vec!["eval"];
        args.extend_from_slice(flags);
        args.push(count);
        let (code, out, err) = arrc(&args);
        assert_eq!((code, out.trim()), (0, "9189"), "{err}");
    }
}

#[test]
fn emit_of_a_program_shows_its_last_statement() {
    // `--emit` of several statements runs those before the last and shows the
    // last one's compiled form (it was a DOMAIN ERROR: "give one expression").
    let (code, out, err) = arrc(&[
        "eval",
        "--backend",
        "vulkan",
        "--emit",
        "plan",
        "m←64 64⍴⍳7 ⋄ {+/,⍵}⌺5 5⊢m÷3",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("stencil_"), "{out}");
    assert!(out.contains("WindowFold"), "{out}");
    // The first statements' errors are the program's.
    let (code, _, err) = arrc(&["eval", "--emit", "plan", "m←1÷0 ⋄ m+1"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("DOMAIN ERROR"), "{err}");
}

#[test]
fn time_reports_the_kernels_own_time() {
    // Submissions are timed only where asked (`--time`, `]time`, `arrc bench`): the
    // kernels' time comes from the device's timestamps.
    let (code, out, err) = arrc(&["eval", "--time", "+/⍳100000"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.trim(), "5000050000");
    let kernels: f64 = err
        .split("(kernels ")
        .nth(1)
        .and_then(|t| t.split(')').next())
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or_else(|| panic!("no kernel time in {err}"));
    assert!(kernels > 0.0, "{err}");
}
