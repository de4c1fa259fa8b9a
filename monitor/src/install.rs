//! What the perfflow installation a tool runs from holds, found from the
//! running executable (`<prefix>/bin/<tool>`): the LLVM version the weaver
//! plugin beside it was built for, which the build writes to
//! `<prefix>/share/perfflow/plugin-llvm` (and `<build>/share/perfflow/` in
//! a build tree). The tools are the same for every LLVM; only the plugin
//! differs, so they read it there rather than having it compiled in.

use std::path::{Path, PathBuf};

/// The file, relative to the prefix, that names the plugin's LLVM.
pub const PLUGIN_LLVM_FILE: &str = "share/perfflow/plugin-llvm";

/// The LLVM version written beside the tool at `exe`, `None` without one.
pub fn plugin_llvm_of(exe: &Path) -> Option<String> {
    let prefix: PathBuf = exe.parent()?.parent()?.to_path_buf();
    let text = std::fs::read_to_string(prefix.join(PLUGIN_LLVM_FILE)).ok()?;
    let version = text.trim();
    (!version.is_empty() && version.len() <= 64 && !version.contains('\n'))
        .then(|| version.to_string())
}

/// `0.1.0 (weaver plugin for LLVM 19.1.7)`, the text `--version` prints
/// after the tool's name; `tool_version` is the tool's own version.
pub fn version_line(tool_version: &str) -> String {
    let plugin = std::env::current_exe()
        .ok()
        .and_then(|exe| plugin_llvm_of(&exe))
        .map_or_else(
            || "no weaver plugin installed beside this tool".to_string(),
            |llvm| format!("weaver plugin for LLVM {llvm}"),
        );
    format!("{tool_version} ({plugin})")
}

/// [`version_line`] for clap's `version` attribute, which takes a
/// `&'static str`: made once per process.
pub fn static_version_line(tool_version: &'static str) -> &'static str {
    static LINE: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    LINE.get_or_init(|| version_line(tool_version))
}
