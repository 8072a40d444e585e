//! The abstract syntax tree of arrc. Every node carries the byte span of the text it
//! came from, so that every later stage can point its errors at the source.

pub use crate::lexer::{Op1, Prim};

/// A byte range in the source text.
pub type Span = std::ops::Range<usize>;

/// A whole program or dfn body: statements in order; the last value is the result.
#[derive(Clone, Debug, Default, PartialEq, Hash)]
pub struct Program {
    pub stmts: Vec<Stmt>,
    /// For the body of an operator of the user's: the body read again with an array
    /// as its left and/or right operand (`⍺⍺ ⍵⍵` as array names), where it reads
    /// so (`{⍺⍺×⍵}` is `⍺⍺ (×⍵)` for a function operand, `⍺⍺×⍵` for an array).
    pub operand_variants: Vec<OperandVariant>,
}

/// An operator body read with `⍺⍺` (`left`) and/or `⍵⍵` (`right`) as arrays.
#[derive(Clone, Debug, PartialEq, Hash)]
pub struct OperandVariant {
    pub left: bool,
    pub right: bool,
    pub body: Program,
}

#[derive(Clone, Debug, PartialEq, Hash)]
pub enum Stmt {
    /// An expression; its value is the statement's value.
    Expr(Expr),
    /// `cond : value` inside a dfn: if `cond` is 1, the dfn returns `value`.
    Guard { cond: Expr, value: Expr },
    /// A function on its own, such as a program that is just `{+/⍵×⍵}`.
    Func(Func),
    /// `name ← function`.
    FnDef {
        name: String,
        name_span: Span,
        func: Func,
    },
}

#[derive(Clone, Debug, PartialEq, Hash)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Hash)]
pub enum ExprKind {
    /// A numeric literal, with APL's high minus already applied.
    Number(crate::lexer::Num),
    /// A character literal: its characters (quotes removed, `''` made one quote).
    Str(String),
    /// `⍬`, the empty numeric vector.
    Zilde,
    Name(String),
    /// A system name such as `⎕IO`.
    SysName(String),
    Alpha,
    Omega,
    /// Juxtaposed atoms: `1 2 3`, `x 4 (2+3)`.
    Strand(Vec<Expr>),
    Monadic {
        func: Func,
        arg: Box<Expr>,
    },
    Dyadic {
        func: Func,
        left: Box<Expr>,
        right: Box<Expr>,
    },
    /// `name ← value` (also `⍺ ← default` in a dfn, with name `⍺`).
    Assign {
        name: String,
        name_span: Span,
        value: Box<Expr>,
    },
    /// `x[i]`, `m[i;j]`, `m[;j]`: one entry per axis, `None` for an elided axis.
    Index {
        array: Box<Expr>,
        axes: Vec<Option<Expr>>,
    },
    /// The other forms of assignment, each a whole statement: `x f←v` (modified),
    /// `(a b)←v` / `a b←v` (strand), `x[i]←v` and `x[i] f←v` (indexed). A name
    /// modified by `x f←v` or `x[i]←v` is changed where it is found (in a dfn, the
    /// enclosing dfn's or the workspace's when it is not local). The value is `v`.
    AssignTo {
        target: Target,
        func: Option<Func>,
        value: Box<Expr>,
    },
}

/// What [`ExprKind::AssignTo`] assigns.
#[derive(Clone, Debug, PartialEq, Hash)]
pub enum Target {
    /// One name (`x f←v`) or several (`(a b)←v`), with their spans.
    Names(Vec<(String, Span)>),
    /// `x[i;j]`: the name and one entry per axis.
    Indexed {
        name: String,
        name_span: Span,
        axes: Vec<Option<Expr>>,
    },
    /// `(2↑x)←v`: the items of `name` (the rightmost name of `expr`) that the
    /// selection expression `expr` picks.
    Selective {
        name: String,
        name_span: Span,
        expr: Box<Expr>,
    },
}

impl Target {
    /// The names it assigns.
    pub fn names(&self) -> Vec<&str> {
        match self {
            Target::Names(v) => v.iter().map(|(n, _)| n.as_str()).collect(),
            Target::Indexed { name, .. } | Target::Selective { name, .. } => vec![name.as_str()],
        }
    }

    /// The expressions it evaluates (index expressions, a selection).
    pub fn exprs(&self) -> Vec<&Expr> {
        match self {
            Target::Names(_) => vec![],
            Target::Indexed { axes, .. } => axes.iter().flatten().collect(),
            Target::Selective { expr, .. } => vec![expr],
        }
    }
}

/// The name a selective assignment assigns: the rightmost name of its selection
/// expression (`(n↑x)←v` assigns `x`).
pub fn selected_name(e: &Expr) -> Option<(String, Span)> {
    let mut best: Option<(String, Span)> = None;
    let mut visit = |n: &str, s: &Span| {
        if best.as_ref().is_none_or(|(_, b)| s.start > b.start) {
            best = Some((n.to_string(), s.clone()));
        }
    };
    fn walk(e: &Expr, visit: &mut dyn FnMut(&str, &Span)) {
        if let ExprKind::Name(n) = &e.kind {
            visit(n, &e.span);
        }
        let _ = e.map_children::<()>(&mut |c| {
            walk(c, visit);
            Ok(c.clone())
        });
    }
    walk(e, &mut visit);
    best
}

