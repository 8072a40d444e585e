//! Nested and mixed arrays on the reference (issue 17, item 2): arrays whose items are
//! enclosed arrays ([`Item::Boxed`]), or numbers and characters together. A simple
//! array is unchanged by all of this: its data stays typed, and [`Array::new`] makes
//! mixed data simple again whenever its items allow.
//!
//! As with characters ([`crate::chars`]), functions take a mixed array only once they
//! have been checked to treat its items right: [`allowed`] lists them, the others are
//! NOT YET SUPPORTED. Structural functions move [`Item`]s (`Data::push_from`), scalar
//! functions pervade to the simple scalars at the leaves ([`pervade2`]), and `¨`,
//! `/`, `∘.` and `.` apply their operands to the opened items.

use crate::prims::{self, check_size, int_vector};
use crate::Interp;
use arrc_ir::array::{Array, Data, ElemType, Item, Items, Scalar};
use arrc_ir::error::{err, Error, Result};
use arrc_ir::scalar::{BinOp, UnOp};
use arrc_syntax::{Func, FuncKind, Op1, Prim, Span};

/// `r`, the result of a structural function, made of `fill` where it is empty and
/// nested with no prototype of its own: the items it would have held are the
/// argument's (`0⍴⊂1 2` is made of `⊂0 0`; `0⍴1 'a'` of 0, so it is `⍬`).
pub(crate) fn keep_prototype(r: Array, fill: Option<Item>) -> Array {
    match (&r.data, fill) {
        (Data::Mixed(items), Some(p)) if items.is_empty() && items.prototype().is_none() => {
            Array::empty_of(r.shape, &p.prototype())
        }
        _ => r,
    }
}

/// What `x`'s prototype is taken from, cheaply (an `Arc` clone): its first item, or
/// the prototype an empty one keeps; [`keep_prototype`] makes the prototype of it
/// only where a result needs one.
pub(crate) fn fill_source(x: &Array) -> Option<Item> {
    match &x.data {
        Data::Mixed(items) => items.first().cloned().or_else(|| items.prototype()),
        _ if x.is_empty() => x.fill_item(),
        d => Some(d.item(0)),
    }
}

/// The prototype of the argument whose items the dyadic primitive `f` selects:
/// ⍵'s for `⍴ ⌽ ⍉ ↑ ↓ / \ ⌷`, ⍺'s for `∩ ~`, both's (when they agree) for `, ∪`,
/// whose empty results are empty on both sides. `None` otherwise.
pub(crate) fn selected_fill(f: &Func, a: &Array, x: &Array) -> Option<Item> {
    let FuncKind::Prim(p) = &f.kind else {
        return None;
    };
    match p {
        Prim::Rho
        | Prim::Reverse
        | Prim::ReverseFirst
        | Prim::Transpose
        | Prim::Take
        | Prim::Drop
        | Prim::Slash
        | Prim::SlashBar
        | Prim::Backslash
        | Prim::BackslashBar
        | Prim::Squad
        | Prim::Select => fill_source(x),
        Prim::Intersection | Prim::Tilde => fill_source(a),
        Prim::Comma | Prim::CommaBar | Prim::Union => {
            let (l, r) = (fill_source(a)?.prototype(), fill_source(x)?.prototype());
            same_item(&l, &r).then_some(l)
        }
        _ => None,
    }
}

/// The error where the prototype of an empty nested array would be needed (arrc
/// keeps none for those yet).
pub(crate) fn no_prototype(span: &Span) -> Error {
    err::unsupported(
        "the prototype of an empty nested array (its fill) is not kept yet",
        span.clone(),
    )
}

/// Whether `f` (resolved) may be applied to arguments one of which is mixed or
/// nested: functions that move or select items, the scalar functions (which pervade),
/// the nested functions, and operators and compositions that apply their operands
/// to arrays (each operand checked again when it runs).
pub(crate) fn allowed(f: &Func, dyadic: bool, span: &Span) -> Result<()> {
    // Functions of simple numbers only, as in Dyalog: `⍸` and `⍺⍕⍵` of a nested or
    // mixed array are DOMAIN ERRORs.
    match (&f.kind, dyadic) {
        (FuncKind::Prim(Prim::Where), false) => {
            return Err(err::domain(
                "⍸ needs simple non-negative integers",
                span.clone(),
            ))
        }
        (FuncKind::Prim(Prim::Format), true) => {
            return Err(err::domain(
                "⍺⍕⍵ needs simple numbers on both sides",
                span.clone(),
            ))
        }
        _ => {}
    }
    let ok = match &f.kind {
        FuncKind::Prim(p) => {
            let structural = matches!(
                p,
                Prim::Rho
                    | Prim::Comma
                    | Prim::CommaBar
                    | Prim::Reverse
                    | Prim::ReverseFirst
                    | Prim::Transpose
                    | Prim::Take
                    | Prim::Drop
                    | Prim::Tally
                    | Prim::Match
                    | Prim::Squad
                    | Prim::Right
                    | Prim::Left
                    | Prim::Enclose
                    | Prim::Disclose
                    | Prim::Nest
                    | Prim::Epsilon
            );
            let scalar = if dyadic {
                BinOp::from_prim(*p).is_some()
            } else {
                UnOp::from_prim(*p).is_some()
            };
            // Set functions compare items whole (vectors of items; NOT YET SUPPORTED
            // for higher ranks, by `index_of`).
            let either = if dyadic {
                matches!(
                    p,
                    Prim::Slash
                        | Prim::SlashBar
                        | Prim::Backslash
                        | Prim::BackslashBar
                        | Prim::Iota
                        | Prim::Union
                        | Prim::Intersection
                        | Prim::Tilde
                        | Prim::Find
                        | Prim::Select
                )
            } else {
                matches!(
                    p,
                    Prim::Format | Prim::Union | Prim::NotEqual | Prim::GradeUp | Prim::GradeDown
                )
            };
            structural || scalar || either
        }
        // `f/` of items, not n-wise (`2 f/`).
        // `f/ f⌿ f\ f⍀` fold item by item; `n f/` folds windows so.
        FuncKind::Derived { op, .. } => {
            matches!(
                op,
                Op1::Each | Op1::Commute | Op1::Reduce | Op1::ReduceFirst
            ) || (!dyadic && matches!(op, Op1::Scan | Op1::ScanFirst))
        }
        // `⍤` and `⌸` move cells and items whole (`cells`, `apply_key`), apply their
        // operand to each, and mix the results (items padded with their own fill);
        // `@` selects and replaces items whole (`prims::scatter`).
        FuncKind::Power(..)
        | FuncKind::Over(..)
        | FuncKind::Inner(..)
        | FuncKind::Rank(..)
        | FuncKind::Key(..)
        | FuncKind::At(..) => true,
        // `f/[k]`, `f\[k]`: folded item by item along the axis.
        FuncKind::Axis(g, _)
            if matches!(
                g.kind,
                FuncKind::Derived {
                    op: Op1::Reduce | Op1::ReduceFirst | Op1::Scan | Op1::ScanFirst,
                    ..
                }
            ) =>
        {
            true
        }
        _ => crate::chars::applies_functions(f) || crate::chars::moves_along_axis(f),
    };
    if ok {
        Ok(())
    } else {
        Err(err::unsupported(
            "this function of a nested or mixed array is not supported yet",
            span.clone(),
        ))
    }
}

