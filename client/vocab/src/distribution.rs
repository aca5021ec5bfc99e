//! `-m/--distribution`, as srun's man page spells it:
//! `{*|block|cyclic|arbitrary|plane=N}[:{*|block|cyclic|fcyclic}[:{*|block|cyclic|fcyclic}]][,{Pack|NoPack}]`.
//! The first level lays a step's tasks out over its nodes ([`Distribution::layout`]);
//! the second and third order the CPUs tasks are bound to, which matters only
//! where CPUs are picked for a task (Spur binds with `--cpu-bind=map_cpu|mask_cpu`,
//! whose CPUs are named), so they are kept and shown, not acted on.

use std::fmt;

/// The most tasks a plane may hold: a step's own bound on tasks.
const MAX_PLANE: u32 = 65_536;

/// How tasks go over nodes (the first level).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NodeDist {
    /// Consecutive tasks share a node (Slurm's default, `*`).
    #[default]
    Block,
    /// Consecutive tasks on consecutive nodes, round-robin.
    Cyclic,
    /// Blocks of this many tasks, dealt round-robin over the nodes.
    Plane(u32),
    /// Task `t` on the `t`-th node of the list (SLURM_HOSTFILE, or `-w` in order).
    Arbitrary,
}

/// How CPUs go to tasks for binding (the second and third levels).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CpuDist {
    /// `*`: the default (cyclic over sockets; the socket's over cores).
    #[default]
    Default,
    /// Consecutive CPUs of one socket (core) before the next.
    Block,
    /// A task's CPUs from one socket (core), the next task's from the next.
    Cyclic,
    /// Each CPU of a task from the next socket (core), round-robin.
    Fcyclic,
}

/// A parsed `--distribution`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Distribution {
    /// The first level: tasks over nodes.
    pub nodes: NodeDist,
    /// The second level (sockets), when given.
    pub sockets: Option<CpuDist>,
    /// The third level (cores), when given.
    pub cores: Option<CpuDist>,
    /// `Pack` (true) or `NoPack` (false), when given.
    pub pack: Option<bool>,
}

fn bad(v: &str, why: impl fmt::Display) -> String {
    format!("--distribution: '{v}': {why}")
}

fn cpu_dist(v: &str, word: &str) -> Result<CpuDist, String> {
    Ok(match word.to_ascii_lowercase().as_str() {
        "*" => CpuDist::Default,
        "block" => CpuDist::Block,
        "cyclic" => CpuDist::Cyclic,
        "fcyclic" => CpuDist::Fcyclic,
        _ => return Err(bad(v, format!("'{word}' is not *, block, cyclic or fcyclic"))),
    })
}

impl Distribution {
    /// Parses `v`; errors name `--distribution` and the bad word.
    pub fn parse(v: &str) -> Result<Distribution, String> {
        let t = v.trim();
        let (levels, pack) = match t.split_once(',') {
            Some((l, p)) => {
                let pack = match p.to_ascii_lowercase().as_str() {
                    "pack" => true,
                    "nopack" => false,
                    _ => return Err(bad(v, format!("'{p}' is not Pack or NoPack"))),
                };
                (l, Some(pack))
            }
            None => (t, None),
        };
        let mut words = levels.split(':');
        let first = words.next().unwrap_or("");
        let nodes = match first.to_ascii_lowercase().as_str() {
            "*" | "block" => NodeDist::Block,
            "cyclic" => NodeDist::Cyclic,
            "arbitrary" => NodeDist::Arbitrary,
            w => match w.strip_prefix("plane=") {
                Some(n) => match n.parse::<u32>() {
                    Ok(n) if (1..=MAX_PLANE).contains(&n) => NodeDist::Plane(n),
                    _ => return Err(bad(v, format!("the plane size '{n}' is not 1 to {MAX_PLANE}"))),
                },
                None if w == "plane" => return Err(bad(v, "plane needs its size (plane=N)")),
                None => {
                    return Err(bad(v, format!("'{first}' is not *, block, cyclic, arbitrary or plane=N")));
                }
            },
        };
        let sockets = words.next().map(|w| cpu_dist(v, w)).transpose()?;
        let cores = words.next().map(|w| cpu_dist(v, w)).transpose()?;
        if let Some(extra) = words.next() {
            return Err(bad(v, format!("'{extra}': at most three levels")));
        }
        if matches!(nodes, NodeDist::Plane(_)) && sockets.is_some() {
            return Err(bad(v, "plane takes no other levels"));
        }
        Ok(Distribution { nodes, sockets, cores, pack })
    }

