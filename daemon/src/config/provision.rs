//! Loading provisioners.yaml (`[controller] provisioners_file`, or
//! `provisioners.yaml` beside spur.conf when present). The parser and its
//! checks are the scheduler's (`spur_sched::provision`); here the file's
//! `softwareTokens` join `[licenses]` and its `scheduler` block fills
//! `[scheduler]`, each key set in only one of the two files.

use super::{Config, ConfigError, one_line};
use spur_sched::provision::{self, Provision};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// Each load gets a new generation, so verdicts cached for the last one are not reused.
static GENERATION: AtomicU64 = AtomicU64::new(1);

impl Config {
    /// Reads the provisioner definitions into `provision`; call before `load_resources`
    /// (its software tokens are licenses a resource may not reuse).
    pub fn load_provisioners(&mut self) -> Result<(), ConfigError> {
        let (path, must) = match &self.controller.provisioners_file {
            Some(f) => (self.base_dir.join(f), true),
            None => (self.base_dir.join("provisioners.yaml"), false),
        };
        let file = path.display().to_string();
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if !must && e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(err) => {
                return Err(ConfigError::Read { file: format!("controller.provisioners_file {file}"), err });
            }
        };
        let invalid = |msg: String| ConfigError::Invalid { file: file.clone(), msg: one_line(&msg) };
        let mut p = provision::parse(&text, GENERATION.fetch_add(1, Ordering::Relaxed)).map_err(invalid)?;
        for (name, count) in &p.software_tokens {
            if self.licenses.contains_key(name) {
                return Err(invalid(format!(
                    "key 'softwareTokens.{name}': also set as 'licenses.{name}' in {}; set it in one file",
                    self.conf_name()
                )));
            }
            self.licenses.insert(name.clone(), *count);
        }
        self.apply_scheduler_block(&p, &file)?;
        p.cluster = self.cluster_name.clone();
        if self.upstream.slurm.is_some() {
            p.drivers.push(provision::Backend::Slurm);
        }
        p.utc_offset_secs = chrono::Local::now().offset().local_minus_utc();
        self.provision = Some(Arc::new(p));
        Ok(())
    }

    /// spur.conf as errors name it.
    fn conf_name(&self) -> String {
        self.path.as_ref().map_or("spur.conf".into(), |p| p.display().to_string())
    }

    fn apply_scheduler_block(&mut self, p: &Provision, file: &str) -> Result<(), ConfigError> {
        let b = &p.scheduler;
        let s = &mut self.scheduler;
        let mut set: Vec<(&str, &str)> = vec![];
        macro_rules! take {
            ($yaml:literal, $toml:literal, $field:ident, $v:expr) => {
                if let Some(v) = &b.$field {
                    set.push(($yaml, $toml));
                    s.$field = $v(v);
                }
            };
        }
        take!("queueDepth", "queue_depth", queue_depth, |v: &u64| *v as usize);
        take!("backfillEnabled", "backfill_enabled", backfill_enabled, |v: &bool| *v);
        take!("preemptionEnabled", "preemption_enabled", preemption_enabled, |v: &bool| *v);
        take!("preemptionThreshold", "preemption_threshold", preemption_threshold, |v: &f64| *v);
        take!("preemptionGap", "preemption_gap", preemption_gap, |v: &f64| Some(*v));
        take!("minPreemptionRuntime", "min_preemption_runtime", min_preemption_runtime, Clone::clone);
        take!(
            "preemptionMultiVictimEnabled",
            "preemption_multi_victim_enabled",
            preemption_multi_victim_enabled,
            |v: &bool| *v
        );
        take!("maxEvictionsPerTick", "max_evictions_per_tick", max_evictions_per_tick, |v: &u32| *v);
        take!("preemptionDrainTimeout", "preemption_drain_timeout", preemption_drain_timeout, Clone::clone);
        let invalid = |msg: String| ConfigError::Invalid { file: file.to_string(), msg };
        if let Some(i) = &b.interval {
            set.push(("interval", "interval"));
            s.interval = i.secs().map_err(|e| invalid(format!("key 'scheduler.interval': {e}")))?;
        }
        let conf = self.conf_name();
        if let Some((yaml, toml)) = set.iter().find(|(_, toml)| self.scheduler_keys.contains(*toml)) {
            return Err(invalid(format!(
                "key 'scheduler.{yaml}': also set as 'scheduler.{toml}' in {conf}; set it in one file"
            )));
        }
        for (yaml, d) in [
            ("minPreemptionRuntime", &b.min_preemption_runtime),
            ("preemptionDrainTimeout", &b.preemption_drain_timeout),
        ] {
            if let Some(d) = d {
                d.secs().map_err(|e| invalid(format!("key 'scheduler.{yaml}': {e}")))?;
            }
        }
        self.scheduler
            .validate()
            .map_err(|e| invalid(format!("{e} (from provisioners.yaml's scheduler block)")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// spur.conf `conf` and provisioners.yaml `prov` in a temp dir, loaded.
    fn load(conf: &str, prov: Option<&str>) -> Result<Config, String> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("spur.conf");
        std::fs::write(&path, conf).unwrap();
        if let Some(p) = prov {
            std::fs::write(dir.path().join("provisioners.yaml"), p).unwrap();
        }
        Config::load(&path).map_err(|e| e.to_string())
    }

    const ONE: &str =
        "definitions:\n- id: a\n  provisioner: static\n  provisionerSpec: {condition: 'true'}\n";

    #[test]
    fn the_file_beside_spur_conf_is_loaded_when_present() {
        assert!(load("", None).unwrap().provision.is_none());
        let c = load("cluster_name = \"hpc\"\n", Some(ONE)).unwrap();
        let p = c.provision.unwrap();
        assert_eq!((p.defs.len(), p.cluster.as_str()), (1, "hpc"));
        let e = load("[controller]\nprovisioners_file = \"nope.yaml\"\n", None).unwrap_err();
        assert!(e.contains("controller.provisioners_file") && e.contains("nope.yaml"), "{e}");
        let e = load("", Some("definitions:\n- id: a\n  provisioner: static\n")).unwrap_err();
        assert!(e.contains("provisioners.yaml") && e.contains("'a'") && e.contains("provisionerSpec"), "{e}");
    }

    #[test]
    fn software_tokens_are_licenses_set_in_one_file() {
        let c = load("", Some("softwareTokens:\n  matlab: 20\n")).unwrap();
        assert_eq!(c.licenses.get("matlab"), Some(&20));
        let e = load("[licenses]\nmatlab = 4\n", Some("softwareTokens:\n  matlab: 20\n")).unwrap_err();
        assert!(e.contains("softwareTokens.matlab") && e.contains("licenses.matlab"), "{e}");
    }

    #[test]
    fn the_scheduler_block_fills_scheduler_and_a_key_in_both_is_an_error() {
        let block = "scheduler:\n  queueDepth: 128\n  interval: 30s\n  backfillEnabled: false\n  preemptionEnabled: true\n  minPreemptionRuntime: 5m\n  maxEvictionsPerTick: 3\n  internalJobReleaseEstimate: 10m\n";
        let c = load("", Some(block)).unwrap();
        let s = &c.scheduler;
        assert_eq!(
            (s.queue_depth, s.interval, s.backfill_enabled, s.preemption_enabled),
            (128, 30, false, true)
        );
        assert_eq!((s.min_preemption_runtime.secs().unwrap(), s.max_evictions_per_tick), (300, 3));
        let e = load("[scheduler]\nqueue_depth = 8\n", Some(block)).unwrap_err();
        assert!(
            e.contains("scheduler.queueDepth")
                && e.contains("scheduler.queue_depth")
                && e.contains("spur.conf"),
            "{e}"
        );
        let e = load("", Some("scheduler:\n  interval: soon\n")).unwrap_err();
        assert!(e.contains("scheduler.interval"), "{e}");
        let e = load("", Some("scheduler:\n  preemptionDrainTimeout: later\n")).unwrap_err();
        assert!(e.contains("scheduler.preemptionDrainTimeout"), "{e}");
        let e = load("", Some("scheduler:\n  queueDepthh: 1\n")).unwrap_err();
        assert!(e.contains("queueDepthh"), "{e}");
    }

    #[test]
    fn the_demo_provisioners_load() {
        let c = Config::load(std::path::Path::new("../examples/demo/spur.conf")).unwrap();
        let ids: Vec<String> = c.provision.unwrap().defs.iter().map(|d| d.id.clone()).collect();
        assert_eq!(ids, ["gpu-pool", "highmem", "standard", "ml-reserved", "cloud-c5.large"]);
    }
}
