//! Reservations end to end with the real binaries: a MAINT window starting
//! in three seconds on both nodes keeps a 10-minute job off them; a job that
//! names the reservation runs there once it starts; the nodes show MAINT in
//! the window; the create is audited; the window survives a restart; and
//! deleting it lets the waiting job start. Bad words are refused by name.

use spur_tests::cluster::Cluster;
use spur_tests::proc::wait_for;

#[test]
fn a_maintenance_window_keeps_long_jobs_off_and_lets_its_own_in() {
    let mut e = Cluster::two_nodes(|t| t, &[]);
    let made = e.ok(
        "scontrol",
        "create reservation ReservationName=maint StartTime=now+3 Duration=60 Nodes=node[01-02] Users=root Flags=MAINT",
    );
    assert_eq!(made, "Reservation maint created\n");
    let long = e.sbatch(&["-t", "10", "--wrap", "sleep 600"]);
    e.wait_field(long, "%r", "ReqNodeNotAvail, Reserved for maintenance");
    let shown = e.ok("scontrol", "show reservation maint");
    assert!(
        shown.contains("Nodes=node[01-02] NodeCnt=2") && shown.contains("Flags=MAINT,SPEC_NODES"),
        "{shown}"
    );
    assert!(shown.contains("Users=root") && shown.contains("Duration=01:00:00"), "{shown}");

    // Its own job waits for the window, then runs inside it.
    let inside = e.sbatch(&["-t", "5", "--reservation=maint", "--wrap", "true"]);
    assert_eq!(e.field(inside, "%v"), "maint");
    assert!(e.ok("scontrol", &format!("show job {inside}")).contains("Reservation=maint"));
    wait_for("the window to begin", || (e.ok("sinfo", "-h -o %t").trim() == "maint").then_some(()));
    assert!(
        e.ok("scontrol", "show node node01").contains("State=IDLE+MAINT+RESERVED")
            || e.field(inside, "%T") != "PENDING"
    );
    wait_for("the reservation's job to complete", || {
        (spur_tests::proc::sacct_state(&e.c.url, inside) == "COMPLETED").then_some(())
    });
    assert!(e.ok("sinfo", "-T").lines().any(|l| l.starts_with("maint") && l.contains("ACTIVE")));
    assert_eq!(e.field(long, "%T"), "PENDING");

    let txn = e.ok("sacctmgr", "-n -P show txn Entity=reservation format=Action,Where,Outcome");
    assert!(
        txn.lines().any(|l| l.starts_with("create|") && l.contains("maint") && l.ends_with("|success")),
        "{txn}"
    );

    // Stored: a restarted controller still keeps the long job off.
    e.c.restart();
    wait_for("the window after a restart", || {
        e.ok("scontrol", "show reservation").contains("ReservationName=maint").then_some(())
    });
    e.wait_field(long, "%r", "ReqNodeNotAvail, Reserved for maintenance");

    e.ok("scontrol", "delete ReservationName=maint");
    e.wait_field(long, "%T", "RUNNING");
    let txn = e.ok("sacctmgr", "-n -P show txn Entity=reservation format=Action,Where");
    assert!(txn.lines().any(|l| l.starts_with("delete|") && l.contains("maint")), "{txn}");
    assert_eq!(e.ok("scontrol", "show reservation"), "No reservations in the system\n");
    e.ok("scancel", &long.to_string());
}

