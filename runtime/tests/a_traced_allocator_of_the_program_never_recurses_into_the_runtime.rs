//! The program's own `malloc` is traced (an annotated allocator, or one a
//! filter's `include function *` takes in). The runtime allocates when it
//! meets a site the first time, and that allocation calls the traced
//! `malloc` again: the event recorded from inside it is dropped and
//! counted, where it recursed until the stack overflowed.

mod support;

use support::{command, pfw_names, program, run, Scratch, Trace};

#[test]
fn a_traced_allocator_of_the_program_never_recurses_into_the_runtime() {
    let dir = Scratch::new("woven-allocator");
    let done = run(&mut command(&program("woven_allocator"), &dir.path));
    assert!(
        done.status.success(),
        "{}; stderr: {}",
        done.status,
        done.stderr
    );
    assert_eq!(
        done.printed("sum"),
        Some((0..1000).map(|i| i & 0x7f).sum::<i64>().to_string())
    );
    let name = format!("perfflow.array.{}.{}.pfw", done.host(), done.pid());
    assert_eq!(pfw_names(&dir.path), [name.as_str()]);
    let trace = Trace::read(&dir.join(&name));
    trace.assert_complete(done.pid());
    let begins = |name: &str| trace.named(name).iter().filter(|e| e.ph() == "B").count();
    assert_eq!(begins("work"), 1000);
    // The program's mallocs are traced, but for those the runtime's own
    // cold paths made.
    assert!(
        begins("malloc") >= 1000,
        "{} malloc slices",
        begins("malloc")
    );
}
