//===- WeavePass.cpp - LLVM plugin entry for the perfflow weaver ---------===//
//
// The only C++ in perfflow. It translates between LLVM's C++ plugin interface
// and the weaver written in Rust (weaver/src), and decides nothing itself:
//
//   1. registers the module pass `perfflow-weave` at the PipelineStart
//      extension point (every -O level, before inlining, before LTO pre-link)
//      and under that pipeline name for `opt -passes=perfflow-weave`;
//   2. runs it by handing the module to perfflow_weave_module() in Rust;
//   3. turns the Rust outcome into PreservedAnalyses, or into an LLVM error
//      diagnostic that fails the compilation;
//   4. lends the weaver the IR utilities LLVM's C API lacks: splitting a
//      block around a conditional call (perfflow_split_if_then), turning a
//      call into an invoke (perfflow_call_to_invoke), and telling a
//      `musttail` call from a plain `tail` one (perfflow_tail_call_kind;
//      the C API only can from LLVM 18 on).
//
// The plugin entry point itself, llvmGetPassPluginInfo, is defined in Rust and
// forwards to perfflow_plugin_info() below: a C++ definition inside the static
// archive would not be exported from the Rust cdylib.
//
//===----------------------------------------------------------------------===//

#include "llvm-c/Types.h"
#include "llvm/IR/Instruction.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/PassPlugin.h"
#include "llvm/IR/Instructions.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"
#include "llvm/Transforms/Utils/Local.h"

// Outcome of weaving one module; mirrors `WeaveOutcome` in weaver/src/ffi.rs.
enum PerfflowWeaveOutcome : int {
  PERFFLOW_WEAVE_UNCHANGED = 0,
  PERFFLOW_WEAVE_CHANGED = 1,
  PERFFLOW_WEAVE_REJECTED = 2, // strict mode found malformed annotations
  PERFFLOW_WEAVE_INTERNAL_ERROR = 3,
  PERFFLOW_WEAVE_BAD_FILTER = 4, // PERFFLOW_WEAVE_FILTER cannot be used
};

extern "C" PerfflowWeaveOutcome perfflow_weave_module(LLVMModuleRef module);

namespace {

struct PerfflowWeavePass : llvm::PassInfoMixin<PerfflowWeavePass> {
  llvm::PreservedAnalyses run(llvm::Module &M, llvm::ModuleAnalysisManager &) {
    switch (perfflow_weave_module(llvm::wrap(&M))) {
    case PERFFLOW_WEAVE_CHANGED:
      return llvm::PreservedAnalyses::none();
    case PERFFLOW_WEAVE_REJECTED:
      M.getContext().emitError(
          "perfflow: malformed annotations (PERFFLOW_WEAVE_STRICT=1)");
      return llvm::PreservedAnalyses::all();
    case PERFFLOW_WEAVE_BAD_FILTER:
      M.getContext().emitError(
          "perfflow: the PERFFLOW_WEAVE_FILTER file cannot be used (see above)");
      return llvm::PreservedAnalyses::all();
    case PERFFLOW_WEAVE_INTERNAL_ERROR:
    case PERFFLOW_WEAVE_UNCHANGED:
      break;
    }
    return llvm::PreservedAnalyses::all();
  }
  // Weave even functions marked optnone (every function at -O0).
  static bool isRequired() { return true; }
};

void registerCallbacks(llvm::PassBuilder &PB) {
  PB.registerPipelineStartEPCallback(
      [](llvm::ModulePassManager &MPM, llvm::OptimizationLevel) {
        MPM.addPass(PerfflowWeavePass());
      });
  PB.registerPipelineParsingCallback(
      [](llvm::StringRef Name, llvm::ModulePassManager &MPM,
         llvm::ArrayRef<llvm::PassBuilder::PipelineElement>) {
        if (Name != "perfflow-weave")
          return false;
        MPM.addPass(PerfflowWeavePass());
        return true;
      });
}

} // namespace

extern "C" llvm::PassPluginLibraryInfo perfflow_plugin_info() {
  return {LLVM_PLUGIN_API_VERSION, "perfflow-weave", "0.1.0", registerCallbacks};
}

// Splits the block of `Before` just before it, with a new block that runs only
// when `Cond` (an i1 computed before `Before`) is true and then falls through
// to `Before`. Returns the new block's terminator: code inserted before it
// runs conditionally. PHI nodes of the old block's successors are updated.
extern "C" LLVMValueRef perfflow_split_if_then(LLVMValueRef Cond,
                                               LLVMValueRef Before) {
  llvm::Instruction *Then = llvm::SplitBlockAndInsertIfThen(
      llvm::unwrap(Cond), llvm::unwrap<llvm::Instruction>(Before),
      /*Unreachable=*/false);
  return llvm::wrap(static_cast<llvm::Value *>(Then));
}

// Replaces the call `Call` by an invoke of the same callee, arguments,
// operand bundles, attributes, calling convention and debug location that
// unwinds to `Unwind` (a block starting with a landing pad). The block is
// split after the call; the new block, the invoke's normal destination, is
// returned. The invoke keeps the call's name.
extern "C" LLVMBasicBlockRef perfflow_call_to_invoke(LLVMValueRef Call,
                                                     LLVMBasicBlockRef Unwind) {
  llvm::CallInst *CI = llvm::unwrap<llvm::CallInst>(Call);
  llvm::BasicBlock *Head = CI->getParent();
  std::string Name = CI->getName().str();
  llvm::BasicBlock *Rest =
      llvm::changeToInvokeAndSplitBasicBlock(CI, llvm::unwrap(Unwind));
  // Created while the call still held the name, the invoke got a numbered
  // variant of it; the call is gone now.
  if (!Name.empty())
    Head->getTerminator()->setName(Name);
  return llvm::wrap(Rest);
}

// The tail-call marker of `Call`; mirrors `TailCallKind` in weaver/src/ir.rs.
enum PerfflowTailCallKind : int {
  PERFFLOW_TAIL_CALL_NONE = 0,
  PERFFLOW_TAIL_CALL_TAIL = 1,
  PERFFLOW_TAIL_CALL_MUSTTAIL = 2,
  PERFFLOW_TAIL_CALL_NOTAIL = 3,
};

extern "C" PerfflowTailCallKind perfflow_tail_call_kind(LLVMValueRef Call) {
  auto *CI = llvm::dyn_cast<llvm::CallInst>(llvm::unwrap(Call));
  if (!CI)
    return PERFFLOW_TAIL_CALL_NONE;
  if (CI->isMustTailCall())
    return PERFFLOW_TAIL_CALL_MUSTTAIL;
  if (CI->isNoTailCall())
    return PERFFLOW_TAIL_CALL_NOTAIL;
  return CI->isTailCall() ? PERFFLOW_TAIL_CALL_TAIL : PERFFLOW_TAIL_CALL_NONE;
}
