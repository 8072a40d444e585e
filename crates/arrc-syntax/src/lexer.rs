//! The logos lexer of arrc.
//!
//! Invariants:
//! - Lexing never panics; an unknown character becomes a [`LexError`] with its span.
//! - Spans are byte offsets into the source text.
//! - `⍝` comments and blanks are skipped; newlines are kept because they separate
//!   statements, like `⋄`.

use logos::Logos;

/// A primitive function glyph.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Prim {
    Plus,
    Minus,
    Times,
    Divide,
    Stile,
    Ceiling,
    Floor,
    Star,
    Log,
    Circle,
    Bang,
    Less,
    LessEq,
    Equal,
    GreaterEq,
    Greater,
    NotEqual,
    And,
    Or,
    Nand,
    Nor,
    Tilde,
    Rho,
    Comma,
    CommaBar,
    Reverse,
    ReverseFirst,
    Transpose,
    Take,
    Drop,
    Iota,
    Tally,
    Epsilon,
    Where,
    GradeUp,
    GradeDown,
    Squad,
    Match,
    /// `⊢`: its right argument (or its only one).
    Right,
    /// `⊣`: its left argument (or its only one).
    Left,
    /// `/` used as a function (compress, replicate).
    Slash,
    /// `⌿` used as a function.
    SlashBar,
    /// `\` used as a function (expand).
    Backslash,
    /// `⍀` used as a function.
    BackslashBar,
    /// `∪`: unique (monadic), union (dyadic).
    Union,
    /// `∩`: intersection.
    Intersection,
    /// `⊤`: encode.
    Encode,
    /// `⊥`: decode.
    Decode,
    /// `⍷`: find.
    Find,
    /// `?`: roll (monadic), deal (dyadic).
    Roll,
    /// `⌹`: matrix inverse (monadic), matrix divide (dyadic).
    Domino,
    /// `⍕`: format.
    Format,
    /// `⍎`: execute.
    Execute,
    /// `⊂`: enclose and partitioned enclose.
    Enclose,
    /// `⊃`: first (disclose, ⎕ML=1) and pick.
    Disclose,
    /// `⊆`: nest and partition.
    Nest,
    /// `⍺⊇⍵`: select (`(⊂⍺)⌷⍵`, the major cells of ⍵ that ⍺ names). Not a Dyalog
    /// primitive: dzaima/APL's and Extended Dyalog's, which issue 17 asks for.
    Select,
}

impl Prim {
    /// Functions that rearrange their argument's elements rather than compute new ones.
    pub fn is_structural(self) -> bool {
        use Prim::*;
        matches!(
            self,
            Rho | Comma | CommaBar | Reverse | ReverseFirst | Transpose | Take | Drop | Tally
        )
    }

    /// The glyph as typed.
    pub fn glyph(self) -> char {
        use Prim::*;
        match self {
            Plus => '+',
            Minus => '-',
            Times => '×',
            Divide => '÷',
            Stile => '|',
            Ceiling => '⌈',
            Floor => '⌊',
            Star => '*',
            Log => '⍟',
            Circle => '○',
            Bang => '!',
            Less => '<',
            LessEq => '≤',
            Equal => '=',
            GreaterEq => '≥',
            Greater => '>',
            NotEqual => '≠',
            And => '∧',
            Or => '∨',
            Nand => '⍲',
            Nor => '⍱',
            Tilde => '~',
            Rho => '⍴',
            Comma => ',',
            CommaBar => '⍪',
            Reverse => '⌽',
            ReverseFirst => '⊖',
            Transpose => '⍉',
            Take => '↑',
            Drop => '↓',
            Iota => '⍳',
            Tally => '≢',
            Epsilon => '∊',
            Where => '⍸',
            GradeUp => '⍋',
            GradeDown => '⍒',
            Squad => '⌷',
            Match => '≡',
            Right => '⊢',
            Left => '⊣',
            Slash => '/',
            SlashBar => '⌿',
            Backslash => '\\',
            BackslashBar => '⍀',
            Union => '∪',
            Intersection => '∩',
            Encode => '⊤',
            Decode => '⊥',
            Find => '⍷',
            Roll => '?',
            Domino => '⌹',
            Format => '⍕',
            Execute => '⍎',
            Enclose => '⊂',
            Disclose => '⊃',
            Nest => '⊆',
            Select => '⊇',
        }
    }
}

