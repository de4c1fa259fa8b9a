//! Display names for C++ linkage names (cold path only).
//!
//! The trace shows a function as `Namespace::Class::method` or
//! `ns::work<int>`, without parameters or return type: the same form the
//! weaver puts into `perfflow_site::name` and the filter files match, read
//! by the same code ([`perfflow_parser::names::display_name`], on the
//! `cpp_demangle` crate). Only the upstream string ABI hands the runtime
//! raw linkage names, so the work here happens once per interned site, in
//! any process (C programs without libstdc++ included).

/// The name to display for a linkage name; a name that is not valid UTF-8
/// or not an Itanium mangling is shown as given.
pub fn display_name(symbol: &[u8]) -> String {
    match std::str::from_utf8(symbol) {
        Ok(symbol) => perfflow_parser::names::display_name(symbol),
        Err(_) => String::from_utf8_lossy(symbol).into_owned(),
    }
}
