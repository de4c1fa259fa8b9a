//! Display names for C++ linkage names (cold path only).
//!
//! The trace shows a function as `Namespace::Class::method`, without
//! parameters or return type, the same form the weaver puts into
//! `perfflow_site::name`. Only the upstream string ABI hands the runtime raw
//! linkage names, so the work here happens once per interned site.
//!
//! Two demanglers are tried, and no crate is needed for either:
//! 1. a small built-in reader for the common Itanium forms (plain and nested
//!    names, `std::`, constructors, destructors, anonymous namespaces, ABI
//!    tags), which works in any process, C programs included;
//! 2. `__cxa_demangle`, looked up with `dlsym` at run time — never linked, so
//!    C programs that do not load libstdc++ still link and run. It covers
//!    templates, operators and everything else; its output is cut down to the
//!    qualified name by [`strip_signature`].
//!
//! When neither applies, the linkage name is shown as is.

use std::ffi::{c_char, c_int, CStr, CString};

/// The name to display for a linkage name.
pub fn display_name(symbol: &[u8]) -> String {
    if !symbol.starts_with(b"_Z") {
        return String::from_utf8_lossy(symbol).into_owned();
    }
    if let Some(name) = builtin(symbol) {
        return name;
    }
    if let Some(full) = cxa_demangle(symbol) {
        let short = strip_signature(&full);
        if !short.is_empty() {
            return short;
        }
    }
    String::from_utf8_lossy(symbol).into_owned()
}

/// Reads the qualified name of the common Itanium manglings. Returns `None`
/// for anything it does not fully understand (templates, operators,
/// substitutions, local names), leaving those to a complete demangler.
pub fn builtin(symbol: &[u8]) -> Option<String> {
    let rest = symbol.strip_prefix(b"_Z")?;
    let mut r = Reader { s: rest, i: 0 };
    let parts = r.name()?;
    // Whatever follows is the parameter list, or a clone suffix such as
    // `.cold`; neither belongs in the display name.
    if parts.is_empty() {
        return None;
    }
    Some(parts.join("::"))
}

struct Reader<'a> {
    s: &'a [u8],
    i: usize,
}

impl Reader<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn eat(&mut self, b: u8) -> bool {
        if self.peek() == Some(b) {
            self.i += 1;
            true
        } else {
            false
        }
    }

    fn name(&mut self) -> Option<Vec<String>> {
        match self.peek()? {
            b'N' => {
                self.i += 1;
                self.nested()
            }
            b'S' if self.s.get(self.i + 1) == Some(&b't') => {
                self.i += 2;
                let mut parts = vec!["std".to_string()];
                let part = self.unqualified(&parts)?;
                parts.push(part);
                Some(parts)
            }
            _ => {
                let part = self.unqualified(&[])?;
                Some(vec![part])
            }
        }
    }

    fn nested(&mut self) -> Option<Vec<String>> {
        // CV- and ref-qualifiers of member functions.
        while matches!(self.peek(), Some(b'r' | b'V' | b'K' | b'R' | b'O')) {
            self.i += 1;
        }
        let mut parts: Vec<String> = Vec::new();
        if self.peek() == Some(b'S') && self.s.get(self.i + 1) == Some(&b't') {
            self.i += 2;
            parts.push("std".to_string());
        }
        while !self.eat(b'E') {
            let part = self.unqualified(&parts)?;
            parts.push(part);
        }
        Some(parts)
    }

    fn unqualified(&mut self, before: &[String]) -> Option<String> {
        // Internal linkage marker (`static` functions).
        self.eat(b'L');
        let part = match self.peek()? {
            b'0'..=b'9' => {
                let id = self.source_name()?;
                if id.starts_with("_GLOBAL__N") {
                    "(anonymous namespace)".to_string()
                } else {
                    id
                }
            }
            b'C' => {
                self.i += 1;
                match self.peek()? {
                    b'1'..=b'5' => self.i += 1,
                    _ => return None,
                }
                before.last()?.clone()
            }
            b'D' => {
                self.i += 1;
                match self.peek()? {
                    b'0' | b'1' | b'2' | b'4' | b'5' => self.i += 1,
                    _ => return None,
                }
                format!("~{}", before.last()?)
            }
            _ => return None,
        };
        // ABI tags (`B5cxx11`) are dropped from the display name.
        while self.peek() == Some(b'B') {
            self.i += 1;
            self.source_name()?;
        }
        Some(part)
    }

    fn source_name(&mut self) -> Option<String> {
        let start = self.i;
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.i += 1;
        }
        let digits = std::str::from_utf8(&self.s[start..self.i]).ok()?;
        let len: usize = digits.parse().ok()?;
        let end = self.i.checked_add(len)?;
        let id = self.s.get(self.i..end)?;
        self.i = end;
        if id.is_empty() || !id.iter().all(|b| b.is_ascii_alphanumeric() || *b == b'_') {
            return None;
        }
        Some(String::from_utf8_lossy(id).into_owned())
    }
}

