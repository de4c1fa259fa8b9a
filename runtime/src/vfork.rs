//! The runtime's `vfork`, which tells the buffers when a vfork child runs.
//!
//! A vfork child shares its parent's memory until it calls exec or ends,
//! and code between the two (woven functions, the exit advice the weaver
//! puts before `_exit`) would record into the parent's buffer. The hot path
//! cannot tell the child from its parent without a system call, so the
//! runtime defines `vfork` itself (the program's calls bind to it before the
//! C library's): it makes the same system call and, in the child, hides the
//! calling thread's buffer ([`crate::buffer`]'s vfork section), and in the
//! parent puts it back. Like the C library's, it keeps its return address
//! in a register across the call, since the child may reuse the stack slot.
//!
//! Hand-written because no crate wraps `vfork` (a wrapper written in Rust
//! could not return twice on one stack). x86_64 Linux only; elsewhere the C
//! library's `vfork` runs and a vfork child may record into its parent's
//! buffer.

#[cfg(all(target_arch = "x86_64", target_os = "linux"))]
mod x86_64 {
    use crate::buffer::{vfork_child, vfork_parent};

    /// Sets `errno` to `code` (a failed `vfork`).
    extern "C" fn set_errno(code: libc::c_int) {
        // SAFETY: `__errno_location` returns the calling thread's errno.
        unsafe { *libc::__errno_location() = code };
    }

    /// `pid_t vfork(void)`, as the C library's, telling the runtime which
    /// side of it runs.
    ///
    /// # Safety
    /// As the C library's `vfork`: the child may only call exec or `_exit`
    /// (woven functions included, whose events are dropped and counted).
    #[unsafe(no_mangle)]
    #[unsafe(naked)]
    pub unsafe extern "C" fn vfork() -> libc::pid_t {
        core::arch::naked_asm!(
            // The return address, kept in a register: the child may
            // overwrite its stack slot before the parent runs again.
            "pop rdi",
            "mov eax, {nr}",
            "syscall",
            "push rdi",
            "cmp rax, -4095",
            "jae 3f",
            // Keeps the result and aligns the stack for the calls below.
            "push rax",
            "test eax, eax",
            "jnz 2f",
            "call {child}",
            "pop rax",
            "ret",
            "2:",
            "call {parent}",
            "pop rax",
            "ret",
            "3:",
            "neg eax",
            "push rax",
            "mov edi, eax",
            "call {set_errno}",
            "pop rax",
            "mov rax, -1",
            "ret",
            nr = const libc::SYS_vfork,
            child = sym vfork_child,
            parent = sym vfork_parent,
            set_errno = sym set_errno,
        )
    }
}
