//! The fast path of the reader against `prost`, and reading in pieces.

use perfflow_runtime::protobuf::{put_varint as varint, Encoder};
use prost::Message;
use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};

use super::*;

fn field_varint(out: &mut Vec<u8>, field: u32, v: u64) {
    Encoder::new(out).uint(field, v);
}

fn field_bytes(out: &mut Vec<u8>, field: u32, bytes: &[u8]) {
    Encoder::new(out).bytes(field, bytes);
}

/// A random packet of the fields a track event packet may have, some the
/// fast path reads and some it leaves to `prost`; and whether the fast
/// path must take it.
fn random_packet(rng: &mut ChaCha8Rng) -> (Vec<u8>, bool) {
    let mut fast = true;
    let mut event = Vec::new();
    for _ in 0..rng.random_range(0..8) {
        let value = match rng.random_range(0..4) {
            0 => rng.random_range(0..128),
            1 => rng.random_range(0..1 << 20),
            2 => rng.random(),
            _ => u64::MAX,
        };
        match rng.random_range(0..12) {
            0 => field_varint(&mut event, 9, value % 5),
            1 => field_varint(&mut event, 10, value),
            2 => field_varint(&mut event, 3, value),
            3 => field_varint(&mut event, 11, value),
            4 => field_varint(&mut event, 34, value),
            5..=8 => {
                let field = if rng.random() { 23 } else { 22 };
                let text: &[u8] = match rng.random_range(0..8) {
                    0 => b"",
                    1 => b"compute_step",
                    2..=6 => "r\u{e9}gion".as_bytes(),
                    _ => {
                        fast = false; // not UTF-8: prost's error
                        b"\xff\xfe"
                    }
                };
                field_bytes(&mut event, field, text);
            }
            9 => {
                fast = false; // a debug annotation
                let mut annotation = Vec::new();
                field_bytes(&mut annotation, 10, b"outcome");
                field_bytes(&mut annotation, 6, b"raised");
                field_bytes(&mut event, 4, &annotation);
            }
            _ => {
                fast = false; // packed category ids
                let mut packed = Vec::new();
                varint(&mut packed, value);
                field_bytes(&mut event, 3, &packed);
            }
        }
    }
    // The event among up to five other fields, rarely twice or not at all.
    let mut packet = Vec::new();
    let others = rng.random_range(0..6);
    let at = rng.random_range(0..=others);
    let mut has_event = false;
    for i in 0..=others {
        if i == at && rng.random_range(0..20) != 0 {
            fast &= !has_event;
            has_event = true;
            field_bytes(&mut packet, 11, &event);
            continue;
        }
        match rng.random_range(0..12) {
            0..=2 => field_varint(&mut packet, 8, rng.random()),
            3..=5 => field_varint(&mut packet, 10, rng.random_range(0..5)),
            6 | 7 => field_varint(&mut packet, 58, rng.random_range(0..130)),
            8 | 9 => {
                let flags = rng.random_range(0..4);
                fast &= flags & u64::from(SEQ_INCREMENTAL_STATE_CLEARED) == 0;
                field_varint(&mut packet, 13, flags);
            }
            10 => {
                fast &= !has_event; // twice: prost merges them
                has_event = true;
                field_bytes(&mut packet, 11, &event);
            }
            _ => {
                fast = false; // interned data
                let mut name = Vec::new();
                field_varint(&mut name, 1, 1);
                field_bytes(&mut name, 2, b"main");
                let mut interned = Vec::new();
                field_bytes(&mut interned, 2, &name);
                field_bytes(&mut packet, 12, &interned);
            }
        }
    }
    (packet, fast && has_event)
}