#[derive(Clone, Debug, PartialEq, Hash)]
pub struct Func {
    pub kind: FuncKind,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Hash)]
pub enum FuncKind {
    Prim(Prim),
    /// A name that holds a function.
    Name(String),
    /// `∇`: the innermost dfn itself.
    SelfRef,
    Dfn(Box<Program>),
    /// A monadic operator applied to its left operand: `+/`, `f¨`, `-⍨`.
    Derived {
        op: Op1,
        operand: Box<Func>,
    },
    /// `∘.f`.
    Outer(Box<Func>),
    /// `f.g`.
    Inner(Box<Func>, Box<Func>),
    /// `f[k]`: a function applied along axis `k` (`+/[1]`, `⌽[1]`, `,[1]`).
    Axis(Box<Func>, Box<Expr>),
    /// A 2-train `(f g)`: `f g ⍵` and `f ⍺ g ⍵`.
    Atop(Box<Func>, Box<Func>),
    /// A 3-train `(f g h)`: `(f ⍵) g (h ⍵)` and `(⍺ f ⍵) g (⍺ h ⍵)`; the left tine
    /// may be an array (`(2×+)`), which stands for itself.
    Fork(Box<Tine>, Box<Func>, Box<Func>),
    /// `∘` (jot): `f∘g` compose, `A∘f` and `f∘A` bind an array to an argument.
    Jot(Box<Tine>, Box<Tine>),
    /// `f⍣n` (f applied n times) and `f⍣g` (f applied until `new g old` is 1).
    Power(Box<Func>, Box<Tine>),
    /// `f⍤k`: `f` applied to the cells of rank `k` (one to three numbers: monadic,
    /// left, right; negative for the rank below the argument's).
    Rank(Box<Func>, Box<Expr>),
    /// `f⍥g`: `f g ⍵`, and `(g ⍺) f (g ⍵)`.
    Over(Box<Func>, Box<Func>),
    /// `X@I`: the items of the argument at indices `I` (or where the function `I`
    /// gives 1) replaced by the array `X` or by the function `X` applied to them.
    At(Box<Tine>, Box<Tine>),
    /// `f⌸`: key, `f` applied to each unique major cell (of ⍺, or of ⍵ when
    /// monadic) and the cells of ⍵ (or the indices) that go with it.
    Key(Box<Func>),
    /// `f⌺s`: stencil, `f` applied to the windows of ⍵ of the sizes (and steps) `s`,
    /// with the padding counts as ⍺.
    Stencil(Box<Func>, Box<Expr>),
    /// An operator of the user's (a dfn naming `⍺⍺`, and `⍵⍵` when dyadic, or a name
    /// holding one) applied to its operands: the derived function.
    UserOp {
        op: Box<Func>,
        left: Box<Tine>,
        right: Option<Box<Tine>>,
    },
}

/// The left tine of a fork, or an operand of `∘`: a function or an array.
#[derive(Clone, Debug, PartialEq, Hash)]
pub enum Tine {
    Func(Func),
    Array(Expr),
}

impl Tine {
    /// As [`Func::any_func`], for whichever this is.
    pub fn any_func(&self, p: &mut dyn FnMut(&Func) -> bool) -> bool {
        match self {
            Tine::Func(f) => f.any_func(p),
            Tine::Array(a) => a.any_func(p),
        }
    }

    /// As [`Func::capture`], for whichever this is.
    pub fn capture<E>(
        &self,
        name: &mut dyn FnMut(&Func) -> Result<Func, E>,
        array: &mut dyn FnMut(&Expr) -> Result<Expr, E>,
    ) -> Result<Tine, E> {
        Ok(match self {
            Tine::Func(f) => Tine::Func(f.capture(name, array)?),
            Tine::Array(a) => Tine::Array(array(a)?),
        })
    }

    /// As [`Func::names`], for whichever this is.
    pub fn names(&self, out: &mut std::collections::HashSet<String>) {
        match self {
            Tine::Func(f) => f.names(out),
            Tine::Array(a) => a.names(out),
        }
    }
}

/// A train from its tines, left to right: from the right, each three make a fork
/// (whose right tine is what was built so far) and a last one left over an atop.
/// Arrays may stand only as the left tine of a fork.
/// Whether `name` is a system name: `⎕IO`, `⎕NGET`…, `⎕` and `⍞` (reading the last
/// two is input).
pub fn is_system_name(name: &str) -> bool {
    name.starts_with('⎕') || name == "⍞"
}

