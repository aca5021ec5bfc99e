//! The multi-call `spur` binary. Called as `sacctmgr` it is `spur accounts`.
//!
//! - [`args`]: sacctmgr's command line (flags anywhere, where/set, format=).
//! - [`columns`]: each show's columns with Slurm's names.
//! - [`output`]: human tables, `-p`/`-P` delimited output and JSON.
//! - [`sacctmgr`]: running a parsed command against the controller.
//! - [`sinfo`]: `sinfo` / `spur info`: partitions and nodes, Slurm's format codes.
//! - [`scontrol`]: `scontrol` / `spur control`: show/update nodes, partitions, jobs, reconfigure.
//! - [`jobctl`]: scontrol's job commands: show job, update job, hold/release/requeue.
//! - [`preemptctl`]: scontrol explain job|preempt, and the partition preemption override.
//! - [`licctl`]: scontrol's license commands: show license, update HRESName=.
//! - [`squeue`]: `squeue` / `spur queue`: the job queue, Slurm's `-o`/`-O` formats and sorts.
//! - [`listing`]: a large job listing decoded and printed on every core.
//! - [`sbatch`]: `sbatch` / `spur submit`: a job spec from options and `#SBATCH` lines.
//! - [`scancel`]: `scancel` / `spur cancel`: cancel or signal jobs by id or filter.
//! - [`sacct`]: `sacct` / `spur acct`: job accounting in a time window, Slurm's print_fields layout.
//! - [`sprio`]: `sprio` / `spur prio`: the priority factors of pending jobs.
//! - [`sshare`]: `sshare` / `spur share`: fair share per account and user.
//! - [`jobsort`]: squeue's `-S` sort letters, and sorting by them.
//! - [`jobfmt`]: job states, ids, durations, signals, and the `show job` record.
//! - [`kv`]: Slurm-style flags (getopt), `Key=value` pairs and abbreviated keywords.
//! - [`audit`]: `spur audit tail`.
//! - [`token`]: `spur token user|create|list|revoke`.

pub mod args;
pub mod audit;
pub mod columns;
pub mod jobctl;
pub mod jobfmt;
pub mod jobsort;
pub mod kv;
pub mod licctl;
pub mod listing;
pub mod output;
pub mod preemptctl;
pub mod sacct;
pub mod sacctmgr;
pub mod sbatch;
pub mod scancel;
pub mod scontrol;
pub mod sinfo;
pub mod sprio;
pub mod squeue;
pub mod sshare;
pub mod token;

use std::path::Path;

/// Every name the binary answers to through argv[0], with its `spur` subcommand.
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
  audit tail [Key=value ...] [-P] [--after ID]   print txn rows as they commit
  token user --name N [--admin-level L] [--ttl 24h]   mint a user JWT from the key in spur.conf
  token create [--ttl 24h] | token list | token revoke ID   node admission tokens
  install-links DIR     create sacctmgr, scontrol, squeue, ... links to this binary in DIR
Every client finds the controller by --controller URL, else SPUR_CONTROLLER_ADDR, else http://localhost:6817.";

/// Dispatches on argv[0], then on the `spur` subcommand. Returns the exit code.
pub async fn main(argv: Vec<String>) -> i32 {
    let prog = argv.first().map(|a| basename(a)).unwrap_or_default();
    let rest = argv.get(1..).unwrap_or_default().to_vec();
    if let Some((_, sub)) = PERSONALITIES.iter().find(|(name, _)| *name == prog) {
        return subcommand(sub, prog.as_str(), &rest).await;
    }
    match rest.split_first() {
        Some((sub, args)) if sub == "install-links" => install_links(args),
        Some((sub, args)) if sub == "audit" => audit::main(args).await,
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
