//! `--propagate`: the submitter's soft resource limits, sent in the job's
//! environment as `SLURM_RLIMIT_NAME=value` (Slurm's variables), set on the
//! program by the `__exec` trampoline after it has dropped to the job's
//! user. A soft limit cannot pass the hard one here: it is lowered to it, as
//! an unprivileged `setrlimit` must.

use nix::sys::resource::{RLIM_INFINITY, Resource, getrlimit, setrlimit};

/// Slurm's names, and the limits they are.
const NAMES: &[(&str, Resource)] = &[
    ("AS", Resource::RLIMIT_AS),
    ("CORE", Resource::RLIMIT_CORE),
    ("CPU", Resource::RLIMIT_CPU),
    ("DATA", Resource::RLIMIT_DATA),
    ("FSIZE", Resource::RLIMIT_FSIZE),
    ("MEMLOCK", Resource::RLIMIT_MEMLOCK),
    ("NOFILE", Resource::RLIMIT_NOFILE),
    ("NPROC", Resource::RLIMIT_NPROC),
    ("RSS", Resource::RLIMIT_RSS),
    ("STACK", Resource::RLIMIT_STACK),
];

/// The limits the environment asks: (limit, soft value); unknown names and
/// values that are not a number or `unlimited` are left out.
pub fn asked(env: impl IntoIterator<Item = (String, String)>) -> Vec<(Resource, u64)> {
    let mut out = vec![];
    for (k, v) in env {
        let Some(name) = k.strip_prefix("SLURM_RLIMIT_") else { continue };
        let Some((_, r)) = NAMES.iter().find(|(n, _)| *n == name) else { continue };
        let value = match v.trim() {
            "unlimited" => RLIM_INFINITY,
            t => match t.parse::<u64>() {
                Ok(n) => n,
                Err(_) => continue,
            },
        };
        out.push((*r, value));
    }
    out
}

/// Sets each soft limit asked (at most the hard one); what could not be set, in words.
pub fn apply(limits: &[(Resource, u64)]) -> Vec<String> {
    let mut failed = vec![];
    for &(r, soft) in limits {
        let res = getrlimit(r).and_then(|(_, hard)| setrlimit(r, soft.min(hard), hard));
        if let Err(e) = res {
            failed.push(format!("cannot set {r:?} to {soft}: {e}"));
        }
    }
    failed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kv(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn the_environment_names_the_limits() {
        let env = kv(&[
            ("SLURM_RLIMIT_NOFILE", "777"),
            ("SLURM_RLIMIT_CPU", "unlimited"),
            ("SLURM_RLIMIT_BOGUS", "1"),
            ("SLURM_RLIMIT_CORE", "lots"),
            ("PATH", "/bin"),
        ]);
        assert_eq!(asked(env), [(Resource::RLIMIT_NOFILE, 777), (Resource::RLIMIT_CPU, RLIM_INFINITY)]);
    }
}
