//! Placing a job that passed its checks: the nodes it may use (its
//! reservation's, a pool class's, its partition's), the pick, the backfill
//! reservation of the highest job without room, and the start with what it
//! is charged. Part of the pass (`pass.rs`), split off for its size.

use super::*;

impl<'a> Pass<'a> {
    pub(super) fn place(
        &mut self,
        job: &'a Job,
        sc: usize,
        pi: usize,
        keep_off: &[u32],
        member: Option<u16>,
    ) -> Result<Vec<u32>, Reason> {
        let backfill = self.snap.config.backfill_enabled;
        let p: &'a Partition = self.parts[pi].p;
        let pname = p.name.as_str();
        if let Some(b) = self.parts[pi].blocked_by.filter(|_| !backfill) {
            return Err(Reason::new(C::Priority, Facts::BlockedBehind { partition: pname.into(), job: b }));
        }
        if self.behind_reservation {
            let depth = self.snap.config.queue_depth;
            if self.attempts >= depth {
                return Err(Reason::new(C::Priority, Facts::QueueDepth { depth }));
            }
            self.attempts += 1;
        }
        let class = self.pool_class(job, pi)?;
        let (mut required, mut missing) = (Vec::new(), Vec::new());
        for n in &job.nodelist {
            match self.node_idx.get(n.as_str()).copied() {
                Some(i) if self.part_nodes(pi, class).member[i as usize] && self.nodes[i as usize].up => {
                    required.push(i)
                }
                _ => missing.push(n.clone()),
            }
        }
        if !missing.is_empty() {
            let facts = Facts::NodesUnavailable { partition: pname.into(), nodes: missing };
            return Err(Reason::new(C::ReqNodeNotAvail, facts));
        }
        required.sort_unstable();
        required.dedup();
        let mut excluded: Vec<u32> = self.indexes(&job.exclude);
        excluded.extend(keep_off);
        if !job.constraint.is_empty() {
            let lacking = self.parts[pi].nodes.order.iter().copied();
            excluded
                .extend(lacking.filter(|&i| !job.constraint.holds(&self.snap.nodes[i as usize].features)));
        }
        if !job.needs.is_empty() {
            let lacking = self.parts[pi].nodes.order.iter().copied();
            excluded
                .extend(lacking.filter(|&i| !job.needs.fits(self.snap.nodes[i as usize].facts.as_deref())));
        }
        excluded.sort_unstable();
        excluded.dedup();
        if !job.licenses.is_empty() {
            let candidates = &self.parts[pi].nodes.order;
            self.licenses.exclude(job, candidates, &required, &mut excluded, job.nodes() as usize)?;
        }
        // A loan may not use nodes a reservation holds, even before it begins.
        let end_ms = if self.lending { i64::MAX } else { job.end_ms(self.now) };
        let shape = self.class_shape(job, class);
        let need = shape.nodes as usize;
        // Groups whose distinct-node cap could be crossed by this job's nodes
        // (a loan lifts the QOS's own).
        let lifted = |g: u32| self.lending && self.scopes.groups[g as usize].kind == GroupKind::Qos;
        let tight: Vec<(u32, u64)> = (self.scopes.list[sc].groups.iter())
            .filter(|&&g| !lifted(g))
            .filter_map(|&g| {
                self.scopes.groups[g as usize].node_allowance().filter(|a| *a < need as u64).map(|a| (g, a))
            })
            .collect();
        let simple = required.is_empty() && tight.is_empty() && !self.held && member.is_none();
        // A reservation's jobs of one shape: once one found no room in it, the rest find none (room only shrinks).
        if let Some(r) =
            member.and_then(|k| self.member_fail.get(&(k, shape))).filter(|_| required.is_empty())
        {
            return Err(r.clone());
        }
        if simple && let Some(by) = self.failures(pi, class).recall(&shape, end_ms) {
            return Err(match by {
                Blocker::NoRoom => Reason::new(C::Resources, self.no_room_facts(pi, &shape, None)),
                Blocker::Reserved(j) => self.reserved_reason(Some(j)),
                Blocker::Window(k) => self.window_reason(k),
            });
        }
        self.marks.next_job();
        let span = end_ms.saturating_sub(self.now);
        let windows = &self.windows;
        let want = Want { job: job.id, shape, end_ms, excluded: &excluded, member, span, windows };
        let mut pick = Pick::default();
        pick.listed(&self.nodes, &required, &want, need, &mut self.marks);
        if pick.nodes.len() < required.len() {
            return Err(match (pick.window, pick.listed_busy) {
                (Some(k), _) => self.window_reason(k),
                (None, true) => self.no_room(job, pi, class, &shape, &required, &excluded),
                (None, false) => self.reserved_reason(pick.reserved_by),
            });
        }
        if !tight.is_empty() {
            let cacheable = required.is_empty() && excluded.is_empty();
            let key = (pi, tight.iter().map(|t| t.0).collect::<Vec<u32>>());
            let occupied: usize =
                tight.iter().map(|(g, _)| self.scopes.groups[*g as usize].occupied.len()).sum();
            if let Some(r) = self.node_fail.recall(&key, &shape, occupied).filter(|_| cacheable) {
                return Err(r.clone());
            }
            // Pack onto nodes the groups already occupy, as an additive nodelist,
            // then allow only as many new nodes as every cap still has room for.
            let preferred = self.preferred(pi, &tight, &excluded);
            pick.listed(&self.nodes, &preferred, &want, need, &mut self.marks);
            let remaining = need.saturating_sub(pick.nodes.len()) as u64;
            for &(g, allowance) in &tight {
                let group = &self.scopes.groups[g as usize];
                let new = pick.nodes.iter().filter(|n| !group.occupies(**n)).count() as u64 + remaining;
                if new > allowance {
                    let reason = group.node_reason(new);
                    if cacheable {
                        self.node_fail.remember(key, shape, occupied, reason.clone());
                    }
                    return Err(reason);
                }
            }
        }
        // Every window still to come in the partition would keep this job out
        // (it ends after their latest start): scan the nodes without one and
        // count those with one once per shape, as the scan would have.
        let soon = self.parts[pi].soon.as_mut().filter(|s| simple && class.is_none() && end_ms > s.latest);
        match (member, soon) {
            // A job in a reservation looks only at its nodes (of the partition, not excluded).
            (Some(k), _) => {
                let part_nodes =
                    class.map_or(&self.parts[pi].nodes, |c| &self.pools.classes[c as usize].nodes);
                let mine: Vec<u32> = (windows.nodes_of(k).iter().copied())
                    .filter(|&i| part_nodes.member[i as usize] && excluded.binary_search(&i).is_err())
                    .collect();
                pick.listed(&self.nodes, &mine, &want, need, &mut self.marks);
            }
            (None, Some(soon)) if excluded.is_empty() => {
                pick.scan(&self.nodes, &mut soon.plain, &want, need, &mut self.marks);
                if pick.nodes.len() < need {
                    let fit = self.soon_fit(pi, &shape);
                    pick.in_window += fit.nodes;
                    pick.window = pick.window.or(fit.first.map(|(_, k)| k));
                    pick.lo = pick.lo.max(fit.latest);
                }
            }
            (None, _) => {
                let part_nodes = match class {
                    Some(c) => &mut self.pools.classes[c as usize].nodes,
                    None => &mut self.parts[pi].nodes,
                };
                pick.scan(&self.nodes, part_nodes, &want, need, &mut self.marks)
            }
        }
        if pick.nodes.len() >= need {
            return Ok(pick.nodes);
        }
        if member.is_none() && self.windows.any() && pick.nodes.len() + pick.reserved + pick.in_window < need
        {
            // Scans skip nodes in a window now: count those that would take the job.
            let (n, k) = self.walled_fit(pi, class, &shape);
            pick.in_window += n;
            pick.window = pick.window.or(k);
        }
        if let Some(k) = pick.window.filter(|_| pick.nodes.len() + pick.reserved + pick.in_window >= need) {
            // Room, but in a window this job may not use: a reservation, not resources, keeps it.
            if simple && excluded.is_empty() {
                self.failures(pi, class).remember(shape, end_ms, pick.lo, Blocker::Window(k));
            }
            return Err(self.window_reason(k));
        }
        let only_reserved = pick.nodes.len() + pick.reserved >= need;
        // Not remembered when borrowed nodes expired for it: a shorter job of its shape may fit.
        if simple && excluded.is_empty() && pick.expired == 0 {
            let by = match pick.reserved_by.filter(|_| only_reserved) {
                Some(j) => Blocker::Reserved(j),
                None => Blocker::NoRoom,
            };
            self.failures(pi, class).remember(shape, end_ms, pick.lo, by);
        }
        let reason = match only_reserved {
            true => self.reserved_reason(pick.reserved_by),
            false => self.no_room(job, pi, class, &shape, &required, &excluded),
        };
        if let Some(k) = member.filter(|_| required.is_empty() && excluded.is_empty()) {
            self.member_fail.insert((k, shape), reason.clone());
        }
        Err(reason)
    }

