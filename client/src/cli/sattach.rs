//! `sattach` (also `spur attach`): a running step's output, from now until
//! the step ends, beside the srun that started it (which keeps its input).
//! The controller hands it a copy of what srun gets (Steps/Attach): the
//! step's layout first, then each task's stdout and stderr.

use super::fmt::status;
use super::getopt::{Mode, Opt, Spec, check, switch, value};
use crate::conn::{self, Identity};
use spur_proto::v1 as pb;
use std::collections::HashMap;
use std::io::Write;

pub const USAGE: &str = "\
usage: sattach [-lQ] [--output-filter=TASK] [--error-filter=TASK] [--layout] JOB.STEP
  -l, --label               prefix each line with its task id
  --output-filter=TASK      only this task's stdout     --error-filter=TASK   only its stderr
  --layout                  print the step's task layout and exit
Output only: the step's input stays with its srun.";

#[derive(Debug, Clone, Default)]
pub struct Args {
    pub help: bool,
    pub version: bool,
    pub label: bool,
    pub layout: bool,
    pub quiet: bool,
    pub out_task: Option<u32>,
    pub err_task: Option<u32>,
    pub words: Vec<String>,
    pub controller: Option<String>,
    pub warnings: Vec<String>,
}

fn warn(a: &mut Args, flag: &str, why: &str) {
    a.warnings.push(format!("sattach: warning: {flag}: {why}"));
}

fn task(flag: &str, v: &str) -> Result<u32, String> {
    v.trim().parse().map_err(|_| format!("--{flag}: '{v}' is not a task id"))
}

static FLAGS: Spec<Args> = Spec { opts: OPTS, mode: Mode::Anywhere, noun: "flag" };
pub const OPTS: &[Opt<Args>] = &[
    check("-/error-filter", |a, v| task("error-filter", &v).map(|t| a.err_task = Some(t))),
    switch("h/help", |a| a.help = true),
    check("-/input-filter", |a, v| {
        task("input-filter", &v).map(|_| {
            warn(a, "--input-filter", "sattach attaches to output only; the step's input stays with srun")
        })
    }),
    switch("l/label", |a| a.label = true),
    switch("-/layout", |a| a.layout = true),
    check("-/output-filter", |a, v| task("output-filter", &v).map(|t| a.out_task = Some(t))),
    switch("-/pty", |a| warn(a, "--pty", "sattach attaches to output only, with no terminal")),
    switch("Q/quiet", |a| a.quiet = true),
    switch("u/usage", |a| a.help = true),
    switch("V/version", |a| a.version = true),
    switch("v/verbose", |a| warn(a, "--verbose", "sattach has nothing more to say")),
    value("-/controller", |a, v| a.controller = Some(v)),
];

pub fn parse(argv: &[String]) -> Result<Args, String> {
    let mut a = Args::default();
    a.words = FLAGS.parse(argv, &mut a)?;
    Ok(a)
}

/// The one `JOB.STEP` operand.
pub fn step_of(a: &Args) -> Result<(u64, u32), String> {
    let [w] = &a.words[..] else { return Err("give one JOB.STEP".into()) };
    let bad = || format!("'{w}' is not JOB.STEP");
    let (j, s) = w.split_once('.').ok_or_else(bad)?;
    Ok((j.parse().map_err(|_| bad())?, s.parse().map_err(|_| bad())?))
}

/// The task ids on each of a step's nodes: as `-m` laid them out, else block-wise.
pub fn node_ids(s: &pb::StepStarted) -> Vec<Vec<u32>> {
    if !s.node_tasks.is_empty() {
        return s.node_tasks.iter().map(|t| t.ids.clone()).collect();
    }
    let mut next = 0u32;
    let mut out = vec![];
    for n in &s.tasks_per_node {
        out.push((next..next + n).collect());
        next += n;
    }
    out
}

