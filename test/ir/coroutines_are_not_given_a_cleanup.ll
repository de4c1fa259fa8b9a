; A C++20 coroutine before CoroSplit: its body becomes the ramp and the
; resume and destroy functions, so its calls that may throw do not become
; invokes into a cleanup pad (the pad would end, in a resumption, a slice the
; resumption never began). Its slice is the ramp's run. clang 15 and later
; mark such a function `presplitcoroutine`, clang 14 with the string
; attribute used here, which every version reads.

@.str = private unnamed_addr constant [17 x i8] c"@critical_path()\00", section "llvm.metadata"
@.file = private unnamed_addr constant [9 x i8] c"coro.cpp\00", section "llvm.metadata"
@llvm.global.annotations = appending global [1 x { ptr, ptr, ptr, i32, ptr }] [
  { ptr, ptr, ptr, i32, ptr } { ptr @_Z4taskv, ptr @.str, ptr @.file, i32 1, ptr null }], section "llvm.metadata"

declare void @_Z6throwsv()

; CHECK-LABEL: define void @_Z4taskv()
; CHECK-NOT: personality
; CHECK: call void @perfflow_site_enter(ptr @__perfflow_site._Z4taskv)
; CHECK: call void @_Z6throwsv()
; CHECK-NOT: invoke
; CHECK-NOT: perfflow.cleanup
; CHECK: call void @perfflow_site_exit(ptr @__perfflow_site._Z4taskv)
; CHECK: ret void
define void @_Z4taskv() #0 {
  call void @_Z6throwsv()
  ret void
}

attributes #0 = { "coroutine.presplit"="0" }
