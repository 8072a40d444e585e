//! Rendering errors for people: ariadne reports with a caret on the span, byte offsets,
//! colour only when asked (never in tests).

use crate::Error;
use ariadne::{Config, IndexType, Label, Report, ReportKind, Source};

/// Renders `e` against the source text it came from.
pub fn render(src: &str, e: &Error, color: bool) -> String {
    render_in("input", src, e, color, None)
}

/// Renders `e` against the source text it came from, named `origin` (a file, or
/// `input`), with a note (such as the function and line it arose in).
pub fn render_in(origin: &str, src: &str, e: &Error, color: bool, note: Option<&str>) -> String {
    let mut span = e.span.clone();
    if span.end > src.len()
        || span.start > span.end
        || !src.is_char_boundary(span.start)
        || !src.is_char_boundary(span.end)
    {
        span = 0..0;
    }
    if src.is_empty() || (span.start == 0 && span.end == 0 && e.span != (0..0)) || e.span == (0..0)
    {
        return match note {
            Some(n) => format!("{}: {} ({n})\n", e.class.name(), e.message),
            None => format!("{}: {}\n", e.class.name(), e.message),
        };
    }
    let mut out = Vec::new();
    // ariadne colours a custom kind's name even with colour off: pass the plain colour then.
    let kind_color = if color {
        ariadne::Color::Red
    } else {
        ariadne::Color::Primary
    };
    let mut report = Report::build(
        ReportKind::Custom(e.class.name(), kind_color),
        (origin, span.clone()),
    )
    .with_config(
        Config::default()
            .with_color(color)
            .with_index_type(IndexType::Byte),
    )
    .with_message(&e.message)
    .with_label(Label::new((origin, span)).with_message(&e.message));
    if let Some(n) = note {
        report = report.with_note(n);
    }
    if report
        .finish()
        .write((origin, Source::from(src)), &mut out)
        .is_err()
    {
        return format!("{}: {}\n", e.class.name(), e.message);
    }
    let text = String::from_utf8_lossy(&out).into_owned();
    if color {
        text
    } else {
        strip_ansi(&text)
    }
}

/// Removes `ESC [ … m` colour sequences.
fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}
