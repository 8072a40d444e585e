//! Data in text files (issue 17, item 4): `⎕NGET` and `⎕NPUT` (text files, as
//! Dyalog's: content, encoding, newline) and `⎕CSV` (its reader with column types
//! and a header row, its writer), so a program can read its data. Files are UTF-8
//! (with or without a byte order mark) or UTF-16 with one; errors name the file and,
//! for a CSV field, its line. A file that cannot be opened, or one `⎕NPUT` would
//! overwrite without being told to, is a FILE NAME ERROR.

use arrc_ir::array::{Array, Data, Item, Scalar};
use arrc_ir::error::{err, Error, ErrorClass, Result};
use arrc_syntax::lexer::Num;
use arrc_syntax::Span;

fn file_error(file: &str, what: impl std::fmt::Display, span: &Span) -> Error {
    Error::new(
        ErrorClass::FileName,
        format!("{file}: {what}"),
        span.clone(),
    )
}

fn text_of(a: &Array) -> Option<String> {
    match (&a.data, a.rank()) {
        (Data::Char(c), 0 | 1) => Some(c.iter().collect()),
        _ => None,
    }
}

fn chars(s: &str) -> Array {
    Array::vector(Data::Char(s.chars().collect()))
}

/// A vector of arrays, each its item (enclosed).
fn vector_of(items: Vec<Array>) -> Array {
    crate::nested::strand(items)
}

/// The items of a vector (a simple vector's scalars), opened.
fn items(a: &Array) -> Vec<Array> {
    (0..a.len()).map(|i| a.data.item(i).open()).collect()
}

/// `Y` of `⎕NGET`/`⎕NPUT`: a file name, or the name and an integer of flags.
fn name_and_flags(y: &Array, what: &str, span: &Span) -> Result<(String, i64)> {
    if let Some(name) = text_of(y) {
        return Ok((name, 0));
    }
    let parts = items(y);
    match parts.as_slice() {
        [n, f] if y.rank() == 1 => {
            let name = text_of(n);
            let flags = f.as_singleton().and_then(|s| s.as_i64());
            match (name, flags) {
                (Some(name), Some(flags)) => Ok((name, flags)),
                _ => Err(err::domain(
                    format!("{what} takes a file name, or a file name and flags"),
                    span.clone(),
                )),
            }
        }
        _ => Err(err::domain(
            format!("{what} takes a file name, or a file name and flags"),
            span.clone(),
        )),
    }
}

/// The text of a file's bytes and the encoding found (Dyalog's names).
fn decode(file: &str, bytes: &[u8], span: &Span) -> Result<(String, &'static str)> {
    let utf16 = |le: bool| -> Result<String> {
        let units: Vec<u16> = bytes[2..]
            .chunks_exact(2)
            .map(|c| {
                if le {
                    u16::from_le_bytes([c[0], c[1]])
                } else {
                    u16::from_be_bytes([c[0], c[1]])
                }
            })
            .collect();
        String::from_utf16(&units)
            .map_err(|_| err::domain(format!("{file}: not UTF-16 text"), span.clone()))
    };
    match bytes {
        [0xEF, 0xBB, 0xBF, rest @ ..] => std::str::from_utf8(rest)
            .map(|s| (s.to_string(), "UTF-8-BOM"))
            .map_err(|e| err::domain(format!("{file}: not UTF-8 text ({e})"), span.clone())),
        [0xFF, 0xFE, ..] => Ok((utf16(true)?, "UTF-16LE-BOM")),
        [0xFE, 0xFF, ..] => Ok((utf16(false)?, "UTF-16BE-BOM")),
        _ => std::str::from_utf8(bytes)
            .map(|s| (s.to_string(), "UTF-8-NOBOM"))
            .map_err(|e| {
                err::unsupported(
                    format!("{file}: not UTF-8 text ({e}); other encodings are not supported yet"),
                    span.clone(),
                )
            }),
    }
}

fn read(file: &str, span: &Span) -> Result<(String, &'static str)> {
    let bytes = std::fs::read(file).map_err(|e| file_error(file, e, span))?;
    decode(file, &bytes, span)
}

/// The line separators Dyalog reads (CR LF first: one separator).
const SEPARATORS: [&str; 8] = [
    "\r\n", "\r", "\n", "\u{85}", "\u{b}", "\u{c}", "\u{2028}", "\u{2029}",
];

/// The lines of `text` (a separator ends a line; text after the last is one more).
fn lines(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let next = SEPARATORS
            .iter()
            .filter_map(|s| rest.find(s).map(|p| (p, s.len())))
            .min_by_key(|&(p, len)| (p, std::cmp::Reverse(len)));
        match next {
            Some((p, len)) => {
                out.push(rest[..p].to_string());
                rest = &rest[p + len..];
            }
            None => {
                out.push(rest.to_string());
                rest = "";
            }
        }
    }
    out
}

