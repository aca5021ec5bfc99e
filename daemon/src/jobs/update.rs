//! scontrol update job / hold / release / requeue. The new record is
//! computed from the current one under the job's transition lock, so an
//! update never writes back a copy older than a cancel that beat it.

use super::JobService;
use super::bounds::{self, Bounds};
use super::effect::{Effect, Effects};
use super::extras::Extras;
use super::queue::{Queue, owns};
use super::record::JobRecord;
use crate::accounting::Caller;
use crate::auth::Role;
use crate::error::{Error, Result};
use crate::model::Partition;
use spur_vocab::{Hold, JobState};

/// `set` applied to `j` by `caller` with `role`, or why it cannot be. The
/// keys' own checks only: what the new record is then held to is [`bounds`].
pub(crate) fn updated(
    j: &JobRecord,
    role: Role,
    caller: &Caller,
    set: &[(String, String)],
    partitions: &[Partition],
) -> Result<JobRecord> {
    let mut next = j.clone();
    for (k, v) in set {
        match k.to_ascii_lowercase().as_str() {
            "timelimit" => {
                next.time_limit = spur_vocab::TimeLimit::parse(v).map_err(|m| Error::invalid(k, m))?.minutes()
            }
            "priority" => {
                if role < Role::Operator {
                    return Err(Error::PermissionDenied("Priority= needs the Operator role".into()));
                }
                next.priority =
                    Some(v.parse().map_err(|_| Error::invalid(k, format!("'{v}' is not a whole number")))?);
            }
            // Names as a submit stores them; checked as a submit's by `bounds::resubmit`.
            "qos" | "account" if v.trim().is_empty() => return Err(Error::invalid(k, "needs a name")),
            "qos" => next.qos = Some(v.trim().to_ascii_lowercase()),
            "account" => next.account = Some(v.trim().to_ascii_lowercase()),
            "partition" => {
                if !partitions.iter().any(|p| p.name == *v) {
                    return Err(Error::invalid(k, format!("partition '{v}' does not exist")));
                }
                next.partition = v.clone();
            }
            "action" => match v.as_str() {
                "hold" => {
                    next.hold =
                        if role >= Role::Operator && caller.user != j.user { Hold::Admin } else { Hold::User }
                }
                "release" => {
                    if next.hold == Hold::Admin && role < Role::Operator {
                        return Err(Error::PermissionDenied(
                            "an admin hold is released by an Operator".into(),
                        ));
                    }
                    next.hold = Hold::None;
                    next.plugin_hold = None;
                }
                _ => return Err(Error::invalid("action", format!("'{v}' is not hold, release or requeue"))),
            },
            key @ ("dependency" | "begintime" | "starttime" | "nice" | "features" | "mailtype"
            | "mailuser" | "wckey") => {
                set_extra(&mut next, key, v, role).map_err(|m| Error::invalid(k, m))?
            }
            "comment" => next.comment = v.clone(),
            "arraytaskthrottle" => match next.array.as_mut().filter(|a| a.task.is_none()) {
                Some(a) => {
                    a.throttle =
                        v.parse().map_err(|_| Error::invalid(k, format!("'{v}' is not a whole number")))?
                }
                None => return Err(Error::invalid(k, format!("job {} holds no pending array tasks", j.id))),
            },
            _ => {
                return Err(Error::invalid(
                    k,
                    "unknown key (use TimeLimit, Priority, QOS, Account, Partition, Dependency, BeginTime, \
                     Nice, Features, MailType, MailUser, WCKey, Comment or ArrayTaskThrottle)",
                ));
            }
        }
    }
    if next.extra.as_deref().is_some_and(|x| *x == Extras::default()) {
        next.extra = None;
    }
    bounds::only_pending(j, &next)?;
    Ok(next)
}