/// A monadic operator glyph (its operand stands on its left).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op1 {
    /// `/`: reduce along the last axis.
    Reduce,
    /// `⌿`: reduce along the first axis.
    ReduceFirst,
    /// `\`: scan along the last axis.
    Scan,
    /// `⍀`: scan along the first axis.
    ScanFirst,
    /// `¨`: each.
    Each,
    /// `⍨`: commute / selfie.
    Commute,
}

impl Op1 {
    pub fn glyph(self) -> char {
        match self {
            Op1::Reduce => '/',
            Op1::ReduceFirst => '⌿',
            Op1::Scan => '\\',
            Op1::ScanFirst => '⍀',
            Op1::Each => '¨',
            Op1::Commute => '⍨',
        }
    }
}

/// A dyadic operator glyph other than `∘` and `⍣` (which the grammar treats on
/// their own).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op2 {
    /// `⍤`: rank (`f⍤k`) or atop (`f⍤g`).
    Rank,
    /// `⍥`: over.
    Over,
    /// `@`: at.
    At,
    /// `⌺`: stencil.
    Stencil,
}

impl Op2 {
    pub fn glyph(self) -> char {
        match self {
            Op2::Rank => '⍤',
            Op2::Over => '⍥',
            Op2::At => '@',
            Op2::Stencil => '⌺',
        }
    }
}

/// Dyalog APL's glyphs that arrc does not read yet, with their names: written, they
/// are NOT YET SUPPORTED rather than an unknown character.
pub fn unsupported_glyph(c: char) -> Option<&'static str> {
    Some(match c {
        '⌶' => "I-beam",
        '⍠' => "variant operator",
        '→' => "branch",
        _ => return None,
    })
}

/// Why a token could not be read.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum LexError {
    #[default]
    UnknownChar,
    BadNumber,
}

/// A numeric literal: an integer written in digits that fits in 64 bits stays exact
/// (`4611686018427387905` is not rounded to a float); anything else is a float.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Num {
    Int(i64),
    Float(f64),
}

impl std::hash::Hash for Num {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        match self {
            Num::Int(i) => (0u8, *i).hash(h),
            // (0.0 and -0.0 compare equal, so they hash alike.)
            Num::Float(f) => (1u8, if *f == 0.0 { 0 } else { f.to_bits() }).hash(h),
        }
    }
}

impl Num {
    pub fn as_f64(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Float(f) => f,
        }
    }
}

impl std::fmt::Display for Num {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Num::Int(i) => write!(f, "{i}"),
            Num::Float(v) => write!(f, "{v}"),
        }
    }
}

fn number(lex: &mut logos::Lexer<'_, Token>) -> Result<Num, LexError> {
    let text: String = lex
        .slice()
        .chars()
        .map(|c| if c == '¯' { '-' } else { c })
        .collect();
    if let Ok(i) = text.parse::<i64>() {
        return Ok(Num::Int(i));
    }
    let v: f64 = text.parse().map_err(|_| LexError::BadNumber)?;
    if v.is_finite() {
        Ok(Num::Float(v))
    } else {
        Err(LexError::BadNumber)
    }
}

/// The characters a quoted literal stands for (`'it''s'` is `it's`).
fn unquote(text: &str) -> String {
    let inner = text
        .strip_prefix('\'')
        .and_then(|t| t.strip_suffix('\''))
        .unwrap_or(text);
    inner.replace("''", "'")
}

