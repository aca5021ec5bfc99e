//! Job annotations end to end without a controller: `sbatch --annotation`
//! (command line and `#SBATCH`, the bad inputs named by the flag), then the
//! `Annotations=` line of `scontrol show job`, its `--json` object and
//! `squeue -O Annotations`.

use spur_client::cli::jobfmt::job_record;
use spur_client::cli::sbatch::{Prepared, prepare};
use spur_client::cli::scontrol::Flags;
use spur_client::cli::scontrol::job::show_jobs;
use spur_client::cli::squeue;
use spur_proto::v1 as pb;
use std::path::Path;

const SCRIPT: &str = "#!/bin/sh
#SBATCH --annotation=gpu.vendor=nvidia
#SBATCH --annotation tier=gold --annotation note=a=b
hostname
";

fn annotations(words: &[&str]) -> Result<Vec<(String, String)>, String> {
    let argv: Vec<String> = words.iter().map(|w| w.to_string()).collect();
    let read = |_: Option<&str>| Ok(SCRIPT.to_string());
    match prepare(&argv, Path::new("/work"), read)? {
        Prepared::Submit(s) => Ok(s.spec.annotations.into_iter().map(|kv| (kv.key, kv.value)).collect()),
        Prepared::Help => Err("help".into()),
    }
}

fn kv(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
}

#[test]
fn annotations_keep_their_order_and_the_command_line_overrides_the_script() {
    let script = kv(&[("gpu.vendor", "nvidia"), ("tier", "gold"), ("note", "a=b")]);
    assert_eq!(annotations(&["job.sh"]).unwrap(), script);
    // The command line replaces a script's value in place and adds its own after.
    let got = annotations(&["--annotation", "tier=bronze", "--annotation=empty=", "job.sh"]).unwrap();
    assert_eq!(got, kv(&[("gpu.vendor", "nvidia"), ("tier", "bronze"), ("note", "a=b"), ("empty", "")]));
}

#[test]
fn bad_annotations_are_named_by_the_flag() {
    let err = |words: &[&str]| annotations(words).unwrap_err();
    assert_eq!(err(&["--annotation", "novalue", "job.sh"]), "--annotation: 'novalue' is not KEY=VALUE");
    assert_eq!(err(&["--annotation==x", "job.sh"]), "--annotation: '=x' has no key before '='");
    assert_eq!(err(&["--annotation", "a b=c", "job.sh"]), "--annotation: key 'a b' contains whitespace");
    assert_eq!(
        err(&["--annotation", "k=1", "--annotation", "k=2", "job.sh"]),
        "--annotation: key 'k' is given twice"
    );
    // One script repeating a key is refused on its line.
    let argv = vec!["job.sh".to_string()];
    let twice =
        |_: Option<&str>| Ok("#!/bin/sh\n#SBATCH --annotation a=1\n#SBATCH --annotation a=2\n".into());
    let e = prepare(&argv, Path::new("/work"), twice).unwrap_err();
    assert_eq!(e, "#SBATCH on line 3: --annotation: key 'a' is given twice");
}

fn annotated() -> pb::Job {
    let pair = |k: &str, v: &str| pb::KeyValue { key: k.into(), value: v.into() };
    pb::Job {
        id: 5,
        name: "train".into(),
        user: "alice".into(),
        partition: "gpu".into(),
        state: spur_proto::states::state_named("PENDING"),
        num_nodes: 1,
        spec: Some(Box::new(pb::JobSpec {
            comment: "c".into(),
            annotations: vec![pair("tier", "gold"), pair("gpu.vendor", "nvidia")],
            ..Default::default()
        })),
        ..Default::default()
    }
}

#[test]
fn scontrol_shows_an_annotations_line_only_when_there_are_some() {
    let out = job_record(&annotated(), 0, false);
    assert!(out.contains("\n   Comment=c\n   Annotations=tier=gold,gpu.vendor=nvidia\n   StdErr="), "{out}");
    let mut bare = annotated();
    bare.spec.as_mut().unwrap().annotations.clear();
    assert!(!job_record(&bare, 0, false).contains("Annotations="));
    let json = Flags { json: true, ..Flags::default() };
    let v: serde_json::Value =
        serde_json::from_str(&show_jobs(&[annotated()], None, &json, 0).unwrap()).unwrap();
    assert_eq!(v["jobs"][0]["annotations"], serde_json::json!({ "tier": "gold", "gpu.vendor": "nvidia" }));
    let v: serde_json::Value = serde_json::from_str(&show_jobs(&[bare], None, &json, 0).unwrap()).unwrap();
    assert_eq!(v["jobs"][0]["annotations"], serde_json::json!({}));
}

#[test]
fn squeue_has_an_annotations_field_that_needs_the_full_view() {
    let argv = |w: &[&str]| squeue::parse(&w.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap();
    let a = argv(&["-h", "-O", "JobID:3,Annotations:40"]);
    assert!(!a.filter().iter().any(|kv| kv.key == "view"), "annotations come with the job's spec");
    let mut bare = annotated();
    bare.id = 6;
    bare.spec = None;
    let out = squeue::report(&a, &[annotated(), bare], 0).unwrap();
    assert_eq!(out, format!("5  {:<40}\n6  {:<40}\n", "tier=gold,gpu.vendor=nvidia", "(null)"));
    let out = squeue::report(&argv(&["-O", "Annotations:12"]), &[], 0).unwrap();
    assert_eq!(out, "ANNOTATIONS \n");
}
