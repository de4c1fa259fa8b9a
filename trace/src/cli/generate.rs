//! `perfflow-trace completions` and `perfflow-trace man`: shell completion
//! scripts and the manual page, generated from the command-line definition
//! so they never disagree with `--help`.

use std::io::Write;
use std::path::PathBuf;

use clap_complete::Shell;

use super::{command, say, EXIT_FAILED, EXIT_OK};

/// Print the completion script for SHELL on standard output
///
/// For example `perfflow-trace completions bash >
/// /etc/bash_completion.d/perfflow-trace`. The CMake install puts the bash,
/// zsh and fish scripts where those shells look.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct CompletionsArgs {
    /// The shell to complete for
    #[arg(value_name = "SHELL")]
    pub shell: Shell,
}

/// Write the manual pages (roff) into DIR
///
/// `perfflow-trace.1` for the tool and `perfflow-trace-COMMAND.1` for each
/// command, as `man perfflow-trace-merge` finds them once DIR is a `man1`
/// directory on MANPATH. The CMake install puts them in share/man/man1.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct ManArgs {
    /// The directory to write the pages into (created if missing)
    #[arg(value_name = "DIR")]
    pub dir: PathBuf,
}

pub fn completions(args: &CompletionsArgs, out: &mut dyn Write, _err: &mut dyn Write) -> u8 {
    let mut cmd = command();
    clap_complete::generate(args.shell, &mut cmd, "perfflow-trace", out);
    EXIT_OK
}

pub fn man(args: &ManArgs, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let written = std::fs::create_dir_all(&args.dir)
        .and_then(|()| clap_mangen::generate_to(command(), &args.dir));
    match written {
        Ok(()) => {
            say(
                out,
                format_args!("{}: manual pages written", args.dir.display()),
            );
            EXIT_OK
        }
        Err(error) => {
            say(
                err,
                format_args!("perfflow-trace: man: {}: {error}", args.dir.display()),
            );
            EXIT_FAILED
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manual_page_is_written_for_the_tool_and_each_command() {
        let dir = std::env::temp_dir().join(format!("perfflow-trace-man-{}", std::process::id()));
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let args = ManArgs { dir: dir.clone() };
        assert_eq!(man(&args, &mut out, &mut err), EXIT_OK);
        let read = |name: &str| std::fs::read_to_string(dir.join(name)).expect(name);
        assert!(read("perfflow-trace.1").contains("perfflow\\-trace\\-merge(1)"));
        assert!(read("perfflow-trace-check.1").contains("expect\\-names"));
        assert!(read("perfflow-trace-merge.1").contains("fix\\-clocks"));
        std::fs::remove_dir_all(&dir).expect("remove the pages");
    }

    #[test]
    fn bash_completion_knows_the_commands() {
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let args = CompletionsArgs { shell: Shell::Bash };
        assert_eq!(completions(&args, &mut out, &mut err), EXIT_OK);
        let script = String::from_utf8(out).expect("UTF-8");
        assert!(script.contains("merge") && script.contains("--fix-clocks"));
    }
}
