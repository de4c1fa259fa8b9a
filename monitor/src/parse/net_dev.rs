//! `/proc/net/dev`: two header lines, then one line per interface:
//! `name: <8 receive columns> <8 transmit columns>`. Very old kernels print
//! no space between the colon and the first number.

use super::number;
use crate::error::ParseError;

const FILE: &str = "/proc/net/dev";

/// Cumulative counters of one network interface.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NetDevice {
    /// Interface name (`eth0`, `ib0`, `lo`...).
    pub name: String,
    /// Bytes received.
    pub rx_bytes: u64,
    /// Packets received.
    pub rx_packets: u64,
    /// Receive errors.
    pub rx_errs: u64,
    /// Received packets dropped.
    pub rx_drop: u64,
    /// Bytes transmitted.
    pub tx_bytes: u64,
    /// Packets transmitted.
    pub tx_packets: u64,
    /// Transmit errors.
    pub tx_errs: u64,
    /// Transmitted packets dropped.
    pub tx_drop: u64,
}

/// Parses the text of `/proc/net/dev`.
pub fn parse(text: &str) -> Result<Vec<NetDevice>, ParseError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate().skip(2) {
        let n = i + 1;
        if line.trim().is_empty() {
            continue;
        }
        let (name, rest) = line
            .split_once(':')
            .ok_or_else(|| ParseError::new(FILE, n, "no `:` after the interface name"))?;
        let cols: Vec<&str> = rest.split_ascii_whitespace().collect();
        if cols.len() < 16 {
            return Err(ParseError::new(
                FILE,
                n,
                format!("expected 16 columns, found {}", cols.len()),
            ));
        }
        let c = |k: usize, what: &str| number::<u64>(FILE, n, what, cols[k]);
        out.push(NetDevice {
            name: name.trim().to_string(),
            rx_bytes: c(0, "receive bytes")?,
            rx_packets: c(1, "receive packets")?,
            rx_errs: c(2, "receive errs")?,
            rx_drop: c(3, "receive drop")?,
            tx_bytes: c(8, "transmit bytes")?,
            tx_packets: c(9, "transmit packets")?,
            tx_errs: c(10, "transmit errs")?,
            tx_drop: c(11, "transmit drop")?,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "Inter-|   Receive                                                |  Transmit\n face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n    lo:    3193      29    0    0    0     0          0         0     3193      29    0    0    0     0       0          0\n  eth0: 187153143    5411    0    2    0     0          0         0   329510    3436    1    0    0     0       0          0\n";

    #[test]
    fn every_interface_gives_bytes_and_packets_both_ways() {
        let devs = parse(TEXT).unwrap();
        assert_eq!(devs.len(), 2);
        let eth = &devs[1];
        assert_eq!(eth.name, "eth0");
        assert_eq!(
            (eth.rx_bytes, eth.rx_packets, eth.rx_drop),
            (187153143, 5411, 2)
        );
        assert_eq!(
            (eth.tx_bytes, eth.tx_packets, eth.tx_errs),
            (329510, 3436, 1)
        );
    }

    #[test]
    fn an_old_kernel_without_a_space_after_the_colon_parses() {
        let text = "h1\nh2\n  eth0:123 4 0 0 0 0 0 0 567 8 0 0 0 0 0 0\n";
        let devs = parse(text).unwrap();
        assert_eq!((devs[0].rx_bytes, devs[0].tx_bytes), (123, 567));
    }

    #[test]
    fn a_short_line_is_an_error_naming_it() {
        let e = parse("h1\nh2\n  eth0: 1 2 3\n").unwrap_err();
        assert_eq!((e.file.as_str(), e.line), ("/proc/net/dev", 3));
    }
}
