; The plugin registers itself at the pipeline start of the default O2
; pipeline, before inlining: the annotated callee keeps its own span even
; where it is inlined into its caller.

@.str = private unnamed_addr constant [17 x i8] c"@critical_path()\00", section "llvm.metadata"
@.file = private unnamed_addr constant [7 x i8] c"demo.c\00", section "llvm.metadata"
@llvm.global.annotations = appending global [1 x { ptr, ptr, ptr, i32, ptr }] [{ ptr, ptr, ptr, i32, ptr } { ptr @inner, ptr @.str, ptr @.file, i32 1, ptr null }], section "llvm.metadata"

; CHECK-LABEL: define {{.*}}i32 @outer(i32 %x)
; CHECK: call void @perfflow_site_enter(ptr nonnull @__perfflow_site.inner)
; CHECK: call void @perfflow_site_exit(ptr nonnull @__perfflow_site.inner)
define i32 @outer(i32 %x) nounwind {
  %r = call i32 @inner(i32 %x)
  ret i32 %r
}

define internal i32 @inner(i32 %x) nounwind {
  %y = mul i32 %x, 3
  ret i32 %y
}
