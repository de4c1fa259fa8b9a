//! Small, checked helpers over the LLVM C API for what inkwell does not wrap:
//! reading constant expressions, call-site attributes, and the instruction
//! surgery that turns a call into an invoke.

use std::ffi::{c_char, c_uint, CString};
use std::ptr;

use inkwell::llvm_sys::core::*;
use inkwell::llvm_sys::debuginfo::{LLVMInstructionGetDebugLoc, LLVMInstructionSetDebugLoc};
use inkwell::llvm_sys::prelude::*;
use inkwell::llvm_sys::{LLVMAttributeFunctionIndex, LLVMAttributeReturnIndex, LLVMOpcode};

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

/// Whether the call carries operand bundles (detected from the operand count,
/// which works on every LLVM version): such calls are left as they are.
pub fn has_operand_bundles(call: LLVMValueRef) -> bool {
    // SAFETY: `call` is a call: operands are the arguments, bundle operands,
    // then the callee.
    unsafe { LLVMGetNumOperands(call) as u32 != LLVMGetNumArgOperands(call) + 1 }
}

/// Whether `call` is a `musttail` call (which must stay right before its ret).
pub fn is_musttail(call: LLVMValueRef) -> bool {
    #[cfg(any(feature = "llvm18", feature = "llvm19", feature = "llvm20"))]
    {
        use inkwell::llvm_sys::LLVMTailCallKind;
        // SAFETY: `call` is a call instruction.
        unsafe { LLVMGetTailCallKind(call) == LLVMTailCallKind::LLVMTailCallKindMustTail }
    }
    #[cfg(not(any(feature = "llvm18", feature = "llvm19", feature = "llvm20")))]
    {
        // Before LLVM 18 the C API cannot tell musttail from tail; at the
        // pipeline start only musttail calls carry a tail marker.
        // SAFETY: `call` is a call instruction.
        unsafe { LLVMIsTailCall(call) != 0 }
    }
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

/// Whether every use of `block` is a terminator or a PHI, i.e. its address is
/// not taken, so it can be split by moving its head into a new block.
pub fn block_is_splittable(block: LLVMBasicBlockRef) -> bool {
    // SAFETY: walks the use list of the block value.
    unsafe {
        let mut u = LLVMGetFirstUse(LLVMBasicBlockAsValue(block));
        while !u.is_null() {
            let user = LLVMGetUser(u);
            if LLVMIsATerminatorInst(user).is_null() && LLVMIsAPHINode(user).is_null() {
                return false;
            }
            u = LLVMGetNextUse(u);
        }
    }
    true
}

/// Replaces `call` with an `invoke` of the same callee, arguments, calling
/// convention, attributes, debug location and metadata, unwinding to
/// `unwind`. The instructions before the call move into a new block that
/// takes the place of the old one for its predecessors; the old block keeps
/// the instructions after the call and becomes the invoke's normal successor.
///
/// # Safety
/// `call` must be a non-musttail `call` without operand bundles in a block
/// for which [`block_is_splittable`] holds; `unwind` must start with a
/// landing pad of the same function.
pub unsafe fn convert_call_to_invoke(
    context: LLVMContextRef,
    builder: LLVMBuilderRef,
    call: LLVMValueRef,
    unwind: LLVMBasicBlockRef,
) {
    let tail = LLVMGetInstructionParent(call);
    let head = LLVMInsertBasicBlockInContext(context, tail, c"".as_ptr());

    // 1. Predecessors now enter through the head block. PHIs in successors
    //    keep naming the old block: it still holds the terminator.
    let mut users = Vec::new();
    let mut u = LLVMGetFirstUse(LLVMBasicBlockAsValue(tail));
    while !u.is_null() {
        users.push(LLVMGetUser(u));
        u = LLVMGetNextUse(u);
    }
    for user in users {
        if LLVMIsATerminatorInst(user).is_null() {
            continue;
        }
        for i in 0..LLVMGetNumSuccessors(user) {
            if LLVMGetSuccessor(user, i) == tail {
                LLVMSetSuccessor(user, i, head);
            }
        }
    }

    // 2. Move everything before the call into the head block, in order.
    LLVMPositionBuilderAtEnd(builder, head);
    let mut inst = LLVMGetFirstInstruction(tail);
    while !inst.is_null() && inst != call {
        let next = LLVMGetNextInstruction(inst);
        LLVMInstructionRemoveFromParent(inst);
        LLVMInsertIntoBuilder(builder, inst);
        inst = next;
    }

    // 3. The invoke, a faithful copy of the call.
    let nargs = LLVMGetNumArgOperands(call);
    let mut args: Vec<LLVMValueRef> = (0..nargs).map(|i| LLVMGetOperand(call, i)).collect();
    let name = CString::new(value_name(call)).unwrap_or_default();
    LLVMSetValueName2(call, c"".as_ptr(), 0); // the invoke takes the name over
    let invoke = LLVMBuildInvoke2(
        builder,
        LLVMGetCalledFunctionType(call),
        LLVMGetCalledValue(call),
        if args.is_empty() {
            ptr::null_mut()
        } else {
            args.as_mut_ptr()
        },
        nargs,
        tail,
        unwind,
        name.as_ptr(),
    );
    LLVMSetInstructionCallConv(invoke, LLVMGetInstructionCallConv(call));
    let indices = [LLVMAttributeFunctionIndex, LLVMAttributeReturnIndex]
        .into_iter()
        .chain(1..=nargs);
    for index in indices {
        let count = LLVMGetCallSiteAttributeCount(call, index);
        if count == 0 {
            continue;
        }
        let mut attrs = vec![ptr::null_mut(); count as usize];
        LLVMGetCallSiteAttributes(call, index, attrs.as_mut_ptr());
        for attr in attrs {
            LLVMAddCallSiteAttribute(invoke, index, attr);
        }
    }
    copy_debug_loc(call, invoke);
    let mut count = 0usize;
    let entries = LLVMInstructionGetAllMetadataOtherThanDebugLoc(call, &mut count);
    if !entries.is_null() {
        for i in 0..count as c_uint {
            let kind = LLVMValueMetadataEntriesGetKind(entries, i);
            let md = LLVMValueMetadataEntriesGetMetadata(entries, i);
            LLVMSetMetadata(invoke, kind, LLVMMetadataAsValue(context, md));
        }
        LLVMDisposeValueMetadataEntries(entries);
    }

    // 4. The invoke replaces the call.
    LLVMReplaceAllUsesWith(call, invoke);
    LLVMInstructionEraseFromParent(call);
}
