; Typed-pointer IR, as clang 14 emits it: a plain
; `tail` call is an ordinary call that becomes an invoke, with exit advice
; after it; a `musttail` call stays right before its ret, exit advice first.

@.str = private unnamed_addr constant [17 x i8] c"@critical_path()\00", section "llvm.metadata"
@.file = private unnamed_addr constant [7 x i8] c"demo.c\00", section "llvm.metadata"
@llvm.global.annotations = appending global [2 x { i8*, i8*, i8*, i32, i8* }] [{ i8*, i8*, i8*, i32, i8* } { i8* bitcast (i32 (i32)* @plain to i8*), i8* getelementptr inbounds ([17 x i8], [17 x i8]* @.str, i32 0, i32 0), i8* getelementptr inbounds ([7 x i8], [7 x i8]* @.file, i32 0, i32 0), i32 1, i8* null }, { i8*, i8*, i8*, i32, i8* } { i8* bitcast (i32 (i32)* @must to i8*), i8* getelementptr inbounds ([17 x i8], [17 x i8]* @.str, i32 0, i32 0), i8* getelementptr inbounds ([7 x i8], [7 x i8]* @.file, i32 0, i32 0), i32 5, i8* null }], section "llvm.metadata"

; CHECK-DAG: @__perfflow_site.plain.copy = private global i8* null, align 8
; CHECK-DAG: @__perfflow_site.plain = private constant { i32, i32, i32, i32, i8*, i8*, i8*, i8*, i8* } { i32 2, i32 0, i32 0, i32 1, i8* getelementptr inbounds ([6 x i8], [6 x i8]* @__perfflow_site.plain.name, i32 0, i32 0), i8* getelementptr inbounds ([7 x i8], [7 x i8]* @__perfflow_site.plain.file, i32 0, i32 0), i8* null, i8* getelementptr inbounds ([6 x i8], [6 x i8]* @__perfflow_site.plain.symbol, i32 0, i32 0), i8* bitcast (i8** @__perfflow_site.plain.copy to i8*) }, align 8

declare i32 @next(i32)

; CHECK-LABEL: define i32 @plain(i32 %n)
; CHECK: %[[ON:perfflow.on[0-9]*]] = load atomic i8, i8* @perfflow_enabled monotonic, align 1
; CHECK-NEXT: %[[ACTIVE:perfflow.active[0-9]*]] = icmp ne i8 %[[ON]], 0
; CHECK-NEXT: br i1 %[[ACTIVE]], label %[[THEN:[0-9a-z.]+]], label %[[REST:[0-9a-z.]+]]
; CHECK: {{^}}[[THEN]]:
; CHECK-NEXT: call void @perfflow_site_enter(i8* bitcast ({{.*}}* @__perfflow_site.plain to i8*))
; CHECK-NOT: call void @perfflow_site_exit
; CHECK: %r = invoke i32 @next(i32 %n)
; CHECK-NEXT: to label %[[CONT:[0-9a-z.]+]] unwind label %perfflow.cleanup
; CHECK: {{^}}[[CONT]]:
; CHECK: call void @perfflow_site_exit(i8* bitcast ({{.*}}* @__perfflow_site.plain to i8*))
; CHECK: ret i32 %r
; CHECK: perfflow.cleanup:
; CHECK-NEXT: %perfflow.lpad = landingpad { i8*, i32 }
; CHECK-NEXT: cleanup
; CHECK-NEXT: call void @perfflow_site_exit_unwind(i8* bitcast ({{.*}}* @__perfflow_site.plain to i8*))
; CHECK-NEXT: resume { i8*, i32 } %perfflow.lpad
define i32 @plain(i32 %n) personality i8* bitcast (i32 (...)* @__gxx_personality_v0 to i8*) {
  %r = tail call i32 @next(i32 %n)
  ret i32 %r
}

; CHECK-LABEL: define i32 @must(i32 %n)
; CHECK-NOT: invoke
; CHECK: call void @perfflow_site_exit(i8* bitcast ({{.*}}* @__perfflow_site.must to i8*))
; CHECK-NEXT: br label %[[REST:[0-9a-z.]+]]
; CHECK: {{^}}[[REST]]:
; CHECK-NEXT: %r = musttail call i32 @next(i32 %n)
; CHECK-NEXT: ret i32 %r
; CHECK-NOT: perfflow.cleanup
; CHECK-LABEL: {{^}}}
define i32 @must(i32 %n) personality i8* bitcast (i32 (...)* @__gxx_personality_v0 to i8*) {
  %r = musttail call i32 @next(i32 %n)
  ret i32 %r
}

declare i32 @__gxx_personality_v0(...)

; CHECK: declare void @perfflow_site_enter(i8*) #[[ATTR:[0-9]+]]
; CHECK: declare void @perfflow_site_exit(i8*) #[[ATTR]]
; CHECK: attributes #[[ATTR]] = { nounwind }
