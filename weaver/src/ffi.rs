//! The C boundary: the plugin entry point that LLVM looks up, and the call
//! through which the C++ shim hands each module to the weaver. Nothing
//! unwinds across it.

use std::cell::Cell;
use std::ffi::{c_char, c_void};
use std::mem::ManuallyDrop;
use std::panic::{catch_unwind, AssertUnwindSafe};

use inkwell::llvm_sys::prelude::LLVMModuleRef;
use inkwell::module::Module;

use crate::weave::{weave_module_tracked, Options, WeaveError};

/// `llvm::PassPluginLibraryInfo`, laid out as the C++ aggregate.
#[repr(C)]
pub struct PassPluginLibraryInfo {
    api_version: u32,
    plugin_name: *const c_char,
    plugin_version: *const c_char,
    register_callbacks: Option<unsafe extern "C" fn(*mut c_void)>,
}

extern "C" {
    /// Defined in clang-plugin/WeavePass.cpp.
    fn perfflow_plugin_info() -> PassPluginLibraryInfo;
}

/// The symbol LLVM's plugin loader looks up. It must be defined in Rust: a
/// C++ definition inside the shim's static archive would be hidden by the
/// cdylib's export list.
#[no_mangle]
pub extern "C" fn llvmGetPassPluginInfo() -> PassPluginLibraryInfo {
    // SAFETY: a plain C++ function returning a trivially copyable aggregate.
    unsafe { perfflow_plugin_info() }
}

/// What happened to a module; mirrors `PerfflowWeaveOutcome` in the shim.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WeaveOutcome {
    Unchanged = 0,
    Changed = 1,
    /// Strict mode: malformed annotations; the module was left unchanged.
    Rejected = 2,
    /// The weaver failed; see stderr.
    InternalError = 3,
    /// `PERFFLOW_WEAVE_FILTER` names a file that cannot be read or parsed
    /// (reported on stderr); the module was left unchanged.
    BadFilter = 4,
}

/// Weaves one module. Called by the shim's pass for every module clang or opt
/// runs it on.
///
/// # Safety
/// `module` must be a valid module that LLVM owns for the whole call.
#[no_mangle]
pub unsafe extern "C" fn perfflow_weave_module(module: LLVMModuleRef) -> WeaveOutcome {
    let options = match Options::from_env() {
        Ok(options) => options,
        Err(message) => {
            eprintln!("perfflow: PERFFLOW_WEAVE_FILTER: {message}");
            return WeaveOutcome::BadFilter;
        }
    };
    let changing = Cell::new(false);
    let result = catch_unwind(AssertUnwindSafe(|| {
        // The module belongs to LLVM: never let inkwell dispose of it.
        // SAFETY: `module` is valid for the duration of this call.
        let module = ManuallyDrop::new(unsafe { Module::new(module) });
        weave_module_tracked(&module, &options, &changing)
    }));
    match result {
        Ok(Ok(report)) if report.woven.is_empty() => WeaveOutcome::Unchanged,
        Ok(Ok(_)) => WeaveOutcome::Changed,
        Ok(Err(WeaveError::Rejected { .. })) => WeaveOutcome::Rejected,
        Err(_) if !changing.get() => {
            eprintln!(
                "perfflow: internal error in the weaver; this module was left unchanged \
                 and is not traced (please report it with the source file)"
            );
            WeaveOutcome::InternalError
        }
        Err(_) => {
            eprintln!(
                "perfflow: internal error in the weaver while weaving; this module may be \
                 only partly traced (please report it with the source file)"
            );
            // The module did change: analyses must not be kept.
            WeaveOutcome::Changed
        }
    }
}
