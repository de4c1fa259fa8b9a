//! Functions woven because a filter file selects them
//! (`PERFFLOW_WEAVE_FILTER=file`, see `perfflow_parser::filter`), with no
//! annotation in their source.
//!
//! Every function defined in the module is a candidate except those the
//! compiler made itself (global constructors, `__cxx_global_var_init`,
//! outlined regions), those whose body is not emitted here
//! (`available_externally`) and those already annotated: an annotation in
//! the source wins, whatever the filter says. Functions are matched by the
//! name the trace shows and by the module's source file, so a function
//! defined in a header belongs to the file that includes it.
//!
//! A pass sees one module at a time: a rule that matches no function of the
//! module is reported once per module, and in a project of several files a
//! rule meant for one file is reported by the others. The runtime's
//! `-finstrument-functions` hooks see the whole process instead.

use std::collections::HashSet;

use inkwell::llvm_sys::core::*;
use inkwell::llvm_sys::prelude::LLVMValueRef;
use inkwell::llvm_sys::LLVMLinkage;
use inkwell::module::Module;
use inkwell::values::AsValueRef;
use perfflow_parser::filter::Filter;
use perfflow_parser::Aspect;

use crate::ir;
use crate::site::display_name;

/// One function the filter selects.
pub struct Selected {
    pub function: LLVMValueRef,
    pub symbol: String,
    pub name: String,
    pub aspect: Aspect,
}

/// What the filter does to one module.
pub struct Selection {
    pub selected: Vec<Selected>,
    /// Rules (indexes into the filter) that matched no function.
    pub unmatched: Vec<usize>,
}

/// Symbols of functions the compiler makes itself, never selected by a
/// filter (a rule such as `include file app.cpp` means the user's code).
const COMPILER_MADE: &[&str] = &[
    "_GLOBAL__",
    "__cxx_",
    "__clang_",
    ".omp_",
    "__omp_",
    "llvm.",
];

/// The module's source file as the compiler was given it.
pub fn source_file(module: &Module) -> String {
    module.get_source_file_name().to_string_lossy().into_owned()
}

/// Applies `filter` to every candidate function of `module`; `annotated`
/// are the functions with an annotation of their own, matched against the
/// rules (so that a rule is not reported as matching nothing) but never
/// selected.
pub fn select(module: &Module, filter: &Filter, annotated: &HashSet<LLVMValueRef>) -> Selection {
    let file = source_file(module);
    let mut hit = vec![false; filter.rules.len()];
    let mut selected = Vec::new();
    let mut function = module.get_first_function().map(|f| f.as_value_ref());
    while let Some(f) = function {
        // SAFETY: `f` is a function of the module.
        function = unsafe {
            let next = LLVMGetNextFunction(f);
            (!next.is_null()).then_some(next)
        };
        // SAFETY: as above.
        let (declaration, linkage) = unsafe { (LLVMIsDeclaration(f) != 0, LLVMGetLinkage(f)) };
        let symbol = ir::value_name(f);
        if declaration
            || linkage == LLVMLinkage::LLVMAvailableExternallyLinkage
            || COMPILER_MADE.iter().any(|p| symbol.starts_with(p))
        {
            continue;
        }
        let name = display_name(&symbol);
        let decision = filter.decide(&name, Some(&file));
        for &i in &decision.matched {
            hit[i] = true;
        }
        if annotated.contains(&f) {
            continue;
        }
        if let Some(aspect) = decision.aspect {
            selected.push(Selected {
                function: f,
                symbol,
                name,
                aspect,
            });
        }
    }
    let unmatched = (0..hit.len()).filter(|&i| !hit[i]).collect();
    Selection {
        selected,
        unmatched,
    }
}

/// `file: warning: perfflow: …` naming the rules that matched nothing.
pub fn report_unmatched(module: &Module, filter: &Filter, path: &str, unmatched: &[usize]) {
    if unmatched.is_empty() {
        return;
    }
    // A rule written for every name (`*`) that matches nothing says only
    // that the file defines nothing of its kind (a file of data or
    // declarations): nothing to tell the user.
    let rules: Vec<String> = unmatched
        .iter()
        .map(|&i| &filter.rules[i])
        .filter(|rule| rule.pattern != "*")
        .map(|rule| rule.describe())
        .collect();
    if rules.is_empty() {
        return;
    }
    eprintln!(
        "{}: warning: perfflow: rules of {path} that match no function of this file: {}",
        source_file(module),
        rules.join(", ")
    );
}
