//! `KernelKind::Stencil`: a map over a matrix result whose expression reads one
//! matrix at several offsets. Each workgroup takes tiles of outputs in turn, stages
//! the tile's part of the matrix with its halo in workgroup memory (coalesced rows,
//! the fill outside the matrix, each element loaded once), and evaluates the
//! expression at each output, its offsets read from there (`KExpr::Staged`). Each
//! invocation computes a column of neighbouring outputs; a whole-window fold
//! (`KExpr::WindowFold`) is computed for all of them at once, separably: each
//! staged row they read folded over the window's columns, then each output's rows
//! of those, neighbouring windows sharing their common rows.

use super::{be, Cx, Emitter, Ix, R};
use arrc_ir::plan::KExpr;
use arrc_ir::scalar::BinOp;
use arrc_ir::{ElemType, Scalar};
use rspirv::spirv::Word;
use std::collections::HashMap;

/// Where `KExpr::Staged` reads while an output of a stencil is evaluated.
#[derive(Clone, Copy)]
pub(super) struct StagedAt {
    /// The workgroup array and its element type.
    var: Word,
    elem: ElemType,
    /// The place of the invocation's first output in it, the output's row below
    /// that one, and the array's row length.
    at: Word,
    row: u32,
    width: u32,
}

/// A `KExpr::WindowFold` at each of the invocation's outputs: `at[row]`.
pub(super) struct WindowFolds {
    fold: KExpr,
    at: Vec<Word>,
}

/// The shape of a stencil kernel (`KernelKind::Stencil`'s fields but the expression).
pub(super) struct StencilShape {
    pub(super) out: u32,
    pub(super) x: u32,
    pub(super) fill: Scalar,
    pub(super) staged: ElemType,
    pub(super) lo: [u32; 2],
    pub(super) hi: [u32; 2],
    pub(super) tile: [u32; 2],
    pub(super) rows_each: u32,
}

