//! Arrays displayed as Dyalog APL shows them (⎕PP=10): `¯` for negatives, vectors
//! space-separated, matrices in right-aligned columns, higher ranks as planes separated
//! by blank lines.

use crate::array::{Array, Data, Item, Scalar};

/// Significant digits shown for floats by default (APL's ⎕PP in a clear workspace).
pub const PRINT_PRECISION: usize = 10;

/// The largest ⎕PP that shows more digits (an f64 has 17 significant ones).
pub const MAX_PRINT_PRECISION: usize = 17;

/// ⎕PW in a clear workspace: the characters of a line before it folds.
pub const PRINT_WIDTH: usize = 80;

/// One element as APL prints it (⎕PP=10).
pub fn format_scalar(s: Scalar) -> String {
    format_scalar_pp(s, PRINT_PRECISION)
}

/// One element as APL prints it with ⎕PP=`pp` significant digits for floats.
pub fn format_scalar_pp(s: Scalar, pp: usize) -> String {
    match s {
        Scalar::Bool(v) => format_int(v as i64),
        Scalar::I32(v) => format_int(v as i64),
        Scalar::I64(v) => format_int(v),
        Scalar::F32(v) => format_float_pp(v, pp),
        Scalar::F64(v) => format_f64_pp(v, pp),
        Scalar::Char(c) => c.to_string(),
    }
}

fn format_int(v: i64) -> String {
    if v < 0 {
        format!("¯{}", v.unsigned_abs())
    } else {
        v.to_string()
    }
}

/// Formats a float with at most ⎕PP significant digits, using the shortest digits that
/// read back as the same f32 (so `0.1` shows as `0.1`, not its binary expansion).
pub fn format_float(v: f32) -> String {
    format_float_pp(v, PRINT_PRECISION)
}

/// As [`format_float`] with ⎕PP=`pp`: the shortest digits, or the value rounded to
/// `pp` digits when those are more.
pub fn format_float_pp(v: f32, pp: usize) -> String {
    let pp = pp.clamp(1, MAX_PRINT_PRECISION);
    let shortest = format!("{:e}", v.abs());
    let digits = shortest
        .split('e')
        .next()
        .map_or(0, |m| m.chars().filter(char::is_ascii_digit).count());
    if digits <= pp {
        format_real(v as f64, pp, || shortest)
    } else {
        format_real(v as f64, pp, || format!("{:.*e}", pp - 1, (v as f64).abs()))
    }
}

/// Formats an f64 rounded to ⎕PP significant digits (`÷3` shows as `0.3333333333`).
pub fn format_f64(v: f64) -> String {
    format_f64_pp(v, PRINT_PRECISION)
}

/// As [`format_f64`] with ⎕PP=`pp`.
pub fn format_f64_pp(v: f64, pp: usize) -> String {
    let pp = pp.clamp(1, MAX_PRINT_PRECISION);
    format_real(v, pp, || format!("{:.*e}", pp - 1, v.abs()))
}