/// `⎕NGET Y`: (content)(encoding)(newline) of a text file; content a character
/// vector with every line separator made a line feed (flags 0), a vector of lines
/// (flags 1) or a matrix of them (flags 2); newline the codes of the first newline
/// (`13 10`, `13`, `10` or `133`), `⍬` for none.
pub(crate) fn nget(y: &Array, span: &Span) -> Result<Array> {
    let (file, flags) = name_and_flags(y, "⎕NGET", span)?;
    let (text, encoding) = read(&file, span)?;
    let newline: Vec<i32> = match text.find(['\r', '\n', '\u{85}']) {
        Some(p) if text[p..].starts_with("\r\n") => vec![13, 10],
        Some(p) => vec![text[p..].chars().next().map_or(10, |c| c as i32)],
        None => vec![],
    };
    let ls = lines(&text);
    let content = match flags {
        0 => {
            let mut t = ls.join("\n");
            if SEPARATORS.iter().any(|s| text.ends_with(s)) {
                t.push('\n');
            }
            chars(&t)
        }
        1 => vector_of(ls.iter().map(|l| chars(l)).collect()),
        2 => {
            let width = ls.iter().map(|l| l.chars().count()).max().unwrap_or(0);
            let mut d = Vec::with_capacity(ls.len() * width);
            for l in &ls {
                let n = l.chars().count();
                d.extend(l.chars());
                d.extend(std::iter::repeat_n(' ', width - n));
            }
            Array::new(vec![ls.len(), width], Data::Char(d))
        }
        _ => return Err(err::domain("⎕NGET's flags are 0, 1 or 2", span.clone())),
    };
    Ok(vector_of(vec![
        content,
        chars(encoding),
        Array::vector(Data::I32(newline)),
    ]))
}

/// The encoding `a` names, in capitals, if it is one of Dyalog's (`UTF-8`, `UTF-16LE`,
/// `ASCII`, …, perhaps with `-BOM` or `-NOBOM`).
fn encoding(a: &Array) -> Option<String> {
    let t = text_of(a)?.to_ascii_uppercase();
    let base = t.trim_end_matches("-NOBOM").trim_end_matches("-BOM");
    let known = [
        "UTF-8",
        "UTF-16",
        "UTF-16LE",
        "UTF-16BE",
        "UTF-32",
        "UTF-32LE",
        "UTF-32BE",
        "ASCII",
        "WINDOWS-1252",
        "ANSI",
    ];
    known.contains(&base).then_some(t)
}

/// The lines of `⎕NPUT`'s content: a character vector (its line feeds end lines), a
/// vector of character vectors, or a character matrix (rows without their trailing
/// blanks).
fn content_lines(c: &Array, span: &Span) -> Result<Vec<String>> {
    let bad = || {
        err::domain(
            "⎕NPUT writes characters: a vector, a vector of vectors or a matrix",
            span.clone(),
        )
    };
    if let Some(t) = text_of(c) {
        let mut ls: Vec<String> = t.split('\n').map(str::to_string).collect();
        if t.ends_with('\n') || t.is_empty() {
            ls.pop();
        }
        return Ok(ls);
    }
    match (&c.data, c.rank()) {
        (Data::Char(d), 2) => {
            let w = c.shape[1];
            Ok((0..c.shape[0])
                .map(|r| {
                    d[r * w..(r + 1) * w]
                        .iter()
                        .collect::<String>()
                        .trim_end()
                        .to_string()
                })
                .collect())
        }
        (Data::Mixed(_), 1) => items(c)
            .iter()
            .map(|l| text_of(l).ok_or_else(bad))
            .collect(),
        _ if c.is_empty() => Ok(vec![]),
        _ => Err(bad()),
    }
}

