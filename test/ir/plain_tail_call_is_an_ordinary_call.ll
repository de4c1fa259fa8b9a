; A plain `tail` call (optimised IR marks many calls so) is an ordinary call:
; it may throw, so it becomes an invoke, and exit advice follows it. Only a
; `musttail` call keeps its place right before the ret, with exit advice
; before it.

@.str = private unnamed_addr constant [17 x i8] c"@critical_path()\00", section "llvm.metadata"
@.file = private unnamed_addr constant [7 x i8] c"demo.c\00", section "llvm.metadata"
@llvm.global.annotations = appending global [2 x { ptr, ptr, ptr, i32, ptr }] [{ ptr, ptr, ptr, i32, ptr } { ptr @plain, ptr @.str, ptr @.file, i32 1, ptr null }, { ptr, ptr, ptr, i32, ptr } { ptr @must, ptr @.str, ptr @.file, i32 5, ptr null }], section "llvm.metadata"

declare i32 @next(i32)

; CHECK-LABEL: define i32 @plain(i32 %n)
; CHECK: call void @perfflow_site_enter(ptr @__perfflow_site.plain)
; CHECK-NOT: call void @perfflow_site_exit
; CHECK: %r = invoke i32 @next(i32 %n)
; CHECK-NEXT: to label %[[CONT:[0-9a-z.]+]] unwind label %perfflow.cleanup
; CHECK: {{^}}[[CONT]]:
; CHECK: call void @perfflow_site_exit(ptr @__perfflow_site.plain)
; CHECK: ret i32 %r
; CHECK: perfflow.cleanup:
; CHECK-NEXT: landingpad
; CHECK-NEXT: cleanup
; CHECK-NEXT: call void @perfflow_site_exit_unwind(ptr @__perfflow_site.plain)
; CHECK-NEXT: resume
define i32 @plain(i32 %n) personality ptr @__gxx_personality_v0 {
  %r = tail call i32 @next(i32 %n)
  ret i32 %r
}

; CHECK-LABEL: define i32 @must(i32 %n)
; CHECK-NOT: invoke
; CHECK: call void @perfflow_site_exit(ptr @__perfflow_site.must)
; CHECK-NEXT: br label %[[REST:[0-9a-z.]+]]
; CHECK: {{^}}[[REST]]:
; CHECK-NEXT: %r = musttail call i32 @next(i32 %n)
; CHECK-NEXT: ret i32 %r
; CHECK-NOT: perfflow.cleanup
; CHECK-LABEL: {{^}}}
define i32 @must(i32 %n) personality ptr @__gxx_personality_v0 {
  %r = musttail call i32 @next(i32 %n)
  ret i32 %r
}

declare i32 @__gxx_personality_v0(...)