/// `a (1 2) b`: a strand whose items are not all simple scalars is a nested vector
/// (numbers and characters alone make a mixed one).
pub(crate) fn strand(items: Vec<Array>) -> Array {
    let n = items.len();
    Array::new(
        vec![n],
        Data::Mixed(items.into_iter().map(Item::enclose).collect()),
    )
}

/// `≡⍵`: 0 for a simple scalar, 1 for another simple array, else one more than the
/// deepest item; negative when the items' depths differ (Dyalog's non-uniform depth).
pub(crate) fn depth(x: &Array, span: &Span) -> Result<Array> {
    knows_prototypes(&[x], span)?;
    let (d, uniform) = depth_of(x);
    let d = d as i32;
    Ok(Array::scalar(Scalar::I32(if uniform { d } else { -d })))
}

/// An error where one of `arrays` holds, at any depth, an empty nested array: its
/// prototype, which `≡` and the searches compare, is not kept yet (better than an
/// answer that leaves it out).
pub(crate) fn knows_prototypes(arrays: &[&Array], span: &Span) -> Result<()> {
    fn lost(a: &Array) -> bool {
        match &a.data {
            Data::Mixed(items) if items.is_empty() => items.prototype().is_none(),
            Data::Mixed(items) => items.iter().any(|it| match it {
                Item::Boxed(b) => lost(b),
                Item::Simple(_) => false,
            }),
            _ => false,
        }
    }
    if arrays.iter().any(|a| lost(a)) {
        return Err(no_prototype(span));
    }
    Ok(())
}

fn depth_of(x: &Array) -> (usize, bool) {
    let Data::Mixed(items) = &x.data else {
        return (usize::from(x.rank() > 0), true);
    };
    // An empty array has its prototype's depth (`≡0⍴⊂1 2` is 2).
    let proto = items.prototype().filter(|_| items.is_empty());
    let depths: Vec<(usize, bool)> = items
        .iter()
        .chain(proto.as_ref())
        .map(|it| match it {
            Item::Simple(_) => (0, true),
            Item::Boxed(a) => depth_of(a),
        })
        .collect();
    let max = depths.iter().map(|d| d.0).max().unwrap_or(0);
    let uniform = depths.iter().all(|&(d, u)| u && d == max);
    (1 + max, uniform)
}

/// `∊⍵`: every simple scalar of ⍵, depth first, as a vector.
pub(crate) fn enlist(x: &Array) -> Array {
    fn walk(a: &Array, out: &mut Vec<Item>) {
        for i in 0..a.len() {
            match a.data.item(i) {
                Item::Boxed(b) => walk(&b, out),
                it => out.push(it),
            }
        }
    }
    /// The type of the first simple array met depth first: the type of an empty
    /// enlist (`∊'' ''` is `''`).
    fn first_simple(a: &Array) -> ElemType {
        match &a.data {
            Data::Mixed(items) => items
                .iter()
                .map(|it| match it {
                    Item::Boxed(b) => first_simple(b),
                    Item::Simple(s) => s.elem_type(),
                })
                .next()
                .unwrap_or(ElemType::I32),
            d => d.elem_type(),
        }
    }
    if !x.elem.is_mixed() {
        return prims::ravel(x);
    }
    let mut out = Vec::new();
    walk(x, &mut out);
    if out.is_empty() {
        return Array::vector(Data::empty(first_simple(x)));
    }
    Array::vector(Data::Mixed(out.into()))
}

/// `⊃⍵` (⎕ML=1: first): the first item, opened; of an empty array, its prototype.
pub(crate) fn first(x: &Array, span: &Span) -> Result<Array> {
    if x.is_empty() {
        return Ok(prims::fill(x, span)?.open());
    }
    Ok(x.data.item(0).open())
}

