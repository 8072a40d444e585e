//! The expressions a kernel computes: index arithmetic ([`IExpr`]) and values per
//! element ([`KExpr`]).

use super::*;

/// Index arithmetic inside a kernel: u32, wrapping (a coordinate below zero becomes
/// huge, so one unsigned comparison checks both ends of a range).
#[derive(Clone, Debug, PartialEq)]
pub enum IExpr {
    /// The element the kernel computes, in ravel order (maps, and the argument of
    /// vector reductions and scans).
    Index,
    /// Axis kernels: the row (the combined index of every axis but the folded one).
    Row,
    /// Axis kernels: the position along the folded axis.
    Pos,
    Const(u32),
    /// A length known at run time: the kernel's extra push constant of this slot.
    Push(u32),
    Add(Box<IExpr>, Box<IExpr>),
    Sub(Box<IExpr>, Box<IExpr>),
    Mul(Box<IExpr>, Box<IExpr>),
    Div(Box<IExpr>, Box<IExpr>),
    Rem(Box<IExpr>, Box<IExpr>),
    /// An integer computed per element (an index read from an array), as u32;
    /// negative and too large values become `u32::MAX`, outside every array.
    Data(Box<KExpr>),
}

impl IExpr {
    /// Whether evaluating it may set a status bit.
    pub fn may_fail(&self) -> bool {
        match self {
            IExpr::Data(k) => k.may_fail(),
            IExpr::Add(a, b)
            | IExpr::Sub(a, b)
            | IExpr::Mul(a, b)
            | IExpr::Div(a, b)
            | IExpr::Rem(a, b) => a.may_fail() || b.may_fail(),
            _ => false,
        }
    }

    pub fn plus(a: IExpr, b: IExpr) -> IExpr {
        match (a, b) {
            (IExpr::Const(0), x) | (x, IExpr::Const(0)) => x,
            (IExpr::Const(x), IExpr::Const(y)) => IExpr::Const(x.wrapping_add(y)),
            (a, b) => IExpr::Add(Box::new(a), Box::new(b)),
        }
    }

    pub fn minus(a: IExpr, b: IExpr) -> IExpr {
        match (a, b) {
            (x, IExpr::Const(0)) => x,
            (IExpr::Const(x), IExpr::Const(y)) => IExpr::Const(x.wrapping_sub(y)),
            (a, b) => IExpr::Sub(Box::new(a), Box::new(b)),
        }
    }

    pub fn times(a: IExpr, b: IExpr) -> IExpr {
        match (a, b) {
            (IExpr::Const(0), _) | (_, IExpr::Const(0)) => IExpr::Const(0),
            (IExpr::Const(1), x) | (x, IExpr::Const(1)) => x,
            (IExpr::Const(x), IExpr::Const(y)) => IExpr::Const(x.wrapping_mul(y)),
            (a, b) => IExpr::Mul(Box::new(a), Box::new(b)),
        }
    }

    pub fn quot(a: IExpr, b: IExpr) -> IExpr {
        match (a, b) {
            (x, IExpr::Const(1)) => x,
            (IExpr::Const(0), _) => IExpr::Const(0),
            (IExpr::Const(x), IExpr::Const(y)) if y != 0 => IExpr::Const(x / y),
            (a, b) => IExpr::Div(Box::new(a), Box::new(b)),
        }
    }

    pub fn modulo(a: IExpr, b: IExpr) -> IExpr {
        match (a, b) {
            (_, IExpr::Const(1)) | (IExpr::Const(0), _) => IExpr::Const(0),
            (IExpr::Const(x), IExpr::Const(y)) if y != 0 => IExpr::Const(x % y),
            (a, b) => IExpr::Rem(Box::new(a), Box::new(b)),
        }
    }
}

