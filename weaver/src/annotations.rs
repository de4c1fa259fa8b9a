//! Reads `llvm.global.annotations`, where clang records every
//! `__attribute__((annotate("…")))` on a function definition:
//!
//! ```llvm
//! @llvm.global.annotations = appending global [1 x { ptr, ptr, ptr, i32, ptr }]
//!   [{ ptr @foo, ptr @.str, ptr @.str.1, i32 12, ptr null }], section "llvm.metadata"
//! ;      function  annotation  source file  line  arguments
//! ```

use inkwell::llvm_sys::core::*;
use inkwell::llvm_sys::prelude::LLVMValueRef;
use inkwell::module::Module;
use inkwell::values::AsValueRef;

use crate::ir;

/// One annotation string on one function.
#[derive(Debug, Clone)]
pub struct FunctionAnnotation {
    pub function: LLVMValueRef,
    pub text: String,
    pub file: String,
    pub line: u32,
}

/// Every annotation on a function of `module`, in source order. Entries that
/// are not functions (annotated globals) are left out.
pub fn function_annotations(module: &Module) -> Vec<FunctionAnnotation> {
    let Some(global) = module.get_global("llvm.global.annotations") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    // SAFETY: every step checks the kind of constant before reading it.
    unsafe {
        let init = LLVMGetInitializer(global.as_value_ref());
        if init.is_null() || LLVMIsAConstantArray(init).is_null() {
            return out;
        }
        for i in 0..LLVMGetNumOperands(init) as u32 {
            let entry = LLVMGetOperand(init, i);
            if entry.is_null()
                || LLVMIsAConstantStruct(entry).is_null()
                || LLVMGetNumOperands(entry) < 4
            {
                continue;
            }
            let function = ir::strip_constant_casts(LLVMGetOperand(entry, 0));
            if function.is_null() || LLVMIsAFunction(function).is_null() {
                continue;
            }
            let Some(text) = ir::global_string(ir::strip_constant_casts(LLVMGetOperand(entry, 1)))
            else {
                continue;
            };
            let file = ir::global_string(ir::strip_constant_casts(LLVMGetOperand(entry, 2)))
                .unwrap_or_default();
            let line_value = LLVMGetOperand(entry, 3);
            let line = if !line_value.is_null() && !LLVMIsAConstantInt(line_value).is_null() {
                u32::try_from(LLVMConstIntGetZExtValue(line_value)).unwrap_or(0)
            } else {
                0
            };
            out.push(FunctionAnnotation {
                function,
                text: String::from_utf8_lossy(&text).into_owned(),
                file: String::from_utf8_lossy(&file).into_owned(),
                line,
            });
        }
    }
    out
}
