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
}

/// What `%a` prints for a job that is not an array task (Slurm's NO_VAL - 1).
const NOT_AN_ARRAY_TASK: u64 = 4_294_967_294;

/// Expands `%j %J %A %a %b %u %x %N %n %t %s %r %%` in `pattern`, with an
/// optional zero-padding width (`%4j`, at most 10). A pattern holding `\`
/// is taken literally, the backslashes dropped, as Slurm does.
pub fn expand_path(pattern: &str, j: &PathVars) -> String {
    if pattern.contains('\\') {
        return pattern.replace('\\', "");
    }
    let mut out = String::with_capacity(pattern.len() + 16);
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
            'j' | 'J' | 'A' => num(j.job_id),
            'a' => num(NOT_AN_ARRAY_TASK),
            'b' => num(NOT_AN_ARRAY_TASK % 10),
            'u' => j.user.to_string(),
            'x' => j.name.to_string(),
            'N' => j.node.to_string(),
            'n' | 't' | 'r' => num(0),
            's' => "batch".to_string(),
            // Not a pattern Slurm knows: kept as written.
            other => format!("%{}{other}", if width > 0 { width.to_string() } else { String::new() }),
        };
        out.push_str(&text);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filename_patterns_expand_as_sbatch_documents() {
        let j = PathVars { job_id: 128, user: "alice", name: "train", node: "n3" };
        let e = |p: &str| expand_path(p, &j);
        assert_eq!(e("job%J.out"), "job128.out");
        assert_eq!(e("job%4j.out"), "job0128.out");
        assert_eq!(e("job%2j-%2t.out"), "job128-00.out");
        assert_eq!(e("%x-%u-%N-%n-%s-%A_%a.log"), "train-alice-n3-0-batch-128_4294967294.log");
        assert_eq!(e("100%%-%j"), "100%-128");
        assert_eq!(e("%12j"), "0000000128", "the width stops at 10");
        assert_eq!(e("odd-%q-%"), "odd-%q-%");
        assert_eq!(e("lit\\%j"), "lit%j");
    }
}
