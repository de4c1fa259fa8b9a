//! `--perf-groups` picks the architecture-specific perf event groups
//! (FLOPS, cache and memory bandwidth); unknown names are refused with the
//! accepted ones.

use perfflow_monitor::cli::args::{parse, Invocation};
use perfflow_monitor::GroupSelection;

fn groups(args: &[&str]) -> Result<GroupSelection, String> {
    match parse(args.iter().copied()) {
        Ok(Invocation::Run(c)) => Ok(c.perf_groups),
        Ok(other) => panic!("{args:?} parsed as {other:?}"),
        Err(e) => Err(e.0),
    }
}

#[test]
fn perf_groups_default_to_all_and_take_names_or_none() {
    assert_eq!(groups(&[]), Ok(GroupSelection::Matching));
    assert_eq!(
        groups(&["--perf-groups", "MEM,L2"]),
        Ok(GroupSelection::Named(vec!["MEM".into(), "L2".into()]))
    );
    assert_eq!(groups(&["--perf-groups=none"]), Ok(GroupSelection::None));
    let e = groups(&["--perf-groups", "L9"]).unwrap_err();
    assert!(e.starts_with("--perf-groups: `L9`"), "{e}");
}