/// `⊆⍵`: a simple array enclosed (a simple scalar stays itself); a nested one as it is.
pub(crate) fn nest(x: Array) -> Array {
    if x.is_simple() {
        Array::enclose(x)
    } else {
        x
    }
}

/// `↑⍵` (mix): the items, opened, as cells of one array whose trailing axes are the
/// largest of the items' (shorter items padded with their own fill, lower ranks
/// given leading axes of 1).
pub(crate) fn mix(x: &Array, span: &Span) -> Result<Array> {
    if !x.elem.is_mixed() {
        return Ok(x.clone());
    }
    let items: Vec<Array> = (0..x.len()).map(|i| x.data.item(i).open()).collect();
    let rank = items.iter().map(Array::rank).max().unwrap_or(0);
    let mut cell = vec![0usize; rank];
    for it in &items {
        let pad = rank - it.rank();
        for (k, &d) in it.shape.iter().enumerate() {
            cell[pad + k] = cell[pad + k].max(d);
        }
        if pad > 0 {
            cell[..pad].iter_mut().for_each(|c| *c = (*c).max(1));
        }
    }
    if items.is_empty() {
        // The items' shape and type are the prototype's (`↑0⍴⊂1 2` is 0 2⍴0).
        let p = fill_of(x, span)?;
        let mut shape = x.shape.clone();
        shape.extend(p.shape.iter().copied());
        let proto = p.fill_item().ok_or_else(|| no_prototype(span))?;
        return Ok(Array::empty_of(shape, &proto));
    }
    let per = arrc_ir::array::saturating_count(&cell);
    check_size(per.saturating_mul(items.len()), span)?;
    let counts = Array::vector(Data::I64(cell.iter().map(|&c| c as i64).collect()));
    let mut data = Data::with_capacity(ElemType::Mixed, per * items.len());
    for it in &items {
        let mut lifted = it.clone();
        lifted.shape = std::iter::repeat_n(1, rank - it.rank())
            .chain(it.shape.iter().copied())
            .collect();
        let padded = if rank == 0 {
            lifted
        } else {
            prims::take_drop(&counts, &lifted, false, span)?
        };
        (0..padded.len()).for_each(|i| data.push_from(&padded.data, i));
    }
    let mut shape = x.shape.clone();
    shape.extend(cell);
    if data.is_empty() {
        // Empty items (`↑⍬ ⍬` is 2 0⍴0): made of what the first item is made of.
        let proto = items[0].fill_item().ok_or_else(|| no_prototype(span))?;
        return Ok(Array::empty_of(shape, &proto));
    }
    Ok(Array::new(shape, data))
}

/// `↓⍵` (split): the vectors along the last axis, each enclosed, in an array of the
/// other axes.
pub(crate) fn split(x: &Array) -> Array {
    if x.rank() == 0 {
        return x.clone();
    }
    let n = *x.shape.last().unwrap_or(&1);
    let rows = x
        .len()
        .checked_div(n)
        .unwrap_or_else(|| arrc_ir::array::saturating_count(&x.shape[..x.rank() - 1]));
    let frame = x.shape[..x.rank() - 1].to_vec();
    if rows == 0 {
        // Made of a row of fills (`↓0 3⍴0` is made of `⊂0 0 0`).
        let mut d = Data::with_capacity(x.elem, n);
        if let Some(fill) = x.fill_item() {
            (0..n).for_each(|_| d.push_item(fill.clone()));
            return Array::empty_of(frame, &Item::enclose(Array::new(vec![n], d)));
        }
    }
    let mut items = Vec::with_capacity(rows);
    for r in 0..rows {
        let mut d = Data::with_capacity(x.elem, n);
        (0..n).for_each(|i| d.push_from(&x.data, r * n + i));
        items.push(Item::enclose(Array::new(vec![n], d)));
    }
    Array::new(frame, Data::Mixed(items.into()))
}

/// `⍳⍵` of a vector: the array of shape ⍵ whose items are their own indices.
pub(crate) fn iota_vector(x: &Array, io: i64, span: &Span) -> Result<Array> {
    let dims = int_vector(x, span, "⍳'s argument")?;
    if dims.iter().any(|&d| d < 0) {
        return Err(err::domain("⍳ needs non-negative integers", span.clone()));
    }
    let shape: Vec<usize> = dims.iter().map(|&d| d as usize).collect();
    let n = arrc_ir::array::element_count(&shape).unwrap_or(usize::MAX);
    check_size(n.saturating_mul(shape.len().max(1)), span)?;
    let mut items = Vec::with_capacity(n);
    let mut idx = vec![0usize; shape.len()];
    for _ in 0..n {
        let v: Vec<i32> = idx.iter().map(|&i| (i as i64 + io) as i32).collect();
        items.push(Item::enclose(Array::vector(Data::I32(v))));
        for k in (0..shape.len()).rev() {
            idx[k] += 1;
            if idx[k] < shape[k] {
                break;
            }
            idx[k] = 0;
        }
    }
    if items.is_empty() {
        // `⍳0 3` is empty; `⍳⍬` is the scalar holding ⍬.
        if shape.is_empty() {
            return Ok(Array::enclose(Array::vector(Data::I32(vec![]))));
        }
        return Ok(Array::empty_of(shape, &index_proto(dims.len())));
    }
    Ok(Array::new(shape, Data::Mixed(items.into())))
}