/// `sci` gives |v| as `d.ddde±x` with at most `pp` significant digits that matter.
fn format_real(v: f64, pp: usize, sci: impl FnOnce() -> String) -> String {
    if v.is_nan() {
        return "NaN".into();
    }
    if v.is_infinite() {
        return if v > 0.0 {
            "∞".into()
        } else {
            "¯∞".into()
        };
    }
    if v == 0.0 {
        return "0".into();
    }
    let neg = v < 0.0;
    // Shortest round-trip digits and decimal exponent: d.ddddde±x
    let sci = sci();
    let (mant, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let mut digits: String = mant.chars().filter(|c| c.is_ascii_digit()).collect();
    digits.truncate(pp);
    while digits.len() > 1 && digits.ends_with('0') {
        digits.pop();
    }
    let body = if exp >= pp as i32 || exp < -6 {
        let (first, rest) = digits.split_at(1);
        let e = if exp < 0 {
            format!("¯{}", -exp)
        } else {
            exp.to_string()
        };
        if rest.is_empty() {
            format!("{first}E{e}")
        } else {
            format!("{first}.{rest}E{e}")
        }
    } else if exp < 0 {
        format!("0.{}{}", "0".repeat((-exp - 1) as usize), digits)
    } else {
        let int_len = exp as usize + 1;
        if digits.len() <= int_len {
            format!("{}{}", digits, "0".repeat(int_len - digits.len()))
        } else {
            format!("{}.{}", &digits[..int_len], &digits[int_len..])
        }
    };
    if neg {
        format!("¯{body}")
    } else {
        body
    }
}

/// The whole array as APL displays it (no trailing newline).
pub fn display(a: &Array) -> String {
    display_pp(a, PRINT_PRECISION)
}

/// The whole array as APL displays it with ⎕PP=`pp`.
pub fn display_pp(a: &Array, pp: usize) -> String {
    let mut out = String::new();
    let _ = write_display_pp(a, pp, &mut out);
    out
}

/// Writes the display of `a` to `out` (⎕PP=10).
pub fn write_display(a: &Array, out: &mut dyn std::fmt::Write) -> std::fmt::Result {
    write_display_pp(a, PRINT_PRECISION, out)
}

/// Writes the display of `a` as a session shows it, with ⎕PP=`pp` and ⎕PW=`pw`: a
/// vector longer than `pw` characters folds between numbers, each folded part on a
/// line of its own indented 6 spaces; wider matrices (and higher ranks) show the
/// columns that fit first, then the rest in blocks of columns indented 6 spaces
/// (Dyalog's rule).
pub fn write_display_session(
    a: &Array,
    pp: usize,
    pw: usize,
    out: &mut dyn std::fmt::Write,
) -> std::fmt::Result {
    if a.elem.is_char() {
        return write_text(a, pw, out);
    }
    if a.elem.is_mixed() {
        return write_nested(a, pp, out);
    }
    if a.rank() > 1 && !a.is_empty() {
        return write_folded_columns(a, pp, pw, out);
    }
    if a.rank() != 1 {
        return write_display_pp(a, pp, out);
    }
    let mut col = 0usize;
    for i in 0..a.len() {
        let cell = format_scalar_pp(a.data.get(i), pp);
        let w = cell.chars().count();
        if i > 0 && col + 1 + w > pw {
            out.write_str("\n      ")?;
            col = 6;
        } else if i > 0 {
            out.write_char(' ')?;
            col += 1;
        }
        out.write_str(&cell)?;
        col += w;
    }
    Ok(())
}

/// The columns of `a` (rank 2 or more) in blocks that fit in `pw` characters: the
/// first block from the left margin, the others indented 6 spaces (a column wider
/// than a line takes a block of its own).
fn write_folded_columns(
    a: &Array,
    pp: usize,
    pw: usize,
    out: &mut dyn std::fmt::Write,
) -> std::fmt::Result {
    let widths = column_widths(a, pp);
    let mut start = 0;
    while start < widths.len() {
        let indent = if start == 0 { 0 } else { 6 };
        let mut end = start;
        let mut used = indent;
        while end < widths.len() {
            let w = usize::from(end > start) + widths[end].0 + widths[end].1;
            if end > start && used + w > pw {
                break;
            }
            used += w;
            end += 1;
        }
        if start > 0 {
            out.write_char('\n')?;
        }
        write_columns(a, pp, &widths, start..end, indent, out)?;
        start = end;
    }
    Ok(())
}

/// Significant digits `⍺⍕⍵` shows before it writes `_` for the rest (as Dyalog, whose
/// floats hold about 16).
const SPEC_DIGITS: usize = 16;

/// `⍺⍕⍵` (format by specification) of a simple numeric array: `spec` holds a width
/// and a precision for each column (one number `p` is `0 p` for every column, two are
/// repeated), precision 0 formats integers, `p` > 0 that many decimals, `p` < 0
/// scaled with |p| digits; width 0 is the column's widest plus one blank, and a number
/// wider than its given width is asterisks. The result has rank `1⌈⍴⍴⍵` and the last
/// axis the sum of the widths. `Err`: the LENGTH ERROR of a specification that fits
/// no column count.
pub fn format_spec(spec: &[i64], a: &Array) -> Result<Array, String> {
    let cols = if a.rank() == 0 {
        1
    } else {
        a.shape[a.rank() - 1]
    };
    let pairs: Vec<(i64, i64)> = match spec.len() {
        1 => vec![(0, spec[0]); cols],
        2 => vec![(spec[0], spec[1]); cols],
        n if n == 2 * cols => spec.chunks(2).map(|p| (p[0], p[1])).collect(),
        n => {
            return Err(format!(
                "⍺⍕⍵ needs 1 or 2 numbers, or a width and a precision for each of the {cols} columns, not {n}"
            ))
        }
    };
    let rows = a.len().checked_div(cols).unwrap_or(0);
    let texts: Vec<Vec<char>> = (0..a.len())
        .map(|i| {
            spec_number(a.data.get(i).as_f64(), pairs[i % cols].1)
                .chars()
                .collect()
        })
        .collect();
    let widths: Vec<usize> = pairs
        .iter()
        .enumerate()
        .map(|(c, &(w, _))| {
            if w > 0 {
                w as usize
            } else {
                1 + (0..rows)
                    .map(|r| texts[r * cols + c].len())
                    .max()
                    .unwrap_or(0)
            }
        })
        .collect();
    let total: usize = widths.iter().sum();
    let mut data = Vec::with_capacity(rows * total);
    for (i, t) in texts.into_iter().enumerate() {
        let width = widths[i % cols];
        if t.len() > width {
            data.extend(std::iter::repeat_n('*', width));
        } else {
            data.extend(std::iter::repeat_n(' ', width - t.len()));
            data.extend(t);
        }
    }
    let mut shape = if a.rank() == 0 {
        vec![1]
    } else {
        a.shape.clone()
    };
    if let Some(last) = shape.last_mut() {
        *last = total;
    }
    Ok(Array::new(shape, Data::Char(data)))
}

/// One number of `⍺⍕⍵` with precision `p`, `¯` for negatives, digits past
/// [`SPEC_DIGITS`] significant ones as `_`.
fn spec_number(v: f64, p: i64) -> String {
    let body = if p < 0 {
        let s = format!("{:.*e}", (-p - 1) as usize, v.abs());
        match s.split_once('e') {
            Some((m, e)) => match e.strip_prefix('-') {
                Some(e) => format!("{m}E¯{e}"),
                None => format!("{m}E{e}"),
            },
            None => s,
        }
    } else {
        format!("{:.*}", p as usize, v.abs())
    };
    let mut seen = 0;
    // A digit other than 0 met (in the mantissa): significant digits count from it.
    let mut started = false;
    let mut out = String::with_capacity(body.len() + 1);
    let mut in_exponent = false;
    for ch in body.chars() {
        if ch == 'E' {
            in_exponent = true;
        }
        if ch.is_ascii_digit() && !in_exponent {
            started |= ch != '0';
            if started {
                seen += 1;
                if seen > SPEC_DIGITS {
                    out.push('_');
                    continue;
                }
            }
        }
        out.push(ch);
    }
    // A negative that rounds to zero shows no sign.
    if v < 0.0 && started {
        format!("¯{out}")
    } else {
        out
    }
}

/// A character array as Dyalog shows it: each row its characters side by side,
/// planes separated by blank lines; a row longer than `pw` characters folds, each
/// folded part on a line of its own indented 6 spaces.
fn write_text(a: &Array, pw: usize, out: &mut dyn std::fmt::Write) -> std::fmt::Result {
    let cols = a.shape.last().copied().unwrap_or(1);
    let rows = a.len().checked_div(cols).unwrap_or(0);
    for r in 0..rows {
        write_row_break(a, r, out)?;
        let mut col = 0usize;
        for c in 0..cols {
            if col >= pw.max(7) {
                out.write_str("\n      ")?;
                col = 6;
            }
            if let Scalar::Char(ch) = a.data.get(r * cols + c) {
                out.write_char(ch)?;
            }
            col += 1;
        }
    }
    Ok(())
}

/// A mixed or nested array as Dyalog shows it by default, each line without the
/// blanks that end it.
fn write_nested(a: &Array, pp: usize, out: &mut dyn std::fmt::Write) -> std::fmt::Result {
    for (i, l) in nested_lines(a, pp).iter().enumerate() {
        if i > 0 {
            out.write_char('\n')?;
        }
        let end = l.iter().rposition(|c| *c != ' ').map_or(0, |p| p + 1);
        l[..end].iter().try_for_each(|c| out.write_char(*c))?;
    }
    Ok(())
}

/// The display of `a` as a session shows it ([`display_session`]), with nested
/// arrays in frames when `boxing` ([`display_boxed`]).
pub fn display_as(a: &Array, pp: usize, pw: usize, boxing: bool) -> String {
    if boxing && !a.is_simple() {
        display_boxed(a, pp)
    } else {
        display_session(a, pp, pw)
    }
}

/// A nested array with each item in a frame of box-drawing lines (Dyalog's
/// `]box on`, minimal style): the items of a row side by side, rows under each other,
/// a frame around every enclosed item; simple arrays (and mixed ones) as usual.
pub fn display_boxed(a: &Array, pp: usize) -> String {
    if a.is_simple() {
        return display_pp(a, pp);
    }
    boxed_lines(a, pp)
        .iter()
        .map(|l| l.iter().collect::<String>().trim_end().to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

fn boxed_lines(a: &Array, pp: usize) -> Vec<Vec<char>> {
    if a.is_simple() {
        return nested_lines(a, pp);
    }
    let cell = |it: Item| -> Vec<Vec<char>> {
        match it {
            Item::Simple(s) => vec![format_scalar_pp(s, pp).chars().collect()],
            Item::Boxed(b) if b.is_empty() && b.is_simple() => vec![vec![]],
            Item::Boxed(b) => boxed_lines(&b, pp),
        }
    };
    let (rows, cols) = match a.rank() {
        0 => (1, 1),
        _ => {
            let cols = *a.shape.last().unwrap_or(&1);
            (a.len().checked_div(cols).unwrap_or(0), cols)
        }
    };
    if rows == 0 || cols == 0 {
        return vec![vec![]];
    }
    let cells: Vec<Vec<Vec<char>>> = (0..rows * cols).map(|i| cell(a.data.item(i))).collect();
    let widths: Vec<usize> = (0..cols)
        .map(|c| {
            (0..rows)
                .flat_map(|r| cells[r * cols + c].iter().map(Vec::len))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let rule = |l: char, m: char, r: char| -> Vec<char> {
        let mut line = vec![l];
        for (c, &w) in widths.iter().enumerate() {
            if c > 0 {
                line.push(m);
            }
            line.extend(std::iter::repeat_n('─', w));
        }
        line.push(r);
        line
    };
    let mut out = vec![rule('┌', '┬', '┐')];
    for r in 0..rows {
        if r > 0 {
            out.push(rule('├', '┼', '┤'));
        }
        let height = (0..cols)
            .map(|c| cells[r * cols + c].len())
            .max()
            .unwrap_or(1)
            .max(1);
        for l in 0..height {
            let mut line = vec!['│'];
            for (c, &w) in widths.iter().enumerate() {
                let text: &[char] = cells[r * cols + c].get(l).map_or(&[], Vec::as_slice);
                line.extend_from_slice(text);
                line.extend(std::iter::repeat_n(' ', w - text.len()));
                line.push('│');
            }
            out.push(line);
        }
    }
    out.push(rule('└', '┴', '┘'));
    out
}

/// The lines (as wide as each other) a mixed or nested array displays as: each item
/// in a rectangle, the rectangles of a column as wide as its widest and those of a
/// row as tall as its tallest; an enclosed item is its own display with a blank on
/// each side, a number is right-aligned, a character or an enclosed item left-aligned;
/// a column holding a number is parted from its neighbours by a blank (characters
/// side by side are not); planes are parted by blank lines (Dyalog's rules).
fn nested_lines(a: &Array, pp: usize) -> Vec<Vec<char>> {
    if !a.elem.is_mixed() {
        let text = display_pp(a, pp);
        let lines: Vec<Vec<char>> = text.split('\n').map(|l| l.chars().collect()).collect();
        return pad_lines(lines, 0);
    }
    // A block per item: its lines, and whether it is a number.
    let block = |it: Item| -> (Vec<Vec<char>>, bool) {
        match it {
            Item::Simple(s @ Scalar::Char(_)) => {
                (vec![format_scalar_pp(s, pp).chars().collect()], false)
            }
            Item::Simple(s) => (vec![format_scalar_pp(s, pp).chars().collect()], true),
            Item::Boxed(b) => (pad_lines(nested_lines(&b, pp), 1), false),
        }
    };
    if a.rank() == 0 {
        return block(a.data.item(0)).0;
    }
    let cols = *a.shape.last().unwrap_or(&1);
    let rows = a.len().checked_div(cols).unwrap_or(0);
    let blocks: Vec<(Vec<Vec<char>>, bool)> = (0..a.len()).map(|i| block(a.data.item(i))).collect();
    let width = |c: usize| {
        (0..rows)
            .map(|r| blocks[r * cols + c].0.first().map_or(0, Vec::len))
            .max()
            .unwrap_or(0)
    };
    let widths: Vec<usize> = (0..cols).map(width).collect();
    let numeric: Vec<bool> = (0..cols)
        .map(|c| (0..rows).any(|r| blocks[r * cols + c].1))
        .collect();
    let mut lines = Vec::new();
    for r in 0..rows {
        if r > 0 && a.rank() >= 3 {
            let mut stride = a.shape[a.rank() - 2].max(1);
            for ax in (0..a.rank() - 2).rev() {
                if r.is_multiple_of(stride) {
                    lines.push(Vec::new());
                }
                stride *= a.shape[ax];
            }
        }
        let row = &blocks[r * cols..(r + 1) * cols];
        let height = row.iter().map(|b| b.0.len()).max().unwrap_or(1).max(1);
        for l in 0..height {
            let mut line = Vec::new();
            for (c, (b, num)) in row.iter().enumerate() {
                if c > 0 && (numeric[c - 1] || numeric[c]) {
                    line.push(' ');
                }
                let text: &[char] = b.get(l).map_or(&[], Vec::as_slice);
                let pad = widths[c] - text.len();
                if *num {
                    line.extend(std::iter::repeat_n(' ', pad));
                    line.extend_from_slice(text);
                } else {
                    line.extend_from_slice(text);
                    line.extend(std::iter::repeat_n(' ', pad));
                }
            }
            lines.push(line);
        }
    }
    pad_lines(lines, 0)
}

/// The lines made as wide as the widest, with `margin` blanks added on each side.
fn pad_lines(lines: Vec<Vec<char>>, margin: usize) -> Vec<Vec<char>> {
    let width = lines.iter().map(Vec::len).max().unwrap_or(0);
    lines
        .into_iter()
        .map(|l| {
            let mut out = vec![' '; margin];
            let n = l.len();
            out.extend(l);
            out.extend(std::iter::repeat_n(' ', width - n + margin));
            out
        })
        .collect()
}

/// Items of a vector, and rows and columns of a matrix, shown at each end of a large
/// array by [`display_summary`].
pub const SUMMARY_EDGE: usize = 50;

/// Arrays of more items than this are summarized by [`display_summary`].
pub const SUMMARY_ITEMS: usize = 10_000;

/// The display of a large vector or matrix with its middle left out, as NumPy's
/// summaries do (for an interactive session: `⍳1e6` shows at once): the first and
/// last [`SUMMARY_EDGE`] items, or rows and columns, with `…` and `⋮` where the rest
/// would be, and a last line saying the shape. `None` for an array that is shown
/// whole (at most [`SUMMARY_ITEMS`] items, or of rank 3 or more).
pub fn display_summary(a: &Array, pp: usize, pw: usize) -> Option<String> {
    if a.len() <= SUMMARY_ITEMS || a.rank() == 0 || a.rank() > 2 || a.elem.is_mixed() {
        return None;
    }
    let k = SUMMARY_EDGE;
    let shape: Vec<String> = a.shape.iter().map(|d| d.to_string()).collect();
    let note = format!(
        "(shape {}; {} items, the middle not shown)",
        shape.join(" "),
        a.len()
    );
    // The items at `ix` (ravel positions), as an array of `dims`.
    let pick = |ix: &[usize], dims: Vec<usize>| {
        let mut d = Data::with_capacity(a.elem, ix.len());
        ix.iter().for_each(|&i| d.push(a.data.get(i)));
        Array::new(dims, d)
    };
    let ends = |n: usize| -> (Vec<usize>, bool) {
        if n > 2 * k {
            ((0..k).chain(n - k..n).collect(), true)
        } else {
            ((0..n).collect(), false)
        }
    };
    if a.rank() == 1 {
        let (ix, cut) = ends(a.len());
        if !cut {
            return None;
        }
        let head = display_session(&pick(&ix[..k], vec![k]), pp, pw);
        let tail = display_session(&pick(&ix[k..], vec![k]), pp, pw);
        return Some(format!("{head}\n      …\n      {tail}\n{note}"));
    }
    let (rows, cols) = (a.shape[0], a.shape[1]);
    let (ri, rcut) = ends(rows);
    let (ci, ccut) = ends(cols);
    let block = |rs: &[usize]| -> Vec<String> {
        let part = |cs: &[usize]| {
            let ix: Vec<usize> = rs
                .iter()
                .flat_map(|&r| cs.iter().map(move |&c| r * cols + c))
                .collect();
            let text = format_array(&pick(&ix, vec![rs.len(), cs.len()]), pp);
            let w = text.shape[1];
            (0..rs.len())
                .map(|r| {
                    (0..w)
                        .map(|c| match text.data.get(r * w + c) {
                            Scalar::Char(ch) => ch,
                            _ => ' ',
                        })
                        .collect::<String>()
                })
                .collect::<Vec<String>>()
        };
        if ccut {
            let (left, right) = (part(&ci[..k]), part(&ci[k..]));
            left.into_iter()
                .zip(right)
                .map(|(l, r)| format!("{l} … {r}"))
                .collect()
        } else {
            part(&ci)
        }
    };
    let mut lines = Vec::new();
    if rcut {
        lines.extend(block(&ri[..k]));
        lines.push("⋮".to_string());
        lines.extend(block(&ri[k..]));
    } else {
        lines.extend(block(&ri));
    }
    lines.push(note);
    Some(lines.join("\n"))
}

/// As [`write_display_session`], into a string.
pub fn display_session(a: &Array, pp: usize, pw: usize) -> String {
    let mut out = String::new();
    let _ = write_display_session(a, pp, pw, &mut out);
    out
}

/// Writes the display of `a` with ⎕PP=`pp` to `out` as it goes: no string per element
/// is kept, so showing 10^8 numbers takes no more memory than the array (a matrix's
/// elements are formatted twice, once for its column widths).
pub fn write_display_pp(a: &Array, pp: usize, out: &mut dyn std::fmt::Write) -> std::fmt::Result {
    if a.elem.is_char() {
        return write_text(a, usize::MAX, out);
    }
    if a.elem.is_mixed() {
        return write_nested(a, pp, out);
    }
    let cell = |i: usize| format_scalar_pp(a.data.get(i), pp);
    match a.rank() {
        0 => out.write_str(&cell(0)),
        1 => {
            for i in 0..a.len() {
                if i > 0 {
                    out.write_char(' ')?;
                }
                out.write_str(&cell(i))?;
            }
            Ok(())
        }
        _ => {
            let widths = column_widths(a, pp);
            write_columns(a, pp, &widths, 0..widths.len(), 0, out)
        }
    }
}

/// Splits a formatted number at its decimal point: the lengths of the integer part and
/// of the fraction (with its point). Columns align on the point: integer parts
/// right-aligned, fractions left-aligned (as Dyalog shows them).
fn split_at_point(c: &str) -> (usize, usize) {
    match c.find('.') {
        Some(p) if !c.contains('E') => (c[..p].chars().count(), c[p..].chars().count()),
        _ => (c.chars().count(), 0),
    }
}

/// For every column of an array of rank 2 or more: the widest integer part and the
/// widest fraction in it.
fn column_widths(a: &Array, pp: usize) -> Vec<(usize, usize)> {
    let cols = *a.shape.last().unwrap_or(&1);
    let rows = a.len().checked_div(cols).unwrap_or(0);
    let mut widths = vec![(0, 0); cols];
    for r in 0..rows {
        for (c, w) in widths.iter_mut().enumerate() {
            let (i, f) = split_at_point(&format_scalar_pp(a.data.get(r * cols + c), pp));
            *w = (w.0.max(i), w.1.max(f));
        }
    }
    widths
}

/// Writes columns `range` of every row of `a` (rank 2 or more), each line after the
/// first indented `indent` spaces, planes separated by blank lines.
fn write_columns(
    a: &Array,
    pp: usize,
    widths: &[(usize, usize)],
    range: std::ops::Range<usize>,
    indent: usize,
    out: &mut dyn std::fmt::Write,
) -> std::fmt::Result {
    let cols = widths.len();
    let rows = a.len().checked_div(cols).unwrap_or(0);
    for r in 0..rows {
        write_row_break(a, r, out)?;
        out.write_str(&row_text(a, pp, widths, r, range.clone(), indent))?;
    }
    Ok(())
}

/// What comes before row `r` of `a`'s display (rows along its last axis): nothing
/// before the first, else a newline, and a blank line between planes, one more for
/// each higher axis that rolls over.
fn write_row_break(a: &Array, r: usize, out: &mut dyn std::fmt::Write) -> std::fmt::Result {
    if r == 0 {
        return Ok(());
    }
    out.write_char('\n')?;
    if a.rank() < 3 {
        return Ok(());
    }
    let mut stride = a.shape[a.rank() - 2].max(1);
    for ax in (0..a.rank() - 2).rev() {
        if r.is_multiple_of(stride) {
            out.write_char('\n')?;
        }
        stride *= a.shape[ax];
    }
    Ok(())
}

/// Row `r` of `a` (rank 2 or more), columns `range`, after `indent` blanks. Spaces are
/// written only before something that follows them, so no row ends in blanks.
fn row_text(
    a: &Array,
    pp: usize,
    widths: &[(usize, usize)],
    r: usize,
    range: std::ops::Range<usize>,
    indent: usize,
) -> String {
    let cols = widths.len();
    let mut out = String::new();
    let mut pending = indent;
    for c in range.clone() {
        let (wi, wf) = widths[c];
        let cell = format_scalar_pp(a.data.get(r * cols + c), pp);
        let (i, f) = split_at_point(&cell);
        pending += usize::from(c > range.start) + wi - i;
        out.extend(std::iter::repeat_n(' ', pending));
        out.push_str(&cell);
        pending = wf - f;
    }
    out
}

/// `⍕⍵`: the characters `a` displays as (with ⎕PP=`pp`, independent of ⎕PW). A
/// character array is itself; a number a vector of its digits; a numeric vector its
/// items separated by one blank; a higher rank a character array of its shape but for
/// the last axis, which is as long as its widest row (columns aligned as displayed).
pub fn format_array(a: &Array, pp: usize) -> Array {
    if a.elem.is_char() {
        return a.clone();
    }
    if a.elem.is_mixed() {
        let lines = nested_lines(a, pp);
        let width = lines.iter().map(Vec::len).max().unwrap_or(0);
        let mut data = Vec::with_capacity(lines.len() * width);
        for l in &lines {
            data.extend(l.iter().copied());
            data.extend(std::iter::repeat_n(' ', width - l.len()));
        }
        let shape = if lines.len() == 1 && a.rank() <= 1 {
            vec![width]
        } else {
            vec![lines.len(), width]
        };
        return Array::new(shape, Data::Char(data));
    }
    if a.rank() <= 1 {
        let text: Vec<String> = (0..a.len())
            .map(|i| format_scalar_pp(a.data.get(i), pp))
            .collect();
        return Array::vector(Data::Char(text.join(" ").chars().collect()));
    }
    let widths = column_widths(a, pp);
    let cols = widths.len();
    let rows = a.len().checked_div(cols).unwrap_or(0);
    let lines: Vec<Vec<char>> = (0..rows)
        .map(|r| row_text(a, pp, &widths, r, 0..cols, 0).chars().collect())
        .collect();
    // An empty axis has no rows to measure: the width its columns would take.
    let width = lines.iter().map(Vec::len).max().unwrap_or(0);
    let mut data = Vec::with_capacity(rows * width);
    for l in &lines {
        data.extend(l.iter().copied());
        data.extend(std::iter::repeat_n(' ', width - l.len()));
    }
    let mut shape = a.shape.clone();
    if let Some(last) = shape.last_mut() {
        *last = width;
    }
    Array::new(shape, Data::Char(data))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array::Data;

    #[test]
    fn floats_as_apl_prints_them() {
        let cases = [
            (1.5f32, "1.5"),
            (-3.0, "¯3"),
            (0.1, "0.1"),
            (1e10, "1E10"),
            (1.5e10, "1.5E10"),
            (2.5e-3, "0.0025"),
            (1e-7, "1E¯7"),
            (123456.7, "123456.7"),
            (1.0 / 3.0, "0.33333334"),
        ];
        for (v, want) in cases {
            assert_eq!(format_float(v), want, "{v}");
        }
    }

    #[test]
    fn long_vectors_fold_at_the_print_width() {
        let a = Array::vector(Data::I32((1..=30).collect()));
        let shown = display_session(&a, 10, 42);
        assert_eq!(
            shown,
            "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17\n      18 19 20 21 22 23 24 25 26 27 28 29\n      30"
        );
        assert!(shown.lines().all(|l| l.chars().count() <= 42));
        assert_eq!(display_session(&a, 10, 200), display(&a));
    }

    #[test]
    fn print_precision_rounds() {
        assert_eq!(format_float_pp(1.0 / 3.0, 3), "0.333");
        assert_eq!(format_float_pp(2.0 / 3.0, 3), "0.667");
        assert_eq!(format_float_pp(123456.7, 3), "1.23E5");
        assert_eq!(format_f64_pp(2.0 / 3.0, 17), "0.66666666666666663");
        assert_eq!(format_f64_pp(2.0 / 3.0, 5), "0.66667");
        assert_eq!(format_f64_pp(99999.5, 5), "1E5");
        assert_eq!(format_f64_pp(1.5, 40), "1.5");
    }

    #[test]
    fn matrix_columns_align() {
        let a = Array::new(vec![2, 3], Data::I64(vec![1, -20, 3, 400, 5, 6]));
        assert_eq!(display(&a), "  1 ¯20 3\n400   5 6");
        let b = Array::new(vec![2, 1, 2], Data::I32(vec![1, 2, 3, 4]));
        assert_eq!(display(&b), "1 2\n\n3 4");
    }

    #[test]
    fn format_by_specification_as_dyalog_documents() {
        let text = |spec: &[i64], a: Array| -> String {
            let r = format_spec(spec, &a).unwrap();
            display(&r)
        };
        let v = |x: &[f64]| Array::vector(Data::F64(x.to_vec()));
        let m = Array::new(vec![2, 3], Data::I32((1..=6).collect()));
        assert_eq!(text(&[5, 0], m), "    1    2    3\n    4    5    6");
        assert_eq!(
            text(&[4, 0], v(&[1.1, 2.0, -4.0, 2.547])),
            "   1   2  ¯4   3"
        );
        assert_eq!(
            text(&[4, 1], v(&[1.1, 2.0, -4.0, 2.547])),
            " 1.1 2.0¯4.0 2.5"
        );
        assert_eq!(
            text(&[7, -3], v(&[5.0, 15.0, 155.0, 1555.0])),
            " 5.00E0 1.50E1 1.55E2 1.56E3"
        );
        let w = Array::new(
            vec![2, 3],
            Data::F64(vec![10.0, 15.2346, -17.1, 2.0, 3.0, 4.0]),
        );
        assert_eq!(
            text(&[3], w),
            " 10.000 15.235 ¯17.100\n  2.000  3.000   4.000"
        );
        let s = Array::new(
            vec![3, 2],
            Data::F64(vec![10.1, 15.0, 1001.0, 22.357, 101.0, 1110.1]),
        );
        assert_eq!(text(&[3, 0, 6, 2], s), " 10 15.00\n*** 22.36\n101******");
        assert_eq!(text(&[0, 20], v(&[1.0 / 3.0])), " 0.3333333333333333____");
        assert_eq!(
            text(&[0, -20], v(&[1.0 / 3.0])),
            " 3.333333333333333____E¯1"
        );
        assert!(format_spec(&[1, 2, 3], &v(&[1.0])).is_err());
        let r = format_spec(
            &[5, 2],
            &Array::new(vec![2, 3, 4], Data::I32((1..=24).collect())),
        );
        assert_eq!(r.unwrap().shape, vec![2, 3, 20]);
    }

    #[test]
    fn large_arrays_are_summarized() {
        let v = Array::vector(Data::I32((1..=1_000_000).collect()));
        let s = display_summary(&v, 10, 80).unwrap();
        assert!(s.starts_with("1 2 3 "), "{s}");
        assert!(s.contains("…"), "{s}");
        assert!(
            s.ends_with("999999 1000000\n(shape 1000000; 1000000 items, the middle not shown)"),
            "{s}"
        );
        let m = Array::new(vec![200, 300], Data::I32((0..60_000).collect()));
        let s = display_summary(&m, 10, 80).unwrap();
        assert_eq!(s.lines().count(), 2 * SUMMARY_EDGE + 2, "{s}");
        assert!(s.lines().next().unwrap().contains(" … "), "{s}");
        assert!(display_summary(&Array::vector(Data::I32((0..100).collect())), 10, 80).is_none());
    }

    #[test]
    fn characters_show_as_text() {
        let v = Array::vector(Data::Char("hello".chars().collect()));
        assert_eq!(display(&v), "hello");
        let m = Array::new(vec![2, 3], Data::Char("abcdef".chars().collect()));
        assert_eq!(display(&m), "abc\ndef");
        let c = Array::new(vec![2, 1, 2], Data::Char("abcd".chars().collect()));
        assert_eq!(display(&c), "ab\n\ncd");
        let long = Array::vector(Data::Char(std::iter::repeat_n('x', 50).collect()));
        assert_eq!(
            display_session(&long, 10, 42),
            format!("{}\n      {}", "x".repeat(42), "x".repeat(8))
        );
    }

    #[test]
    fn wide_matrices_fold_by_columns() {
        // Dyalog's example for ⎕PW←40 (Language Reference, "Display of arrays").
        let rows: [[i32; 20]; 3] = [
            [
                54, 22, 5, 68, 68, 94, 39, 52, 84, 4, 6, 53, 68, 1, 39, 7, 42, 69, 49, 94,
            ],
            [
                85, 53, 10, 66, 42, 71, 92, 77, 27, 5, 74, 33, 64, 76, 100, 37, 25, 99, 73, 76,
            ],
            [
                66, 8, 64, 89, 28, 44, 77, 48, 24, 28, 36, 17, 49, 90, 91, 7, 91, 51, 52, 32,
            ],
        ];
        let a = Array::new(vec![3, 20], Data::I32(rows.concat()));
        let want = "\
54 22  5 68 68 94 39 52 84  4  6 53 68
85 53 10 66 42 71 92 77 27  5 74 33 64
66  8 64 89 28 44 77 48 24 28 36 17 49
       1  39  7 42 69 49 94
      76 100 37 25 99 73 76
      90  91  7 91 51 52 32";
        assert_eq!(display_session(&a, 10, 40), want);
        assert_eq!(display_session(&a, 10, 80), display(&a));
        // Planes fold together; an empty matrix shows nothing.
        let b = Array::new(vec![2, 1, 3], Data::I32(vec![100, 200, 300, 400, 500, 600]));
        assert_eq!(
            display_session(&b, 10, 8),
            "100 200\n\n400 500\n      300\n\n      600"
        );
        let e = Array::new(vec![0, 3], Data::I32(vec![]));
        assert_eq!(display_session(&e, 10, 8), display(&e));
    }
}
