; Running the pass twice weaves once.

@.str = private unnamed_addr constant [17 x i8] c"@critical_path()\00", section "llvm.metadata"
@.file = private unnamed_addr constant [7 x i8] c"demo.c\00", section "llvm.metadata"
@llvm.global.annotations = appending global [1 x { ptr, ptr, ptr, i32, ptr }] [{ ptr, ptr, ptr, i32, ptr } { ptr @once, ptr @.str, ptr @.file, i32 1, ptr null }], section "llvm.metadata"

; CHECK-COUNT-1: @__perfflow_site.once = private constant
; CHECK-NOT: @__perfflow_site.once.1
; CHECK-LABEL: define void @once()
; CHECK-NEXT: %[[ON:perfflow.on[0-9]*]] = load atomic i8, ptr @perfflow_enabled monotonic, align 1
; CHECK-NEXT: %[[ACTIVE:perfflow.active[0-9]*]] = icmp ne i8 %[[ON]], 0
; CHECK-NEXT: br i1 %[[ACTIVE]], label %[[THEN:[0-9a-z.]+]], label %[[REST:[0-9a-z.]+]]
; CHECK: {{^}}[[THEN]]:
; CHECK-NEXT: call void @perfflow_site_enter(ptr @__perfflow_site.once)
; CHECK-NEXT: br label %[[REST]]
; CHECK: {{^}}[[REST]]:
; CHECK-NEXT: %[[ON:perfflow.on[0-9]*]] = load atomic i8, ptr @perfflow_enabled monotonic, align 1
; CHECK-NEXT: %[[ACTIVE:perfflow.active[0-9]*]] = icmp ne i8 %[[ON]], 0
; CHECK-NEXT: br i1 %[[ACTIVE]], label %[[THEN:[0-9a-z.]+]], label %[[REST:[0-9a-z.]+]]
; CHECK: {{^}}[[THEN]]:
; CHECK-NEXT: call void @perfflow_site_exit(ptr @__perfflow_site.once)
; CHECK-NEXT: br label %[[REST]]
; CHECK: {{^}}[[REST]]:
; CHECK-NEXT: ret void
; CHECK: attributes #{{[0-9]+}} = { nounwind "perfflow.woven" }
define void @once() nounwind {
  ret void
}
