//! The instance path: workload manager variables, hashing, nesting.

use std::collections::HashMap;
use std::sync::Mutex;

use perfflow_runtime::instance::{export, instance_path, instance_path_from, short_hash, ENV_VAR};

/// The instance path for an environment holding exactly `vars`.
fn path_with(vars: &[(&str, &str)]) -> String {
    let map: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    instance_path_from(|key| map.get(key).cloned())
}

#[test]
fn the_short_hash_is_the_first_eight_hex_digits_of_sha1() {
    assert_eq!(short_hash("1"), "356a192b");
    assert_eq!(short_hash("4242.0"), "46883e7f");
    assert_eq!(short_hash(""), "da39a3ee");
}

#[test]
fn without_a_workload_manager_the_path_is_the_hash_of_one() {
    assert_eq!(path_with(&[]), "356a192b");
}

#[test]
fn a_decimal_flux_job_id_is_used_as_is() {
    assert_eq!(path_with(&[("FLUX_JOB_ID", "123456789")]), "123456789");
}

#[test]
fn an_f58_flux_job_id_is_used_as_is() {
    assert_eq!(path_with(&[("FLUX_JOB_ID", "ƒeF9QZG3")]), "ƒeF9QZG3");
}

#[test]
fn an_empty_flux_job_id_counts_as_unset() {
    assert_eq!(
        path_with(&[("FLUX_JOB_ID", ""), ("PBS_JOBID", "812345.server")]),
        "7bef052f"
    );
}

#[test]
fn a_complete_slurm_pair_hashes_job_dot_step() {
    assert_eq!(
        path_with(&[("SLURM_JOB_ID", "4242"), ("SLURM_STEP_ID", "0")]),
        "46883e7f"
    );
}

#[test]
fn another_slurm_step_of_the_same_job_hashes_differently() {
    assert_eq!(
        path_with(&[("SLURM_JOB_ID", "4242"), ("SLURM_STEP_ID", "3")]),
        "ed6b84b3"
    );
}

#[test]
fn a_slurm_job_without_step_id_hashes_one() {
    assert_eq!(path_with(&[("SLURM_JOB_ID", "4242")]), "356a192b");
}

#[test]
fn an_incomplete_slurm_pair_does_not_fall_through_to_lsf() {
    assert_eq!(
        path_with(&[
            ("SLURM_JOB_ID", "4242"),
            ("LSB_JOBID", "1234"),
            ("LS_JOBPID", "5678"),
        ]),
        "356a192b"
    );
}

#[test]
fn a_complete_lsf_pair_hashes_job_dot_pid() {
    assert_eq!(
        path_with(&[("LSB_JOBID", "1234"), ("LS_JOBPID", "5678")]),
        "e1f533a4"
    );
}

#[test]
fn an_lsf_job_without_job_pid_hashes_one() {
    assert_eq!(path_with(&[("LSB_JOBID", "1234")]), "356a192b");
}

#[test]
fn a_pbs_job_id_is_hashed_alone() {
    assert_eq!(path_with(&[("PBS_JOBID", "812345.server")]), "7bef052f");
}

#[test]
fn an_oar_job_id_is_hashed_alone() {
    assert_eq!(path_with(&[("OAR_JOB_ID", "777")]), "fc7a734d");
}

#[test]
fn the_oar_jobid_spelling_is_accepted_too() {
    assert_eq!(path_with(&[("OAR_JOBID", "777")]), "fc7a734d");
}

#[test]
fn oar_job_id_wins_over_oar_jobid() {
    assert_eq!(
        path_with(&[("OAR_JOB_ID", "777"), ("OAR_JOBID", "812345")]),
        "fc7a734d"
    );
}

#[test]
fn an_inherited_path_is_extended_with_this_process_id() {
    assert_eq!(
        path_with(&[
            (ENV_VAR, "46883e7f"),
            ("SLURM_JOB_ID", "4242"),
            ("SLURM_STEP_ID", "3"),
        ]),
        "46883e7f.ed6b84b3"
    );
}

#[test]
fn an_inherited_path_without_a_workload_manager_gets_the_hash_of_one() {
    assert_eq!(path_with(&[(ENV_VAR, "ƒeF9QZG3")]), "ƒeF9QZG3.356a192b");
}

#[test]
fn a_deeper_inherited_path_is_extended_once_more() {
    assert_eq!(
        path_with(&[(ENV_VAR, "356a192b.356a192b"), ("FLUX_JOB_ID", "99")]),
        "356a192b.356a192b.99"
    );
}

#[test]
fn an_empty_inherited_path_counts_as_unset() {
    assert_eq!(path_with(&[(ENV_VAR, ""), ("FLUX_JOB_ID", "99")]), "99");
}

#[test]
fn flux_wins_over_every_other_workload_manager() {
    assert_eq!(
        path_with(&[
            ("FLUX_JOB_ID", "99"),
            ("SLURM_JOB_ID", "4242"),
            ("SLURM_STEP_ID", "0"),
            ("LSB_JOBID", "1234"),
            ("LS_JOBPID", "5678"),
            ("PBS_JOBID", "812345.server"),
            ("OAR_JOB_ID", "777"),
        ]),
        "99"
    );
}

#[test]
fn slurm_wins_over_lsf_pbs_and_oar() {
    assert_eq!(
        path_with(&[
            ("SLURM_JOB_ID", "4242"),
            ("SLURM_STEP_ID", "0"),
            ("LSB_JOBID", "1234"),
            ("LS_JOBPID", "5678"),
            ("PBS_JOBID", "812345.server"),
            ("OAR_JOB_ID", "777"),
        ]),
        "46883e7f"
    );
}

#[test]
fn lsf_wins_over_pbs_and_oar() {
    assert_eq!(
        path_with(&[
            ("LSB_JOBID", "1234"),
            ("LS_JOBPID", "5678"),
            ("PBS_JOBID", "812345.server"),
            ("OAR_JOB_ID", "777"),
        ]),
        "e1f533a4"
    );
}

#[test]
fn pbs_wins_over_oar() {
    assert_eq!(
        path_with(&[("PBS_JOBID", "812345.server"), ("OAR_JOB_ID", "777")]),
        "7bef052f"
    );
}

/// Serialises the tests that change the real environment.
static ENV_LOCK: Mutex<()> = Mutex::new(());

#[test]
fn an_exported_path_is_inherited_through_the_real_environment() {
    let _guard = ENV_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    export("outer");
    assert_eq!(std::env::var(ENV_VAR).as_deref(), Ok("outer"));
    assert!(instance_path().starts_with("outer."));
}

#[test]
fn a_path_with_a_nul_byte_is_not_exported() {
    let _guard = ENV_LOCK.lock().unwrap_or_else(|e| e.into_inner());
    export("before");
    export("with\0nul");
    assert_eq!(std::env::var(ENV_VAR).as_deref(), Ok("before"));
}
