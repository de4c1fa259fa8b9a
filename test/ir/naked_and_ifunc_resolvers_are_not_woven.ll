; A naked function, an ifunc resolver and what only a resolver calls are
; left unwoven with a warning naming each; the rest is woven.

@.a = private unnamed_addr constant [17 x i8] c"@critical_path()\00", section "llvm.metadata"
@.file = private unnamed_addr constant [7 x i8] c"demo.c\00", section "llvm.metadata"
@llvm.global.annotations = appending global [5 x { ptr, ptr, ptr, i32, ptr }] [
  { ptr, ptr, ptr, i32, ptr } { ptr @bare, ptr @.a, ptr @.file, i32 1, ptr null },
  { ptr, ptr, ptr, i32, ptr } { ptr @resolve, ptr @.a, ptr @.file, i32 2, ptr null },
  { ptr, ptr, ptr, i32, ptr } { ptr @pick, ptr @.a, ptr @.file, i32 3, ptr null },
  { ptr, ptr, ptr, i32, ptr } { ptr @deeper, ptr @.a, ptr @.file, i32 4, ptr null },
  { ptr, ptr, ptr, i32, ptr } { ptr @plain, ptr @.a, ptr @.file, i32 5, ptr null }], section "llvm.metadata"

@add = ifunc i32 (i32), ptr @resolve

; CHECK-LABEL: define i32 @bare(i32 %x)
; CHECK-NOT: perfflow_site
; CHECK: unreachable
define i32 @bare(i32 %x) naked nounwind {
  call void asm sideeffect "movl %edi, %eax\0Aret", ""()
  unreachable
}

; CHECK-LABEL: define ptr @resolve()
; CHECK-NOT: perfflow_site
; CHECK: ret ptr @impl
define ptr @resolve() nounwind {
  %p = call i32 @pick()
  ret ptr @impl
}

; CHECK-LABEL: define i32 @pick()
; CHECK-NOT: perfflow_site
; CHECK: ret i32
define i32 @pick() nounwind {
  %d = call i32 @deeper()
  ret i32 %d
}

; CHECK-LABEL: define i32 @deeper()
; CHECK-NOT: perfflow_site
; CHECK: ret i32 1
define i32 @deeper() nounwind {
  ret i32 1
}

define i32 @impl(i32 %x) nounwind {
  ret i32 %x
}

; CHECK-LABEL: define i32 @plain(i32 %x)
; CHECK: call void @perfflow_site_enter
; CHECK: call void @perfflow_site_exit
define i32 @plain(i32 %x) nounwind {
  %r = call i32 @add(i32 %x)
  ret i32 %r
}

; STDERR-DAG: demo.c:1: warning: perfflow: naked function left unwoven {{.*}} on function bare
; STDERR-DAG: demo.c:2: warning: perfflow: ifunc resolver left unwoven {{.*}} on function resolve
; STDERR-DAG: demo.c:3: warning: perfflow: function called by the ifunc resolver resolve left unwoven {{.*}} on function pick
; STDERR-DAG: demo.c:4: warning: perfflow: function called by the ifunc resolver resolve left unwoven {{.*}} on function deeper
; STDERR-NOT: on function plain
