//! The weaving pass. For a function annotated
//! `@critical_path(pointcut='around')` it turns
//!
//! ```llvm
//! define i32 @foo(i32 %n) {
//! entry:
//!   %r = call i32 @work(i32 %n)
//!   ret i32 %r
//! }
//! ```
//!
//! into
//!
//! ```llvm
//! define i32 @foo(i32 %n) "perfflow.woven" personality ptr @__gxx_personality_v0 {
//! entry:
//!   %on = load atomic i8, ptr @perfflow_enabled monotonic, align 1
//!   %c = icmp ne i8 %on, 0
//!   br i1 %c, label %enter, label %body
//! enter:
//!   call void @perfflow_site_enter(ptr @__perfflow_site._Z3fooi)
//!   br label %body
//! body:
//!   %r = invoke i32 @work(i32 %n) to label %cont unwind label %perfflow.cleanup
//! cont:
//!   ; the same test of @perfflow_enabled around
//!   call void @perfflow_site_exit(ptr @__perfflow_site._Z3fooi)
//!   ret i32 %r
//! perfflow.cleanup:
//!   %lp = landingpad { ptr, i32 } cleanup
//!   call void @perfflow_site_exit_unwind(ptr @__perfflow_site._Z3fooi)
//!   resume { ptr, i32 } %lp
//! }
//! ```
//!
//! Steps, per module:
//!  1. read every annotation and parse the ones that are ours, and add the
//!     functions a filter file selects ([`crate::selection`]); leave out,
//!     with a warning, functions advice would crash ([`crate::exclusions`]:
//!     naked functions, ifunc resolvers and what they call);
//!  2. report malformed ones (`file:line: warning: perfflow: …`), and in strict
//!     mode stop before anything changes;
//!  3. for each function to weave: emit its site descriptor, then weave enter
//!     advice at entry and exit advice on every way out — before each `ret`
//!     (before a `musttail` call that precedes it), before each call that ends
//!     the function without returning (`exit`, `abort`, any noreturn call
//!     followed by `unreachable`), before each `resume`, and in a cleanup
//!     landing pad that every call which may throw now unwinds through;
//!     the last two ways out are by unwinding, and call the runtime's
//!     `perfflow_site_exit_unwind`, which marks the slice `raised`;
//!  4. mark the function `"perfflow.woven"` so that weaving twice weaves once.
//!
//! Enter and exit advice on the normal paths runs only while the runtime's
//! flag `perfflow_enabled` is set, so a program run with `log-enable=False`
//! pays one load and one branch per advice, not a call. The flag starts set:
//! the first advice starts the runtime, which clears it when tracing is off.
//! The cleanup pad calls unconditionally (exceptions are not a hot path).

use std::cell::Cell;
use std::collections::{HashMap, HashSet};
use std::fmt;

use inkwell::attributes::AttributeLoc;
use inkwell::context::AsContextRef;
use inkwell::llvm_sys::core::*;
use inkwell::llvm_sys::prelude::*;
use inkwell::llvm_sys::{LLVMAtomicOrdering, LLVMIntPredicate, LLVMOpcode};
use inkwell::module::Module;
use inkwell::types::AsTypeRef;
use inkwell::values::{AsValueRef, FunctionValue};
use perfflow_parser::filter::Filter;
use perfflow_parser::{parse_annotation, Annotation, Aspect};

use crate::annotations::{function_annotations, FunctionAnnotation};
use crate::diag::{Diagnostic, Severity};
use crate::exclusions::Exclusions;
use crate::ir;
use crate::selection;
use crate::site::{byte_ptr_type, display_name, emit_site, SiteInfo};

/// Function attribute that marks a woven function.
pub const WOVEN_ATTRIBUTE: &str = "perfflow.woven";
pub const ENTER_ADVICE: &str = "perfflow_site_enter";
pub const EXIT_ADVICE: &str = "perfflow_site_exit";
/// Exit advice on the ways out by unwinding (cleanup pads, `resume`).
pub const UNWIND_EXIT_ADVICE: &str = "perfflow_site_exit_unwind";
/// The runtime's `i8` flag: advice is called only while it is non-zero.
pub const ENABLED_FLAG: &str = "perfflow_enabled";

