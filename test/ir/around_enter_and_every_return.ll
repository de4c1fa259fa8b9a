; Enter advice at entry (after the allocas), exit advice before every ret, one
; constant site descriptor passed by address, with its writable copy word.

@.str = private unnamed_addr constant [36 x i8] c"@critical_path(pointcut = 'around')\00", section "llvm.metadata"
@.file = private unnamed_addr constant [7 x i8] c"demo.c\00", section "llvm.metadata"
@llvm.global.annotations = appending global [1 x { ptr, ptr, ptr, i32, ptr }] [{ ptr, ptr, ptr, i32, ptr } { ptr @classify, ptr @.str, ptr @.file, i32 3, ptr null }], section "llvm.metadata"

; CHECK-DAG: @__perfflow_site.classify.copy = private global ptr null, align 8
; CHECK-DAG: @__perfflow_site.classify = private constant { i32, i32, i32, i32, ptr, ptr, ptr, ptr, ptr } { i32 2, i32 0, i32 0, i32 3, ptr @__perfflow_site.classify.name, ptr @__perfflow_site.classify.file, ptr null, ptr @__perfflow_site.classify.symbol, ptr @__perfflow_site.classify.copy }, align 8
; CHECK-DAG: @__perfflow_site.classify.name = private unnamed_addr constant [9 x i8] c"classify\00"

; CHECK-LABEL: define i32 @classify(i32 %x)
; CHECK-NEXT: entry:
; CHECK-NEXT: %slot = alloca i32
; CHECK-NEXT: %[[ON:perfflow.on[0-9]*]] = load atomic i8, ptr @perfflow_enabled monotonic, align 1
; CHECK-NEXT: %[[ACTIVE:perfflow.active[0-9]*]] = icmp ne i8 %[[ON]], 0
; CHECK-NEXT: br i1 %[[ACTIVE]], label %[[THEN:[0-9a-z.]+]], label %[[REST:[0-9a-z.]+]]
; CHECK: {{^}}[[THEN]]:
; CHECK-NEXT: call void @perfflow_site_enter(ptr @__perfflow_site.classify)
; CHECK-NEXT: br label %[[REST]]
; CHECK: {{^}}[[REST]]:
; CHECK-NEXT: store i32 %x, ptr %slot
; CHECK: neg:
; CHECK-NEXT: %[[ON:perfflow.on[0-9]*]] = load atomic i8, ptr @perfflow_enabled monotonic, align 1
; CHECK-NEXT: %[[ACTIVE:perfflow.active[0-9]*]] = icmp ne i8 %[[ON]], 0
; CHECK-NEXT: br i1 %[[ACTIVE]], label %[[THEN:[0-9a-z.]+]], label %[[REST:[0-9a-z.]+]]
; CHECK: {{^}}[[THEN]]:
; CHECK-NEXT: call void @perfflow_site_exit(ptr @__perfflow_site.classify)
; CHECK-NEXT: br label %[[REST]]
; CHECK: {{^}}[[REST]]:
; CHECK-NEXT: ret i32 -1
; CHECK: pos:
; CHECK-NEXT: %[[ON:perfflow.on[0-9]*]] = load atomic i8, ptr @perfflow_enabled monotonic, align 1
; CHECK-NEXT: %[[ACTIVE:perfflow.active[0-9]*]] = icmp ne i8 %[[ON]], 0
; CHECK-NEXT: br i1 %[[ACTIVE]], label %[[THEN:[0-9a-z.]+]], label %[[REST:[0-9a-z.]+]]
; CHECK: {{^}}[[THEN]]:
; CHECK-NEXT: call void @perfflow_site_exit(ptr @__perfflow_site.classify)
; CHECK-NEXT: br label %[[REST]]
; CHECK: {{^}}[[REST]]:
; CHECK-NEXT: ret i32 1
define i32 @classify(i32 %x) nounwind {
entry:
  %slot = alloca i32
  store i32 %x, ptr %slot
  %c = icmp slt i32 %x, 0
  br i1 %c, label %neg, label %pos
neg:
  ret i32 -1
pos:
  ret i32 1
}

; A function without annotation is left alone.
; CHECK-LABEL: define i32 @plain(
; CHECK-NOT: perfflow_site
; CHECK: ret i32
define i32 @plain(i32 %x) nounwind {
  ret i32 %x
}

; CHECK: declare void @perfflow_site_enter(ptr) #[[ATTR:[0-9]+]]
; CHECK: declare void @perfflow_site_exit(ptr) #[[ATTR]]
; CHECK: attributes #[[ATTR]] = { nounwind }
