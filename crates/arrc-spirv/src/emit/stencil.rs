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
    /// The workgroup array, its element type, and whether it holds pairs of them
    /// (two-vectors: a row of the tile read a pair at a time).
    var: Word,
    elem: ElemType,
    paired: bool,
    /// The place of the invocation's first output in it, the output's row below
    /// that one and column beside it, and the array's row length.
    at: Word,
    row: u32,
    col: u32,
    width: u32,
}

/// A `KExpr::WindowFold`'s rows, each folded over the window's columns:
/// `words[k][q]` for the tile row `first + k` from the invocation's first output,
/// at its column `q`.
pub(super) struct WindowRows {
    fold: KExpr,
    first: i32,
    words: Vec<Vec<Word>>,
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
    pub(super) cols_each: u32,
}

impl Emitter {
    pub(super) fn stencil_kernel(&mut self, cx: &mut Cx, expr: &KExpr, s: &StencilShape) -> R<()> {
        let u = self.u32_t;
        let x_elem = cx.bindings[s.x as usize].1;
        let elem = s.staged;
        let [th, tw] = s.tile;
        let ce = s.cols_each.clamp(1, 2);
        let paired = ce == 2;
        let sh = th + s.lo[0] + s.hi[0];
        // Rows of a paired tile have an even length (a pair never straddles two).
        let sw = (tw + s.lo[1] + s.hi[1]).next_multiple_of(ce);
        // The kernel's invocations (four to a column, or pair of columns, of the
        // tile) and the trips that stage the tile; the array is padded to whole
        // trips.
        let across_tile = tw / ce;
        let invocations = across_tile * 4;
        let trips = (sh * sw).div_ceil(invocations);
        let var = if paired {
            let et = self.ty(elem);
            let vt = self.b.type_vector(et, 2);
            let n = self.c_u32(trips * invocations / 2);
            let arr = self.b.type_array(vt, n);
            let p = self.ptr(rspirv::spirv::StorageClass::Workgroup, arr);
            self.workgroup_var(p)
        } else {
            self.shared_sized(elem, trips * invocations)
        };
        let rows = self.push_constant(cx, 1)?;
        let cols = self.push_constant(cx, 2)?;
        let (th_c, tw_c, sw_c) = (self.c_u32(th), self.c_u32(tw), self.c_u32(sw));
        let across = self.ceil_div(cols, tw_c)?;
        let down = self.ceil_div(rows, th_c)?;
        let tiles = self.umul(across, down)?;
        // This invocation's column (or pair) of the tile and its `per` rows, one
        // after another (four invocations to a column): neighbouring outputs read
        // many of the same places, each an offset from one base, loaded once.
        let per = th / 4;
        let at_c = self.c_u32(across_tile);
        let lx = self.b.u_mod(u, None, cx.lid, at_c).map_err(be)?;
        let ly = self.b.u_div(u, None, cx.lid, at_c).map_err(be)?;
        let ce_c = self.c_u32(ce);
        let lc0 = self.umul(lx, ce_c)?;
        let per_c = self.c_u32(per);
        let lr0 = self.umul(ly, per_c)?;
        let (lo_r, lo_c) = (self.c_u32(s.lo[0]), self.c_u32(s.lo[1]));
        let fill = self.scalar(s.fill.cast(elem));
        let tvar = self.local(u);
        let zero = self.c_u32(0);
        let et = self.ty(elem);
        let cxr = &*cx;
        let folds = expr.window_folds();
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
                let at = e.tile_ptr(var, elem, paired, k)?;
                e.store(at, v)?;
            }
            e.barrier()?;
            let r = e.uadd(r0, lr0)?;
            let c = e.uadd(c0, lc0)?;
            let srow = e.uadd(lr0, lo_r)?;
            let srow = e.umul(srow, sw_c)?;
            let scol = e.uadd(lc0, lo_c)?;
            let at = e.uadd(srow, scol)?;
            let here = StagedAt {
                var,
                elem,
                paired,
                at,
                row: 0,
                col: 0,
                width: sw,
            };
            // Whole-window folds: each row any output reads, folded over the
            // window's columns once (a 5×5 sum at 4 outputs: 8 rows of 4 adds, and 4
            // adds an output, against 24 an output, each a read of the tile).
            let mut window_rows = vec![];
            for fold in &folds {
                window_rows.push(e.window_rows(here, fold, per, ce, s.lo[1])?);
            }
            e.window_rows = window_rows;
            for j in 0..per {
                let jc = e.c_u32(j);
                let rj = e.uadd(r, jc)?;
                let in_r = e.ult(rj, rows)?;
                let row = e.umul(rj, cols)?;
                for q in 0..ce {
                    let qc = e.c_u32(q);
                    let cq = e.uadd(c, qc)?;
                    let in_c = e.ult(cq, cols)?;
                    let inside = e.b.logical_and(e.bool_t, None, in_r, in_c).map_err(be)?;
                    let i = e.uadd(row, cq)?;
                    let value = |e: &mut Self, i: Word| -> R<Word> {
                        e.staged = Some(StagedAt {
                            row: j,
                            col: q,
                            ..here
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
                        // Past the matrix the tile holds the fill: an expression
                        // that cannot fail is evaluated there too (reading item 0
                        // of anything else), in straight-line code, and not stored.
                        let at_i = e.b.select(u, None, inside, i, zero).map_err(be)?;
                        let v = value(e, at_i)?;
                        e.if_then(inside, |e| e.store_elem(cxr, s.out, i, v))?;
                    }
                }
            }
            Ok(())
        })?;
        self.window_rows.clear();
        Ok(())
    }

    /// Item `k` of the tile (a pointer to it), in an array of pairs where `paired`.
    fn tile_ptr(&mut self, var: Word, elem: ElemType, paired: bool, k: Word) -> R<Word> {
        if !paired {
            return self.shared_ptr(var, elem, k);
        }
        let u = self.u32_t;
        let one = self.c_u32(1);
        let pair = self.b.shift_right_logical(u, None, k, one).map_err(be)?;
        let half = self.b.bitwise_and(u, None, k, one).map_err(be)?;
        let et = self.ty(elem);
        let p = self.ptr(rspirv::spirv::StorageClass::Workgroup, et);
        self.b.access_chain(p, None, var, [pair, half]).map_err(be)
    }

    /// The rows of `fold` (a `KExpr::WindowFold`) that this invocation's `per`
    /// rows of `ce` outputs read, each folded over the window's columns. With two
    /// columns, the row's items between the two windows are folded once for both
    /// and, where the first item of the row's window is at an even place of the
    /// tile (`lo_c + cols[0]` even: every symmetric window), read a pair at a time.
    fn window_rows(
        &mut self,
        here: StagedAt,
        fold: &KExpr,
        per: u32,
        ce: u32,
        lo_c: u32,
    ) -> R<WindowRows> {
        let &KExpr::WindowFold {
            op,
            elem: to,
            read,
            rows,
            cols,
        } = fold
        else {
            return Err(super::SpirvError::Build("not a window fold".into()));
        };
        let first = rows[0];
        let width = (cols[1] - cols[0] + 1) as u32;
        let by_pairs = here.paired && (lo_c as i32 + cols[0]).rem_euclid(2) == 0;
        let mut words = vec![];
        for k in first..=per as i32 - 1 + rows[1] {
            self.staged = Some(StagedAt { row: 0, ..here });
            // The row's items from the first window's first column to the last
            // window's last, widened to the fold's type.
            let n = width + ce - 1;
            let mut items = Vec::with_capacity(n as usize);
            let mut dx = cols[0];
            while items.len() < n as usize {
                if by_pairs && items.len() + 2 <= n as usize {
                    let (a, b) = self.staged_pair(k, dx)?;
                    items.extend([a, b]);
                    dx += 2;
                } else {
                    items.push(self.staged(k, dx)?);
                    dx += 1;
                }
            }
            self.staged = None;
            let items = items
                .into_iter()
                .map(|v| self.convert(v, read, to))
                .collect::<R<Vec<_>>>()?;
            let row = if ce == 1 {
                vec![self.tree_fold(op, to, items)?]
            } else {
                // The items both windows hold, folded once.
                let w = width as usize;
                let middle = self.tree_fold(op, to, items[1..w].to_vec())?;
                vec![
                    self.binop(op, to, items[0], middle)?,
                    self.binop(op, to, middle, items[w])?,
                ]
            };
            words.push(row);
        }
        Ok(WindowRows {
            fold: fold.clone(),
            first,
            words,
        })
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
            .map(|dy| w.words[(s.row as i32 + dy - w.first) as usize][s.col as usize])
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
        let (s, i) = self.staged_place(dy, dx)?;
        let p = self.tile_ptr(s.var, s.elem, s.paired, i)?;
        let t = self.ty(s.elem);
        self.load(t, p)
    }

    /// The staged matrix at the output's place plus (`dy`, `dx`) and (`dy`, `dx+1`),
    /// one load of a pair: the first must be at an even place of a paired tile.
    fn staged_pair(&mut self, dy: i32, dx: i32) -> R<(Word, Word)> {
        let (s, i) = self.staged_place(dy, dx)?;
        let u = self.u32_t;
        let one = self.c_u32(1);
        let pair = self.b.shift_right_logical(u, None, i, one).map_err(be)?;
        let et = self.ty(s.elem);
        let vt = self.b.type_vector(et, 2);
        let p = self.ptr(rspirv::spirv::StorageClass::Workgroup, vt);
        let p = self.b.access_chain(p, None, s.var, [pair]).map_err(be)?;
        let v = self.load(vt, p)?;
        let a = self.b.composite_extract(et, None, v, [0]).map_err(be)?;
        let b = self.b.composite_extract(et, None, v, [1]).map_err(be)?;
        Ok((a, b))
    }

    /// Where `KExpr::Staged` at (`dy`, `dx`) reads: the tile and the item's place.
    fn staged_place(&mut self, dy: i32, dx: i32) -> R<(StagedAt, Word)> {
        let Some(s) = self.staged else {
            return Err(super::SpirvError::Build(
                "a staged read outside a stencil kernel".into(),
            ));
        };
        let off = (s.row as i32 + dy) * s.width as i32 + s.col as i32 + dx;
        let off = self.c_u32(off as u32);
        Ok((s, self.uadd(s.at, off)?))
    }
}