/// The index vectors (origin `io`) of the ravel positions `flat` (0-origin) in an
/// array of `shape`: `⍸` of a matrix.
pub(crate) fn index_vectors(flat: &Array, shape: &[usize], io: i64) -> Array {
    let items = (0..flat.len())
        .map(|i| {
            let mut p = flat.data.get(i).as_i64().unwrap_or(0) as usize;
            let mut v = vec![0i32; shape.len()];
            for k in (0..shape.len()).rev() {
                v[k] = (p % shape[k].max(1)) as i32 + io as i32;
                p /= shape[k].max(1);
            }
            Item::enclose(Array::vector(Data::I32(v)))
        })
        .collect::<Items>();
    if items.is_empty() {
        return Array::empty_of(vec![0], &index_proto(shape.len()));
    }
    Array::vector(Data::Mixed(items))
}

/// The prototype of index vectors of `rank` items (`⊂0 0` for a matrix's).
fn index_proto(rank: usize) -> Item {
    Item::enclose(Array::vector(Data::I32(vec![0; rank])))
}

/// The prototype of `x` as an array (its fill item, opened).
fn fill_of(x: &Array, span: &Span) -> Result<Array> {
    Ok(prims::fill(x, span)?.open())
}

/// The empty array of `shape` made of `proto` (`f` applied to the arguments'
/// prototypes), or of type `elem` when `f` failed on the prototypes.
fn empty_like(shape: Vec<usize>, proto: Result<Array>, elem: ElemType) -> Result<Array> {
    match proto {
        Ok(p) => Ok(Array::empty_of(shape, &Item::enclose(p))),
        Err(e) if e.class == arrc_ir::error::ErrorClass::Unsupported => Err(e),
        Err(_) => Ok(Array::new(shape, Data::empty(elem))),
    }
}

/// `⍺⊃⍵` (pick): each item of ⍺ selects an item one level deeper (an integer in a
/// vector, a vector of indices in a higher rank), which is opened.
pub(crate) fn pick(a: &Array, x: &Array, io: i64, span: &Span) -> Result<Array> {
    if a.rank() > 1 {
        return Err(err::rank("⍺⊃⍵ needs a scalar or vector ⍺", span.clone()));
    }
    let mut cur = x.clone();
    for k in 0..a.len() {
        let idx = a.data.item(k).open();
        let ix = int_vector(&idx, span, "⍺⊃⍵'s indices")?;
        if ix.len() != cur.rank() {
            return Err(err::rank(
                format!("{} indices for a rank-{} array", ix.len(), cur.rank()),
                span.clone(),
            ));
        }
        let mut off = 0usize;
        for (d, (&i, &n)) in ix.iter().zip(&cur.shape).enumerate() {
            let i = i - io;
            if i < 0 || i >= n as i64 {
                return Err(prims::index_error(
                    format!("index {} is outside 1…{n} on axis {}", i + io, d + 1),
                    span.clone(),
                ));
            }
            off = off * n + i as usize;
        }
        cur = cur.data.item(off).open();
    }
    Ok(cur)
}

/// `x[y]` with a nested `y` (choose and reach indexing): each item of `y` names one
/// item of `x`: a vector of indices, one per axis (choose), or a nested vector of such
/// indices, one per level (reach, as `⊃` picks); the result has `y`'s shape.
pub(crate) fn choose(x: &Array, y: &Array, io: i64, span: &Span) -> Result<Array> {
    let mut out = Vec::with_capacity(y.len());
    for i in 0..y.len() {
        let idx = y.data.item(i).open();
        let path = if idx.is_simple() {
            Array::enclose(idx)
        } else {
            idx
        };
        out.push(Item::enclose(pick(&path, x, io, span)?));
    }
    if out.is_empty() {
        return Ok(Array::empty_of(y.shape.clone(), &prims::fill(x, span)?));
    }
    Ok(Array::new(y.shape.clone(), Data::Mixed(out.into())))
}

/// `⍺⊂⍵` (partitioned enclose) of a vector: a new item starts at each position
/// where ⍺ is positive (⍺[i] of them, the extra ones empty); items before the first
/// such position are left out. ⍺ may have one more item than ⍵ (empty items at the end).
pub(crate) fn partitioned_enclose(a: &Array, x: &Array, span: &Span) -> Result<Array> {
    let x = vector_of(x, span)?;
    let n = x.len();
    let counts = partition_left(a, n, "⍺⊂⍵", span)?;
    if counts.len() != n && counts.len() != n + 1 {
        return Err(err::length(
            format!("{} partition counts for {n} items", counts.len()),
            span.clone(),
        ));
    }
    let mut parts: Vec<(usize, usize)> = Vec::new();
    for (i, &c) in counts.iter().enumerate() {
        for _ in 0..c {
            if let Some(last) = parts.last_mut() {
                last.1 = last.1.min(i);
            }
            parts.push((i, n));
        }
    }
    check_size(parts.len(), span)?;
    Ok(parts_of(&x, &parts))
}

/// `⍺⊆⍵` (partition) of a vector: runs of items with equal positive ⍺, a new one
/// where ⍺ grows; items where ⍺ is 0 are left out.
pub(crate) fn partition(a: &Array, x: &Array, span: &Span) -> Result<Array> {
    let x = vector_of(x, span)?;
    let n = x.len();
    let keys = partition_left(a, n, "⍺⊆⍵", span)?;
    if keys.len() != n {
        return Err(err::length(
            format!("{} partition keys for {n} items", keys.len()),
            span.clone(),
        ));
    }
    let mut parts: Vec<(usize, usize)> = Vec::new();
    let mut prev = 0;
    for (i, &k) in keys.iter().enumerate() {
        if k == 0 || k > prev {
            if let Some(last) = parts.last_mut() {
                last.1 = last.1.min(i);
            }
        }
        if k > prev {
            parts.push((i, n));
        }
        prev = k;
    }
    Ok(parts_of(&x, &parts))
}

