//! Licences that admin reservations hold for their windows, inside a pass:
//! plain ones are a count kept from the job's free figure; hierarchical
//! ones are charged on the layer counters while the job is tried, so every
//! layer rule (Mode 3's sums included) sees them. Either way a job kept
//! short by a hold pends with `Licenses`, naming the reservation.

use super::job::Job;
use super::pass::Picked;
use super::pass_state::Pass;
use super::reason::{Facts, Reason, ReasonCode as C};

impl<'a> Pass<'a> {
    /// Placement with the hierarchical holds of the reservations the job may
    /// not use (and whose windows its run would reach) taken from the counters.
    pub(super) fn place_with_holds(
        &mut self,
        job: &'a Job,
        sc: u32,
        p: u32,
        member: Option<u16>,
    ) -> Result<Picked, Reason> {
        let holds = match self.windows.any() && !job.licenses.is_empty() {
            true => self.windows.hres_holds(member, self.now, job.end_ms(self.now), &job.licenses),
            false => vec![],
        };
        if holds.is_empty() {
            return self.place_fit(job, sc, p, member);
        }
        // Reservations the job may not use keep their holds of hierarchical
        // resources from it: charged on the counters while it is tried.
        holds.iter().for_each(|(_, a)| self.licenses.take(std::slice::from_ref(a)));
        let tried = self.licenses.check(job).and_then(|()| self.place_fit(job, sc, p, member));
        holds.iter().for_each(|(_, a)| self.licenses.release(std::slice::from_ref(a)));
        tried.map_err(|r| {
            let name = match &r.facts {
                Facts::Hres { name, .. } if r.code == C::Licenses => name,
                _ => return r,
            };
            let Some((k, a)) = holds.iter().find(|(_, a)| a.name == *name) else { return r };
            let asks = job.licenses.iter().find(|(n, _)| n == name).map_or(0, |(_, c)| u64::from(*c));
            let facts = Facts::Held {
                name: name.clone(),
                layer: a.layers.first().map(|(l, _)| l.clone()),
                resv: self.windows.list[*k as usize].name.clone(),
                held: a.layers.first().map_or(0, |(_, n)| *n),
                asks,
            };
            Reason::new(C::Licenses, facts)
        })
    }

    /// Plain licences the reservations hold out from this job for its run.
    pub(super) fn held_licenses(&self, job: &Job, member: Option<u16>) -> Result<(), Reason> {
        if !self.windows.any() {
            return Ok(());
        }
        let end = job.end_ms(self.now);
        for (name, asks) in &job.licenses {
            let (held, Some(k)) = self.windows.held_licenses(name, member, self.now, end) else { continue };
            let Some(free) = self.licenses.plain_free(name) else { continue };
            if free.saturating_sub(held) < *asks {
                let facts = Facts::Held {
                    name: name.clone(),
                    layer: None,
                    resv: self.windows.list[k as usize].name.clone(),
                    held: u64::from(held),
                    asks: u64::from(*asks),
                };
                return Err(Reason::new(C::Licenses, facts));
            }
        }
        Ok(())
    }
}
