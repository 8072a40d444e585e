//! Shape rules that the reference and the lowering share.

use crate::error::{err, Result};
use arrc_syntax::Span;

/// `axes` (from `io`) as 0-based axes of an array of rank `rank`: different, and
/// below the rank (AXIS ERROR at `axes_span` otherwise).
pub fn distinct_axes(axes: &[i64], rank: usize, io: i64, axes_span: &Span) -> Result<Vec<usize>> {
    let mut at: Vec<usize> = Vec::with_capacity(axes.len());
    for &v in axes {
        let i = v - io;
        if i < 0 || i as usize >= rank || at.contains(&(i as usize)) {
            return Err(err::axis(
                format!(
                    "the axes must be different integers from {io} to {}",
                    rank as i64 - 1 + io
                ),
                axes_span.clone(),
            ));
        }
        at.push(i as usize);
    }
    Ok(at)
}

/// `counts f[axes] x` for take and drop along several axes: each axis (from `io`)
/// with its count, in the order written. The axes must be different and below
/// `rank` (AXIS ERROR at `axes_span`); one count serves every axis, otherwise there
/// is one per axis (LENGTH ERROR at `span`).
pub fn axis_counts(
    axes: &[i64],
    counts: &[i64],
    rank: usize,
    io: i64,
    axes_span: &Span,
    span: &Span,
) -> Result<Vec<(usize, i64)>> {
    let at = distinct_axes(axes, rank, io, axes_span)?;
    match counts.len() {
        1 => Ok(at.into_iter().map(|a| (a, counts[0])).collect()),
        n if n == at.len() => Ok(at.into_iter().zip(counts.iter().copied()).collect()),
        n => Err(err::length(
            format!("{n} counts for {} axes", at.len()),
            span.clone(),
        )),
    }
}
