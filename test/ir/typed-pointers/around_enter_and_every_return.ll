; Typed-pointer IR, as clang 14 emits it: enter
; advice after the allocas, exit advice before every ret, the annotation
; found through the bitcast and GEP constants typed pointers wrap it in.

@.str = private unnamed_addr constant [36 x i8] c"@critical_path(pointcut = 'around')\00", section "llvm.metadata"
@.file = private unnamed_addr constant [7 x i8] c"demo.c\00", section "llvm.metadata"
@llvm.global.annotations = appending global [1 x { i8*, i8*, i8*, i32, i8* }] [{ i8*, i8*, i8*, i32, i8* } { i8* bitcast (i32 (i32)* @classify to i8*), i8* getelementptr inbounds ([36 x i8], [36 x i8]* @.str, i32 0, i32 0), i8* getelementptr inbounds ([7 x i8], [7 x i8]* @.file, i32 0, i32 0), i32 3, i8* null }], section "llvm.metadata"

; CHECK-DAG: @__perfflow_site.classify.name = private unnamed_addr constant [9 x i8] c"classify\00"

; CHECK-LABEL: define i32 @classify(i32 %x)
; CHECK-NEXT: entry:
; CHECK-NEXT: %slot = alloca i32
; CHECK-NEXT: %[[ON:perfflow.on[0-9]*]] = load atomic i8, i8* @perfflow_enabled monotonic, align 1
; CHECK-NEXT: %[[ACTIVE:perfflow.active[0-9]*]] = icmp ne i8 %[[ON]], 0
; CHECK-NEXT: br i1 %[[ACTIVE]], label %[[THEN:[0-9a-z.]+]], label %[[REST:[0-9a-z.]+]]
; CHECK: {{^}}[[THEN]]:
; CHECK-NEXT: call void @perfflow_site_enter(i8* bitcast ({{.*}}* @__perfflow_site.classify to i8*))
; CHECK-NEXT: br label %[[REST]]
; CHECK: {{^}}[[REST]]:
; CHECK-NEXT: store i32 %x, i32* %slot
; CHECK: neg:
; CHECK: call void @perfflow_site_exit(i8* bitcast ({{.*}}* @__perfflow_site.classify to i8*))
; CHECK: ret i32 -1
; CHECK: pos:
; CHECK: call void @perfflow_site_exit(i8* bitcast ({{.*}}* @__perfflow_site.classify to i8*))
; CHECK: ret i32 1
define i32 @classify(i32 %x) nounwind {
entry:
  %slot = alloca i32
  store i32 %x, i32* %slot
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