#[test]
fn the_fast_path_reads_every_packet_it_takes_as_prost_does() {
    let mut rng = ChaCha8Rng::seed_from_u64(14);
    let (mut taken, mut left) = (0, 0);
    for case in 0..20_000 {
        let (bytes, must_take) = random_packet(&mut rng);
        let fast = match fast_packet(&bytes, Vec::new()) {
            Ok(fast) => fast,
            Err(_) => {
                assert!(!must_take, "case {case}: the fast path left {bytes:02x?}");
                left += 1;
                continue;
            }
        };
        taken += 1;
        let packet = TracePacket::decode(&bytes[..])
            .unwrap_or_else(|e| panic!("case {case}: taken, but prost fails ({e}): {bytes:02x?}"));
        let event = packet.track_event.expect("a track event");
        assert_eq!(fast.timestamp, packet.timestamp, "case {case}");
        assert_eq!(fast.clock, packet.timestamp_clock_id, "case {case}");
        assert_eq!(
            fast.sequence,
            packet.trusted_packet_sequence_id.unwrap_or(0),
            "case {case}"
        );
        assert_eq!(
            packet.sequence_flags.unwrap_or(0) & SEQ_INCREMENTAL_STATE_CLEARED,
            0,
            "case {case}"
        );
        assert!(packet.interned_data.is_none(), "case {case}");
        assert_eq!(fast.event.r#type, event.r#type, "case {case}");
        assert_eq!(fast.event.name_iid, event.name_iid, "case {case}");
        assert_eq!(fast.event.category_iids, event.category_iids, "case {case}");
        assert_eq!(fast.event.track_uuid, event.track_uuid, "case {case}");
        assert_eq!(fast.name, event.name.as_deref(), "case {case}");
        assert_eq!(
            fast.category,
            event.categories.first().map(String::as_str),
            "case {case}"
        );
        assert!(event.debug_annotations.is_empty(), "case {case}");
    }
    // Both paths were exercised.
    assert!(taken > 2_000 && left > 2_000, "taken {taken}, left {left}");
}

/// A trace of one thread: its track, a name interned, and slices with
/// names interned and given as text, on the fast path and off it.
fn small_trace() -> Vec<u8> {
    let mut packets = vec![TracePacket {
        trusted_packet_sequence_id: Some(1),
        sequence_flags: Some(SEQ_INCREMENTAL_STATE_CLEARED),
        track_descriptor: Some(TrackDescriptor {
            uuid: Some(7),
            thread: Some(ThreadDescriptor {
                pid: Some(42),
                tid: Some(43),
                thread_name: Some("main".into()),
            }),
            ..Default::default()
        }),
        interned_data: Some(InternedData {
            event_categories: vec![InternedString {
                iid: Some(1),
                name: Some("work.c".into()),
            }],
            event_names: vec![InternedString {
                iid: Some(1),
                name: Some("solve".into()),
            }],
        }),
        ..Default::default()
    }
    .encode_to_vec()];
    for i in 0..50u64 {
        let interned = i % 2 == 0;
        for (kind, ts) in [
            (TYPE_SLICE_BEGIN, 1000 * i),
            (TYPE_SLICE_END, 1000 * i + 500),
        ] {
            let mut event = Vec::new();
            field_varint(&mut event, 9, kind as u64);
            field_varint(&mut event, 11, 7);
            if interned {
                field_varint(&mut event, 10, 1);
                field_varint(&mut event, 3, 1);
            } else {
                field_bytes(&mut event, 23, format!("step{}", i % 3).as_bytes());
                field_bytes(&mut event, 22, b"work.c");
            }
            if i % 5 == 0 && kind == TYPE_SLICE_END {
                let mut annotation = Vec::new();
                field_bytes(&mut annotation, 10, b"outcome");
                field_bytes(&mut annotation, 6, b"raised");
                field_bytes(&mut event, 4, &annotation);
            }
            let mut packet = Vec::new();
            field_varint(&mut packet, 8, 1_700_000_000_000_000_000 + ts);
            field_varint(&mut packet, 10, 1);
            field_varint(&mut packet, 58, u64::from(CLOCK_REALTIME));
            field_bytes(&mut packet, 11, &event);
            packets.push(packet);
        }
    }
    let mut trace = Vec::new();
    for packet in packets {
        field_bytes(&mut trace, 1, &packet);
    }
    trace
}

/// Hands out its bytes `step` at a time.
struct Pieces<'a> {
    bytes: &'a [u8],
    step: usize,
}

