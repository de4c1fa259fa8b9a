#!/usr/bin/env python3
"""Decodes a .pftrace file with Perfetto's own generated protobuf classes
(the `perfetto` package on PyPI) and prints its events as JSON, in the
shape of the runtime's Chrome JSON events, for the tests to check:

    {"complete": bool, "packets": N, "partial_tail_bytes": N,
     "metadata": {name: object}, "tracks": {uuid: {...}},
     "events": [{"name", "cat", "ph", "pid", "tid", "ts", "id", "args",
                 "track", "seq", "loc"}]}

It follows Perfetto's rules rather than the writer's intent: per-sequence
interned data and defaults, cleared with SEQ_INCREMENTAL_STATE_CLEARED;
sequence-scoped incremental clocks set by a clock snapshot; explicit
timestamp_clock_id. Slice ends get the name of the slice they close on
their track, so a wrong nesting shows. Anything it cannot resolve (an
unknown interned id, a timestamp on an undeclared clock, an event on an
undescribed track) makes it exit with an error.

A file cut short (a killed process) decodes packet by packet; the bytes of
a last, partial packet are reported and must be the only damage.
"""
import json
import sys

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

TE = pb.TrackEvent


def fail(msg):
    sys.stderr.write(f"pftrace_events: {msg}\n")
    sys.exit(1)


def read_varint(data, at):
    value, shift = 0, 0
    while True:
        if at >= len(data):
            return None, at
        b = data[at]
        at += 1
        value |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return value, at


def split_packets(data):
    """Frames Trace.packet fields by hand, for a file that may be cut."""
    packets, at = [], 0
    while at < len(data):
        if data[at] != 0x0A:
            fail(f"byte {at}: not a Trace.packet field (0x{data[at]:02x})")
        length, body = read_varint(data, at + 1)
        if length is None or body + length > len(data):
            return packets, len(data) - at
        packets.append(data[body:body + length])
        at = body + length
    return packets, 0