extern "C" {
    /// In `clang-plugin/WeavePass.cpp`: splits `before`'s block into a
    /// conditional block and the rest; returns the conditional block's
    /// terminator.
    fn perfflow_split_if_then(cond: LLVMValueRef, before: LLVMValueRef) -> LLVMValueRef;
    /// In `clang-plugin/WeavePass.cpp`: LLVM's
    /// `changeToInvokeAndSplitBasicBlock`; `unwind` starts with a landing
    /// pad.
    fn perfflow_call_to_invoke(call: LLVMValueRef, unwind: LLVMBasicBlockRef) -> LLVMBasicBlockRef;
}

/// Functions that end the process or thread without returning, even where a
/// header forgot to say `noreturn`.
/// The jumps of `longjmp` leave the function too: its slice ends there,
/// whatever follows the call (UBSan puts a check after a `noreturn` call
/// where there would be `unreachable`).
const TERMINATING_FUNCTIONS: &[&str] = &[
    "exit",
    "_exit",
    "_Exit",
    "quick_exit",
    "abort",
    "pthread_exit",
    "longjmp",
    "_longjmp",
    "siglongjmp",
    "__longjmp_chk",
];

/// Settings read from the compiler's environment.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// `PERFFLOW_WEAVE_STRICT=1`: a malformed annotation fails the compilation.
    pub strict: bool,
    /// `PERFFLOW_WEAVE_VERBOSE=1`: list every woven function on stderr.
    pub verbose: bool,
    /// `PERFFLOW_WEAVE_FILTER=file`: functions to weave without annotations.
    pub filter: Option<FilterFile>,
}

/// A filter file and where it was read from.
#[derive(Debug, Clone)]
pub struct FilterFile {
    pub path: String,
    pub filter: Filter,
}

impl FilterFile {
    /// Reads and parses the filter file at `path`.
    pub fn load(path: &str) -> Result<FilterFile, String> {
        Ok(FilterFile {
            path: path.to_string(),
            filter: Filter::load(std::path::Path::new(path))?,
        })
    }
}

impl Options {
    /// The options of the environment; an error names a filter file that
    /// cannot be read or parsed.
    pub fn from_env() -> Result<Self, String> {
        let on = |name: &str| {
            std::env::var(name)
                .map(|v| {
                    matches!(
                        v.trim().to_ascii_lowercase().as_str(),
                        "1" | "true" | "yes" | "on"
                    )
                })
                .unwrap_or(false)
        };
        let filter = match std::env::var("PERFFLOW_WEAVE_FILTER") {
            Ok(path) if !path.trim().is_empty() => Some(FilterFile::load(path.trim())?),
            _ => None,
        };
        Ok(Options {
            strict: on("PERFFLOW_WEAVE_STRICT"),
            verbose: on("PERFFLOW_WEAVE_VERBOSE"),
            filter,
        })
    }
}

/// What weaving a module did.
#[derive(Debug, Default)]
pub struct WeaveReport {
    pub woven: Vec<SiteInfo>,
    /// Malformed annotations, already reported on stderr.
    pub malformed: usize,
}

#[derive(Debug)]
pub enum WeaveError {
    /// Strict mode and `count` malformed annotations: nothing was woven.
    Rejected { count: usize },
}

impl fmt::Display for WeaveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WeaveError::Rejected { count } => {
                write!(
                    f,
                    "{count} malformed perfflow annotation(s) with PERFFLOW_WEAVE_STRICT=1"
                )
            }
        }
    }
}

/// One function to weave and the aspect to weave into it.
struct Plan {
    function: LLVMValueRef,
    info: SiteInfo,
}

/// Weaves every annotated function of `module`.
pub fn weave_module(module: &Module, options: &Options) -> Result<WeaveReport, WeaveError> {
    weave_module_tracked(module, options, &Cell::new(false))
}