/// The non-negative integers on the left of a partition of `n` items (a scalar
/// extends to all of them).
fn partition_left(a: &Array, n: usize, what: &str, span: &Span) -> Result<Vec<i64>> {
    let mut v = int_vector(a, span, &format!("{what}'s left argument"))?;
    if a.rank() == 0 {
        v = vec![v[0]; n];
    }
    if v.iter().any(|&c| c < 0) {
        return Err(err::domain(
            format!("{what} needs non-negative integers on the left"),
            span.clone(),
        ));
    }
    Ok(v)
}

/// ⍵ as a vector (a scalar is one item); a higher rank is NOT YET SUPPORTED here.
fn vector_of(x: &Array, span: &Span) -> Result<Array> {
    match x.rank() {
        0 => Ok(prims::ravel(x)),
        1 => Ok(x.clone()),
        _ => Err(err::unsupported(
            "partitions of arrays of rank 2 or more are not supported yet",
            span.clone(),
        )),
    }
}

/// The vector of the enclosed ranges `[start, end)` of `x`.
fn parts_of(x: &Array, parts: &[(usize, usize)]) -> Array {
    let items = parts
        .iter()
        .map(|&(s, e)| {
            let mut d = Data::with_capacity(x.elem, e.saturating_sub(s));
            (s..e).for_each(|i| d.push_from(&x.data, i));
            Item::enclose(Array::vector(d))
        })
        .collect::<Items>();
    if items.is_empty() {
        // Made of an empty vector of ⍵'s type (`⊃0 0⊂1 2` is ⍬).
        return Array::empty_of(vec![0], &Item::enclose(Array::vector(Data::empty(x.elem))));
    }
    Array::vector(Data::Mixed(items))
}

/// A dyadic scalar function where an argument is nested: items paired (with scalar
/// and singleton extension) and the function applied to their contents, down to the
/// simple scalars.
pub(crate) fn pervade2(
    op: BinOp,
    a: &Array,
    b: &Array,
    float: ElemType,
    span: &Span,
) -> Result<Array> {
    let (shape, ea, eb) = crate::extension(a, b, span)?;
    let n = arrc_ir::array::saturating_count(&shape);
    if n == 0 {
        // Made of the function of the prototypes.
        let (x, y) = (prims::fill(a, span)?, prims::fill(b, span)?);
        let r = crate::binary(op, &x.as_array(), &y.as_array(), float, span.clone())?;
        return Ok(Array::empty_of(shape, &Item::enclose(r)));
    }
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let x = a.data.item(if ea { 0 } else { i });
        let y = b.data.item(if eb { 0 } else { i });
        let r = crate::binary(op, &x.as_array(), &y.as_array(), float, span.clone())?;
        out.push(Item::enclose(r));
    }
    Ok(Array::new(shape, Data::Mixed(out.into())))
}

/// A monadic scalar function of a nested array: applied to each item's contents.
pub(crate) fn pervade1(op: UnOp, x: &Array, float: ElemType, span: &Span) -> Result<Array> {
    if x.is_empty() {
        let r = crate::unary(op, &prims::fill(x, span)?.as_array(), float, span.clone())?;
        return Ok(Array::empty_of(x.shape.clone(), &Item::enclose(r)));
    }
    let mut out = Vec::with_capacity(x.len());
    for i in 0..x.len() {
        let r = crate::unary(op, &x.data.item(i).as_array(), float, span.clone())?;
        out.push(Item::enclose(r));
    }
    Ok(Array::new(x.shape.clone(), Data::Mixed(out.into())))
}

/// Whether two items match (`≡`): simple scalars equal as `=` compares them, enclosed
/// arrays matching.
pub(crate) fn same_item(a: &Item, b: &Item) -> bool {
    match (a, b) {
        (Item::Simple(x), Item::Simple(y)) => prims::same(*x, *y),
        (Item::Boxed(x), Item::Boxed(y)) => prims::matches(x, y),
        _ => false,
    }
}

/// `⍺⍳⍵` where an argument is nested: the first item of the vector ⍺ that matches
/// each item of ⍵; for a matrix (or higher) ⍺, the first major cell of ⍺ matching
/// each cell of ⍵ of that shape, item by item.
pub(crate) fn index_of(a: &Array, x: &Array, io: i64, span: &Span) -> Result<Array> {
    knows_prototypes(&[a, x], span)?;
    // Matrices (and scalars, an error) as simple arrays: cells compared item by item.
    if a.rank() != 1 {
        return prims::index_of(a, x, io, span);
    }
    let hay: Vec<Item> = (0..a.len()).map(|i| a.data.item(i)).collect();
    let out = (0..x.len())
        .map(|i| {
            let it = x.data.item(i);
            let k = hay
                .iter()
                .position(|h| same_item(h, &it))
                .unwrap_or(a.len());
            (k as i64 + io) as i32
        })
        .collect();
    Ok(Array::new(x.shape.clone(), Data::I32(out)))
}

