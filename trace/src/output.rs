//! Output files written whole or not at all.
//!
//! A command that writes a file (a merged or converted trace, a report, a
//! profile) writes it under a temporary name in the same directory and
//! renames it into place once complete. A command that fails half way
//! leaves the file that was there untouched (a Chrome JSON trace cut short
//! is still a readable trace, so a partial one would pass for a result),
//! and an output that is a hard link to an input never truncates it.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use tempfile::NamedTempFile;

/// True when `a` and `b` name the same existing file: the same device and
/// inode, so hard links, symbolic links and other spellings of one file
/// count.
pub fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// The directory `path` is in, where a file staged for it goes: `.` for
/// a bare file name.
pub fn directory_of(path: &Path) -> &Path {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    }
}

/// A file being written at `path`.
pub struct OutputFile {
    place: Place,
    path: PathBuf,
}

enum Place {
    /// A temporary file beside the destination, renamed into it by
    /// [`OutputFile::commit`] and removed when dropped before.
    Staged(NamedTempFile),
    /// A destination that is not a regular file (`/dev/stdout`, a FIFO),
    /// written in place.
    Direct(File),
}

impl OutputFile {
    /// Starts the file that [`OutputFile::commit`] puts at `path` (the
    /// file a symbolic link there leads to, when it is one), with the
    /// permissions of the file it replaces, or those a new file gets.
    pub fn create(path: &Path) -> io::Result<OutputFile> {
        let (target, mode) = match std::fs::metadata(path) {
            Ok(meta) if !meta.is_file() && !meta.is_dir() => {
                let file = OpenOptions::new().write(true).truncate(true).open(path)?;
                return Ok(OutputFile {
                    place: Place::Direct(file),
                    path: path.to_path_buf(),
                });
            }
            Ok(meta) => (path.canonicalize()?, meta.permissions().mode() & 0o7777),
            Err(e) if e.kind() == io::ErrorKind::NotFound => (path.to_path_buf(), 0o666 & !umask()),
            Err(e) => return Err(e),
        };
        let dir = directory_of(&target);
        let name = target.file_name().map(|n| n.to_string_lossy().into_owned());
        let staged = tempfile::Builder::new()
            .prefix(&format!(".{}.", name.as_deref().unwrap_or("output")))
            .suffix(".part")
            .tempfile_in(dir)?;
        staged
            .as_file()
            .set_permissions(std::fs::Permissions::from_mode(mode))?;
        Ok(OutputFile {
            place: Place::Staged(staged),
            path: target,
        })
    }

    /// The file to write.
    pub fn file(&mut self) -> &mut File {
        match &mut self.place {
            Place::Staged(staged) => staged.as_file_mut(),
            Place::Direct(file) => file,
        }
    }

    /// Puts the complete file at its path, replacing what was there.
    pub fn commit(mut self) -> io::Result<()> {
        self.file().flush()?;
        match self.place {
            Place::Staged(staged) => staged.persist(&self.path).map(drop).map_err(|e| e.error),
            Place::Direct(_) => Ok(()),
        }
    }
}

/// The process's file mode creation mask.
fn umask() -> u32 {
    // SAFETY: `umask` only swaps the mask; it is put back at once. The tool
    // creates no file from another thread meanwhile.
    unsafe {
        let mask = libc::umask(0o022);
        libc::umask(mask);
        mask as u32
    }
}

/// Writes `bytes` as the whole file at `path` (see [`OutputFile`]).
pub fn write_whole(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut output = OutputFile::create(path)?;
    output.file().write_all(bytes)?;
    output.commit()
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::FileTypeExt;

    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("perfflow-output-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_file_not_committed_leaves_the_old_one_and_no_temporary_file() {
        let dir = scratch("abandoned");
        let path = dir.join("out.pfw");
        std::fs::write(&path, "precious").unwrap();
        let mut output = OutputFile::create(&path).unwrap();
        output.file().write_all(b"[\n").unwrap();
        drop(output);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "precious");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_committed_file_replaces_a_hard_link_and_leaves_its_twin() {
        let dir = scratch("hard-link");
        let input = dir.join("in.pfw");
        let link = dir.join("link.pfw");
        std::fs::write(&input, "input").unwrap();
        std::fs::hard_link(&input, &link).unwrap();
        assert!(same_file(&input, &link));
        write_whole(&link, b"output").unwrap();
        assert_eq!(std::fs::read_to_string(&input).unwrap(), "input");
        assert_eq!(std::fs::read_to_string(&link).unwrap(), "output");
        assert!(!same_file(&input, &link));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_symbolic_link_keeps_leading_to_the_new_file() {
        let dir = scratch("symlink");
        let real = dir.join("real.html");
        let link = dir.join("link.html");
        std::fs::write(&real, "old").unwrap();
        std::os::unix::fs::symlink(&real, &link).unwrap();
        write_whole(&link, b"new").unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "new");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_new_file_gets_the_permissions_of_the_mask() {
        let dir = scratch("mode");
        let path = dir.join("report.html");
        write_whole(&path, b"x").unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o666 & !umask());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_replaced_file_keeps_its_permissions() {
        let dir = scratch("kept-mode");
        let path = dir.join("merged.pfw");
        std::fs::write(&path, "old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        write_whole(&path, b"new").unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_device_is_written_in_place() {
        let mut output = OutputFile::create(Path::new("/dev/null")).unwrap();
        output.file().write_all(b"discarded").unwrap();
        output.commit().unwrap();
        assert!(std::fs::metadata("/dev/null")
            .unwrap()
            .file_type()
            .is_char_device());
    }
}
