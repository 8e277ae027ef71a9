//! Random real-time register histories for the linearizability tests: a linearizable history
//! from `testgen::register_records` (overlapping intervals, some `failed` writes), then a few
//! seeded mutations that usually break it — a read returning another value of its key, an
//! operation moved in time, a write aborted — or that must not — a write or read made `failed`.

use causim_checkers::testgen::{RegisterParams, SplitMix64, register_records};
use causim_checkers::{OpKind, Outcome, TxnRecord, Value};

/// A small history: 1–3 keys, 2–5 clients, up to `max_ops` operations, heavily overlapping.
pub fn small(seed: u64, max_ops: u64) -> Vec<TxnRecord> {
    let mut rng = SplitMix64::new(seed);
    let p = RegisterParams {
        clients: 2 + rng.below(4) as u32,
        ops: 2 + rng.below(max_ops - 1),
        keys: 1 + rng.below(3),
        read_per_mille: 300 + rng.below(400) as u32,
        failed_per_mille: if rng.chance(300) { 200 } else { 0 },
        duration_ns: 1 + rng.below(60),
        think_ns: rng.below(30),
        seed: rng.next_u64(),
    };
    let mut records = register_records(&p);
    if rng.chance(850) {
        for _ in 0..1 + rng.below(3) {
            mutate(&mut records, &mut rng);
        }
    }
    records
}

/// One random change.
pub fn mutate(records: &mut [TxnRecord], rng: &mut SplitMix64) {
    if records.is_empty() {
        return;
    }
    let t = rng.below(records.len() as u64) as usize;
    let op = records[t].ops[0].clone();
    match rng.below(6) {
        // A read returns another written value of its key, or the initial one.
        0 | 1 if op.f == OpKind::Read => {
            let values: Vec<Value> = records
                .iter()
                .filter(|r| r.ops[0].f == OpKind::Write && r.ops[0].key == op.key)
                .map(|r| r.ops[0].value.clone())
                .chain([Value::Null])
                .collect();
            records[t].ops[0].value = values[rng.below(values.len() as u64) as usize].clone();
        }
        // Move an operation in time, keeping its length.
        2 => {
            let (inv, cmp) = (records[t].invoke_ns.unwrap(), records[t].complete_ns.unwrap());
            let shift = rng.below(80);
            let (inv, cmp) = if rng.chance(500) {
                (inv + shift, cmp + shift)
            } else {
                let back = shift.min(inv);
                (inv - back, cmp - back)
            };
            records[t].invoke_ns = Some(inv);
            records[t].complete_ns = Some(cmp);
        }
        3 if op.f == OpKind::Write => records[t].outcome = Outcome::Aborted,
        // Unknown outcome: must never turn a linearizable history into a violation.
        4 => records[t].outcome = Outcome::Failed,
        _ => {
            // Swap the values two reads of one key returned.
            if let Some(u) =
                (0..records.len()).find(|u| *u != t && records[*u].ops[0].f == OpKind::Read && records[*u].ops[0].key == op.key)
                && op.f == OpKind::Read
            {
                let other = records[u].ops[0].value.clone();
                records[u].ops[0].value = op.value.clone();
                records[t].ops[0].value = other;
            }
        }
    }
}