/// [`weave_module`], setting `changing` just before the first change to the
/// module, so a caller that catches a panic can tell whether the module is
/// still as it was. Everything that reads, parses or can fail comes first.
pub fn weave_module_tracked(
    module: &Module,
    options: &Options,
    changing: &Cell<bool>,
) -> Result<WeaveReport, WeaveError> {
    // Step 1: read and parse.
    let mut by_function: Vec<(LLVMValueRef, Vec<FunctionAnnotation>)> = Vec::new();
    let mut index: HashMap<LLVMValueRef, usize> = HashMap::new();
    for annotation in function_annotations(module) {
        let slot = *index.entry(annotation.function).or_insert_with(|| {
            by_function.push((annotation.function, Vec::new()));
            by_function.len() - 1
        });
        by_function[slot].1.push(annotation);
    }

    let exclusions = Exclusions::of(module);
    let mut plans = Vec::new();
    let mut malformed = 0;
    let severity = if options.strict {
        Severity::Error
    } else {
        Severity::Warning
    };
    for (function, annotations) in &by_function {
        let function = *function;
        // SAFETY: `function` is a function of this module.
        let is_declaration = unsafe { LLVMIsDeclaration(function) != 0 };
        if is_declaration || ir::function_has_string_attribute(function, WOVEN_ATTRIBUTE) {
            continue;
        }
        let symbol = ir::value_name(function);
        let name = display_name(&symbol);
        let mut chosen: Option<(Aspect, &FunctionAnnotation)> = None;
        let report = |annotation: &FunctionAnnotation, severity, problems: &[&str]| {
            Diagnostic {
                file: &annotation.file,
                line: annotation.line,
                severity,
                problems,
                annotation: &annotation.text,
                function: &name,
            }
            .emit()
        };
        for annotation in annotations {
            match parse_annotation(&annotation.text) {
                Annotation::Foreign => {}
                Annotation::Invalid(errors) => {
                    malformed += 1;
                    let problems: Vec<&str> = errors.iter().map(|e| e.message.as_str()).collect();
                    report(annotation, severity, &problems);
                    // A function with a malformed annotation stays unwoven.
                    chosen = None;
                    break;
                }
                Annotation::Aspect(aspect) if chosen.is_none() => {
                    chosen = Some((aspect, annotation))
                }
                Annotation::Aspect(_) => report(
                    annotation,
                    Severity::Warning,
                    &["more than one @critical_path annotation; the first one is used"],
                ),
            }
        }
        if let (Some((_, annotation)), Some(exclusion)) =
            (&chosen, exclusions.of_function(function))
        {
            report(annotation, Severity::Warning, &[&exclusion.message()]);
            continue;
        }
        if let Some((aspect, annotation)) = chosen {
            let line = subprogram_line(function).unwrap_or(annotation.line);
            plans.push(Plan {
                function,
                info: SiteInfo {
                    name,
                    file: annotation.file.clone(),
                    line,
                    symbol,
                    aspect,
                },
            });
        }
    }

    // Step 1b: functions a filter file selects, unless annotated.
    if let Some(file) = &options.filter {
        let annotated: HashSet<LLVMValueRef> = by_function.iter().map(|(f, _)| *f).collect();
        let selection = selection::select(module, &file.filter, &annotated);
        selection::report_unmatched(module, &file.filter, &file.path, &selection.unmatched);
        let source = selection::source_file(module);
        for chosen in selection.selected {
            if let Some(exclusion) = exclusions.of_function(chosen.function) {
                eprintln!(
                    "{source}: warning: perfflow: {} (selected by {}): {}",
                    chosen.name,
                    file.path,
                    exclusion.message()
                );
                continue;
            }
            plans.push(Plan {
                function: chosen.function,
                info: SiteInfo {
                    name: chosen.name,
                    file: source.clone(),
                    line: subprogram_line(chosen.function).unwrap_or(0),
                    symbol: chosen.symbol,
                    aspect: chosen.aspect,
                },
            });
        }
    }

    // Step 2: strict mode rejects before changing anything.
    if options.strict && malformed > 0 {
        return Err(WeaveError::Rejected { count: malformed });
    }

    // Steps 3 and 4.
    let mut report = WeaveReport {
        woven: Vec::new(),
        malformed,
    };
    if plans.is_empty() {
        return Ok(report);
    }
    changing.set(true);
    let advice = Advice::declare(module);
    for plan in plans {
        let site = emit_site(module, &plan.info)
            .as_pointer_value()
            .const_cast(byte_ptr_type(&module.get_context()));
        weave_function(
            module,
            &advice,
            plan.function,
            site.as_value_ref(),
            &plan.info.aspect,
        );
        if options.verbose {
            eprintln!(
                "perfflow: wove {} ({}) at {}:{}",
                plan.info.name,
                plan.info.aspect.pointcut.as_str(),
                plan.info.file,
                plan.info.line
            );
        }
        report.woven.push(plan.info);
    }
    Ok(report)
}

