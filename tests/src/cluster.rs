//! A controller with one agent hosting its nodes, and the CLI pointed at it:
//! the harness the command-line acceptance tests share.

use crate::config::ClusterToml;
use crate::proc::{Agent, Controller, conf, fails, field, ok, wait_for};
use tempfile::TempDir;

pub struct Cluster {
    pub dir: TempDir,
    pub c: Controller,
    agent: Option<Agent>,
    nodes: String,
}

impl Cluster {
    /// `spurctld` on SQLite in a temp dir with `cluster` in its spur.conf and
    /// `files` (name, text) beside it; one `spurd` hosting `nodes`; returns
    /// once `idle` nodes are idle, with account `ml` added.
    pub fn start(cluster: &str, files: &[(&str, &str)], nodes: &str, idle: usize) -> Cluster {
        let dir = tempfile::tempdir().unwrap();
        for (name, text) in files {
            std::fs::write(dir.path().join(name), text).unwrap();
        }
        let db = format!("sqlite://{}/spur.db", dir.path().display());
        let c = Controller::start(dir.path(), &conf(&db, cluster));
        let agent = Agent::start(&c.url, nodes, &[]);
        let e = Cluster { dir, c, agent: Some(agent), nodes: nodes.to_string() };
        let want = format!("idle:{idle}");
        wait_for("nodes up", || (e.ok("sinfo", "-h -o %t:%D").trim() == want).then_some(()));
        e.ok("sacctmgr", "-i add account name=ml");
        e
    }

    /// The workload tests' cluster: `node[01-02]` (4 CPUs, 8 GiB each) in
    /// partition `batch`, a pass every second, root in account `ml`; `more`
    /// adds to its spur.conf, `files` go beside it.
    pub fn two_nodes(more: impl FnOnce(ClusterToml) -> ClusterToml, files: &[(&str, &str)]) -> Cluster {
        let toml = ClusterToml::new()
            .heartbeat(1)
            .node_timeout(5)
            .interval(1)
            .nodes("node[01-02]", 4, 8192)
            .partition("batch", "node[01-02]");
        let e = Cluster::start(&more(toml).build(), files, "node[01-02]", 2);
        e.ok("sacctmgr", "-i add user name=root account=ml");
        e
    }

    /// kill -9 of the agent alone (its jobs' supervisors run on), and a new
    /// one on the same state directory, which adopts them.
    pub fn restart_agent(&mut self) {
        if let Some(old) = self.agent.take() {
            let state = old.state_dir().to_path_buf();
            old.kill_agent_only();
            self.agent = Some(Agent::start_in(&self.c.url, &self.nodes, &[], &state));
        }
    }

    /// The agent's process id (0 once it is gone).
    pub fn agent_pid(&self) -> u32 {
        self.agent.as_ref().map_or(0, Agent::pid)
    }

    /// A command line split on whitespace; it must succeed.
    pub fn ok(&self, personality: &str, line: &str) -> String {
        ok(personality, &self.c.url, &line.split_whitespace().collect::<Vec<_>>())
    }

    /// A command that must fail; its stderr.
    pub fn fails(&self, personality: &str, args: &[&str]) -> String {
        fails(personality, &self.c.url, args)
    }

    /// `sbatch --parsable -D DIR ARGS`: the job id.
    pub fn sbatch(&self, args: &[&str]) -> u64 {
        let dir = self.dir.path().display().to_string();
        let mut all: Vec<&str> = vec!["--parsable", "-D", &dir];
        all.extend(args);
        ok("sbatch", &self.c.url, &all).trim().parse().expect("a job id")
    }

    /// One `squeue -o` field of a job.
    pub fn field(&self, id: u64, code: &str) -> String {
        field(&self.c.url, id, code)
    }

    pub fn wait_field(&self, id: u64, code: &str, want: &str) {
        wait_for(&format!("job {id} {code}={want}"), || (self.field(id, code) == want).then_some(()));
    }
}
