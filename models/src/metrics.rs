//! The names of the figures protocols report, shared by the models (which report them) and the
//! figures (which read them).
//!
//! A protocol reports two kinds: **observations**, samples a node gives the engine while the
//! run goes on (`Outbox::observe`; a summary row `obs.<name>.p50`, ...), and **final metrics**,
//! figures computed from the fixed nodes' last states (`Protocol::final_metrics`; a summary row
//! `pm.<name>`). Each protocol's catalogue entry lists the names it may report, and a test
//! checks every figure reads only names some protocol lists and every run reports only names
//! its protocol lists.

/// Declares each name as a constant and lists them all in [`ALL`].
macro_rules! metrics {
    ($($(#[$doc:meta])* $id:ident = $value:literal;)*) => {
        $($(#[$doc])* pub const $id: &str = $value;)*
        /// Every name, with the constant that holds it: `("VISIBILITY_NS", "visibility_ns")`.
        pub const ALL: &[(&str, &str)] = &[$((stringify!($id), $value)),*];
    };
}

metrics! {
    // Observations

    /// Bytes of the workflow context a function hands to the next (CausalMesh: its deps).
    CONTEXT_BYTES = "context_bytes";
    /// Bytes of metadata a CausalMesh client sends with a request.
    REQUEST_METADATA_BYTES = "request_metadata_bytes";
    /// Bytes a CausalMesh server holds in its I-cache after a step.
    ICACHE_BYTES = "icache_bytes";
    /// The same I-cache counted as the CausalMesh authors' artifact counts it: only each key's
    /// versions after its first, 12 B each plus 11 B per dependency.
    ICACHE_BYTES_AS_AUTHORS_COUNT = "icache_bytes_as_authors_count";
    /// Nanoseconds from a write's completion until a server (or cache) makes it visible.
    VISIBILITY_NS = "visibility_ns";
    /// Bytes of protocol metadata a workflow's last function starts with.
    METADATA_BYTES = "metadata_bytes";
    /// Bytes of protocol metadata passed from one function to the next.
    METADATA_BYTES_HOP = "metadata_bytes_hop";
    /// 1 when a function read only from its cache, else 0.
    FUNCTION_CACHE_ONLY = "function_cache_only";
    /// Storage rounds one read needed (0: served by the cache).
    STORAGE_ROUNDS_PER_READ = "storage_rounds_per_read";
    /// Bytes a read that went to storage moved there and back, payload and metadata, over all
    /// its rounds (FaaSTCC: its share of the batched request and reply; HydroCache: every fetch
    /// of its dependency chase).
    STORAGE_BYTES_PER_READ = "storage_bytes_per_read";
    /// Nanoseconds a workflow's commit took (two-phase commit).
    COMMIT_NS = "commit_ns";
    /// A FaaSTCC cache push that arrived after a gap in the push sequence.
    PUSH_GAPS = "push_gaps";
    /// FaaSTCC cache outcomes of one key read (Eq. 1's four cases).
    CACHE_HIT = "cache_hit";
    CACHE_MISS = "cache_miss";
    CACHE_STALE = "cache_stale";
    CACHE_REPLACED = "cache_replaced";
    /// HydroCache: dependency entries of a version the database stores.
    DEPENDENCY_ENTRIES = "dependency_entries";
    /// HydroCache: rounds of dependency fetches one refresh needed.
    REFRESH_ROUNDS = "refresh_rounds";
    /// HydroCache: a read of an attempt that was cleaned up, dropped.
    RETIRED_READS = "retired_reads";
    /// HydroCache: a read a cache forwarded to another cache.
    REMOTE_READS = "remote_reads";
    /// HydroCache: a read batch asked again because an earlier key needed a newer version.
    BATCH_REREADS = "batch_rereads";
    /// FaaSTCC and HydroCache with a bounded cache: an entry the LRU policy evicted.
    CACHE_EVICTIONS = "cache_evictions";
    /// HydroCache with dependency garbage collection: an attempt aborted because a version it
    /// read was pruned at a newer epoch than another read was served under.
    GC_EPOCH_ABORTS = "gc_epoch_aborts";
    /// HydroCache-Con: nanoseconds to gather and install a workflow's snapshot.
    CON_PREPARE_NS = "con_prepare_ns";
    /// Concord and its baselines: nanoseconds a read served by the function's own machine's
    /// cache took (a local hit; for Faa$T, after its version check).
    READ_LOCAL_NS = "read_local_ns";
    /// Concord and its baselines: nanoseconds a read served through the key's home took, the
    /// home having an entry or a copy (a remote hit, Concord §VI-B).
    READ_REMOTE_HIT_NS = "read_remote_hit_ns";
    /// Concord and its baselines: nanoseconds a read that had to go to storage took (a miss).
    READ_MISS_NS = "read_miss_ns";
    /// Concord: invalidations one write sent (0 for the owner's direct write; Fig. 9).
    INVALIDATIONS_PER_WRITE = "invalidations_per_write";
    /// Concord: squashes a committed transaction went through (observed when at least one).
    TXN_SQUASHES = "txn_squashes";
    /// MuCache: 1 when a call to a read-only endpoint was answered by the cache, else 0.
    CALL_CACHE_HIT = "call_cache_hit";
    /// MuCache: nanoseconds from a write taking effect until its invalidation reached a
    /// frontend's CM (Fig. 19's invalidation time).
    INVALIDATION_NS = "invalidation_ns";
    /// MuCache: per cache hit, 1 when the entry's subtree visited a service the request had
    /// already visited (Fig. 4's hazard, which visited sets refuse), else 0.
    REVISIT_HIT = "revisit_hit";
    /// Boki: nanoseconds a log read took that the function's own engine answered from its
    /// index and record cache (Table 5's cache hit).
    LOG_READ_HIT_NS = "log_read_hit_ns";
    /// Boki: nanoseconds a log read took that the own engine's index answered with a record
    /// fetched from a storage node (Table 5's cache miss).
    LOG_READ_MISS_NS = "log_read_miss_ns";
    /// Boki: nanoseconds a log read took that another engine's index answered (Table 5's
    /// remote engine).
    LOG_READ_REMOTE_NS = "log_read_remote_ns";

    // Final metrics

    /// CausalMesh: bytes of metadata the servers hold at the end (C-cache and I-cache).
    METADATA_BYTES_FINAL = "metadata_bytes_final";
    /// CausalMesh: versions in the servers' I-caches at the end.
    ICACHE_VERSIONS_FINAL = "icache_versions_final";
    /// Keys cached at the end, over all caches.
    CACHE_ENTRIES = "cache_entries";
    /// FaaSTCC: versions the store holds at the end.
    STORE_VERSIONS = "store_versions";
    /// HydroCache: bytes of dependency metadata the caches hold at the end.
    CACHE_METADATA_BYTES = "cache_metadata_bytes";
    /// MuCache: cache entries that differ from a cache-free evaluation at the end of the run
    /// (quiescent coherence; 0 for a correct protocol once every queue drained).
    INCOHERENT_ENTRIES = "incoherent_entries";
    /// CausalMesh with dissemination: keys whose visible version differs between servers at
    /// the end of the run (convergence; 0 for a correct protocol once the chains drained).
    DIVERGED_KEYS = "diverged_keys";
    /// MuCache: entries of the CMs' histories and dependency indexes at the end.
    CM_STATE_ENTRIES = "cm_state_entries";
    /// MuCache: the largest CM state (history and dependency entries) any CM held.
    CM_STATE_MAX = "cm_state_max";
    /// MuCache: the time-averaged CM state of the CM whose average is largest.
    CM_STATE_MEAN = "cm_state_mean";
    /// MuCache: queue items per second of busy time of the CM that processed the most (its
    /// throughput when saturated, Fig. 18).
    CM_EVENTS_PER_S = "cm_events_per_s";
    /// Boki: entries in the current term's metalog at the end (the longest sequencer copy).
    METALOG_ENTRIES = "metalog_entries";

    // Boki's libraries (observations)

    /// BokiStore: 1 when a read-write transaction committed, 0 when it aborted (the counter
    /// test's committed fraction, §7.5).
    STORE_TXN_COMMITTED = "store_txn_committed";
    /// BokiStore: records of the physical log inside a transaction's commit window.
    STORE_WINDOW_RECORDS = "store_window_records";
    /// BokiStore: log reads one function made to replay objects and decide commits.
    STORE_REPLAY_READS = "store_replay_reads";
    /// BokiFlow: nanoseconds of one write step (append, read back, conditional database write).
    FLOW_WRITE_STEP_NS = "flow_write_step_ns";
    /// BokiFlow: nanoseconds of one read step (database read, append, read back).
    FLOW_READ_STEP_NS = "flow_read_step_ns";
    /// BokiFlow: nanoseconds of one invoke step (pre-invoke append and read back).
    FLOW_INVOKE_STEP_NS = "flow_invoke_step_ns";
}

/// The summary key of an observation's statistic (`obs.context_bytes.p50`).
pub fn observed(name: &str, statistic: &str) -> String {
    format!("obs.{name}.{statistic}")
}

/// The summary key of a final metric (`pm.metadata_bytes_final`).
pub fn final_metric(name: &str) -> String {
    format!("pm.{name}")
}