    /// The groups' occupied nodes in this partition, those shared by most tight groups first.
    pub(super) fn preferred(&self, pi: usize, tight: &[(u32, u64)], excluded: &[u32]) -> Vec<u32> {
        let groups = &self.scopes.groups;
        let member = &self.parts[pi].nodes.member;
        let mut cand: Vec<u32> =
            (tight.iter().flat_map(|(g, _)| groups[*g as usize].occupied.keys().copied()))
                .filter(|n| member[*n as usize] && excluded.binary_search(n).is_err())
                .collect();
        cand.sort_unstable();
        cand.dedup();
        // With one tight group every candidate is its own; with more, prefer shared nodes.
        let misses = |n: u32| match tight.len() {
            1 => 0,
            _ => tight.iter().filter(|(g, _)| !groups[*g as usize].occupies(n)).count(),
        };
        let mut keyed: Vec<(usize, u32, u32)> =
            cand.into_iter().map(|n| (misses(n), self.nodes[n as usize].weight, n)).collect();
        keyed.sort_unstable();
        keyed.into_iter().map(|k| k.2).collect()
    }

    /// Snapshot indexes of named nodes; unknown names are left out.
    pub(crate) fn indexes(&self, names: &[String]) -> Vec<u32> {
        names.iter().filter_map(|n| self.node_idx.get(n.as_str()).copied()).collect()
    }