/// `⍺∊⍵` where an argument is nested: whether each item of ⍺ matches an item of ⍵.
pub(crate) fn member(a: &Array, x: &Array, span: &Span) -> Result<Array> {
    knows_prototypes(&[a, x], span)?;
    let hay: Vec<Item> = (0..x.len()).map(|i| x.data.item(i)).collect();
    let out = (0..a.len())
        .map(|i| {
            let it = a.data.item(i);
            hay.iter().any(|h| same_item(h, &it))
        })
        .collect();
    Ok(Array::new(a.shape.clone(), Data::Bool(out)))
}

impl Interp<'_> {
    /// `f¨`: `f` applied to each item (opened), each result enclosed; with ⍺, items
    /// paired with scalar extension.
    pub(crate) fn each(
        &mut self,
        f: &Func,
        a: Option<&Array>,
        x: &Array,
        span: &Span,
    ) -> Result<Array> {
        let (shape, ea, ex) = match a {
            None => (x.shape.clone(), false, false),
            Some(a) => crate::extension(a, x, span)?,
        };
        let n: usize = arrc_ir::array::saturating_count(&shape);
        if n == 0 {
            // Dyalog's result prototype: `f` of the arguments' prototypes.
            let (xp, ap) = (fill_of(x, span)?, a.map(|a| fill_of(a, span)).transpose()?);
            let r = match ap {
                None => self.monadic(f, xp, span),
                Some(ap) => self.dyadic(f, ap, xp, span),
            };
            return empty_like(shape, r, x.elem);
        }
        let mut out = Vec::with_capacity(n);
        for i in 0..n {
            let xv = x.data.item(if ex { 0 } else { i }).open();
            let r = match a {
                None => self.monadic(f, xv, span)?,
                Some(a) => {
                    let av = a.data.item(if ea { 0 } else { i }).open();
                    self.dyadic(f, av, xv, span)?
                }
            };
            out.push(Item::enclose(r));
        }
        Ok(Array::new(shape, Data::Mixed(out.into())))
    }

    /// `f/` (or `f⌿`) along `axis` item by item: each run of items folded from the
    /// right by `f` applied to their contents, the result enclosed. With `scan`
    /// (`f\`, `f⍀`), each prefix of each run so folded, along the same axis.
    pub(crate) fn fold_items(
        &mut self,
        f: &Func,
        x: &Array,
        axis: usize,
        scan: bool,
        span: &Span,
    ) -> Result<Array> {
        if x.rank() == 0 {
            return Ok(x.clone());
        }
        let (outer, n, inner) = x.around(axis);
        if n == 0 {
            return Err(err::unsupported(
                "a reduction of an empty nested array is not supported yet",
                span.clone(),
            ));
        }
        // A scan folds every prefix: n(n-1)/2 calls of `f` per run, held to the
        // limit of calls an evaluation may make (WS FULL, at once, past it).
        let steps = if scan {
            (n as u64) * (n as u64 - 1) / 2
        } else {
            n as u64 - 1
        };
        let limit = prims::CALL_LIMIT.with(|l| l.get());
        if steps.saturating_mul((outer * inner) as u64) > limit {
            return Err(err::ws_full(
                format!("this fold item by item takes more than {limit} calls"),
                span.clone(),
            ));
        }
        let ends: Vec<usize> = if scan { (1..=n).collect() } else { vec![n] };
        let mut out = vec![Item::Simple(Scalar::I32(0)); outer * ends.len() * inner];
        // The elements the results hold, all told (`,\⍳1e6` is WS FULL, not a hang).
        let mut held = 0usize;
        for o in 0..outer {
            for i in 0..inner {
                for (e, &end) in ends.iter().enumerate() {
                    let run = (0..end).map(|k| Ok(x.data.item((o * n + k) * inner + i).open()));
                    let r = self.fold_right(f, run, span)?;
                    held = held.saturating_add(r.len().max(1));
                    check_size(held, span)?;
                    out[(o * ends.len() + e) * inner + i] = Item::enclose(r);
                }
            }
        }
        let mut shape = x.shape.clone();
        if !scan {
            shape.remove(axis);
        }
        Ok(Array::new(shape, Data::Mixed(out.into())))
    }

    /// `⍺∘.g⍵` with nested arguments or array results: `g` applied to each pair of
    /// items (opened), each result enclosed.
    pub(crate) fn outer_items(
        &mut self,
        g: &Func,
        a: &Array,
        b: &Array,
        span: &Span,
    ) -> Result<Array> {
        let mut shape = a.shape.clone();
        shape.extend(b.shape.iter().copied());
        check_size(a.len().saturating_mul(b.len()), span)?;
        if a.is_empty() || b.is_empty() {
            let r = self.dyadic(g, fill_of(a, span)?, fill_of(b, span)?, span);
            return empty_like(shape, r, a.elem.join(b.elem));
        }
        let mut out = Vec::with_capacity(a.len() * b.len());
        for i in 0..a.len() {
            for j in 0..b.len() {
                let r = self.dyadic(g, a.data.item(i).open(), b.data.item(j).open(), span)?;
                out.push(Item::enclose(r));
            }
        }
        Ok(Array::new(shape, Data::Mixed(out.into())))
    }

    /// `⍺ f.g ⍵` with nested arguments: for each row of ⍺ and column of ⍵, `g` of the
    /// paired items (opened) folded from the right by `f`, the result enclosed.
    pub(crate) fn inner_items(
        &mut self,
        f: &Func,
        g: &Func,
        a: &Array,
        b: &Array,
        span: &Span,
    ) -> Result<Array> {
        let pairs = crate::folds::InnerPairs::new(a, b, span)?;
        let (n, rows, cols) = (pairs.n, pairs.rows, pairs.cols);
        if n == 0 {
            return Err(err::unsupported(
                "an inner product of empty nested arrays is not supported yet",
                span.clone(),
            ));
        }
        let mut out = Vec::with_capacity(rows * cols);
        for r in 0..rows {
            for c in 0..cols {
                let pair = |k: usize| {
                    let (ia, ib) = pairs.at(a, b, r, c, k);
                    (a.data.item(ia).open(), b.data.item(ib).open())
                };
                let products: Vec<Array> = (0..n)
                    .map(|k| {
                        let (l, rt) = pair(k);
                        self.dyadic(g, l, rt, span)
                    })
                    .rev()
                    .collect::<Result<Vec<_>>>()?;
                let run = products.into_iter().rev().map(Ok);
                out.push(Item::enclose(self.fold_right(f, run, span)?));
            }
        }
        Ok(Array::new(pairs.shape, Data::Mixed(out.into())))
    }

    /// `f/` of a run of arrays: folded from the right (`a f (b f c)`), the run not empty.
    fn fold_right(
        &mut self,
        f: &Func,
        run: impl DoubleEndedIterator<Item = Result<Array>>,
        span: &Span,
    ) -> Result<Array> {
        let run: Vec<Array> = run.collect::<Result<_>>()?;
        if let Some(v) = self.catenated(f, &run, span)? {
            return Ok(v);
        }
        let mut run = run.into_iter().rev();
        let mut acc = run.next().expect("a run of at least one item");
        for x in run {
            arrc_ir::interrupt::check(span)?;
            acc = self.dyadic(f, x, acc, span)?;
            check_size(acc.len(), span)?;
        }
        Ok(acc)
    }

    /// `,/` of scalars and vectors: their items in order, in one pass (the fold from
    /// the right copies its growing result at every step: `,/⍳1e5` took minutes).
    /// `None` for another function or higher ranks.
    fn catenated(&mut self, f: &Func, run: &[Array], span: &Span) -> Result<Option<Array>> {
        if !matches!(self.resolve(f)?.kind, FuncKind::Prim(Prim::Comma)) || run.len() < 2 {
            return Ok(None);
        }
        if run.iter().any(|a| a.rank() > 1) {
            return Ok(None);
        }
        let total = run.iter().fold(0usize, |t, a| t.saturating_add(a.len()));
        check_size(total, span)?;
        let ty = run.iter().skip(1).fold(run[0].elem, |t, a| {
            if t.mixes(a.elem) {
                ElemType::Mixed
            } else {
                t.join(a.elem)
            }
        });
        let mut d = Data::with_capacity(ty, total);
        for a in run {
            (0..a.len()).for_each(|i| d.push_from(&a.data, i));
        }
        let v = Array::vector(d);
        Ok(Some(match &run[0].data {
            Data::Mixed(items) if total == 0 => keep_prototype(v, items.prototype()),
            _ => v,
        }))
    }
}

