//! `⎕NGET`, `⎕NPUT` and `⎕CSV` on real files in a directory of the test's own, as
//! Dyalog documents them: content, encoding and newline; lines; a table of fields
//! typed by column; errors that name the file and line.

use arrc_ir::display::display;
use arrc_ir::ErrorClass;
use arrc_ref::{eval_program, Env};

/// A fresh directory for one test.
fn dir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("arrc-files-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The display of `src` run in a session with `f` naming `path`.
fn run(env: &mut Env, src: &str) -> Result<String, arrc_ir::Error> {
    let prog = arrc_syntax::parse_str(src).expect("parses");
    eval_program(&prog, env).map(|v| v.map(|a| display(&a)).unwrap_or_default())
}

fn session(path: &std::path::Path) -> Env {
    let mut env = Env::default();
    let name: Vec<char> = path.to_string_lossy().chars().collect();
    env.arrays.insert(
        "f".into(),
        arrc_ir::Array::vector(arrc_ir::Data::Char(name)),
    );
    env
}

#[test]
fn nget_reads_text_lines_and_the_newline() {
    let d = dir("nget");
    let p = d.join("crlf.txt");
    std::fs::write(&p, "one\r\ntwo\r\nthree").unwrap();
    let mut env = session(&p);
    assert_eq!(run(&mut env, "⊃⎕NGET f 1").unwrap(), " one  two  three");
    assert_eq!(run(&mut env, "⍴⊃⎕NGET f 1").unwrap(), "3");
    assert_eq!(run(&mut env, "1⊃⌽⎕NGET f").unwrap(), "13 10");
    assert_eq!(run(&mut env, "2⊃⎕NGET f").unwrap(), "UTF-8-NOBOM");
    assert_eq!(
        run(&mut env, "(⎕UCS 10)=⊃⎕NGET f").unwrap(),
        "0 0 0 1 0 0 0 1 0 0 0 0 0"
    );
    assert_eq!(run(&mut env, "⍴⊃⎕NGET f 2").unwrap(), "3 5");
    // A byte order mark is read and named.
    std::fs::write(&p, b"\xEF\xBB\xBFa\nb\n").unwrap();
    assert_eq!(run(&mut env, "2⊃⎕NGET f").unwrap(), "UTF-8-BOM");
    assert_eq!(run(&mut env, "⍴⊃⎕NGET f 1").unwrap(), "2");
    let e = run(&mut env, "⎕NGET f,'.missing'").unwrap_err();
    assert_eq!(e.class, ErrorClass::FileName);
    assert!(e.message.contains(".missing"), "{}", e.message);
}

#[test]
fn nput_writes_new_files_and_overwrites_or_appends_when_told() {
    let d = dir("nput");
    let p = d.join("w.txt");
    let mut env = session(&p);
    // Dyalog's example: 25 bytes.
    assert_eq!(
        run(&mut env, "(⊂'mene' 'mene' 'tekel' 'upharsin') ⎕NPUT f").unwrap(),
        "25"
    );
    assert_eq!(
        std::fs::read_to_string(&p).unwrap(),
        "mene\nmene\ntekel\nupharsin\n"
    );
    let e = run(&mut env, "'again' ⎕NPUT f").unwrap_err();
    assert_eq!(e.class, ErrorClass::FileName);
    assert_eq!(
        run(&mut env, "(⊂'adding' '3' 'lines') ⎕NPUT f 2").unwrap(),
        "15"
    );
    assert_eq!(run(&mut env, "≢⊃⎕NGET f 1").unwrap(), "7");
    assert_eq!(run(&mut env, "(2 3⍴'ab cd ') ⎕NPUT f 1").unwrap(), "6");
    assert_eq!(std::fs::read_to_string(&p).unwrap(), "ab\ncd\n");
    let e = run(&mut env, "1 2 ⎕NPUT f 1").unwrap_err();
    assert_eq!(e.class, ErrorClass::Domain);
}

#[test]
fn csv_reads_typed_columns_and_a_header_and_writes_back() {
    let d = dir("csv");
    let p = d.join("sales.csv");
    std::fs::write(
        &p,
        "Product,Sales\nWidgets,1912\nGimlets,205\n\"Ding, bats\",189\n",
    )
    .unwrap();
    let mut env = session(&p);
    assert_eq!(run(&mut env, "⍴⎕CSV f").unwrap(), "4 2");
    assert_eq!(run(&mut env, "⊃(⎕CSV f)[4;1]").unwrap(), "Ding, bats");
    // All fields are characters unless a column type says otherwise.
    assert_eq!(run(&mut env, "≡(⎕CSV f)[2;2]").unwrap(), "2");
    assert_eq!(
        run(&mut env, "d h←⎕CSV f '' (1 2) 1 ⋄ +/d[;2]").unwrap(),
        "2306"
    );
    assert_eq!(run(&mut env, "h").unwrap(), " Product  Sales");
    // Type 4: numbers where they are, else the characters.
    assert_eq!(run(&mut env, "≡¨(⎕CSV f '' 4)[;2]").unwrap(), "1 0 0 0");
    let e = run(&mut env, "⎕CSV f '' 2").unwrap_err();
    assert_eq!(e.class, ErrorClass::Domain);
    assert!(e.message.contains("line 1"), "{}", e.message);
    // Written and read back.
    let out = d.join("out.csv");
    env.arrays.insert(
        "g".into(),
        arrc_ir::Array::vector(arrc_ir::Data::Char(out.to_string_lossy().chars().collect())),
    );
    assert_eq!(
        run(&mut env, "(2 2⍴'a,b' 1 'c' ¯2.5) ⎕CSV g").unwrap(),
        "15"
    );
    assert_eq!(
        std::fs::read_to_string(&out).unwrap(),
        "\"a,b\",1\nc,-2.5\n"
    );
    assert_eq!(run(&mut env, "(⎕CSV g '' (1 2))[;2]").unwrap(), "1 ¯2.5");
    let e = run(&mut env, "(2 2⍴'a' 1 'c' 2) ⎕CSV g").unwrap_err();
    assert_eq!(e.class, ErrorClass::FileName);
    assert_eq!(
        run(&mut env, "(2 2⍴'a' 1 'c' 2) ⎕CSV ''").unwrap(),
        "a,1\nc,2\n"
    );
}
