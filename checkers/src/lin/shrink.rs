//! Shrinking a non-linearizable set of register operations to a smallest failing window:
//! Zeller's delta debugging (ddmin), removing ever smaller parts while the rest still has no
//! linearization. Removing a write removes the reads of its value with it (they would read
//! from nowhere). The result is 1-minimal: without any one of its operations (and the reads
//! that depend on it), the rest is linearizable.

use super::search::{RegOp, Verdict, check, prepare};

/// Shrink `ops` (unprepared, known to be non-linearizable) of a register with `values` values.
/// Every check costs steps of `budget`; if it runs out, the window found so far (still failing)
/// is returned with `false`.
pub(crate) fn shrink(ops: Vec<RegOp>, values: usize, budget: &mut u64) -> (Vec<RegOp>, bool) {
    let mut current = ops;
    let mut parts = 2usize;
    while current.len() >= 2 {
        let size = current.len().div_ceil(parts);
        let mut reduced = false;
        for start in (0..current.len()).step_by(size) {
            let end = (start + size).min(current.len());
            let candidate = close(current[..start].iter().chain(&current[end..]).copied().collect());
            match check(&prepare(&candidate, values), values, budget) {
                Verdict::Violation { .. } => {
                    current = candidate;
                    parts = (parts - 1).max(2);
                    reduced = true;
                    break;
                }
                Verdict::Linearizable => {}
                Verdict::Unknown => return (current, false),
            }
        }
        if !reduced {
            if parts >= current.len() {
                break;
            }
            parts = (parts * 2).min(current.len());
        }
    }
    (current, true)
}

/// Drop the reads whose value's write is not in `ops`.
fn close(ops: Vec<RegOp>) -> Vec<RegOp> {
    let written: std::collections::BTreeSet<u32> = ops.iter().filter(|o| o.write).map(|o| o.val).collect();
    ops.into_iter().filter(|o| o.write || o.val == 0 || written.contains(&o.val)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stale_read_shrinks_to_its_three_operations() {
        let op = |write, inv, cmp, val, op| RegOp { inv, cmp, write, val, op, failed: false };
        let mut ops = vec![op(true, 0, 1, 1, 0), op(true, 2, 3, 2, 1)];
        // Noise: other writes and reads, all fine, then the stale read of x=1 at the end.
        for i in 0..20u32 {
            ops.push(op(false, 4 + u64::from(i), 4 + u64::from(i), 2, 10 + i));
        }
        ops.push(op(false, 30, 31, 1, 99));
        let (window, minimal) = shrink(ops, 3, &mut 1_000_000);
        assert!(minimal);
        let ids: Vec<u32> = window.iter().map(|o| o.op).collect();
        assert_eq!(ids, vec![0, 1, 99]);
    }
}