def main(path):
    data = open(path, "rb").read()
    trace = pb.Trace()
    complete = True
    try:
        trace.ParseFromString(data)
        packets = list(trace.packet)
        partial = 0
    except Exception:
        complete = False
        bodies, partial = split_packets(data)
        packets = []
        for body in bodies:
            p = pb.TracePacket()
            p.ParseFromString(body)
            packets.append(p)

    seqs = {}
    tracks = {}
    metadata = {}
    events = []
    stacks = {}

    for n, p in enumerate(packets):
        seq_id = p.trusted_packet_sequence_id
        if p.sequence_flags & pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED:
            seqs[seq_id] = {"names": {}, "cats": {}, "locs": {}, "defaults": None,
                            "clocks": {}}
        st = seqs.get(seq_id)
        if st is None:
            fail(f"packet {n}: sequence {seq_id} used before its state was cleared")
        if p.HasField("trace_packet_defaults"):
            st["defaults"] = p.trace_packet_defaults
        if p.HasField("clock_snapshot"):
            snap = {c.clock_id: c for c in p.clock_snapshot.clocks}
            if pb.BUILTIN_CLOCK_REALTIME not in snap:
                fail(f"packet {n}: clock snapshot without REALTIME")
            real = snap[pb.BUILTIN_CLOCK_REALTIME].timestamp
            for cid, c in snap.items():
                if 64 <= cid < 128:
                    st["clocks"][cid] = {"value": c.timestamp, "offset": real - c.timestamp,
                                         "incremental": c.is_incremental}
        if p.HasField("interned_data"):
            d = p.interned_data
            for x in d.event_names:
                st["names"][x.iid] = x.name
            for x in d.event_categories:
                st["cats"][x.iid] = x.name
            for x in d.source_locations:
                st["locs"][x.iid] = {"file": x.file_name, "function": x.function_name,
                                     "line": x.line_number}
        ts = None
        if p.HasField("timestamp"):
            if p.HasField("timestamp_clock_id"):
                cid = p.timestamp_clock_id
            elif st["defaults"] is not None and st["defaults"].HasField("timestamp_clock_id"):
                cid = st["defaults"].timestamp_clock_id
            else:
                cid = pb.BUILTIN_CLOCK_BOOTTIME
            if cid == pb.BUILTIN_CLOCK_REALTIME:
                ts = p.timestamp
            elif cid in st["clocks"]:
                c = st["clocks"][cid]
                if c["incremental"]:
                    c["value"] += p.timestamp
                else:
                    c["value"] = p.timestamp
                ts = c["value"] + c["offset"]
            else:
                fail(f"packet {n}: timestamp on clock {cid}, never declared")
        if p.HasField("track_descriptor"):
            td = p.track_descriptor
            t = tracks.setdefault(td.uuid, {})
            t["uuid"] = td.uuid
            if td.HasField("parent_uuid"):
                t["parent"] = td.parent_uuid
            if td.HasField("name"):
                t["name"] = td.name
            if td.HasField("process"):
                t["pid"] = td.process.pid
                t["process_name"] = td.process.process_name
            if td.HasField("thread"):
                t["pid"] = td.thread.pid
                t["tid"] = td.thread.tid
                if td.thread.HasField("thread_name"):
                    t["thread_name"] = td.thread.thread_name
            if td.HasField("counter"):
                t["counter"] = True
        if p.HasField("chrome_events"):
            for m in p.chrome_events.metadata:
                metadata[m.name] = json.loads(m.json_value)
        if p.HasField("track_event"):
            te = p.track_event
            if ts is None:
                fail(f"packet {n}: track event without a timestamp")
            if te.HasField("track_uuid"):
                uuid = te.track_uuid
            elif st["defaults"] is not None and st["defaults"].HasField("track_event_defaults"):
                uuid = st["defaults"].track_event_defaults.track_uuid
            else:
                fail(f"packet {n}: track event without a track")
            track = tracks.get(uuid)
            if track is None:
                fail(f"packet {n}: track {uuid} used before it was described")

            def resolve(table, iid, what):
                if iid not in st[table]:
                    fail(f"packet {n}: {what} iid {iid} not interned on sequence {seq_id}")
                return st[table][iid]

            name = resolve("names", te.name_iid, "name") if te.HasField("name_iid") else None
            cats = [resolve("cats", i, "category") for i in te.category_iids]
            loc = (resolve("locs", te.source_location_iid, "source location")
                   if te.HasField("source_location_iid") else None)
            ev = {"ts": ts, "track": uuid, "seq": seq_id, "cat": cats[0] if cats else None}
            if loc is not None:
                ev["loc"] = loc
            proc = track
            while "pid" not in proc and "parent" in proc:
                proc = tracks[proc["parent"]]
            ev["pid"] = proc.get("pid")
            ev["tid"] = track.get("tid")
            on_thread = "tid" in track
            if te.type == TE.TYPE_SLICE_BEGIN:
                stacks.setdefault(uuid, []).append(name)
                ev.update(name=name, ph="B" if on_thread else "b")
            elif te.type == TE.TYPE_SLICE_END:
                stack = stacks.get(uuid) or fail(f"packet {n}: slice end on track {uuid} with none open")
                ev.update(name=stack.pop(), ph="E" if on_thread else "e")
                if te.debug_annotations:
                    ev["args"] = {a.name: a.string_value for a in te.debug_annotations}
            elif te.type == TE.TYPE_INSTANT:
                if te.flow_ids:
                    ev.update(name=name, ph="s", id=te.flow_ids[0])
                elif te.terminating_flow_ids:
                    ev.update(name=name, ph="f", id=te.terminating_flow_ids[0])
                else:
                    ev.update(name=name, ph="i" if on_thread else "n")
            elif te.type == TE.TYPE_COUNTER:
                group = tracks[track["parent"]]["name"]
                args = {track["name"]: te.double_counter_value}
                if len(te.extra_double_counter_track_uuids) != len(te.extra_double_counter_values):
                    fail(f"packet {n}: extra counter tracks and values differ in number")
                for u, v in zip(te.extra_double_counter_track_uuids, te.extra_double_counter_values):
                    args[tracks[u]["name"]] = v
                ev.update(name=group, ph="C", args=args)
            else:
                fail(f"packet {n}: track event of type {te.type}")
            if not on_thread and ev["ph"] in ("b", "e", "n"):
                ev["id"] = uuid
            events.append(ev)

    json.dump({"complete": complete, "packets": len(packets), "partial_tail_bytes": partial,
               "metadata": metadata, "tracks": {str(k): v for k, v in tracks.items()},
               "events": events}, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1])
