; C code: a longjmp leaves the function, and its slice ends there, whatever
; follows the call (UBSan's check where there would be `unreachable`); a
; function that may unwind (C built with -fexceptions, from a file whose
; name does not say C) gets the C personality the module already uses,
; never the C++ one, which a C program does not link.

source_filename = "odd.inc"

@.str = private unnamed_addr constant [17 x i8] c"@critical_path()\00", section "llvm.metadata"
@.file = private unnamed_addr constant [8 x i8] c"odd.inc\00", section "llvm.metadata"
@llvm.global.annotations = appending global [2 x { ptr, ptr, ptr, i32, ptr }] [
  { ptr, ptr, ptr, i32, ptr } { ptr @jumper, ptr @.str, ptr @.file, i32 1, ptr null },
  { ptr, ptr, ptr, i32, ptr } { ptr @calls, ptr @.str, ptr @.file, i32 2, ptr null }], section "llvm.metadata"

declare void @longjmp(ptr, i32) noreturn nounwind
declare void @__ubsan_handle_builtin_unreachable(ptr)
declare void @may_throw(i32)
declare void @release(ptr)
declare i32 @__gcc_personality_v0(...)

; CHECK-LABEL: define void @jumper(ptr %env)
; CHECK: call void @perfflow_site_enter(ptr @__perfflow_site.jumper)
; CHECK: call void @perfflow_site_exit(ptr @__perfflow_site.jumper)
; CHECK-NEXT: br label %[[REST:[0-9a-z.]+]]
; CHECK: {{^}}[[REST]]:
; CHECK-NEXT: call void @longjmp(ptr %env, i32 1)
; CHECK-NEXT: br i1 false
define void @jumper(ptr %env) nounwind {
  call void @longjmp(ptr %env, i32 1)
  br i1 false, label %cont, label %trap
trap:
  call void @__ubsan_handle_builtin_unreachable(ptr null)
  unreachable
cont:
  ret void
}

; A function with a cleanup (`__attribute__((cleanup))`) has the C one.
define void @with_cleanup(ptr %p) personality ptr @__gcc_personality_v0 {
  invoke void @may_throw(i32 0) to label %done unwind label %pad
done:
  call void @release(ptr %p)
  ret void
pad:
  %lp = landingpad { ptr, i32 } cleanup
  call void @release(ptr %p)
  resume { ptr, i32 } %lp
}

; CHECK-LABEL: define void @calls(i32 %x)
; CHECK-SAME: personality ptr @__gcc_personality_v0
; CHECK: invoke void @may_throw(i32 %x)
; CHECK-NOT: __gxx_personality_v0
define void @calls(i32 %x) {
  call void @may_throw(i32 %x)
  ret void
}