/// The line of the function's definition from debug info, when there is any.
fn subprogram_line(function: LLVMValueRef) -> Option<u32> {
    use inkwell::llvm_sys::debuginfo::{LLVMDISubprogramGetLine, LLVMGetSubprogram};
    // SAFETY: `function` is a function; the subprogram is checked for null.
    unsafe {
        let sp = LLVMGetSubprogram(function);
        (!sp.is_null())
            .then(|| LLVMDISubprogramGetLine(sp))
            .filter(|line| *line > 0)
    }
}

/// The runtime entry points woven code calls.
struct Advice<'ctx> {
    enter: FunctionValue<'ctx>,
    exit: FunctionValue<'ctx>,
    unwind_exit: FunctionValue<'ctx>,
    /// `perfflow_enabled`, an external `i8`.
    enabled: LLVMValueRef,
}

impl<'ctx> Advice<'ctx> {
    fn declare(module: &Module<'ctx>) -> Self {
        let context = module.get_context();
        let ty = context
            .void_type()
            .fn_type(&[byte_ptr_type(&context).into()], false);
        let nounwind = context.create_enum_attribute(ir::attribute_kind("nounwind"), 0);
        let get = |name: &str| {
            let f = module
                .get_function(name)
                .unwrap_or_else(|| module.add_function(name, ty, None));
            f.add_attribute(AttributeLoc::Function, nounwind);
            f
        };
        let i8_type = context.i8_type();
        let enabled = module
            .get_global(ENABLED_FLAG)
            .unwrap_or_else(|| module.add_global(i8_type, None, ENABLED_FLAG));
        Advice {
            enter: get(ENTER_ADVICE),
            exit: get(EXIT_ADVICE),
            unwind_exit: get(UNWIND_EXIT_ADVICE),
            enabled: enabled.as_value_ref(),
        }
    }
}

/// Where exit advice goes in one function, found before anything changes.
#[derive(Default)]
struct Exits {
    /// Instructions to put exit advice right before.
    before: Vec<LLVMValueRef>,
    /// Existing landing pads: made to run on every exception (cleanup).
    landing_pads: Vec<LLVMValueRef>,
    /// Calls that may throw out of the function: they become invokes.
    throwing_calls: Vec<LLVMValueRef>,
}

