; Exit advice goes before a musttail call, which must stay right before ret.

@.str = private unnamed_addr constant [17 x i8] c"@critical_path()\00", section "llvm.metadata"
@.file = private unnamed_addr constant [7 x i8] c"demo.c\00", section "llvm.metadata"
@llvm.global.annotations = appending global [1 x { ptr, ptr, ptr, i32, ptr }] [{ ptr, ptr, ptr, i32, ptr } { ptr @step, ptr @.str, ptr @.file, i32 1, ptr null }], section "llvm.metadata"

declare i32 @next(i32)

; CHECK-LABEL: define i32 @step(i32 %n)
; CHECK: %[[ON:perfflow.on[0-9]*]] = load atomic i8, ptr @perfflow_enabled monotonic, align 1
; CHECK-NEXT: %[[ACTIVE:perfflow.active[0-9]*]] = icmp ne i8 %[[ON]], 0
; CHECK-NEXT: br i1 %[[ACTIVE]], label %[[THEN:[0-9a-z.]+]], label %[[REST:[0-9a-z.]+]]
; CHECK: {{^}}[[THEN]]:
; CHECK-NEXT: call void @perfflow_site_enter(ptr @__perfflow_site.step)
; CHECK-NEXT: br label %[[REST]]
; CHECK: {{^}}[[REST]]:
; CHECK-NEXT: %[[ON:perfflow.on[0-9]*]] = load atomic i8, ptr @perfflow_enabled monotonic, align 1
; CHECK-NEXT: %[[ACTIVE:perfflow.active[0-9]*]] = icmp ne i8 %[[ON]], 0
; CHECK-NEXT: br i1 %[[ACTIVE]], label %[[THEN:[0-9a-z.]+]], label %[[REST:[0-9a-z.]+]]
; CHECK: {{^}}[[THEN]]:
; CHECK-NEXT: call void @perfflow_site_exit(ptr @__perfflow_site.step)
; CHECK-NEXT: br label %[[REST]]
; CHECK: {{^}}[[REST]]:
; CHECK-NEXT: %r = musttail call i32 @next(i32 %n)
; CHECK-NEXT: ret i32 %r
define i32 @step(i32 %n) nounwind {
  %r = musttail call i32 @next(i32 %n)
  ret i32 %r
}