impl Read for Pieces<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.step.min(buf.len()).min(self.bytes.len());
        buf[..n].copy_from_slice(&self.bytes[..n]);
        self.bytes = &self.bytes[n..];
        Ok(n)
    }
}

fn events_of(input: impl Read) -> (Vec<String>, PftraceInfo) {
    let mut events = Vec::new();
    let info = stream(input, true, &mut |_, text| events.push(text.to_string())).unwrap();
    (events, info)
}

#[test]
fn a_trace_read_in_pieces_gives_the_events_of_one_read_whole() {
    let trace = small_trace();
    let (whole, info) = events_of(&trace[..]);
    assert!(!info.truncated);
    // The thread's name, then 100 slice ends and begins.
    assert_eq!(whole.len(), 101, "{whole:#?}");
    assert!(
        whole[1].contains(r#""name":"solve","cat":"work.c","ph":"B""#),
        "{}",
        whole[1]
    );
    assert!(
        whole[4].contains(r#""name":"step1","cat":"work.c","ph":"E""#),
        "{}",
        whole[4]
    );
    assert!(
        whole[2].contains(r#""args":{"outcome":"raised"}"#),
        "{}",
        whole[2]
    );
    for step in [1, 2, 3, 7, 64] {
        let (pieces, info) = events_of(Pieces {
            bytes: &trace,
            step,
        });
        assert!(!info.truncated);
        assert_eq!(pieces, whole, "read {step} bytes at a time");
    }
    // Cut inside the last packet: the events before it, marked truncated.
    let (cut, info) = events_of(&trace[..trace.len() - 3]);
    assert_eq!(cut, whole[..100]);
    assert!(info.truncated);
}

#[test]
fn zero_bytes_after_the_last_packet_are_ignored_and_data_after_them_is_not() {
    let trace = small_trace();
    let (whole, _) = events_of(&trace[..]);
    let mut padded = trace.clone();
    padded.resize(trace.len() + (1 << 20), 0);
    for step in [1, 7, 4096] {
        let (events, info) = events_of(Pieces {
            bytes: &padded,
            step,
        });
        assert!(!info.truncated);
        assert_eq!(events, whole, "read {step} bytes at a time");
    }
    padded.push(0x0a);
    let mut events = 0;
    let read = stream(&padded[..], false, &mut |_, _| events += 1);
    let error = read.expect_err("data after the zero bytes").to_string();
    assert!(error.contains("zero bytes, then more data"), "{error}");
}

#[test]
fn a_json_trace_named_pftrace_is_read_as_json() {
    let name = std::path::Path::new("run.pftrace");
    assert!(!is_pftrace(name, b"[\n{\"name\":"));
    assert!(!is_pftrace(name, b"{\"traceEvents\":"));
    assert!(is_pftrace(name, &small_trace()[..16]));
    assert!(is_pftrace(name, b""));
}

#[test]
fn a_varint_beyond_64_bits_is_left_to_prost_which_rejects_it() {
    for tenth in [0x02u8, 0x7f] {
        let mut event = Vec::new();
        field_varint(&mut event, 9, 1);
        let mut packet = vec![0x40]; // timestamp, ten bytes
        packet.extend_from_slice(&[0xff; 9]);
        packet.push(tenth);
        field_bytes(&mut packet, 11, &event);
        assert!(
            fast_packet(&packet, Vec::new()).is_err(),
            "tenth byte {tenth:#x}"
        );
        assert!(
            TracePacket::decode(&packet[..]).is_err(),
            "tenth byte {tenth:#x}"
        );
    }
    // A tenth byte of 1 is the top bit: both read u64::MAX.
    let mut packet = vec![0x40];
    packet.extend_from_slice(&[0xff; 9]);
    packet.push(0x01);
    field_bytes(&mut packet, 11, &[0x48, 0x01]);
    let fast = fast_packet(&packet, Vec::new())
        .map_err(|_| ())
        .expect("taken");
    assert_eq!(fast.timestamp, Some(u64::MAX));
    assert_eq!(
        TracePacket::decode(&packet[..]).unwrap().timestamp,
        Some(u64::MAX)
    );
}
