//! Small, checked helpers over the LLVM C API for what inkwell does not wrap:
//! reading constant expressions, call-site attributes, and the instruction
//! surgery that turns a call into an invoke.

use std::ffi::{c_char, c_uint};

use inkwell::llvm_sys::core::*;
use inkwell::llvm_sys::debuginfo::{LLVMInstructionGetDebugLoc, LLVMInstructionSetDebugLoc};
use inkwell::llvm_sys::prelude::*;
use inkwell::llvm_sys::{LLVMAttributeFunctionIndex, LLVMOpcode};

/// Strips constant casts and GEPs (typed-pointer IR wraps annotation operands
/// in them) down to the global they refer to.
pub fn strip_constant_casts(mut value: LLVMValueRef) -> LLVMValueRef {
    // SAFETY: only reads constants; bounded by the expression depth.
    unsafe {
        while !value.is_null() && !LLVMIsAConstantExpr(value).is_null() {
            match LLVMGetConstOpcode(value) {
                LLVMOpcode::LLVMBitCast
                | LLVMOpcode::LLVMAddrSpaceCast
                | LLVMOpcode::LLVMGetElementPtr => value = LLVMGetOperand(value, 0),
                _ => break,
            }
        }
    }
    value
}

/// The bytes of a global string constant, without the trailing NUL.
pub fn global_string(global: LLVMValueRef) -> Option<Vec<u8>> {
    // SAFETY: checks each kind before reading.
    unsafe {
        if global.is_null() || LLVMIsAGlobalVariable(global).is_null() {
            return None;
        }
        let init = LLVMGetInitializer(global);
        if init.is_null() || LLVMIsAConstantDataSequential(init).is_null() {
            return None;
        }
        let mut len = 0usize;
        let data = LLVMGetAsString(init, &mut len);
        if data.is_null() {
            return None;
        }
        let mut bytes = std::slice::from_raw_parts(data as *const u8, len).to_vec();
        while bytes.last() == Some(&0) {
            bytes.pop();
        }
        Some(bytes)
    }
}

pub fn value_name(value: LLVMValueRef) -> String {
    let mut len = 0usize;
    // SAFETY: LLVM returns a pointer to `len` bytes owned by the value.
    unsafe {
        let data = LLVMGetValueName2(value, &mut len);
        if data.is_null() {
            return String::new();
        }
        String::from_utf8_lossy(std::slice::from_raw_parts(data as *const u8, len)).into_owned()
    }
}

pub fn opcode(inst: LLVMValueRef) -> LLVMOpcode {
    // SAFETY: `inst` is an instruction.
    unsafe { LLVMGetInstructionOpcode(inst) }
}

pub fn instructions(block: LLVMBasicBlockRef) -> Vec<LLVMValueRef> {
    let mut out = Vec::new();
    // SAFETY: walks the block's instruction list.
    unsafe {
        let mut inst = LLVMGetFirstInstruction(block);
        while !inst.is_null() {
            out.push(inst);
            inst = LLVMGetNextInstruction(inst);
        }
    }
    out
}

pub fn blocks(function: LLVMValueRef) -> Vec<LLVMBasicBlockRef> {
    let mut out = Vec::new();
    // SAFETY: walks the function's block list.
    unsafe {
        let mut block = LLVMGetFirstBasicBlock(function);
        while !block.is_null() {
            out.push(block);
            block = LLVMGetNextBasicBlock(block);
        }
    }
    out
}

pub fn attribute_kind(name: &str) -> c_uint {
    // SAFETY: reads a static table.
    unsafe { LLVMGetEnumAttributeKindForName(name.as_ptr() as *const c_char, name.len()) }
}

pub fn function_has_attribute(function: LLVMValueRef, kind: c_uint) -> bool {
    // SAFETY: `function` is a function.
    unsafe { !LLVMGetEnumAttributeAtIndex(function, LLVMAttributeFunctionIndex, kind).is_null() }
}

pub fn function_has_string_attribute(function: LLVMValueRef, key: &str) -> bool {
    // SAFETY: `function` is a function; the key is passed with its length.
    unsafe {
        !LLVMGetStringAttributeAtIndex(
            function,
            LLVMAttributeFunctionIndex,
            key.as_ptr() as *const c_char,
            key.len() as c_uint,
        )
        .is_null()
    }
}

/// The function a call instruction calls directly, if any.
pub fn called_function(call: LLVMValueRef) -> Option<LLVMValueRef> {
    // SAFETY: `call` is a call or invoke.
    unsafe {
        let callee = strip_constant_casts(LLVMGetCalledValue(call));
        (!callee.is_null() && !LLVMIsAFunction(callee).is_null()).then_some(callee)
    }
}

/// Whether a call instruction (call site or callee) carries `kind`.
pub fn call_has_attribute(call: LLVMValueRef, kind: c_uint) -> bool {
    // SAFETY: `call` is a call or invoke.
    let on_site =
        unsafe { !LLVMGetCallSiteEnumAttribute(call, LLVMAttributeFunctionIndex, kind).is_null() };
    on_site || called_function(call).is_some_and(|f| function_has_attribute(f, kind))
}

pub fn is_inline_asm_call(call: LLVMValueRef) -> bool {
    // SAFETY: `call` is a call.
    unsafe { !LLVMIsAInlineAsm(LLVMGetCalledValue(call)).is_null() }
}

pub fn is_intrinsic_call(call: LLVMValueRef) -> bool {
    // SAFETY: checks the callee is a function before asking for its ID.
    called_function(call).is_some_and(|f| unsafe { LLVMGetIntrinsicID(f) != 0 })
}

/// The tail-call marker of a call; mirrors `PerfflowTailCallKind` in the
/// shim.
#[repr(C)]
#[allow(dead_code)] // built by the shim
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TailCallKind {
    None = 0,
    Tail = 1,
    MustTail = 2,
    NoTail = 3,
}

extern "C" {
    /// In `clang-plugin/WeavePass.cpp`: `CallInst::isMustTailCall` and
    /// friends, which LLVM's C API only has from LLVM 18 on.
    fn perfflow_tail_call_kind(call: LLVMValueRef) -> TailCallKind;
}

/// Whether `call` is a `musttail` call (which must stay right before its
/// ret). A plain `tail` call, as optimised IR has many, is an ordinary call.
pub fn is_musttail(call: LLVMValueRef) -> bool {
    // SAFETY: `call` is an instruction; the shim checks it is a call.
    unsafe { perfflow_tail_call_kind(call) == TailCallKind::MustTail }
}

/// Copies the debug location of `from` to `to`, when `from` has one.
pub fn copy_debug_loc(from: LLVMValueRef, to: LLVMValueRef) {
    // SAFETY: both are instructions.
    unsafe {
        let loc = LLVMInstructionGetDebugLoc(from);
        if !loc.is_null() {
            LLVMInstructionSetDebugLoc(to, loc);
        }
    }
}