/// `⍵` with its axes moved: axis `k` of ⍵ becomes axis `perm[k]` (as `perm⍉⍵`).
fn permute(x: &Array, perm: &[usize], span: &Span) -> Result<Array> {
    let p = Array::vector(Data::I64(perm.iter().map(|&v| v as i64).collect()));
    let r = prims::transpose(Some(&p), x, 0, span)?;
    Ok(keep_prototype(r, fill_source(x)))
}

/// The distinct axes (0-based) of a rank-`rank` array that `⊂[k]` or `↓[k]` name.
fn named_axes(k: &Array, rank: usize, io: i64, kspan: &Span) -> Result<Vec<usize>> {
    let v = int_vector(k, kspan, "the axes")?;
    arrc_ir::axes::distinct_axes(&v, rank, io, kspan)
}

/// `⊂[k]⍵` (and `↓[k]⍵`, one axis): the sub-arrays along the axes `k` (in the order
/// given) enclosed, in an array of the other axes.
pub(crate) fn enclose_axes(
    k: &Array,
    x: &Array,
    io: i64,
    kspan: &Span,
    span: &Span,
) -> Result<Array> {
    let axes = named_axes(k, x.rank(), io, kspan)?;
    let rest: Vec<usize> = (0..x.rank()).filter(|a| !axes.contains(a)).collect();
    let mut perm = vec![0; x.rank()];
    for (m, &a) in rest.iter().chain(&axes).enumerate() {
        perm[a] = m;
    }
    let t = permute(x, &perm, span)?;
    let frame: Vec<usize> = rest.iter().map(|&a| x.shape[a]).collect();
    let cell: Vec<usize> = axes.iter().map(|&a| x.shape[a]).collect();
    let per = arrc_ir::array::saturating_count(&cell);
    let cells = arrc_ir::array::saturating_count(&frame);
    let cell_of = |fill: Option<Item>, start: usize| {
        let mut d = Data::with_capacity(x.elem, per);
        match fill {
            Some(f) => (0..per).for_each(|_| d.push_item(f.clone())),
            None => (start..start + per).for_each(|i| d.push_from(&t.data, i)),
        }
        Item::enclose(Array::new(cell.clone(), d))
    };
    if cells == 0 {
        let fill = x.fill_item().ok_or_else(|| no_prototype(span))?;
        return Ok(Array::empty_of(frame, &cell_of(Some(fill), 0)));
    }
    let items: Items = (0..cells).map(|c| cell_of(None, c * per)).collect();
    Ok(Array::new(frame, Data::Mixed(items)))
}

