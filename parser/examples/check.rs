//! Checks annotation strings given as arguments and prints the outcome.
//!
//! ```text
//! cargo run -p perfflow-parser --example check -- "@critical_path(flow=in)"
//! ```

use perfflow_parser::{parse_annotation, render_errors, Annotation};

fn main() {
    let mut failed = false;
    for input in std::env::args().skip(1) {
        match parse_annotation(&input) {
            Annotation::Foreign => println!("foreign: {input}"),
            Annotation::Aspect(aspect) => println!("{aspect:?}"),
            Annotation::Invalid(errors) => {
                failed = true;
                print!("{}", render_errors(&input, &errors));
            }
        }
    }
    if failed {
        std::process::exit(1);
    }
}
