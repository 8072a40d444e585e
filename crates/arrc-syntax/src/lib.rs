//! Front end of arrc: text to AST.
//!
//! Architecture invariants:
//! - This crate knows nothing of the IR, SPIR-V or Vulkan.
//! - [`parse`] never panics, on any input: it returns a [`Program`] or a [`SyntaxError`]
//!   with the byte span of the offending text.
//! - Whether a name denotes a function is decided here, before parsing, from
//!   `name←{…}` definitions in the text and the names the caller already knows as
//!   functions (APL's grammar needs that fact).

pub mod assign;
pub mod ast;
pub mod lexer;

use lalrpop_util::lalrpop_mod;
lalrpop_mod!(
    #[allow(clippy::all, clippy::pedantic, unused)]
    grammar
);

pub use ast::*;
use lexer::{LexError, Token};
use std::collections::HashMap;

/// A syntax error with the span of the text it points at.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{} {message}", if *.unsupported { "NOT YET SUPPORTED:" } else { "SYNTAX ERROR:" })]
pub struct SyntaxError {
    pub message: String,
    pub span: Span,
    /// A Dyalog glyph that arrc does not support yet, not a mistake in the text.
    pub unsupported: bool,
}

/// What a name defined outside the text holds, where the grammar needs to know.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NameKind {
    Function,
    /// An operator taking one (`⍺⍺`) or two (`⍺⍺ ⍵⍵`) operands.
    Operator(u8),
}

/// Parses a program (statements separated by newlines or `⋄`).
///
/// `is_function` tells whether a name defined outside `src` (in a session or
/// library) holds a function.
pub fn parse(src: &str, is_function: &dyn Fn(&str) -> bool) -> Result<Program, SyntaxError> {
    parse_names(src, &|n| is_function(n).then_some(NameKind::Function))
}

/// Parses a program, with `kind` telling what each name defined outside `src` holds
/// (`None` for arrays and unknown names).
pub fn parse_names(
    src: &str,
    kind: &dyn Fn(&str) -> Option<NameKind>,
) -> Result<Program, SyntaxError> {
    let is_function = &|n: &str| kind(n) == Some(NameKind::Function);
    let tokens = lexer::lex(src).map_err(|(e, span)| SyntaxError {
        unsupported: e == LexError::UnknownChar
            && src[span.clone()]
                .chars()
                .next()
                .and_then(lexer::unsupported_glyph)
                .is_some(),
        message: match e {
            LexError::UnknownChar => {
                let c = src[span.clone()].chars().next().unwrap_or('?');
                match lexer::unsupported_glyph(c) {
                    Some(name) => format!("{c} ({name})"),
                    None => format!("unknown character '{c}' (U+{:04X})", c as u32),
                }
            }
            LexError::BadNumber => format!("malformed number '{}'", &src[span.clone()]),
        },
        span,
    })?;
    let mut tokens = lexer::merge_numbers(tokens);
    check_statement_length(&tokens)?;
    mark_operators(&mut tokens);
    classify(&mut tokens, is_function, kind);
    read_array_operators(src, &mut tokens);
    let variants = operand_variants(src, &tokens);
    let mut prog = parse_classified(src, tokens)?;
    if !variants.is_empty() {
        attach_variants(&mut prog, &variants);
    }
    Ok(prog)
}

/// Why an array operand of an operator of the user's fails: its body does not read
/// as APL with that operand an array.
pub const ARRAY_OPERAND_UNREAD: &str = "this operator's body does not read with an array as its operand (it applies ⍺⍺ or ⍵⍵ as a function)";

/// Parses classified tokens.
fn parse_classified(src: &str, mut tokens: Vec<lexer::Spanned>) -> Result<Program, SyntaxError> {
    mark_function_parens(&mut tokens);
    let tokens = mark_assignments(tokens);
    let tokens = lexer::mark_jots(tokens);
    check_brackets(src, &tokens)?;
    let end = src.len();
    grammar::ProgramParser::new()
        .parse(tokens.into_iter().map(Ok::<_, (String, Span)>))
        .map_err(|e| convert_error(src, e, end))
}

