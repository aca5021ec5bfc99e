//! Every RPC path the controller serves, spelled once: the handlers pass
//! these to `Gate::run` and [`super::rpc`]'s classification table keys on
//! them, so a handler and its class cannot drift apart by a typo.
//! One module per gRPC service, one constant per method; a test checks that
//! the constants are exactly the RPCs of the `.proto` files.

macro_rules! service {
    ($(#[$doc:meta])* $module:ident = $service:literal { $($name:ident = $method:literal,)+ }) => {
        $(#[$doc])*
        pub mod $module {
            $(pub const $name: &str = concat!("/", $service, "/", $method);)+
            /// Every path of the service, for the completeness tests.
            #[cfg(test)]
            pub const ALL: &[&str] = &[$($name),+];
        }
    };
}

service!(accounting = "spur.v1.Accounting" {
    LIST_QOS = "ListQos",
    SET_QOS = "SetQos",
    DELETE_QOS = "DeleteQos",
    LIST_ACCOUNTS = "ListAccounts",
    SET_ACCOUNT = "SetAccount",
    DELETE_ACCOUNT = "DeleteAccount",
    LIST_USERS = "ListUsers",
    SET_USER = "SetUser",
    DELETE_USER = "DeleteUser",
    LIST_TRES = "ListTres",
});

service!(audit = "spur.v1.Audit" {
    LIST_TXN = "ListTxn",
    TAIL_TXN = "TailTxn",
});

service!(reservations = "spur.v1.Reservations" {
    CREATE_RESERVATION = "CreateReservation",
    UPDATE_RESERVATION = "UpdateReservation",
    DELETE_RESERVATION = "DeleteReservation",
    LIST_RESERVATIONS = "ListReservations",
});

service!(session = "spur.v1.Session" {
    WHO_AM_I = "WhoAmI",
});

service!(admission = "spur.v1.Admission" {
    CREATE_TOKEN = "CreateToken",
    LIST_TOKENS = "ListTokens",
    REVOKE_TOKEN = "RevokeToken",
});

service!(nodes = "spur.v1.Nodes" {
    LIST_NODES = "ListNodes",
    UPDATE_NODES = "UpdateNodes",
    LIST_PARTITIONS = "ListPartitions",
    UPDATE_PARTITION = "UpdatePartition",
    RECONFIGURE = "Reconfigure",
    LIST_PROVISIONERS = "ListProvisioners",
    CREATE_NODE = "CreateNode",
    DELETE_NODE = "DeleteNode",
});

service!(cluster = "spur.v1.Cluster" {
    WATCH = "Watch",
    SHOW_CONFIG = "ShowConfig",
    DIAG = "Diag",
    RESET_DIAG = "ResetDiag",
    TAKEOVER = "Takeover",
});

service!(licenses = "spur.v1.Licenses" {
    SHOW_LICENSES = "ShowLicenses",
    UPDATE_HRES = "UpdateHres",
});

service!(jobs = "spur.v1.Jobs" {
    SUBMIT = "Submit",
    TEST_SUBMIT = "TestSubmit",
    LIST_JOBS = "ListJobs",
    STREAM_JOBS = "StreamJobs",
    LIST_SHARES = "ListShares",
    EXPLAIN = "Explain",
    USAGE = "Usage",
    CANCEL = "Cancel",
    UPDATE_JOB = "UpdateJob",
});

service!(agent = "spur.v1.Agent" {
    REGISTER = "Register",
    HEARTBEAT = "Heartbeat",
    COMMANDS = "Commands",
    REPORT_JOB = "ReportJob",
    STEP_IO = "StepIo",
    REPORT_USE = "ReportUse",
    REPORT_BCAST = "ReportBcast",
    REPORT_OUTPUT = "ReportOutput",
});

service!(steps = "spur.v1.Steps" {
    RUN_STEP = "RunStep",
    SIGNAL_STEPS = "SignalSteps",
    STEP_STATS = "StepStats",
    BCAST = "Bcast",
    ATTACH = "Attach",
    TAIL_OUTPUT = "TailOutput",
});

service!(
    /// The standard health service (tonic-health).
    health = "grpc.health.v1.Health" {
        CHECK = "Check",
        WATCH = "Watch",
    }
);

service!(
    /// Server reflection (tonic-reflection), both protocol versions.
    reflection = "grpc.reflection.v1.ServerReflection" {
        INFO = "ServerReflectionInfo",
    }
);

service!(reflection_v1alpha = "grpc.reflection.v1alpha.ServerReflection" {
    INFO = "ServerReflectionInfo",
});

/// Every path above.
#[cfg(test)]
pub fn all() -> Vec<&'static str> {
    [
        accounting::ALL,
        audit::ALL,
        session::ALL,
        admission::ALL,
        nodes::ALL,
        cluster::ALL,
        licenses::ALL,
        reservations::ALL,
        jobs::ALL,
        agent::ALL,
        steps::ALL,
        health::ALL,
        reflection::ALL,
        reflection_v1alpha::ALL,
    ]
    .concat()
}
