#![allow(non_snake_case)] // the library must be named libWeavePass.so, as upstream's plugin is
//! The perfflow weaver: an LLVM pass, loaded into clang with
//! `-fpass-plugin=libWeavePass.so` (or into `opt` as `-passes=perfflow-weave`),
//! that finds functions annotated with `@critical_path(...)` and weaves calls
//! to the perfflow runtime around their bodies.
//!
//! Data flow: `llvm.global.annotations` ([`annotations`]) → parsed aspect
//! (`perfflow_parser`) → one constant site descriptor per function ([`site`])
//! → enter/exit advice woven into the function ([`weave`]). The C++ in
//! `clang-plugin/WeavePass.cpp` only registers the pass and calls
//! [`ffi::perfflow_weave_module`].

pub mod annotations;
mod diag;
mod exclusions;
pub mod ffi;
mod ir;
mod selection;
pub mod site;
pub mod weave;

pub use weave::{weave_module, FilterFile, Options, WeaveError, WeaveReport};