/// Slurm's `--layout` text.
pub fn layout(s: &pb::StepStarted) -> String {
    let nodes = spur_vocab::hostlist::compress(&s.nodes);
    let mut out = format!("Job step layout:\n\t{} tasks, {} nodes ({nodes})\n\n", s.ntasks, s.nodes.len());
    for (i, (node, ids)) in s.nodes.iter().zip(node_ids(s)).enumerate() {
        let shown: Vec<String> = ids.iter().map(u32::to_string).collect();
        out += &format!("\tNode {i} ({node}), {} task(s): {}\n", ids.len(), shown.join(" "));
    }
    out
}

/// Labels whole lines `T: ` (padded to the widest task id), holding an unfinished line back.
pub fn labelled(task: u32, width: usize, pending: &mut Vec<u8>, bytes: &[u8]) -> Vec<u8> {
    pending.extend_from_slice(bytes);
    let Some(end) = pending.iter().rposition(|b| *b == b'\n') else { return vec![] };
    let rest = pending.split_off(end + 1);
    let whole = std::mem::replace(pending, rest);
    let mut out = vec![];
    for line in whole.split_inclusive(|b| *b == b'\n') {
        out.extend_from_slice(format!("{task:>width$}: ").as_bytes());
        out.extend_from_slice(line);
    }
    out
}

/// Writes the step's output as it comes; the step's end ends it.
async fn run(a: Args) -> Result<String, String> {
    let (job, step) = step_of(&a)?;
    let mut c = conn::connect_flag(a.controller.as_deref(), Identity::local()).await?;
    let mut events =
        c.steps.attach(pb::AttachRequest { job_id: job, step_id: step }).await.map_err(status)?.into_inner();
    let (mut width, mut pending) = (1usize, HashMap::<(u32, bool), Vec<u8>>::new());
    let (mut stdout, mut stderr) = (std::io::stdout(), std::io::stderr());
    let mut write = |err: bool, bytes: &[u8]| -> Result<(), String> {
        let r = if err {
            stderr.write_all(bytes).and_then(|()| stderr.flush())
        } else {
            stdout.write_all(bytes).and_then(|()| stdout.flush())
        };
        r.map_err(|e| format!("cannot write the step's output: {e}"))
    };
    loop {
        let e = events.message().await.map_err(status)?;
        match e.and_then(|e| e.event) {
            Some(pb::step_event::Event::Started(s)) if a.layout => return Ok(layout(&s)),
            Some(pb::step_event::Event::Started(s)) => {
                width = s.ntasks.saturating_sub(1).max(1).to_string().len()
            }
            Some(pb::step_event::Event::Output(o)) => {
                for (err, bytes, filter) in [(false, &o.stdout, a.out_task), (true, &o.stderr, a.err_task)] {
                    if bytes.is_empty() || filter.is_some_and(|t| t != o.task) {
                        continue;
                    }
                    let text = if a.label {
                        labelled(o.task, width, pending.entry((o.task, err)).or_default(), bytes)
                    } else {
                        bytes.clone()
                    };
                    write(err, &text)?;
                }
            }
            Some(pb::step_event::Event::Ended(_)) | None => break,
            Some(_) => {}
        }
    }
    // Unfinished last lines, labelled, as srun writes them at the step's end.
    for ((task, err), rest) in pending.into_iter().filter(|(_, r)| !r.is_empty()) {
        let mut text = format!("{task:>width$}: ").into_bytes();
        text.extend(rest);
        text.push(b'\n');
        write(err, &text)?;
    }
    Ok(String::new())
}

/// Runs sattach with its arguments (without `argv[0]`); returns the exit code.
pub async fn main(argv: &[String]) -> i32 {
    let result = match parse(argv) {
        Ok(a) if a.help => Ok(format!("{USAGE}\n")),
        Ok(a) if a.version => Ok(format!("spur {}\n", env!("CARGO_PKG_VERSION"))),
        Ok(a) => {
            if !a.quiet {
                a.warnings.iter().for_each(|w| super::output::complain(w));
            }
            run(a).await
        }
        Err(e) => Err(e),
    };
    super::output::finish("sattach", result)
}