/// The tokens of arrc. `Name` may be turned into `FnName` by [`crate::classify`].
#[derive(Logos, Clone, Debug, PartialEq)]
#[logos(error = LexError)]
#[logos(skip r"[ \t\r]+")]
#[logos(skip(r"⍝[^\n]*", allow_greedy = true))]
pub enum Token {
    #[regex(r"¯?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE]¯?[0-9]+)?", number)]
    Number(Num),
    /// Two or more adjacent numbers: one vector literal, as in APL (set by
    /// [`merge_numbers`], never by logos).
    Numbers(Vec<Num>),
    #[regex(r"[A-Za-z_∆⍙][A-Za-z0-9_∆⍙¯]*", |lex| lex.slice().to_string())]
    Name(String),
    /// A name known to hold a function (set by classification, never by logos).
    FnName(String),
    /// `⎕IO`, `⎕UCS`…, `⎕` alone (output `⎕←x`, evaluated input) and `⍞` (character
    /// input and output).
    #[regex(r"⎕[A-Za-z]*", |lex| lex.slice().to_string())]
    #[token("⍞", |lex| lex.slice().to_string())]
    SysName(String),
    /// A character literal's characters: the quotes taken off, `''` made one quote.
    #[regex(r"'([^']|'')*'", |lex| unquote(lex.slice()))]
    Str(String),
    #[token("⍺")]
    Alpha,
    #[token("⍵")]
    Omega,
    #[token("⍺⍺")]
    AlphaAlpha,
    #[token("⍵⍵")]
    OmegaOmega,
    #[token("∇")]
    Del,
    #[token("⍬")]
    Zilde,
    #[token("←")]
    Assign,
    #[token("(")]
    LParen,
    /// A `(` whose group holds a function, such as `(+/)` (set by classification).
    FnLParen,
    /// The `(` of a selective assignment, `(2↑x)←v` (set by `mark_assignments`).
    SelLParen,
    #[token(")")]
    RParen,
    #[token("{")]
    LBrace,
    #[token("}")]
    RBrace,
    #[token("[")]
    LBracket,
    #[token("]")]
    RBracket,
    #[token(";")]
    Semi,
    #[token(":")]
    Colon,
    #[token("⋄")]
    #[token("\n")]
    Sep,
    #[token(".")]
    Dot,
    #[token("∘")]
    Jot,
    #[token("⍣")]
    Power,
    #[token("⌸")]
    Key,
    #[token("⍤", |_| Op2::Rank)]
    #[token("⌺", |_| Op2::Stencil)]
    #[token("⍥", |_| Op2::Over)]
    #[token("@", |_| Op2::At)]
    Op2(Op2),
    /// The `{` of a dfn that names `⍺⍺` (a monadic operator) or `⍵⍵` (a dyadic
    /// one) at its own level (set by `mark_operators`).
    OpLBrace1,
    OpLBrace2,
    /// A name known to hold a monadic or dyadic operator (set by classification).
    OpName1(String),
    OpName2(String),
    /// A name modified by the function that follows and `←` (`x+←1`; set by
    /// `mark_assignments`).
    ModName(String),
    /// A name indexed by the brackets that follow, then assigned (`x[2]←0`; set by
    /// `mark_assignments`).
    IdxName(String),
    /// Names assigned together (`(a b)←v`, `a b←v`; set by `mark_assignments`).
    Names(Vec<(String, std::ops::Range<usize>)>),
    /// An array and the `@` that takes it as its left operand (`0@2 4`; set by
    /// [`mark_jots`]).
    AtBound(Bound),
    /// An array bound as the left operand of an operator of the user's (`3 f 4` with
    /// `f←{⍺⍺×⍵}`; set by [`mark_jots`]).
    OpBound(Bound),
    /// An operator dfn whose body reads only with array operands, read already
    /// (monadic and dyadic operators; set by `parse_names`).
    Ready1(std::rc::Rc<crate::ast::Func>),
    Ready2(std::rc::Rc<crate::ast::Func>),
    /// The `∘` of an outer product `∘.f` (set by [`mark_jots`], never by logos).
    OuterJot,
    /// An array and the `∘` that binds it as a left operand (`2∘×`, `v∘⍳`; set by
    /// [`mark_jots`]).
    Bound(Bound),
    /// The `(` of a parenthesised array that `∘` binds as a left operand
    /// (`(x+1)∘×`; set by [`mark_jots`]).
    BindLParen,
    #[token("/", |_| Prim::Slash)]
    #[token("⌿", |_| Prim::SlashBar)]
    #[token("\\", |_| Prim::Backslash)]
    #[token("⍀", |_| Prim::BackslashBar)]
    Slash(Prim),
    #[token("¨", |_| Op1::Each)]
    #[token("⍨", |_| Op1::Commute)]
    Op(Op1),
    #[token("+", |_| Prim::Plus)]
    #[token("-", |_| Prim::Minus)]
    #[token("−", |_| Prim::Minus)]
    #[token("×", |_| Prim::Times)]
    #[token("÷", |_| Prim::Divide)]
    #[token("|", |_| Prim::Stile)]
    #[token("⌈", |_| Prim::Ceiling)]
    #[token("⌊", |_| Prim::Floor)]
    #[token("*", |_| Prim::Star)]
    #[token("⍟", |_| Prim::Log)]
    #[token("○", |_| Prim::Circle)]
    #[token("!", |_| Prim::Bang)]
    #[token("<", |_| Prim::Less)]
    #[token("≤", |_| Prim::LessEq)]
    #[token("=", |_| Prim::Equal)]
    #[token("≥", |_| Prim::GreaterEq)]
    #[token(">", |_| Prim::Greater)]
    #[token("≠", |_| Prim::NotEqual)]
    #[token("∧", |_| Prim::And)]
    #[token("∨", |_| Prim::Or)]
    #[token("⍲", |_| Prim::Nand)]
    #[token("⍱", |_| Prim::Nor)]
    #[token("~", |_| Prim::Tilde)]
    #[token("⍴", |_| Prim::Rho)]
    #[token(",", |_| Prim::Comma)]
    #[token("⍪", |_| Prim::CommaBar)]
    #[token("⌽", |_| Prim::Reverse)]
    #[token("⊖", |_| Prim::ReverseFirst)]
    #[token("⍉", |_| Prim::Transpose)]
    #[token("↑", |_| Prim::Take)]
    #[token("↓", |_| Prim::Drop)]
    #[token("⍳", |_| Prim::Iota)]
    #[token("≢", |_| Prim::Tally)]
    #[token("∊", |_| Prim::Epsilon)]
    #[token("⍸", |_| Prim::Where)]
    #[token("⍋", |_| Prim::GradeUp)]
    #[token("⍒", |_| Prim::GradeDown)]
    #[token("⌷", |_| Prim::Squad)]
    #[token("≡", |_| Prim::Match)]
    #[token("⊢", |_| Prim::Right)]
    #[token("⊣", |_| Prim::Left)]
    #[token("∪", |_| Prim::Union)]
    #[token("∩", |_| Prim::Intersection)]
    #[token("⊤", |_| Prim::Encode)]
    #[token("⊥", |_| Prim::Decode)]
    #[token("⍷", |_| Prim::Find)]
    #[token("?", |_| Prim::Roll)]
    #[token("⌹", |_| Prim::Domino)]
    #[token("⍕", |_| Prim::Format)]
    #[token("⍎", |_| Prim::Execute)]
    #[token("⊂", |_| Prim::Enclose)]
    #[token("⊃", |_| Prim::Disclose)]
    #[token("⊆", |_| Prim::Nest)]
    #[token("⊇", |_| Prim::Select)]
    Prim(Prim),
}