    /// Slurm's `SLURM_DISTRIBUTION` value: the levels given, `*` as its
    /// default (`cyclic:block`, `plane`, `block`).
    pub fn env_value(&self) -> String {
        let cpu = |c: CpuDist, default: &'static str| match c {
            CpuDist::Default => default,
            CpuDist::Block => "block",
            CpuDist::Cyclic => "cyclic",
            CpuDist::Fcyclic => "fcyclic",
        };
        let mut out = match self.nodes {
            NodeDist::Block => "block",
            NodeDist::Cyclic => "cyclic",
            NodeDist::Plane(_) => "plane",
            NodeDist::Arbitrary => "arbitrary",
        }
        .to_string();
        if let Some(s) = self.sockets {
            let s = cpu(s, "cyclic");
            out = format!("{out}:{s}");
            if let Some(c) = self.cores {
                out = format!("{out}:{}", cpu(c, s));
            }
        }
        out
    }

    /// What a job or step's programs are told of it: `SLURM_DISTRIBUTION`,
    /// and `SLURM_DIST_PLANESIZE` for plane=N (srun reads both back).
    pub fn env_vars(&self) -> Vec<(&'static str, String)> {
        let mut v = vec![("SLURM_DISTRIBUTION", self.env_value())];
        if let Some(n) = self.plane_size() {
            v.push(("SLURM_DIST_PLANESIZE", n.to_string()));
        }
        v
    }

    /// The plane size (`SLURM_DIST_PLANESIZE`) of `plane=N`.
    pub fn plane_size(&self) -> Option<u32> {
        match self.nodes {
            NodeDist::Plane(n) => Some(n),
            _ => None,
        }
    }

    /// The step task ids on each of `nodes` nodes for `ntasks` tasks, as the
    /// man page lays them out: block (as even as can be, the first nodes one
    /// more, consecutive ids), cyclic (round-robin) or plane (blocks of N,
    /// round-robin). None for arbitrary, whose layout is its list's.
    pub fn layout(&self, ntasks: u32, nodes: usize) -> Option<Vec<Vec<u32>>> {
        let k = nodes.max(1);
        let mut out = vec![vec![]; k];
        match self.nodes {
            NodeDist::Block => {
                let k32 = u32::try_from(k).unwrap_or(u32::MAX);
                let mut next = 0;
                for (i, ids) in out.iter_mut().enumerate() {
                    let n = ntasks / k32 + u32::from((i as u32) < ntasks % k32);
                    ids.extend(next..next + n);
                    next += n;
                }
            }
            NodeDist::Cyclic => (0..ntasks).for_each(|t| out[t as usize % k].push(t)),
            NodeDist::Plane(n) => (0..ntasks).for_each(|t| out[(t / n) as usize % k].push(t)),
            NodeDist::Arbitrary => return None,
        }
        Some(out)
    }
}

/// The canonical spelling, which [`Distribution::parse`] reads back.
impl fmt::Display for Distribution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.nodes {
            NodeDist::Plane(n) => write!(f, "plane={n}")?,
            _ => f.write_str(self.env_value().split(':').next().unwrap_or("block"))?,
        }
        let word = |c: CpuDist| match c {
            CpuDist::Default => "*",
            CpuDist::Block => "block",
            CpuDist::Cyclic => "cyclic",
            CpuDist::Fcyclic => "fcyclic",
        };
        if let Some(s) = self.sockets {
            write!(f, ":{}", word(s))?;
        }
        if let Some(c) = self.cores {
            write!(f, ":{}", word(c))?;
        }
        match self.pack {
            Some(true) => f.write_str(",Pack"),
            Some(false) => f.write_str(",NoPack"),
            None => Ok(()),
        }
    }
}