impl Emitter {
    pub(super) fn stencil_kernel(&mut self, cx: &mut Cx, expr: &KExpr, s: &StencilShape) -> R<()> {
        let u = self.u32_t;
        let x_elem = cx.bindings[s.x as usize].1;
        let elem = s.staged;
        let [th, tw] = s.tile;
        let sh = th + s.lo[0] + s.hi[0];
        let sw = tw + s.lo[1] + s.hi[1];
        // The kernel's invocations (each `er` outputs of the tile, one below
        // another) and the trips that stage the tile; the array is padded to
        // whole trips.
        let er = s.rows_each;
        let invocations = tw * (th / er);
        let trips = (sh * sw).div_ceil(invocations);
        let var = self.shared_sized(elem, trips * invocations);
        let rows = self.push_constant(cx, 1)?;
        let cols = self.push_constant(cx, 2)?;
        let (th_c, tw_c, sw_c) = (self.c_u32(th), self.c_u32(tw), self.c_u32(sw));
        let tiles_across = self.ceil_div(cols, tw_c)?;
        let tiles_down = self.ceil_div(rows, th_c)?;
        let tiles = self.umul(tiles_across, tiles_down)?;
        // This invocation's outputs in the tile, `er` rows of one column:
        // neighbouring outputs read many of the same places, each an offset from
        // one base, loaded once.
        let lc0 = self.b.u_mod(u, None, cx.lid, tw_c).map_err(be)?;
        let ly = self.b.u_div(u, None, cx.lid, tw_c).map_err(be)?;
        let er_c = self.c_u32(er);
        let lr0 = self.umul(ly, er_c)?;
        let (lo_r, lo_c) = (self.c_u32(s.lo[0]), self.c_u32(s.lo[1]));
        let fill = self.scalar(s.fill.cast(elem));
        let tvar = self.local(u);
        let zero = self.c_u32(0);
        let et = self.ty(elem);
        let cxr = &*cx;
        self.count_loop(tvar, cx.group, tiles, cx.groups, |e, t| {
            let ty_ = e.b.u_div(u, None, t, tiles_across).map_err(be)?;
            let tx_ = e.b.u_mod(u, None, t, tiles_across).map_err(be)?;
            let r0 = e.umul(ty_, th_c)?;
            let c0 = e.umul(tx_, tw_c)?;
            // The previous tile's reads are done before this one is staged.
            e.barrier()?;
            // Every load of the tile first (independent, branch-free: a place
            // outside the matrix loads item 0 and keeps the fill), then the stores.
            let mut staged = Vec::with_capacity(trips as usize);
            for t in 0..trips {
                let off = e.c_u32(t * invocations);
                let k = e.uadd(cxr.lid, off)?;
                let sr = e.b.u_div(u, None, k, sw_c).map_err(be)?;
                let sc = e.b.u_mod(u, None, k, sw_c).map_err(be)?;
                // Rows and columns before the matrix wrap past its lengths.
                let gr = e.uadd(r0, sr)?;
                let gr = e.b.i_sub(u, None, gr, lo_r).map_err(be)?;
                let gc = e.uadd(c0, sc)?;
                let gc = e.b.i_sub(u, None, gc, lo_c).map_err(be)?;
                let in_r = e.ult(gr, rows)?;
                let in_c = e.ult(gc, cols)?;
                let inside = e.b.logical_and(e.bool_t, None, in_r, in_c).map_err(be)?;
                let row = e.umul(gr, cols)?;
                let i = e.uadd(row, gc)?;
                let i = e.b.select(u, None, inside, i, zero).map_err(be)?;
                let v = e.load_elem(cxr, s.x, i)?;
                staged.push((k, inside, v));
            }
            let read: Vec<Word> = staged.iter().map(|&(_, _, v)| v).collect();
            let wide = e.convert_all(&read, x_elem, elem)?;
            for ((k, inside, _), v) in staged.into_iter().zip(wide) {
                let v = e.b.select(et, None, inside, v, fill).map_err(be)?;
                let at = e.shared_ptr(var, elem, k)?;
                e.store(at, v)?;
            }
            e.barrier()?;
            let r = e.uadd(r0, lr0)?;
            let c = e.uadd(c0, lc0)?;
            let srow = e.uadd(lr0, lo_r)?;
            let srow = e.umul(srow, sw_c)?;
            let scol = e.uadd(lc0, lo_c)?;
            let at = e.uadd(srow, scol)?;
            let place = |row: u32| StagedAt {
                var,
                elem,
                at,
                row,
                width: sw,
            };
            // Whole-window folds, separably: each staged row the outputs read,
            // folded over the window's columns, then each output's rows of those
            // (neighbouring windows sharing their common rows). A 5×5 sum at 6
            // outputs: 10 rows of 5 reads and 4 adds, then 11 adds; 8.3 reads
            // (each converted) and 8.5 adds an output, against 25 and 24 folded
            // apart.
            e.staged = Some(place(0));
            let mut read_at = HashMap::new();
            let mut window_folds = vec![];
            for fold in expr.window_folds() {
                let KExpr::WindowFold {
                    op,
                    elem: to,
                    read,
                    rows,
                    cols,
                } = fold
                else {
                    continue;
                };
                let mut across = vec![];
                for k in rows[0]..=er as i32 - 1 + rows[1] {
                    // The row's reads not converted yet, converted together.
                    let mut fresh = vec![];
                    for dx in cols[0]..=cols[1] {
                        if !read_at.contains_key(&(k, dx, read, to)) {
                            fresh.push((dx, e.staged(k, dx)?));
                        }
                    }
                    let vals: Vec<Word> = fresh.iter().map(|&(_, v)| v).collect();
                    let wide = e.convert_all(&vals, read, to)?;
                    for ((dx, _), v) in fresh.into_iter().zip(wide) {
                        read_at.insert((k, dx, read, to), v);
                    }
                    let row: Vec<Word> = (cols[0]..=cols[1])
                        .map(|dx| read_at[&(k, dx, read, to)])
                        .collect();
                    across.push(e.tree_fold(op, to, row)?);
                }
                let height = (rows[1] - rows[0] + 1) as usize;
                let at = e.sliding_folds(op, to, &across, height, er as usize)?;
                window_folds.push(WindowFolds { fold, at });
            }
            e.staged = None;
            e.window_folds = window_folds;
            let in_c = e.ult(c, cols)?;
            for j in 0..er {
                let jc = e.c_u32(j);
                let rj = e.uadd(r, jc)?;
                let in_r = e.ult(rj, rows)?;
                let row = e.umul(rj, cols)?;
                let inside = e.b.logical_and(e.bool_t, None, in_r, in_c).map_err(be)?;
                let i = e.uadd(row, c)?;
                let value = |e: &mut Self, i: Word| -> R<Word> {
                    e.staged = Some(place(j));
                    let v = e.expr(cxr, expr, Ix::flat(i));
                    e.staged = None;
                    v
                };
                if expr.may_fail() {
                    e.if_then(inside, |e| {
                        let v = value(e, i)?;
                        e.store_elem(cxr, s.out, i, v)
                    })?;
                } else {
                    // Past the matrix the tile holds the fill: an expression that
                    // cannot fail is evaluated there too (reading item 0 of
                    // anything else), in straight-line code, and not stored.
                    let at_i = e.b.select(u, None, inside, i, zero).map_err(be)?;
                    let v = value(e, at_i)?;
                    e.if_then(inside, |e| e.store_elem(cxr, s.out, i, v))?;
                }
            }
            Ok(())
        })?;
        self.window_folds.clear();
        Ok(())
    }

