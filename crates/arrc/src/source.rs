//! Where a session's text comes from and goes: parsing with the session's names,
//! loading definitions (and where each function was written, so that an error in it
//! is drawn in its own text), output shown with `⎕←`/`⍞←`, and `⍞`/`⎕` input.

use crate::{diagnostics, Error, Session, STDLIB};
use arrc_syntax::{Program, Stmt};
use std::sync::Arc;

/// Where a function was defined: the source's name and text, and its span there.
pub(crate) struct Definition {
    pub(crate) origin: Arc<str>,
    pub(crate) text: Arc<str>,
    pub(crate) span: arrc_syntax::Span,
    /// When it was defined (definitions are saved, and loaded, in this order).
    pub(crate) order: usize,
}

impl Session {
    /// Parses `src` with this session's function and operator names known.
    pub fn parse(&self, src: &str) -> Result<Program, Error> {
        let fns = &self.env.functions;
        arrc_syntax::parse_names(src, &|n| {
            fns.get(n).map(|f| match f.operator_arity() {
                Some(k) => arrc_syntax::NameKind::Operator(k),
                None => arrc_syntax::NameKind::Function,
            })
        })
        .map_err(Error::from)
    }

    /// `parse`, or the program parsed last when `src` is its text and the functions
    /// have not changed since.
    pub(crate) fn parse_again(&self, src: &str) -> Result<Program, Error> {
        let now = self.functions_changed.get();
        if let Some((text, at, p)) = self.parsed.borrow().as_ref() {
            if text == src && *at == now {
                return Ok(p.clone());
            }
        }
        let p = self.parse(src)?;
        *self.parsed.borrow_mut() = Some((src.to_string(), now, p.clone()));
        Ok(p)
    }

    /// Loads APL source that defines functions (such as a stdlib file).
    pub fn load(&mut self, src: &str) -> Result<(), Error> {
        let prog = self.parse(src)?;
        let text: Arc<str> = Arc::from(src);
        for stmt in &prog.stmts {
            self.cpu(stmt)?;
            self.define(stmt, &text);
        }
        Ok(())
    }

    /// Names the source that later `eval` and `load` calls read (a file's path;
    /// `input` at first): errors in functions defined there say where they are.
    pub fn set_source_name(&mut self, name: &str) {
        self.origin = Arc::from(name);
    }

    /// Records where a function defined by `stmt` was written (in `text`).
    pub(crate) fn define(&mut self, stmt: &Stmt, text: &Arc<str>) {
        if let Stmt::FnDef { name, func, .. } = stmt {
            let order = self
                .definitions
                .values()
                .map(|d| d.order + 1)
                .max()
                .unwrap_or(0);
            self.definitions.insert(
                name.clone(),
                Definition {
                    origin: self.origin.clone(),
                    text: text.clone(),
                    span: func.span.clone(),
                    order,
                },
            );
        }
    }

    /// When function `name` was defined, among this session's definitions (after
    /// all of them where it was not seen).
    pub(crate) fn definition_order(&self, name: &str) -> usize {
        self.definitions.get(name).map_or(usize::MAX, |d| d.order)
    }

    /// The text function `name` was defined with (`{+/⍵}`), where this session saw
    /// its definition.
    pub(crate) fn definition_text(&self, name: &str) -> Option<String> {
        let d = self.definitions.get(name)?;
        d.text.get(d.span.clone()).map(str::to_string)
    }

    /// `e`, raised by evaluating `src`, drawn for people: in the text of the named
    /// function it arose in, with its name and line (`in avg[2]`, as Dyalog's
    /// `avg[2]`), where that function was defined in this session; else in `src`.
    pub fn render_error(&self, src: &str, e: &Error, color: bool) -> String {
        let within = e.within.as_ref().and_then(|n| {
            let d = self.definitions.get(n)?;
            let inside = d.span.start <= e.span.start && e.span.end <= d.span.end;
            (inside && e.span != (0..0) && d.text.get(d.span.start..e.span.start).is_some())
                .then_some((n, d))
        });
        match within {
            Some((n, d)) => {
                let line = d.text[d.span.start..e.span.start].matches('\n').count();
                let note = format!("in {n}[{line}]");
                diagnostics::render_in(&d.origin, &d.text, e, color, Some(&note))
            }
            None => diagnostics::render_in(&self.origin, src, e, color, None),
        }
    }

    /// What `⎕←x` showed since the last call, in order, each as the session displays
    /// it: the caller prints it (before the value, or the error, of the `eval` that
    /// made it).
    pub fn take_output(&mut self) -> Vec<String> {
        self.env.take_output()
    }

    /// Where `⍞` (character input) and `⎕` (evaluated input) read their lines: `f` is
    /// called with the output lines not yet shown (show them first) and the prompt
    /// (show it without a newline), and gives the line typed, or `None` at the end of
    /// the input (an INPUT INTERRUPT). Without one, input is NOT YET SUPPORTED.
    ///
    /// ```
    /// let mut s = arrc::Session::new(arrc::Backend::Cpu).unwrap();
    /// s.set_input(|_shown, _prompt| Some("Ada".to_string()));
    /// let v = s.eval("⍞←'Name: ' ⋄ n←⍞ ⋄ ⌽n").unwrap().value.unwrap();
    /// assert_eq!(arrc::display(&v), "adA :emaN");
    /// ```
    pub fn set_input(&mut self, f: impl FnMut(&[String], &str) -> Option<String> + Send + 'static) {
        self.env.input = Some(arrc_ref::Input(std::sync::Arc::new(std::sync::Mutex::new(
            f,
        ))));
    }

    /// Loads every file of the standard library (`stdlib/` in the source tree, built
    /// into the binary).
    pub fn load_stdlib(&mut self) -> Result<(), Error> {
        for (_, src) in STDLIB {
            self.load(src)?;
        }
        Ok(())
    }
}