/// The operator dfns of `tokens`, innermost first: where `{1`/`{2` opens and `}`
/// closes each.
fn operator_dfns(tokens: &[lexer::Spanned]) -> Vec<(usize, usize)> {
    let mut open = vec![];
    let mut out = vec![];
    for (j, (_, t, _)) in tokens.iter().enumerate() {
        match t {
            Token::LBrace | Token::OpLBrace1 | Token::OpLBrace2 => open.push((j, t.clone())),
            Token::RBrace => {
                if let Some((i, t)) = open.pop() {
                    if t != Token::LBrace {
                        out.push((i, j));
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// An operator dfn that reads only with array operands (`{⍵+⍺⍺}`) becomes one
/// token holding it read so, with its other readings as variants.
fn read_array_operators(src: &str, tokens: &mut Vec<lexer::Spanned>) {
    'again: loop {
        for (i, c) in operator_dfns(tokens) {
            let reads = parse_classified(src, tokens[i..=c].to_vec())
                .is_ok_and(|p| matches!(p.stmts.as_slice(), [Stmt::Func(_)]));
            if reads {
                continue;
            }
            let (l, r) = (tokens[i].0, tokens[c].2);
            let mut table = operand_variants(src, &tokens[i..=c]);
            let Some(mut variants) = table.remove(&(l, r)).filter(|v| !v.is_empty()) else {
                continue;
            };
            let first = variants.remove(0);
            let mut body = first.body.clone();
            body.operand_variants = std::iter::once(first).chain(variants).collect();
            let f = std::rc::Rc::new(Func::new(FuncKind::Dfn(Box::new(body)), l..r));
            let t = match tokens[i].1 {
                Token::OpLBrace2 => Token::Ready2(f),
                _ => Token::Ready1(f),
            };
            tokens.splice(i..=c, [(l, t, r)]);
            continue 'again;
        }
        return;
    }
}

/// Each operator dfn's body read again with array operands (`⍺⍺`, `⍵⍵` or both as
/// array names; the operators nested in it keep theirs), by the span of the
/// operator: the variants that read.
fn operand_variants(
    src: &str,
    tokens: &[lexer::Spanned],
) -> HashMap<(usize, usize), Vec<OperandVariant>> {
    let mut out: HashMap<(usize, usize), Vec<OperandVariant>> = HashMap::new();
    for (i, (l, t, _)) in tokens.iter().enumerate() {
        let two = match t {
            Token::OpLBrace1 => false,
            Token::OpLBrace2 => true,
            _ => continue,
        };
        // The matching `}`, and which tokens belong to operators nested inside.
        let mut depth = 0;
        let mut nested_from: Option<usize> = None;
        let mut own = vec![];
        let mut close = None;
        for (j, (_, t, _)) in tokens.iter().enumerate().skip(i) {
            match t {
                Token::LBrace | Token::OpLBrace1 | Token::OpLBrace2 => {
                    if j > i && nested_from.is_none() && *t != Token::LBrace {
                        nested_from = Some(depth);
                    }
                    depth += 1;
                }
                Token::RBrace => {
                    depth -= 1;
                    if nested_from == Some(depth) {
                        nested_from = None;
                    }
                    if depth == 0 {
                        close = Some(j);
                        break;
                    }
                }
                _ => {}
            }
            own.push(nested_from.is_none());
        }
        let Some(c) = close else { continue };
        let kinds: &[(bool, bool)] = if two {
            &[(true, false), (false, true), (true, true)]
        } else {
            &[(true, false)]
        };
        for &(left, right) in kinds {
            let mut v: Vec<lexer::Spanned> = tokens[i..=c].to_vec();
            v[0].1 = Token::LBrace;
            for (k, tok) in v.iter_mut().enumerate() {
                if !own.get(k).copied().unwrap_or(false) {
                    continue;
                }
                match tok.1 {
                    Token::AlphaAlpha if left => tok.1 = Token::Name("⍺⍺".into()),
                    Token::OmegaOmega if right => tok.1 = Token::Name("⍵⍵".into()),
                    _ => {}
                }
            }
            let Ok(p) = parse_classified(src, v) else {
                continue;
            };
            if let [Stmt::Func(Func {
                kind: FuncKind::Dfn(body),
                ..
            })] = p.stmts.as_slice()
            {
                out.entry((*l, tokens[c].2))
                    .or_default()
                    .push(OperandVariant {
                        left,
                        right,
                        body: (**body).clone(),
                    });
            }
        }
    }
    out
}

/// Gives each operator dfn of `prog` its variants (`operand_variants`).
fn attach_variants(prog: &mut Program, table: &HashMap<(usize, usize), Vec<OperandVariant>>) {
    fn program(p: &mut Program, t: &HashMap<(usize, usize), Vec<OperandVariant>>) {
        for s in &mut p.stmts {
            match s {
                Stmt::Expr(e) => expr(e, t),
                Stmt::Guard { cond, value } => {
                    expr(cond, t);
                    expr(value, t);
                }
                Stmt::FnDef { func: f, .. } | Stmt::Func(f) => func(f, t),
            }
        }
        for v in &mut p.operand_variants {
            program(&mut v.body, t);
        }
    }
    fn tine(x: &mut Tine, t: &HashMap<(usize, usize), Vec<OperandVariant>>) {
        match x {
            Tine::Func(f) => func(f, t),
            Tine::Array(e) => expr(e, t),
        }
    }
    fn func(f: &mut Func, t: &HashMap<(usize, usize), Vec<OperandVariant>>) {
        match &mut f.kind {
            FuncKind::Dfn(p) => {
                if let Some(v) = t.get(&(f.span.start, f.span.end)) {
                    p.operand_variants = v.clone();
                }
                program(p, t);
            }
            FuncKind::Derived { operand, .. }
            | FuncKind::Outer(operand)
            | FuncKind::Key(operand) => func(operand, t),
            FuncKind::Inner(a, b) | FuncKind::Atop(a, b) | FuncKind::Over(a, b) => {
                func(a, t);
                func(b, t);
            }
            FuncKind::Axis(a, e) | FuncKind::Rank(a, e) | FuncKind::Stencil(a, e) => {
                func(a, t);
                expr(e, t);
            }
            FuncKind::Fork(a, b, c) => {
                tine(a, t);
                func(b, t);
                func(c, t);
            }
            FuncKind::Jot(a, b) | FuncKind::At(a, b) => {
                tine(a, t);
                tine(b, t);
            }
            FuncKind::Power(a, b) => {
                func(a, t);
                tine(b, t);
            }
            FuncKind::UserOp { op, left, right } => {
                func(op, t);
                tine(left, t);
                if let Some(r) = right {
                    tine(r, t);
                }
            }
            FuncKind::Prim(_) | FuncKind::Name(_) | FuncKind::SelfRef => {}
        }
    }
    fn expr(e: &mut Expr, t: &HashMap<(usize, usize), Vec<OperandVariant>>) {
        match &mut e.kind {
            ExprKind::Strand(items) => items.iter_mut().for_each(|x| expr(x, t)),
            ExprKind::Monadic { func: f, arg } => {
                func(f, t);
                expr(arg, t);
            }
            ExprKind::Dyadic {
                func: f,
                left,
                right,
            } => {
                func(f, t);
                expr(left, t);
                expr(right, t);
            }
            ExprKind::Assign { value, .. } => expr(value, t),
            ExprKind::Index { array, axes } => {
                expr(array, t);
                axes.iter_mut().flatten().for_each(|x| expr(x, t));
            }
            ExprKind::AssignTo {
                target,
                func: f,
                value,
            } => {
                match target {
                    Target::Indexed { axes, .. } => {
                        axes.iter_mut().flatten().for_each(|x| expr(x, t))
                    }
                    Target::Selective { expr: x, .. } => expr(x, t),
                    Target::Names(_) => {}
                }
                if let Some(f) = f {
                    func(f, t);
                }
                expr(value, t);
            }
            ExprKind::Number(_)
            | ExprKind::Str(_)
            | ExprKind::Zilde
            | ExprKind::Name(_)
            | ExprKind::SysName(_)
            | ExprKind::Alpha
            | ExprKind::Omega => {}
        }
    }
    program(prog, table);
}

/// Whether the statement that starts at token `from` (up to `⋄`, a line's end or
/// the `}` that closes its dfn) ends in a function, so that `name ← …` assigns a
/// function (`f←{⍵}`, `avg←+/÷≢`, `g←f`, `h←(+/)`) rather than an array (`b←{⍵}7`).
fn assigns_function(
    tokens: &[lexer::Spanned],
    from: usize,
    fns: &[String],
    is_function: &dyn Fn(&str) -> bool,
) -> bool {
    let mut depth = 0i32;
    let mut end = tokens.len();
    for (k, (_, t, _)) in tokens.iter().enumerate().skip(from) {
        match t {
            Token::LParen
            | Token::FnLParen
            | Token::LBrace
            | Token::OpLBrace1
            | Token::OpLBrace2
            | Token::LBracket => depth += 1,
            Token::RParen | Token::RBrace | Token::RBracket => {
                depth -= 1;
                if depth < 0 {
                    end = k;
                    break;
                }
            }
            Token::Sep if depth == 0 => {
                end = k;
                break;
            }
            _ => {}
        }
    }
    // The last token, looking through closing parentheses to what they hold last.
    let mut k = end;
    while k > from {
        k -= 1;
        if k > from
            && matches!(tokens[k - 1].1, Token::Jot | Token::Power | Token::Op2(_))
            && matches!(
                tokens[k].1,
                Token::Number(_) | Token::Numbers(_) | Token::Name(_)
            )
        {
            return true;
        }
        match &tokens[k].1 {
            Token::RParen => continue,
            Token::Prim(_)
            | Token::Op(_)
            | Token::Slash(_)
            | Token::FnName(_)
            | Token::RBrace
            | Token::AlphaAlpha
            | Token::OmegaOmega => return true,
            Token::Name(n) => return fns.contains(n) || is_function(n),
            _ => return false,
        }
    }
    false
}

/// The system names that are functions (`⎕UCS 97`).
pub const SYSTEM_FUNCTIONS: &[&str] = &["⎕UCS", "⎕NGET", "⎕NPUT", "⎕CSV"];

/// Turns `Name` tokens that hold functions into `FnName`: names assigned a function
/// in this text (see [`assigns_function`]), and names `is_function` knows; and those
/// that hold operators (assigned a dfn that is one, or known to `kind`) into
/// `OpName1`/`OpName2`.
fn classify(
    tokens: &mut [lexer::Spanned],
    is_function: &dyn Fn(&str) -> bool,
    kind: &dyn Fn(&str) -> Option<NameKind>,
) {
    let mut fns: Vec<String> = Vec::new();
    let mut ops: Vec<(String, u8)> = Vec::new();
    // System functions are functions.
    for t in tokens.iter_mut() {
        if let Token::SysName(n) = &t.1 {
            if SYSTEM_FUNCTIONS.contains(&n.as_str()) {
                t.1 = Token::FnName(n.clone());
            }
        }
    }
    for i in 0..tokens.len() {
        if let Token::Name(n) = &tokens[i].1 {
            let assigned = matches!(tokens.get(i + 1), Some((_, Token::Assign, _)));
            let defines_op = match tokens.get(i + 2) {
                Some((_, Token::OpLBrace1, _)) if assigned => Some(1),
                Some((_, Token::OpLBrace2, _)) if assigned => Some(2),
                _ => None,
            };
            // A name holding a monadic operator ends a derived function (`f←×op`).
            let function_like = |m: &str| {
                is_function(m)
                    || ops.iter().any(|(o, k)| o == m && *k == 1)
                    || kind(m) == Some(NameKind::Operator(1))
            };
            let defines = defines_op.is_none()
                && assigned
                && assigns_function(tokens, i + 2, &fns, &function_like);
            let assigns_array = assigned && !defines && defines_op.is_none();
            if let Some(k) = defines_op {
                ops.retain(|(m, _)| m != n);
                ops.push((n.clone(), k));
                fns.retain(|f| f != n);
            } else if assigned {
                ops.retain(|(m, _)| m != n);
            }
            if defines && !fns.contains(n) {
                fns.push(n.clone());
            }
            if assigns_array {
                fns.retain(|f| f != n);
            }
            let op = ops
                .iter()
                .find(|(m, _)| m == n)
                .map(|(_, k)| *k)
                .or(match kind(n) {
                    Some(NameKind::Operator(k)) if !assigned && !fns.contains(n) => Some(k),
                    _ => None,
                });
            if let Some(k) = op {
                let n = n.clone();
                tokens[i].1 = if k == 2 {
                    Token::OpName2(n)
                } else {
                    Token::OpName1(n)
                };
            } else if defines || (!assigns_array && (fns.contains(n) || is_function(n))) {
                let n = n.clone();
                tokens[i].1 = Token::FnName(n);
            }
        }
    }
}

/// Marks the `{` of each dfn that names `⍺⍺` or `⍵⍵` at its own level (not only in
/// dfns inside it) as an operator's: `OpLBrace2` when it names `⍵⍵`, else
/// `OpLBrace1`.
fn mark_operators(tokens: &mut [lexer::Spanned]) {
    // For each open brace, the operands named directly in it so far.
    let mut open: Vec<(usize, u8)> = Vec::new();
    for i in 0..tokens.len() {
        match tokens[i].1 {
            Token::LBrace => open.push((i, 0)),
            Token::AlphaAlpha => {
                if let Some(top) = open.last_mut() {
                    top.1 = top.1.max(1);
                }
            }
            Token::OmegaOmega => {
                if let Some(top) = open.last_mut() {
                    top.1 = 2;
                }
            }
            Token::RBrace => {
                if let Some((at, k)) = open.pop() {
                    match k {
                        1 => tokens[at].1 = Token::OpLBrace1,
                        2 => tokens[at].1 = Token::OpLBrace2,
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
}

/// Whether a token starts a statement's text (nothing before it in the statement).
fn starts_statement(tokens: &[lexer::Spanned], k: usize) -> bool {
    k == 0
        || matches!(
            tokens[k - 1].1,
            Token::Sep | Token::LBrace | Token::OpLBrace1 | Token::OpLBrace2 | Token::Colon
        )
}

/// Turns the other forms of assignment, at the start of a statement, into one token
/// each that the grammar tells apart: `x f←v` (`ModName`, `f` one primitive or
/// function name), `x[…]←v` and `x[…] f←v` (`IdxName`), `(a b)←v` and `a b←v`
/// (`Names`), and the `(` of `(2↑x)←v` and `(2↑x) f←v` (selective: `SelLParen`).
fn mark_assignments(tokens: Vec<lexer::Spanned>) -> Vec<lexer::Spanned> {
    let is_fn = |t: &Token| matches!(t, Token::Prim(_) | Token::FnName(_) | Token::Slash(_));
    let assign_at = |k: usize| matches!(tokens.get(k), Some((_, Token::Assign, _)));
    let mut out = Vec::with_capacity(tokens.len());
    let mut k = 0;
    while k < tokens.len() {
        let (l, t, r) = &tokens[k];
        if starts_statement(&tokens, k) {
            // `a b c←v` and `(a b c)←v`.
            let paren = *t == Token::LParen;
            let from = k + paren as usize;
            let mut end = from;
            while matches!(tokens.get(end), Some((_, Token::Name(_), _))) {
                end += 1;
            }
            let closed = !paren || matches!(tokens.get(end), Some((_, Token::RParen, _)));
            let after = end + paren as usize;
            if end - from >= 2 - paren as usize
                && closed
                && assign_at(after)
                && (paren || end - from >= 2)
            {
                let names = tokens[from..end]
                    .iter()
                    .map(|(a, t, b)| match t {
                        Token::Name(n) => (n.clone(), *a..*b),
                        _ => unreachable!("a run of names"),
                    })
                    .collect();
                out.push((*l, Token::Names(names), tokens[after - 1].2));
                k = after;
                continue;
            }
            // `(2↑x)←v`, `(2↑x) f←v`: a group that is not a run of names.
            let assigned_after = |c: usize| {
                assign_at(c + 1)
                    || tokens.get(c + 1).is_some_and(|(_, t, _)| is_fn(t)) && assign_at(c + 2)
            };
            if *t == Token::LParen && closing(&tokens, k).is_some_and(assigned_after) {
                out.push((*l, Token::SelLParen, *r));
                k += 1;
                continue;
            }
            if let Token::Name(n) = t {
                // `x f←v`.
                if tokens.get(k + 1).is_some_and(|(_, t, _)| is_fn(t)) && assign_at(k + 2) {
                    out.push((*l, Token::ModName(n.clone()), *r));
                    k += 1;
                    continue;
                }
                // `x[…]←v`, `x[…] f←v`.
                if matches!(tokens.get(k + 1), Some((_, Token::LBracket, _)))
                    && closing(&tokens, k + 1).is_some_and(assigned_after)
                {
                    out.push((*l, Token::IdxName(n.clone()), *r));
                    k += 1;
                    continue;
                }
            }
        }
        out.push(tokens[k].clone());
        k += 1;
    }
    out
}

/// The token that closes the bracket or parenthesis opened at `open`, within its
/// statement.
fn closing(tokens: &[lexer::Spanned], open: usize) -> Option<usize> {
    let mut depth = 0;
    for (j, (_, t, _)) in tokens.iter().enumerate().skip(open) {
        match t {
            Token::LParen | Token::FnLParen | Token::BindLParen | Token::LBracket => depth += 1,
            Token::RParen | Token::RBracket => {
                depth -= 1;
                if depth == 0 {
                    return Some(j);
                }
            }
            Token::Sep => return None,
            _ => {}
        }
    }
    None
}

/// Marks `(` tokens whose group ends in a function (`(+/)`, `(f)`, `({⍵})`) as
/// `FnLParen`: one token of lookahead cannot tell `1 (+) 2` from `1 (2)`.
fn mark_function_parens(tokens: &mut [lexer::Spanned]) {
    let mut open: Vec<usize> = Vec::new();
    // The `)` that close function groups: a group may end in one (`(+ (-×÷))`).
    let mut closes_function = vec![false; tokens.len()];
    // For each `)`, where its group opened.
    let mut opened_at = vec![usize::MAX; tokens.len()];
    for i in 0..tokens.len() {
        match tokens[i].1 {
            Token::LParen => open.push(i),
            Token::RParen => {
                if let Some(o) = open.pop() {
                    opened_at[i] = o;
                    let ends_in_function = i > o + 1
                        && (closes_function[i - 1]
                            || ends_in_jot_operand(tokens, i - 1, &opened_at)
                            || matches!(
                                tokens[i - 1].1,
                                Token::Prim(_)
                                    | Token::Op(_)
                                    | Token::Slash(_)
                                    | Token::FnName(_)
                                    | Token::Del
                                    | Token::RBrace
                                    | Token::AlphaAlpha
                                    | Token::OmegaOmega
                                    | Token::OpName1(_)
                            ));
                    if ends_in_function {
                        tokens[o].1 = Token::FnLParen;
                        closes_function[i] = true;
                    }
                }
            }
            _ => {}
        }
    }
}

/// Whether token `k` ends an array that is `∘`'s or `⍣`'s right operand (`×∘2`,
/// `*∘(÷2)`, `f⍣3`),
/// so that what it ends is a function.
fn ends_in_jot_operand(tokens: &[lexer::Spanned], k: usize, opened_at: &[usize]) -> bool {
    let start = match tokens[k].1 {
        Token::Number(_) | Token::Numbers(_) | Token::Name(_) => k,
        Token::RParen if opened_at[k] != usize::MAX => opened_at[k],
        _ => return false,
    };
    start > 0
        && (matches!(
            tokens[start - 1].1,
            Token::Jot | Token::Power | Token::Op2(_)
        ) || (dyadic_operator_ends_at(tokens, start - 1)
            // One number is a dyadic operator's whole right operand; of several, the
            // rest are an argument (`f op 1 2`).
            && !matches!(tokens[k].1, Token::Numbers(_))))
}

/// Whether token `k` ends a dyadic operator of the user's: its name, or the `}` of
/// one written in place.
fn dyadic_operator_ends_at(tokens: &[lexer::Spanned], k: usize) -> bool {
    match tokens[k].1 {
        Token::OpName2(_) | Token::Ready2(_) => true,
        Token::RBrace => {
            let mut depth = 0;
            for j in (0..=k).rev() {
                match tokens[j].1 {
                    Token::RBrace => depth += 1,
                    Token::LBrace | Token::OpLBrace1 | Token::OpLBrace2 => {
                        depth -= 1;
                        if depth == 0 {
                            return tokens[j].1 == Token::OpLBrace2;
                        }
                    }
                    _ => {}
                }
            }
            false
        }
        _ => false,
    }
}

/// The most tokens one statement may have: it bounds the depth of the AST, which
/// later stages walk recursively.
pub const MAX_STATEMENT_TOKENS: usize = 4096;

fn check_statement_length(tokens: &[lexer::Spanned]) -> Result<(), SyntaxError> {
    let mut count = 0;
    for (l, t, r) in tokens {
        count = if *t == Token::Sep { 0 } else { count + 1 };
        if count > MAX_STATEMENT_TOKENS {
            return Err(SyntaxError {
                unsupported: false,
                message: format!("a statement has more than {MAX_STATEMENT_TOKENS} tokens; split it with ⋄ or names"),
                span: *l..*r,
            });
        }
    }
    Ok(())
}

/// Reports unbalanced brackets with a span on the unmatched one: clearer than what an
/// LR parser says at the end of the text.
fn check_brackets(src: &str, tokens: &[lexer::Spanned]) -> Result<(), SyntaxError> {
    let mut stack: Vec<(char, Span)> = Vec::new();
    for (l, t, r) in tokens {
        let open = match t {
            Token::LParen | Token::FnLParen | Token::BindLParen | Token::SelLParen => Some('('),
            Token::LBrace | Token::OpLBrace1 | Token::OpLBrace2 => Some('{'),
            Token::LBracket => Some('['),
            _ => None,
        };
        let close = match t {
            Token::RParen => Some('('),
            Token::RBrace => Some('{'),
            Token::RBracket => Some('['),
            _ => None,
        };
        if let Some(c) = open {
            stack.push((c, *l..*r));
        } else if let Some(c) = close {
            match stack.pop() {
                Some((o, _)) if o == c => {}
                Some((_, span)) => {
                    return Err(SyntaxError {
                        unsupported: false,
                        message: format!(
                            "'{}' does not close what '{}' opened",
                            &src[*l..*r],
                            &src[span.clone()]
                        ),
                        span: *l..*r,
                    })
                }
                None => {
                    return Err(SyntaxError {
                        unsupported: false,
                        message: format!("unmatched '{}'", &src[*l..*r]),
                        span: *l..*r,
                    })
                }
            }
        }
    }
    if let Some((_, span)) = stack.pop() {
        return Err(SyntaxError {
            unsupported: false,
            message: format!("'{}' is never closed", &src[span.clone()]),
            span,
        });
    }
    Ok(())
}

fn convert_error(
    src: &str,
    e: lalrpop_util::ParseError<usize, Token, (String, Span)>,
    end: usize,
) -> SyntaxError {
    use lalrpop_util::ParseError::*;
    match e {
        InvalidToken { location } => SyntaxError {
            unsupported: false,
            message: "invalid token".into(),
            span: location..location,
        },
        UnrecognizedEof { .. } => {
            let last = src.char_indices().last().map_or(0, |(i, _)| i);
            SyntaxError {
                unsupported: false,
                message: "the expression ends too early".into(),
                span: last..end,
            }
        }
        UnrecognizedToken {
            token: (l, _, r), ..
        }
        | ExtraToken { token: (l, _, r) } => {
            let text = src.get(l..r).unwrap_or("?");
            let text = if text == "\n" { "end of line" } else { text };
            SyntaxError {
                unsupported: false,
                message: format!("unexpected '{text}'"),
                span: l..r,
            }
        }
        User {
            error: (message, span),
        } => SyntaxError {
            message,
            span,
            unsupported: false,
        },
    }
}

/// Parses with no outside function names.
pub fn parse_str(src: &str) -> Result<Program, SyntaxError> {
    parse(src, &|_| false)
}