type CxaDemangle =
    unsafe extern "C" fn(*const c_char, *mut c_char, *mut usize, *mut c_int) -> *mut c_char;

/// Demangles with `__cxa_demangle` when the process has one loaded.
pub fn cxa_demangle(symbol: &[u8]) -> Option<String> {
    let symbol = CString::new(symbol).ok()?;
    // SAFETY: dlsym with RTLD_DEFAULT and a NUL-terminated name is always
    // valid; a null result is handled.
    let f = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"__cxa_demangle".as_ptr()) };
    if f.is_null() {
        return None;
    }
    // SAFETY: `__cxa_demangle` has this signature in every C++ ABI library.
    let f: CxaDemangle = unsafe { std::mem::transmute::<*mut libc::c_void, CxaDemangle>(f) };
    let mut status: c_int = -1;
    // SAFETY: a null buffer asks the function to allocate with malloc; the
    // result is read as a C string and released with free.
    unsafe {
        let out = f(
            symbol.as_ptr(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            &mut status,
        );
        if out.is_null() {
            return None;
        }
        let text = (status == 0).then(|| CStr::from_ptr(out).to_string_lossy().into_owned());
        libc::free(out.cast());
        text
    }
}

/// Cuts a full demangled signature down to the qualified name: drops the
/// parameter list (and anything after it, such as `const`) and, for template
/// functions, the leading return type. `operator()`, `operator<` and friends
/// are recognised so their punctuation does not count as nesting.
pub fn strip_signature(full: &str) -> String {
    let b = full.as_bytes();
    let mut depth: i32 = 0;
    let mut last_open: Option<usize> = None;
    let mut last_space: Option<usize> = None;
    let mut operator_at: Option<usize> = None;
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"operator")
            && (i == 0 || !(b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_'))
        {
            if depth == 0 {
                operator_at = Some(i);
            }
            i += "operator".len();
            if b[i..].starts_with(b"()") || b[i..].starts_with(b"[]") {
                i += 2;
            } else {
                while i < b.len() && b"<>=!+-*/%^&|~,".contains(&b[i]) {
                    i += 1;
                }
            }
            continue;
        }
        match b[i] {
            b'(' => {
                if depth == 0 {
                    last_open = Some(i);
                }
                depth += 1;
            }
            b'<' | b'[' | b'{' => depth += 1,
            b')' | b'>' | b']' | b'}' => depth -= 1,
            b' ' if depth == 0 && operator_at.is_none() => last_space = Some(i),
            _ => {}
        }
        i += 1;
    }
    let end = last_open.unwrap_or(b.len());
    let start = match last_space {
        Some(s) if s < end => s + 1,
        _ => 0,
    };
    full.get(start..end).unwrap_or(full).trim().to_string()
}
