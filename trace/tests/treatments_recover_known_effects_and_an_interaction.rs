//! Runs imported with `db` under two treatment factors, `a` and `b`, each
//! at 0 or 1, three repeats per combination, with wall times built from
//! known effects: `treatments` recovers each factor's effect, alone and
//! given the other factor's level. One factor's labels come from the
//! traces' metadata (the runtime's `labels` option), the other's from
//! `--label`.

mod support;

use std::path::Path;

use perfflow_trace::{scored_runs, treatments, Score, TreatmentOptions, Treatments};
use support::*;

/// Imports the 12 runs whose wall time is `wall(a, b)` ms plus a repeat's
/// spread of 0, 1 or 2 ms; each has two `task` spans of 3 and 5 ms.
/// Returns the scratch directory (to remove), the database and the
/// effects on the wall time.
fn database(
    test: &str,
    wall: impl Fn(u64, u64) -> u64,
) -> (std::path::PathBuf, std::path::PathBuf, Treatments) {
    let root = scratch(test);
    let db = root.join("runs.sqlite");
    for a in 0..2 {
        for b in 0..2 {
            for repeat in 0..3 {
                let dir = root.join(format!("a{a}b{b}r{repeat}"));
                std::fs::create_dir_all(&dir).expect("run directory");
                write_run(&dir, a, (wall(a, b) + repeat) * MS);
                let label = format!("b={b}");
                import(&db, &[path_str(&dir), "--label", &label]);
            }
        }
    }
    let (runs, unit) = scored_runs(&db, &Score::Wall).expect("scored runs");
    assert_eq!(unit, "ns");
    assert_eq!(runs.len(), 12);
    let result = treatments("wall", &unit, &runs, &TreatmentOptions::default()).expect("effects");
    (root, db, result)
}

fn write_run(dir: &Path, a: u64, wall_ns: u64) {
    let pid = 40 + a as u32;
    let opening = format!(
        "[\n{{\"name\":\"perfflow_process\",\"ph\":\"M\",\"pid\":{pid},\"tid\":{pid},\
         \"args\":{{\"host\":\"n1\",\"exe\":\"app\",\"labels\":{{\"a\":\"{a}\"}}}}}},\n"
    );
    let start = 5_000 * MS;
    let mut body = event("main", "app", "B", pid, pid, start);
    body += &event("task", "app", "B", pid, pid, start + MS);
    body += &event("task", "app", "E", pid, pid, start + 4 * MS);
    body += &event("task", "app", "B", pid, pid, start + 5 * MS);
    body += &event("task", "app", "E", pid, pid, start + 10 * MS);
    body += &event("main", "app", "E", pid, pid, start + wall_ns);
    write(
        dir,
        &format!("perfflow.array.n1.{pid}.pfw"),
        &format!("{opening}{body}{}", closing(pid)),
    );
}

/// `(mean, median)` of the effect of `factor` in ms, given `other` at
/// `level` when set.
fn effect(result: &Treatments, factor: &str, given: Option<(&str, &str)>) -> (f64, f64, usize) {
    let found = result
        .factors
        .iter()
        .find(|f| f.factor == factor)
        .unwrap_or_else(|| panic!("no factor {factor}: {result}"));
    assert_eq!(found.from.as_deref(), Some("0"));
    assert_eq!(found.to.as_deref(), Some("1"));
    let effect = match given {
        None => &found.effect,
        Some((other, level)) => {
            &found
                .given
                .iter()
                .find(|g| g.factor == other && g.level.as_deref() == Some(level))
                .expect("the effect given the level")
                .effect
        }
    };
    let ms = |x: f64| x / MS as f64;
    (ms(effect.mean), ms(effect.median), effect.pairs)
}

fn interval_ms(result: &Treatments, factor: &str, other: &str, level: &str) -> (f64, f64) {
    let found = result
        .factors
        .iter()
        .find(|f| f.factor == factor)
        .expect("factor");
    let given = found
        .given
        .iter()
        .find(|g| g.factor == other && g.level.as_deref() == Some(level))
        .expect("level");
    let interval = given.effect.interval.expect("an interval");
    (interval.low / MS as f64, interval.high / MS as f64)
}