/// An expression computed per element inside a kernel.
#[derive(Clone, Debug, PartialEq)]
pub enum KExpr {
    /// Element `index` of a binding.
    Load {
        binding: u32,
        elem: ElemType,
        index: IExpr,
    },
    /// Operand `k` (0: ⍺, 1: ⍵) of a dfn fold's step.
    Operand {
        k: u8,
        elem: ElemType,
    },
    /// `index + origin` as i32: a fused `⍳`.
    Iota {
        index: IExpr,
        origin: i32,
    },
    /// `then` when every `a < b` (unsigned) holds, else `els`; only the chosen side is
    /// evaluated (so an index outside an argument is never loaded).
    Select {
        when: Vec<(IExpr, IExpr)>,
        then: Box<KExpr>,
        els: Box<KExpr>,
    },
    /// `then` where `cond` (a boolean) is 1, else `els`; only the chosen side is
    /// evaluated (a dfn guard).
    If {
        cond: Box<KExpr>,
        then: Box<KExpr>,
        els: Box<KExpr>,
    },
    Const(Scalar),
    /// Raises error `bit` and gives 0 of type `elem` (an index out of range).
    Fail {
        elem: ElemType,
        bit: u32,
    },
    Cast {
        to: ElemType,
        arg: Box<KExpr>,
    },
    /// `error_bit` is set for functions that can raise an error (`÷x`, `⍟x`, …).
    Unary {
        op: UnOp,
        elem: ElemType,
        arg: Box<KExpr>,
        error_bit: Option<u32>,
    },
    /// `error_bit` is set for functions that can raise an error (`÷`, overflow, …).
    Binary {
        op: BinOp,
        elem: ElemType,
        lhs: Box<KExpr>,
        rhs: Box<KExpr>,
        error_bit: Option<u32>,
    },
    /// Item `index` of a radix sort's keys in sorted order, from the words of its
    /// last pass (`KernelKind::RadixScatter`: one i32 a key, two for 8-byte `elem`,
    /// low first; inverted where `down`), as the `elem` it was sorted as. A float's
    /// -0 comes back as 0, which compares and computes alike.
    SortedKey {
        binding: u32,
        elem: ElemType,
        down: bool,
        index: IExpr,
    },
    /// The staged matrix of a `KernelKind::Stencil` at the output's place plus
    /// (`dy`, `dx`), from workgroup memory (its fill outside the matrix).
    Staged {
        dy: i32,
        dx: i32,
        elem: ElemType,
    },
    /// `op` (associative and commutative, no error to raise: `+` where it cannot
    /// overflow, `⌈ ⌊ ∨ ∧`) over the staged matrix at the output's place plus every
    /// offset of rows `rows[0]..=rows[1]` and columns `cols[0]..=cols[1]`, each
    /// read as `read` (the tile's type) and folded in `elem` (`read` or its exact
    /// widening: f32 sums in f64). The stencil kernel folds each staged row it reads
    /// over those columns once, and each output folds its window's rows of those
    /// (`Planner::take_window_folds`).
    WindowFold {
        op: BinOp,
        elem: ElemType,
        read: ElemType,
        rows: [i32; 2],
        cols: [i32; 2],
    },
    /// `?n` for the element at `index` of a roll (see `Inst::Roll`): `state` reads
    /// the seed's and the next draw's low and high words.
    Roll {
        n: Box<KExpr>,
        index: IExpr,
        state: Vec<KExpr>,
        elem: ElemType,
        origin: i32,
        offset: u64,
        /// Error bits for a negative item (DOMAIN ERROR) and for 0 or an item beyond
        /// 32 bits (the reference computes those).
        checks: Option<(u32, u32)>,
    },
}

impl KExpr {
    /// `self` with `f` applied to each operand of a `Binary`, `Unary` or `Cast` and to
    /// the sides (and condition) of a `Select` or `If`; other kinds as they are.
    pub fn map_operands(self, mut f: impl FnMut(KExpr) -> KExpr) -> KExpr {
        let mut go = |b: Box<KExpr>| Box::new(f(*b));
        match self {
            KExpr::Binary {
                op,
                elem,
                lhs,
                rhs,
                error_bit,
            } => KExpr::Binary {
                op,
                elem,
                lhs: go(lhs),
                rhs: go(rhs),
                error_bit,
            },
            KExpr::Unary {
                op,
                elem,
                arg,
                error_bit,
            } => KExpr::Unary {
                op,
                elem,
                arg: go(arg),
                error_bit,
            },
            KExpr::Cast { to, arg } => KExpr::Cast { to, arg: go(arg) },
            KExpr::Select { when, then, els } => KExpr::Select {
                when,
                then: go(then),
                els: go(els),
            },
            KExpr::If { cond, then, els } => KExpr::If {
                cond: go(cond),
                then: go(then),
                els: go(els),
            },
            other => other,
        }
    }

