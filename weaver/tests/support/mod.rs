//! IR text for the weaver's tests that reads the same on every LLVM: typed
//! pointers (`i8*`) for LLVM 14, which clang-14 emits, opaque `ptr` after.

use inkwell::context::Context;
use inkwell::memory_buffer::MemoryBuffer;
use inkwell::module::Module;

pub fn module<'ctx>(context: &'ctx Context, ir: &str) -> Module<'ctx> {
    let buffer = MemoryBuffer::create_from_memory_range_copy(ir.as_bytes(), "test.ll");
    context
        .create_module_from_ir(buffer)
        .expect("test IR parses")
}

/// `llvm.global.annotations` with one `annotation` on `function` (of type
/// `i32 (i32)`) at `app.c:line`, as clang emits it.
pub fn annotation_of(function: &str, annotation: &str, line: u32) -> String {
    let len = annotation.len() + 1;
    let entry = if cfg!(feature = "llvm14") {
        format!(
            "[1 x {{ i8*, i8*, i8*, i32, i8* }}] [{{ i8*, i8*, i8*, i32, i8* }} {{ \
             i8* bitcast (i32 (i32)* @{function} to i8*), \
             i8* getelementptr inbounds ([{len} x i8], [{len} x i8]* @.str, i32 0, i32 0), \
             i8* getelementptr inbounds ([6 x i8], [6 x i8]* @.file, i32 0, i32 0), i32 {line}, i8* null }}]"
        )
    } else {
        format!(
            "[1 x {{ ptr, ptr, ptr, i32, ptr }}] [{{ ptr, ptr, ptr, i32, ptr }} \
             {{ ptr @{function}, ptr @.str, ptr @.file, i32 {line}, ptr null }}]"
        )
    };
    format!(
        r#"@.str = private unnamed_addr constant [{len} x i8] c"{annotation}\00", section "llvm.metadata"
@.file = private unnamed_addr constant [6 x i8] c"app.c\00", section "llvm.metadata"
@llvm.global.annotations = appending global {entry}, section "llvm.metadata"
"#
    )
}

/// Calls of `advice` that pass the site of `function` (`ptr @site`, or
/// `i8* bitcast (... @site to i8*)` with typed pointers).
pub fn advice_calls(ir: &str, advice: &str, function: &str) -> usize {
    let site = format!("@__perfflow_site.{function}");
    ir.lines()
        .filter(|l| l.contains(&format!("call void @{advice}(")))
        .filter(|l| {
            l.split(&site)
                .nth(1)
                .is_some_and(|after| after.starts_with(')') || after.starts_with(' '))
        })
        .count()
}
