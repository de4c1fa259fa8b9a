//! InfiniBand port counters: one file per counter under
//! `/sys/class/infiniband/<device>/ports/<port>/counters/`, each holding
//! one decimal number.
//!
//! Units: `port_xmit_data` and `port_rcv_data` count **4-byte words**
//! (octets divided by 4, per the InfiniBand PortCounters attribute), so
//! bytes are the value times [`DATA_WORD_BYTES`]. The packet counters count
//! packets. On HCAs that only implement the 32-bit PortCounters the data
//! counters stop at 4294967295 instead of wrapping; drivers that implement
//! PortCountersExtended report 64-bit values in the same files.

use super::sysfs::parse_u64;
use crate::error::ParseError;

/// Bytes per unit of `port_xmit_data` / `port_rcv_data`.
pub const DATA_WORD_BYTES: u64 = 4;

/// The counters of one port the sampler uses (cumulative).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IbPortCounters {
    /// `port_xmit_data`, in 4-byte words.
    pub xmit_data_words: Option<u64>,
    /// `port_rcv_data`, in 4-byte words.
    pub rcv_data_words: Option<u64>,
    /// `port_xmit_packets`.
    pub xmit_packets: Option<u64>,
    /// `port_rcv_packets`.
    pub rcv_packets: Option<u64>,
    /// `port_rcv_errors`.
    pub rcv_errors: Option<u64>,
    /// `port_xmit_discards`.
    pub xmit_discards: Option<u64>,
}

impl IbPortCounters {
    /// Bytes transmitted.
    pub fn xmit_bytes(&self) -> Option<u64> {
        self.xmit_data_words
            .map(|w| w.saturating_mul(DATA_WORD_BYTES))
    }

    /// Bytes received.
    pub fn rcv_bytes(&self) -> Option<u64> {
        self.rcv_data_words
            .map(|w| w.saturating_mul(DATA_WORD_BYTES))
    }
}

/// True if `file_name` is a counter file this parser keeps; readers skip
/// the others without reading them.
pub fn is_known_counter(file_name: &str) -> bool {
    matches!(
        file_name,
        "port_xmit_data"
            | "port_rcv_data"
            | "port_xmit_packets"
            | "port_rcv_packets"
            | "port_rcv_errors"
            | "port_xmit_discards"
    )
}

/// Parses the text of the counter file `file_name` into `counters`.
/// Unknown counter names are ignored.
pub fn parse_counter(
    counters: &mut IbPortCounters,
    file_name: &str,
    text: &str,
) -> Result<(), ParseError> {
    let slot = match file_name {
        "port_xmit_data" => &mut counters.xmit_data_words,
        "port_rcv_data" => &mut counters.rcv_data_words,
        "port_xmit_packets" => &mut counters.xmit_packets,
        "port_rcv_packets" => &mut counters.rcv_packets,
        "port_rcv_errors" => &mut counters.rcv_errors,
        "port_xmit_discards" => &mut counters.xmit_discards,
        _ => return Ok(()),
    };
    let file = format!("/sys/class/infiniband/<device>/ports/<port>/counters/{file_name}");
    *slot = Some(parse_u64(&file, text)?);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_counters_are_words_of_four_bytes() {
        let mut c = IbPortCounters::default();
        parse_counter(&mut c, "port_xmit_data", "1000\n").unwrap();
        parse_counter(&mut c, "port_rcv_data", "250\n").unwrap();
        parse_counter(&mut c, "port_rcv_packets", "7\n").unwrap();
        parse_counter(&mut c, "VL15_dropped", "3\n").unwrap();
        assert_eq!(c.xmit_bytes(), Some(4000));
        assert_eq!(c.rcv_bytes(), Some(1000));
        assert_eq!(c.rcv_packets, Some(7));
        assert_eq!(c.xmit_packets, None);
    }

    #[test]
    fn a_malformed_counter_is_an_error_naming_the_counter_file() {
        let mut c = IbPortCounters::default();
        let e = parse_counter(&mut c, "port_rcv_data", "N/A\n").unwrap_err();
        assert!(e.file.ends_with("counters/port_rcv_data"), "{e}");
        assert_eq!(e.line, 1);
    }
}
