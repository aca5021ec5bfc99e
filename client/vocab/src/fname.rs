//! sbatch's filename patterns (its FILENAME PATTERN section), expanded
//! once: by the controller for the launch, by the CLI for `StdOut=`.

/// What the patterns of a batch step read.
#[derive(Debug, Clone, Copy)]
pub struct PathVars<'a> {
    /// The job id.
    pub job_id: u64,
    /// Its user.
    pub user: &'a str,
    /// Its name.
    pub name: &'a str,
    /// The node the batch script runs on (empty before it starts).
    pub node: &'a str,
    /// An array task's array id and index (`%A`, `%a`); None for a job that is no array.
    pub array: Option<(u64, u32)>,
}

/// What `%a` prints for a job that is not an array task (Slurm's NO_VAL - 1).
const NOT_AN_ARRAY_TASK: u64 = 4_294_967_294;

/// Expands `%j %J %A %a %b %u %x %N %n %t %s %r %%` in `pattern`, with an
/// optional zero-padding width (`%4j`, at most 10). A pattern holding `\`
/// is taken literally, the backslashes dropped, as Slurm does.
pub fn expand_path(pattern: &str, j: &PathVars) -> String {
    match expand_path_within(pattern, j, usize::MAX) {
        Ok(p) | Err(p) => p,
    }
}

/// [`expand_path`] that stops as soon as the result passes `max` bytes: Err
/// with what was built so far (at most `max` plus one expansion), so a
/// pattern of many `%x` never builds more than a path's worth.
pub fn expand_path_within(pattern: &str, j: &PathVars, max: usize) -> Result<String, String> {
    if pattern.contains('\\') {
        let p = pattern.replace('\\', "");
        return if p.len() > max { Err(p) } else { Ok(p) };
    }
    let mut out = String::with_capacity(pattern.len().min(max) + 16);
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let mut width = 0usize;
        while let Some(d) = chars.peek().and_then(|d| d.to_digit(10)) {
            width = (width * 10 + d as usize).min(10);
            chars.next();
        }
        let num = |n: u64| format!("{n:0width$}");
        let Some(spec) = chars.next() else {
            out.push('%');
            break;
        };
        let text = match spec {
            '%' => "%".to_string(),
            'j' | 'J' => num(j.job_id),
            'A' => num(j.array.map_or(j.job_id, |a| a.0)),
            'a' => num(j.array.map_or(NOT_AN_ARRAY_TASK, |a| u64::from(a.1))),
            'b' => num(j.array.map_or(NOT_AN_ARRAY_TASK, |a| u64::from(a.1)) % 10),
            'u' => j.user.to_string(),
            'x' => j.name.to_string(),
            'N' => j.node.to_string(),
            'n' | 't' | 'r' => num(0),
            's' => "batch".to_string(),
            // Not a pattern Slurm knows: kept as written.
            other => format!("%{}{other}", if width > 0 { width.to_string() } else { String::new() }),
        };
        out.push_str(&text);
        if out.len() > max {
            return Err(out);
        }
    }
    if out.len() > max { Err(out) } else { Ok(out) }
}

/// What a job step's patterns read beyond the job's (srun's `-o/-e`).
#[derive(Debug, Clone, Copy)]
pub struct StepVars {
    /// The step id (`%s`, and `%J`'s `jobid.stepid`).
    pub step: u32,
    /// The task's id in the step (`%t`).
    pub task: u32,
    /// The node's index among the step's nodes (`%n`).
    pub node_index: u32,
}

/// [`expand_path`] for a task of a step: `%s %t %n %J` are the step's, the rest the job's.
pub fn expand_step_path(pattern: &str, j: &PathVars, s: &StepVars) -> String {
    if pattern.contains('\\') {
        return expand_path(pattern, j);
    }
    // The step's codes first, widths kept; everything else (`%%` too) is left for expand_path.
    let mut out = String::with_capacity(pattern.len() + 16);
    let mut rest = pattern;
    while let Some(at) = rest.find('%') {
        out.push_str(&rest[..at]);
        let tail = &rest[at + 1..];
        let digits = tail.bytes().take_while(u8::is_ascii_digit).count();
        let width = tail[..digits].parse::<usize>().unwrap_or(0).min(10);
        let num = |n: u32| format!("{n:0width$}");
        let text = match tail[digits..].chars().next() {
            Some('s') => Some(num(s.step)),
            Some('t') => Some(num(s.task)),
            Some('n') => Some(num(s.node_index)),
            Some('J') => Some(format!("{}.{}", format_args!("{:0width$}", j.job_id), s.step)),
            _ => None,
        };
        match text {
            Some(t) => {
                out.push_str(&t);
                rest = &tail[digits + 1..];
            }
            None => {
                // Not the step's: copied whole (`%%` as a pair, so its second `%` starts nothing).
                let len = if tail.starts_with('%') { 1 } else { digits };
                out.push('%');
                out.push_str(&tail[..len]);
                rest = &tail[len..];
            }
        }
    }
    out.push_str(rest);
    expand_path(&out, j)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_expansion_stops_at_its_cap() {
        let name = "n".repeat(1000);
        let j = PathVars { job_id: 7, user: "u", name: &name, node: "", array: None };
        let long = expand_path_within(&"%x".repeat(20_000), &j, 4096).unwrap_err();
        assert!(long.len() <= 4096 + 1000, "at most the cap and one expansion: {}", long.len());
        assert_eq!(expand_path_within("out-%j.txt", &j, 4096).unwrap(), "out-7.txt");
        assert!(expand_path_within("a\\b", &j, 1).is_err(), "a literal pattern is held to the cap too");
    }

    #[test]
    fn filename_patterns_expand_as_sbatch_documents() {
        let j = PathVars { job_id: 128, user: "alice", name: "train", node: "n3", array: None };
        let e = |p: &str| expand_path(p, &j);
        assert_eq!(e("job%J.out"), "job128.out");
        assert_eq!(e("job%4j.out"), "job0128.out");
        assert_eq!(e("job%2j-%2t.out"), "job128-00.out");
        assert_eq!(e("%x-%u-%N-%n-%s-%A_%a.log"), "train-alice-n3-0-batch-128_4294967294.log");
        assert_eq!(e("100%%-%j"), "100%-128");
        assert_eq!(e("%12j"), "0000000128", "the width stops at 10");
        assert_eq!(e("odd-%q-%"), "odd-%q-%");
        assert_eq!(e("lit\\%j"), "lit%j");
        let task = PathVars { job_id: 131, array: Some((128, 7)), ..j };
        assert_eq!(expand_path("%A_%a-%3a-%b-%j.out", &task), "128_7-007-7-131.out");
        let step = StepVars { step: 2, task: 5, node_index: 1 };
        assert_eq!(
            expand_step_path("%J-%s-%3t-%n-%N-%x-%%t.out", &j, &step),
            "128.2-2-005-1-n3-train-%t.out"
        );
        assert_eq!(expand_step_path("%j%", &j, &step), "128%");
        assert_eq!(expand_step_path("lit\\%t", &j, &step), "lit%t");
    }
}