    /// `self` with each read of element `Index` of `binding` as `elem` replaced by
    /// `Operand` `k` (a value the kernel already holds). Reads inside index
    /// expressions are left as they are.
    pub fn with_operand_for(self, binding: u32, elem: ElemType, k: u8) -> KExpr {
        match self {
            KExpr::Load {
                binding: b,
                elem: t,
                index: IExpr::Index,
            } if b == binding && t == elem => KExpr::Operand { k, elem },
            e => e.map_operands(|e| e.with_operand_for(binding, elem, k)),
        }
    }

    /// The 4-byte value it only widens exactly (f32 to f64, i32 to i64): a scan may
    /// hold that value in its registers and widen it where it is folded.
    pub fn widened(&self) -> Option<&KExpr> {
        match self {
            KExpr::Cast {
                to: ElemType::F64,
                arg,
            } if arg.elem() == ElemType::F32 => Some(arg),
            KExpr::Cast {
                to: ElemType::I64,
                arg,
            } if arg.elem() == ElemType::I32 => Some(arg),
            _ => None,
        }
    }

    pub fn elem(&self) -> ElemType {
        match self {
            KExpr::Load { elem, .. }
            | KExpr::Unary { elem, .. }
            | KExpr::Binary { elem, .. }
            | KExpr::Roll { elem, .. }
            | KExpr::SortedKey { elem, .. }
            | KExpr::Staged { elem, .. }
            | KExpr::WindowFold { elem, .. } => *elem,
            KExpr::Cast { to, .. } => *to,
            KExpr::Select { then, .. } | KExpr::If { then, .. } => then.elem(),
            KExpr::Fail { elem, .. } => *elem,
            KExpr::Iota { .. } => ElemType::I32,
            KExpr::Const(s) => s.elem_type(),
            KExpr::Operand { elem, .. } => *elem,
        }
    }

    /// The distinct `KExpr::WindowFold`s in it (outside index expressions, where
    /// the planner never puts one).
    pub fn window_folds(&self) -> Vec<KExpr> {
        let mut out: Vec<KExpr> = vec![];
        let mut todo = vec![self];
        while let Some(e) = todo.pop() {
            match e {
                KExpr::WindowFold { .. } if !out.contains(e) => out.push(e.clone()),
                KExpr::Binary { lhs, rhs, .. } => todo.extend([&**lhs, &**rhs]),
                KExpr::Unary { arg, .. } | KExpr::Cast { arg, .. } => todo.push(arg),
                KExpr::Select { then, els, .. } => todo.extend([&**then, &**els]),
                KExpr::If { cond, then, els } => todo.extend([&**cond, &**then, &**els]),
                _ => {}
            }
        }
        out
    }

    /// Whether it only reads and compares: loads, constants and indices, their
    /// conversions, comparisons and boolean `∧ ∨` of those, with no error to
    /// raise. A compaction fuses only such masks and values (`Planner::compress`).
    pub fn reads_and_compares(&self) -> bool {
        match self {
            KExpr::Load { index, .. } | KExpr::Iota { index, .. } => !index.may_fail(),
            KExpr::Const(_) => true,
            KExpr::Cast { arg, .. } => arg.reads_and_compares(),
            KExpr::Binary {
                op,
                elem,
                lhs,
                rhs,
                error_bit: None,
            } if op.is_comparison()
                || (matches!(op, BinOp::And | BinOp::Or) && *elem == ElemType::Bool) =>
            {
                lhs.reads_and_compares() && rhs.reads_and_compares()
            }
            _ => false,
        }
    }