#[test]
fn bad_reservations_are_refused_naming_the_key() {
    let e = Cluster::two_nodes(|t| t.set("licenses", "matlab", 4), &[]);
    let cases: &[(&[&str], &str)] = &[
        (
            &["create", "reservation", "StartTime=now", "Duration=5", "Nodes=node09", "Users=root"],
            "no node named 'node09'",
        ),
        (&["create", "reservation", "StartTime=now", "Duration=5", "Nodes=node01"], "Users"),
        (&["create", "reservation", "StartTime=now", "Duration=5", "NodeCnt=3", "Users=root"], "NodeCnt"),
        (
            &["create", "reservation", "StartTime=soon", "Duration=5", "Nodes=node01", "Users=root"],
            "StartTime",
        ),
        (
            &[
                "create",
                "reservation",
                "StartTime=now",
                "Duration=5",
                "Nodes=node01",
                "Users=root",
                "Flags=MAGNETIC",
            ],
            "MAGNETIC",
        ),
        (&["update", "ReservationName=nosuch", "Nodes+=node01"], "no reservation named 'nosuch'"),
        (&["delete", "ReservationName=nosuch"], "no reservation named 'nosuch'"),
    ];
    for (args, want) in cases {
        let err = e.fails("scontrol", args);
        assert!(err.contains(want), "{args:?}: {err}");
    }
    e.ok(
        "scontrol",
        "create reservation ReservationName=a StartTime=now Duration=5 Nodes=node01 Users=alice Licenses=matlab:3",
    );
    let lic = e.ok("scontrol", "show license matlab");
    assert!(lic.contains("Total=4 Used=0 Free=1 Reserved=3"), "{lic}");
    let over = e.fails(
        "scontrol",
        &[
            "create",
            "reservation",
            "StartTime=now",
            "Duration=5",
            "Nodes=node02",
            "Users=x",
            "Licenses=matlab:2",
        ],
    );
    assert!(over.contains("Licenses: matlab:2 asked; 4 configured, 3 held"), "{over}");
    let clash = e.fails(
        "scontrol",
        &[
            "create",
            "reservation",
            "ReservationName=b",
            "StartTime=now",
            "Duration=5",
            "Nodes=node01",
            "Users=bob",
        ],
    );
    assert!(clash.contains("is in reservation a"), "{clash}");
    // Root may use any reservation; another user only one that names them.
    e.ok("sacctmgr", "-i add user name=bob account=ml");
    let as_bob = spur_tests::proc::run_with(
        "sbatch",
        &e.c.url,
        &["-D", &e.dir.path().display().to_string(), "--reservation=a", "--wrap", "true"],
        &[("USER", "bob")],
    );
    let refused = String::from_utf8_lossy(&as_bob.stderr);
    assert!(
        !as_bob.status.success()
            && refused.contains("Requested reservation is invalid")
            && refused.contains("bob"),
        "{refused}"
    );
    e.sbatch(&["--reservation=a", "--wrap", "true"]);
    let gone = e.fails("sbatch", &["--reservation=zzz", "--wrap", "true"]);
    assert!(gone.contains("no reservation named 'zzz'"), "{gone}");
}

/// Two nodes' worth of hierarchical resources: `flat` (Mode 2) and two Mode 3 trees.
const HRES: &str = r#"---
- resource: flat
  mode: MODE_2
  layers:
    - layer_name: top
      nodes: ["node[01-02]"]
      count: 8
    - layer_name: low1
      nodes: ["node01"]
      count: 4
- resource: power
  mode: MODE_3
  layers:
    - layer_name: rack1
      parent_name: row
      nodes: ["node01"]
      count: 100
    - layer_name: rack2
      parent_name: row
      nodes: ["node02"]
      count: 100
    - layer_name: row
      count: 150
- resource: cooling
  mode: MODE_3
  layers:
    - layer_name: c1
      parent_name: croot
      nodes: ["node01"]
      count: 10
    - layer_name: c2
      parent_name: croot
      nodes: ["node02"]
      count: 10
    - layer_name: croot
      count: 20
"#;

#[test]
fn a_reservation_holds_a_layer_of_a_hierarchical_resource() {
    let e = Cluster::two_nodes(|t| t, &[("resources.yaml", HRES)]);
    let base = ["create", "reservation", "StartTime=now", "Duration=10", "Nodes=node01", "Users=alice"];
    let unnamed = e.fails("scontrol", &[&base[..], &["Licenses=flat:2"]].concat());
    assert!(
        unnamed.contains("Licenses: 'flat' is a hierarchical resource: name the layer held"),
        "{unnamed}"
    );
    let two = e.fails("scontrol", &[&base[..], &["Licenses=power(rack1):10,cooling(c1):1"]].concat());
    assert!(
        two.contains("Licenses: a reservation may hold only one Mode 3 resource; it names cooling and power"),
        "{two}"
    );
    // On node02, so root's jobs on node01 meet the hold and not the window.
    let made = [&base[..], &["ReservationName=h", "Licenses=flat(low1):3,power(rack1):40"]].concat();
    e.ok("scontrol", &made.join(" ").replace("Nodes=node01", "Nodes=node02"));
    let flat = e.ok("scontrol", "show license flat");
    let low1 = flat.split("LicenseName=").find(|s| s.contains("LayerName=low1")).unwrap();
    assert!(low1.contains("Total=4 Used=0 Free=1 Reserved=3"), "{flat}");
    let power = e.ok("scontrol", "show license power");
    let row = power.split("LicenseName=").find(|s| s.contains("LayerName=row ")).unwrap();
    assert!(row.contains("Reserved=40"), "a Mode 3 hold counts on the layers above: {power}");

    // Root not naming the reservation: kept to what the hold leaves.
    let held = e.sbatch(&["-L", "flat:2", "-w", "node01", "--wrap", "sleep 300"]);
    e.wait_field(held, "%r", "Licenses");
    let shown = e.ok("scontrol", &format!("show job {held}"));
    assert!(shown.contains("reservation h holds 3 on layer low1"), "{shown}");
    let fits = e.sbatch(&["-L", "flat:1", "-w", "node01", "--wrap", "sleep 300"]);
    e.wait_field(fits, "%T", "RUNNING");
    e.ok("scontrol", "delete ReservationName=h");
    e.ok("scancel", &fits.to_string());
    e.wait_field(held, "%T", "RUNNING");
    e.ok("scancel", &held.to_string());
}
