//! The REPL (`arrc repl`): rustyline on a terminal, lines of a pipe otherwise; session
//! commands (`)vars`, `]time`, …); `⍞` and `⎕` input from stdin; the spinner for a
//! statement that runs long.

use super::*;
use rustyline::error::ReadlineError;
use std::io::BufRead;

/// The backtick as a prefix key, as APL input methods have it: it types nothing
/// at once, and the key after it types that key's glyph (`` `i `` → ⍳; a key
/// without one types the backtick and itself; any other key drops the backtick).
#[derive(Default)]
struct Backtick {
    pending: std::sync::atomic::AtomicBool,
}

impl rustyline::ConditionalEventHandler for Backtick {
    fn handle(
        &self,
        evt: &rustyline::Event,
        _: rustyline::RepeatCount,
        _: bool,
        _: &rustyline::EventContext,
    ) -> Option<rustyline::Cmd> {
        use rustyline::{Cmd, KeyCode, KeyEvent, Modifiers};
        let key = match evt.get(0) {
            Some(KeyEvent(KeyCode::Char(c), m))
                if *m == Modifiers::NONE || *m == Modifiers::SHIFT =>
            {
                Some(*c)
            }
            _ => None,
        };
        if self
            .pending
            .swap(false, std::sync::atomic::Ordering::Relaxed)
        {
            return key.map(|k| {
                let text = arrc::keymap::glyph_as_typed("`", k)
                    .map_or_else(|| format!("`{k}"), |g| g.to_string());
                Cmd::Insert(1, text)
            });
        }
        if key == Some('`') {
            self.pending
                .store(true, std::sync::atomic::Ordering::Relaxed);
            return Some(Cmd::Noop);
        }
        None
    }
}

pub fn run(s: &mut Session) {
    match s.device() {
        Some(d) => println!("arrc on {} (subgroup size {}). Glyphs: `i → ⍳, `r → ⍴, `a → ⍺, `w → ⍵. Ctrl-C interrupts, Ctrl-D quits.", d.name, d.subgroup_size),
        None => println!("arrc on the CPU reference. Glyphs: `i → ⍳, `r → ⍴. Ctrl-C interrupts, Ctrl-D quits."),
    }
    // Ctrl-C while a statement runs stops it (INTERRUPT) and the session goes on;
    // at the prompt the line editor takes it as a key.
    if let Err(e) = ctrlc::set_handler(arrc_ir::interrupt::request) {
        eprintln!("arrc repl: Ctrl-C will end the session ({e})");
    }
    if !std::io::stdin().is_terminal() {
        return piped(s);
    }
    let mut rl = match rustyline::DefaultEditor::new() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("arrc repl: {e}");
            return;
        }
    };
    // A backtick and a key become the key's glyph as they are typed.
    rl.bind_sequence(
        rustyline::Event::Any,
        rustyline::EventHandler::Conditional(Box::<Backtick>::default()),
    );
    let history = std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".arrc_history"));
    if let Some(h) = &history {
        let _ = rl.load_history(h);
    }
    // Lines of a dfn still open (`f←{` … `}`), run when it closes.
    let mut pending = String::new();
    loop {
        match rl.readline("      ") {
            Ok(raw) => {
                let Some(line) = complete(&mut pending, arrc::keymap::expand(&raw)) else {
                    continue;
                };
                if line.trim().is_empty() {
                    continue;
                }
                let _ = rl.add_history_entry(line.as_str());
                // Saved as it is typed: a session that dies keeps its history.
                if let Some(h) = &history {
                    let _ = rl.append_history(h);
                }
                if raw.contains('`') {
                    // Show what the backtick map made of the line.
                    println!("      {}", line.trim());
                }
                if !eval_line(s, &line) {
                    break;
                }
            }
            Err(ReadlineError::Interrupted) => {
                pending.clear();
                continue;
            }
            Err(ReadlineError::Eof) => break,
            Err(e) => {
                // An invalid UTF-8 byte (or any other read error) is said, and
                // the session goes on.
                eprintln!("arrc repl: the line could not be read ({e}); it was ignored");
            }
        }
    }
}