/// A token with its byte span.
pub type Spanned = (usize, Token, usize);

/// Lexes `src` into tokens with byte spans, or the first lexical error.
pub fn lex(src: &str) -> Result<Vec<Spanned>, (LexError, std::ops::Range<usize>)> {
    let mut out = Vec::new();
    let mut lexer = Token::lexer(src);
    while let Some(tok) = lexer.next() {
        let span = lexer.span();
        match tok {
            Ok(t) => out.push((span.start, t, span.end)),
            Err(e) => return Err((e, span)),
        }
    }
    Ok(out)
}

/// The array of a `Bound` token.
#[derive(Clone, Debug, PartialEq)]
pub enum Bound {
    Numbers(Vec<Num>),
    Name(String),
    Alpha,
    Omega,
    /// A strand of the others (`x 1 2`, as a user operator's operand).
    Items(Vec<Bound>),
}

/// Tells the three uses of `∘` apart before parsing (one token of lookahead cannot):
/// `∘.` of an outer product becomes `OuterJot`; the strand of numbers and names (not
/// functions') before a `∘` that a function follows becomes one `Bound` token with
/// it (`2∘×`, `x 1 2∘×`: stranding binds tighter than an operator to its left
/// operand, `take_strand`), and a parenthesised array's `(` before such a `∘`
/// becomes `BindLParen`; any other `∘` composes or binds a right operand. An array
/// before `@` (the same forms, and `⍺ ⍵`) is its left operand likewise (`AtBound`,
/// `BindLParen`), and so is an array before an operator of the user's (`OpBound`).
pub fn mark_jots(tokens: Vec<Spanned>) -> Vec<Spanned> {
    let mut out: Vec<Spanned> = Vec::with_capacity(tokens.len());
    let mut it = tokens.into_iter().peekable();
    // Open groups, and where the group that the last `)` closed opened.
    let mut open: Vec<usize> = vec![];
    let mut closed_from: Option<usize> = None;
    while let Some((l, t, r)) = it.next() {
        if t == Token::Power {
            closed_from = None;
            out.push((l, t, r));
            split_operand(&mut it, &mut out);
            continue;
        }
        if matches!(
            t,
            Token::OpName1(_)
                | Token::OpName2(_)
                | Token::OpLBrace1
                | Token::OpLBrace2
                | Token::Ready1(_)
                | Token::Ready2(_)
        ) {
            // An array on a user operator's left is its left operand (`3 f`, `x f`,
            // `(x+1) f`). Stranding binds tighter: a strand of names and numbers is
            // the operand whole (`x 1 2 f`); one with a parenthesised item before
            // it (`(a) x f`) is not read here (a SYNTAX ERROR, not another meaning).
            if let Some(o) = closed_from {
                let plain_before = o == 0 || bound_array(&out[o - 1].1).is_none();
                if out[o].1 == Token::LParen && plain_before && !parenthesised_before(&out, o) {
                    out[o].1 = Token::BindLParen;
                }
            } else if let Some((start, b, end)) = take_strand(&mut out) {
                out.push((start, Token::OpBound(b), end));
            }
            closed_from = None;
            out.push((l, t, r));
            continue;
        }
        if t == Token::Op2(Op2::At) {
            // An array on `@`'s left is its left operand (`0@2 4`, `x@i`, `(⍵×2)@i`).
            if let Some(o) = closed_from {
                if out[o].1 == Token::LParen {
                    out[o].1 = Token::BindLParen;
                }
            // (Not another operator's right operand: `×∘10@2` is `(×∘10)@2`.)
            } else if let Some((start, b, _)) = take_strand(&mut out) {
                closed_from = None;
                out.push((start, Token::AtBound(b), r));
                continue;
            }
            closed_from = None;
            out.push((l, t, r));
            continue;
        }
        if t != Token::Jot {
            closed_from = None;
            match t {
                Token::LParen | Token::FnLParen | Token::SelLParen => open.push(out.len()),
                Token::RParen => closed_from = open.pop(),
                _ => {}
            }
            out.push((l, t, r));
            continue;
        }
        let next = it.peek().map(|(_, t, _)| t.clone());
        if next == Some(Token::Dot) {
            out.push((l, Token::OuterJot, r));
            continue;
        }
        let function_follows = matches!(
            next,
            Some(
                Token::Prim(_)
                    | Token::FnName(_)
                    | Token::LBrace
                    | Token::FnLParen
                    | Token::Del
                    | Token::Slash(_)
            )
        );
        if let (Some(o), true) = (closed_from, function_follows) {
            if out[o].1 == Token::LParen {
                out[o].1 = Token::BindLParen;
                out.push((l, t, r));
                continue;
            }
        }
        match function_follows.then(|| take_strand(&mut out)).flatten() {
            Some((start, b, _)) => out.push((start, Token::Bound(b), r)),
            None => {
                out.push((l, t, r));
                // A right operand is one item: `×∘2 3` is `(×∘2) 3` (and `f⍣2 3`).
                split_operand(&mut it, &mut out);
            }
        }
    }
    out
}

