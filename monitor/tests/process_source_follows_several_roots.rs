//! The process source follows several roots at once (the tasks of a
//! scheduler's step), sums their trees, samples on while any root lives,
//! and takes new roots after all have exited.

use perfflow_monitor::{Sampler, SamplerConfig, Source};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

fn sleeper() -> Child {
    Command::new("sleep")
        .arg("60")
        .stdin(Stdio::null())
        .spawn()
        .expect("start sleep")
}

fn end(mut c: Child) {
    let _ = c.kill();
    let _ = c.wait();
}

fn pids(s: &mut Sampler) -> Option<Vec<i32>> {
    s.sample().process.map(|p| {
        let mut v: Vec<i32> = p.processes.iter().map(|q| q.pid).collect();
        v.sort();
        v
    })
}

#[test]
fn two_roots_are_summed_and_sampled_until_both_exit() {
    let (a, b) = (sleeper(), sleeper());
    let (pa, pb) = (a.id() as i32, b.id() as i32);
    let mut s = Sampler::new(SamplerConfig {
        root_pid: pa,
        sources: vec![Source::Proc],
        ..SamplerConfig::default()
    });
    assert_eq!(pids(&mut s), Some(vec![pa]));
    s.set_roots(&[pa, pb]);
    let mut both = vec![pa, pb];
    both.sort();
    assert_eq!(pids(&mut s), Some(both));

    end(a);
    std::thread::sleep(Duration::from_millis(20));
    assert_eq!(pids(&mut s), Some(vec![pb]), "the other root goes on");
    end(b);
    std::thread::sleep(Duration::from_millis(20));
    assert_eq!(pids(&mut s), None);
    assert!(s
        .unavailable()
        .iter()
        .any(|u| u.reason.contains("all 2 root processes have exited")));

    let c = sleeper();
    s.set_roots(&[c.id() as i32]);
    assert_eq!(pids(&mut s), Some(vec![c.id() as i32]));
    end(c);
}

#[test]
fn roots_given_to_a_sampler_whose_process_source_failed_probe_it_again() {
    let mut s = Sampler::new(SamplerConfig {
        root_pid: i32::MAX - 7,
        sources: vec![Source::Proc],
        ..SamplerConfig::default()
    });
    assert!(s.sample().process.is_none());
    let c = sleeper();
    s.set_roots(&[c.id() as i32]);
    assert_eq!(pids(&mut s), Some(vec![c.id() as i32]));
    end(c);
}

#[test]
fn a_tree_interval_keeps_the_children_found_last_until_it_has_passed() {
    use perfflow_monitor::ProcessDetail;
    use std::io::Write;
    // A shell that starts a child once it reads a line.
    let mut sh = Command::new("sh")
        .args(["-c", "read line; sleep 60 & wait"])
        .stdin(Stdio::piped())
        .spawn()
        .expect("start sh");
    let root = sh.id() as i32;
    let sampler = |tree_interval| {
        Sampler::new(SamplerConfig {
            root_pid: root,
            sources: vec![Source::Proc],
            process_detail: ProcessDetail {
                tree_interval,
                ..ProcessDetail::default()
            },
            ..SamplerConfig::default()
        })
    };
    let interval = Duration::from_secs(2);
    let mut slow = sampler(interval);
    let mut every = sampler(Duration::ZERO);
    let first_read = std::time::Instant::now();
    assert_eq!(pids(&mut slow), Some(vec![root]));
    assert_eq!(pids(&mut every), Some(vec![root]));

    writeln!(sh.stdin.as_mut().unwrap(), "go").unwrap();
    let mut grown = None;
    for _ in 0..100 {
        std::thread::sleep(Duration::from_millis(20));
        grown = pids(&mut every).filter(|p| p.len() == 2);
        if grown.is_some() {
            break;
        }
    }
    let child = grown
        .expect("the child never showed up")
        .into_iter()
        .find(|&p| p != root)
        .unwrap();
    assert!(
        first_read.elapsed() < interval,
        "the child took too long to start"
    );
    assert_eq!(
        pids(&mut slow),
        Some(vec![root]),
        "the tree is not read again before the interval has passed"
    );
    std::thread::sleep(interval.saturating_sub(first_read.elapsed()) + Duration::from_millis(50));
    let mut both = vec![root, child];
    both.sort();
    assert_eq!(pids(&mut slow), Some(both), "read again once it has passed");
    // SAFETY: signalling a process this test started.
    unsafe { libc::kill(child, libc::SIGKILL) };
    end(sh);
}
