//! HDF5 export through the system HDF5 library (`hdf5-metno`), laid out
//! as pandas' fixed format (`DataFrame.to_hdf(path, key=..., format="fixed")`
//! through PyTables), so that `pandas.read_hdf(path, key)` reads the table
//! back: the same columns, order and values as the CSV export, `Host` as
//! text and every other column as `float64`, missing values as NaN.
//!
//! The file `<group>.h5` holds one group, named as the metric group
//! (`cpu_metrics`, ...), which is the key `read_hdf` takes; alone in its
//! file, it is also what `read_hdf(path)` reads without a key. The group
//! is a frame of two blocks:
//!
//! | node | holds |
//! | --- | --- |
//! | `axis0` | the column names, fixed-length UTF-8 strings |
//! | `axis1` | the row index, `0..rows` as `int64` |
//! | `block0_items`, `block0_values` | `Host`, and its values |
//! | `block1_items`, `block1_values` | `Timestamps` and the series, and their values as `float64`, one row per table row |
//!
//! with the attributes pandas reads (`pandas_type = "frame"`, `ndim`,
//! `nblocks`, `encoding`, `<axis>_variety`, `kind` on each index,
//! `transposed` on each block) and those PyTables reads to know a node's
//! class (`CLASS`, `VERSION`, `FLAVOR`, `PSEUDOATOM`).
//!
//! Text columns are the one part pandas does not store as HDF5 types: a
//! column of Python objects is a PyTables `VLArray` of one variable-length
//! byte row holding the pickled 2-D object array, which `read_hdf`
//! unpickles. The pickle here calls `numpy.array(rows, "O")` on the host
//! names as `[[host], ...]` (one row per table row, as pandas stores the
//! block transposed), a call every NumPy version answers the same way;
//! `serde-pickle` writes the arguments, and the call around them is three
//! opcodes ([`object_array_pickle`]).
//!
//! Fixed-length strings whose width is known only at run time have no
//! Rust type in `hdf5-metno`, so [`fixed_strings`] creates their type from
//! a descriptor and writes the bytes with `H5Dwrite`/`H5Awrite` under the
//! crate's library lock.

use std::path::Path;

use hdf5_metno::types::{TypeDescriptor, VarLenArray};
use hdf5_metno::{Container, Datatype, Group, Location};
use hdf5_metno_sys::{h5a::H5Awrite, h5d::H5Dwrite, h5p::H5P_DEFAULT, h5s::H5S_ALL};

use super::table::{Table, HOST, TIME};
use super::WriteError;

/// The file format version pandas writes in its attribute `pandas_version`
/// (unchanged since pandas 0.15.2).
const PANDAS_FORMAT_VERSION: &str = "0.15.2";

/// Writes `table` to a new HDF5 file at `path`, replacing any file there.
pub fn write_hdf5(table: &Table, path: &Path) -> Result<(), WriteError> {
    let file = hdf5_metno::File::create(path)?;
    // The root group as PyTables marks it.
    string_attr(&file, "CLASS", "GROUP")?;
    string_attr(&file, "VERSION", "1.0")?;
    string_attr(&file, "PYTABLES_FORMAT_VERSION", "2.1")?;

    let frame = file.create_group(table.name())?;
    string_attr(&frame, "CLASS", "GROUP")?;
    string_attr(&frame, "VERSION", "1.0")?;
    string_attr(&frame, "pandas_type", "frame")?;
    string_attr(&frame, "pandas_version", PANDAS_FORMAT_VERSION)?;
    string_attr(&frame, "encoding", "UTF-8")?;
    string_attr(&frame, "errors", "strict")?;
    int_attr(&frame, "ndim", 2)?;
    int_attr(&frame, "nblocks", 2)?;
    for index in ["axis0", "axis1", "block0_items", "block1_items"] {
        string_attr(&frame, &format!("{index}_variety"), "regular")?;
    }

    let rows = table.num_rows();
    string_index(&frame, "axis0", &table.headers())?;
    let row_numbers: Vec<i64> = (0..rows as i64).collect();
    let axis1 = frame.new_dataset::<i64>().shape(rows).create("axis1")?;
    axis1.write_raw(&row_numbers)?;
    array_attrs(&axis1, Some("integer"))?;

    string_index(&frame, "block0_items", &[HOST.to_string()])?;
    let hosts: Vec<&str> = table.host_column().collect();
    let pickle = object_array_pickle(&hosts)?;
    let block0 = frame
        .new_dataset::<VarLenArray<u8>>()
        .chunk(1)
        .shape(1..)
        .create("block0_values")?;
    block0.write_raw(&vec![VarLenArray::from_slice(&pickle)])?;
    string_attr(&block0, "CLASS", "VLARRAY")?;
    string_attr(&block0, "VERSION", "1.4")?;
    string_attr(&block0, "PSEUDOATOM", "object")?;
    transposed_attr(&block0)?;

    let mut items = vec![TIME.to_string()];
    items.extend(table.series_headers().iter().cloned());
    string_index(&frame, "block1_items", &items)?;
    // Row-major (row, column), which pandas reads transposed into its
    // (column, row) block.
    let mut values = Vec::with_capacity(rows * items.len());
    for row in table.rows() {
        values.push(row.time_stamp);
        values.extend(row.values.iter().map(|v| v.unwrap_or(f64::NAN)));
    }
    let block1 = frame
        .new_dataset::<f64>()
        .shape((rows, items.len()))
        .create("block1_values")?;
    block1.write_raw(&values)?;
    array_attrs(&block1, None)?;
    file.close()?;
    Ok(())
}

