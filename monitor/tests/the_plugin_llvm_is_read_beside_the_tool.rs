//! `--version` names the plugin's LLVM from `<prefix>/share/perfflow/plugin-llvm`.

use perfflow_monitor::install::{plugin_llvm_of, PLUGIN_LLVM_FILE};

#[test]
fn the_version_file_beside_the_tool_is_read_and_its_absence_is_none() {
    let prefix = std::env::temp_dir().join(format!("perfflow-install-{}", std::process::id()));
    let tool = prefix.join("bin").join("perfflow-trace");
    assert_eq!(plugin_llvm_of(&tool), None);
    let file = prefix.join(PLUGIN_LLVM_FILE);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, "14.0.6\n").unwrap();
    let found = plugin_llvm_of(&tool);
    std::fs::remove_dir_all(&prefix).unwrap();
    assert_eq!(found.as_deref(), Some("14.0.6"));
}
