; before weaves only enter advice, after only exit advice; the _async forms
; weave the same calls and record the pointcut and scope in the site.

@.before = private unnamed_addr constant [34 x i8] c"@critical_path(pointcut='before')\00", section "llvm.metadata"
@.after = private unnamed_addr constant [33 x i8] c"@critical_path(pointcut='after')\00", section "llvm.metadata"
@.async = private unnamed_addr constant [63 x i8] c"@critical_path(pointcut='around_async', scope='io', flow='in')\00", section "llvm.metadata"
@.file = private unnamed_addr constant [7 x i8] c"demo.c\00", section "llvm.metadata"
@llvm.global.annotations = appending global [3 x { ptr, ptr, ptr, i32, ptr }] [
  { ptr, ptr, ptr, i32, ptr } { ptr @starts, ptr @.before, ptr @.file, i32 1, ptr null },
  { ptr, ptr, ptr, i32, ptr } { ptr @ends, ptr @.after, ptr @.file, i32 2, ptr null },
  { ptr, ptr, ptr, i32, ptr } { ptr @io, ptr @.async, ptr @.file, i32 3, ptr null }], section "llvm.metadata"

; CHECK-DAG: @__perfflow_site.starts = private constant { {{.*}} } { i32 2, i32 1, i32 0, i32 1,
; CHECK-DAG: @__perfflow_site.ends = private constant { {{.*}} } { i32 2, i32 2, i32 0, i32 2,
; CHECK-DAG: @__perfflow_site.io = private constant { {{.*}} } { i32 2, i32 3, i32 1, i32 3, ptr @__perfflow_site.io.name, ptr @__perfflow_site.io.file, ptr @__perfflow_site.io.scope,
; CHECK-DAG: @__perfflow_site.io.scope = private unnamed_addr constant [3 x i8] c"io\00"

; CHECK-LABEL: define void @starts()
; CHECK-NEXT: %[[ON:perfflow.on[0-9]*]] = load atomic i8, ptr @perfflow_enabled monotonic, align 1
; CHECK-NEXT: %[[ACTIVE:perfflow.active[0-9]*]] = icmp ne i8 %[[ON]], 0
; CHECK-NEXT: br i1 %[[ACTIVE]], label %[[THEN:[0-9a-z.]+]], label %[[REST:[0-9a-z.]+]]
; CHECK: {{^}}[[THEN]]:
; CHECK-NEXT: call void @perfflow_site_enter(ptr @__perfflow_site.starts)
; CHECK-NEXT: br label %[[REST]]
; CHECK: {{^}}[[REST]]:
; CHECK-NEXT: ret void
define void @starts() nounwind {
  ret void
}

; CHECK-LABEL: define void @ends()
; CHECK-NEXT: %[[ON:perfflow.on[0-9]*]] = load atomic i8, ptr @perfflow_enabled monotonic, align 1
; CHECK-NEXT: %[[ACTIVE:perfflow.active[0-9]*]] = icmp ne i8 %[[ON]], 0
; CHECK-NEXT: br i1 %[[ACTIVE]], label %[[THEN:[0-9a-z.]+]], label %[[REST:[0-9a-z.]+]]
; CHECK: {{^}}[[THEN]]:
; CHECK-NEXT: call void @perfflow_site_exit(ptr @__perfflow_site.ends)
; CHECK-NEXT: br label %[[REST]]
; CHECK: {{^}}[[REST]]:
; CHECK-NEXT: ret void
define void @ends() nounwind {
  ret void
}

; CHECK-LABEL: define void @io()
; CHECK-NEXT: %[[ON:perfflow.on[0-9]*]] = load atomic i8, ptr @perfflow_enabled monotonic, align 1
; CHECK-NEXT: %[[ACTIVE:perfflow.active[0-9]*]] = icmp ne i8 %[[ON]], 0
; CHECK-NEXT: br i1 %[[ACTIVE]], label %[[THEN:[0-9a-z.]+]], label %[[REST:[0-9a-z.]+]]
; CHECK: {{^}}[[THEN]]:
; CHECK-NEXT: call void @perfflow_site_enter(ptr @__perfflow_site.io)
; CHECK-NEXT: br label %[[REST]]
; CHECK: {{^}}[[REST]]:
; CHECK-NEXT: %[[ON:perfflow.on[0-9]*]] = load atomic i8, ptr @perfflow_enabled monotonic, align 1
; CHECK-NEXT: %[[ACTIVE:perfflow.active[0-9]*]] = icmp ne i8 %[[ON]], 0
; CHECK-NEXT: br i1 %[[ACTIVE]], label %[[THEN:[0-9a-z.]+]], label %[[REST:[0-9a-z.]+]]
; CHECK: {{^}}[[THEN]]:
; CHECK-NEXT: call void @perfflow_site_exit(ptr @__perfflow_site.io)
; CHECK-NEXT: br label %[[REST]]
; CHECK: {{^}}[[REST]]:
define void @io() nounwind {
  ret void
}
