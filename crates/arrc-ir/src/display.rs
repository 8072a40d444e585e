//! Arrays displayed as Dyalog APL shows them (⎕PP=10): `¯` for negatives, vectors
//! space-separated, matrices in right-aligned columns, higher ranks as planes separated
//! by blank lines.

use crate::array::{Array, Scalar};

/// Significant digits shown for floats (APL's ⎕PP).
pub const PRINT_PRECISION: usize = 10;

/// One element as APL prints it.
pub fn format_scalar(s: Scalar) -> String {
    match s {
        Scalar::Bool(v) => format_int(v as i64),
        Scalar::I32(v) => format_int(v as i64),
        Scalar::I64(v) => format_int(v),
        Scalar::F32(v) => format_float(v),
        Scalar::F64(v) => format_f64(v),
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
    format_real(v as f64, || format!("{:e}", v.abs()))
}

/// Formats an f64 rounded to ⎕PP significant digits (`÷3` shows as `0.3333333333`).
pub fn format_f64(v: f64) -> String {
    format_real(v, || format!("{:.*e}", PRINT_PRECISION - 1, v.abs()))
}

/// `sci` gives |v| as `d.ddde±x` with at most ⎕PP significant digits that matter.
fn format_real(v: f64, sci: impl FnOnce() -> String) -> String {
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
    digits.truncate(PRINT_PRECISION);
    while digits.len() > 1 && digits.ends_with('0') {
        digits.pop();
    }
    let body = if exp >= PRINT_PRECISION as i32 || exp < -6 {
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
    let cells: Vec<String> = (0..a.len()).map(|i| format_scalar(a.data.get(i))).collect();
    match a.rank() {
        0 => cells.into_iter().next().unwrap_or_default(),
        1 => cells.join(" "),
        _ => {
            let cols = *a.shape.last().unwrap_or(&1);
            let rows = a.len().checked_div(cols).unwrap_or(0);
            // Columns align on the decimal point: integer parts right-aligned, fractions
            // left-aligned (as Dyalog shows them).
            let split = |c: &str| -> (usize, usize) {
                match c.find('.') {
                    Some(p) if !c.contains('E') => (c[..p].chars().count(), c[p..].chars().count()),
                    _ => (c.chars().count(), 0),
                }
            };
            let widths: Vec<(usize, usize)> = (0..cols)
                .map(|c| {
                    (0..rows).fold((0, 0), |(wi, wf), r| {
                        let (i, f) = split(&cells[r * cols + c]);
                        (wi.max(i), wf.max(f))
                    })
                })
                .collect();
            let plane_rows = a.shape[a.rank() - 2].max(1);
            let mut out = String::new();
            for r in 0..rows {
                if r > 0 {
                    out.push('\n');
                    // A blank line between planes, one more for each higher axis that rolls over.
                    let mut stride = plane_rows;
                    for ax in (0..a.rank() - 2).rev() {
                        if r % stride == 0 {
                            out.push('\n');
                        }
                        stride *= a.shape[ax];
                    }
                }
                let mut line = String::new();
                for c in 0..cols {
                    let cell = &cells[r * cols + c];
                    let (i, f) = split(cell);
                    let (wi, wf) = widths[c];
                    if c > 0 {
                        line.push(' ');
                    }
                    line.push_str(&" ".repeat(wi - i));
                    line.push_str(cell);
                    line.push_str(&" ".repeat(wf - f));
                }
                out.push_str(line.trim_end());
            }
            out
        }
    }
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
    fn matrix_columns_align() {
        let a = Array::new(vec![2, 3], Data::I64(vec![1, -20, 3, 400, 5, 6]));
        assert_eq!(display(&a), "  1 ¯20 3\n400   5 6");
        let b = Array::new(vec![2, 1, 2], Data::I32(vec![1, 2, 3, 4]));
        assert_eq!(display(&b), "1 2\n\n3 4");
    }
}