/// One of the options kept in [`Extras`]; `v` empty clears it (but a
/// MailUser is an address, and an empty one is refused).
fn set_extra(next: &mut JobRecord, key: &str, v: &str, role: Role) -> std::result::Result<(), String> {
    let pending = next.state == JobState::Pending;
    let x = next.extra.get_or_insert_with(Box::default);
    match key {
        "dependency" => {
            if !pending {
                return Err("only a pending job's dependency can change".into());
            }
            x.dependency = spur_vocab::depend::Dependency::parse(v)?.to_string();
        }
        "begintime" | "starttime" => {
            if !pending {
                return Err("only a pending job's begin time can change".into());
            }
            // The CLI sends Unix ms (it reads the date forms in the submitter's time zone).
            x.begin_ms = v.parse::<i64>().map_err(|_| format!("'{v}' is not a time"))?.max(0);
        }
        "nice" => {
            let n = v.parse::<i32>().map_err(|_| format!("'{v}' is not a whole number"))?;
            if n < x.nice && role < Role::Operator {
                return Err("lowering a job's nice value needs the Operator role".into());
            }
            x.nice = n;
        }
        "features" => {
            if !pending {
                return Err("only a pending job's features can change".into());
            }
            x.constraint = spur_vocab::constraint::Constraint::parse(v)?.to_string();
        }
        "mailtype" => x.mail_type = v.to_ascii_uppercase(),
        "mailuser" => x.mail_user = spur_vocab::mail::check_user(v)?.to_string(),
        _ => x.wckey = v.to_string(),
    }
    Ok(())
}

impl Queue {
    /// scontrol update job / hold / release of `id` by `caller`: the record
    /// to become, or why not (an ended job is Slurm's ESLURM_JOB_FINISHED).
    /// `at` is what the new record is held to, read by the caller.
    pub fn update(
        &self,
        role: Role,
        caller: &Caller,
        id: u64,
        set: &[(String, String)],
        at: &Bounds,
    ) -> Result<Effects> {
        let j = self.get(id)?;
        owns(role, caller, j)?;
        if !j.is_active() {
            return Err(Error::FailedPrecondition(format!(
                "Job/step already completing or completed (job {id} is {})",
                j.state
            )));
        }
        let mut next = updated(j, role, caller, set, at.partitions)?;
        bounds::resubmit(j, &mut next, at, self.counts())?;
        bounds::time_limit(j, &next, role, at)?;
        if let Some(x) =
            next.extra.as_deref().filter(|x| j.extra.as_deref().is_none_or(|o| o.dependency != x.dependency))
        {
            self.dependencies_known(&x.dependency())?;
        }
        Ok(Effect::Persist(next).into())
    }

    /// scontrol requeue of `id` by `caller`: its run is stopped and the job
    /// waits again, its spec intact.
    pub fn requeue_request(&self, role: Role, caller: &Caller, id: u64, now: i64) -> Result<Effects> {
        let j = self.get(id)?;
        owns(role, caller, j)?;
        if !j.is_placed() {
            return Err(Error::FailedPrecondition(format!("job {id} is not running")));
        }
        Ok(self.requeue(id, true, now))
    }
}

impl JobService {
    /// scontrol update job / hold / release / requeue.
    pub async fn update(&self, role: Role, caller: &Caller, id: u64, set: &[(String, String)]) -> Result<()> {
        // The request's row (the Note jobs_api returns) commits with the job.
        crate::audit::claim::take(&id.to_string(), crate::store::Action::Update, serde_json::json!({}));
        // Requeue is a transition of its own; the request's other keys are not applied with it.
        if set.iter().any(|(k, v)| k.eq_ignore_ascii_case("action") && v == "requeue") {
            self.transit(&[id], |q| q.requeue_request(role, caller, id, crate::store::now_ms())).await?;
            self.revalidate(Some(&[id]), "requeue").await;
            return Ok(());
        }
        let parts = self.nodes.partitions();
        let catalog = self.acct.catalog();
        let at = Bounds { partitions: &parts, catalog: &catalog, policy: &self.policy };
        self.transit(&[id], |q| {
            let fx = q.update(role, caller, id, set, &at)?;
            self.fits(q, &fx, at.partitions)?;
            Ok(fx)
        })
        .await?;
        Ok(())
    }