#[test]
fn treatments_recover_known_additive_effects() {
    let (root, _, result) = database("treatments_additive", |a, b| 100 + 10 * a + 20 * b);
    // Each factor pairs 3 x 3 runs in each of the other factor's 2 levels.
    assert_eq!(effect(&result, "a", None), (10.0, 10.0, 18));
    assert_eq!(effect(&result, "b", None), (20.0, 20.0, 18));
    // Additive: the effect is the same whatever the other factor's level.
    assert_eq!(effect(&result, "a", Some(("b", "0"))), (10.0, 10.0, 9));
    assert_eq!(effect(&result, "a", Some(("b", "1"))), (10.0, 10.0, 9));
    assert_eq!(effect(&result, "b", Some(("a", "1"))), (20.0, 20.0, 9));
    let overall = result.factors[0].effect.interval.expect("an interval");
    assert!(overall.low > 0.0 && overall.low <= 10.0 * MS as f64);
    assert!(overall.high >= 10.0 * MS as f64);
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn treatments_recover_a_known_interaction() {
    // Whichever of a and b comes first gets 10 ms of its saving.
    let (root, db, result) = database("treatments_interaction", |a, b| {
        100 + 10 * a + 20 * b - 10 * a * b
    });
    assert_eq!(effect(&result, "a", Some(("b", "0"))), (10.0, 10.0, 9));
    assert_eq!(effect(&result, "a", Some(("b", "1"))), (0.0, 0.0, 9));
    assert_eq!(effect(&result, "b", Some(("a", "0"))), (20.0, 20.0, 9));
    assert_eq!(effect(&result, "b", Some(("a", "1"))), (10.0, 10.0, 9));
    assert_eq!(effect(&result, "a", None), (5.0, 5.0, 18));
    // The effect of a is significant without b and not with it.
    let (low, high) = interval_ms(&result, "a", "b", "0");
    assert!(low > 0.0 && low <= 10.0 && high >= 10.0, "{low} {high}");
    let (low, high) = interval_ms(&result, "a", "b", "1");
    assert!(low <= 0.0 && high >= 0.0, "{low} {high}");

    let table = result.to_string();
    assert!(table.contains("given"), "{table}");
    assert!(table.contains("b=1"), "{table}");
    let csv = result.to_csv();
    assert!(
        csv.starts_with("factor,from,to,given_factor,given_level,pairs,"),
        "{csv}"
    );
    assert!(csv.contains("\na,0,1,b,1,9,1,0,0,"), "{csv}");

    // The command prints the same analysis.
    let output = perfflow_trace(&["treatments", path_str(&db), "--score", "wall", "--csv"]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert_eq!(text(&output.stdout), csv);
    let output = perfflow_trace(&["treatments", path_str(&db), "--json"]);
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert_eq!(json["factors"][0]["given"][1]["effect"]["mean"], 0.0);
    let output = perfflow_trace(&["treatments", path_str(&db), "--baseline", "a=2"]);
    assert_eq!(output.status.code(), Some(2));
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("baseline a=2: no scored run has it; the runs' levels of a: 0, 1"),
        "{stderr}"
    );
    let output = perfflow_trace(&["treatments", path_str(&db), "--baseline", "b=1", "--csv"]);
    assert!(
        text(&output.stdout).contains("\nb,1,0,,,18,"),
        "{}",
        text(&output.stdout)
    );
    let output = perfflow_trace(&["treatments", path_str(&root.join("none.sqlite"))]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        text(&output.stderr).contains("none.sqlite"),
        "{}",
        text(&output.stderr)
    );
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn a_span_score_is_the_mean_duration_of_the_spans_of_that_name() {
    let root = scratch("treatments_span_score");
    let db = root.join("runs.sqlite");
    let dir = root.join("run");
    std::fs::create_dir_all(&dir).expect("run directory");
    write_run(&dir, 1, 20 * MS);
    import(&db, &[path_str(&dir), "--run", "only"]);
    let (runs, unit) = scored_runs(&db, &"span:task".parse().expect("score")).expect("runs");
    assert_eq!(unit, "ns");
    assert_eq!(runs[0].score, Some(4.0 * MS as f64));
    assert_eq!(runs[0].labels["a"], "1");
    let (runs, _) = scored_runs(&db, &"span:missing".parse().expect("score")).expect("runs");
    assert_eq!(runs[0].score, None);
    let _ = std::fs::remove_dir_all(&root);
}

#[test]
fn a_metric_score_is_the_mean_or_the_max_of_the_runs_samples() {
    let root = scratch("treatments_metric_score");
    let metrics = root.join("job").join("metrics");
    std::fs::create_dir_all(&metrics).expect("metrics directory");
    write(
        &metrics,
        "cpu_metrics.json",
        r#"{"host_names": ["n1", "n2"], "units": {"power": "W"},
            "n1": {"time_stamps": [1763700000.0, 1763700001.0], "power": [50, 60]},
            "n2": {"time_stamps": [1763700000.0], "power": [100]}}"#,
    );
    let db = root.join("runs.sqlite");
    import(&db, &[path_str(&root.join("job")), "--run", "m"]);
    let score = |expr: &str| {
        let (runs, unit) = scored_runs(&db, &expr.parse().expect("score")).expect("runs");
        (runs[0].score, unit)
    };
    assert_eq!(
        score("metric:cpu_metrics.power"),
        (Some(70.0), "W".to_string())
    );
    assert_eq!(
        score("metric:cpu_metrics.power:max"),
        (Some(100.0), "W".to_string())
    );
    assert_eq!(score("metric:cpu_metrics.absent").0, None);
    let _ = std::fs::remove_dir_all(&root);
}
