//! `scontrol reconfigure`: the controller re-reads spur.conf and answers with
//! one line per change it applied, which scontrol prints as they came.

use super::command::Command;
use crate::cli::fmt::status;
use crate::conn::Clients;
use spur_proto::v1 as pb;

/// `reconfigure` takes no arguments; anything after it is a mistake worth naming.
pub fn parse(rest: &[String]) -> Result<Command, String> {
    match rest.first() {
        Some(x) => Err(format!("reconfigure: unexpected argument '{x}'")),
        None => Ok(Command::Reconfigure),
    }
}

/// The controller's change lines, one per line.
pub fn changes(lines: &[String]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

pub async fn execute(c: &mut Clients) -> Result<String, String> {
    let resp = c.nodes.reconfigure(pb::ReconfigureRequest {}).await.map_err(status)?.into_inner();
    Ok(changes(&resp.changes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reconfigure_takes_no_arguments() {
        assert_eq!(parse(&[]), Ok(Command::Reconfigure));
        assert_eq!(parse(&["now".into()]).unwrap_err(), "reconfigure: unexpected argument 'now'");
        assert_eq!(changes(&["a".into(), "b".into()]), "a\nb\n");
        assert_eq!(changes(&[]), "");
    }
}
