//! The middle of arrc: arrays and element types, the typed array IR, lowering from the
//! AST, the IR verifier, and the kernel planner (fusion).
//!
//! Architecture invariants:
//! - No IO: nothing here touches files, devices or the terminal.
//! - [`plan::plan`] takes only a [`verify::Verified`] function: unverified IR never
//!   reaches kernel planning or code generation.
//! - Every instruction has a span; errors from any stage point at the source.

pub mod array;
pub mod axes;
pub mod bounds;
pub mod display;
pub mod error;
pub mod interrupt;
pub mod ir;
pub mod lower;
#[cfg(feature = "ndarray")]
mod ndarray_conv;
pub mod plan;
pub mod random;
pub mod scalar;
pub mod verify;

pub use array::{Array, Data, ElemType, Scalar};
pub use error::{Error, ErrorClass, Result};
pub use ir::{Dim, Function, Inst, Param, Sym, Type, Value};
