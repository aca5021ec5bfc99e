//! The multi-call `spur` binary. Called as `sacctmgr` it is `spur accounts`.
//!
//! The modules form layers; a file imports only from the layers below it,
//! never a sibling command, so no command depends on another one's internals.
//!
//! Commands (each one's parse, run and `main`):
//! - [`sacctmgr`]: `sacctmgr` / `spur accounts`: add/modify/delete/show, and `show txn`'s paging.
//! - [`scontrol`]: `scontrol` / `spur control`: a dispatcher over one file per
//!   subcommand (`show_node`, `update_node`, `show_partition`, `update_partition`,
//!   `job`, `license`, `provisioner`, `explain`, `hostlist`, `reconfigure`); see its own map.
//! - [`sinfo`]: `sinfo` / `spur info`: partitions and nodes, Slurm's format codes and
//!   `-O` names ([`sinfo::cells`]).
//! - [`squeue`]: `squeue` / `spur queue`: the job queue, Slurm's `-o`/`-O` formats
//!   and sorts (with its helper [`jobsort`]: `-S` sort letters, and sorting by them).
//! - [`sbatch`]: `sbatch` / `spur submit`: a job spec from options and `#SBATCH` lines;
//!   [`submit_opts`]: the values of its options (sizes, `--export`, `--begin` dates,
//!   `--annotation`, ...) and the `#SBATCH` lines.
//! - [`scancel`]: `scancel` / `spur cancel`: cancel or signal jobs by id or filter.
//! - [`srun`]: `srun` / `spur run`: a job step in a job (or in the allocation it makes); its
//!   own map ([`srun::output`], [`srun::session`]).
//! - [`sacct`]: `sacct` / `spur acct`: job accounting in a time window.
//! - [`sprio`]: `sprio` / `spur prio`: the priority factors of pending jobs.
//! - [`sshare`]: `sshare` / `spur share`: fair share per account and user.
//! - [`sdiag`]: `sdiag` / `spur diag`: the controller's scheduling and RPC figures.
//! - [`sreport`]: `sreport` / `spur report`: CPU time per cluster, account and user over a window.
//! - [`seff`]: `seff` / `spur eff`: a job's CPU and memory efficiency, as Slurm's contrib prints it.
//! - [`sstat`]: `sstat` / `spur stat`: what a running step's tasks use now.
//! - [`sbcast`]: `sbcast` / `spur bcast`: a file copied to a running job's nodes as its user.
//! - [`sattach`]: `sattach` / `spur attach`: a running step's output, beside its srun.
//! - [`audit`]: `spur audit tail`.
//! - [`tail`]: `spur tail JOBID`: a job's stdout or stderr, from its node, live with `-f`.
//! - [`token`]: `spur token user|create|list|revoke`.
//!
//! Shared pieces below the commands:
//! - [`args`]: sacctmgr's command line (flags anywhere, where/set, format=), and
//!   the `-n`/`-p`/`-P` layout flags tables are rendered with.
//! - [`getopt`]: the one flag parser (see "Flags" below).
//! - [`kv`]: the words after the flags: `Key=value` pairs, abbreviated keywords,
//!   comma lists, `%[.][width]X` format strings, `-O` name lists and padding.
//! - [`fmt`]: a gRPC refusal as one line (`status`), `(null)`, the `Key=value`
//!   record layout of `scontrol show`, Slurm's hostname order.
//! - [`jobfmt`]: job states, ids, durations, signals, accounting's times, and the `show job` record.
//! - [`jobjson`]: jobs as JSON in Slurm's data_parser shapes (squeue, scontrol, sacct).
//! - [`cluster`]: `-M/--clusters`, checked against the controller's cluster name.
//! - [`stepfmt`]: job steps: sacct's `ID.batch`/`ID.N` rows, `show step`, `squeue -s`.
//! - [`nodefmt`]: a node's state in Slurm's spellings, node and partition JSON
//!   (shared by `sinfo` and `scontrol show`).
//! - [`fields`]: Slurm's print_fields layout and `name%width` lists (`sacct`, `sshare`).
//! - [`columns`]: each sacctmgr show's columns with Slurm's names.
//! - [`events`]: node history (`sacctmgr show event`), derived from the txn log's node rows.
//! - [`output`]: human tables, `-p`/`-P` delimited output and JSON; stdout and stderr.
//! - [`listing`]: a large job listing decoded and printed on every core.
//!
//! # Flags
//!
//! Every command reads its flags with [`getopt`], GNU getopt_long's rules
//! without libc: `-h`, bundles `-Nh`, `-pdebug` and `-p debug`, `--partition=P`
//! and `--partition P`, unique prefixes `--part`, and `--` ending the flags.
//! (clap was the other candidate; it cannot keep Slurm's spellings: `#SBATCH`
//! lines, sacctmgr's flags among `Key=value` words, `-u -1`, and Slurm-worded
//! errors.) A command declares its flags as one table, a line per flag, with
//! what the flag does to the command's arguments:
//!
//! ```text
//! static FLAGS: Spec<Args> = Spec { opts: OPTS, mode: Mode::Anywhere, noun: "flag" };
//! const OPTS: &[Opt<Args>] = &[
//!     switch("h/noheader", |a| a.noheader = true),              // -h, --noheader
//!     value("p/partition", |a, v| a.partitions.extend(list(&v))), // takes a value
//!     check("-/mem", |a, v| parse_mem(&v).map(|m| a.mem = m)),    // long only; may refuse it
//! ];
//! ...
//! FLAGS.parse_flags(argv, &mut args, "sinfo")?;   // or FLAGS.parse(..) to keep the words
//! ```
//!
//! Adding an option is adding its line. [`getopt::Mode`] says how the line is
//! read: flags anywhere (most commands), flags until the first word (`sbatch`,
//! for the command line and each `#SBATCH` line alike), or flags among
//! sacctmgr's `Key=value` words (long names spelled out). Errors name the
//! flag: `unrecognised flag '--bogus'`, `'-p' needs a value`, `'--json' takes
//! no value`, `ambiguous flag '--no'`; sbatch says `option` as Slurm's does.