pub fn train(mut tines: Vec<Tine>, span: Span) -> Result<Func, (String, Span)> {
    let as_func = |t: Tine| match t {
        Tine::Func(f) => Ok(f),
        Tine::Array(a) => Err((
            "an array in a train stands only as a fork's left tine: (A g h)".to_string(),
            a.span,
        )),
    };
    let Some(last) = tines.pop() else {
        return Err(("an empty train".into(), span));
    };
    let mut acc = as_func(last)?;
    while let Some(g) = tines.pop() {
        let g = as_func(g)?;
        acc = match tines.pop() {
            Some(f) => {
                let start = match &f {
                    Tine::Func(x) => x.span.start,
                    Tine::Array(x) => x.span.start,
                };
                let end = acc.span.end;
                Func::new(
                    FuncKind::Fork(Box::new(f), Box::new(g), Box::new(acc)),
                    start..end,
                )
            }
            None => {
                let span = g.span.start..acc.span.end;
                Func::new(FuncKind::Atop(Box::new(g), Box::new(acc)), span)
            }
        };
    }
    Ok(Func { span, ..acc })
}

impl Expr {
    /// Every name written in this expression's text, at any depth (see
    /// [`Func::names`]).
    pub fn names(&self, out: &mut std::collections::HashSet<String>) {
        match &self.kind {
            ExprKind::Name(n) => {
                out.insert(n.clone());
            }
            ExprKind::Strand(items) => items.iter().for_each(|x| x.names(out)),
            ExprKind::Monadic { func, arg } => {
                func.names(out);
                arg.names(out);
            }
            ExprKind::Dyadic { func, left, right } => {
                func.names(out);
                left.names(out);
                right.names(out);
            }
            ExprKind::Assign { name, value, .. } => {
                out.insert(name.clone());
                value.names(out);
            }
            ExprKind::Index { array, axes } => {
                array.names(out);
                axes.iter().flatten().for_each(|x| x.names(out));
            }
            ExprKind::AssignTo {
                target,
                func,
                value,
            } => {
                out.extend(target.names().into_iter().map(String::from));
                target.exprs().into_iter().for_each(|x| x.names(out));
                if let Some(f) = func {
                    f.names(out);
                }
                value.names(out);
            }
            // Input (`⍞`, `⎕`) is named: reading it has an effect, as a call would.
            ExprKind::SysName(n) if n == "⍞" || n == "⎕" => {
                out.insert(n.clone());
            }
            ExprKind::Number(_)
            | ExprKind::Str(_)
            | ExprKind::Zilde
            | ExprKind::SysName(_)
            | ExprKind::Alpha
            | ExprKind::Omega => {}
        }
    }

    pub fn new(kind: ExprKind, span: Span) -> Self {
        Expr { kind, span }
    }

    /// Whether this is an assignment of any form (in a dfn, a statement that does
    /// not give the result).
    pub fn is_assignment(&self) -> bool {
        matches!(
            self.kind,
            ExprKind::Assign { .. } | ExprKind::AssignTo { .. }
        )
    }

    /// This expression with each direct sub-expression replaced by `f` of it, `f`
    /// called in APL's order of evaluation: right to left (a dyadic call's right
    /// argument before its left, a strand's last item first, an index's axes before
    /// the array). Functions and their operands are kept as they are.
    pub fn map_children<E>(&self, f: &mut dyn FnMut(&Expr) -> Result<Expr, E>) -> Result<Expr, E> {
        let kind = match &self.kind {
            ExprKind::Monadic { func, arg } => ExprKind::Monadic {
                func: func.clone(),
                arg: Box::new(f(arg)?),
            },
            ExprKind::Dyadic { func, left, right } => {
                let right = f(right)?;
                ExprKind::Dyadic {
                    func: func.clone(),
                    left: Box::new(f(left)?),
                    right: Box::new(right),
                }
            }
            ExprKind::Strand(items) => {
                let mut out = Vec::with_capacity(items.len());
                for x in items.iter().rev() {
                    out.push(f(x)?);
                }
                out.reverse();
                ExprKind::Strand(out)
            }
            ExprKind::Index { array, axes } => {
                let mut out = Vec::with_capacity(axes.len());
                for a in axes.iter().rev() {
                    out.push(match a {
                        Some(x) => Some(f(x)?),
                        None => None,
                    });
                }
                out.reverse();
                ExprKind::Index {
                    array: Box::new(f(array)?),
                    axes: out,
                }
            }
            ExprKind::Assign {
                name,
                name_span,
                value,
            } => ExprKind::Assign {
                name: name.clone(),
                name_span: name_span.clone(),
                value: Box::new(f(value)?),
            },
            ExprKind::AssignTo {
                target,
                func,
                value,
            } => {
                let value = Box::new(f(value)?);
                let target = match target {
                    Target::Names(v) => Target::Names(v.clone()),
                    Target::Indexed {
                        name,
                        name_span,
                        axes,
                    } => {
                        let mut out = Vec::with_capacity(axes.len());
                        for a in axes.iter().rev() {
                            out.push(match a {
                                Some(x) => Some(f(x)?),
                                None => None,
                            });
                        }
                        out.reverse();
                        Target::Indexed {
                            name: name.clone(),
                            name_span: name_span.clone(),
                            axes: out,
                        }
                    }
                    Target::Selective {
                        name,
                        name_span,
                        expr,
                    } => Target::Selective {
                        name: name.clone(),
                        name_span: name_span.clone(),
                        expr: Box::new(f(expr)?),
                    },
                };
                ExprKind::AssignTo {
                    target,
                    func: func.clone(),
                    value,
                }
            }
            other => other.clone(),
        };
        Ok(Expr::new(kind, self.span.clone()))
    }
}