/// `X ⎕NPUT Y`: writes the text `X` (content, or content encoding newline) to the
/// file `Y` (flags 0: a new file only; 1: overwrite; 2: append); the bytes written.
pub(crate) fn nput(x: &Array, y: &Array, span: &Span) -> Result<Array> {
    let (file, flags) = name_and_flags(y, "⎕NPUT", span)?;
    let parts = if x.elem.is_mixed() && x.rank() <= 1 {
        items(x)
    } else {
        vec![]
    };
    let (content, bom, newline) = match parts.as_slice() {
        [c] => (c.clone(), false, "\n".to_string()),
        [c, e, rest @ ..] if rest.len() <= 1 && encoding(e).is_some() => {
            let name = encoding(e).unwrap_or_default();
            if !name.starts_with("UTF-8") {
                return Err(err::unsupported(
                    format!("⎕NPUT writes UTF-8 only: {name} is not supported yet"),
                    span.clone(),
                ));
            }
            let bom = name.ends_with("-BOM");
            let nl = match rest
                .first()
                .map(|n| crate::prims::int_vector(n, span, "newline"))
            {
                None => "\n".to_string(),
                Some(codes) => codes?
                    .iter()
                    .map(|&c| match c {
                        10 | 13 | 133 => Ok(char::from_u32(c as u32).unwrap_or('\n')),
                        _ => Err(err::domain(
                            "⎕NPUT's newline is 10, 13, 13 10 or 133",
                            span.clone(),
                        )),
                    })
                    .collect::<Result<String>>()?,
            };
            (c.clone(), bom, nl)
        }
        _ => (x.clone(), false, "\n".to_string()),
    };
    let mut text = String::new();
    if bom {
        text.push('\u{feff}');
    }
    for l in content_lines(&content, span)? {
        text.push_str(&l);
        text.push_str(&newline);
    }
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    match flags {
        0 => options.write(true).create_new(true),
        1 => options.write(true).create(true).truncate(true),
        2 => options.append(true).create(true),
        _ => return Err(err::domain("⎕NPUT's flags are 0, 1 or 2", span.clone())),
    };
    let mut f = options.open(&file).map_err(|e| {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            file_error(
                &file,
                "the file exists (give flags 1 to overwrite it, 2 to append)",
                span,
            )
        } else {
            file_error(&file, e, span)
        }
    })?;
    f.write_all(text.as_bytes())
        .map_err(|e| file_error(&file, e, span))?;
    Ok(Array::scalar(Scalar::I32(text.len() as i32)))
}

/// The number a CSV field holds (`-` or `¯` for a negative, exponents): an integer
/// written in digits stays exact. `None` for an empty field or one that is no
/// number. Shared by `⎕CSV` and the command's `--set x=data.csv`.
pub fn csv_number(field: &str) -> Option<Num> {
    let t = field.trim().replace('¯', "-");
    if let Ok(i) = t.parse::<i64>() {
        return Some(Num::Int(i));
    }
    t.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .map(Num::Float)
}