    /// Whether evaluating it may set a status bit.
    pub fn may_fail(&self) -> bool {
        match self {
            KExpr::Binary {
                lhs,
                rhs,
                error_bit,
                ..
            } => error_bit.is_some() || lhs.may_fail() || rhs.may_fail(),
            KExpr::Unary { arg, error_bit, .. } => error_bit.is_some() || arg.may_fail(),
            KExpr::Cast { arg, .. } => arg.may_fail(),
            KExpr::Select {
                when, then, els, ..
            } => {
                then.may_fail()
                    || els.may_fail()
                    || when.iter().any(|(a, b)| a.may_fail() || b.may_fail())
            }
            KExpr::If { cond, then, els } => cond.may_fail() || then.may_fail() || els.may_fail(),
            KExpr::Roll { n, checks, .. } => checks.is_some() || n.may_fail(),
            KExpr::Fail { .. } => true,
            // An index computed from data (a rotation amount, an indexing vector) may
            // fail too.
            KExpr::Load { index, .. }
            | KExpr::Iota { index, .. }
            | KExpr::SortedKey { index, .. } => index.may_fail(),
            _ => false,
        }
    }
}

/// Building a value's expression inside the kernel that reads it.
impl Planner<'_> {
    /// The fused expression computing element `idx` (ravel order) of `v` inside a
    /// kernel.
    pub(super) fn expr(&mut self, v: Value, idx: &IExpr, kb: &mut KernelBindings) -> KExpr {
        let f = self.v.func;
        let ty = f.ty(v);
        let zero = IExpr::Const(0);
        // A singleton operand is extended: every element reads its only one.
        let idx = if ty.is_singleton() { &zero } else { idx };
        // The staged matrix itself (the window's centre) from the tile too, before
        // its buffer: a whole-window fold then sees all its reads as staged.
        if let Some(centre) = self.staged_centre(v) {
            return centre;
        }
        if let Some(b) = self.buffer_of[v.index()] {
            let binding = kb.bind(b, ty.elem, false);
            return KExpr::Load {
                binding,
                elem: ty.elem,
                index: idx.clone(),
            };
        }
        if let Some(staged) = self.staged_read(v) {
            return staged;
        }
        match f.inst(v) {
            Inst::Const(a) => KExpr::Const(a.data.get(0)),
            Inst::Iota { origin, .. } => KExpr::Iota {
                index: idx.clone(),
                origin: *origin,
            },
            Inst::Length { of, axis } => KExpr::Iota {
                index: kb.product(&[f.ty(*of).shape[*axis]]),
                origin: 0,
            },
            Inst::Cast(x) => KExpr::Cast {
                to: ty.elem,
                arg: Box::new(self.expr(*x, idx, kb)),
            },
            // Error bits are numbered in evaluation order (operands first, the right
            // one before the left), and the lowest bit set is reported: the error
            // APL would meet first.
            Inst::Unary { op, arg } => {
                let arg = Box::new(self.expr(*arg, idx, kb));
                let error_bit = op
                    .device_error(arg.elem(), ty.elem)
                    .map(|m| self.error_bit(ErrorClass::Domain, m, f.span(v)));
                KExpr::Unary {
                    op: *op,
                    elem: ty.elem,
                    arg,
                    error_bit,
                }
            }
            Inst::Binary { op, lhs: l, rhs: r } => {
                let rhs = Box::new(self.expr(*r, idx, kb));
                let lhs = Box::new(self.expr(*l, idx, kb));
                let error_bit = op
                    .device_error(lhs.elem())
                    .filter(|_| !integer_fits(f, *op, *l, *r, self.opts.float64))
                    .map(|m| self.error_bit(ErrorClass::Domain, m, f.span(v)));
                KExpr::Binary {
                    op: *op,
                    elem: ty.elem,
                    lhs,
                    rhs,
                    error_bit,
                }
            }
            Inst::Select { cond, then, els } => KExpr::If {
                cond: Box::new(self.expr(*cond, idx, kb)),
                then: Box::new(self.expr(*then, idx, kb)),
                els: Box::new(self.expr(*els, idx, kb)),
            },
            Inst::Gather { arg, map } => self.gather(v, *arg, map, idx, kb),
            Inst::Roll {
                arg,
                state,
                origin,
                offset,
                checked,
            } => KExpr::Roll {
                checks: checked.then(|| {
                    (
                        self.error_bit(
                            ErrorClass::Domain,
                            "? needs non-negative integers",
                            f.span(v),
                        ),
                        self.error_bit(
                            ErrorClass::Unsupported,
                            "? of 0 (a float) or of a number beyond 32 bits computed on the device",
                            f.span(v),
                        ),
                    )
                }),
                n: Box::new(self.expr(*arg, idx, kb)),
                index: idx.clone(),
                state: (0..4)
                    .map(|k| self.expr(*state, &IExpr::Const(k), kb))
                    .collect(),
                elem: ty.elem,
                origin: *origin,
                offset: *offset,
            },
            Inst::Rotate { arg, by, axis } => {
                // Coordinate c along the axis reads (c + (n|amount)) mod n, the amount
                // that of c's line.
                let shape = ty.shape.clone();
                let mut c = kb.coords(idx, &shape);
                let n = shape[*axis];
                let mut line = c.clone();
                line.remove(*axis);
                let mut lines = shape.clone();
                lines.remove(*axis);
                let li = kb.linear(&line, &lines);
                let amount = self.expr(*by, &li, kb);
                let Dim::Known(len) = n else {
                    // (Lowering only makes Rotate for known lengths.)
                    return self.expr(*arg, idx, kb);
                };
                // In the amount's own integer type (booleans as i32).
                let t = amount.elem().join(ElemType::I32);
                let amount = if amount.elem() == t {
                    amount
                } else {
                    KExpr::Cast {
                        to: t,
                        arg: Box::new(amount),
                    }
                };
                let shift = KExpr::Binary {
                    op: BinOp::Residue,
                    elem: t,
                    lhs: Box::new(KExpr::Const(Scalar::I64(len.max(1) as i64).cast(t))),
                    rhs: Box::new(amount),
                    error_bit: None,
                };
                let d = kb.dim(n);
                c[*axis] = IExpr::modulo(
                    IExpr::plus(c[*axis].clone(), IExpr::Data(Box::new(shift))),
                    d,
                );
                let i = kb.linear(&c, &shape);
                self.expr(*arg, &i, kb)
            }
            Inst::Index { arg, axes } => {
                // `keys[⍋keys]`: the sort's own keys, in order.
                if let [Some(order)] = axes.as_slice() {
                    if let Some(s) = self.sorted_keys[order.index()].filter(|s| s.keys == *arg) {
                        let key = s.read(kb, idx.clone());
                        return if s.elem == ty.elem {
                            key
                        } else {
                            KExpr::Cast {
                                to: ty.elem,
                                arg: Box::new(key),
                            }
                        };
                    }
                }
                let c = kb.coords(idx, &ty.shape.clone());
                let at = f.ty(*arg).shape.clone();
                let mut pos = 0;
                let mut ci = vec![];
                let mut when = vec![];
                for (a, ix) in axes.iter().enumerate() {
                    match ix {
                        None => {
                            ci.push(c[pos].clone());
                            pos += 1;
                        }
                        Some(iv) => {
                            let ishape = f.ty(*iv).shape.clone();
                            let r = ishape.len();
                            let lin = kb.linear(&c[pos..pos + r], &ishape);
                            let val = self.expr(*iv, &lin, kb);
                            // ⎕IO=1: index 0 wraps to u32::MAX, out of range.
                            let at_a = IExpr::minus(IExpr::Data(Box::new(val)), IExpr::Const(1));
                            when.push((at_a.clone(), kb.dim(at[a])));
                            ci.push(at_a);
                            pos += r;
                        }
                    }
                }
                let i = kb.linear(&ci, &at);
                let then = self.expr(*arg, &i, kb);
                if when.is_empty() {
                    then
                } else {
                    let bit = self.error_bit(ErrorClass::Index, "index out of range", f.span(v));
                    KExpr::Select {
                        when,
                        then: Box::new(then),
                        els: Box::new(KExpr::Fail { elem: ty.elem, bit }),
                    }
                }
            }
            // Along the first axis the left argument is the first part of the result
            // in ravel order and the right one the rest: the index itself, and the
            // index less the left's size (an index expression that stays as small as
            // it was, where rebuilding it from coordinates would double it at each
            // catenation of a left-deep chain: `((a⍪b)⍪c)⍪d`, `⊤`'s digits).
            Inst::Catenate { lhs, rhs, axis: 0 } => {
                let out = ty.shape.clone();
                let la = kb.dim(f.ty(*lhs).shape[0]);
                let rest = kb.product(&out[1..]);
                let size = IExpr::times(la, rest);
                let then = self.expr(*lhs, idx, kb);
                let els = self.expr(*rhs, &IExpr::minus(idx.clone(), size.clone()), kb);
                KExpr::Select {
                    when: vec![(idx.clone(), size)],
                    then: Box::new(then),
                    els: Box::new(els),
                }
            }
            Inst::Catenate { lhs, rhs, axis } => {
                let out = ty.shape.clone();
                let c = kb.coords(idx, &out);
                let la = kb.dim(f.ty(*lhs).shape[*axis]);
                let li = kb.linear(&c, &f.ty(*lhs).shape.clone());
                let mut rc = c.clone();
                rc[*axis] = IExpr::minus(c[*axis].clone(), la.clone());
                let ri = kb.linear(&rc, &f.ty(*rhs).shape.clone());
                let then = self.expr(*lhs, &li, kb);
                let els = self.expr(*rhs, &ri, kb);
                KExpr::Select {
                    when: vec![(c[*axis].clone(), la)],
                    then: Box::new(then),
                    els: Box::new(els),
                }
            }
            // Params, non-scalar consts, reductions and scans are always materialized
            // before their users (instructions are planned in order).
            other => unreachable_materialized(other),
        }
    }

    /// Inside a stencil kernel (`Planner::staged`), the staged matrix itself (or its
    /// conversion to the type the tile holds) as a read of the tile at offset 0 0:
    /// every path to it is elementwise (`Planner::stage_of`), so it is read at the
    /// output's own place. A tile of converted items gives the matrix's own type
    /// back exactly (f64 of f32, i64 of i32).
    fn staged_centre(&self, v: Value) -> Option<KExpr> {
        let f = self.v.func;
        let (x, widened) = self.staged?;
        let centre = |elem| KExpr::Staged { dy: 0, dx: 0, elem };
        if v == x {
            let elem = f.ty(x).elem;
            return Some(match widened {
                Some(t) => KExpr::Cast {
                    to: elem,
                    arg: Box::new(centre(t)),
                },
                None => centre(elem),
            });
        }
        match f.inst(v) {
            Inst::Cast(w) if *w == x && widened == Some(f.ty(v).elem) => Some(centre(f.ty(v).elem)),
            _ => None,
        }
    }

    /// Inside a stencil kernel (`Planner::staged`), a window of the staged matrix
    /// (or its conversion to the type the tile holds) as a read of the tile.
    fn staged_read(&self, v: Value) -> Option<KExpr> {
        let f = self.v.func;
        let (x, widened) = self.staged?;
        let elem = f.ty(v).elem;
        let w = match f.inst(v) {
            Inst::Cast(w) if widened == Some(elem) => *w,
            _ if widened.is_none() => v,
            _ => return None,
        };
        match f.inst(w) {
            Inst::Gather {
                arg,
                map: Gather::Window { start, .. },
            } if *arg == x => Some(KExpr::Staged {
                dy: start[0] as i32,
                dx: start[1] as i32,
                elem,
            }),
            _ => None,
        }
    }

    /// Element `idx` of a structural function's result, read from its argument.
    pub(super) fn gather(
        &mut self,
        v: Value,
        arg: Value,
        map: &Gather,
        idx: &IExpr,
        kb: &mut KernelBindings,
    ) -> KExpr {
        let f = self.v.func;
        let out = f.ty(v).shape.clone();
        let inp = f.ty(arg).shape.clone();
        match map {
            Gather::Cycle { fill } => {
                let n = kb.product(&inp);
                match known(&inp) {
                    Some(0) => KExpr::Const(*fill),
                    Some(_) => self.expr(arg, &IExpr::modulo(idx.clone(), n), kb),
                    None => {
                        let then = self.expr(arg, &IExpr::modulo(idx.clone(), n.clone()), kb);
                        KExpr::Select {
                            when: vec![(IExpr::Const(0), n)],
                            then: Box::new(then),
                            els: Box::new(KExpr::Const(*fill)),
                        }
                    }
                }
            }
            Gather::Reverse(axis) => {
                let mut c = kb.coords(idx, &out);
                let d = kb.dim(inp[*axis]);
                c[*axis] = IExpr::minus(IExpr::minus(d, IExpr::Const(1)), c[*axis].clone());
                let i = kb.linear(&c, &inp);
                self.expr(arg, &i, kb)
            }
            Gather::Rotate { axis, by } => {
                let mut c = kb.coords(idx, &out);
                let d = kb.dim(inp[*axis]);
                let shift = match inp[*axis] {
                    Dim::Known(n) if n > 0 => IExpr::Const(by.rem_euclid(n as i64) as u32),
                    _ if *by >= 0 => IExpr::modulo(IExpr::Const(*by as u32), d.clone()),
                    _ => IExpr::minus(
                        d.clone(),
                        IExpr::modulo(IExpr::Const(by.unsigned_abs() as u32), d.clone()),
                    ),
                };
                c[*axis] = IExpr::modulo(IExpr::plus(c[*axis].clone(), shift), d);
                let i = kb.linear(&c, &inp);
                self.expr(arg, &i, kb)
            }
            Gather::Axes(axes) => {
                let c = kb.coords(idx, &out);
                let ci: Vec<IExpr> = axes.iter().map(|&a| c[a].clone()).collect();
                let i = kb.linear(&ci, &inp);
                self.expr(arg, &i, kb)
            }
            Gather::Repeat { axis, times } => {
                let mut c = kb.coords(idx, &out);
                c[*axis] = IExpr::quot(c[*axis].clone(), IExpr::Const(*times));
                let i = kb.linear(&c, &inp);
                self.expr(arg, &i, kb)
            }
            Gather::Windows { axis, reverse } => {
                let c = kb.coords(idx, &out);
                let a = *axis;
                let k = if *reverse {
                    let w = kb.dim(out[a + 1]);
                    IExpr::minus(IExpr::minus(w, IExpr::Const(1)), c[a + 1].clone())
                } else {
                    c[a + 1].clone()
                };
                let mut ci: Vec<IExpr> = c[..a].to_vec();
                ci.push(IExpr::plus(c[a].clone(), k));
                ci.extend(c[a + 2..].iter().cloned());
                let i = kb.linear(&ci, &inp);
                self.expr(arg, &i, kb)
            }
            Gather::Sample { start, step, fill } => {
                let c = kb.coords(idx, &out);
                let mut when = vec![];
                let mut ci = vec![];
                for (a, (&st, &m)) in start.iter().zip(step).enumerate() {
                    // c×m+st as u32 arithmetic: a negative coordinate wraps past
                    // every length and reads the fill.
                    let x = IExpr::plus(
                        IExpr::times(c[a].clone(), IExpr::Const(m)),
                        IExpr::Const(st as u32),
                    );
                    let d = kb.dim(inp[a]);
                    when.push((x.clone(), d));
                    ci.push(x);
                }
                let i = kb.linear(&ci, &inp);
                let then = self.expr(arg, &i, kb);
                KExpr::Select {
                    when,
                    then: Box::new(then),
                    els: Box::new(KExpr::Const(*fill)),
                }
            }
            Gather::Window { start, fill } => {
                let c = kb.coords(idx, &out);
                let mut when = vec![];
                let mut ci = vec![];
                for (a, st) in start.iter().enumerate() {
                    let x = IExpr::plus(c[a].clone(), IExpr::Const(*st as u32));
                    let inside = matches!(
                        (out[a], inp[a]),
                        (Dim::Known(o), Dim::Known(n)) if *st >= 0 && *st as u64 + o <= n
                    );
                    if !inside {
                        let d = kb.dim(inp[a]);
                        when.push((x.clone(), d));
                    }
                    ci.push(x);
                }
                let i = kb.linear(&ci, &inp);
                let then = self.expr(arg, &i, kb);
                if when.is_empty() {
                    then
                } else {
                    KExpr::Select {
                        when,
                        then: Box::new(then),
                        els: Box::new(KExpr::Const(*fill)),
                    }
                }
            }
        }
    }
}