impl Program {
    /// Whether `body` is the body of a dfn written somewhere inside this program:
    /// dfns see the names of the dfns whose text encloses them (lexical scope), so a
    /// call's enclosing frame is the innermost running dfn whose text holds the
    /// callee.
    pub fn encloses(&self, body: &Program) -> bool {
        self.any_func(&mut |f| matches!(&f.kind, FuncKind::Dfn(p) if **p == *body))
    }

    /// Whether `p` holds for some function written in this body, at any depth
    /// (`Func::any_func`).
    pub fn any_func(&self, p: &mut dyn FnMut(&Func) -> bool) -> bool {
        self.stmts.iter().any(|s| match s {
            Stmt::Expr(e) => e.any_func(p),
            Stmt::Guard { cond, value } => cond.any_func(p) || value.any_func(p),
            Stmt::Func(f) | Stmt::FnDef { func: f, .. } => f.any_func(p),
        })
    }
}

/// The frame a call of `f` (whose body is `body`) sees names through, given each
/// running frame's dfn and enclosing frame, innermost last: for `∇` (the running dfn
/// again), the caller's own enclosing frame; else the innermost frame whose dfn's text
/// holds `body` (a literal written there); else none (a function defined in the
/// workspace sees only its names).
pub fn lexical_parent(
    running: &[(Option<&Func>, Option<usize>)],
    f: &Func,
    body: &Program,
) -> Option<usize> {
    if let Some((top, parent)) = running.last() {
        if *top == Some(f) {
            return *parent;
        }
    }
    running
        .iter()
        .enumerate()
        .rev()
        .find_map(|(k, (dfn, _))| match dfn {
            Some(Func {
                kind: FuncKind::Dfn(p),
                ..
            }) if p.encloses(body) => Some(k),
            _ => None,
        })
}

impl Expr {
    /// Whether `p` holds for some function in this expression, at any depth
    /// (`Func::any_func`).
    pub fn any_func(&self, p: &mut dyn FnMut(&Func) -> bool) -> bool {
        match &self.kind {
            ExprKind::Strand(xs) => xs.iter().any(|x| x.any_func(p)),
            ExprKind::Monadic { func, arg } => func.any_func(p) || arg.any_func(p),
            ExprKind::Dyadic { func, left, right } => {
                func.any_func(p) || left.any_func(p) || right.any_func(p)
            }
            ExprKind::Assign { value, .. } => value.any_func(p),
            ExprKind::Index { array, axes } => {
                array.any_func(p) || axes.iter().flatten().any(|x| x.any_func(p))
            }
            ExprKind::AssignTo {
                target,
                func,
                value,
            } => {
                func.as_ref().is_some_and(|f| f.any_func(p))
                    || value.any_func(p)
                    || target.exprs().into_iter().any(|x| x.any_func(p))
            }
            _ => false,
        }
    }
}

impl Func {
    /// Whether `p` holds for this function or one inside it: its operands, and the
    /// functions written in a dfn's body (`p` sees a dfn before its body).
    pub fn any_func(&self, p: &mut dyn FnMut(&Func) -> bool) -> bool {
        p(self)
            || match &self.kind {
                FuncKind::Dfn(b) => b.any_func(p),
                FuncKind::Derived { operand, .. } | FuncKind::Outer(operand) => operand.any_func(p),
                FuncKind::Inner(f, g) | FuncKind::Atop(f, g) | FuncKind::Over(f, g) => {
                    f.any_func(p) || g.any_func(p)
                }
                FuncKind::Axis(f, k) | FuncKind::Rank(f, k) | FuncKind::Stencil(f, k) => {
                    f.any_func(p) || k.any_func(p)
                }
                FuncKind::Jot(f, g) | FuncKind::At(f, g) => f.any_func(p) || g.any_func(p),
                FuncKind::Power(f, g) => f.any_func(p) || g.any_func(p),
                FuncKind::Key(f) => f.any_func(p),
                FuncKind::UserOp { op, left, right } => {
                    op.any_func(p)
                        || left.any_func(p)
                        || right.as_ref().is_some_and(|r| r.any_func(p))
                }
                FuncKind::Fork(f, g, h) => f.any_func(p) || g.any_func(p) || h.any_func(p),
                _ => false,
            }
    }
}

impl FuncKind {
    /// Trains and the dyadic operators, `⌸` and operators of the user's: what the
    /// evaluators apply through their `tacit` functions.
    pub fn is_tacit(&self) -> bool {
        matches!(
            self,
            FuncKind::Atop(..)
                | FuncKind::Fork(..)
                | FuncKind::Jot(..)
                | FuncKind::Power(..)
                | FuncKind::Rank(..)
                | FuncKind::Over(..)
                | FuncKind::At(..)
                | FuncKind::UserOp { .. }
                | FuncKind::Key(..)
                | FuncKind::Stencil(..)
        )
    }
}

