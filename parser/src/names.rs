//! The name a trace shows for a function, from its linkage name: what the
//! weaver puts into each site, and what the rules of a filter file match
//! (at compile time in the weaver, at run time in the runtime's
//! `-finstrument-functions` hooks), so both see the same names.

/// Demangled C++ without the parameter list and return type
/// (`SmokeTest::foo`, `work<int>`), or the C name as it is.
pub fn display_name(symbol: &str) -> String {
    // clang marks asm labels with a leading \x01.
    let symbol = symbol.strip_prefix('\u{1}').unwrap_or(symbol);
    if symbol.starts_with("_Z") {
        if let Ok(parsed) = cpp_demangle::Symbol::new(symbol) {
            let options = cpp_demangle::DemangleOptions::new()
                .no_params()
                .no_return_type();
            if let Ok(name) = parsed.demangle_with_options(&options) {
                return name;
            }
        }
    }
    symbol.to_string()
}
