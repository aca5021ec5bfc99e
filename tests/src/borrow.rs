//! Our side of the `slurm` provisioner's end-to-end tests, whatever the
//! upstream is (a second Spur through its `install-links`, or a real Slurm):
//! the definition, our spur.conf with its `[upstream.slurm]` block, our
//! controller started where its pilots' agents can reach it, a job only a
//! borrowed node can run, and the wait for it to complete there and the
//! node to be given back.

use crate::config::ClusterToml;
use crate::proc::{Controller, bin, conf, ok, run, sacct_state, wait_for};
use std::path::Path;

/// Definition `burst`: a pilot of 2 CPUs and 1 GiB in the upstream's
/// partition `compute`, for an hour.
pub const DEFINITIONS: &str = "definitions:
- id: burst
  provisioner: slurm
  ttl: 3600
  provisionerSpec: {cpu: 2, memory: 1GiB, partition: compute, costPerHour: 0.3}
";

/// `[upstream.slurm]`'s idle_timeout_secs and boot_timeout_secs.
#[derive(Debug, Clone, Copy)]
pub struct Timeouts {
    pub idle: u64,
    pub boot: u64,
}

/// Nodes given back idle for 2 seconds; a minute to boot.
pub const QUICK: Timeouts = Timeouts { idle: 2, boot: 60 };

/// Our spur.conf: token admission, partition `burst` whose one configured
/// node never comes (so only a borrowed node can run a job), and the
/// upstream's commands in `bin_dir`, run with `env`, with timeouts `t`.
pub fn ours(db: &str, bin_dir: &Path, env: &[(&str, &str)], controller_url: &str, t: Timeouts) -> String {
    ours_with(db, bin_dir, env, controller_url, t, |t| t)
}

/// [`ours`] with the cluster part changed by `more` (a shorter node timeout, ...).
pub fn ours_with(
    db: &str,
    bin_dir: &Path,
    env: &[(&str, &str)],
    controller_url: &str,
    t: Timeouts,
    more: impl Fn(ClusterToml) -> ClusterToml,
) -> String {
    let toml = more(ClusterToml::token_admission())
        .interval(1)
        .set("controller", "max_dynamic_nodes", 2u32)
        .set("controller", "dynamic_partitions", &["burst"][..])
        .partition("burst", "node03");
    let env: Vec<String> = env.iter().map(|(k, v)| format!("{k} = {v:?}")).collect();
    let block = format!(
        "[upstream.slurm]\nbin_dir = {:?}\nenv = {{ {} }}\n\
         spurd_path = {:?}\ncontroller_url = {controller_url:?}\n\
         call_timeout_secs = {}\nboot_timeout_secs = {}\nidle_timeout_secs = {}\n",
        bin_dir.display().to_string(),
        env.join(", "),
        bin("spurd").display().to_string(),
        // At most boot_timeout_secs, as the config requires.
        t.boot.min(10),
        t.boot,
        t.idle,
    );
    conf(db, &format!("{}{block}", toml.build()))
}

/// Our cluster, borrowing from an upstream whose queue's job names
/// `queue` lists.
pub struct Borrowing {
    pub dir: tempfile::TempDir,
    pub c: Controller,
    queue: Box<dyn Fn() -> Vec<String>>,
}

impl Borrowing {
    /// Starts our controller on the definitions of [`DEFINITIONS`]. The
    /// pilots' agents must reach it where it listens, known once it has
    /// started, so it restarts on the same address with the URL in its config.
    pub fn start(
        bin_dir: &Path,
        env: &[(&str, &str)],
        t: Timeouts,
        queue: impl Fn() -> Vec<String> + 'static,
    ) -> Borrowing {
        Borrowing::start_with(bin_dir, env, DEFINITIONS, t, |t| t, queue)
    }

    /// [`Borrowing::start`] on `definitions`, with the cluster part changed by `more`.
    pub fn start_with(
        bin_dir: &Path,
        env: &[(&str, &str)],
        definitions: &str,
        t: Timeouts,
        more: impl Fn(ClusterToml) -> ClusterToml,
        queue: impl Fn() -> Vec<String> + 'static,
    ) -> Borrowing {
        let dir = tempfile::tempdir().expect("tempdir");
        let d = dir.path();
        std::fs::write(d.join("provisioners.yaml"), definitions).expect("write provisioners.yaml");
        let db = format!("sqlite://{}/spur.db", d.display());
        let text = |url: &str| ours_with(&db, bin_dir, env, url, t, &more);
        let mut c = Controller::start(d, &text("http://127.0.0.1:1"));
        std::fs::write(&c.config, text(&c.url)).expect("write spur.conf");
        c.restart();
        Borrowing { dir, c, queue: Box::new(queue) }
    }

    /// The pilots in the upstream's queue, by job name.
    pub fn pilots(&self) -> Vec<String> {
        (self.queue)().into_iter().filter(|n| n.starts_with("spur-")).collect()
    }

    /// A 5-minute job in `burst`, which only a borrowed node can run, running `script`.
    pub fn submit_script(&self, script: &str) -> u64 {
        self.submit_with(&["-t", "5"], script)
    }

    /// A job in `burst` with sbatch options `opts`, running `script`.
    pub fn submit_with(&self, opts: &[&str], script: &str) -> u64 {
        let wd = self.dir.path().display().to_string();
        let mut args = vec!["--parsable", "-p", "burst", "-D", &wd, "-o", "/dev/null"];
        args.extend(opts);
        args.extend(["--wrap", script]);
        ok("sbatch", &self.c.url, &args).trim().parse().expect("a job id")
    }

    /// [`Borrowing::submit_script`] of `true`.
    pub fn submit(&self) -> u64 {
        self.submit_script("true")
    }

    /// Waits for `done`, noting the most pilots the upstream's queue held meanwhile.
    pub fn wait(&self, what: &str, most: &mut usize, mut done: impl FnMut() -> bool) {
        wait_for(what, || {
            *most = (*most).max(self.pilots().len());
            done().then_some(())
        });
    }

    /// Waits for job `id` to complete on burst-1 and the node to be given
    /// back, with exactly one pilot asked for and one token minted for it.
    pub fn completes_and_gives_back(&self, id: u64, most: &mut usize) {
        self.wait("the job completed on the borrowed node", most, || {
            spur_vocab::JobState::from_name(&sacct_state(&self.c.url, id))
                == Some(spur_vocab::JobState::Completed)
        });
        let nodes = ok("sacct", &self.c.url, &["-n", "-P", "-X", "-j", &id.to_string(), "-o", "NodeList"]);
        assert_eq!(nodes.trim(), "burst-1");
        self.wait("the node given back", most, || self.given_back("burst-1"));
        assert_eq!(*most, 1, "exactly one pilot was asked for");
        // One single-use token, bound to the one node.
        let tokens = ok("spur", &self.c.url, &["token", "list"]);
        assert_eq!(tokens.matches("burst-").count(), 1, "{tokens}");
    }

    /// Whether `node` is gone here and the upstream's queue holds no pilot.
    pub fn given_back(&self, node: &str) -> bool {
        let gone = !run("scontrol", &self.c.url, &["show", "node", node]).status.success();
        gone && self.pilots().is_empty()
    }
}