impl Tine {
    /// An operand written as a function that is an operator's array operand (`⍵⍵`
    /// in `{⍺⍺⍣⍵⍵⊢⍵}` called with a number, which `is_array` says), as the array.
    pub fn as_array_operand(&self, is_array: impl Fn(&str) -> bool) -> Option<Tine> {
        match self {
            Tine::Func(Func {
                kind: FuncKind::Name(n),
                span,
            }) if (n == "⍺⍺" || n == "⍵⍵") && is_array(n) => Some(Tine::Array(Expr::new(
                ExprKind::Name(n.clone()),
                span.clone(),
            ))),
            _ => None,
        }
    }
}

impl Func {
    pub fn new(kind: FuncKind, span: Span) -> Self {
        Func { kind, span }
    }

    /// This function with every name of a function in its operand tree (not inside
    /// dfn bodies) replaced by `name` of it, and every array in it (a bound `∘`
    /// operand, an axis, a rank, a count) by `array` of it: how an operator's operand
    /// is captured where it is written, before the operator's body runs elsewhere.
    pub fn capture<E>(
        &self,
        name: &mut dyn FnMut(&Func) -> Result<Func, E>,
        array: &mut dyn FnMut(&Expr) -> Result<Expr, E>,
    ) -> Result<Func, E> {
        let mut f = |g: &Func| g.capture(name, array);
        let boxed = |g: Func| Box::new(g);
        let kind = match &self.kind {
            FuncKind::Name(_) | FuncKind::SelfRef => return name(self),
            FuncKind::Prim(_) | FuncKind::Dfn(_) => return Ok(self.clone()),
            FuncKind::Derived { op, operand } => FuncKind::Derived {
                op: *op,
                operand: boxed(operand.capture(name, array)?),
            },
            FuncKind::Outer(g) => FuncKind::Outer(boxed(g.capture(name, array)?)),
            FuncKind::Inner(g, h) => {
                let g = g.capture(name, array)?;
                FuncKind::Inner(boxed(g), boxed(h.capture(name, array)?))
            }
            FuncKind::Axis(g, k) => {
                let k = array(k)?;
                FuncKind::Axis(boxed(g.capture(name, array)?), Box::new(k))
            }
            FuncKind::Atop(g, h) => {
                let g = g.capture(name, array)?;
                FuncKind::Atop(boxed(g), boxed(h.capture(name, array)?))
            }
            FuncKind::Over(g, h) => {
                let g = g.capture(name, array)?;
                FuncKind::Over(boxed(g), boxed(h.capture(name, array)?))
            }
            FuncKind::Rank(g, k) => {
                let k = array(k)?;
                FuncKind::Rank(boxed(g.capture(name, array)?), Box::new(k))
            }
            FuncKind::Stencil(g, k) => {
                let k = array(k)?;
                FuncKind::Stencil(boxed(g.capture(name, array)?), Box::new(k))
            }
            FuncKind::Key(g) => FuncKind::Key(boxed(g.capture(name, array)?)),
            FuncKind::Fork(t, g, h) => {
                let t = t.capture(name, array)?;
                let g = g.capture(name, array)?;
                FuncKind::Fork(Box::new(t), boxed(g), boxed(h.capture(name, array)?))
            }
            FuncKind::Jot(l, r) => {
                let l = l.capture(name, array)?;
                FuncKind::Jot(Box::new(l), Box::new(r.capture(name, array)?))
            }
            FuncKind::Power(g, h) => {
                let g = g.capture(name, array)?;
                FuncKind::Power(boxed(g), Box::new(h.capture(name, array)?))
            }
            FuncKind::At(l, r) => {
                let l = l.capture(name, array)?;
                FuncKind::At(Box::new(l), Box::new(r.capture(name, array)?))
            }
            FuncKind::UserOp { op, left, right } => {
                let op = f(op)?;
                let left = left.capture(name, array)?;
                let right = match right {
                    Some(r) => Some(Box::new(r.capture(name, array)?)),
                    None => None,
                };
                FuncKind::UserOp {
                    op: boxed(op),
                    left: Box::new(left),
                    right,
                }
            }
        };
        Ok(Func::new(kind, self.span.clone()))
    }

    /// The body of the operator this is, given its operands (`with_right`: two);
    /// the message of a SYNTAX ERROR when it is no operator of that many.
    pub fn operator_body(&self, with_right: bool) -> Result<&Program, String> {
        self.operator_body_for(with_right, false, false)
    }