/// `line` added to the lines of a dfn still open in `pending`: the whole text
/// once every `{` is closed, `None` while one is open.
fn complete(pending: &mut String, line: String) -> Option<String> {
    let text = if pending.is_empty() {
        line
    } else {
        format!("{}\n{line}", std::mem::take(pending))
    };
    if open_braces(&text) > 0 {
        *pending = text;
        return None;
    }
    Some(text)
}

/// How many `{` of `text` are not closed, outside quotes and comments.
pub(super) fn open_braces(text: &str) -> i64 {
    let mut depth = 0i64;
    for line in text.lines() {
        let mut quoted = false;
        for c in line.chars() {
            match c {
                '\'' => quoted = !quoted,
                '⍝' if !quoted => break,
                '{' if !quoted => depth += 1,
                '}' if !quoted => depth -= 1,
                _ => {}
            }
        }
    }
    depth
}

/// Lines from a pipe or file, each run as typed (`arrc repl < session.apl`); a
/// dfn left open runs when it closes.
fn piped(s: &mut Session) {
    let mut buf = Vec::new();
    let mut pending = String::new();
    loop {
        buf.clear();
        // Locked for each line only: `⍞` and `⎕` read the next lines themselves.
        let read = std::io::stdin().lock().read_until(b'\n', &mut buf);
        match read {
            Ok(0) => break,
            Ok(_) => match std::str::from_utf8(&buf) {
                Ok(text) => {
                    let line = arrc::keymap::expand(text.trim_end_matches(['\n', '\r']));
                    let Some(line) = complete(&mut pending, line) else {
                        continue;
                    };
                    if !line.trim().is_empty() && !eval_line(s, &line) {
                        break;
                    }
                }
                Err(e) => {
                    eprintln!("arrc repl: a line is not valid UTF-8 ({e}); it was ignored")
                }
            },
            Err(e) => {
                eprintln!("arrc repl: {e}");
                break;
            }
        }
    }
}