/// `↑[k]⍵`: mix, with the items' axes placed where `k` says: a fraction puts them
/// between the axes ⌊k and ⌈k of ⍵, an integer puts the first at `k`, a vector gives
/// each its place.
pub(crate) fn mix_axes(k: &Array, x: &Array, io: i64, kspan: &Span, span: &Span) -> Result<Array> {
    let m = mix(x, span)?;
    let (r, s) = (x.rank(), m.rank() - x.rank());
    let bad = || {
        prims::axis_error(
            format!("no place for {s} axes among {} by this axis", r + s),
            kspan.clone(),
        )
    };
    let places: Vec<usize> = match k.as_singleton() {
        Some(v) if k.rank() <= 1 => {
            let at = (v.as_f64() - io as f64).ceil();
            if !(0.0..=r as f64).contains(&at) {
                return Err(bad());
            }
            (0..s).map(|j| at as usize + j).collect()
        }
        _ => {
            let v = int_vector(k, kspan, "the axes")?;
            if v.len() != s {
                return Err(prims::axis_error(
                    format!("{} axes given for items of rank {s}", v.len()),
                    kspan.clone(),
                ));
            }
            let p: Vec<usize> = v.iter().map(|&a| (a - io).max(-1) as usize).collect();
            if p.iter()
                .enumerate()
                .any(|(i, &a)| a >= r + s || p[..i].contains(&a))
            {
                return Err(bad());
            }
            p
        }
    };
    let outer: Vec<usize> = (0..r + s).filter(|a| !places.contains(a)).collect();
    let perm: Vec<usize> = outer.iter().chain(&places).copied().collect();
    permute(&m, &perm, span)
}

/// Dyalog's total array ordering of two items: numbers (exactly) before characters
/// (by code point); arrays item by item in ravel order, the lower rank given leading
/// axes of 1 and the shorter padded with items that precede every other (so `'car'`
/// precedes `'carpet'`); empty arrays by type, then by shape from the right.
pub(crate) fn tao(a: &Item, b: &Item) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    match (a, b) {
        (Item::Simple(x), Item::Simple(y)) => match (x, y) {
            (Scalar::Char(c), Scalar::Char(d)) => c.cmp(d),
            (Scalar::Char(_), _) => Ordering::Greater,
            (_, Scalar::Char(_)) => Ordering::Less,
            _ => match (x.as_i64(), y.as_i64()) {
                (Some(i), Some(j)) if x.elem_type().is_int() && y.elem_type().is_int() => i.cmp(&j),
                _ => x.as_f64().total_cmp(&y.as_f64()),
            },
        },
        _ => tao_arrays(&a.as_array(), &b.as_array()),
    }
}

fn tao_arrays(a: &Array, b: &Array) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    if a.is_empty() && b.is_empty() {
        // By their prototypes (numbers before characters), then shapes from the right.
        let by_type = match (a.fill_item(), b.fill_item()) {
            (Some(p), Some(q)) => tao(&p, &q),
            _ => Ordering::Equal,
        };
        return by_type.then_with(|| {
            let r = a.rank().max(b.rank());
            let pad = |x: &Array| {
                let mut s = vec![1; r - x.rank()];
                s.extend(x.shape.iter().copied());
                s.reverse();
                s
            };
            pad(a).cmp(&pad(b))
        });
    }
    let r = a.rank().max(b.rank());
    let lift = |x: &Array| -> Vec<usize> {
        let mut s = vec![1; r - x.rank()];
        s.extend(x.shape.iter().copied());
        s
    };
    let (sa, sb) = (lift(a), lift(b));
    let shape: Vec<usize> = sa.iter().zip(&sb).map(|(p, q)| *p.max(q)).collect();
    let at = |x: &Array, s: &[usize], idx: &[usize]| -> Option<Item> {
        let mut off = 0;
        for (k, &i) in idx.iter().enumerate() {
            if i >= s[k] {
                return None;
            }
            off = off * s[k] + i;
        }
        Some(x.data.item(off))
    };
    let mut idx = vec![0usize; r];
    for _ in 0..arrc_ir::array::saturating_count(&shape) {
        let o = match (at(a, &sa, &idx), at(b, &sb, &idx)) {
            (None, None) => Ordering::Equal,
            (None, Some(_)) => Ordering::Less,
            (Some(_), None) => Ordering::Greater,
            (Some(p), Some(q)) => tao(&p, &q),
        };
        if o.is_ne() {
            return o;
        }
        for k in (0..r).rev() {
            idx[k] += 1;
            if idx[k] < shape[k] {
                break;
            }
            idx[k] = 0;
        }
    }
    // Equal once the lower rank has leading axes of 1: the lower rank first.
    a.rank().cmp(&b.rank())
}

/// How `⍋` orders the major cells of a nested or mixed array (rank 1 or more): by
/// Dyalog's total array ordering ([`tao`]).
pub(crate) fn cell_order(x: &Array) -> impl Fn(usize, usize) -> std::cmp::Ordering {
    let n = x.shape[0];
    let cell_shape = x.shape[1..].to_vec();
    let per = arrc_ir::array::saturating_count(&cell_shape);
    let cells: Vec<Item> = (0..n)
        .map(|c| {
            let mut d = Data::with_capacity(x.elem, per);
            (0..per).for_each(|k| d.push_from(&x.data, c * per + k));
            Item::Boxed(std::sync::Arc::new(Array::new(cell_shape.clone(), d)))
        })
        .collect();
    move |p, q| tao(&cells[p], &cells[q])
}
