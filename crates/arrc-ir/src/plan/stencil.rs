//! Maps that read one 2-D argument at several offsets (`⌺`'s windows: `Gather::Window`
//! of the same matrix, shaped like the result): the argument is staged tile by tile
//! in workgroup memory with its halo, once, and every offset reads it there
//! (`KernelKind::Stencil`, `KExpr::Staged`). Read from device memory, each output
//! of a 5×5 window made 25 loads, each with its own bounds checks (23% of the copy
//! rate on an H100).

use super::*;

/// Columns of outputs per workgroup tile: 256 invocations, each computing
/// `rows_each` outputs of one column (64 invocations across the tile, 4 down).
const TILE_COLS: u32 = 64;
/// Invocations of a stencil's workgroup.
const INVOCATIONS: u32 = 256;
/// The widest halo staged on each side.
const MAX_HALO: u64 = 8;

/// The argument a stencil map stages, its padding and its halo.
struct Stage {
    x: Value,
    fill: Scalar,
    lo: [u32; 2],
    hi: [u32; 2],
    /// Outputs each invocation computes, one below another.
    rows_each: u32,
    /// The type every read converts to, where all do (f32 windows summed in f64):
    /// the tile holds that type, each item converted once as it is staged, not
    /// once per read (25 conversions an output of a 5×5 `+/`).
    widened: Option<ElemType>,
}

/// Rows of outputs a workgroup's tile covers, each invocation computing
/// `rows_each`.
fn tile_rows(rows_each: u32) -> u32 {
    INVOCATIONS / TILE_COLS * rows_each
}

impl Planner<'_> {
    /// Plans `v` into buffer `b` as a stencil where it is one ([`Planner::stage_of`]);
    /// false where it is not (a plain map then).
    pub(super) fn stencil_map(&mut self, v: Value, b: usize) -> bool {
        let Some(stage) = self.stage_of(v) else {
            return false;
        };
        let f = self.v.func;
        let elem = f.ty(v).elem;
        let [rows, cols] = [0, 1].map(|a| match f.ty(v).shape[a] {
            Dim::Known(d) => d,
            _ => 0,
        });
        // Computed once where it is an expression, not at every offset.
        let x_b = self.materialize(stage.x);
        let mut kb = self.kb();
        let x_elem = f.ty(stage.x).elem;
        let x = kb.bind(x_b, x_elem, false);
        self.staged = Some((stage.x, stage.widened));
        let expr = self.expr(v, &IExpr::Index, &mut kb);
        self.staged = None;
        let expr = if self.opts.window_folds {
            take_window_folds(expr)
        } else {
            expr
        };
        let out = kb.bind(b, elem, true);
        self.bind_status(&mut kb, expr.may_fail());
        let tile = [tile_rows(stage.rows_each), TILE_COLS];
        let tiles = rows.div_ceil(u64::from(tile[0])) * cols.div_ceil(u64::from(tile[1]));
        // A workgroup a tile, up to many more than the device holds at once (on an
        // H200, 65535 workgroups took 650 µs for a 5×5 `+/` of 8192², 2048 taking
        // tiles in turn 670 µs); beyond, each takes tiles in turn.
        let groups = Count::Groups {
            of: Box::new(Count::known(tiles)),
            per_group: 1,
            max: self
                .opts
                .busy_groups
                .saturating_mul(32)
                .min(self.opts.map_groups),
        };
        let kind = KernelKind::Stencil {
            expr,
            out,
            x,
            fill: stage.fill,
            staged: stage.widened.unwrap_or(x_elem),
            lo: stage.lo,
            hi: stage.hi,
            tile,
            rows_each: stage.rows_each,
        };
        let push = vec![
            ("n", Count::known(rows * cols)),
            ("rows", Count::known(rows)),
            ("cols", Count::known(cols)),
        ];
        self.push_kernel_shaped("stencil", kind, kb, push, groups, (INVOCATIONS, 1));
        true
    }

    /// The matrix that `v`'s fused expression reads at several offsets, where every
    /// path to those reads is elementwise (each read is at the output's own place
    /// plus its offset), all pad alike, and the halo is narrow. The matrix itself
    /// may still be an expression.
    fn stage_of(&self, v: Value) -> Option<Stage> {
        let f = self.v.func;
        let shape = &f.ty(v).shape;
        if !self.opts.stencil_tiles {
            return None;
        }
        let (2, Some(n)) = (shape.len(), known(shape)) else {
            return None;
        };
        if n < 2 || n > u64::from(u32::MAX) {
            return None;
        }
        // (the window, its matrix, offset, fill)
        let mut windows: Vec<(Value, Value, &[i64], Scalar)> = vec![];
        // Other values read at the output's own place: only the matrix itself.
        let mut direct = vec![];
        // Each operand read, and the type it is converted to where that is all its
        // reader does.
        let mut reads: Vec<(Value, Option<ElemType>)> = vec![];
        let mut todo = vec![v];
        let mut seen = HashSet::new();
        while let Some(u) = todo.pop() {
            if !seen.insert(u) || self.buffer_of[u.index()].is_some() {
                continue;
            }
            let operands = match f.inst(u) {
                Inst::Const(_) | Inst::Length { .. } => vec![],
                Inst::Cast(a) => {
                    reads.push((*a, Some(f.ty(u).elem)));
                    todo.push(*a);
                    continue;
                }
                Inst::Unary { arg, .. } => vec![*arg],
                Inst::Binary { lhs, rhs, .. } => vec![*lhs, *rhs],
                Inst::Select { cond, then, els } => vec![*cond, *then, *els],
                Inst::Gather {
                    arg,
                    map: Gather::Window { start, fill },
                } if f.ty(*arg).shape == *shape && f.ty(u).shape == *shape => {
                    windows.push((u, *arg, start, *fill));
                    vec![]
                }
                _ => {
                    direct.push(u);
                    vec![]
                }
            };
            reads.extend(operands.iter().map(|&o| (o, None)));
            todo.extend(operands);
        }
        let &(_, x, _, fill) = windows.first()?;
        if windows.len() < self.opts.stencil_from as usize
            || direct.iter().any(|&d| d != x)
            || windows.iter().any(|w| w.1 != x || w.3 != fill)
            || !matches!(
                f.ty(x).elem,
                ElemType::Bool | ElemType::I32 | ElemType::F32 | ElemType::I64 | ElemType::F64
            )
        {
            return None;
        }
        let mut lo = [0u32; 2];
        let mut hi = [0u32; 2];
        for (_, _, start, _) in &windows {
            for a in 0..2 {
                let s = start[a];
                if s.unsigned_abs() > MAX_HALO {
                    return None;
                }
                if s < 0 {
                    lo[a] = lo[a].max(s.unsigned_abs() as u32);
                } else {
                    hi[a] = hi[a].max(s as u32);
                }
            }
        }
        let staged: HashSet<Value> = windows.iter().map(|w| w.0).collect();
        let mut to = reads.iter().filter(|r| staged.contains(&r.0)).map(|r| r.1);
        let first = to.next().flatten();
        let mut widened = first.filter(|&t| {
            to.all(|r| r == Some(t))
                && matches!(
                    (f.ty(x).elem, t),
                    (ElemType::F32, ElemType::F64)
                        | (ElemType::I32 | ElemType::Bool, ElemType::I64)
                )
        });
        // Neighbouring outputs share most of their reads; each copy of the formula
        // is code, so wide windows take fewer rows each. The tile must fit the
        // device's workgroup memory: staged unwidened, or fewer rows, if not.
        let x_elem = f.ty(x).elem;
        let fits = |rows_each: u32, t: ElemType| {
            let items = (tile_rows(rows_each) + lo[0] + hi[0]) * (TILE_COLS + lo[1] + hi[1]);
            let bytes =
                u64::from(items.div_ceil(INVOCATIONS) * INVOCATIONS) * t.size().max(4) as u64;
            bytes <= u64::from(self.opts.max_shared_bytes)
        };
        // Six rows for windows five rows high or more: on the H200, a 5×5 sum
        // of f32 8192² at 4 / 6 / 8 rows took 280.9 / 256.0 / 257.1 µs (i32 256.9
        // / 256.1 / 269.9); a 3×3 sum 204.9 / 215.4 / 219.2 (session 33).
        let mut rows_each = match self.opts.stencil_rows {
            0 if windows.len() <= 25 && lo[0] + hi[0] >= 4 => 6,
            0 if windows.len() <= 25 => 4,
            0 => 2,
            r => r,
        };
        if !self.opts.stencil_widen || !fits(rows_each, widened.unwrap_or(x_elem)) {
            widened = None;
        }
        while !fits(rows_each, x_elem) {
            if rows_each == 1 {
                return None;
            }
            rows_each /= 2;
        }
        Some(Stage {
            x,
            fill,
            lo,
            hi,
            rows_each,
            widened,
        })
    }
}