impl Bound {
    /// The expression it stands for, spanning `span`.
    pub fn into_expr(self, span: std::ops::Range<usize>) -> crate::ast::Expr {
        use crate::ast::{Expr, ExprKind};
        let kind = match self {
            Bound::Numbers(v) if v.len() == 1 => ExprKind::Number(v[0]),
            Bound::Numbers(v) => ExprKind::Strand(
                v.into_iter()
                    .map(|n| Expr::new(ExprKind::Number(n), span.clone()))
                    .collect(),
            ),
            Bound::Name(n) => ExprKind::Name(n),
            Bound::Alpha => ExprKind::Alpha,
            Bound::Omega => ExprKind::Omega,
            Bound::Items(items) => ExprKind::Strand(
                items
                    .into_iter()
                    .map(|b| b.into_expr(span.clone()))
                    .collect(),
            ),
        };
        Expr::new(kind, span)
    }
}

/// The array a token stands for when it is an operator's left operand by itself.
fn bound_array(t: &Token) -> Option<Bound> {
    match t {
        Token::Number(n) => Some(Bound::Numbers(vec![*n])),
        Token::Numbers(v) => Some(Bound::Numbers(v.clone())),
        Token::Name(n) => Some(Bound::Name(n.clone())),
        Token::Alpha => Some(Bound::Alpha),
        Token::Omega => Some(Bound::Omega),
        _ => None,
    }
}