fn find_exits(function: LLVMValueRef) -> Exits {
    let mut exits = Exits::default();
    let nounwind = ir::attribute_kind("nounwind");
    let noreturn = ir::attribute_kind("noreturn");
    // A C++20 coroutine before CoroSplit: its body becomes the ramp and the
    // resume and destroy functions, so a cleanup pad made here would run
    // the exit advice in resumptions, whose enter is the ramp's. Its slice
    // is the ramp's run: exit advice at its returns only.
    let coroutine = ir::function_has_attribute(function, ir::attribute_kind("presplitcoroutine"))
        || ir::function_has_string_attribute(function, "coroutine.presplit");
    let may_unwind = !ir::function_has_attribute(function, nounwind) && !coroutine;
    for block in ir::blocks(function) {
        let insts = ir::instructions(block);
        for (i, &inst) in insts.iter().enumerate() {
            match ir::opcode(inst) {
                LLVMOpcode::LLVMRet => exits
                    .before
                    .push(musttail_before(&insts[..i]).unwrap_or(inst)),
                LLVMOpcode::LLVMResume if !coroutine => exits.before.push(inst),
                LLVMOpcode::LLVMLandingPad if !coroutine => exits.landing_pads.push(inst),
                LLVMOpcode::LLVMCall => {
                    if ir::is_inline_asm_call(inst) || ir::is_intrinsic_call(inst) {
                        continue;
                    }
                    let ends_function = ir::called_function(inst).is_some_and(|f| {
                        TERMINATING_FUNCTIONS.contains(&ir::value_name(f).as_str())
                    }) || (ir::call_has_attribute(inst, noreturn)
                        && insts
                            .get(i + 1)
                            .is_some_and(|n| ir::opcode(*n) == LLVMOpcode::LLVMUnreachable));
                    let may_throw = may_unwind
                        && !ir::call_has_attribute(inst, nounwind)
                        && !ir::is_musttail(inst);
                    if may_throw {
                        // Unwinding (a throw, pthread_exit's forced unwind)
                        // runs the exit advice in the cleanup pad.
                        exits.throwing_calls.push(inst);
                    } else if ends_function {
                        exits.before.push(inst);
                    }
                }
                _ => {}
            }
        }
    }
    exits
}

/// For `ret` preceded by a `musttail` call (possibly through a bitcast), the
/// call: exit advice must go before it, as nothing may come between the two.
fn musttail_before(preceding: &[LLVMValueRef]) -> Option<LLVMValueRef> {
    let mut iter = preceding.iter().rev();
    let mut last = *iter.next()?;
    if ir::opcode(last) == LLVMOpcode::LLVMBitCast {
        last = *iter.next()?;
    }
    (ir::opcode(last) == LLVMOpcode::LLVMCall && ir::is_musttail(last)).then_some(last)
}

fn weave_function(
    module: &Module,
    advice: &Advice,
    function: LLVMValueRef,
    site: LLVMValueRef,
    aspect: &Aspect,
) {
    let context = module.get_context();
    let raw_context = context.as_ctx_ref();
    // Found before any advice is inserted, so advice is never mistaken for
    // the program's own code.
    let exits = if aspect.pointcut.has_exit() {
        Some(find_exits(function))
    } else {
        None
    };

    // SAFETY: all values belong to `module`; the builder is disposed below.
    unsafe {
        let builder = LLVMCreateBuilderInContext(raw_context);
        let i8_type = context.i8_type().as_type_ref();
        let call_advice = |target: FunctionValue, before: LLVMValueRef| {
            // if (perfflow_enabled) target(site);
            LLVMPositionBuilderBefore(builder, before);
            let on = LLVMBuildLoad2(builder, i8_type, advice.enabled, c"perfflow.on".as_ptr());
            LLVMSetOrdering(on, LLVMAtomicOrdering::LLVMAtomicOrderingMonotonic);
            LLVMSetAlignment(on, 1);
            let zero = LLVMConstInt(i8_type, 0, 0);
            let cond = LLVMBuildICmp(
                builder,
                LLVMIntPredicate::LLVMIntNE,
                on,
                zero,
                c"perfflow.active".as_ptr(),
            );
            let then = perfflow_split_if_then(cond, before);
            LLVMPositionBuilderBefore(builder, then);
            let call = build_advice_call(builder, target.as_value_ref(), site);
            ir::copy_debug_loc(before, call);
        };

        if aspect.pointcut.has_enter() {
            let entry = LLVMGetEntryBasicBlock(function);
            // Valid IR ends every block with a terminator, so a non-alloca
            // instruction always exists.
            if let Some(first) = ir::instructions(entry)
                .into_iter()
                .find(|i| ir::opcode(*i) != LLVMOpcode::LLVMAlloca)
            {
                call_advice(advice.enter, first);
            }
        }

        if let Some(exits) = exits {
            for &inst in &exits.before {
                let target = if ir::opcode(inst) == LLVMOpcode::LLVMResume {
                    advice.unwind_exit
                } else {
                    advice.exit
                };
                call_advice(target, inst);
            }
            for &pad in &exits.landing_pads {
                LLVMSetCleanup(pad, 1);
            }
            if !exits.throwing_calls.is_empty() {
                let cleanup = build_cleanup(module, builder, function, advice, site);
                // Last first: each split moves the rest of a block, which
                // then holds no call still to change (in source order, a
                // block of n calls would be moved n times: quadratic).
                for &call in exits.throwing_calls.iter().rev() {
                    perfflow_call_to_invoke(call, cleanup);
                }
            }
        }
        LLVMDisposeBuilder(builder);
    }

    let attribute = context.create_string_attribute(WOVEN_ATTRIBUTE, "");
    // SAFETY: `function` is a function of `module`.
    if let Some(function) = unsafe { FunctionValue::new(function) } {
        function.add_attribute(AttributeLoc::Function, attribute);
    }
}

