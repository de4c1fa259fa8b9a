//! The constant site descriptor emitted once per woven function, laid out as
//! `struct perfflow_site` in runtime/include/perfflow.h:
//!
//! ```llvm
//! @__perfflow_site.foo.copy = private global ptr null, align 8
//! @__perfflow_site.foo = private constant
//!   { i32, i32, i32, i32, ptr, ptr, ptr, ptr, ptr }
//!   { i32 2, i32 0, i32 0, i32 12, ptr @name, ptr @file, ptr null, ptr @symbol,
//!     ptr @__perfflow_site.foo.copy }, align 8
//! ```
//!
//! Everything the runtime reports about the function is computed here, once,
//! at compile time. The one writable word per site (`.copy`) is where the
//! runtime keeps the address of its own copy of the site, made on the first
//! event, so the trace never reads the site after its module is unloaded.

use inkwell::context::ContextRef;
use inkwell::module::{Linkage, Module};
use inkwell::types::{BasicTypeEnum, PointerType};
use inkwell::values::{BasicValueEnum, GlobalValue, PointerValue};
use inkwell::AddressSpace;
use perfflow_parser::Aspect;

/// Must match `PERFFLOW_SITE_ABI_VERSION` in perfflow.h.
pub const SITE_ABI_VERSION: u32 = 2;

/// What the descriptor says about one function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SiteInfo {
    pub name: String,
    pub file: String,
    pub line: u32,
    pub symbol: String,
    pub aspect: Aspect,
}

pub use perfflow_parser::names::display_name;

/// The pointer type strings and sites are passed as (`ptr`, or `i8*` before
/// opaque pointers).
pub fn byte_ptr_type<'ctx>(context: &ContextRef<'ctx>) -> PointerType<'ctx> {
    #[cfg(feature = "llvm14")]
    {
        context.i8_type().ptr_type(AddressSpace::default())
    }
    #[cfg(not(feature = "llvm14"))]
    {
        context.ptr_type(AddressSpace::default())
    }
}

fn const_cstring<'ctx>(
    module: &Module<'ctx>,
    context: &ContextRef<'ctx>,
    name: &str,
    text: &str,
) -> PointerValue<'ctx> {
    // Interior NULs cannot appear in symbols or paths; drop them to be safe.
    let bytes: Vec<u8> = text.bytes().filter(|b| *b != 0).collect();
    let value = context.const_string(&bytes, true);
    let global = module.add_global(value.get_type(), None, name);
    global.set_initializer(&value);
    global.set_constant(true);
    global.set_linkage(Linkage::Private);
    global.set_unnamed_addr(true);
    global.set_alignment(1);
    global.as_pointer_value().const_cast(byte_ptr_type(context))
}

/// Emits the descriptor for one function and returns it.
pub fn emit_site<'ctx>(module: &Module<'ctx>, info: &SiteInfo) -> GlobalValue<'ctx> {
    let context = module.get_context();
    let i32_type = context.i32_type();
    let ptr_type = byte_ptr_type(&context);
    let base = format!(
        "__perfflow_site.{}",
        info.symbol.trim_start_matches('\u{1}')
    );
    let scope = match &info.aspect.scope {
        Some(scope) => const_cstring(module, &context, &format!("{base}.scope"), scope),
        None => ptr_type.const_null(),
    };
    let copy = module.add_global(ptr_type, None, &format!("{base}.copy"));
    copy.set_initializer(&ptr_type.const_null());
    copy.set_linkage(Linkage::Private);
    copy.set_alignment(8);
    let fields: [BasicValueEnum; 9] = [
        i32_type.const_int(SITE_ABI_VERSION.into(), false).into(),
        i32_type
            .const_int(info.aspect.pointcut as u64, false)
            .into(),
        i32_type.const_int(info.aspect.flow as u64, false).into(),
        i32_type.const_int(info.line.into(), false).into(),
        const_cstring(module, &context, &format!("{base}.name"), &info.name).into(),
        const_cstring(module, &context, &format!("{base}.file"), &info.file).into(),
        scope.into(),
        const_cstring(module, &context, &format!("{base}.symbol"), &info.symbol).into(),
        copy.as_pointer_value().const_cast(ptr_type).into(),
    ];
    let field_types: Vec<BasicTypeEnum> = fields.iter().map(|f| f.get_type()).collect();
    let value = context.const_struct(&fields, false);
    let global = module.add_global(context.struct_type(&field_types, false), None, &base);
    global.set_initializer(&value);
    global.set_constant(true);
    global.set_linkage(Linkage::Private);
    global.set_alignment(8);
    global
}
