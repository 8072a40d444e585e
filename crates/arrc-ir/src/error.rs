//! Errors of every stage after parsing, as data: an APL error class, a message and the
//! byte span of the source text it points at. Only the CLI and REPL render them.

use arrc_syntax::{Span, SyntaxError};

/// The error classes an APL user knows, plus the compiler's own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum ErrorClass {
    /// SYNTAX ERROR: text that is not APL, or a function without its argument.
    Syntax,
    /// VALUE ERROR: a name with no value.
    Value,
    /// DOMAIN ERROR: an argument outside the function's domain.
    Domain,
    /// LENGTH ERROR: lengths that do not agree.
    Length,
    /// RANK ERROR: a rank the function does not take.
    Rank,
    /// INDEX ERROR: an index outside its axis.
    Index,
    /// AXIS ERROR: an axis the array does not have.
    Axis,
    /// Valid arrc that this backend cannot run yet (the CPU reference can).
    Unsupported,
    /// A result too large to hold (APL's WS FULL).
    WsFull,
    /// The Vulkan device failed or is missing, or a device limit was exceeded.
    Device,
    /// The user stopped the statement (Ctrl-C), as APL's INTERRUPT.
    Interrupt,
    /// A file that cannot be read or made (`⎕NGET`, `⎕NPUT`, `⎕CSV`).
    FileName,
}

impl ErrorClass {
    /// One of APL's own error classes (SYNTAX … AXIS ERROR), raised by the program's
    /// data or text, not by a limit of arrc or the device.
    pub fn is_apl(self) -> bool {
        use ErrorClass::*;
        matches!(
            self,
            Syntax | Value | Domain | Length | Rank | Index | Axis | FileName
        )
    }

    /// The name as APL prints it.
    pub fn name(self) -> &'static str {
        match self {
            ErrorClass::Syntax => "SYNTAX ERROR",
            ErrorClass::Value => "VALUE ERROR",
            ErrorClass::Domain => "DOMAIN ERROR",
            ErrorClass::Length => "LENGTH ERROR",
            ErrorClass::Rank => "RANK ERROR",
            ErrorClass::Index => "INDEX ERROR",
            ErrorClass::Axis => "AXIS ERROR",
            ErrorClass::Unsupported => "NOT YET SUPPORTED",
            ErrorClass::WsFull => "WS FULL",
            ErrorClass::Device => "DEVICE ERROR",
            ErrorClass::Interrupt => "INTERRUPT",
            ErrorClass::FileName => "FILE NAME ERROR",
        }
    }
}

/// An error with its class and the source span it points at.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{}: {message}", class.name())]
pub struct Error {
    /// Its class (`LENGTH ERROR`, …).
    pub class: ErrorClass,
    /// What went wrong, for people.
    pub message: String,
    /// The bytes of the source text it points at (`0..0`: none).
    pub span: Span,
    /// The device path would run this if an array the program computes were known
    /// on the host first (a shape argument, or an array whose length the device
    /// computes): a caller may compute that part first and try again.
    pub needs_known: bool,
    /// The innermost named function the error arose in (its span is then in that
    /// function's text, which may be another source than the statement's).
    pub within: Option<String>,
}

impl Error {
    /// An error of `class` at `span`.
    pub fn new(class: ErrorClass, message: impl Into<String>, span: Span) -> Self {
        Error {
            class,
            message: message.into(),
            span,
            needs_known: false,
            within: None,
        }
    }

    /// This error, as arising in the named function `name` unless it arose in one
    /// called from there.
    pub fn within(mut self, name: &str) -> Self {
        if self.within.is_none() {
            self.within = Some(name.to_string());
        }
        self
    }
}

impl From<SyntaxError> for Error {
    fn from(e: SyntaxError) -> Self {
        let class = if e.unsupported {
            ErrorClass::Unsupported
        } else {
            ErrorClass::Syntax
        };
        Error::new(class, e.message, e.span)
    }
}

/// A result whose error is an APL [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Shorthand constructors: `err::length("…", span)`.
pub mod err {
    use super::*;
    /// A VALUE ERROR.
    pub fn value(m: impl Into<String>, s: Span) -> Error {
        Error::new(ErrorClass::Value, m, s)
    }
    /// A DOMAIN ERROR.
    pub fn domain(m: impl Into<String>, s: Span) -> Error {
        Error::new(ErrorClass::Domain, m, s)
    }
    /// A LENGTH ERROR.
    pub fn length(m: impl Into<String>, s: Span) -> Error {
        Error::new(ErrorClass::Length, m, s)
    }
    /// A RANK ERROR.
    pub fn rank(m: impl Into<String>, s: Span) -> Error {
        Error::new(ErrorClass::Rank, m, s)
    }
    /// An INDEX ERROR.
    pub fn index(m: impl Into<String>, s: Span) -> Error {
        Error::new(ErrorClass::Index, m, s)
    }
    /// An AXIS ERROR.
    pub fn axis(m: impl Into<String>, s: Span) -> Error {
        Error::new(ErrorClass::Axis, m, s)
    }
    /// WS FULL.
    pub fn ws_full(m: impl Into<String>, s: Span) -> Error {
        Error::new(ErrorClass::WsFull, m, s)
    }
    /// A function used without the argument it needs: APL calls this a SYNTAX ERROR.
    pub fn syntax_like(m: impl Into<String>, s: Span) -> Error {
        Error::new(ErrorClass::Syntax, m, s)
    }
    /// NOT YET SUPPORTED.
    pub fn unsupported(m: impl Into<String>, s: Span) -> Error {
        Error::new(ErrorClass::Unsupported, m, s)
    }
    /// Not supported while some computed array is unknown to the host
    /// ([`Error::needs_known`]).
    pub fn needs_known(m: impl Into<String>, s: Span) -> Error {
        Error {
            needs_known: true,
            ..unsupported(m, s)
        }
    }
}

/// Why an array operand of an operator of the user's fails: its body does not read
/// with that operand an array.
pub const ARRAY_OPERAND: &str = arrc_syntax::ARRAY_OPERAND_UNREAD;