    /// The body of this operator for operands that are arrays (`left`: `⍺⍺`,
    /// `right`: `⍵⍵`) or functions.
    pub fn operator_body_for(
        &self,
        with_right: bool,
        left: bool,
        right: bool,
    ) -> Result<&Program, String> {
        let FuncKind::Dfn(body) = &self.kind else {
            return Err("not an operator".into());
        };
        let arity = self.operator_arity().unwrap_or(1);
        if (arity == 2) != with_right {
            return Err(format!("this operator takes {arity} operand(s)"));
        }
        // (Where no variant reads, the body as read: an operand it applies as a
        // function is then an error where it is applied.)
        Ok(body
            .operand_variants
            .iter()
            .find(|v| (left || right) && v.left == left && v.right == right)
            .map_or(&**body, |v| &v.body))
    }

    /// For a dfn that is an operator, its number of operands: 2 when it names `⍵⍵`,
    /// 1 when it names only `⍺⍺`.
    pub fn operator_arity(&self) -> Option<u8> {
        let FuncKind::Dfn(body) = &self.kind else {
            return None;
        };
        // As an operand (`⍺⍺ ⍵`), or as an array in a body that reads only so.
        let mut written = std::collections::HashSet::new();
        for s in &body.stmts {
            match s {
                Stmt::Expr(e) => e.names(&mut written),
                Stmt::Guard { cond, value } => {
                    cond.names(&mut written);
                    value.names(&mut written);
                }
                Stmt::Func(f) | Stmt::FnDef { func: f, .. } => f.names(&mut written),
            }
        }
        let names = |n: &str| {
            written.contains(n)
                || body.any_func(&mut |f| matches!(&f.kind, FuncKind::Name(m) if m == n))
        };
        if names("⍵⍵") {
            Some(2)
        } else if names("⍺⍺") {
            Some(1)
        } else {
            None
        }
    }

    /// Every name written in this function's text, at any depth (arrays and
    /// functions alike; a dfn's locals too).
    pub fn names(&self, out: &mut std::collections::HashSet<String>) {
        match &self.kind {
            FuncKind::Name(n) => {
                out.insert(n.clone());
            }
            FuncKind::Dfn(body) => {
                for s in &body.stmts {
                    match s {
                        Stmt::Expr(e) => e.names(out),
                        Stmt::Guard { cond, value } => {
                            cond.names(out);
                            value.names(out);
                        }
                        Stmt::Func(f) => f.names(out),
                        Stmt::FnDef { name, func, .. } => {
                            out.insert(name.clone());
                            func.names(out);
                        }
                    }
                }
            }
            FuncKind::Derived { operand: g, .. } | FuncKind::Outer(g) => g.names(out),
            FuncKind::Inner(f, g) | FuncKind::Atop(f, g) | FuncKind::Over(f, g) => {
                f.names(out);
                g.names(out);
            }
            FuncKind::Axis(f, k) | FuncKind::Rank(f, k) | FuncKind::Stencil(f, k) => {
                f.names(out);
                k.names(out);
            }
            FuncKind::Power(f, g) => {
                f.names(out);
                g.names(out);
            }
            FuncKind::At(f, g) | FuncKind::Jot(f, g) => {
                f.names(out);
                g.names(out);
            }
            FuncKind::Key(f) => f.names(out),
            FuncKind::UserOp { op, left, right } => {
                op.names(out);
                left.names(out);
                if let Some(r) = right {
                    r.names(out);
                }
            }
            FuncKind::Fork(f, g, h) => {
                f.names(out);
                g.names(out);
                h.names(out);
            }
            FuncKind::Prim(_) | FuncKind::SelfRef => {}
        }
    }
}

/// The S-expression form of the AST used by golden tests: `(dyadic + (num 1) (num 2))`.
mod print {
    use super::*;
    use std::fmt::{self, Display, Formatter};