/// `e` with each whole-window fold in it as a `KExpr::WindowFold`: a tree of one
/// associative and commutative function that raises no error (`+` where it cannot
/// overflow, `⌈ ⌊ ∨ ∧`), whose leaves are the staged reads of a rectangle of at
/// least 2×2 offsets, each once. Float sums are reassociated (rows first, each as a
/// tree of pairs): within the rounding of the tile's type, as every device fold is.
pub(super) fn take_window_folds(e: KExpr) -> KExpr {
    if let Some(fold) = window_fold(&e) {
        return fold;
    }
    e.map_operands(take_window_folds)
}

/// `e` as a `KExpr::WindowFold`, where it is one whole (see [`take_window_folds`]).
fn window_fold(e: &KExpr) -> Option<KExpr> {
    let &KExpr::Binary {
        op,
        elem,
        error_bit: None,
        ..
    } = e
    else {
        return None;
    };
    if !matches!(
        op,
        BinOp::Add | BinOp::Max | BinOp::Min | BinOp::Or | BinOp::And
    ) {
        return None;
    }
    let mut at = vec![];
    // The tile's type, where each read converts from it exactly (f32 summed in f64
    // in a tile not widened, as beside a `⌊/` of the same window).
    let mut read = None;
    let mut todo = vec![e];
    while let Some(k) = todo.pop() {
        let leaf = k.widened().unwrap_or(k);
        match (k, leaf) {
            (
                KExpr::Binary {
                    op: o,
                    elem: t,
                    lhs,
                    rhs,
                    error_bit: None,
                },
                _,
            ) if *o == op && *t == elem => todo.extend([&**lhs, &**rhs]),
            (_, KExpr::Staged { dy, dx, elem: t })
                if k.elem() == elem && *read.get_or_insert(*t) == *t =>
            {
                at.push((*dy, *dx))
            }
            _ => return None,
        }
    }
    let read = read?;
    let span = |f: fn(&(i32, i32)) -> i32| {
        let lo = at.iter().map(f).min()?;
        let hi = at.iter().map(f).max()?;
        Some([lo, hi])
    };
    let (rows, cols) = (span(|p| p.0)?, span(|p| p.1)?);
    let (h, w) = (rows[1] - rows[0] + 1, cols[1] - cols[0] + 1);
    let n = at.len();
    at.sort_unstable();
    at.dedup();
    (h >= 2 && w >= 2 && at.len() == n && n == (h * w) as usize).then_some(KExpr::WindowFold {
        op,
        elem,
        read,
        rows,
        cols,
    })
}
