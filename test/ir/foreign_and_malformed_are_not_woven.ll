; Annotations of other tools are ignored silently; a malformed one leaves the
; function unwoven (the warning is checked by the diagnostics test).

@.other = private unnamed_addr constant [12 x i8] c"hot_path(1)\00", section "llvm.metadata"
@.bad = private unnamed_addr constant [24 x i8] c"@critical_path(flow=up)\00", section "llvm.metadata"
@.file = private unnamed_addr constant [7 x i8] c"demo.c\00", section "llvm.metadata"
@llvm.global.annotations = appending global [2 x { ptr, ptr, ptr, i32, ptr }] [
  { ptr, ptr, ptr, i32, ptr } { ptr @other, ptr @.other, ptr @.file, i32 1, ptr null },
  { ptr, ptr, ptr, i32, ptr } { ptr @bad, ptr @.bad, ptr @.file, i32 2, ptr null }], section "llvm.metadata"

; CHECK-NOT: perfflow
; CHECK-LABEL: define void @other()
; CHECK-NEXT: ret void
; CHECK-NOT: perfflow
; CHECK-LABEL: define void @bad()
; CHECK-NEXT: ret void
; CHECK-NOT: perfflow
define void @other() nounwind {
  ret void
}

define void @bad() nounwind {
  ret void
}