/// A session command (`)vars`, `]help`…): its output; `None` to end the
/// session (`)off`).
fn command(s: &mut Session, line: &str) -> Option<String> {
    let mut words = line.split_whitespace();
    let cmd = words.next().unwrap_or("").to_lowercase();
    // What follows the command word: an expression for `]time`, `]plan`…
    let rest = line.trim_start().get(cmd.len()..).unwrap_or("").trim();
    let list = |names: Vec<String>| names.join(" ");
    let compiled = |s: &Session, show: &dyn Fn(&arrc::gpu::CompiledStatement) -> String| match s
        .compile(rest)
    {
        Ok(c) => show(&c),
        Err(e) => diagnostics::render(rest, &e, color())
            .trim_end()
            .to_string(),
    };
    Some(match cmd.as_str() {
        "]time" => {
            let before = s.stats();
            s.set_timing(true);
            let t = std::time::Instant::now();
            eval_line(s, rest);
            let wall = t.elapsed().as_nanos() as u64;
            s.set_timing(false);
            format!("time {}", time_breakdown(&s.stats().since(&before), wall))
        }
        "]load" => {
            // `]load x data.npy`: a name from a NumPy file.
            let parts: Vec<&str> = rest.split_whitespace().collect();
            match parts.as_slice() {
                [name, path] => match load_file(s, name, path) {
                    Ok(()) => String::new(),
                    Err(e) => format!("{}: {}", e.class.name(), e.message),
                },
                _ => "]load NAME FILE (.npy, .csv, or FILE:TYPE[:SHAPE])".to_string(),
            }
        }
        "]save" => {
            // `]save r.npy expr`: the value of expr into a NumPy file.
            match rest.split_once(char::is_whitespace) {
                Some((path, expr)) => match s.eval(expr) {
                    Ok(o) => match o.value {
                        Some(v) => match arrc::npy::write_npy(std::path::Path::new(path), &v) {
                            Ok(()) => String::new(),
                            Err(e) => format!("{}: {}", e.class.name(), e.message),
                        },
                        None => "]save: the expression has no value".to_string(),
                    },
                    Err(e) => diagnostics::render(expr, &e, color()).trim_end().to_string(),
                },
                None => "]save FILE.npy EXPR".to_string(),
            }
        }
        "]plan" => compiled(s, &|c| c.plan_text().trim_end().to_string()),
        "]ir" => compiled(s, &|c| c.ir.to_string().trim_end().to_string()),
        "]spv" => compiled(s, &|c| {
            c.plan
                .kernels
                .iter()
                .zip(&c.modules)
                .map(|(k, m)| {
                    format!(
                        "; kernel {}\n{}",
                        k.name,
                        arrc_spirv::disassemble(m).unwrap_or_default()
                    )
                })
                .collect::<Vec<_>>()
                .join("\n")
        }),
        "]stats" => stats_line(&s.stats()),
        "]box" => {
            let was = if s.boxing() { "ON" } else { "OFF" };
            match words.next() {
                Some("on") => s.set_boxing(true),
                Some("off") => s.set_boxing(false),
                _ => {}
            }
            format!("Was {was}")
        }
        "]device" => match s.device() {
            Some(d) => format!(
                "{} ({}), Vulkan {}, subgroup size {}, float64 {}, driver {}",
                d.name, d.device_type, d.api_version, d.subgroup_size, d.shader_float64, d.driver
            ),
            None => "no device: the CPU reference".to_string(),
        },
        "]keys" => arrc::keymap::KEYMAP
            .chunks(8)
            .map(|row| {
                row.iter()
                    .map(|(k, g)| format!("`{k} {g}"))
                    .collect::<Vec<_>>()
                    .join("  ")
            })
            .collect::<Vec<_>>()
            .join("\n"),
        ")save" | ")load" => match words.next() {
            // `)save ws.json`, `)load ws.json`: the workspace in a file of arrc's own.
            Some(path) => {
                let path = std::path::Path::new(path);
                let r = if cmd == ")save" {
                    s.save_workspace(path).map(|n| format!("saved {} ({n} names)", path.display()))
                } else {
                    s.load_workspace(path).map(|n| format!("loaded {} ({n} names)", path.display()))
                };
                r.unwrap_or_else(|e| format!("{}: {}", e.class.name(), e.message))
            }
            None => format!("{cmd} FILE"),
        },
        ")off" => return None,
        ")vars" => list(s.variables()),
        ")fns" => list(s.function_names()),
        ")erase" => {
            let missing: Vec<&str> = words.filter(|n| !s.erase(n)).collect();
            if missing.is_empty() {
                String::new()
            } else {
                format!("not found {}", missing.join(" "))
            }
        }
        ")clear" => {
            s.clear();
            "clear ws".to_string()
        }
        "]help" | ")help" => [
            ")vars          the workspace's arrays",
            ")fns           its functions and operators",
            ")erase a b…    removes names",
            ")clear         empties the workspace (⎕IO, ⎕PP, ⎕PW, ⎕CT, ⎕RL as new)",
            ")save FILE     writes the workspace (arrays, functions, ⎕ settings) to FILE",
            ")load FILE     replaces the workspace with the one saved in FILE",
            ")off           ends the session (so does Ctrl-D)",
            "]time expr     runs expr and says where the time went",
            "]plan expr     the kernels and dispatches expr compiles to (]ir, ]spv: its IR, SPIR-V)",
            "]stats         the session's device counters; ]device: the device",
            "]keys          the backtick layout for glyphs (typed as you go)",
            "]box on|off    nested arrays in frames, or as Dyalog's default display",
            "]load x f.npy  defines x from a NumPy (or .csv) file; ]save f.npy expr writes one",
            "]help          this list",
            "Glyphs: a backtick and a key (`i → ⍳, `r → ⍴, `w → ⍵, `a → ⍺, `e → ∊ …).",
        ]
        .join("\n"),
        other => format!("unknown command {other} (]help lists them)"),
    })
}