pub mod args;
pub mod audit;
pub mod cluster;
pub mod columns;
pub mod events;
pub mod family;
pub mod fields;
pub mod fmt;
pub mod getopt;
pub mod jobfmt;
pub mod jobjson;
pub mod jobsort;
pub mod kv;
pub mod listing;
pub mod nodefmt;
pub mod output;
pub mod sacct;
pub mod sacctmgr;
pub mod salloc;
pub mod sattach;
pub mod sbatch;
pub mod sbcast;
pub mod scancel;
pub mod scontrol;
pub mod sdiag;
pub mod seff;
pub mod sinfo;
pub mod sprio;
pub mod squeue;
pub mod sreport;
pub mod srun;
pub mod sshare;
pub mod sstat;
pub mod stepfmt;
pub mod submit_opts;
pub mod tail;
pub mod token;

use std::path::Path;

/// Every name the binary answers to through `argv[0]`, with its `spur` subcommand.
pub const PERSONALITIES: &[(&str, &str)] = &[
    ("sacctmgr", "accounts"),
    ("scontrol", "control"),
    ("squeue", "queue"),
    ("sinfo", "info"),
    ("sbatch", "submit"),
    ("scancel", "cancel"),
    ("sprio", "prio"),
    ("sacct", "acct"),
    ("sshare", "share"),
    ("srun", "run"),
    ("sdiag", "diag"),
    ("sreport", "report"),
    ("sstat", "stat"),
    ("sbcast", "bcast"),
    ("sattach", "attach"),
    ("salloc", "alloc"),
    ("seff", "eff"),
];