    impl Display for Program {
        fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
            for s in &self.stmts {
                writeln!(f, "{s}")?;
            }
            Ok(())
        }
    }

    impl Display for Stmt {
        fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
            match self {
                Stmt::Expr(e) => write!(f, "{e}"),
                Stmt::Guard { cond, value } => write!(f, "(guard {cond} {value})"),
                Stmt::FnDef { name, func, .. } => write!(f, "(fndef {name} {func})"),
                Stmt::Func(func) => write!(f, "(function {func})"),
            }
        }
    }

    impl Display for Expr {
        fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
            let s = &self.span;
            match &self.kind {
                ExprKind::Number(n) => write!(f, "(num {n})"),
                ExprKind::Str(t) => write!(f, "(str {t})"),
                ExprKind::Zilde => write!(f, "⍬"),
                ExprKind::Name(n) | ExprKind::SysName(n) => write!(f, "{n}"),
                ExprKind::Alpha => write!(f, "⍺"),
                ExprKind::Omega => write!(f, "⍵"),
                ExprKind::Strand(items) => {
                    write!(f, "(strand")?;
                    for i in items {
                        write!(f, " {i}")?;
                    }
                    write!(f, ")")
                }
                ExprKind::Monadic { func, arg } => {
                    write!(f, "(monadic@{}..{} {func} {arg})", s.start, s.end)
                }
                ExprKind::Dyadic { func, left, right } => {
                    write!(f, "(dyadic@{}..{} {func} {left} {right})", s.start, s.end)
                }
                ExprKind::Assign { name, value, .. } => write!(f, "(assign {name} {value})"),
                ExprKind::AssignTo {
                    target,
                    func,
                    value,
                } => {
                    write!(f, "(assign-to")?;
                    match target {
                        Target::Names(v) => {
                            for (n, _) in v {
                                write!(f, " {n}")?;
                            }
                        }
                        Target::Indexed { name, axes, .. } => {
                            write!(f, " (index {name}")?;
                            for a in axes {
                                match a {
                                    Some(e) => write!(f, " {e}")?,
                                    None => write!(f, " _")?,
                                }
                            }
                            write!(f, ")")?;
                        }
                        Target::Selective { expr, .. } => write!(f, " (select {expr})")?,
                    }
                    if let Some(g) = func {
                        write!(f, " {g}")?;
                    }
                    write!(f, " {value})")
                }
                ExprKind::Index { array, axes } => {
                    write!(f, "(index {array}")?;
                    for a in axes {
                        match a {
                            Some(e) => write!(f, " {e}")?,
                            None => write!(f, " _")?,
                        }
                    }
                    write!(f, ")")
                }
            }
        }
    }

    impl Display for Tine {
        fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
            match self {
                Tine::Func(x) => write!(f, "{x}"),
                Tine::Array(x) => write!(f, "{x}"),
            }
        }
    }

    impl Display for Func {
        fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
            match &self.kind {
                FuncKind::Prim(p) => write!(f, "{}", p.glyph()),
                FuncKind::Name(n) => write!(f, "{n}"),
                FuncKind::SelfRef => write!(f, "∇"),
                FuncKind::Dfn(body) => {
                    write!(f, "{{")?;
                    for (i, s) in body.stmts.iter().enumerate() {
                        if i > 0 {
                            write!(f, " ⋄ ")?;
                        }
                        write!(f, "{s}")?;
                    }
                    write!(f, "}}")
                }
                FuncKind::Derived { op, operand } => write!(f, "({}{})", operand, op.glyph()),
                FuncKind::Outer(g) => write!(f, "(∘.{g})"),
                FuncKind::Inner(a, b) => write!(f, "({a}.{b})"),
                FuncKind::Axis(g, k) => write!(f, "({g}[{k}])"),
                FuncKind::Atop(g, h) => write!(f, "({g} {h})"),
                FuncKind::Jot(g, h) => write!(f, "({g}∘{h})"),
                FuncKind::Power(g, h) => write!(f, "({g}⍣{h})"),
                FuncKind::Rank(g, k) => write!(f, "({g}⍤{k})"),
                FuncKind::Key(g) => write!(f, "({g}⌸)"),
                FuncKind::Stencil(g, k) => write!(f, "({g}⌺{k})"),
                FuncKind::Over(g, h) => write!(f, "({g}⍥{h})"),
                FuncKind::At(g, h) => write!(f, "({g}@{h})"),
                FuncKind::UserOp { op, left, right } => match right {
                    Some(r) => write!(f, "({left} {op} {r})"),
                    None => write!(f, "({left} {op})"),
                },
                FuncKind::Fork(t, g, h) => write!(f, "({t} {g} {h})"),
            }
        }
    }
}

