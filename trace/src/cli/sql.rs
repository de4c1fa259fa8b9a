//! `perfflow-trace sql`: queries a database made by `db`.

use std::io::Write;
use std::path::PathBuf;

use perfflow_trace::{query, Format};

use super::{say, EXIT_FAILED, EXIT_OK};

/// Query a database made by `db` with SQL or a named query
///
/// Runs QUERY on DATABASE and prints the rows as an aligned table, or as CSV
/// (--csv) or a JSON array of objects (--json).
///
/// QUERY is SQL, or a named query: `span-types` (spans per category and
/// name, with min/mean/max duration in microseconds) or `event-sequences`
/// (the sequences of span names directly under a parent, most common
/// first).
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct Args {
    /// A database written by `perfflow-trace db`
    #[arg(value_name = "DATABASE")]
    pub database: PathBuf,
    /// SQL text, or `span-types` or `event-sequences`
    #[arg(value_name = "QUERY")]
    pub query: String,
    /// Print CSV with a header row
    #[arg(long, conflicts_with = "json")]
    pub csv: bool,
    /// Print a JSON array of objects, one per row
    #[arg(long)]
    pub json: bool,
}

pub fn run(command: &Args, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let format = if command.csv {
        Format::Csv
    } else if command.json {
        Format::Json
    } else {
        Format::Table
    };
    match query(&command.database, &command.query, format, out) {
        Ok(()) => EXIT_OK,
        Err(error) => {
            say(err, format_args!("perfflow-trace: sql: {error}"));
            EXIT_FAILED
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::parse;
    use super::super::Command;
    use super::*;

    #[test]
    fn a_database_a_query_and_one_format() {
        let Ok(Command::Sql(args)) =
            parse(&["sql", "--csv", "x.sqlite", "SELECT 1"]).map(|c| c.command)
        else {
            panic!("expected sql arguments");
        };
        assert_eq!(args.database, PathBuf::from("x.sqlite"));
        assert_eq!(args.query, "SELECT 1");
        assert!(args.csv && !args.json);
        assert!(parse(&["sql", "x.sqlite"]).unwrap_err().contains("<QUERY>"));
        assert!(parse(&["sql", "x", "q", "--json", "--csv"])
            .unwrap_err()
            .contains("cannot be used with"));
    }
}