    /// A pending job given a new partition or features must be one some
    /// node set of its partition could ever run, as at submit. Checked in the
    /// executor's closure, outside the pure `Queue::update`: the nodes are not
    /// the queue's (the queue's lock is taken before the nodes', as the
    /// install takes them).
    fn fits(&self, q: &Queue, fx: &Effects, parts: &[Partition]) -> Result<()> {
        for new in fx.records().filter(|n| n.state == JobState::Pending) {
            let Some(old) = q.jobs().get(&new.id) else { continue };
            let features = |j: &JobRecord| j.extra.as_ref().map(|x| x.constraint.clone()).unwrap_or_default();
            if new.partition == old.partition && features(new) == features(old) {
                continue;
            }
            if let Some(p) = parts.iter().find(|p| p.name == new.partition) {
                self.admissible(new, p)?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(state: JobState) -> JobRecord {
        JobRecord { id: 7, user: "alice".into(), partition: "batch".into(), state, ..Default::default() }
    }

    fn parts() -> Vec<Partition> {
        super::super::tests::At::default().parts
    }

    fn set(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    fn who(user: &str) -> Caller {
        Caller { user: user.into(), ..Caller::default() }
    }

    #[test]
    fn keys_change_the_copy_of_the_current_record() {
        let j = job(JobState::Pending);
        let n = updated(
            &j,
            Role::None,
            &who("alice"),
            &set(&[("TimeLimit", "1:00:00"), ("QOS", "High")]),
            &parts(),
        )
        .unwrap();
        assert_eq!((n.time_limit, n.qos.as_deref()), (Some(60), Some("high")));
        let n =
            updated(&n, Role::None, &who("alice"), &set(&[("timelimit", "UNLIMITED")]), &parts()).unwrap();
        assert_eq!(n.time_limit, None);
        assert_eq!(n.state, JobState::Pending);
    }

    #[test]
    fn roles_holds_and_bad_keys() {
        let j = job(JobState::Pending);
        let e = updated(&j, Role::None, &who("alice"), &set(&[("Priority", "5")]), &parts()).unwrap_err();
        assert!(matches!(e, Error::PermissionDenied(_)), "{e}");
        let held = updated(&j, Role::Operator, &who("ops"), &set(&[("action", "hold")]), &parts()).unwrap();
        assert_eq!(held.hold, Hold::Admin);
        let e =
            updated(&held, Role::None, &who("alice"), &set(&[("action", "release")]), &parts()).unwrap_err();
        assert!(e.to_string().contains("Operator"), "{e}");
        assert_eq!(
            updated(&j, Role::None, &who("alice"), &set(&[("action", "hold")]), &parts()).unwrap().hold,
            Hold::User
        );
        let e = updated(&j, Role::None, &who("alice"), &set(&[("Colour", "red")]), &parts()).unwrap_err();
        assert!(e.to_string().starts_with("Colour:"), "{e}");
        let e = updated(&j, Role::None, &who("alice"), &set(&[("Partition", "nope")]), &parts()).unwrap_err();
        assert!(e.to_string().starts_with("Partition:"), "{e}");
    }

    #[test]
    fn a_running_job_keeps_its_partition() {
        let e = updated(
            &job(JobState::Running),
            Role::Administrator,
            &who("root"),
            &set(&[("Partition", "gpu")]),
            &parts(),
        );
        assert!(matches!(e, Err(Error::FailedPrecondition(_))));
        assert!(
            updated(
                &job(JobState::Pending),
                Role::None,
                &who("alice"),
                &set(&[("Partition", "gpu")]),
                &parts()
            )
            .is_ok()
        );
    }
}
