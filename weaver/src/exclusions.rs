//! Functions that must stay unwoven even when annotated, because advice in
//! them would crash the program:
//!
//! - a `naked` function has no prologue: its body is assembly that finds
//!   arguments in registers and returns by itself, so a call woven in
//!   clobbers them and exit advice is never reached;
//! - an ifunc resolver runs while the dynamic loader applies relocations
//!   (in a static program, before thread-local storage exists), long before
//!   the runtime can start;
//! - so does every function of the module that a resolver calls, directly
//!   or through other functions. Only calls inside this module are seen.
//!
//! ```llvm
//! @add = ifunc i32 (i32), ptr @resolve   ; @resolve and what it calls
//! define i32 @bare(i32) naked { ... }    ; naked
//! ```

use std::collections::HashMap;

use inkwell::llvm_sys::core::*;
use inkwell::llvm_sys::prelude::LLVMValueRef;
use inkwell::llvm_sys::LLVMOpcode;
use inkwell::module::Module;

use crate::ir;

/// Why an annotated function is not woven.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Exclusion {
    Naked,
    IfuncResolver,
    /// Called, directly or not, by the named ifunc resolver.
    CalledByResolver(String),
}

impl Exclusion {
    pub fn message(&self) -> String {
        const EARLY: &str = "(it runs while relocations are applied, before the runtime can start)";
        match self {
            Exclusion::Naked => {
                "naked function left unwoven (it has no prologue for advice)".to_string()
            }
            Exclusion::IfuncResolver => format!("ifunc resolver left unwoven {EARLY}"),
            Exclusion::CalledByResolver(resolver) => {
                format!("function called by the ifunc resolver {resolver} left unwoven {EARLY}")
            }
        }
    }
}

/// The functions of `module` that must not be woven, whatever their
/// annotations.
pub struct Exclusions {
    naked: u32,
    /// Resolvers map to `None`, what they call to the resolver's name.
    early: HashMap<LLVMValueRef, Option<String>>,
}

impl Exclusions {
    pub fn of(module: &Module) -> Self {
        let mut early = HashMap::new();
        // SAFETY: walks the module's ifunc list; each resolver is checked
        // to be a function before use.
        unsafe {
            let mut ifunc = LLVMGetFirstGlobalIFunc(module.as_mut_ptr());
            while !ifunc.is_null() {
                let resolver = ir::strip_constant_casts(LLVMGetGlobalIFuncResolver(ifunc));
                if !resolver.is_null() && !LLVMIsAFunction(resolver).is_null() {
                    early.entry(resolver).or_insert(None);
                }
                ifunc = LLVMGetNextGlobalIFunc(ifunc);
            }
        }
        let resolvers: Vec<LLVMValueRef> = early.keys().copied().collect();
        for resolver in resolvers {
            let name = ir::value_name(resolver);
            let mut stack = vec![resolver];
            while let Some(function) = stack.pop() {
                for callee in direct_callees(function) {
                    if let std::collections::hash_map::Entry::Vacant(e) = early.entry(callee) {
                        e.insert(Some(name.clone()));
                        stack.push(callee);
                    }
                }
            }
        }
        Exclusions {
            naked: ir::attribute_kind("naked"),
            early,
        }
    }

    /// Why `function` must not be woven, if it must not.
    pub fn of_function(&self, function: LLVMValueRef) -> Option<Exclusion> {
        if ir::function_has_attribute(function, self.naked) {
            return Some(Exclusion::Naked);
        }
        self.early.get(&function).map(|by| match by {
            None => Exclusion::IfuncResolver,
            Some(resolver) => Exclusion::CalledByResolver(resolver.clone()),
        })
    }
}

/// The functions defined in this module that `function` calls directly.
fn direct_callees(function: LLVMValueRef) -> Vec<LLVMValueRef> {
    let mut out = Vec::new();
    for block in ir::blocks(function) {
        for inst in ir::instructions(block) {
            if !matches!(
                ir::opcode(inst),
                LLVMOpcode::LLVMCall | LLVMOpcode::LLVMInvoke | LLVMOpcode::LLVMCallBr
            ) {
                continue;
            }
            if let Some(callee) = ir::called_function(inst) {
                // SAFETY: `callee` is a function.
                if unsafe { LLVMIsDeclaration(callee) } == 0 {
                    out.push(callee);
                }
            }
        }
    }
    out
}