/// Runs one line: a command or statements. `false` when the session should end.
fn eval_line(s: &mut Session, line: &str) -> bool {
    let trimmed = line.trim_start();
    if trimmed.starts_with(')') || trimmed.starts_with(']') {
        return match command(s, trimmed) {
            Some(out) => {
                if !out.is_empty() {
                    println!("{out}");
                }
                true
            }
            None => false,
        };
    }
    arrc_ir::interrupt::clear();
    let busy = Busy::after(std::time::Duration::from_secs(1));
    let r = s.eval(line);
    drop(busy);
    for o in s.take_output() {
        println!("{o}");
    }
    match r {
        Ok(out) => {
            for n in &out.notes {
                eprintln!("note: {n}");
            }
            if let Some(v) = out.value {
                // A large array shows its ends and its shape (`arrc eval` shows all).
                let (pp, pw) = (s.print_precision(), s.print_width());
                match arrc_ir::display::display_summary(&v, pp, pw) {
                    Some(text) => println!("{text}"),
                    None => show(&v, Format::Apl, (pp, pw), s.boxing()),
                }
            }
            if let Some(f) = out.function {
                println!("{f}");
            }
        }
        // As Dyalog: the statement stops, the workspace stays.
        Err(e) if e.class == arrc::ErrorClass::Interrupt => {
            let input = e.message.starts_with("INPUT INTERRUPT");
            println!(
                "{}",
                if input {
                    "INPUT INTERRUPT"
                } else {
                    "INTERRUPT"
                }
            )
        }
        Err(e) => eprint!("{}", s.render_error(line, &e, color())),
    }
    arrc_ir::interrupt::clear();
    true
}

/// While set, a statement is waiting for a line of input: [`Busy`] shows nothing.
static READING_INPUT: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether [`Busy`]'s spinner is on the screen.
static SPINNING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// A spinner on stderr for a statement that runs longer than a while (indicatif's,
/// which draws only to a terminal), gone when this is dropped.
pub(crate) struct Busy {
    done: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Busy {
    pub(crate) fn after(wait: std::time::Duration) -> Busy {
        use std::sync::atomic::Ordering::Relaxed;
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let d = done.clone();
        let thread = std::thread::spawn(move || {
            let step = std::time::Duration::from_millis(50);
            let start = std::time::Instant::now();
            let mut bar: Option<indicatif::ProgressBar> = None;
            while !d.load(Relaxed) {
                let show = start.elapsed() >= wait && !READING_INPUT.load(Relaxed);
                match (&bar, show) {
                    (None, true) => {
                        let b = indicatif::ProgressBar::new_spinner();
                        b.set_message("running (Ctrl-C interrupts)");
                        b.enable_steady_tick(std::time::Duration::from_millis(120));
                        bar = Some(b);
                        SPINNING.store(true, Relaxed);
                    }
                    (Some(b), false) => {
                        b.finish_and_clear();
                        bar = None;
                        SPINNING.store(false, Relaxed);
                    }
                    _ => {}
                }
                // Woken at once when the statement ends (`Drop`), else after a step.
                std::thread::park_timeout(step);
            }
            if let Some(b) = bar {
                b.finish_and_clear();
            }
            SPINNING.store(false, Relaxed);
        });
        Busy {
            done,
            thread: Some(thread),
        }
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.done.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            t.thread().unpark();
            let _ = t.join();
        }
    }
}

/// `⍞` and `⎕` input from the terminal (or whatever stdin is): the output not yet
/// shown, the prompt, then a line of stdin.
pub(crate) fn read_stdin_line(shown: &[String], prompt: &str) -> Option<String> {
    use std::sync::atomic::Ordering::Relaxed;
    READING_INPUT.store(true, Relaxed);
    // A spinner shown clears itself within a step of its thread.
    for _ in 0..20 {
        if !SPINNING.load(Relaxed) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let line = read_line_now(shown, prompt);
    READING_INPUT.store(false, std::sync::atomic::Ordering::Relaxed);
    line
}

fn read_line_now(shown: &[String], prompt: &str) -> Option<String> {
    use std::io::{BufRead, Write};
    let mut out = std::io::stdout().lock();
    for l in shown {
        let _ = writeln!(out, "{l}");
    }
    let _ = write!(out, "{prompt}");
    let _ = out.flush();
    let mut line = String::new();
    match std::io::stdin().lock().read_line(&mut line) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(line.trim_end_matches(['\n', '\r']).to_string()),
    }
}