/// `⎕CSV Y`: the table of a CSV file (Y a name, or name, description, column types
/// and header indicator), or of CSV text (description `'S'`, or a vector of
/// records with `'N'`). Column types: 0 leaves the field out, 1 characters (the
/// default), 2 numbers (a field that is none is a DOMAIN ERROR), 3 numbers or 0, 4
/// numbers or the characters, 5 numbers or 0 for an empty field. With a header row,
/// the result is (table)(header).
pub(crate) fn csv_read(y: &Array, float: arrc_ir::ElemType, span: &Span) -> Result<Array> {
    let parts = if let Some(name) = text_of(y) {
        vec![chars(&name)]
    } else {
        items(y)
    };
    let source = parts.first().cloned().unwrap_or_else(|| chars(""));
    let description = parts.get(1).and_then(text_of).unwrap_or_default();
    let types = match parts.get(2) {
        Some(t) if !t.is_empty() => crate::prims::int_vector(t, span, "⎕CSV's column types")?,
        _ => vec![1],
    };
    let header = match parts.get(3) {
        Some(h) => h
            .as_boolean()
            .ok_or_else(|| err::domain("⎕CSV's header indicator is 0 or 1", span.clone()))?,
        None => false,
    };
    let (origin, text) = match description.as_str() {
        "S" => (
            "the CSV text".to_string(),
            text_of(&source).unwrap_or_default(),
        ),
        "N" => (
            "the CSV records".to_string(),
            items(&source)
                .iter()
                .filter_map(text_of)
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        "" | "UTF-8" => {
            let file = text_of(&source).ok_or_else(|| {
                err::domain(
                    "⎕CSV takes a file name, or CSV text with 'S' or 'N'",
                    span.clone(),
                )
            })?;
            let (text, _) = read(&file, span)?;
            (file, text)
        }
        d => {
            return Err(err::unsupported(
                format!("⎕CSV's description {d:?} is not supported yet (a file is read as UTF-8)"),
                span.clone(),
            ))
        }
    };
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let mut records: Vec<(u64, Vec<String>)> = Vec::new();
    for r in reader.records() {
        let r = r.map_err(|e| {
            let line = e.position().map_or(0, |p| p.line());
            err::domain(format!("{origin}, line {line}: {e}"), span.clone())
        })?;
        let line = r.position().map_or(0, |p| p.line());
        records.push((line, r.iter().map(str::to_string).collect()));
    }
    let head = if header && !records.is_empty() {
        Some(records.remove(0).1)
    } else {
        None
    };
    let cols = head
        .as_ref()
        .map(Vec::len)
        .or_else(|| records.first().map(|r| r.1.len()))
        .unwrap_or(0);
    let type_of = |c: usize| {
        if types.len() == 1 {
            types[0]
        } else {
            types.get(c).copied().unwrap_or(1)
        }
    };
    if types.len() != 1 && types.len() != cols {
        return Err(err::length(
            format!("{} column types for {cols} columns", types.len()),
            span.clone(),
        ));
    }
    if let Some(t) = types.iter().find(|t| !(0..=5).contains(*t)) {
        return Err(err::domain(
            format!("⎕CSV's column type {t} is not 0 to 5"),
            span.clone(),
        ));
    }
    let kept: Vec<usize> = (0..cols).filter(|&c| type_of(c) != 0).collect();
    let mut data = Vec::with_capacity(records.len() * kept.len());
    for (line, fields) in &records {
        for &c in &kept {
            let f = fields[c].as_str();
            let not_number = || {
                err::domain(
                    format!(
                        "{origin}, line {line}: field {} ({f:?}) is not a number",
                        c + 1
                    ),
                    span.clone(),
                )
            };
            data.push(
                match (
                    type_of(c),
                    csv_number(f).map(|n| Scalar::from_literal(n, float)),
                ) {
                    (1, _) => Item::enclose(chars(f)),
                    (_, Some(n)) => Item::Simple(n),
                    (3, None) => Item::Simple(Scalar::I32(0)),
                    (5, None) if f.trim().is_empty() => Item::Simple(Scalar::I32(0)),
                    (4, None) => Item::enclose(chars(f)),
                    _ => return Err(not_number()),
                },
            );
        }
    }
    let table = Array::new(vec![records.len(), kept.len()], Data::Mixed(data.into()));
    Ok(match head {
        Some(h) => vector_of(vec![
            table,
            vector_of(kept.iter().map(|&c| chars(&h[c])).collect()),
        ]),
        None => table,
    })
}

/// A field as `X ⎕CSV` writes it: a number in full precision (`-` for negatives), a
/// character vector as it is, quoted where it holds a comma, a quote or a line end.
fn field(a: &Array, span: &Span) -> Result<String> {
    if let Some(t) = text_of(a) {
        return Ok(if t.contains([',', '"', '\n', '\r']) || t != t.trim() {
            format!("\"{}\"", t.replace('"', "\"\""))
        } else {
            t
        });
    }
    match a.as_singleton() {
        Some(s) if a.rank() == 0 && s.elem_type().is_number() => Ok(match s {
            Scalar::F32(v) => format!("{v}"),
            Scalar::F64(v) => format!("{v}"),
            s => s.as_i64().unwrap_or(0).to_string(),
        }),
        _ => Err(err::domain(
            "⎕CSV writes numbers and character vectors",
            span.clone(),
        )),
    }
}

/// `X ⎕CSV Y`: the table `X` (or table and header) as CSV: to the file `Y` (a new
/// one; the bytes written), or as text when `Y` is empty (a character vector with
/// line feeds; a vector of records with `'N'`).
pub(crate) fn csv_write(x: &Array, y: &Array, span: &Span) -> Result<Array> {
    let parts = items(x);
    let (table, header) = match parts.as_slice() {
        [t, h] if x.rank() == 1 && t.rank() == 2 => (t.clone(), Some(items(h))),
        _ => (x.clone(), None),
    };
    if table.rank() != 2 {
        return Err(err::rank("⎕CSV writes a matrix", span.clone()));
    }
    let cols = table.shape[1];
    let mut records = Vec::new();
    if let Some(h) = header {
        records.push(
            h.iter()
                .map(|f| field(f, span))
                .collect::<Result<Vec<_>>>()?
                .join(","),
        );
    }
    for r in 0..table.shape[0] {
        let fields = (0..cols)
            .map(|c| field(&table.data.item(r * cols + c).open(), span))
            .collect::<Result<Vec<_>>>()?;
        records.push(fields.join(","));
    }
    let (dest, description) = match text_of(y) {
        Some(d) => (d, String::new()),
        None => {
            let p = items(y);
            (
                p.first().and_then(text_of).unwrap_or_default(),
                p.get(1).and_then(text_of).unwrap_or_default(),
            )
        }
    };
    if dest.is_empty() {
        return Ok(if description == "N" {
            vector_of(records.iter().map(|r| chars(r)).collect())
        } else {
            chars(&records.iter().map(|r| format!("{r}\n")).collect::<String>())
        });
    }
    let text: String = records.iter().map(|r| format!("{r}\n")).collect();
    nput(&chars(&text), &chars(&dest), span)
}
