//! `spur tail JOBID [--err] [-f] [-n LINES]`: the end of a job's stdout (or
//! stderr), read on its batch node by the agent and relayed by the
//! controller (Steps/TailOutput); with `-f`, what the job writes next, until
//! it ends (a requeued job's next run too). The job's owner or an Operator only.

use super::fmt::status;
use super::getopt::{Mode, Opt, Spec, check, switch, value};
use crate::conn::{self, Identity};
use spur_proto::v1 as pb;
use std::io::Write;

pub const USAGE: &str = "\
usage: spur tail [-f] [--err] [-n LINES] JOBID
  -f, --follow        go on with what the job writes until it ends
  -e, --err           the job's stderr file rather than its stdout
  -n, --lines=LINES   start with the last LINES lines (10; at most 64 KiB of them)";

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Args {
    pub help: bool,
    pub follow: bool,
    pub stderr: bool,
    pub lines: u32,
    pub words: Vec<String>,
    pub controller: Option<String>,
}

static FLAGS: Spec<Args> = Spec { opts: OPTS, mode: Mode::Anywhere, noun: "flag" };
pub const OPTS: &[Opt<Args>] = &[
    value("-/controller", |a, v| a.controller = Some(v)),
    switch("e/err", |a| a.stderr = true),
    switch("f/follow", |a| a.follow = true),
    switch("h/help", |a| a.help = true),
    check("n/lines", |a, v| {
        let n = v.trim().parse::<u32>().map_err(|_| format!("--lines: '{v}' is not a count of lines"))?;
        if n == 0 {
            return Err("--lines: give at least 1".into());
        }
        a.lines = n;
        Ok(())
    }),
];

pub fn parse(argv: &[String]) -> Result<Args, String> {
    let mut a = Args::default();
    a.words = FLAGS.parse(argv, &mut a)?;
    Ok(a)
}

/// The one JOBID operand.
pub fn job_of(a: &Args) -> Result<u64, String> {
    let [w] = &a.words[..] else { return Err(format!("give one JOBID\n{USAGE}")) };
    w.trim().parse().map_err(|_| format!("'{w}' is not a job id"))
}

/// Writes the job's output as it comes; the stream's end (the job's, with `-f`) ends it.
async fn run(a: Args) -> Result<String, String> {
    let job = job_of(&a)?;
    let mut c = conn::connect_flag(a.controller.as_deref(), Identity::local()).await?;
    let req = pb::TailOutputRequest { job_id: job, stderr: a.stderr, follow: a.follow, lines: a.lines };
    let mut chunks = c.steps.tail_output(req).await.map_err(status)?.into_inner();
    let mut out = std::io::stdout();
    while let Some(piece) = chunks.message().await.map_err(status)? {
        if !piece.note.is_empty() {
            super::output::complain(&format!("spur tail: {}", piece.note));
        }
        if !piece.data.is_empty() {
            out.write_all(&piece.data)
                .and_then(|()| out.flush())
                .map_err(|e| format!("cannot write job {job}'s output: {e}"))?;
        }
    }
    Ok(String::new())
}

/// Runs `spur tail` with its arguments (without `argv[0]`); returns the exit code.
pub async fn main(argv: &[String]) -> i32 {
    let result = match parse(argv) {
        Ok(a) if a.help => Ok(format!("{USAGE}\n")),
        Ok(a) => run(a).await,
        Err(e) => Err(e),
    };
    super::output::finish("spur tail", result)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Result<Args, String> {
        parse(&s.split_whitespace().map(String::from).collect::<Vec<_>>())
    }

    #[test]
    fn flags_and_the_job_id_are_read_and_bad_ones_named() {
        let a = args("-f --err -n 5 42").unwrap();
        assert!(a.follow && a.stderr && a.lines == 5);
        assert_eq!(job_of(&a).unwrap(), 42);
        assert_eq!(args("7").unwrap().lines, 0, "the controller's default");
        assert!(args("-n x 7").unwrap_err().contains("--lines: 'x'"));
        assert!(args("-n 0 7").unwrap_err().contains("at least 1"));
        assert!(job_of(&args("").unwrap()).unwrap_err().contains("give one JOBID"));
        assert!(job_of(&args("abc").unwrap()).unwrap_err().contains("'abc' is not a job id"));
        assert!(job_of(&args("1 2").unwrap()).is_err());
    }
}
