//! `D`: the delete the marked (else selected) rows ask for, or why they
//! cannot be deleted: nodes, jobs, txn rows, layers and provisioner
//! definitions are never deleted, and each says what to do instead.
//! Dispatch opens its confirmation.

use crate::model::action::Action;
use crate::model::state::State;
use crate::model::table::Target;
use crate::model::write::{NodeOp, WriteOp};

/// The delete the targets ask for, or why they cannot be deleted (together).
pub fn write_of(state: &State, targets: Vec<Target>) -> Result<WriteOp, String> {
    if targets.is_empty() {
        return Err(format!("{}: nothing to delete", state.pane.title()));
    }
    let synthetic = |n: &str| {
        state.accounting.data.as_ref().is_some_and(|d| d.qos.iter().any(|q| q.name == n && q.synthetic))
    };
    let (mut qos, mut accounts, mut assocs, mut resvs) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for t in targets {
        match t {
            Target::Qos(n) if synthetic(&n) => {
                return Err(format!("{n} is a placeholder and cannot be deleted"));
            }
            Target::Qos(n) => qos.push(n),
            Target::Account(n) if n == "root" => return Err("the root account cannot be deleted".into()),
            Target::Account(n) => accounts.push(n),
            Target::Assoc { user, account, .. } => assocs.push((user, account)),
            Target::Root => return Err("the root account cannot be deleted".into()),
            Target::Txn(_) => return Err("txn rows are the audit record; they cannot be deleted".into()),
            Target::Job(_) => return Err("jobs are cancelled, not deleted".into()),
            Target::Layer { .. } => {
                return Err(
                    "licenses and layers come from spur.conf and resources.yaml; they cannot be deleted"
                        .into(),
                );
            }
            Target::Provisioner(_) => {
                return Err(
                    "provisioner definitions come from provisioners.yaml; they cannot be deleted".into()
                );
            }
            Target::Reservation(n) => resvs.push(n),
            Target::Reason(_) => {
                return Err("pending reasons are the scheduler's; they cannot be deleted".into());
            }
            Target::Node(_) => {
                let km = &state.settings.keymap;
                let (drain, down) = (
                    km.keys_of(&Action::NodeAction(NodeOp::Drain)),
                    km.keys_of(&Action::NodeAction(NodeOp::Down)),
                );
                return Err(format!(
                    "nodes come from spur.conf and are not deleted; drain ({drain}) or down ({down}) them"
                ));
            }
        }
    }
    assocs.dedup();
    if !resvs.is_empty() {
        return Ok(WriteOp::DeleteReservations { names: resvs });
    }
    match (qos.is_empty(), accounts.is_empty(), assocs.is_empty()) {
        (false, true, true) => Ok(WriteOp::DeleteQos { names: qos }),
        (true, false, true) => Ok(WriteOp::DeleteAccount { names: accounts }),
        (true, true, false) => Ok(WriteOp::DeleteUser { assocs }),
        _ => Err("mark either accounts or users, not both, to delete them together".into()),
    }
}