/// The inverse of `f` applied monadically (`f⍣¯1`), where arrc knows one: `+ - ÷ * ⍟
/// ⊢ ⌽ ⊖ ⍉` and `~` (their own or each other's), an array bound to `+ - × ÷ * ⍟` with
/// `∘` (`k∘+` is undone by `-∘k`), compositions and atops of such (undone in the
/// other order) and `g⍣n` (`g⍣-n`). `resolve` gives a function name's definition.
/// `Err` says why there is none.
pub fn inverse(f: &Func, resolve: &dyn Fn(&str) -> Option<Func>) -> Result<Func, String> {
    use crate::lexer::Prim::*;
    let sp = f.span.clone();
    let prim = |p| Func::new(FuncKind::Prim(p), sp.clone());
    let bound = |l: Tine, r: Tine| Func::new(FuncKind::Jot(Box::new(l), Box::new(r)), sp.clone());
    let none = || "arrc knows no inverse of this function (⍣ with a negative count)".to_string();
    match &f.kind {
        FuncKind::Name(n) => match resolve(n) {
            Some(g) if g != *f => inverse(&g, resolve),
            _ => Err(none()),
        },
        FuncKind::Prim(p) => Ok(prim(match p {
            Plus | Minus | Divide | Right | Reverse | ReverseFirst | Transpose | Tilde => *p,
            Star => Log,
            Log => Star,
            _ => return Err(none()),
        })),
        FuncKind::Jot(l, r) => match (&**l, &**r) {
            // k∘g: ⍵ ↦ k g ⍵.
            (Tine::Array(k), Tine::Func(g)) => {
                let k = Tine::Array(k.clone());
                match g.kind {
                    FuncKind::Prim(Plus) => Ok(bound(Tine::Func(prim(Minus)), k)),
                    FuncKind::Prim(Times) => Ok(bound(Tine::Func(prim(Divide)), k)),
                    FuncKind::Prim(Minus) | FuncKind::Prim(Divide) => Ok(f.clone()),
                    FuncKind::Prim(Star) => Ok(bound(k, Tine::Func(prim(Log)))),
                    FuncKind::Prim(Log) => Ok(bound(k, Tine::Func(prim(Star)))),
                    _ => Err(none()),
                }
            }
            // g∘k: ⍵ ↦ ⍵ g k.
            (Tine::Func(g), Tine::Array(k)) => {
                let k = Tine::Array(k.clone());
                match g.kind {
                    FuncKind::Prim(Plus) => Ok(bound(Tine::Func(prim(Minus)), k)),
                    FuncKind::Prim(Minus) => Ok(bound(Tine::Func(prim(Plus)), k)),
                    FuncKind::Prim(Times) => Ok(bound(Tine::Func(prim(Divide)), k)),
                    FuncKind::Prim(Divide) => Ok(bound(Tine::Func(prim(Times)), k)),
                    _ => Err(none()),
                }
            }
            // f∘g: undone by g's inverse after f's.
            (Tine::Func(a), Tine::Func(b)) => Ok(bound(
                Tine::Func(inverse(b, resolve)?),
                Tine::Func(inverse(a, resolve)?),
            )),
            _ => Err(none()),
        },
        FuncKind::Atop(a, b) => Ok(Func::new(
            FuncKind::Atop(
                Box::new(inverse(b, resolve)?),
                Box::new(inverse(a, resolve)?),
            ),
            sp.clone(),
        )),
        FuncKind::Power(g, n) => match &**n {
            Tine::Array(e) => Ok(Func::new(
                FuncKind::Power(
                    g.clone(),
                    Box::new(Tine::Array(Expr::new(
                        ExprKind::Monadic {
                            func: prim(Minus),
                            arg: Box::new(e.clone()),
                        },
                        e.span.clone(),
                    ))),
                ),
                sp.clone(),
            )),
            Tine::Func(_) => Err(none()),
        },
        _ => Err(none()),
    }
}

/// For `a f⍣¯1 ⍵` (the inverse of `a∘f`): the primitive `g` that undoes `f`, and
/// whether `a` is its left argument (`a g y`) or its right (`y g a`). `+ × - ÷ * ⍟`
/// only (`a+⍵` is undone by `y-a`, `a-⍵` by `a-y`).
pub fn dyadic_inverse(f: &Func) -> Option<(crate::lexer::Prim, bool)> {
    use crate::lexer::Prim::*;
    let FuncKind::Prim(p) = f.kind else {
        return None;
    };
    Some(match p {
        Plus => (Minus, false),
        Times => (Divide, false),
        Minus => (Minus, true),
        Divide => (Divide, true),
        Star => (Log, true),
        Log => (Star, true),
        _ => return None,
    })
}

/// A parenthesised expression: itself, but a strand spans its parentheses, which
/// tells `(1 2)` (one item of a strand around it) from the vector literal `1 2`
/// (whose numbers share the literal's span: see [`strand_items`]).
pub fn parenthesised(e: Expr, span: Span) -> Expr {
    match e.kind {
        ExprKind::Strand(_) => Expr { span, ..e },
        _ => e,
    }
}

/// The strand of `items` (atoms side by side). A strand of literals alone (numbers and
/// strings) is one constant, as in Dyalog: brackets after it index all of it
/// (`'ONE' 'TWO' 'THREE'[2]` is `'TWO'`, as `1 2 3[2]` is 2).
pub fn strand(mut items: Vec<Expr>, span: Span) -> Expr {
    let literal = |e: &Expr| match &e.kind {
        ExprKind::Number(_) | ExprKind::Str(_) => true,
        ExprKind::Strand(xs) => xs
            .iter()
            .all(|x| matches!(x.kind, ExprKind::Number(_)) && x.span == e.span),
        _ => false,
    };
    let last = items.pop().expect("a strand has two atoms or more");
    let all_literal = items.iter().all(literal);
    match last.kind {
        ExprKind::Index { array, axes } if all_literal && literal(&array) => {
            let inner_end = array.span.end;
            items.push(*array);
            let inner = strand(items, span.start..inner_end);
            Expr::new(
                ExprKind::Index {
                    array: Box::new(inner),
                    axes,
                },
                span,
            )
        }
        kind => {
            items.push(Expr { kind, ..last });
            let items = items.into_iter().flat_map(strand_items).collect();
            Expr::new(ExprKind::Strand(items), span)
        }
    }
}

/// The items `it` adds to a strand it stands in: a vector literal's numbers one by
/// one (`x 1 2` has three items, as in Dyalog), anything else as one item.
fn strand_items(it: Expr) -> Vec<Expr> {
    match it.kind {
        ExprKind::Strand(items)
            if items
                .iter()
                .all(|x| matches!(x.kind, ExprKind::Number(_)) && x.span == it.span) =>
        {
            items
        }
        kind => vec![Expr { kind, ..it }],
    }
}