    pub(super) fn reserved_reason(&self, by: Option<JobId>) -> Reason {
        let job = by.unwrap_or(0);
        let (start, partition) = self.resv.get(&job).copied().unwrap_or((None, ""));
        if !self.snap.config.backfill_enabled {
            return Reason::new(C::Priority, Facts::BlockedBehind { partition: partition.into(), job });
        }
        let start_ms = start.unwrap_or(self.now);
        Reason::new(
            C::Priority,
            Facts::Reserved { job, start_ms, start_in_s: secs(start_ms.saturating_sub(self.now)) },
        )
    }

    /// No room now. The partition's first such job reserves the nodes it fits on earliest.
    pub(super) fn no_room(
        &mut self,
        job: &Job,
        pi: usize,
        class: Option<u32>,
        shape: &Shape,
        required: &[u32],
        excluded: &[u32],
    ) -> Reason {
        let (backfill, now) = (self.snap.config.backfill_enabled, self.now);
        let mut start = None;
        if self.lending {
            // A loan that cannot start now holds no future slot.
            return Reason::new(C::Resources, self.no_room_facts(pi, shape, None));
        }
        if !self.parts[pi].reserved && self.parts[pi].reserve_tries < RESERVE_TRIES {
            self.parts[pi].reserve_tries += 1;
            let part = &self.parts[pi];
            let p: &'a Partition = part.p;
            let pname = p.name.as_str();
            let member = self.member_of(job).ok().flatten();
            let span = job.end_ms(now).saturating_sub(now);
            let windows = &self.windows;
            let want = Want { job: job.id, shape: *shape, end_ms: i64::MAX, excluded, member, span, windows };
            let pool = class.map_or(&part.nodes, |c| &self.pools.classes[c as usize].nodes);
            if let Some((t, nodes)) = earliest_start(&self.nodes, pool, &self.allocs, &want, required, now) {
                start = Some(t);
                for &n in &nodes {
                    let node = &mut self.nodes[n as usize];
                    if t < node.reserved_from {
                        (node.reserved_from, node.reserved_by) = (t, job.id);
                    }
                }
                let names = nodes.iter().map(|n| self.snap.nodes[*n as usize].name.clone()).collect();
                let r = Reservation { job: job.id, partition: p.name.clone(), start_ms: t, nodes: names };
                self.plan.reservations.push(r);
                self.parts[pi].reserved = true;
                self.behind_reservation = true;
            }
            self.resv.entry(job.id).or_insert((start, pname));
        }
        if !backfill && self.parts[pi].blocked_by.is_none() {
            // Strict order: nothing lower may use this partition's nodes this pass.
            self.parts[pi].blocked_by = Some(job.id);
            self.resv.entry(job.id).or_insert((start, self.parts[pi].p.name.as_str()));
            for &n in &self.parts[pi].nodes.order {
                let node = &mut self.nodes[n as usize];
                (node.reserved_from, node.reserved_by) = (i64::MIN, job.id);
            }
            self.behind_reservation = true;
        }
        Reason::new(C::Resources, self.no_room_facts(pi, shape, start))
    }