/// A pickle (protocol 3) of `numpy.array([[s] for s in strings], "O")`: a
/// column of Python `str` as the 2-D object array pandas keeps a text
/// block in (`numpy.empty((0, 1), "O")` when there are no strings, which
/// keeps the shape).
pub fn object_array_pickle(strings: &[&str]) -> Result<Vec<u8>, WriteError> {
    // serde-pickle writes the arguments framed as a whole pickle: PROTO 3
    // first, STOP last.
    let options = serde_pickle::SerOptions::new;
    let (function, args) = if strings.is_empty() {
        (
            &b"empty"[..],
            serde_pickle::to_vec(&((0u8, 1u8), "O"), options())?,
        )
    } else {
        let rows: Vec<&[&str]> = strings.iter().map(std::slice::from_ref).collect();
        (
            &b"array"[..],
            serde_pickle::to_vec(&(rows, "O"), options())?,
        )
    };
    let body = args
        .strip_prefix(b"\x80\x03")
        .and_then(|b| b.strip_suffix(b"."))
        .ok_or("serde-pickle wrote a pickle of another protocol than 3")?;
    let mut out = Vec::with_capacity(body.len() + 20);
    out.extend_from_slice(b"\x80\x03"); // PROTO 3
    out.extend_from_slice(b"cnumpy\n"); // GLOBAL numpy.<function>
    out.extend_from_slice(function);
    out.push(b'\n');
    out.extend_from_slice(body); // the argument tuple
    out.extend_from_slice(b"R."); // REDUCE (the call), STOP
    Ok(out)
}

/// A 1-D index of strings (`axis0`, `blockN_items`): fixed-length UTF-8
/// strings as wide as the longest, with `kind = "string"`.
fn string_index(frame: &Group, name: &str, strings: &[String]) -> Result<(), WriteError> {
    let (dtype, bytes) = fixed_strings(strings)?;
    let dataset = frame
        .new_dataset_builder()
        .empty_as(&dtype)
        .shape(strings.len())
        .create(name)?;
    // SAFETY: `bytes` holds `strings.len()` elements of `dtype` (each its
    // size, NUL-padded), the whole extent of the dataset.
    let status = hdf5_metno::sync::sync(|| unsafe {
        H5Dwrite(
            dataset.id(),
            dtype.id(),
            H5S_ALL,
            H5S_ALL,
            H5P_DEFAULT,
            bytes.as_ptr().cast(),
        )
    });
    if status < 0 {
        return Err(format!("HDF5 could not write the strings of {name}").into());
    }
    array_attrs(&dataset, Some("string"))
}

/// A fixed-length UTF-8 string type as wide as the longest of `strings`
/// (at least 1 byte), and the strings in it, NUL-padded, end to end.
fn fixed_strings<S: AsRef<str>>(strings: &[S]) -> Result<(Datatype, Vec<u8>), WriteError> {
    let width = strings
        .iter()
        .map(|s| s.as_ref().len())
        .max()
        .unwrap_or(0)
        .max(1);
    let dtype = Datatype::from_descriptor(&TypeDescriptor::FixedUnicode(width))?;
    let mut bytes = vec![0u8; width * strings.len()];
    for (slot, s) in bytes.chunks_exact_mut(width).zip(strings) {
        slot[..s.as_ref().len()].copy_from_slice(s.as_ref().as_bytes());
    }
    Ok((dtype, bytes))
}

/// A scalar string attribute, as PyTables writes a Python `str`.
fn string_attr(location: &Location, name: &str, value: &str) -> Result<(), WriteError> {
    let (dtype, bytes) = fixed_strings(&[value])?;
    let attr = location
        .new_attr_builder()
        .empty_as(&dtype)
        .shape(())
        .create(name)?;
    // SAFETY: `bytes` is one element of `dtype`, the attribute's extent.
    let status = hdf5_metno::sync::sync(|| unsafe {
        H5Awrite(attr.id(), dtype.id(), bytes.as_ptr().cast())
    });
    if status < 0 {
        return Err(format!("HDF5 could not write the attribute {name}").into());
    }
    Ok(())
}

/// A scalar `int64` attribute.
fn int_attr(location: &Location, name: &str, value: i64) -> Result<(), WriteError> {
    location
        .new_attr::<i64>()
        .shape(())
        .create(name)?
        .write_scalar(&value)?;
    Ok(())
}

/// `transposed`, the flag pandas sets on every array it stores (PyTables
/// writes a Python `bool` as one byte).
fn transposed_attr(container: &Container) -> Result<(), WriteError> {
    container
        .new_attr::<u8>()
        .shape(())
        .create("transposed")?
        .write_scalar(&1u8)?;
    Ok(())
}

/// The attributes of a PyTables `Array` that pandas wrote: its class and
/// version, `transposed`, and for an index its `kind`.
fn array_attrs(container: &Container, kind: Option<&str>) -> Result<(), WriteError> {
    string_attr(container, "CLASS", "ARRAY")?;
    string_attr(container, "VERSION", "2.4")?;
    string_attr(container, "FLAVOR", "numpy")?;
    transposed_attr(container)?;
    if let Some(kind) = kind {
        string_attr(container, "kind", kind)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::object_array_pickle;

    #[test]
    fn the_host_column_pickles_as_a_call_of_numpy_array() {
        let p = object_array_pickle(&["a"]).unwrap();
        assert!(p.starts_with(b"\x80\x03cnumpy\narray\n"), "{p:?}");
        assert!(p.ends_with(b"R."), "{p:?}");
        // The host name is in it as a BINUNICODE string.
        assert!(p.windows(6).any(|w| w == b"X\x01\x00\x00\x00a"), "{p:?}");
    }
}
