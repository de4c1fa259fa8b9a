; In a function that may unwind, calls that may throw become invokes into one
; cleanup landing pad that runs the unwinding exit advice and resumes.
; Existing landing pads get the cleanup flag, and the unwinding exit advice
; goes before every resume; a return after a catch gets the plain one. Calls
; with operand bundles and calls in a block whose address is taken become
; invokes too, keeping their bundles and the block's address.

@.str = private unnamed_addr constant [17 x i8] c"@critical_path()\00", section "llvm.metadata"
@.file = private unnamed_addr constant [9 x i8] c"demo.cpp\00", section "llvm.metadata"
@llvm.global.annotations = appending global [3 x { ptr, ptr, ptr, i32, ptr }] [
  { ptr, ptr, ptr, i32, ptr } { ptr @_Z6middlei, ptr @.str, ptr @.file, i32 1, ptr null },
  { ptr, ptr, ptr, i32, ptr } { ptr @_Z7catcheri, ptr @.str, ptr @.file, i32 2, ptr null },
  { ptr, ptr, ptr, i32, ptr } { ptr @_Z7bundledv, ptr @.str, ptr @.file, i32 3, ptr null }], section "llvm.metadata"
@target = global ptr blockaddress(@_Z7bundledv, %taken)
; CHECK: @target = global ptr blockaddress(@_Z7bundledv, %taken)

@_ZTIi = external constant ptr
declare i32 @_Z6throwsi(i32)
declare i32 @_Z4puref(float) nounwind
declare i32 @__gxx_personality_v0(...)
declare ptr @__cxa_begin_catch(ptr)
declare void @__cxa_end_catch()

; CHECK-LABEL: define i32 @_Z6middlei(i32 %x)
; CHECK-SAME: personality ptr @__gxx_personality_v0
; CHECK: %[[ON:perfflow.on[0-9]*]] = load atomic i8, ptr @perfflow_enabled monotonic, align 1
; CHECK-NEXT: %[[ACTIVE:perfflow.active[0-9]*]] = icmp ne i8 %[[ON]], 0
; CHECK-NEXT: br i1 %[[ACTIVE]], label %[[THEN:[0-9a-z.]+]], label %[[REST:[0-9a-z.]+]]
; CHECK: {{^}}[[THEN]]:
; CHECK-NEXT: call void @perfflow_site_enter(ptr @__perfflow_site._Z6middlei)
; CHECK-NEXT: br label %[[REST]]
; CHECK: {{^}}[[REST]]:
; CHECK-NEXT: %a = invoke i32 @_Z6throwsi(i32 noundef %x)
; CHECK-NEXT: to label %[[CONT:.*]] unwind label %perfflow.cleanup
; CHECK: [[CONT]]:
; CHECK-NEXT: %b = call i32 @_Z4puref(float 1.000000e+00)
; CHECK-NEXT: %s = add i32 %a, %b
; CHECK-NEXT: %[[ON:perfflow.on[0-9]*]] = load atomic i8, ptr @perfflow_enabled monotonic, align 1
; CHECK-NEXT: %[[ACTIVE:perfflow.active[0-9]*]] = icmp ne i8 %[[ON]], 0
; CHECK-NEXT: br i1 %[[ACTIVE]], label %[[THEN:[0-9a-z.]+]], label %[[REST:[0-9a-z.]+]]
; CHECK: {{^}}[[THEN]]:
; CHECK-NEXT: call void @perfflow_site_exit(ptr @__perfflow_site._Z6middlei)
; CHECK-NEXT: br label %[[REST]]
; CHECK: {{^}}[[REST]]:
; CHECK-NEXT: ret i32 %s
; CHECK: perfflow.cleanup:
; CHECK-NEXT: %perfflow.lpad = landingpad { ptr, i32 }
; CHECK-NEXT: cleanup
; CHECK-NEXT: call void @perfflow_site_exit_unwind(ptr @__perfflow_site._Z6middlei)
; CHECK-NEXT: resume { ptr, i32 } %perfflow.lpad
define i32 @_Z6middlei(i32 %x) {
entry:
  %a = call i32 @_Z6throwsi(i32 noundef %x)
  %b = call i32 @_Z4puref(float 1.0)
  %s = add i32 %a, %b
  ret i32 %s
}

; CHECK-LABEL: define i32 @_Z7catcheri(i32 %x)
; CHECK: invoke i32 @_Z6throwsi(i32 %x)
; CHECK-NEXT: to label %ok unwind label %lpad
; CHECK: lpad:
; CHECK-NEXT: %lp = landingpad { ptr, i32 }
; CHECK-NEXT: cleanup
; CHECK-NEXT: catch ptr @_ZTIi
; CHECK: caught:
; CHECK: %[[ON:perfflow.on[0-9]*]] = load atomic i8, ptr @perfflow_enabled monotonic, align 1
; CHECK-NEXT: %[[ACTIVE:perfflow.active[0-9]*]] = icmp ne i8 %[[ON]], 0
; CHECK-NEXT: br i1 %[[ACTIVE]], label %[[THEN:[0-9a-z.]+]], label %[[REST:[0-9a-z.]+]]
; CHECK: {{^}}[[THEN]]:
; CHECK-NEXT: call void @perfflow_site_exit(ptr @__perfflow_site._Z7catcheri)
; CHECK-NEXT: br label %[[REST]]
; CHECK: {{^}}[[REST]]:
; CHECK-NEXT: ret i32 -1
; CHECK: unwind:
; CHECK-NEXT: %[[ON:perfflow.on[0-9]*]] = load atomic i8, ptr @perfflow_enabled monotonic, align 1
; CHECK-NEXT: %[[ACTIVE:perfflow.active[0-9]*]] = icmp ne i8 %[[ON]], 0
; CHECK-NEXT: br i1 %[[ACTIVE]], label %[[THEN:[0-9a-z.]+]], label %[[REST:[0-9a-z.]+]]
; CHECK: {{^}}[[THEN]]:
; CHECK-NEXT: call void @perfflow_site_exit_unwind(ptr @__perfflow_site._Z7catcheri)
; CHECK-NEXT: br label %[[REST]]
; CHECK: {{^}}[[REST]]:
; CHECK-NEXT: resume { ptr, i32 } %lp
define i32 @_Z7catcheri(i32 %x) personality ptr @__gxx_personality_v0 {
entry:
  %r = invoke i32 @_Z6throwsi(i32 %x) to label %ok unwind label %lpad
ok:
  ret i32 %r
lpad:
  %lp = landingpad { ptr, i32 } catch ptr @_ZTIi
  %sel = extractvalue { ptr, i32 } %lp, 1
  %tid = call i32 @llvm.eh.typeid.for(ptr @_ZTIi)
  %match = icmp eq i32 %sel, %tid
  br i1 %match, label %caught, label %unwind
caught:
  %exn = extractvalue { ptr, i32 } %lp, 0
  %p = call ptr @__cxa_begin_catch(ptr %exn)
  call void @__cxa_end_catch()
  ret i32 -1
unwind:
  resume { ptr, i32 } %lp
}

declare i32 @llvm.eh.typeid.for(ptr) nounwind

; CHECK-LABEL: define i32 @_Z7bundledv()
; CHECK: {{^}}taken:
; CHECK-NEXT: %r = invoke i32 @_Z6throwsi(i32 1) [ "tag"(i32 7) ]
; CHECK-NEXT: to label %{{.+}} unwind label %perfflow.cleanup
define i32 @_Z7bundledv() {
entry:
  br label %taken
taken:
  %r = call i32 @_Z6throwsi(i32 1) [ "tag"(i32 7) ]
  ret i32 %r
}