    pub(super) fn no_room_facts(&self, pi: usize, shape: &Shape, start: Option<i64>) -> Facts {
        Facts::Resources {
            partition: self.parts[pi].p.name.clone(),
            ask: Box::new(*shape),
            start_ms: start,
            start_in_s: start.map(|t| secs(t.saturating_sub(self.now))),
        }
    }

    pub(crate) fn start(
        &mut self,
        job: &'a Job,
        sc: u32,
        picked: Vec<u32>,
        lic: Vec<LicenseAlloc>,
        pf: PriorityFactors,
        borrowed: bool,
    ) {
        if let DepGate::Singleton(key) = &job.dep {
            self.singletons.insert(key);
        }
        let shape = Pass::shape_on(&self.nodes, &picked, job);
        for &n in &picked {
            let before = (!self.soon_fit.is_empty()).then(|| self.nodes[n as usize].clone());
            self.nodes[n as usize].take(&shape);
            if let Some(before) = before {
                self.soon_taken(n, &before);
            }
        }
        if picked.iter().any(|&n| self.nodes[n as usize].walled) {
            self.walled_fit.clear();
        }
        let ask = job.tres();
        if borrowed {
            *self.loans.entry(job.qos.as_deref().unwrap_or("")).or_insert(0) += picked.len() as u64;
        } else {
            for &g in &self.scopes.list[sc as usize].groups {
                self.scopes.groups[g as usize].add(&ask, &picked);
            }
        }
        self.licenses.take(&lic);
        let nodes = picked.iter().map(|n| self.snap.nodes[*n as usize].name.clone()).collect();
        let configuring = picked.iter().any(|&n| self.nodes[n as usize].booting);
        let charge = self.charge(&picked, &shape);
        self.allocs.push(Alloc { nodes: picked, shape, end_ms: job.end_ms(self.now) });
        let backfilled = self.behind_reservation;
        self.plan.starts.push(Start {
            job: job.id,
            nodes,
            borrowed,
            backfilled,
            priority: pf,
            licenses: lic,
            configuring,
            charge,
        });
    }

    /// What a start on `picked` is charged per hour on its borrowed nodes.
    pub(super) fn charge(&self, picked: &[u32], shape: &Shape) -> Vec<(String, f64)> {
        let Some(p) = self.snap.provision.as_deref() else { return vec![] };
        let borrowed = picked.iter().filter(|&&n| self.nodes[n as usize].expires < i64::MAX);
        let on = borrowed.map(|&n| {
            let s = &self.snap.nodes[n as usize];
            (s.cpus, s.definitions.first().copied(), shape.exclusive)
        });
        crate::demand::charge(p, shape.cpus, on)
    }
}