const SPUR_USAGE: &str = "\
usage: spur SUBCOMMAND [args...]
  accounts ...          the same as sacctmgr
  info ...              the same as sinfo
  control ...           the same as scontrol
  queue ...             the same as squeue
  submit ...            the same as sbatch
  cancel ...            the same as scancel
  acct ...              the same as sacct
  prio ...              the same as sprio
  share ...             the same as sshare
  run ...               the same as srun
  diag ...              the same as sdiag
  report ...            the same as sreport
  stat ...              the same as sstat
  bcast ...             the same as sbcast
  attach ...            the same as sattach
  alloc ...             the same as salloc
  eff JOBID             the same as seff
  audit tail [Key=value ...] [-P] [--after ID]   print txn rows as they commit
  tail [-f] [--err] [-n LINES] JOBID   a job's stdout (stderr) from its node; -f follows it
  token user --name N [--admin-level L] [--ttl 24h]   mint a user JWT from the key in spur.conf
  token create [--ttl 24h] | token list | token revoke ID   node admission tokens
  install-links DIR     create sacctmgr, scontrol, squeue, ... links to this binary in DIR
Every client finds the controller by --controller URL, else SPUR_CONTROLLER_ADDR, else http://127.0.0.1:6817.";

/// Dispatches on `argv[0]`, then on the `spur` subcommand. Returns the exit code.
pub async fn main(argv: Vec<String>) -> i32 {
    let prog = argv.first().map(|a| basename(a)).unwrap_or_default();
    let rest = argv.get(1..).unwrap_or_default().to_vec();
    if let Some((_, sub)) = PERSONALITIES.iter().find(|(name, _)| *name == prog) {
        return subcommand(sub, prog.as_str(), &rest).await;
    }
    match rest.split_first() {
        Some((sub, args)) if sub == "install-links" => install_links(args),
        Some((sub, args)) if sub == "audit" => audit::main(args).await,
        Some((sub, args)) if sub == "tail" => tail::main(args).await,
        Some((sub, args)) if sub == "token" => token::main(args).await,
        Some((sub, _)) if sub == "-h" || sub == "--help" || sub == "help" => {
            output::emit("spur", &format!("{SPUR_USAGE}\n"))
        }
        Some((sub, args)) => match PERSONALITIES.iter().find(|(_, s)| s == sub) {
            Some((name, _)) => subcommand(sub, name, args).await,
            None => {
                output::complain(&format!("spur: error: unknown subcommand '{sub}'\n{SPUR_USAGE}"));
                1
            }
        },
        None => {
            output::complain(SPUR_USAGE);
            1
        }
    }
}

async fn subcommand(sub: &str, name: &str, args: &[String]) -> i32 {
    match sub {
        "accounts" => sacctmgr::main(args).await,
        "info" => sinfo::main(args).await,
        "control" => scontrol::main(args).await,
        "queue" => squeue::main(args).await,
        "submit" => sbatch::main(args).await,
        "cancel" => scancel::main(args).await,
        "acct" => sacct::main(args).await,
        "prio" => sprio::main(args).await,
        "share" => sshare::main(args).await,
        "run" => srun::main(args).await,
        "diag" => sdiag::main(args).await,
        "report" => sreport::main(args).await,
        "stat" => sstat::main(args).await,
        "bcast" => sbcast::main(args).await,
        "attach" => sattach::main(args).await,
        "alloc" => salloc::main(args).await,
        "eff" => seff::main(args).await,
        _ => {
            output::complain(&format!("{name}: error: '{name}' is not available from this Spur release yet"));
            1
        }
    }
}

fn basename(p: &str) -> String {
    Path::new(p).file_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()
}

fn install_links(args: &[String]) -> i32 {
    let [dir] = args else {
        output::complain("spur: error: usage: spur install-links DIR");
        return 1;
    };
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => {
            output::complain(&format!("spur: error: cannot find this binary: {e}"));
            return 1;
        }
    };
    for (name, _) in PERSONALITIES {
        let link = Path::new(dir).join(name);
        let _ = std::fs::remove_file(&link);
        if let Err(e) = std::os::unix::fs::symlink(&exe, &link) {
            output::complain(&format!("spur: error: cannot create {}: {e}", link.display()));
            return 1;
        }
        let code = output::emit("spur", &format!("{} -> {}\n", link.display(), exe.display()));
        if code != 0 {
            return code;
        }
    }
    0
}
