//! `scontrol show hostnames LIST` and `show hostlist[sorted] NAMES`: Slurm's
//! hostlist expressions expanded or compressed, locally, with no controller.

use super::command::Command;
use crate::cli::fmt::natural;
use crate::vocab::hostlist;

/// `show hostnames LIST`, `show hostlist NAMES` or `show hostlistsorted NAMES`;
/// `typed` is the entity as the user spelled it, for the message.
pub fn parse(typed: &str, entity: &str, arg: Option<String>) -> Result<Command, String> {
    let list = arg.ok_or_else(|| format!("show {typed}: needs a hostlist"))?;
    Ok(match entity {
        "hostnames" => Command::ShowHostnames(list),
        e => Command::ShowHostlist { names: list, sorted: e == "hostlistsorted" },
    })
}

/// One name per line.
pub fn hostnames(list: &str) -> Result<String, String> {
    Ok(hostlist::expand(list)?.iter().map(|n| format!("{n}\n")).collect())
}

/// The names as one hostlist; `sorted` orders them as Slurm does (`n9` before `n10`).
pub fn compress(names: &str, sorted: bool) -> Result<String, String> {
    let mut v = hostlist::expand(names)?;
    if sorted {
        v.sort_by(|a, b| natural(a, b));
    }
    Ok(format!("{}\n", hostlist::compress(&v)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostlists_expand_and_compress() {
        assert_eq!(hostnames("n[1-3]").unwrap(), "n1\nn2\nn3\n");
        assert_eq!(compress("n3,n1,n2", false).unwrap(), "n[1-3]\n");
        assert_eq!(compress("n10,n9", true).unwrap(), "n[9-10]\n");
        assert_eq!(parse("hostn", "hostnames", None).unwrap_err(), "show hostn: needs a hostlist");
        assert_eq!(
            parse("hostlists", "hostlistsorted", Some("a,b".into())),
            Ok(Command::ShowHostlist { names: "a,b".into(), sorted: true })
        );
    }
}