/// Whether the token before `k` is a parenthesised array or another array APL would
/// strand with what follows, which `take_strand` does not read.
fn parenthesised_before(out: &[Spanned], k: usize) -> bool {
    k > 0 && matches!(out[k - 1].1, Token::RParen | Token::Zilde | Token::Str(_))
}

/// The strand of names and numbers that ends `out`, taken off as one operand
/// (stranding binds tighter than an operator to its left operand: `x 1 2∘×` binds
/// `x 1 2`), with where it starts and ends; `None` when `out` does not end in one, or
/// it is another operator's right operand (`×∘10@2` is `(×∘10)@2`), or a
/// parenthesised item stands before it (not read: a SYNTAX ERROR later, not another
/// meaning).
fn take_strand(out: &mut Vec<Spanned>) -> Option<(usize, Bound, usize)> {
    bound_array(&out.last()?.1)?;
    let mut from = out.len() - 1;
    while from > 0 && bound_array(&out[from - 1].1).is_some() {
        from -= 1;
    }
    let operand = from > 0 && matches!(out[from - 1].1, Token::Jot | Token::Power | Token::Op2(_));
    if operand || parenthesised_before(out, from) {
        return None;
    }
    let several = from + 1 < out.len();
    // (Numbers written together are items of the strand too.)
    let mut items: Vec<Bound> = out[from..]
        .iter()
        .filter_map(|(_, t, _)| bound_array(t))
        .flat_map(|b| match b {
            Bound::Numbers(v) if several => {
                v.into_iter().map(|n| Bound::Numbers(vec![n])).collect()
            }
            b => vec![b],
        })
        .collect();
    let (start, end) = (out[from].0, out[out.len() - 1].2);
    out.truncate(from);
    let b = if items.len() == 1 {
        items.remove(0)
    } else {
        Bound::Items(items)
    };
    Some((start, b, end))
}

/// After a dyadic operator: numbers that follow are its right operand, the first of
/// them, and an argument, the rest.
fn split_operand(
    it: &mut std::iter::Peekable<std::vec::IntoIter<Spanned>>,
    out: &mut Vec<Spanned>,
) {
    if let Some((nl, Token::Numbers(v), nr)) = it.peek().cloned() {
        it.next();
        out.push((nl, Token::Number(v[0]), nr));
        let rest = match &v[1..] {
            [one] => Token::Number(*one),
            more => Token::Numbers(more.to_vec()),
        };
        out.push((nl, rest, nr));
    }
}

/// Merges runs of adjacent numbers into one `Numbers` token: in APL `1 2 3` is a single
/// vector literal, so `1 2 3[2]` indexes the whole vector and `x 1 2` is `x (1 2)`.
pub fn merge_numbers(tokens: Vec<Spanned>) -> Vec<Spanned> {
    let mut out: Vec<Spanned> = Vec::with_capacity(tokens.len());
    for (l, t, r) in tokens {
        match (out.last_mut(), t) {
            (Some((_, Token::Number(a), end)), Token::Number(b)) => {
                let a = *a;
                *end = r;
                let last = out.len() - 1;
                out[last].1 = Token::Numbers(vec![a, b]);
            }
            (Some((_, Token::Numbers(v), end)), Token::Number(b)) => {
                v.push(b);
                *end = r;
            }
            (_, t) => out.push((l, t, r)),
        }
    }
    out
}
