//! `tests/data/queue.*.json`: the runtime's traces of a producer process
//! that sends five flows and a consumer process that receives them. Imported
//! as one run, each flow links a `produce` span to a `consume` span, the
//! k-th departure to the k-th arrival.

mod support;

use support::*;

#[test]
fn a_flow_between_two_processes_links_the_spans_it_leaves_and_enters() {
    let db = scratch("db_flow").join("runs.sqlite");
    import(
        &db,
        &[
            path_str(&data("queue.consume.json")),
            path_str(&data("queue.produce.json")),
        ],
    );
    let flows = sql(
        &db,
        "SELECT f.category, a.name, pa.pid, b.name, pb.pid, f.to_ns - f.from_ns > 0
         FROM flow f
         JOIN span a ON a.id = f.from_span JOIN process pa ON pa.id = a.process
         JOIN span b ON b.id = f.to_span JOIN process pb ON pb.id = b.process
         ORDER BY f.from_ns",
    );
    assert_eq!(flows, ["flow,produce,20145,consume,20148,1"; 5]);
    let first = sql(
        &db,
        "SELECT f.from_ns, f.to_ns FROM flow f WHERE f.flow_id = '4425225064153088'",
    );
    assert_eq!(first, ["1795471962009604564,1795471962028767381"]);
}