    /// `KExpr::WindowFold` at the output being evaluated (folded for all the
    /// invocation's outputs, above).
    pub(super) fn window_fold(&mut self, fold: &KExpr) -> R<Word> {
        let Some(s) = self.staged else {
            return Err(super::SpirvError::Build(
                "a window fold outside a stencil kernel".into(),
            ));
        };
        self.window_folds
            .iter()
            .find(|w| w.fold == *fold)
            .and_then(|w| w.at.get(s.row as usize).copied())
            .ok_or_else(|| super::SpirvError::Build("a window fold not folded".into()))
    }

    /// `op` over each window `values[i..i + width]`, `i < count`, where the
    /// windows' common parts are folded once: a run of up to `width` neighbouring
    /// windows shares the values all of them hold (a fold of those), each window
    /// adding a fold of the values before them (suffixes, built right to left)
    /// and after them (prefixes, left to right). Four windows of five values take
    /// 11 steps, against 16 folded apart. `op` is associative and commutative (a
    /// window fold's).
    fn sliding_folds(
        &mut self,
        op: BinOp,
        elem: ElemType,
        values: &[Word],
        width: usize,
        count: usize,
    ) -> R<Vec<Word>> {
        let mut out = Vec::with_capacity(count);
        let mut start = 0;
        while start < count {
            let g = width.min(count - start);
            let v = &values[start..start + width + g - 1];
            // Every window of the run holds v[g-1 ..= width-1].
            let core = self.tree_fold(op, elem, v[g - 1..width].to_vec())?;
            // Before the core: window t holds v[t..g-1]; after it, v[width..width+t].
            let mut before = vec![None; g];
            for t in (0..g.saturating_sub(1)).rev() {
                before[t] = Some(match before[t + 1] {
                    Some(b) => self.binop(op, elem, v[t], b)?,
                    None => v[t],
                });
            }
            let mut after: Vec<Option<Word>> = vec![None; g];
            for t in 1..g {
                after[t] = Some(match after[t - 1] {
                    Some(a) => self.binop(op, elem, a, v[width + t - 1])?,
                    None => v[width + t - 1],
                });
            }
            for t in 0..g {
                let mut w = core;
                if let Some(b) = before[t] {
                    w = self.binop(op, elem, b, w)?;
                }
                if let Some(a) = after[t] {
                    w = self.binop(op, elem, w, a)?;
                }
                out.push(w);
            }
            start += g;
        }
        Ok(out)
    }

    /// `op` over `words` (at least one) as a tree of pairs.
    fn tree_fold(&mut self, op: BinOp, elem: ElemType, mut words: Vec<Word>) -> R<Word> {
        while words.len() > 1 {
            let mut next = Vec::with_capacity(words.len().div_ceil(2));
            for pair in words.chunks(2) {
                next.push(match *pair {
                    [a, b] => self.binop(op, elem, a, b)?,
                    [a] => a,
                    _ => unreachable!("chunks of two"),
                });
            }
            words = next;
        }
        words
            .pop()
            .ok_or_else(|| super::SpirvError::Build("an empty fold".into()))
    }

    /// `KExpr::Staged`: the staged matrix at the output's place plus (`dy`, `dx`).
    pub(super) fn staged(&mut self, dy: i32, dx: i32) -> R<Word> {
        let Some(s) = self.staged else {
            return Err(super::SpirvError::Build(
                "a staged read outside a stencil kernel".into(),
            ));
        };
        let off = (s.row as i32 + dy) * s.width as i32 + dx;
        let off = self.c_u32(off as u32);
        let i = self.uadd(s.at, off)?;
        let p = self.shared_ptr(s.var, s.elem, i)?;
        let t = self.ty(s.elem);
        self.load(t, p)
    }
}
