//! `KernelKind::Stencil`: a map over a matrix result whose expression reads one
//! matrix at several offsets. Each workgroup takes tiles of outputs in turn, stages
//! the tile's part of the matrix with its halo in workgroup memory (coalesced rows,
//! the fill outside the matrix, each element loaded once), and evaluates the
//! expression at each output, its offsets read from there (`KExpr::Staged`).

use super::{be, Cx, Emitter, Ix, R};
use arrc_ir::plan::KExpr;
use arrc_ir::scalar::BinOp;
use arrc_ir::{ElemType, Scalar};
use rspirv::spirv::Word;

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

/// A `KExpr::WindowFold`'s rows, each folded over the window's columns: `words[k]`
/// for the tile row `first + k` from the invocation's first output.
pub(super) struct WindowRows {
    fold: KExpr,
    first: i32,
    words: Vec<Word>,
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
}

impl Emitter {
    pub(super) fn stencil_kernel(&mut self, cx: &mut Cx, expr: &KExpr, s: &StencilShape) -> R<()> {
        let u = self.u32_t;
        let x_elem = cx.bindings[s.x as usize].1;
        let elem = s.staged;
        let [th, tw] = s.tile;
        let sh = th + s.lo[0] + s.hi[0];
        let sw = tw + s.lo[1] + s.hi[1];
        // The kernel's invocations (four to a column of the tile) and the trips
        // that stage the tile; the array is padded to whole trips.
        let invocations = tw * 4;
        let trips = (sh * sw).div_ceil(invocations);
        let var = self.shared_sized(elem, trips * invocations);
        let rows = self.push_constant(cx, 1)?;
        let cols = self.push_constant(cx, 2)?;
        let (th_c, tw_c, sw_c) = (self.c_u32(th), self.c_u32(tw), self.c_u32(sw));
        let across = self.ceil_div(cols, tw_c)?;
        let down = self.ceil_div(rows, th_c)?;
        let tiles = self.umul(across, down)?;
        // This invocation's column of the tile and its `per` rows, one after another
        // (four invocations to a column): neighbouring outputs read many of the
        // same places, each an offset from one base, loaded once.
        let per = th / 4;
        let lx = self.b.u_mod(u, None, cx.lid, tw_c).map_err(be)?;
        let ly = self.b.u_div(u, None, cx.lid, tw_c).map_err(be)?;
        let per_c = self.c_u32(per);
        let lr0 = self.umul(ly, per_c)?;
        let (lo_r, lo_c) = (self.c_u32(s.lo[0]), self.c_u32(s.lo[1]));
        let fill = self.scalar(s.fill.cast(elem));
        let tvar = self.local(u);
        let zero = self.c_u32(0);
        let et = self.ty(elem);
        let cxr = &*cx;
        self.count_loop(tvar, cx.group, tiles, cx.groups, |e, t| {
            let ty_ = e.b.u_div(u, None, t, across).map_err(be)?;
            let tx_ = e.b.u_mod(u, None, t, across).map_err(be)?;
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
                let v = e.convert(v, x_elem, elem)?;
                let v = e.b.select(et, None, inside, v, fill).map_err(be)?;
                staged.push((k, v));
            }
            for (k, v) in staged {
                let at = e.shared_ptr(var, elem, k)?;
                e.store(at, v)?;
            }
            e.barrier()?;
            let r = e.uadd(r0, lr0)?;
            let c = e.uadd(c0, lx)?;
            let in_c = e.ult(c, cols)?;
            let srow = e.uadd(lr0, lo_r)?;
            let srow = e.umul(srow, sw_c)?;
            let scol = e.uadd(lx, lo_c)?;
            let at = e.uadd(srow, scol)?;
            // Whole-window folds: each row any output reads, folded over the
            // window's columns once (a 5×5 sum at 4 outputs: 8 rows of 4 adds, and 4
            // adds an output, against 24 an output, each a read of the tile).
            e.staged = Some(StagedAt {
                var,
                elem,
                at,
                row: 0,
                width: sw,
            });
            let mut window_rows = vec![];
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
                let first = rows[0];
                let mut words = vec![];
                for k in first..=per as i32 - 1 + rows[1] {
                    let row = (cols[0]..=cols[1])
                        .map(|dx| {
                            let v = e.staged(k, dx)?;
                            e.convert(v, read, to)
                        })
                        .collect::<R<Vec<_>>>()?;
                    words.push(e.tree_fold(op, to, row)?);
                }
                window_rows.push(WindowRows { fold, first, words });
            }
            e.staged = None;
            e.window_rows = window_rows;
            for j in 0..per {
                let jc = e.c_u32(j);
                let rj = e.uadd(r, jc)?;
                let in_r = e.ult(rj, rows)?;
                let inside = e.b.logical_and(e.bool_t, None, in_r, in_c).map_err(be)?;
                let row = e.umul(rj, cols)?;
                let i = e.uadd(row, c)?;
                let value = |e: &mut Self, i: Word| -> R<Word> {
                    e.staged = Some(StagedAt {
                        var,
                        elem,
                        at,
                        row: j,
                        width: sw,
                    });
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
        self.window_rows.clear();
        Ok(())
    }

    /// `KExpr::WindowFold` at the output being evaluated: its window's rows (folded
    /// once for the invocation, above), folded.
    pub(super) fn window_fold(&mut self, fold: &KExpr) -> R<Word> {
        let (Some(s), &KExpr::WindowFold { op, elem, rows, .. }) = (self.staged, fold) else {
            return Err(super::SpirvError::Build(
                "a window fold outside a stencil kernel".into(),
            ));
        };
        let Some(w) = self.window_rows.iter().find(|w| w.fold == *fold) else {
            return Err(super::SpirvError::Build(
                "a window fold whose rows were not folded".into(),
            ));
        };
        let words = (rows[0]..=rows[1])
            .map(|dy| w.words[(s.row as i32 + dy - w.first) as usize])
            .collect();
        self.tree_fold(op, elem, words)
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