/// `perfflow.cleanup: landingpad cleanup; exit advice; resume`.
///
/// # Safety
/// `function` is a definition in `module`; `builder` is a live builder.
unsafe fn build_cleanup(
    module: &Module,
    builder: LLVMBuilderRef,
    function: LLVMValueRef,
    advice: &Advice,
    site: LLVMValueRef,
) -> LLVMBasicBlockRef {
    let context = module.get_context();
    let personality = personality_for(module, function);
    let ptr = byte_ptr_type(&context);
    let pad_type = context.struct_type(&[ptr.into(), context.i32_type().into()], false);
    let block =
        LLVMAppendBasicBlockInContext(context.as_ctx_ref(), function, c"perfflow.cleanup".as_ptr());
    LLVMPositionBuilderAtEnd(builder, block);
    let pad = LLVMBuildLandingPad(
        builder,
        pad_type.as_type_ref(),
        personality,
        0,
        c"perfflow.lpad".as_ptr(),
    );
    LLVMSetCleanup(pad, 1);
    build_advice_call(builder, advice.unwind_exit.as_value_ref(), site);
    LLVMBuildResume(builder, pad);
    block
}

/// `call void @target(ptr site)` at the builder's position.
///
/// # Safety
/// `target` is an advice function and `site` a site descriptor of the
/// builder's module.
unsafe fn build_advice_call(
    builder: LLVMBuilderRef,
    target: LLVMValueRef,
    site: LLVMValueRef,
) -> LLVMValueRef {
    let mut args = [site];
    LLVMBuildCall2(
        builder,
        LLVMGlobalGetValueType(target),
        target,
        args.as_mut_ptr(),
        1,
        c"".as_ptr(),
    )
}

/// The function's own personality, else the module's C++ one, else the
/// module's C one, else the one that matches the source language (C for a
/// file named as C source, or a module without a C++ name).
///
/// # Safety
/// `function` is a definition in `module`.
unsafe fn personality_for(module: &Module, function: LLVMValueRef) -> LLVMValueRef {
    if LLVMHasPersonalityFn(function) != 0 {
        return LLVMGetPersonalityFn(function);
    }
    let name = if module.get_function("__gxx_personality_v0").is_some() {
        "__gxx_personality_v0"
    } else if module.get_function("__gcc_personality_v0").is_some() {
        "__gcc_personality_v0"
    } else {
        let source = module
            .get_source_file_name()
            .to_string_lossy()
            .to_ascii_lowercase();
        let c_source = [".c", ".i", ".h"].iter().any(|ext| source.ends_with(ext));
        let cxx_names = module
            .get_functions()
            .any(|f| f.get_name().to_bytes().starts_with(b"_Z"));
        if c_source && !ir::value_name(function).starts_with("_Z") || !cxx_names {
            "__gcc_personality_v0"
        } else {
            "__gxx_personality_v0"
        }
    };
    let personality = module.get_function(name).unwrap_or_else(|| {
        let context = module.get_context();
        module.add_function(name, context.i32_type().fn_type(&[], true), None)
    });
    personality.as_value_ref()
}
